# SPDX-License-Identifier: GPL-2.0
# make check-debug-kernel: the module's VM suites on a kernel with KASAN,
# lockdep (PROVE_LOCKING), DEBUG_ATOMIC_SLEEP and kmemleak, which Debian's
# kernel lacks.  The kernel is built once per machine from Debian's
# linux-source by tools/build/debug-kernel.sh (tens of minutes on two
# shared cores); each run after that builds the module against it, its own
# initramfs, and boots one VM per suite.  Not part of `make check`.

DEBUG_KERNEL_DIR	?= $(O)/debug-kernel
DEBUG_KERNEL_SUITES	?= kmod-pmem kmod-emulated fuzz-kmod
# The instrumented kernel is several times slower under TCG.
DEBUG_KERNEL_SLOWDOWN	?= 4
DK_MOD		:= $(DEBUG_KERNEL_DIR)/mod
DK_INITRD	:= $(DEBUG_KERNEL_DIR)/initramfs.cpio.gz
DK_RESULTS	:= $(O)/results-debug-kernel

.PHONY: debug-kernel check-debug-kernel

debug-kernel:
	tools/build/debug-kernel.sh $(DEBUG_KERNEL_DIR)

# The module is built from a copy of its sources, so that kmod/'s objects
# stay those of the Debian kernel `make` builds against.  VM_TESTS is only
# complete once every fragment is read, hence the recursive make.
check-debug-kernel:
	@tree=$$(tools/build/debug-kernel.sh $(DEBUG_KERNEL_DIR) | tail -n 1) && \
	$(MAKE) --no-print-directory $(VM_TESTS) $(filter $(O)/%,$(VM_BINS)) && \
	rm -rf $(DK_MOD) && mkdir -p $(DK_MOD)/kmod && \
	cp Kbuild $(DK_MOD)/ && cp -r include $(DK_MOD)/ && \
	cp kmod/Kbuild $(KMOD_SRCS) $(DK_MOD)/kmod/ && \
	$(MAKE) -C $$tree M=$(abspath $(DK_MOD)) O= modules && \
	selftests/vm/mkinitramfs.sh $(DK_INITRD) selftests/vm/init \
		$(DK_MOD)/kmod/hyper.ko -s $(VM_SUITE_FILES) -t $(VM_TESTS) \
		-b $(VM_BINS) && \
	rm -rf $(DK_RESULTS) && mkdir -p $(DK_RESULTS) && \
	for s in $(DEBUG_KERNEL_SUITES); do \
		echo "== VM suite $$s (debug kernel: KASAN, lockdep, kmemleak)"; \
		VM_TIMEOUT_SCALE=$(DEBUG_KERNEL_SLOWDOWN) \
		VM_APPEND="log_buf_len=8M TEST_TIMEOUT=$$((600 * $(DEBUG_KERNEL_SLOWDOWN)))" \
		selftests/vm/run-vm.sh $$tree/arch/x86/boot/bzImage $(DK_INITRD) \
			selftests/vm/suites/$$s.suite $(DK_RESULTS)/vm-$$s.log; \
		tools/build/debug-kernel-scan.sh $(DK_RESULTS)/vm-$$s.log $$s; \
		awk -f selftests/totals.awk $(DK_RESULTS)/vm-$$s.log | sed '$$d'; \
	done; \
	echo "== totals (logs in $(DK_RESULTS)/)"; \
	awk -f selftests/totals.awk $(DK_RESULTS)/*.log | \
		grep -E '^[0-9]+ (passed|skipped|rerun)' | tee $(DK_RESULTS)/totals; \
	tail -n 1 $(DK_RESULTS)/totals | grep -q ' 0 failed$$'
