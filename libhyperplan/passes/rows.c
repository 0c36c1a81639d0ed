// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A plan whose schedule is one of --compare's rows (struct hp_polmemo,
 * row) takes that row's layout instead of placing its residencies again,
 * and is not validated again.  The layout and validate passes
 * (passes/pipeline.c) ask here first.
 */
#include <string.h>

#include "passes/rows.h"

/*
 * Whether @a and @b hold the same steps: the same order, homes and cache
 * operators, what their residencies are built from (passes/arena.c).
 */
static bool same_steps(const struct sched *a, const struct sched *b)
{
	if (a->g != b->g || a->order != b->order || a->n != b->n ||
	    a->ncops != b->ncops || !a->home || !b->home || !a->slot_off ||
	    !b->slot_off || !a->cops != !b->cops)
		return false;
	if (memcmp(a->home, b->home, a->g->nt) ||
	    memcmp(a->slot_off, b->slot_off,
		   (2 * (size_t)a->n + 1) * sizeof(*a->slot_off)))
		return false;
	/* field by field: a cache op has padding */
	for (size_t i = 0; a->cops && i < a->ncops; i++)
		if (a->cops[i].t != b->cops[i].t ||
		    a->cops[i].kind != b->cops[i].kind)
			return false;
	return true;
}

/* And the same layout and figures: all libhyper's validator reads. */
static bool same_sched(const struct sched *a, const struct sched *b)
{
	size_t nt = a->g->nt;

	if (!same_steps(a, b) || a->budget != b->budget ||
	    a->pred.peak != b->pred.peak ||
	    a->pred.stall_ns != b->pred.stall_ns ||
	    a->pred.makespan_ns != b->pred.makespan_ns ||
	    !a->res_off != !b->res_off)
		return false;
	if (!a->res_off)
		return true;
	return a->arena == b->arena &&
	       !memcmp(a->res_first, b->res_first,
		       (nt + 1) * sizeof(*a->res_first)) &&
	       !memcmp(a->res_off, b->res_off,
		       a->res_first[nt] * sizeof(*a->res_off));
}

const struct sched *hyper_plan__row_twin(const struct problem *pb,
					 const struct sched *s, bool whole)
{
	const struct hp_polmemo *m = pb ? pb->memo : NULL;

	for (int p = 0; m && p < POL_NR; p++) {
		const struct result *r = m->row[p];

		if (r && &r->s != s && r->ok && r->s.res_off &&
		    (whole ? same_sched(&r->s, s) : same_steps(&r->s, s)))
			return &r->s;
	}
	return NULL;
}

int hyper_plan__row_layout(struct sched *s, const struct sched *twin,
			   struct hp_mem *mem, struct hp_err *e)
{
	size_t nt = s->g->nt, n = twin->res_first[nt];

	hyper_plan__sched_layout_drop(s);
	s->res_first = hyper_plan__array(mem, nt + 1, sizeof(*s->res_first));
	s->res_off = hyper_plan__array(mem, n ? n : 1, sizeof(*s->res_off));
	if (!s->res_first || !s->res_off)
		return hyper_plan__sched_layout_nomem(s, mem, e);
	memcpy(s->res_first, twin->res_first, (nt + 1) * sizeof(*s->res_first));
	memcpy(s->res_off, twin->res_off, n * sizeof(*s->res_off));
	s->arena = twin->arena;
	s->arena_over = 0;
	s->res_peak = twin->res_peak;
	return 0;
}
