// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where each residency of a plan lives in the device arena.  The
 * residencies are the ones libhyper's validator replays (a tensor whose
 * home is the device from the start, each prefetch, each define of a
 * tensor not resident, each until its detach), on the same event counter
 * as libhyper's own layout, so the offsets written here are exactly the
 * ones libhyper checks.  The placement is the project's one placer
 * (util/arena.c); the schedule then carries it (Documentation/
 * schedule-format.md, "Arena layout") and libhyper runs it as it is.
 */
#include <errno.h>

#include <hyper/hyper.h>

#include "sched.h"
#include "util/arena.h"

struct res {
	struct hu_ival *v;
	uint32_t *tensor, *nth;
	uint32_t n, cap;
	uint32_t *open;		/* tensor -> interval index + 1 */
	uint32_t *count;
	uint64_t now;
	const struct graph *g;
	struct hp_mem *mem;	/* failed: an interval could not be added */
};

static void begin(struct res *r, uint32_t t)
{
	if (r->open[t])
		return;
	if (r->n == r->cap) {
		size_t c = r->cap, c2 = r->cap;

		/* each grows to the same capacity; a failure leaves r->cap */
		if (hp_grow(r->mem, &r->v, &c, r->n, sizeof(*r->v)) ||
		    hp_grow(r->mem, &r->tensor, &c2, r->n, sizeof(*r->tensor)))
			return;
		c2 = r->cap;
		if (hp_grow(r->mem, &r->nth, &c2, r->n, sizeof(*r->nth)))
			return;
		r->cap = c;
	}
	r->v[r->n] = (struct hu_ival){
		.start = r->now, .end = UINT64_MAX,
		.bytes = (r->g->t[t].bytes + HYPER_ARENA_ALIGN - 1) &
			 ~(uint64_t)(HYPER_ARENA_ALIGN - 1),
	};
	r->tensor[r->n] = t;
	r->nth[r->n] = r->count[t]++;
	r->open[t] = ++r->n;
}

static void slot(struct res *r, const struct sched *s, size_t sl)
{
	for (size_t i = s->slot_off[sl]; i < s->slot_off[sl + 1]; i++, r->now++) {
		uint32_t t = s->cops[i].t;

		if (s->cops[i].kind == HYPER_OP_PREFETCH) {
			begin(r, t);
		} else if (s->cops[i].kind == HYPER_OP_DETACH) {
			if (r->open[t])
				r->v[r->open[t] - 1].end = r->now;
			r->open[t] = 0;
		}
	}
}

/* The most bytes resident at once, sizes as they are (not rounded). */
static uint64_t res_peak(const struct res *r)
{
	struct hu_ival *v = hp_calloc(r->mem, r->n, sizeof(*v));
	uint64_t peak;

	if (!v)
		return 0;
	for (uint32_t i = 0; i < r->n; i++)
		v[i] = (struct hu_ival){ r->v[i].start, r->v[i].end,
					 r->g->t[r->tensor[i]].bytes, 0 };
	peak = hu_arena_live_peak(v, r->n);
	free(v);
	return peak;
}

int sched_layout(struct sched *s, uint64_t limit, struct hp_mem *mem,
		 struct hp_err *e)
{
	const struct graph *g = s->g;
	struct res r = { .g = g, .mem = mem };
	uint64_t height;
	int ret;

	free(s->res_off);
	free(s->res_first);
	s->res_off = NULL;
	s->res_first = NULL;
	s->arena = s->arena_over = s->res_peak = 0;
	ret = -ENOMEM;
	r.open = hp_calloc(mem, g->nt, sizeof(*r.open));
	r.count = hp_calloc(mem, g->nt, sizeof(*r.count));
	if (!r.open || !r.count)
		goto nomem;
	for (uint32_t t = 0; t < g->nt; t++)
		if (s->home[t] == HYPER_HOME_DEVICE)
			begin(&r, t);
	r.now++;
	for (uint32_t k = 0; k < s->n; k++) {
		const struct op *o = &g->op[s->order[k]];
		const uint32_t *out = op_out(g, o);

		slot(&r, s, 2 * (size_t)k);
		for (uint32_t j = 0; j < o->n_out; j++, r.now++)
			begin(&r, out[j]);
		slot(&r, s, 2 * (size_t)k + 1);
	}
	if (mem->failed)
		goto nomem;
	s->res_peak = res_peak(&r);
	if (mem->failed)
		goto nomem;
	ret = hu_arena_place(r.v, r.n, HU_ARENA_EFFORT, &height);
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
	s->res_first = hp_calloc(mem, (size_t)g->nt + 1, sizeof(*s->res_first));
	s->res_off = hp_calloc(mem, r.n, sizeof(*s->res_off));
	if (!s->res_first || !s->res_off) {
		ret = -ENOMEM;
		goto nomem;
	}
	for (uint32_t t = 0; t < g->nt; t++)
		s->res_first[t + 1] = s->res_first[t] + r.count[t];
	for (uint32_t i = 0; i < r.n; i++)
		s->res_off[s->res_first[r.tensor[i]] + r.nth[i]] = r.v[i].off;
	goto out;
nomem:
	/* no layout: as if none had been asked for */
	free(s->res_off);
	free(s->res_first);
	s->res_off = NULL;
	s->res_first = NULL;
	s->arena = s->arena_over = s->res_peak = 0;
	mem->failed = true;
	hp_errf(e, "out of memory laying out the device arena");
	ret = -ENOMEM;
out:
	free(r.v);
	free(r.tensor);
	free(r.nth);
	free(r.open);
	free(r.count);
	return ret;
}
