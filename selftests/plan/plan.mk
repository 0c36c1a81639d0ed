# SPDX-License-Identifier: GPL-2.0
# The planner's tests: kselftest programs built with the sanitizers
# against the planner's sanitized objects.  This fragment is read before
# tools/hyper-plan/hyper-plan.mk, so it names those objects itself.

PLAN_TESTS	:= plan_props plan_input plan_units
PLAN_TEST_BINS	:= $(addprefix $(O)/san/selftests/plan/,$(PLAN_TESTS))
PLAN_TEST_DEPS	:= selftests/plan/checker.c selftests/plan/checker.h \
		   selftests/plan/plan_cases.h
PLAN_LIB_OBJS	:= $(patsubst %.c,$(O)/san/%.o,$(filter-out %/main.c, \
		   $(sort $(wildcard tools/hyper-plan/*.c))))
PLAN_CLI	:= $(O)/san/bin/hyper-plan

$(O)/san/selftests/plan/%: selftests/plan/%.c $(PLAN_TEST_DEPS) \
		$(PLAN_LIB_OBJS) $(PLAN_CLI) $(KSFT_STAMP)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(SAN_CFLAGS) -Itools/hyper-plan \
		-DHP_PLAN_BIN=\"$(abspath $(PLAN_CLI))\" -o $@ $< \
		selftests/plan/checker.c $(PLAN_LIB_OBJS) \
		-ljson-c -lm -ldl

NATIVE_TESTS += $(PLAN_TEST_BINS)

# hyper-run's timeline drawn by hyper-plan: a script over both binaries.
$(O)/san/selftests/plan/render_test: selftests/plan/render_test.sh \
		$(PLAN_CLI) $(O)/san/bin/hyper-run
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s %s\n' $(abspath $<) \
		$(abspath $(PLAN_CLI)) $(abspath $(O)/san/bin/hyper-run) > $@
	chmod +x $@

NATIVE_TESTS += $(O)/san/selftests/plan/render_test
