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
#include <stdlib.h>
#include <string.h>

#include <hyper/graph_id.h>
#include <hyper/hyper.h>

#include "passes/sched.h"
#include "util/arena.h"
#include "util/residency.h"

/*
 * The most bytes resident at once, sizes as they are (not rounded), in
 * *@peak.  The residencies begin and end on the builder's clock, one
 * tick per cache operator and output (residencies()), so their bytes go
 * in and out per tick and a running sum finds the peak, with no sort of
 * the events: within a tick the ends come before the starts (a
 * residency is [start, end)), so the most live in it is what is live
 * after it, and a residency of no time is never live (as
 * hu_arena_live_peak() has it).  A tick's change may be negative: kept
 * modulo 2^64, the running sum is exact after each tick.  Return: 0, or
 * -ENOMEM.
 */
static int res_peak(const struct graph *g, const struct hu_resid *v,
		    uint32_t n, uint64_t *peak, struct hp_mem *mem)
{
	uint64_t last = 0, live = 0, *d;

	*peak = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (v[i].start > last)
			last = v[i].start;
		if (v[i].end != UINT64_MAX && v[i].end > last)
			last = v[i].end;
	}
	d = hyper_plan__calloc(mem, last + 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t bytes = g->t[v[i].tensor].bytes;

		if (v[i].end <= v[i].start)
			continue;
		d[v[i].start] += bytes;
		if (v[i].end != UINT64_MAX)	/* else live to the end */
			d[v[i].end] -= bytes;
	}
	for (uint64_t t = 0; t <= last; t++) {
		live += d[t];
		if (live > *peak)
			*peak = live;
	}
	hyper_plan__free(mem, d);
	return 0;
}

