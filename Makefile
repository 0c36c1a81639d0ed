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
# KVER, what `make module` builds for, is linux-image-amd64's kernel (6.1
# on Debian 12) on every machine; KVERS, the kernels `make check` tests
# on, are all installed ones with headers and image (tools/build/kver.sh).
KVER		?= $(shell tools/build/kver.sh)
KVERS		?= $(shell tools/build/kver.sh --all)
KDIR		?= /lib/modules/$(KVER)/build
VMLINUZ		?= /boot/vmlinuz-$(KVER)

# Debian packages (tools/build/packages.txt), before anything else.  The
# README's commands on a fresh machine (make check, make demo) and make
# deps install every missing one (as root); any other target, plain make
# and make install included, installs nothing: it checks what building
# needs and prints the exact apt-get line.  Recursive makes and make clean
# skip this.
DEPS_INSTALL_GOALS := deps check check-stress demo demo-smoke demo-stress
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
# No path of the build tree in what is built (debug info names the
# sources relative to the tree): libhyperplan's ABI test checks its .so.
BASE_CFLAGS	:= -std=gnu11 -D_GNU_SOURCE -fPIC -I. -Iinclude -Iinclude/uapi \
		   -ffile-prefix-map=$(CURDIR)=. $(WARN_CFLAGS)
ALL_CFLAGS	= $(BASE_CFLAGS) $(CFLAGS)
# Native tests build every object a second time with the sanitizers.
SAN_CFLAGS	:= -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
		   -fno-sanitize-recover=all
# The VM's initramfs and the module in it are per kernel: kbuild builds
# the module for kernel K in a copy of the sources under $(O)/kmod-K/.
vm_initrd	= $(O)/vm/$(1)/initramfs.cpio.gz
vm_ko		= $(O)/kmod-$(1)/kmod/hyper.ko
VM_INITRD	:= $(call vm_initrd,$(KVER))
KSFT_DIR	:= $(O)/kselftest
KSFT_STAMP	:= $(KSFT_DIR)/kselftest_harness.h
# The harness's macros compare mixed signedness and define unprototyped
# functions by design.
TEST_CFLAGS	= $(filter-out -Wmissing-prototypes,$(ALL_CFLAGS)) \
		  -Wno-sign-compare -I$(KSFT_DIR) -Iselftests/lib \
		  -include selftests/lib/hyper_timeout.h \
		  -include selftests/lib/hyper_leakcheck.h

# Filled in by the fragments.
USERSPACE	:=	# built by `make`
NATIVE_TESTS	:=	# run on the host by `make check`
VM_TESTS	:=	# copied to the VM's /tests
VM_BINS		:=	# copied to the VM's /bin
VM_KMODS	:=	# kernel modules (path under kernel/, no .ko) for /lib/modules
VM_TREES	:=	# directories copied over the VM's root as they are
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

# tools/build/kbuild.sh runs kbuild, and names the kernel and the symbols
# when modpost refuses a kernel that lacks an export the module uses.
module:
	@tools/build/kver.sh --check $(KVER)
	+MAKE="$(MAKE)" tools/build/kbuild.sh $(KVER) $(KDIR) $(CURDIR)

# Sparse and W=1 over the module: `make sparse` is `make module C=2 W=1`.
sparse:
	@tools/build/kver.sh --check $(KVER)
	+MAKE="$(MAKE)" tools/build/kbuild.sh $(KVER) $(KDIR) $(CURDIR) C=2 W=1

$(KSFT_STAMP): tools/build/kselftest.sh
	tools/build/kselftest.sh $(KSFT_DIR)

