# SPDX-License-Identifier: GPL-2.0
# Selftests of the module itself; they run in the VM (selftests/vm/),
# but for names_test, which reads the sources natively.

KMOD_TEST_LIBS	:= -static -luring -lnuma -lpthread
KMOD_TEST_DEPS	:= $(KSFT_STAMP) $(wildcard selftests/lib/*.h) \
		   include/uapi/linux/hyper.h
KMOD_TESTS	:= regions bad_input lifecycle xfer_basic xfer_bad xfer_stress \
		   xfer_uring \
		   xfer_kill numa_mode huge_window pin pool objects
$(O)/tests/kmod_objects: selftests/kmod/obj_test.h

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
		   $(O)/tests/kmod_params_window $(O)/tests/kmod_params_nowindow \
		   $(O)/tests/kmod_bench_xfer
VM_BINS		+= /usr/bin/numactl
# kmod_pin does O_DIRECT on a RAM disk: the VM has no other block device.
VM_KMODS	+= drivers/block/brd
VM_SUITES	+= kmod-pmem kmod-softres kmod-emulated kmod-numa kmod-huge

# The benchmark runs in a VM of its own; the JSON lands in $(O)/bench/.
.PHONY: bench-kmod
bench-kmod: $(VM_INITRD)
	@mkdir -p $(O)/bench
	selftests/vm/run-vm.sh $(VMLINUZ) $(VM_INITRD) \
		selftests/vm/suites/bench-kmod.suite $(O)/bench/kmod-xfer.log
	@sed -n '/^BENCH-JSON-BEGIN/,/^BENCH-JSON-END/p' $(O)/bench/kmod-xfer.log | \
		sed '1d;$$d' > $(O)/bench/kmod-xfer.json
	@grep -q . $(O)/bench/kmod-xfer.json || \
		{ echo "bench-kmod: no results, see $(O)/bench/kmod-xfer.log"; exit 1; }
	@sed -n '/^ *bytes  *prefetch/,/^64 x 4 KiB/p' $(O)/bench/kmod-xfer.log
	@echo "JSON: $(O)/bench/kmod-xfer.json"

BENCH		+= bench-kmod

# No name shared by the module and libhyper: a script over the sources,
# run natively (universal-ctags).
$(O)/san/selftests/kmod/names_test: selftests/kmod/names_test.sh
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s\n' $(abspath $<) $(CURDIR) > $@
	chmod +x $@

NATIVE_TESTS	+= $(O)/san/selftests/kmod/names_test
