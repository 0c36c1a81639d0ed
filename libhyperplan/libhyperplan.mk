# SPDX-License-Identifier: GPL-2.0
# libhyperplan: the planner as a library (include/hyper/plan.h).
# libhyperplan.so.1 for frameworks, a static archive the CLI tools link
# (they use its internals too, and run in the VM without an rpath), a
# sanitized archive for the tests, pkg-config file and man pages.
#
# Sources sit in one folder per pipeline stage.  A header is included by
# its path under libhyperplan/ ("passes/sched.h"): the library's root is
# the one folder on the include path, as -iquote, so that no stage's
# header can hide a system one (<sched.h>).  Every non-static name of the
# library is hyper_plan_* (public) or hyper_plan__* (internal), so that
# the installed libhyperplan.a exports nothing else (plan_abi_test).
#
# What only the tools use (model generators, --feedback, the SVG and
# trace pictures) is not in the library: tools/hyper-plan/lib/ builds
# libhyperplan-tools.a, a static archive that is never installed.

# As libhyper's: the symbol map's newest node (HYPERPLAN_1.0 is 1.0.0).
HPL_VERSION	:= $(lastword $(shell sed -n \
		   's/^HYPERPLAN_\([0-9]*\.[0-9]*\) {.*/\1/p' libhyperplan/libhyperplan.map)).0
HPL_SRCS	:= $(sort $(wildcard libhyperplan/*.c libhyperplan/*/*.c))
HPL_OBJS	:= $(HPL_SRCS:%.c=$(O)/obj/%.o)
HPL_SAN_OBJS	:= $(HPL_SRCS:%.c=$(O)/san/%.o)
HPL_LIBS	:= -ljson-c -lm -ldl
HPL_SO		:= $(O)/lib/libhyperplan.so.1
HPL_A		:= $(O)/lib/libhyperplan.a
HPL_SAN_A	:= $(O)/san/lib/libhyperplan.a
HPL_MAN		:= $(sort $(wildcard libhyperplan/man/*.3))

# Every user of the planner's internals (the library, its tools, its
# tests) compiles with the library's root on the include path.
HPL_INC		:= -iquote libhyperplan
$(HPL_OBJS) $(HPL_SAN_OBJS): ALL_CFLAGS += $(HPL_INC)

$(HPL_SO): $(HPL_OBJS) $(UTIL_OBJS) libhyperplan/libhyperplan.map $(O)/lib/libhyper.so
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,libhyperplan.so.1 \
		-Wl,--version-script=libhyperplan/libhyperplan.map -Wl,-z,defs \
		-o $@ $(HPL_OBJS) $(UTIL_OBJS) -L$(O)/lib -lhyper $(HPL_LIBS)

$(O)/lib/libhyperplan.so: $(HPL_SO)
	ln -sf libhyperplan.so.1 $@

$(HPL_A): $(HPL_OBJS)
$(HPL_SAN_A): $(HPL_SAN_OBJS)

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

# The tools' archive (hyper-plan, bench-plan, hyper-timeline and the
# planner's tests): defined here, before the tools' and tests' fragments
# that name it in their prerequisites.  Its headers are included by their
# path under tools/hyper-plan/lib/ ("gen/model.h").
HPT_DIR		:= tools/hyper-plan/lib
HPT_SRCS	:= $(sort $(wildcard $(HPT_DIR)/*/*.c))
HPT_OBJS	:= $(HPT_SRCS:%.c=$(O)/obj/%.o)
HPT_SAN_OBJS	:= $(HPT_SRCS:%.c=$(O)/san/%.o)
HPT_A		:= $(O)/obj/$(HPT_DIR)/libhyperplan-tools.a
HPT_SAN_A	:= $(O)/san/$(HPT_DIR)/libhyperplan-tools.a
HPT_INC		:= $(HPL_INC) -iquote $(HPT_DIR)
$(HPT_OBJS) $(HPT_SAN_OBJS): ALL_CFLAGS += $(HPT_INC)

$(HPT_A): $(HPT_OBJS)
$(HPT_SAN_A): $(HPT_SAN_OBJS)

# The library's archives and the tools', each from its objects.
$(HPL_A) $(HPL_SAN_A) $(HPT_A) $(HPT_SAN_A):
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# A tool: the tools' archive first, then the library's.
HPT_STATIC_LIBS	:= $(HPT_A) $(HPL_STATIC_LIBS)
HPT_SAN_LIBS	:= $(HPT_SAN_A) $(HPL_SAN_LIBS)

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
