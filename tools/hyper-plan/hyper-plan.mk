# SPDX-License-Identifier: GPL-2.0
# hyper-plan: the planner's CLI over libhyperplan (linked in statically,
# so that the VM runs it as is), and a sanitized copy for the tests.

HP_DIR		:= tools/hyper-plan
HP_SRCS		:= $(sort $(wildcard $(HP_DIR)/*.c))
HP_OBJS		:= $(HP_SRCS:%.c=$(O)/obj/%.o)
HP_SAN_OBJS	:= $(HP_SRCS:%.c=$(O)/san/%.o)
HP_BIN		:= $(O)/bin/hyper-plan
HP_SAN_BIN	:= $(O)/san/bin/hyper-plan

$(HP_OBJS) $(HP_SAN_OBJS): ALL_CFLAGS += $(HPT_INC)

$(HP_BIN): $(HP_OBJS) $(HPT_A) $(HPL_A) $(LIBHYPER_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $(HP_OBJS) $(HPT_STATIC_LIBS)

$(HP_SAN_BIN): $(HP_SAN_OBJS) $(HPT_SAN_A) $(HPL_SAN_A) $(LIBHYPER_SAN_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_CFLAGS) -o $@ $(HP_SAN_OBJS) $(HPT_SAN_LIBS)

USERSPACE += $(HP_BIN)

# -m NAME reads share/hyper-plan/configs beside the program's bin/: the
# VM's /bin/hyper-plan (the demo runs it there) finds /share/... so.
HP_VM_TREE	:= $(O)/vm-hyper-plan
$(HP_VM_TREE): $(wildcard $(HP_DIR)/configs/*.json)
	rm -rf $@ && mkdir -p $@/share/hyper-plan/configs
	cp $^ $@/share/hyper-plan/configs/
	@touch $@

VM_TREES	+= $(HP_VM_TREE)

.PHONY: install-hyper-plan uninstall-hyper-plan
install-hyper-plan: $(HP_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	tools/build/install-elf.sh install 0755 $(HP_BIN) \
		$(DESTDIR)$(PREFIX)/bin/hyper-plan $(DESTDIR)$(DEBUGDIR)
	install -m 0644 $(HP_DIR)/hyper-plan.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -d $(DESTDIR)$(PREFIX)/share/hyper-plan/configs
	install -m 0644 $(HP_DIR)/configs/*.json $(DESTDIR)$(PREFIX)/share/hyper-plan/configs/
INSTALL_TARGETS += install-hyper-plan

uninstall-hyper-plan:
	tools/build/install-elf.sh uninstall $(DESTDIR)$(PREFIX)/bin/hyper-plan \
		$(DESTDIR)$(DEBUGDIR)
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/hyper-plan.1
	rm -rf $(DESTDIR)$(PREFIX)/share/hyper-plan
UNINSTALL_TARGETS += uninstall-hyper-plan

# -m NAME from the build tree: what make runs (tests, the demo, bench-plan)
# reads the sources' configs, named here; the programs have no build-tree
# path compiled in (tools/hyper-plan/lib/gen/models.c).
HYPER_PLAN_CONFIGS ?= $(CURDIR)/$(HP_DIR)/configs
export HYPER_PLAN_CONFIGS
