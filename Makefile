# SPDX-License-Identifier: GPL-2.0
#
# hyperoffload top-level build.
#
#   make            module (kmod/hyper.ko), library and tools; installs
#                   no package: names the missing ones with an apt-get line
#   make deps       installs the Debian packages of everything below
#   make check      every test: native ones, then the VM suites; the last
#                   line is "N passed, N failed"
#   make demo       the end-to-end demonstration
#   make bench      benchmarks; JSON under build/bench/
#   make install    the module to /lib/modules/$(KVER)/updates/ (depmod
#                   and ldconfig unless DESTDIR is set), library, headers,
#                   pkg-config file, tools, man pages; binaries stripped,
#                   debug info in $(DEBUGDIR)/.build-id; honours DESTDIR
#                   and PREFIX; make uninstall takes it all away again
#   make dkms-build the module through dkms for $(KVER) (root; see
#                   tools/dkms/dkms.mk for dkms-stage, -install, -remove)
#
# Userspace builds into $(O); kbuild builds the module in kmod/.  Each
# component adds its own rules in a *.mk fragment next to its sources, so
# that this file does not change when one is added.

O		?= build
PREFIX		?= /usr/local
DESTDIR		?=
# Debug info of installed binaries, by build ID: where gdb looks.
DEBUGDIR	?= /usr/lib/debug
# The release's version, defined in VERSION alone (hyperctl --version,
# the dkms package).  The library's follows its symbol map
# (libhyper/libhyper.mk).
HYPER_VERSION	:= $(shell cat VERSION)

# The module is built against Debian's installed headers, never against
# `uname -r`: the host runs another kernel than the one the VM boots.
KVER		?= $(shell tools/build/kver.sh)
KDIR		?= /lib/modules/$(KVER)/build
VMLINUZ		?= /boot/vmlinuz-$(KVER)

# Debian packages (tools/build/packages.txt), before anything else.  The
# README's commands on a fresh machine (make check, make demo) and make
# deps install every missing one (as root); any other target, plain make
# and make install included, installs nothing: it checks what building
# needs and prints the exact apt-get line.  Recursive makes and make clean
# skip this.
DEPS_INSTALL_GOALS := deps check check-stress demo demo-smoke
ifeq ($(filter clean help uninstall,$(MAKECMDGOALS)),)
ifneq ($(HYPER_DEPS_CHECKED),1)
ifneq ($(filter $(DEPS_INSTALL_GOALS),$(MAKECMDGOALS)),)
DEPS_ARGS	:= all
else
DEPS_ARGS	:= --check build
endif
ifneq ($(shell tools/build/deps.sh $(DEPS_ARGS) >&2 && echo ok),ok)
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
UNINSTALL_TARGETS :=	# phony targets run by `make uninstall`

.PHONY: all module userspace check bench install install-module clean help \
	checkpatch sparse deps
.DEFAULT_GOAL := all

all: module userspace

# Everything in tools/build/packages.txt, installed (the check above).
deps:
	@echo "hyperoffload: every package of tools/build/packages.txt is installed"

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

# Removes what make install put there, with the same PREFIX and DESTDIR.
.PHONY: uninstall uninstall-module
uninstall: uninstall-module $(UNINSTALL_TARGETS)

uninstall-module:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/updates/hyper.ko
	$(if $(DESTDIR),,depmod -a $(KVER))

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
	@sed -n '5,/^#$$/s/^# //p' Makefile

-include $(shell find $(O)/obj $(O)/san -name '*.d' 2>/dev/null)
