// SPDX-License-Identifier: GPL-2.0
/*
 * The tunables `hyperctl set` writes.  The ranges are what
 * Documentation/ABI/testing/sysfs-class-hyper says, for help text and
 * messages only: the module is the one that checks them.
 */
#include <string.h>

#include "hyperctl.h"

const struct hc_knob hc_knobs[HC_NR_KNOBS] = {
	{ "workers",		"1..64",			false },
	{ "chunk_size",		"a power of two, 64K..64M",	true },
	{ "queue_depth",	"1..4096",			false },
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
