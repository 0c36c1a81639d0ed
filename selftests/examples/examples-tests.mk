# SPDX-License-Identifier: GPL-2.0
# examples/: the programs the docs show (Documentation/libhyper.md,
# libhyper(7)), built as a user would build them plus the sanitizers, run
# natively on shmem by examples_test.sh in `make check`, and shown by the
# docs as they are (tools/build/doc-examples.sh).

EXAMPLES	:= $(patsubst examples/%.c,$(O)/examples/%,$(wildcard examples/*.c))
EXAMPLE_DOCS	:= Documentation/libhyper.md libhyper/man/libhyper.7 \
		   Documentation/transfer-engine.md

$(O)/examples/%: examples/%.c $(LIBHYPER_SAN_A) include/hyper/hyper.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_CFLAGS) $< -o $@ $(LIBHYPER_SAN_A) $(LIBHYPER_LIBS)

# kmod_xfer needs the module: it runs in the VM (kmod-pmem.suite), static
# like the other VM tests, behind a wrapper that reports it as TAP.
$(O)/tests/example_kmod_xfer: examples/kmod_xfer.c include/uapi/linux/hyper.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $< -o $@ -static -luring

$(O)/tests/example_kmod_xfer_test: selftests/examples/example_vm.sh
	@mkdir -p $(@D)
	install -m 0755 $< $@

VM_TESTS	+= $(O)/tests/example_kmod_xfer $(O)/tests/example_kmod_xfer_test

$(O)/san/selftests/examples/examples_test: selftests/examples/examples_test.sh \
		$(EXAMPLES) $(O)/bin/hyper-plan
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s %s "%s"\n' $(abspath $<) $(CURDIR) $(abspath $(O)) \
		"$(EXAMPLE_DOCS)" > $@
	chmod +x $@

NATIVE_TESTS	+= $(O)/san/selftests/examples/examples_test
