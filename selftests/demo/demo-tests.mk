# SPDX-License-Identifier: GPL-2.0
# The demo's refusals (make demo with bad input), natively.

$(O)/san/selftests/demo/demo_bad_input: selftests/demo/demo_bad_input.sh \
		tools/demo/demo.sh $(O)/bin/hyper-plan $(O)/bin/hyper-run \
		$(O)/bin/demo-report
	@mkdir -p $(@D)
	printf '#!/bin/sh\ncd %s && exec %s %s\n' $(CURDIR) $(abspath $<) \
		$(abspath $(O)) > $@
	chmod +x $@

NATIVE_TESTS	+= $(O)/san/selftests/demo/demo_bad_input

$(O)/san/selftests/demo/demo_report_test: selftests/demo/demo_report_test.sh \
		$(O)/bin/demo-report
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s\n' $(abspath $<) $(abspath $(O)) > $@
	chmod +x $@

NATIVE_TESTS	+= $(O)/san/selftests/demo/demo_report_test

# make demo-supernode's pieces (hyper-run --until/--from, its objects) on
# shmem, with the sanitized hyper-run.
$(O)/san/selftests/demo/handoff_test: selftests/demo/handoff_test.sh \
		$(O)/san/bin/hyper-run $(O)/bin/hyper-plan
	@mkdir -p $(@D)
	printf '#!/bin/sh\ncd %s && exec %s %s\n' $(CURDIR) $(abspath $<) \
		$(abspath $(O)) > $@
	chmod +x $@

NATIVE_TESTS	+= $(O)/san/selftests/demo/handoff_test
