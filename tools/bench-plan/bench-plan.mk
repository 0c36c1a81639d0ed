# SPDX-License-Identifier: GPL-2.0
# bench-plan: the planner's benchmark (Documentation/bench-plan.md).

BP_SRCS		:= $(sort $(wildcard tools/bench-plan/*.c))
BP_OBJS		:= $(BP_SRCS:%.c=$(O)/obj/%.o)
BP_BIN		:= $(O)/bin/bench-plan

$(BP_OBJS): ALL_CFLAGS += $(HPT_INC)

$(BP_BIN): $(BP_OBJS) $(HPT_A) $(HPL_A) $(LIBHYPER_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $(BP_OBJS) $(HPT_STATIC_LIBS)

USERSPACE += $(BP_BIN)

.PHONY: bench-plan
bench-plan: $(BP_BIN)
	@mkdir -p $(O)/bench
	$(BP_BIN) $(O)/bench
BENCH += bench-plan

.PHONY: install-bench-plan uninstall-bench-plan
install-bench-plan: $(BP_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	tools/build/install-elf.sh install 0755 $(BP_BIN) \
		$(DESTDIR)$(PREFIX)/bin/bench-plan $(DESTDIR)$(DEBUGDIR)
	install -m 0644 tools/bench-plan/bench-plan.1 $(DESTDIR)$(PREFIX)/share/man/man1/
INSTALL_TARGETS += install-bench-plan

uninstall-bench-plan:
	tools/build/install-elf.sh uninstall $(DESTDIR)$(PREFIX)/bin/bench-plan \
		$(DESTDIR)$(DEBUGDIR)
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/bench-plan.1
UNINSTALL_TARGETS += uninstall-bench-plan
