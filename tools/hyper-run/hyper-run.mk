# SPDX-License-Identifier: GPL-2.0
# hyper-run: the schedule runner.  The release binary links libhyper.so.1
# (found next to it, in ../lib, also once installed); a sanitized one for
# the tests links the sanitized archive.

HRUN_SRCS	:= $(sort $(wildcard tools/hyper-run/*.c))
HRUN_OBJS	:= $(HRUN_SRCS:%.c=$(O)/obj/%.o)
HRUN_SAN_OBJS	:= $(HRUN_SRCS:%.c=$(O)/san/%.o)

# util/ is inside libhyper.so but not exported: the release links its own.
$(O)/bin/hyper-run: $(HRUN_OBJS) $(UTIL_OBJS) $(O)/lib/libhyper.so
	@mkdir -p $(@D)
	$(CC) -o $@ $(HRUN_OBJS) $(UTIL_OBJS) -L$(O)/lib -lhyper -ljson-c -lopenblas \
		-Wl,-rpath,'$$ORIGIN/../lib'

$(O)/san/bin/hyper-run: $(HRUN_SAN_OBJS) $(LIBHYPER_SAN_A)
	@mkdir -p $(@D)
	$(CC) $(SAN_CFLAGS) -o $@ $(HRUN_SAN_OBJS) $(LIBHYPER_SAN_A) $(LIBHYPER_LIBS) \
		-lopenblas

# For the VM: libhyper linked in (its rpath would not resolve there); the
# system libraries come along with it (selftests/vm/mkinitramfs.sh).
$(O)/vm/bin/hyper-run: $(HRUN_OBJS) $(LIBHYPER_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $(HRUN_OBJS) $(LIBHYPER_A) $(LIBHYPER_LIBS) -lopenblas

USERSPACE	+= $(O)/bin/hyper-run

.PHONY: install-hyper-run uninstall-hyper-run
install-hyper-run: $(O)/bin/hyper-run
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	tools/build/install-elf.sh install 0755 $(O)/bin/hyper-run \
		$(DESTDIR)$(PREFIX)/bin/hyper-run $(DESTDIR)$(DEBUGDIR)
	install -m 0644 tools/hyper-run/hyper-run.1 $(DESTDIR)$(PREFIX)/share/man/man1/

uninstall-hyper-run:
	tools/build/install-elf.sh uninstall $(DESTDIR)$(PREFIX)/bin/hyper-run \
		$(DESTDIR)$(DEBUGDIR)
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/hyper-run.1

INSTALL_TARGETS	+= install-hyper-run
UNINSTALL_TARGETS += uninstall-hyper-run
