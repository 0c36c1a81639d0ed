// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

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

int hu_parse_size(const char *s, uint64_t *val)
{
	uint64_t v = 0;
	const char *p = s;
	size_t i;

	if (!s || *p < '0' || *p > '9')
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

const char *hu_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	unsigned int u = 0;
	uint64_t scale = 1024;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64, bytes);
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
		snprintf(buf, len, "%" PRIu64 "%c", bytes / scale, units[u]);
	else
		snprintf(buf, len, "%.1f%c", (double)bytes / (double)scale,
			 units[u]);
	return buf;
}

void hu_fmt_bytes(char *buf, size_t len, uint64_t bytes, int decimals)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.*f %s", decimals, v, unit[u]);
}
