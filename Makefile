# SPDX-License-Identifier: GPL-2.0
#
# hyperoffload top-level build.
#
#   make            module (kmod/hyper.ko), library and tools
#   make check      every test: native ones, then the VM suites; the last
#                   line is "N passed, N failed"
#   make demo       the end-to-end demonstration
#   make bench      benchmarks; JSON under build/bench/
#   make install    the module to /lib/modules/$(KVER)/updates/ (depmod
#                   unless DESTDIR is set), library, headers, pkg-config
#                   file, tools, man pages; honours DESTDIR and PREFIX
#   make dkms-build the module through dkms for $(KVER) (root; see
#                   tools/dkms/dkms.mk for dkms-stage, -install, -remove)
#
# Userspace builds into $(O); kbuild builds the module in kmod/.  Each
# component adds its own rules in a *.mk fragment next to its sources, so
# that this file does not change when one is added.

O		?= build
PREFIX		?= /usr/local
DESTDIR		?=

# The module is built against Debian's installed headers, never against
# `uname -r`: the host runs another kernel than the one the VM boots.
KVER		?= $(shell tools/build/kver.sh)
KDIR		?= /lib/modules/$(KVER)/build
VMLINUZ		?= /boot/vmlinuz-$(KVER)

# Missing Debian packages are installed (as root) or named, before anything
# else; recursive makes and `make clean` skip the check.
ifeq ($(filter clean help,$(MAKECMDGOALS)),)
ifneq ($(HYPER_DEPS_CHECKED),1)
ifneq ($(shell tools/build/deps.sh >&2 && echo ok),ok)
$(error Debian packages are missing; see the line above)
endif
export HYPER_DEPS_CHECKED := 1
endif
endif

CC		?= gcc
CLANG		?= clang
CFLAGS		?= -O2 -g
WARN_CFLAGS	:= -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
		   -Wmissing-prototypes -Wno-unused-parameter
BASE_CFLAGS	:= -std=gnu11 -D_GNU_SOURCE -fPIC -Iinclude -Iinclude/uapi \
		   $(WARN_CFLAGS)
ALL_CFLAGS	= $(BASE_CFLAGS) $(CFLAGS)
# Native tests build every object a second time with the sanitizers.
SAN_CFLAGS	:= -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
		   -fno-sanitize-recover=all
VM_INITRD	:= $(O)/vm/initramfs.cpio.gz
KSFT_DIR	:= $(O)/kselftest
KSFT_STAMP	:= $(KSFT_DIR)/kselftest_harness.h
# The harness's macros compare mixed signedness and define unprototyped
# functions by design.
TEST_CFLAGS	= $(filter-out -Wmissing-prototypes,$(ALL_CFLAGS)) \
		  -Wno-sign-compare -I$(KSFT_DIR) -Iselftests/lib

# Filled in by the fragments.
USERSPACE	:=	# built by `make`
NATIVE_TESTS	:=	# run on the host by `make check`
VM_TESTS	:=	# copied to the VM's /tests
VM_BINS		:=	# copied to the VM's /bin
VM_SUITES	:=	# selftests/vm/suites/*.suite, one VM boot each
BENCH		:=	# phony targets run by `make bench`
CHECK_RUNS	:=	# phony targets `make check` runs after the VM suites
INSTALL_TARGETS	:=	# phony targets run by `make install`

.PHONY: all module userspace check bench install install-module clean help \
	checkpatch sparse
.DEFAULT_GOAL := all

all: module userspace

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) O= modules

# Sparse and W=1 over the module: `make sparse` is `make module C=2 W=1`.
sparse:
	$(MAKE) -C $(KDIR) M=$(CURDIR) O= C=2 W=1 modules

$(KSFT_STAMP): tools/build/kselftest.sh
	tools/build/kselftest.sh $(KSFT_DIR)

