/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sizes, parsed and printed the same way by every tool and library of the
 * project (hyper-plan, hyper-run, hyperctl, libhyper, libhyperplan).
 * Internal: linked into each, never exported.
 */
#ifndef HYPER_UTIL_UNITS_H
#define HYPER_UTIL_UNITS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A size: a decimal integer with an optional binary suffix, "65536",
 * "64K", "64k", "64KiB", "2M", "1MiB", "40G", "40GiB", "1T", "1TiB".
 * Returns 0, -EINVAL for anything else (signs, spaces, fractions, hex,
 * decimal "KB" units) or -ERANGE when it does not fit in 64 bits; *val is
 * only written on success.
 */
int hu_parse_size(const char *s, uint64_t *val);

/* The accepted forms, for error messages: "an integer with K, M, G or T". */
#define HU_SIZE_FORMS	"a whole number of bytes, or with K, M, G or T (KiB, MiB, GiB, TiB)"

/*
 * For tables: "0", "512", "64K", "1.5G": exact when the size is a whole
 * number of the unit, one decimal (rounded) otherwise.  Returns @buf.
 */
const char *hu_fmt_size(uint64_t bytes, char *buf, size_t len);

/* For messages: "512 B", "1.0 MiB" (@decimals after the point). */
void hu_fmt_bytes(char *buf, size_t len, uint64_t bytes, int decimals);

#endif
