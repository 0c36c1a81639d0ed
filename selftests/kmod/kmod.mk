# SPDX-License-Identifier: GPL-2.0
# Selftests of the module itself; they run in the VM (selftests/vm/).

KMOD_TEST_LIBS	:= -static -luring -lnuma -lpthread
KMOD_TEST_DEPS	:= $(KSFT_STAMP) $(wildcard selftests/lib/*.h) \
		   include/uapi/linux/hyper.h
KMOD_TESTS	:= regions bad_input lifecycle xfer_basic xfer_bad xfer_stress \
		   xfer_kill

$(O)/tests/kmod_%: selftests/kmod/%.c $(KMOD_TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $< -o $@ $(KMOD_TEST_LIBS)

# params.c is built once per kind of suite: with and without a window.
$(O)/tests/kmod_params_window: selftests/kmod/params.c $(KMOD_TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -DWITH_WINDOW=1 $< -o $@ $(KMOD_TEST_LIBS)

$(O)/tests/kmod_params_nowindow: selftests/kmod/params.c $(KMOD_TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -DWITH_WINDOW=0 $< -o $@ $(KMOD_TEST_LIBS)

VM_TESTS	+= $(patsubst %,$(O)/tests/kmod_%,$(KMOD_TESTS)) \
		   $(O)/tests/kmod_params_window $(O)/tests/kmod_params_nowindow
VM_SUITES	+= kmod-pmem kmod-softres kmod-emulated