# An out-of-tree module needs version checks (kmod/compat.h), and
# TRACE_EVENT() bodies have their own layout (kmod/hyper_trace.h).  The
# module's kernel-doc comments are parsed by the headers' own kernel-doc,
# where a warning fails.
CHECKPATCH_IGNORE := SPDX_LICENSE_TAG,FILE_PATH_CHANGES,LINUX_VERSION_CODE
checkpatch: $(KSFT_STAMP)
	@tools/build/kver.sh --check $(KVER)
	perl $(KDIR)/scripts/kernel-doc -none -Werror \
		$(filter-out %.mod.c,$(wildcard kmod/*.[ch])) \
		include/uapi/linux/hyper.h
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

include util/util.mk
include $(sort $(wildcard libhyper/*.mk libhyperplan/*.mk tools/*/*.mk selftests/*/*.mk python/*.mk))

userspace: $(USERSPACE)

# Suites outside selftests/vm/suites/ (the demo's) add themselves here.
VM_SUITE_FILES	= $(wildcard selftests/vm/suites/*.suite) $(EXTRA_VM_SUITES)

# Built by pattern rules for the initramfs: not intermediate files.
# module-for-K is always remade (kbuild knows what is up to date).
.SECONDARY: $(VM_TESTS) $(VM_BINS)
.PHONY: FORCE
FORCE:

# The module's sources: not what kbuild generates next to them (hyper.mod.c
# of another kernel, from `make module`, must not reach a copy).
KMOD_SRCS	= $(filter-out %.mod.c,$(wildcard kmod/*.[ch]))

# The module for kernel K, built in its own copy of the sources so that
# kernels do not overwrite each other's objects (kbuild in 6.1 has no
# separate output directory for external modules).
module-for-%: FORCE
	@tools/build/kver.sh --check $* --image
	@mkdir -p $(O)/kmod-$*/kmod $(O)/kmod-$*/include/uapi/linux
	@cp -pu Kbuild $(O)/kmod-$*/
	@cp -pu kmod/Kbuild $(KMOD_SRCS) $(O)/kmod-$*/kmod/
	@cp -pu include/uapi/linux/hyper.h $(O)/kmod-$*/include/uapi/linux/
	+MAKE="$(MAKE)" tools/build/kbuild.sh $* /lib/modules/$*/build \
		$(abspath $(O)/kmod-$*)

$(O)/vm/%/initramfs.cpio.gz: selftests/vm/mkinitramfs.sh selftests/vm/init \
		$(VM_SUITE_FILES) $(VM_TESTS) $(VM_BINS) $(VM_TREES) module-for-%
	@mkdir -p $(@D)
	selftests/vm/mkinitramfs.sh $@ selftests/vm/init $(call vm_ko,$*) \
		-s $(VM_SUITE_FILES) -t $(VM_TESTS) -b $(VM_BINS) -r $(VM_TREES) \
		-m $(foreach m,$(VM_KMODS),$(wildcard /lib/modules/$*/kernel/$(m).ko*))

# The suites every kernel of KVERS but the default one runs (all of them
# run on KVER): the module's own, transfers and system-ram mode.  See
# Documentation/testing.md for why not all.
VM_SUITES_OTHER_KERNELS ?= kmod-pmem kmod-emulated kmod-numa hyperctl-mode \
			   kmod-huge fuzz-kmod twonode threenode
vm_suites_for	= $(if $(filter $(KVER),$(1)),$(VM_SUITES),\
		  $(filter $(VM_SUITES_OTHER_KERNELS),$(VM_SUITES)))

# One suite on one kernel: logs to $(O)/results/vm-KERNEL-SUITE.log and
# prints its lines and totals.
vm_run = selftests/vm/run-vm.sh /boot/vmlinuz-$(1) $(call vm_initrd,$(1)) \
		$(2) $(O)/results/vm-$(1)-$(basename $(notdir $(2))).log; \
	awk -f selftests/totals.awk $(O)/results/vm-$(1)-$(basename $(notdir $(2))).log

# One suite by hand: make vm-suite SUITE=path/to/x.suite [KVER=...].
.PHONY: vm-suite
vm-suite:
	@test -n "$(SUITE)" || { echo "usage: make vm-suite SUITE=selftests/vm/suites/NAME.suite [KVER=...]"; exit 2; }
	@test -f "$(SUITE)" || { echo "vm-suite: no suite file $(SUITE)"; exit 2; }
	$(MAKE) EXTRA_VM_SUITES=$(SUITE) $(VM_INITRD)
	@mkdir -p $(O)/results
	@$(call vm_run,$(KVER),$(SUITE))
	@awk -f selftests/totals.awk $(O)/results/vm-$(KVER)-$(basename $(notdir $(SUITE))).log | \
		tail -n 1 | grep -q ' 0 failed$$' || { echo "vm-suite: $(SUITE) failed"; exit 1; }

check: all $(NATIVE_TESTS) $(foreach k,$(KVERS),$(call vm_initrd,$(k)))
	@rm -rf $(O)/results && mkdir -p $(O)/results
	@echo "== native tests"
	@selftests/run-native.sh $(O)/results/native.log $(NATIVE_TESTS)
	@awk -f selftests/totals.awk $(O)/results/native.log | sed '$$d'
	@$(foreach k,$(KVERS),$(foreach s,$(call vm_suites_for,$(k)),\
		echo "== VM suite $(s) ($(k), QEMU TCG)"; \
		$(call vm_run,$(k),selftests/vm/suites/$(s).suite) | sed '$$d';))
	@for r in $(CHECK_RUNS); do $(MAKE) --no-print-directory $$r; done
	@echo "== totals (logs in $(O)/results/)"
	@awk -f selftests/totals.awk $(O)/results/*.log | \
		grep -E '^[0-9]+ (passed|skipped|rerun)' | tee $(O)/results/totals
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
