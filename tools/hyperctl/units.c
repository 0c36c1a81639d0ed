// SPDX-License-Identifier: GPL-2.0
/*
 * Numbers: intervals in seconds and counts.  Sizes are the project's
 * (util/units.h: hu_parse_size(), hu_fmt_size()).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hyperctl.h"

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
