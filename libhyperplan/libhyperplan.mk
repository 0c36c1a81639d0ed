# SPDX-License-Identifier: GPL-2.0
# libhyperplan: the planner as a library (include/hyper/plan.h).
# libhyperplan.so.1 for frameworks, a static archive the CLI tools link
# (they use its internals too, and run in the VM without an rpath), a
# sanitized archive for the tests, pkg-config file and man pages.
#
# Sources sit in one folder per pipeline stage; each stage includes the
# headers of the stages before it by name, hence one -I per folder.

# As libhyper's: the symbol map's newest node (HYPERPLAN_1.0 is 1.0.0).
HPL_VERSION	:= $(lastword $(shell sed -n \
		   's/^HYPERPLAN_\([0-9]*\.[0-9]*\) {.*/\1/p' libhyperplan/libhyperplan.map)).0
HPL_DIRS	:= libhyperplan $(sort $(dir $(wildcard libhyperplan/*/*.c)))
# -iquote: the stages' headers by "name" only, so that passes/sched.h
# never hides the system's <sched.h> (which <pthread.h> includes).
HPL_INC		:= $(addprefix -iquote,$(HPL_DIRS))
HPL_SRCS	:= $(sort $(wildcard libhyperplan/*.c libhyperplan/*/*.c))
HPL_OBJS	:= $(HPL_SRCS:%.c=$(O)/obj/%.o)
HPL_SAN_OBJS	:= $(HPL_SRCS:%.c=$(O)/san/%.o)
HPL_LIBS	:= -ljson-c -lm -ldl
HPL_SO		:= $(O)/lib/libhyperplan.so.1
HPL_A		:= $(O)/lib/libhyperplan.a
HPL_SAN_A	:= $(O)/san/lib/libhyperplan.a
HPL_MAN		:= $(sort $(wildcard libhyperplan/man/*.3))

# Every user of the planner's internals (the library, its tools, its
# tests) compiles with the stage folders on the include path.
$(HPL_OBJS) $(HPL_SAN_OBJS): ALL_CFLAGS += $(HPL_INC)
# -m NAME reads the shipped configs; from the build tree, in the sources.
$(O)/obj/libhyperplan/gen/models.o $(O)/san/libhyperplan/gen/models.o: \
	ALL_CFLAGS += -DHP_SRC_CONFIGS='"$(CURDIR)/tools/hyper-plan/configs"'

$(HPL_SO): $(HPL_OBJS) $(UTIL_OBJS) libhyperplan/libhyperplan.map $(O)/lib/libhyper.so
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libhyperplan.so.1 \
		-Wl,--version-script=libhyperplan/libhyperplan.map -Wl,-z,defs \
		-o $@ $(HPL_OBJS) $(UTIL_OBJS) -L$(O)/lib -lhyper $(HPL_LIBS)

$(O)/lib/libhyperplan.so: $(HPL_SO)
	ln -sf libhyperplan.so.1 $@

$(HPL_A): $(HPL_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(HPL_SAN_A): $(HPL_SAN_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(O)/lib/pkgconfig/libhyperplan.pc: libhyperplan/libhyperplan.pc.in \
		libhyperplan/libhyperplan.mk
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@VERSION@|$(HPL_VERSION)|' $< > $@

USERSPACE += $(HPL_SO) $(O)/lib/libhyperplan.so $(HPL_A) \
	     $(O)/lib/pkgconfig/libhyperplan.pc

# A static program over the planner: its objects, both archives, and the
# system libraries both need.
HPL_STATIC_LIBS	:= $(HPL_A) $(LIBHYPER_A) $(LIBHYPER_LIBS) $(HPL_LIBS)
HPL_SAN_LIBS	:= $(HPL_SAN_A) $(LIBHYPER_SAN_A) $(LIBHYPER_LIBS) $(HPL_LIBS)

# Installed as libhyper is (libhyper/libhyper.mk): stripped, debug info
# by build ID, ldconfig unless staged.
HPL_REAL	:= libhyperplan.so.$(HPL_VERSION)

.PHONY: install-libhyperplan uninstall-libhyperplan
install-libhyperplan: $(HPL_SO) $(HPL_A)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include/hyper \
		$(DESTDIR)$(PREFIX)/share/man/man3
	tools/build/install-elf.sh install 0644 $(HPL_SO) \
		$(DESTDIR)$(LIBDIR)/$(HPL_REAL) $(DESTDIR)$(DEBUGDIR)
	ln -sf $(HPL_REAL) $(DESTDIR)$(LIBDIR)/libhyperplan.so.1
	ln -sf libhyperplan.so.1 $(DESTDIR)$(LIBDIR)/libhyperplan.so
	install -m 0644 $(HPL_A) $(DESTDIR)$(LIBDIR)/libhyperplan.a
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@VERSION@|$(HPL_VERSION)|' libhyperplan/libhyperplan.pc.in \
		> $(DESTDIR)$(LIBDIR)/pkgconfig/libhyperplan.pc
	install -m 0644 include/hyper/plan.h $(DESTDIR)$(PREFIX)/include/hyper/
	install -m 0644 $(HPL_MAN) $(DESTDIR)$(PREFIX)/share/man/man3/
	$(if $(DESTDIR),,ldconfig)

uninstall-libhyperplan:
	tools/build/install-elf.sh uninstall $(DESTDIR)$(LIBDIR)/$(HPL_REAL) \
		$(DESTDIR)$(DEBUGDIR)
	rm -f $(DESTDIR)$(LIBDIR)/libhyperplan.so.1 $(DESTDIR)$(LIBDIR)/libhyperplan.so \
		$(DESTDIR)$(LIBDIR)/libhyperplan.a \
		$(DESTDIR)$(LIBDIR)/pkgconfig/libhyperplan.pc \
		$(DESTDIR)$(PREFIX)/include/hyper/plan.h \
		$(addprefix $(DESTDIR)$(PREFIX)/share/man/man3/,$(notdir $(HPL_MAN)))
	-rmdir $(DESTDIR)$(PREFIX)/include/hyper 2>/dev/null
	$(if $(DESTDIR),,ldconfig)

INSTALL_TARGETS += install-libhyperplan
UNINSTALL_TARGETS += uninstall-libhyperplan
