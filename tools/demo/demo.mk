# SPDX-License-Identifier: GPL-2.0
# make demo [BACKEND=kmod|shmem] [BUDGET=SIZE] [SCHEDULE=FILE]: the whole
# system end to end (tools/demo/demo.sh): correctness, the schedule and
# the peak judged, timing printed next to its targets; make demo-smoke:
# its short form, which `make check` runs too.  make bench-demo: make demo
# with its timing targets judged as well (a benchmark, in `make bench`).

BACKEND		?= kmod
DEMO_OUT	:= $(O)/demo
DEMO_REPORT	:= $(O)/bin/demo-report
# The VM runs hyper-plan and hyper-run (tools/hyper-run/hyper-run.mk).
DEMO_VM_RUN	:= $(O)/vm/bin/hyper-run

$(DEMO_REPORT): $(O)/obj/tools/demo/demo_report.o
	@mkdir -p $(@D)
	$(CC) -o $@ $^ -ljson-c

EXTRA_VM_SUITES	+= tools/demo/demo.suite
VM_BINS		+= $(DEMO_VM_RUN) $(O)/bin/hyper-plan tools/demo/demo-run.sh
# A SCHEDULE given to make demo travels to the VM with the tests; one
# that does not exist stops make here, with one line, before any build.
ifneq ($(SCHEDULE),)
ifeq ($(wildcard $(SCHEDULE)),)
$(error SCHEDULE=$(SCHEDULE): no such file; give the path of a schedule that hyper-plan wrote)
endif
endif
VM_TESTS	+= $(SCHEDULE)

DEMO_ENV	= O=$(O) VMLINUZ=$(VMLINUZ) VM_INITRD=$(VM_INITRD) \
		  BUDGET=$(BUDGET) SCHEDULE=$(SCHEDULE)
DEMO_DEPS	= all $(DEMO_REPORT) $(if $(filter kmod,$(BACKEND)),$(VM_INITRD))

.PHONY: demo demo-smoke bench-demo
demo: $(DEMO_DEPS)
	@$(DEMO_ENV) tools/demo/demo.sh $(BACKEND) full $(DEMO_OUT)

bench-demo: $(DEMO_DEPS)
	@$(DEMO_ENV) HYPER_DEMO_JUDGE_TIMING=1 tools/demo/demo.sh $(BACKEND) full $(O)/bench/demo-$(BACKEND)

BENCH		+= bench-demo

demo-smoke: $(DEMO_DEPS)
	@$(DEMO_ENV) tools/demo/demo.sh $(BACKEND) smoke $(O)/demo-smoke

# In `make check`: the smoke demo as one more block of results, each
# judged item counted as a test case.
.PHONY: check-demo-smoke
check-demo-smoke: $(DEMO_DEPS)
	@echo "== demo-smoke ($(BACKEND))"
	@{ echo "HYPER-TEST-BEGIN demo-smoke"; \
	   $(DEMO_ENV) tools/demo/demo.sh $(BACKEND) smoke $(O)/demo-smoke 2>&1; \
	   echo "HYPER-TEST-END demo-smoke status=$$?"; } > $(O)/results/demo-smoke.log
	@awk -f selftests/totals.awk $(O)/results/demo-smoke.log | sed '$$d'

CHECK_RUNS	+= check-demo-smoke

# make demo-supernode [SIZE=full|smoke]: the demo's model on two nodes in
# front of one pool (tools/demo/demo-supernode.sh, two QEMU guests): one
# copy of its weights in the pool for both, and the KV cache of a prompt
# handed from node 0 to node 1.  Figures in $(O)/demo-supernode/.
SIZE		?= full
EXTRA_VM_SUITES	+= tools/demo/demo-supernode.suite
VM_BINS		+= tools/demo/demo-supernode-run.sh

.PHONY: demo-supernode
demo-supernode: all $(VM_INITRD)
	@O=$(O) VMLINUZ=$(VMLINUZ) VM_INITRD=$(VM_INITRD) \
		tools/demo/demo-supernode.sh $(SIZE) $(O)/demo-supernode

# In `make check`: its smoke size (4 layers; about 2 minutes of two TCG
# guests), each judged item counted as a test case.
.PHONY: check-demo-supernode-smoke
check-demo-supernode-smoke: all $(VM_INITRD)
	@echo "== demo-supernode-smoke"
	@{ echo "HYPER-TEST-BEGIN demo-supernode-smoke"; \
	   O=$(O) VMLINUZ=$(VMLINUZ) VM_INITRD=$(VM_INITRD) \
		tools/demo/demo-supernode.sh smoke $(O)/demo-supernode-smoke 2>&1; \
	   echo "HYPER-TEST-END demo-supernode-smoke status=$$?"; } \
		> $(O)/results/demo-supernode-smoke.log
	@awk -f selftests/totals.awk $(O)/results/demo-supernode-smoke.log | sed '$$d'

CHECK_RUNS	+= check-demo-supernode-smoke
