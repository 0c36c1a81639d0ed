/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The words libhyper and the planner (libhyperplan) share, defined once:
 * cache operators, tensor kinds and homes, with the names the schedule
 * format (Documentation/schedule-format.md) spells them with.  Included
 * by <hyper/hyper.h> and <hyper/plan.h>.
 *
 * The residency rules these words obey are defined in <hyper/residency.h>
 * (documented in schedule-format.md, "Validation") and enforced by one
 * validator, libhyper's (hyper_schedule_parse(3), hyper_schedule_new(3));
 * the planner submits every plan to it.
 */
#ifndef HYPER_VOCAB_H
#define HYPER_VOCAB_H

#include <stdint.h>
#include <string.h>

/* Numbered from 1, so that 0 is never a valid value of any of them. */
enum hyper_cache_op {
	HYPER_OP_PREFETCH	= 1,	/* pool -> device */
	HYPER_OP_STORE		= 2,	/* device -> pool */
	HYPER_OP_DETACH		= 3,	/* drop the device copy */
};

enum hyper_tensor_kind {
	HYPER_KIND_WEIGHT	= 1,
	HYPER_KIND_ACTIVATION	= 2,
	HYPER_KIND_KV		= 3,
	HYPER_KIND_GRADIENT	= 4,
	HYPER_KIND_OPTIMIZER	= 5,
};
#define HYPER_KIND_NR		6	/* one past the last kind */

/* Where a tensor's data is when the schedule starts. */
enum hyper_home {
	HYPER_HOME_POOL		= 1,
	HYPER_HOME_DEVICE	= 2,
	HYPER_HOME_NONE		= 3,	/* no data yet: defined by a step */
};

static inline const char *hyper_cache_op_name(uint32_t op)
{
	static const char *const n[] = { NULL, "prefetch", "store", "detach" };

	return op < 4 ? n[op] : NULL;
}

static inline const char *hyper_kind_name(uint32_t kind)
{
	static const char *const n[] = {
		NULL, "weight", "activation", "kv", "gradient", "optimizer",
	};

	return kind < HYPER_KIND_NR ? n[kind] : NULL;
}

static inline const char *hyper_home_name(uint32_t home)
{
	static const char *const n[] = { NULL, "pool", "device", "none" };

	return home < 4 ? n[home] : NULL;
}

/* The value whose name is @s, or 0 when none: @name_fn is one of the above. */
static inline uint32_t hyper_vocab_parse(const char *(*name_fn)(uint32_t),
					 const char *s)
{
	const char *n;

	for (uint32_t v = 1; (n = name_fn(v)); v++)
		if (!strcmp(n, s))
			return v;
	return 0;
}

#endif /* HYPER_VOCAB_H */
