# SPDX-License-Identifier: GPL-2.0
# libhyper: libhyper.so.1 (+ .so link), a static archive for the VM's
# static test programs, a sanitized archive for native tests, pkg-config
# file, man pages and `make install`.

LIBHYPER_VERSION := 1.0.0
LIBHYPER_SRCS	:= $(sort $(wildcard libhyper/*.c))
LIBHYPER_OBJS	:= $(LIBHYPER_SRCS:%.c=$(O)/obj/%.o) $(UTIL_OBJS)
LIBHYPER_SAN_OBJS := $(LIBHYPER_SRCS:%.c=$(O)/san/%.o) $(UTIL_SAN_OBJS)
LIBHYPER_LIBS	:= -luring -ljson-c -lnuma
LIBHYPER_SO	:= $(O)/lib/libhyper.so.1
LIBHYPER_A	:= $(O)/lib/libhyper.a
LIBHYPER_SAN_A	:= $(O)/san/lib/libhyper.a
LIBHYPER_MAN	:= $(sort $(wildcard libhyper/man/*.3 libhyper/man/*.7))
LIBDIR		?= $(PREFIX)/lib

$(LIBHYPER_SO): $(LIBHYPER_OBJS) libhyper/libhyper.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libhyper.so.1 \
		-Wl,--version-script=libhyper/libhyper.map -Wl,-z,defs \
		-o $@ $(LIBHYPER_OBJS) $(LIBHYPER_LIBS)

$(O)/lib/libhyper.so: $(LIBHYPER_SO)
	ln -sf libhyper.so.1 $@

$(LIBHYPER_A): $(LIBHYPER_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBHYPER_SAN_A): $(LIBHYPER_SAN_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(O)/lib/pkgconfig/libhyper.pc: libhyper/libhyper.pc.in libhyper/libhyper.mk
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@VERSION@|$(LIBHYPER_VERSION)|' $< > $@

USERSPACE += $(LIBHYPER_SO) $(O)/lib/libhyper.so $(LIBHYPER_A) \
	     $(O)/lib/pkgconfig/libhyper.pc

.PHONY: install-libhyper
install-libhyper: $(LIBHYPER_SO) $(LIBHYPER_A)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include/hyper \
		$(DESTDIR)$(PREFIX)/share/man/man3 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 0755 $(LIBHYPER_SO) $(DESTDIR)$(LIBDIR)/libhyper.so.1
	ln -sf libhyper.so.1 $(DESTDIR)$(LIBDIR)/libhyper.so
	install -m 0644 $(LIBHYPER_A) $(DESTDIR)$(LIBDIR)/libhyper.a
	@# Generated here: the build's copy may be for another PREFIX.
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@VERSION@|$(LIBHYPER_VERSION)|' libhyper/libhyper.pc.in \
		> $(DESTDIR)$(LIBDIR)/pkgconfig/libhyper.pc
	install -m 0644 include/hyper/hyper.h include/hyper/vocab.h $(DESTDIR)$(PREFIX)/include/hyper/
	install -m 0644 $(filter %.3,$(LIBHYPER_MAN)) $(DESTDIR)$(PREFIX)/share/man/man3/
	install -m 0644 $(filter %.7,$(LIBHYPER_MAN)) $(DESTDIR)$(PREFIX)/share/man/man7/

INSTALL_TARGETS += install-libhyper
