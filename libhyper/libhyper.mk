# SPDX-License-Identifier: GPL-2.0
# libhyper: libhyper.so.1 (+ .so link), a static archive for the VM's
# static test programs, a sanitized archive for native tests, pkg-config
# file, man pages and `make install`.

# The library's version is its symbol map's newest node (LIBHYPER_1.1 is
# 1.1.0): a new function means a new node, so the version cannot lag.
LIBHYPER_VERSION := $(lastword $(shell sed -n \
		      's/^LIBHYPER_\([0-9]*\.[0-9]*\) {.*/\1/p' libhyper/libhyper.map)).0
LIBHYPER_SRCS	:= $(sort $(wildcard libhyper/*.c))
LIBHYPER_OBJS	:= $(LIBHYPER_SRCS:%.c=$(O)/obj/%.o) $(UTIL_OBJS)
LIBHYPER_SAN_OBJS := $(LIBHYPER_SRCS:%.c=$(O)/san/%.o) $(UTIL_SAN_OBJS)
LIBHYPER_LIBS	:= -luring -ljson-c -lnuma -ldl

# The CUDA device (device-cuda.c) loads libcudart at run time.  With the
# toolkit's header, its prototypes check libhyper's own; without, the
# file declares the few types it uses, and libhyper builds all the same.
CUDA_HOME	?= /usr/local/cuda
LIBHYPER_CUDA_H	:= $(wildcard $(CUDA_HOME)/include/cuda_runtime_api.h)
ifneq ($(LIBHYPER_CUDA_H),)
$(O)/obj/libhyper/device-cuda.o $(O)/san/libhyper/device-cuda.o: \
	ALL_CFLAGS += -DHX_HAVE_CUDA_H -isystem $(CUDA_HOME)/include
endif
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

# Stripped, with the debug info under $(DEBUGDIR) by build ID, as Debian
# does (tools/build/install-elf.sh); ldconfig links libhyper.so.1 and
# refreshes the cache, unless the install is staged in a DESTDIR.
LIBHYPER_REAL	:= libhyper.so.$(LIBHYPER_VERSION)

.PHONY: install-libhyper uninstall-libhyper
install-libhyper: $(LIBHYPER_SO) $(LIBHYPER_A)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include/hyper \
		$(DESTDIR)$(PREFIX)/share/man/man3 $(DESTDIR)$(PREFIX)/share/man/man7
	tools/build/install-elf.sh install 0644 $(LIBHYPER_SO) \
		$(DESTDIR)$(LIBDIR)/$(LIBHYPER_REAL) $(DESTDIR)$(DEBUGDIR)
	ln -sf $(LIBHYPER_REAL) $(DESTDIR)$(LIBDIR)/libhyper.so.1
	ln -sf libhyper.so.1 $(DESTDIR)$(LIBDIR)/libhyper.so
	install -m 0644 $(LIBHYPER_A) $(DESTDIR)$(LIBDIR)/libhyper.a
	@# Generated here: the build's copy may be for another PREFIX.
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@VERSION@|$(LIBHYPER_VERSION)|' libhyper/libhyper.pc.in \
		> $(DESTDIR)$(LIBDIR)/pkgconfig/libhyper.pc
	install -m 0644 include/hyper/hyper.h include/hyper/vocab.h \
		include/hyper/residency.h $(DESTDIR)$(PREFIX)/include/hyper/
	install -m 0644 $(filter %.3,$(LIBHYPER_MAN)) $(DESTDIR)$(PREFIX)/share/man/man3/
	install -m 0644 $(filter %.7,$(LIBHYPER_MAN)) $(DESTDIR)$(PREFIX)/share/man/man7/
	$(if $(DESTDIR),,ldconfig)

uninstall-libhyper:
	tools/build/install-elf.sh uninstall $(DESTDIR)$(LIBDIR)/$(LIBHYPER_REAL) \
		$(DESTDIR)$(DEBUGDIR)
	rm -f $(DESTDIR)$(LIBDIR)/libhyper.so.1 $(DESTDIR)$(LIBDIR)/libhyper.so \
		$(DESTDIR)$(LIBDIR)/libhyper.a $(DESTDIR)$(LIBDIR)/pkgconfig/libhyper.pc \
		$(DESTDIR)$(PREFIX)/include/hyper/hyper.h \
		$(DESTDIR)$(PREFIX)/include/hyper/vocab.h \
		$(DESTDIR)$(PREFIX)/include/hyper/residency.h \
		$(patsubst libhyper/man/%.3,$(DESTDIR)$(PREFIX)/share/man/man3/%.3,$(filter %.3,$(LIBHYPER_MAN))) \
		$(patsubst libhyper/man/%.7,$(DESTDIR)$(PREFIX)/share/man/man7/%.7,$(filter %.7,$(LIBHYPER_MAN)))
	-rmdir $(DESTDIR)$(PREFIX)/include/hyper 2>/dev/null
	$(if $(DESTDIR),,ldconfig)

INSTALL_TARGETS += install-libhyper
UNINSTALL_TARGETS += uninstall-libhyper
