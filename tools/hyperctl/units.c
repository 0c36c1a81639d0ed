// SPDX-License-Identifier: GPL-2.0
/*
 * Numbers: sizes with binary suffixes (K, M, G, T; also k, KiB, ...),
 * intervals in seconds, counts; and sizes printed for people.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hyperctl.h"

static const struct {
	const char *suffix;
	unsigned int shift;
} size_suffixes[] = {
	{ "", 0 },
	{ "K", 10 }, { "k", 10 }, { "KiB", 10 },
	{ "M", 20 }, { "m", 20 }, { "MiB", 20 },
	{ "G", 30 }, { "g", 30 }, { "GiB", 30 },
	{ "T", 40 }, { "t", 40 }, { "TiB", 40 },
};

/*
 * A decimal integer with an optional binary suffix: "65536", "64K",
 * "1MiB".  -EINVAL for anything else (signs, spaces, fractions, hex),
 * -ERANGE if it does not fit in 64 bits.
 */
int hc_parse_size(const char *s, uint64_t *val)
{
	uint64_t v = 0;
	const char *p = s;
	size_t i;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	for (i = 0; i < sizeof(size_suffixes) / sizeof(size_suffixes[0]); i++) {
		unsigned int sh = size_suffixes[i].shift;

		if (strcmp(p, size_suffixes[i].suffix))
			continue;
		if (sh && v > UINT64_MAX >> sh)
			return -ERANGE;
		*val = v << sh;
		return 0;
	}
	return -EINVAL;
}

/* A positive number of seconds, fractions allowed: 0.01 .. 86400. */
int hc_parse_seconds(const char *s, double *secs)
{
	char *end;
	double v;

	if (!*s || (*s != '.' && (*s < '0' || *s > '9')))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -EINVAL;
	if (v < 0.01 || v > 86400)
		return -ERANGE;
	*secs = v;
	return 0;
}

/* A positive decimal count, at most a billion. */
int hc_parse_count(const char *s, long *count)
{
	long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (*s - '0');
		if (v > 1000000000)
			return -ERANGE;
	}
	if (!v)
		return -ERANGE;
	*count = v;
	return 0;
}

/*
 * "0", "512", "64K", "1.5G": exact when the size is a whole number of the
 * unit, one decimal (rounded) otherwise.  Returns buf.
 */
const char *hc_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	unsigned int u = 0;
	uint64_t scale = 1024;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
		return buf;
	}
	while (u + 1 < sizeof(units) - 1 && bytes / scale >= 1024) {
		scale <<= 10;
		u++;
	}
	/* 1048575 is "1.0M", not "1024.0K". */
	if (u + 1 < sizeof(units) - 1 && (double)bytes / (double)scale >= 1023.95) {
		scale <<= 10;
		u++;
	}
	if (bytes % scale == 0)
		snprintf(buf, len, "%llu%c", (unsigned long long)(bytes / scale),
			 units[u]);
	else
		snprintf(buf, len, "%.1f%c", (double)bytes / (double)scale,
			 units[u]);
	return buf;
}
