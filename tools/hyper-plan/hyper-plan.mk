# SPDX-License-Identifier: GPL-2.0
# hyper-plan: the planner CLI, a sanitized copy of it and of its objects
# for the tests, and `make bench-plan`.

HP_DIR		:= tools/hyper-plan
HP_SRCS		:= $(sort $(wildcard $(HP_DIR)/*.c))
HP_LIB_SRCS	:= $(filter-out $(HP_DIR)/main.c,$(HP_SRCS))
HP_OBJS		:= $(HP_SRCS:%.c=$(O)/obj/%.o)
HP_SAN_OBJS	:= $(HP_SRCS:%.c=$(O)/san/%.o)
HP_SAN_LIB_OBJS	:= $(HP_LIB_SRCS:%.c=$(O)/san/%.o)
HP_LIBS		:= -ljson-c -lm -ldl
HP_BIN		:= $(O)/bin/hyper-plan
HP_SAN_BIN	:= $(O)/san/bin/hyper-plan

$(HP_BIN): $(HP_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(HP_LIBS)

$(HP_SAN_BIN): $(HP_SAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_CFLAGS) -o $@ $^ $(HP_LIBS)

USERSPACE += $(HP_BIN)

.PHONY: bench-plan install-hyper-plan uninstall-hyper-plan
bench-plan: $(HP_BIN)
	@mkdir -p $(O)/bench
	$(HP_BIN) --bench $(O)/bench
BENCH += bench-plan

install-hyper-plan: $(HP_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	tools/build/install-elf.sh install 0755 $(HP_BIN) \
		$(DESTDIR)$(PREFIX)/bin/hyper-plan $(DESTDIR)$(DEBUGDIR)
	install -m 0644 $(HP_DIR)/hyper-plan.1 $(DESTDIR)$(PREFIX)/share/man/man1/
INSTALL_TARGETS += install-hyper-plan

uninstall-hyper-plan:
	tools/build/install-elf.sh uninstall $(DESTDIR)$(PREFIX)/bin/hyper-plan \
		$(DESTDIR)$(DEBUGDIR)
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/hyper-plan.1
UNINSTALL_TARGETS += uninstall-hyper-plan
