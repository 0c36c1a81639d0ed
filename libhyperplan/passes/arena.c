// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where each residency of a plan lives in the device arena.  The
 * residencies are the ones libhyper's validator replays (a tensor whose
 * home is the device from the start, each prefetch, each define of a
 * tensor not resident, each until its detach), built by the builder
 * libhyper's own layout uses (util/residency.c) on the same event
 * counter, so the offsets written here are exactly the ones libhyper
 * checks.  The placement is the project's one placer
 * (util/arena.c); the schedule then carries it (Documentation/
 * schedule-format.md, "Arena layout") and libhyper runs it as it is.
 */
#include <errno.h>

#include <hyper/hyper.h>

#include "passes/sched.h"
#include "util/arena.h"
#include "util/residency.h"

/* The most bytes resident at once, sizes as they are (not rounded). */
static uint64_t res_peak(const struct graph *g, const struct hu_resid *v,
			 uint32_t n, struct hp_mem *mem)
{
	struct hu_ival *h = hyper_plan__calloc(mem, n, sizeof(*h));
	uint64_t peak;

	if (!h)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		h[i] = (struct hu_ival){ v[i].start, v[i].end,
					 g->t[v[i].tensor].bytes, 0 };
	peak = hu_arena_live_peak(h, n);
	free(h);
	return peak;
}

/* The residencies of @s, by the builder libhyper's layout uses too. */
static int residencies(const struct sched *s, struct hu_resid **vp,
		       uint32_t *np, struct hp_mem *mem)
{
	const struct graph *g = s->g;
	struct hu_res r;

	if (hu_res_init(&r, (uint32_t)g->nt, HYPER_ARENA_ALIGN,
			hyper_plan__mem_realloc, mem)) {
		hu_res_free(&r);
		return -ENOMEM;
	}
	for (uint32_t t = 0; t < g->nt; t++)
		if (s->home[t] == HYPER_HOME_DEVICE)
			hu_res_begin(&r, t, g->t[t].bytes);
	hu_res_tick(&r);
	for (uint32_t k = 0; k < s->n; k++) {
		const struct op *o = &g->op[s->order[k]];
		const uint32_t *out = op_out(g, o);

		for (size_t i = s->slot_off[2 * k]; i < s->slot_off[2 * k + 1]; i++)
			hu_res_op(&r, s->cops[i].kind, s->cops[i].t,
				  g->t[s->cops[i].t].bytes);
		for (uint32_t j = 0; j < o->n_out; j++, hu_res_tick(&r))
			hu_res_begin(&r, out[j], g->t[out[j]].bytes);
		for (size_t i = s->slot_off[2 * k + 1]; i < s->slot_off[2 * k + 2]; i++)
			hu_res_op(&r, s->cops[i].kind, s->cops[i].t,
				  g->t[s->cops[i].t].bytes);
	}
	return hu_res_finish(&r, vp, np);
}

int hyper_plan__sched_layout(struct sched *s, uint64_t limit, struct hp_mem *mem,
		 struct hp_err *e)
{
	const struct graph *g = s->g;
	struct hu_resid *v = NULL;
	struct hu_ival *h = NULL;
	uint64_t height;
	uint32_t n;
	int ret;

	free(s->res_off);
	free(s->res_first);
	s->res_off = NULL;
	s->res_first = NULL;
	s->arena = s->arena_over = s->res_peak = 0;
	if (residencies(s, &v, &n, mem))
		goto nomem;
	s->res_peak = res_peak(g, v, n, mem);
	h = mem->failed ? NULL : hyper_plan__calloc(mem, n, sizeof(*h));
	if (!h)
		goto nomem;
	for (uint32_t i = 0; i < n; i++)
		h[i] = (struct hu_ival){ v[i].start, v[i].end, v[i].bytes, 0 };
	ret = hu_arena_place(h, n, HU_ARENA_EFFORT, &height);
	if (ret)
		goto nomem;
	if (!height)
		goto out;	/* nothing is ever resident: nothing to place */
	if (limit && height > limit) {
		/* Never hand out a layout beyond the budget the user asked for. */
		s->arena_over = height;
		goto out;
	}
	s->arena = height;
	s->res_first = hyper_plan__calloc(mem, (size_t)g->nt + 1, sizeof(*s->res_first));
	s->res_off = hyper_plan__calloc(mem, n, sizeof(*s->res_off));
	if (!s->res_first || !s->res_off)
		goto nomem;
	for (uint32_t i = 0; i < n; i++)
		s->res_first[v[i].tensor + 1]++;
	for (uint32_t t = 0; t < g->nt; t++)
		s->res_first[t + 1] += s->res_first[t];
	for (uint32_t i = 0; i < n; i++)
		s->res_off[s->res_first[v[i].tensor] + v[i].nth] = h[i].off;
	ret = 0;
	goto out;
nomem:
	/* no layout: as if none had been asked for */
	free(s->res_off);
	free(s->res_first);
	s->res_off = NULL;
	s->res_first = NULL;
	s->arena = s->arena_over = s->res_peak = 0;
	mem->failed = true;
	hyper_plan__errf(e, "out of memory laying out the device arena");
	ret = -ENOMEM;
out:
	free(h);
	free(v);
	return ret;
}
