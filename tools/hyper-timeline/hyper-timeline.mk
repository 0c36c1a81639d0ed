# SPDX-License-Identifier: GPL-2.0
# hyper-timeline: draws hyper-run --timeline files with the planner's SVG
# and trace writers.

HT_SRCS		:= $(sort $(wildcard tools/hyper-timeline/*.c))
HT_OBJS		:= $(HT_SRCS:%.c=$(O)/obj/%.o)
HT_SAN_OBJS	:= $(HT_SRCS:%.c=$(O)/san/%.o)

$(HT_OBJS) $(HT_SAN_OBJS): ALL_CFLAGS += $(HPT_INC)

$(O)/bin/hyper-timeline: $(HT_OBJS) $(HPT_A) $(HPL_A) $(LIBHYPER_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $(HT_OBJS) $(HPT_STATIC_LIBS)

$(O)/san/bin/hyper-timeline: $(HT_SAN_OBJS) $(HPT_SAN_A) $(HPL_SAN_A) $(LIBHYPER_SAN_A)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_CFLAGS) -o $@ $(HT_SAN_OBJS) $(HPT_SAN_LIBS)

USERSPACE += $(O)/bin/hyper-timeline

.PHONY: install-hyper-timeline uninstall-hyper-timeline
install-hyper-timeline: $(O)/bin/hyper-timeline
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	tools/build/install-elf.sh install 0755 $(O)/bin/hyper-timeline \
		$(DESTDIR)$(PREFIX)/bin/hyper-timeline $(DESTDIR)$(DEBUGDIR)
	install -m 0644 tools/hyper-timeline/hyper-timeline.1 $(DESTDIR)$(PREFIX)/share/man/man1/
INSTALL_TARGETS += install-hyper-timeline

uninstall-hyper-timeline:
	tools/build/install-elf.sh uninstall $(DESTDIR)$(PREFIX)/bin/hyper-timeline \
		$(DESTDIR)$(DEBUGDIR)
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/hyper-timeline.1
UNINSTALL_TARGETS += uninstall-hyper-timeline
