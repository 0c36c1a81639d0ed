# SPDX-License-Identifier: GPL-2.0
# The planner's tests: kselftest programs built with the sanitizers
# against the planner's sanitized archive (libhyperplan/libhyperplan.mk).

PLAN_TESTS	:= plan_props plan_input plan_units plan_api plan_config \
		   plan_bound plan_oom plan_arena plan_pipeline plan_greedy
PLAN_TEST_BINS	:= $(addprefix $(O)/san/selftests/plan/,$(PLAN_TESTS))
PLAN_TEST_DEPS	:= selftests/plan/checker.c selftests/plan/checker.h \
		   selftests/plan/plan_cases.h selftests/plan/plan_chain.h \
		   selftests/plan/plan_random.h
PLAN_CLI	:= $(O)/san/bin/hyper-plan

$(O)/san/selftests/plan/%: selftests/plan/%.c $(PLAN_TEST_DEPS) \
		$(HPT_SAN_A) $(HPL_SAN_A) $(LIBHYPER_SAN_A) $(PLAN_CLI) $(KSFT_STAMP)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(SAN_CFLAGS) $(HPT_INC) \
		-DHP_PLAN_BIN=\"$(abspath $(PLAN_CLI))\" -DHP_SRCDIR=\"$(CURDIR)\" -o $@ $< \
		selftests/plan/checker.c $(HPT_SAN_LIBS)

NATIVE_TESTS += $(PLAN_TEST_BINS)

# plan_threads: plans of one graph at once from several threads, under
# ThreadSanitizer.  TSan cannot share a program with ASan, so the planner,
# libhyper and util are built a third time, with clang's -fsanitize=thread
# (the harness's own printf wrappers take their formats as arguments).
PLAN_TSAN_CFLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
PLAN_TSAN_SRCS	:= $(HPL_SRCS) $(HPT_SRCS) $(LIBHYPER_SRCS) $(UTIL_SRCS)
PLAN_TSAN_OBJS	:= $(PLAN_TSAN_SRCS:%.c=$(O)/tsan/%.o)
PLAN_THREADS	:= $(O)/tsan/selftests/plan/plan_threads

$(HPL_SRCS:%.c=$(O)/tsan/%.o): ALL_CFLAGS += $(HPL_INC)
$(HPT_SRCS:%.c=$(O)/tsan/%.o): ALL_CFLAGS += $(HPT_INC)
$(O)/tsan/%.o: %.c
	@mkdir -p $(@D)
	$(CLANG) $(ALL_CFLAGS) $(PLAN_TSAN_CFLAGS) -MMD -MP -c $< -o $@

$(PLAN_THREADS): selftests/plan/plan_threads.c selftests/plan/plan_random.h \
		$(PLAN_TSAN_OBJS) $(KSFT_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(TEST_CFLAGS) -Wno-format-nonliteral $(PLAN_TSAN_CFLAGS) \
		$(HPT_INC) -o $@ $< \
		$(PLAN_TSAN_OBJS) $(LIBHYPER_LIBS) $(HPL_LIBS) -lpthread

NATIVE_TESTS += $(PLAN_THREADS)

# What the script tests source: lib.sh, and selftests/lib/tap.sh.
PLAN_SH_LIB	:= selftests/plan/lib.sh selftests/lib/tap.sh

# hyper-run's timeline drawn by hyper-timeline, through hyper-plan
# --timeline: a script over the binaries.
$(O)/san/selftests/plan/render_test: selftests/plan/render_test.sh $(PLAN_SH_LIB) \
		$(PLAN_CLI) $(O)/san/bin/hyper-timeline $(O)/san/bin/hyper-run
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s %s\n' $(abspath $<) \
		$(abspath $(PLAN_CLI)) $(abspath $(O)/san/bin/hyper-run) > $@
	chmod +x $@

NATIVE_TESTS += $(O)/san/selftests/plan/render_test

# hyper-plan --feedback over a real hyper-run timeline, and its refusals.
$(O)/san/selftests/plan/feedback_test: selftests/plan/feedback_test.sh $(PLAN_SH_LIB) \
		$(PLAN_CLI) $(O)/san/bin/hyper-run
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s %s\n' $(abspath $<) \
		$(abspath $(PLAN_CLI)) $(abspath $(O)/san/bin/hyper-run) > $@
	chmod +x $@

NATIVE_TESTS += $(O)/san/selftests/plan/feedback_test

# bench-plan's command line: --help, bad usage, its output folder.
$(O)/san/selftests/plan/bench_cli_test: selftests/plan/bench_cli_test.sh \
		selftests/lib/tap.sh $(O)/bin/bench-plan
	@mkdir -p $(@D)
	printf '#!/bin/sh\nHYPER_PLAN_CONFIGS=%s exec %s %s\n' \
		$(abspath tools/hyper-plan/configs) $(abspath $<) \
		$(abspath $(O)/bin/bench-plan) > $@
	chmod +x $@

NATIVE_TESTS += $(O)/san/selftests/plan/bench_cli_test

# libhyperplan's exported interface, over the release shared libraries.
$(O)/san/selftests/plan/plan_abi_test: selftests/plan/plan_abi_test.sh \
		selftests/plan/plan_exports.sh $(HPL_A) \
		$(HPL_SO) $(O)/lib/libhyperplan.so $(O)/lib/libhyper.so \
		$(HPL_MAN) include/hyper/plan.h include/hyper/vocab.h \
		include/hyper/residency.h \
		selftests/plan/plan_ctypes.py
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s %s\n' $(abspath $<) $(CURDIR) \
		$(abspath $(O)/lib) > $@
	chmod +x $@

NATIVE_TESTS += $(O)/san/selftests/plan/plan_abi_test

# make bench-feedback: the closed loop plan -> hyper-run -> --feedback,
# three rounds from a profile whose link is 2x wrong (in make bench).
.PHONY: bench-feedback
bench-feedback: userspace
	@O=$(O) selftests/plan/bench-feedback.sh

BENCH		+= bench-feedback

# The planner's arena layout through hyper-run, and tampered offsets.
$(O)/san/selftests/plan/arena_run_test: selftests/plan/arena_run_test.sh $(PLAN_SH_LIB) \
		$(PLAN_CLI) $(O)/san/bin/hyper-run
	@mkdir -p $(@D)
	printf '#!/bin/sh\nexec %s %s %s\n' $(abspath $<) \
		$(abspath $(PLAN_CLI)) $(abspath $(O)/san/bin/hyper-run) > $@
	chmod +x $@

NATIVE_TESTS += $(O)/san/selftests/plan/arena_run_test

# The TSan objects' header dependencies (the Makefile reads obj/ and san/).
-include $(shell find $(O)/tsan -name '*.d' 2>/dev/null)
