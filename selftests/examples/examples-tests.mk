# SPDX-License-Identifier: GPL-2.0
# examples/: the programs the docs show (Documentation/libhyper.md,
# libhyper(7)), built as a user would build them plus the sanitizers, run
# natively on shmem by examples_test.sh in `make check`, and shown by the
# docs as they are (tools/build/doc-examples.sh).

EXAMPLES	:= $(patsubst examples/%.c,$(O)/examples/%,$(wildcard examples/*.c))

$(O)/examples/%: examples/%.c $(LIBHYPER_SAN_A) include/hyper/hyper.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_CFLAGS) $< -o $@ $(LIBHYPER_SAN_A) $(LIBHYPER_LIBS)

$(O)/san/selftests/examples/examples_test: selftests/examples/examples_test.sh \
		$(EXAMPLES) $(O)/bin/hyper-plan
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s %s\n' $(abspath $<) $(CURDIR) $(abspath $(O)) > $@
	chmod +x $@

NATIVE_TESTS	+= $(O)/san/selftests/examples/examples_test
