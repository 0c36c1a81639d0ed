// SPDX-License-Identifier: GPL-2.0
/*
 * The tunables `hyperctl set` writes.  The ranges are what
 * Documentation/ABI/testing/sysfs-class-hyper says, for help text and
 * messages only: the module is the one that checks them.
 */
#include <string.h>

#include <linux/hyper.h>

#include "hyperctl.h"

#define HC_STR_(x)	#x
#define HC_STR(x)	HC_STR_(x)
#define HC_RANGE(lo, hi) HC_STR(lo) ".." HC_STR(hi)

/* The sizes are written in units; the numbers come from linux/hyper.h. */
_Static_assert(HYPER_CHUNK_SIZE_MIN == 64 << 10 &&
	       HYPER_CHUNK_SIZE_MAX == 64 << 20 &&
	       HYPER_INLINE_BYTES_MIN == 0 && HYPER_INLINE_BYTES_MAX == 1 << 20,
	       "the size ranges below no longer match linux/hyper.h");

const struct hc_knob hc_knobs[HC_NR_KNOBS] = {
	{ "workers",	HC_RANGE(HYPER_WORKERS_MIN, HYPER_WORKERS_MAX),	false },
	{ "chunk_size",		"a power of two, 64K..64M",	true },
	{ "queue_depth", HC_RANGE(HYPER_QUEUE_DEPTH_MIN, HYPER_QUEUE_DEPTH_MAX),
	  false },
	{ "inline_bytes",	"0..1M",			true },
};

/* The knob whose name is the first len bytes of name, or NULL. */
const struct hc_knob *hc_knob_find(const char *name, size_t len)
{
	for (int i = 0; i < HC_NR_KNOBS; i++)
		if (strlen(hc_knobs[i].name) == len &&
		    !strncmp(hc_knobs[i].name, name, len))
			return &hc_knobs[i];
	return NULL;
}
