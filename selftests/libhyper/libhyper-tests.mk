# SPDX-License-Identifier: GPL-2.0
# libhyper tests.  Native programs link the sanitized archive (ASan+UBSan)
# and run in `make check`; the executor tests are also linked statically
# for the VM, where selftests/vm/suites/libhyper.suite runs them on the
# kmod backend.  `make fuzz` runs the schedule loader under libFuzzer.

LHT_DIR		:= selftests/libhyper
LHT_NATIVE	:= schedule_test range_test region_test exec_test multi_ctx_test \
		   early_test arena_test \
		   layout_test run_test copy_test cuda_test object_test
LHT_VM		:= region_test exec_test multi_ctx_test layout_test copy_test early_test \
		   object_test
LHT_HDRS	:= $(LHT_DIR)/helpers.h include/hyper/hyper.h tools/hyper-run/pattern.h
LHT_SAN_BIN	:= $(O)/san/$(LHT_DIR)
LHT_CFLAGS	= $(TEST_CFLAGS) -Ilibhyper -Itools/hyper-run
# run_test drives the sanitized hyper-run (tools/hyper-run/hyper-run.mk).
LHT_HYPER_RUN	:= $(O)/san/bin/hyper-run

$(LHT_SAN_BIN)/%: $(LHT_DIR)/%.c $(LHT_HDRS) $(LIBHYPER_SAN_A) $(KSFT_STAMP)
	@mkdir -p $(@D)
	$(CC) $(LHT_CFLAGS) $(SAN_CFLAGS) -DHYPER_SRCDIR='"$(CURDIR)"' \
		-DHYPER_RUN='"$(abspath $(LHT_HYPER_RUN))"' -MMD -MP -MF $@.d \
		-o $@ $< $(LIBHYPER_SAN_A) $(LIBHYPER_LIBS) -lpthread

$(LHT_SAN_BIN)/run_test: $(LHT_HYPER_RUN)

# cuda_test runs libhyper's CUDA device against a fake CUDA runtime (a
# test double: fake_cudart.c), or against the real one on a GPU machine.
LHT_FAKE_CUDART	:= $(O)/lib/test/libfake_cudart.so
$(LHT_FAKE_CUDART): $(LHT_DIR)/fake_cudart.c
	@mkdir -p $(@D)
	$(CC) $(filter-out -Wmissing-prototypes,$(ALL_CFLAGS)) -shared \
		-Wl,-z,defs -o $@ $< -lpthread
$(LHT_SAN_BIN)/cuda_test: $(LHT_FAKE_CUDART)
$(LHT_SAN_BIN)/cuda_test: LHT_CFLAGS += -DFAKE_CUDART='"$(abspath $(LHT_FAKE_CUDART))"'

# In the VM every test program lives in /tests: name them after the area.
$(O)/tests/libhyper_%: $(LHT_DIR)/%.c $(LHT_HDRS) $(LIBHYPER_A) $(KSFT_STAMP)
	@mkdir -p $(@D)
	$(CC) $(LHT_CFLAGS) -DHYPER_SRCDIR='"/"' -DHYPER_RUN='""' \
		-static -o $@ $< $(LIBHYPER_A) $(LIBHYPER_LIBS) -lpthread

NATIVE_TESTS	+= $(addprefix $(LHT_SAN_BIN)/,$(LHT_NATIVE))
VM_TESTS	+= $(addprefix $(O)/tests/libhyper_,$(LHT_VM))
VM_SUITES	+= libhyper

# libFuzzer needs clang; only the json-c half of libhyper is linked.
FUZZ_TIME	?= 60
LHT_FUZZ	:= $(O)/fuzz/fuzz_schedule
LHT_FUZZ_SRCS	:= $(LHT_DIR)/fuzz_schedule.c libhyper/schedule.c libhyper/validate.c \
		   libhyper/layout.c util/units.c $(wildcard util/arena*.c) \
		   util/residency.c util/json.c

$(LHT_FUZZ): $(LHT_FUZZ_SRCS) libhyper/schedule.h include/hyper/hyper.h
	@mkdir -p $(@D)
	$(CLANG) $(BASE_CFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -Ilibhyper -o $@ $(LHT_FUZZ_SRCS) -ljson-c

.PHONY: fuzz fuzz-schedule
fuzz: fuzz-schedule
fuzz-schedule: $(LHT_FUZZ)
	@mkdir -p $(O)/fuzz/corpus $(O)/fuzz/crashes
	cp -n $(LHT_DIR)/corpus/*.json $(O)/fuzz/corpus/ 2>/dev/null || true
	$(LHT_FUZZ) -max_total_time=$(FUZZ_TIME) -max_len=8192 -timeout=10 \
		-dict=$(LHT_DIR)/schedule.dict -artifact_prefix=$(O)/fuzz/crashes/ \
		-print_final_stats=1 $(O)/fuzz/corpus

# Benchmarks: release build, JSON under $(O)/bench/.
LHT_BENCH	:= bench_step bench_xfer

$(O)/bench-bin/libhyper/%: $(LHT_DIR)/%.c selftests/lib/hyper_bench.h $(LIBHYPER_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Iselftests/lib -o $@ $< $(LIBHYPER_A) $(LIBHYPER_LIBS)

.PHONY: bench-libhyper
bench-libhyper: $(addprefix $(O)/bench-bin/libhyper/,$(LHT_BENCH))
	@mkdir -p $(O)/bench
	$(O)/bench-bin/libhyper/bench_step > $(O)/bench/libhyper-step.json
	$(O)/bench-bin/libhyper/bench_xfer > $(O)/bench/libhyper-xfer.json
	@cat $(O)/bench/libhyper-step.json $(O)/bench/libhyper-xfer.json

BENCH		+= bench-libhyper

# make bench-native: the copy path against memcpy, natively, then the demo
# planned against all-resident at two sizes (selftests/libhyper/bench-native.sh).
$(O)/bench-bin/libhyper/bench_native: $(LHT_DIR)/bench_native.c selftests/lib/hyper_bench.h $(LIBHYPER_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Iselftests/lib -o $@ $< $(LIBHYPER_A) $(LIBHYPER_LIBS) \
		-lopenblas -lpthread

.PHONY: bench-native
# demo-report by name: tools/demo/demo.mk, which sets DEMO_REPORT, is read after this file.
bench-native: userspace $(O)/bin/demo-report $(O)/bench-bin/libhyper/bench_native
	@O=$(O) selftests/libhyper/bench-native.sh
