# SPDX-License-Identifier: GPL-2.0
# hyperctl: the operator CLI.  It needs only json-c (not libhyper): it
# talks to the module through sysfs.  The release binary goes to /bin in
# the test VM and to $(PREFIX)/sbin on install; a sanitized one is what the
# native tests run against fake sysfs trees.

HCTL_SRCS	:= $(sort $(wildcard tools/hyperctl/*.c))
HCTL_OBJS	:= $(HCTL_SRCS:%.c=$(O)/obj/%.o)
HCTL_SAN_OBJS	:= $(HCTL_SRCS:%.c=$(O)/san/%.o)
HCTL_LIBS	:= -ljson-c -lm

# hyperctl --version: the release's (VERSION, read by the Makefile).
$(O)/obj/tools/hyperctl/main.o $(O)/san/tools/hyperctl/main.o: \
	ALL_CFLAGS += -DHYPERCTL_VERSION='"$(HYPER_VERSION)"'
$(O)/obj/tools/hyperctl/main.o $(O)/san/tools/hyperctl/main.o: VERSION

$(O)/bin/hyperctl: $(HCTL_OBJS) $(UTIL_OBJS)
	@mkdir -p $(@D)
	$(CC) -o $@ $(HCTL_OBJS) $(UTIL_OBJS) $(HCTL_LIBS)

$(O)/san/bin/hyperctl: $(HCTL_SAN_OBJS) $(UTIL_SAN_OBJS)
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) -o $@ $(HCTL_SAN_OBJS) $(UTIL_SAN_OBJS) $(HCTL_LIBS)

USERSPACE	+= $(O)/bin/hyperctl
VM_BINS		+= $(O)/bin/hyperctl

.PHONY: install-hyperctl uninstall-hyperctl
install-hyperctl: $(O)/bin/hyperctl
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/share/man/man8
	tools/build/install-elf.sh install 0755 $(O)/bin/hyperctl \
		$(DESTDIR)$(PREFIX)/sbin/hyperctl $(DESTDIR)$(DEBUGDIR)
	install -m 0644 tools/hyperctl/hyperctl.8 $(DESTDIR)$(PREFIX)/share/man/man8/

uninstall-hyperctl:
	tools/build/install-elf.sh uninstall $(DESTDIR)$(PREFIX)/sbin/hyperctl \
		$(DESTDIR)$(DEBUGDIR)
	rm -f $(DESTDIR)$(PREFIX)/share/man/man8/hyperctl.8

INSTALL_TARGETS	+= install-hyperctl
UNINSTALL_TARGETS += uninstall-hyperctl