/* The residencies of @s, by the builder libhyper's layout uses too. */
static int residencies(const struct sched *s, struct hu_resid **vp,
		       uint32_t *np, struct hp_mem *mem)
{
	const struct graph *g = s->g;
	size_t most = 0;
	struct hu_res r;

	if (hu_res_init(&r, (uint32_t)g->nt, HYPER_ARENA_ALIGN,
			hyper_plan__mem_realloc, mem)) {
		hu_res_free(&r);
		return -ENOMEM;
	}
	/*
	 * Room for every residency from the start, which the builder then
	 * fills (it grows its array only when full).  Each residency
	 * begins at a device home, an output or a prefetch, so their count
	 * bounds theirs.  Grown by doubling instead, the array went through
	 * some twenty sizes, each copied or fresh from the kernel, to end at
	 * up to twice its need (84 MB for 53 at 1M decode operators).
	 */
	for (uint32_t t = 0; t < g->nt; t++)
		most += s->home[t] == HYPER_HOME_DEVICE;
	for (uint32_t k = 0; k < s->n; k++)
		most += g->op[s->order[k]].n_out;
	for (size_t i = 0; i < s->ncops; i++)
		most += s->cops[i].kind == HYPER_OP_PREFETCH;
	if (most > UINT32_MAX / 2)
		most = UINT32_MAX / 2;	/* the builder's own limit */
	if (hu_res_reserve(&r, (uint32_t)most)) {
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

/* A layout kept: the residencies it placed and their offsets. */
struct hp_layent {
	uint64_t hash, limit, height;
	uint32_t n;
	struct hu_ival v[];
};

/* The most bytes of residencies kept, all layouts together. */
#define LAY_MAX		(64u << 20)

static size_t lay_size(uint32_t n)
{
	return sizeof(struct hp_layent) + (size_t)n * sizeof(struct hu_ival);
}

static uint64_t lay_hash(const struct hu_ival *h, uint32_t n)
{
	uint64_t x = hyper_fnv1a(HYPER_FNV_OFFSET, &n, sizeof(n));

	for (uint32_t i = 0; i < n; i++) {
		x = hyper_fnv1a(x, &h[i].start, sizeof(h[i].start));
		x = hyper_fnv1a(x, &h[i].end, sizeof(h[i].end));
		x = hyper_fnv1a(x, &h[i].bytes, sizeof(h[i].bytes));
	}
	return x;
}

static bool lay_same(const struct hp_layent *le, const struct hu_ival *h,
		     uint32_t n, uint64_t hash, uint64_t limit)
{
	if (le->hash != hash || le->n != n || le->limit != limit)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (le->v[i].start != h[i].start || le->v[i].end != h[i].end ||
		    le->v[i].bytes != h[i].bytes)
			return false;
	return true;
}

/*
 * @h's offsets and height from a layout kept of the same residencies
 * under the same limit (where the placer stops trying depends on it).
 */
static bool lay_find(struct hp_laycache *lc, struct hu_ival *h, uint32_t n,
		     uint64_t hash, uint64_t limit, uint64_t *height)
{
	for (unsigned int k = 0; k < HP_LAYCACHE_N; k++) {
		const struct hp_layent *le = lc->ent[k];

		if (!le || !lay_same(le, h, n, hash, limit))
			continue;
		for (uint32_t i = 0; i < n; i++)
			h[i].off = le->v[i].off;
		*height = le->height;
		return true;
	}
	return false;
}

/*
 * Keeps @h's layout in place of the oldest, and drops the oldest of the
 * others until all fit in LAY_MAX.  0, or -ENOMEM.
 */
static int lay_keep(struct hp_laycache *lc, const struct hu_ival *h,
		    uint32_t n, uint64_t hash, uint64_t limit, uint64_t height,
		    struct hp_mem *mem)
{
	struct hp_layent *le, *gone[HP_LAYCACHE_N] = { NULL };
	unsigned int k, ngone = 0;

	le = hyper_plan__malloc(mem, lay_size(n));
	if (!le)
		return -ENOMEM;
	*le = (struct hp_layent){ hash, limit, height, n };
	memcpy(le->v, h, (size_t)n * sizeof(*h));
	k = lc->next;
	lc->next = (k + 1) % HP_LAYCACHE_N;
	/* the oldest's slot, which @h's takes, then the next oldest */
	for (unsigned int i = 0; i < HP_LAYCACHE_N;
	     i++, k = (k + 1) % HP_LAYCACHE_N) {
		if (!lc->ent[k] || (i && lc->bytes + lay_size(n) <= LAY_MAX))
			continue;
		lc->bytes -= lay_size(lc->ent[k]->n);
		gone[ngone++] = lc->ent[k];
		lc->ent[k] = NULL;
	}
	lc->ent[(lc->next + HP_LAYCACHE_N - 1) % HP_LAYCACHE_N] = le;
	lc->bytes += lay_size(n);
	for (k = 0; k < ngone; k++)
		free(gone[k]);
	return 0;
}

void hyper_plan__laycache_free(struct hp_laycache *lc)
{
	for (unsigned int k = 0; k < HP_LAYCACHE_N; k++) {
		free(lc->ent[k]);
		lc->ent[k] = NULL;
	}
	lc->next = 0;
	lc->bytes = 0;
}

void hyper_plan__sched_layout_drop(struct sched *s)
{
	free(s->res_off);
	free(s->res_first);
	s->res_off = NULL;
	s->res_first = NULL;
	s->arena = s->arena_over = s->res_peak = 0;
}

int hyper_plan__sched_layout_nomem(struct sched *s, struct hp_mem *mem,
				   struct hp_err *e)
{
	/* no layout: as if none had been asked for */
	hyper_plan__sched_layout_drop(s);
	mem->failed = true;
	hyper_plan__errf(e, "out of memory laying out the device arena");
	return -ENOMEM;
}

int hyper_plan__sched_layout(struct sched *s, uint64_t limit, struct hp_mem *mem,
		 struct hp_err *e)
{
	return hyper_plan__sched_layout_cached(s, limit, NULL, mem, e);
}

/*
 * The layout, with @first_only by one online placement in start order
 * (HU_ARENA_ONLINE) in place of the greedy ones and their search.
 */
static int layout(struct sched *s, uint64_t limit, struct hp_laycache *lc,
		  bool first_only, struct hp_mem *mem, struct hp_err *e)
{
	const struct graph *g = s->g;
	struct hu_resid *v = NULL;
	struct hu_ival *h = NULL;
	uint32_t *first = NULL, *slot = NULL;
	uint64_t height, hash = 0;
	uint32_t n;
	int ret = 0;

	hyper_plan__sched_layout_drop(s);
	if (residencies(s, &v, &n, mem))
		goto nomem;
	/*
	 * The residencies' array was the last big block the search's
	 * scratch could serve: the placement, the run's highest point in
	 * memory, allocates apart from @mem (util/arena.c), and what @mem
	 * kept would only add to it.
	 */
	hyper_plan__mem_release(mem);
	if (res_peak(g, v, n, &s->res_peak, mem))
		goto nomem;
	h = hyper_plan__array(mem, n, sizeof(*h));
	first = hyper_plan__calloc(mem, (size_t)g->nt + 1, sizeof(*first));
	slot = hyper_plan__array(mem, n, sizeof(*slot));
	if (!h || !first || !slot)
		goto nomem;
	for (uint32_t i = 0; i < n; i++) {
		h[i] = (struct hu_ival){ v[i].start, v[i].end, v[i].bytes, 0 };
		first[v[i].tensor + 1]++;
	}
	for (uint32_t t = 0; t < g->nt; t++)
		first[t + 1] += first[t];
	for (uint32_t i = 0; i < n; i++)
		slot[i] = first[v[i].tensor] + v[i].nth;
	/*
	 * The builder's array (40 bytes a residency, reserved at their
	 * bound) is not needed past here: freed before the placement,
	 * the run's highest point in memory, which it would otherwise add
	 * to (79 MB at 1M decode operators).  Each residency's slot in
	 * res_off (4 bytes) is what is left of it.
	 */
	free(v);
	v = NULL;
	/* a budget's layouts only: without one, each plan is laid out once */
	if (!limit || lay_size(n) > LAY_MAX)
		lc = NULL;
	if (lc)
		hash = lay_hash(h, n);
	if (!lc || !lay_find(lc, h, n, hash, limit, &height)) {
		ret = first_only ? hu_arena_place_way(h, n, 0, limit,
						      HU_ARENA_ONLINE, &height) :
		      hu_arena_place(h, n, HU_ARENA_EFFORT, limit, &height);
		if (ret || (lc && lay_keep(lc, h, n, hash, limit, height,
					   mem)))
			goto nomem;
	}
	if (!height)
		goto out;	/* nothing is ever resident: nothing to place */
	if (limit && height > limit) {
		/* Never hand out a layout beyond the budget the user asked for. */
		s->arena_over = height;
		goto out;
	}
	s->arena = height;
	s->res_off = hyper_plan__calloc(mem, n, sizeof(*s->res_off));
	if (!s->res_off)
		goto nomem;
	s->res_first = first;
	first = NULL;
	for (uint32_t i = 0; i < n; i++)
		s->res_off[slot[i]] = h[i].off;
	ret = 0;
	goto out;
nomem:
	ret = hyper_plan__sched_layout_nomem(s, mem, e);
out:
	hyper_plan__free(mem, slot);
	free(first);
	hyper_plan__free(mem, h);
	free(v);
	return ret;
}

int hyper_plan__sched_layout_cached(struct sched *s, uint64_t limit,
				    struct hp_laycache *lc, struct hp_mem *mem,
				    struct hp_err *e)
{
	return layout(s, limit, lc, false, mem, e);
}

int hyper_plan__sched_layout_first(struct sched *s, struct hp_mem *mem,
				   struct hp_err *e)
{
	return layout(s, 0, NULL, true, mem, e);
}
