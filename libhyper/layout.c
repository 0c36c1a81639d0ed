// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Static placement of the device arena, worked out once per schedule.
 *
 * Placing tensors as they come (best fit at run time) fragments a tight
 * arena: streamed weights of several sizes and short-lived activations
 * leave the free space in pieces, and a large prefetch finds no hole
 * although the bytes are there.  A schedule says in advance when every
 * tensor becomes resident and when it is detached, so, as compilers plan
 * buffers, every residency interval gets its offset before the run.  A
 * schedule that carries offsets ("arena_offsets", HYPER_SCHED_ARENA: the
 * planner placed it) is checked and used as it is; any other is placed
 * here by the project's one placer (util/arena.c).  The arena either
 * needs is reported as hyper_schedule_info.arena_bytes.
 *
 * Time is a counter over the schedule's events (cache ops and defines in
 * order; the builder is util/residency.c, the planner's too, driven by
 * the validator's replay as it goes): two intervals live together
 * exactly when the replay counts both tensors resident, so the tallest
 * moment of the layout is the validated peak (each size rounded to
 * HS_DEV_ALIGN).  A
 * detached tensor's space is free, in the layout, from its detach on; at
 * run time a store still reading it holds it until done, and the
 * executor waits for that before reusing the bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"
#include "util/huge.h"
#include "util/arena.h"
#include "util/json.h"
#include "util/residency.h"

/* Above this many intervals libhyper does not lay a schedule out itself. */
#define HS_LAYOUT_MAX	(1U << 16)

/* libhyper's own layout, for a schedule that carries none. */
static int place(const struct hu_resid *v, uint32_t n, uint64_t *off,
		 uint64_t *height)
{
	struct hu_ival *h = hu_malloc_huge(n * sizeof(*h));
	int ret;

	if (!h)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		h[i] = (struct hu_ival){ v[i].start, v[i].end, v[i].bytes, 0 };
	ret = hu_arena_place(h, n, 0, 0, height);
	for (uint32_t i = 0; !ret && i < n; i++)
		off[i] = h[i].off;
	free(h);
	return ret;
}

/*
 * A schedule's own offsets in s->res_off.  hs_check_offsets() found each
 * tensor's to be one per residency, in the order they begin, and @n in
 * all: grouped by tensor, res_off is them as given.
 */
static int own_offsets(struct hyper_schedule *s, uint32_t n)
{
	uint32_t at = 0;

	s->res_off = hu_malloc_huge(n * sizeof(*s->res_off));
	if (!s->res_off)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nr_tensors; i++) {
		struct hs_tensor *t = &s->tensors[i];

		t->res_first = at;
		t->nr_res = t->nr_plan_off;
		hu_copy_short((char *)(s->res_off + at),
			      (const char *)t->plan_off,
			      t->nr_plan_off * sizeof(*s->res_off));
		at += t->nr_plan_off;
	}
	return 0;
}

/**
 * hs_layout() - give every residency interval of @s its arena offset
 * @s:	a validated schedule
 * @v:	its residency intervals (hs_validate()), freed here
 * @n:	how many
 * @e:	error text for offsets the schedule carries that are wrong
 *
 * Sets s->res_off and each tensor's res_first and nr_res.  A schedule with
 * HYPER_SCHED_ARENA keeps its own offsets and arena_bytes once they pass
 * hs_check_offsets(); any other is placed here, except one with more than
 * HS_LAYOUT_MAX intervals, whose arena_bytes stays 0 (placed at run time).
 *
 * Return: 0, -EBADMSG for bad offsets, or -ENOMEM.
 */
int hs_layout(struct hyper_schedule *s, struct hu_resid *v, uint32_t n,
	      struct hs_err *e)
{
	bool own = s->flags & HYPER_SCHED_ARENA;
	uint64_t *off = NULL;
	uint32_t at = 0;
	int ret = 0;

	for (uint32_t t = 0; t < s->nr_tensors && !own; t++)
		own = s->tensors[t].nr_plan_off;
	if (own)
		ret = hs_check_offsets(s, v, n, e);
	if (ret || !n || (!own && n > HS_LAYOUT_MAX))
		goto out;
	if (own) {
		/* The intervals' memory is free for the offsets. */
		free(v);
		v = NULL;
		ret = own_offsets(s, n);
		goto out;
	}
	off = hu_malloc_huge(n * sizeof(*off));
	if (!off) {
		ret = -ENOMEM;
		goto out;
	}
	ret = place(v, n, off, &s->arena_bytes);
	if (ret)
		goto out;
	/* Offsets grouped by tensor, each group in the order of its starts. */
	s->res_off = hu_malloc_huge(n * sizeof(*s->res_off));
	if (!s->res_off) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t t = 0; t < s->nr_tensors; t++)
		s->tensors[t].nr_res = 0;
	for (uint32_t i = 0; i < n; i++)
		s->tensors[v[i].tensor].nr_res++;
	for (uint32_t t = 0; t < s->nr_tensors; t++) {
		s->tensors[t].res_first = at;
		at += s->tensors[t].nr_res;
	}
	for (uint32_t i = 0; i < n; i++)
		s->res_off[s->tensors[v[i].tensor].res_first + v[i].nth] = off[i];
out:
	if (ret) {
		free(s->res_off);
		s->res_off = NULL;
		if (!own)
			s->arena_bytes = 0;
	}
	free(off);
	free(v);
	return ret;
}
