# SPDX-License-Identifier: GPL-2.0
# The randomized UAPI fuzzer of the module, run in the VM: 60 s in its own
# suite by `make check`, as long as asked by `make fuzz-kmod DURATION=`
# (seconds; SEED= repeats a run).

FUZZ_KMOD	:= $(O)/tests/fuzz_uapi

$(FUZZ_KMOD): selftests/fuzz/fuzz_uapi.c selftests/kmod/twonode.h $(KMOD_TEST_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $< -o $@ $(KMOD_TEST_LIBS)

VM_TESTS	+= $(FUZZ_KMOD)
VM_SUITES	+= fuzz-kmod

# A copy of the suite with the VM's timeout raised to fit DURATION; the
# duration and the seed reach the VM on the kernel command line.
DURATION	?= 600
SEED		?=
FUZZ_LONG	:= $(O)/fuzz/fuzz-kmod-long.suite

.PHONY: fuzz-kmod
fuzz-kmod:
	@mkdir -p $(O)/fuzz $(O)/results
	sed 's/^#@TIMEOUT=.*/#@TIMEOUT=$(shell echo $$(($(DURATION) + 900)))/' \
		selftests/vm/suites/fuzz-kmod.suite > $(FUZZ_LONG)
	$(MAKE) EXTRA_VM_SUITES=$(FUZZ_LONG) $(VM_INITRD)
	VM_APPEND="HYPER_FUZZ_DURATION=$(DURATION) $(if $(SEED),HYPER_FUZZ_SEED=$(SEED))" \
		selftests/vm/run-vm.sh $(VMLINUZ) $(VM_INITRD) $(FUZZ_LONG) \
		$(O)/results/vm-fuzz-kmod-long.log
	@sed -n '/^# seed/p;/^# operation/,/operations$$/p' $(O)/results/vm-fuzz-kmod-long.log
	@awk -f selftests/totals.awk $(O)/results/vm-fuzz-kmod-long.log | tee $(O)/fuzz/kmod-totals
	@tail -n 1 $(O)/fuzz/kmod-totals | grep -q ' 0 failed$$'