# An out-of-tree module needs version checks (kmod/compat.h), and
# TRACE_EVENT() bodies have their own layout (kmod/hyper_trace.h).
CHECKPATCH_IGNORE := SPDX_LICENSE_TAG,FILE_PATH_CHANGES,LINUX_VERSION_CODE
checkpatch: $(KSFT_STAMP)
	perl $(KSFT_DIR)/scripts/checkpatch.pl --no-tree --strict --terse \
		--ignore $(CHECKPATCH_IGNORE) \
		-f $(filter-out %.mod.c kmod/hyper_trace.h,$(wildcard kmod/*.[ch])) \
		include/uapi/linux/hyper.h
	perl $(KSFT_DIR)/scripts/checkpatch.pl --no-tree --strict --terse \
		--ignore $(CHECKPATCH_IGNORE),OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT \
		-f kmod/hyper_trace.h

# Objects: release ($(O)/obj) and sanitized ($(O)/san), same sources.
$(O)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(O)/san/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_CFLAGS) -MMD -MP -c $< -o $@

include $(sort $(wildcard libhyper/*.mk tools/*/*.mk selftests/*/*.mk))

userspace: $(USERSPACE)

# Suites outside selftests/vm/suites/ (the demo's) add themselves here.
VM_SUITE_FILES	= $(wildcard selftests/vm/suites/*.suite) $(EXTRA_VM_SUITES)

$(VM_INITRD): selftests/vm/mkinitramfs.sh selftests/vm/init \
		$(VM_SUITE_FILES) $(VM_TESTS) $(VM_BINS) module
	@mkdir -p $(@D)
	selftests/vm/mkinitramfs.sh $@ selftests/vm/init kmod/hyper.ko \
		-s $(VM_SUITE_FILES) -t $(VM_TESTS) -b $(VM_BINS)

# One suite by hand: make vm-suite SUITE=path/to/x.suite (logs to stdout).
.PHONY: vm-suite
vm-suite:
	$(MAKE) EXTRA_VM_SUITES=$(SUITE) $(VM_INITRD)
	@mkdir -p $(O)/results
	selftests/vm/run-vm.sh $(VMLINUZ) $(VM_INITRD) $(SUITE) \
		$(O)/results/vm-$(basename $(notdir $(SUITE))).log; \
	awk -f selftests/totals.awk $(O)/results/vm-$(basename $(notdir $(SUITE))).log

check: all $(NATIVE_TESTS) $(VM_INITRD)
	@rm -rf $(O)/results && mkdir -p $(O)/results
	@echo "== native tests"
	@selftests/run-native.sh $(O)/results/native.log $(NATIVE_TESTS)
	@awk -f selftests/totals.awk $(O)/results/native.log | sed '$$d'
	@for s in $(VM_SUITES); do \
		echo "== VM suite $$s ($(KVER), QEMU TCG)"; \
		selftests/vm/run-vm.sh $(VMLINUZ) $(VM_INITRD) \
			selftests/vm/suites/$$s.suite $(O)/results/vm-$$s.log; \
		awk -f selftests/totals.awk $(O)/results/vm-$$s.log | sed '$$d'; \
	done
	@for r in $(CHECK_RUNS); do $(MAKE) --no-print-directory $$r; done
	@echo "== totals (logs in $(O)/results/)"
	@awk -f selftests/totals.awk $(O)/results/*.log | \
		grep -E '^[0-9]+ (passed|skipped)' | tee $(O)/results/totals
	@tail -n 1 $(O)/results/totals | grep -q ' 0 failed$$'

bench: all $(BENCH)

install: all install-module $(INSTALL_TARGETS)

# updates/ comes before the kernel's own modules in depmod's search; a
# staged install (DESTDIR) leaves depmod to the package's scripts.
install-module: module
	install -D -m 0644 kmod/hyper.ko $(DESTDIR)/lib/modules/$(KVER)/updates/hyper.ko
	$(if $(DESTDIR),,depmod -a $(KVER))

clean:
	rm -rf $(O)
	$(MAKE) -C $(KDIR) M=$(CURDIR) O= clean 2>/dev/null || \
		rm -f kmod/*.o kmod/*.ko kmod/*.mod* kmod/.*.cmd Module.symvers modules.order

help:
	@sed -n '3,15s/^# \{0,1\}//p' Makefile

-include $(shell find $(O)/obj $(O)/san -name '*.d' 2>/dev/null)
