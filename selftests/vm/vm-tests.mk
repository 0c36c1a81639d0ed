# SPDX-License-Identifier: GPL-2.0
# The VM runners' own logic, natively and with no VM: which deaths
# vm_emulator_death boots again, run-vm.sh's and run-2vm.sh's reruns under
# a stand-in QEMU, and what totals.awk prints under a FAIL and of reruns.
# A few seconds.

$(O)/san/selftests/vm/harness_test: selftests/vm/harness_test.sh \
		selftests/lib/tap.sh selftests/vm/vm-lib.sh selftests/vm/run-vm.sh \
		selftests/vm/run-2vm.sh selftests/totals.awk
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s\n' $(abspath $<) $(CURDIR) > $@
	chmod +x $@

NATIVE_TESTS	+= $(O)/san/selftests/vm/harness_test
