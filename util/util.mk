# SPDX-License-Identifier: GPL-2.0
# util/: helpers every tool and library shares (sizes, the clock, the
# arena placer, the residency builder, JSON reading and escaping: those
# need json-c), built into each of them and exported by none.  The libraries get the objects
# (libhyper.a carries them for static links); tools that do not link
# libhyper statically list them themselves.

UTIL_SRCS	:= $(sort $(wildcard util/*.c))
UTIL_OBJS	:= $(UTIL_SRCS:%.c=$(O)/obj/%.o)
UTIL_SAN_OBJS	:= $(UTIL_SRCS:%.c=$(O)/san/%.o)
