// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Taking one gap off the device: its prefetch, the store of its value if
 * the device holds the only copy, and the issue points of both.
 *
 * A value the tensor held when the graph started (a weight, optimizer
 * state) can get its pool copy two ways: stored from the device after the
 * start (its home is the device), or by starting in the pool and being
 * prefetched before its first use (its home is the pool).  The second
 * costs pool→device time before that first use instead of device→pool
 * time, and keeps the tensor off the device until then as well, so it is
 * taken whenever the link has the time for it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "passes/gallop.h"
#include "passes/plan.h"

struct step_key {
	const double *t0;
	double t;
};

/* Whether step i + 1 starts after t: step i is the last at or before it. */
static bool step_past(const void *arg, uint32_t i)
{
	const struct step_key *k = arg;

	return k->t0[i + 1] > k->t;
}

/*
 * The last step that starts no later than @t, searched out from step
 * @hint: a transfer ends at its deadline's step and spans few steps.  The
 * starts only grow (compute times are unsigned), as gallop_first() needs.
 */
static uint32_t step_at(const struct plan_ctx *pc, double t, uint32_t hint)
{
	const struct step_key k = { pc->lf->t0, t };

	return gallop_first(0, pc->lf->n, pc->scratch ? NONE : hint,
			    step_past, &k);
}

enum value { CLEAN, STORED, NEW_STORE, POOL_HOME };

struct choice {
	enum value how;
	uint32_t first, last;	/* steps of a new store's run */
	double h2d, d2h;	/* transfer costs */
};

/*
 * Out of memory drops it and marks pc->mem failed: hyper_plan__plan_select()
 * says so.  Inline, and hyper_plan__grow() with it, which calls out only
 * when the array is full: every take records one (214 k at
 * DeepSeek-V2-Lite training), and the calls were most of the cost.
 */
static inline void record(struct plan_ctx *pc, const struct evict *v)
{
	if (hyper_plan__grow(pc->mem, &pc->ev, &pc->cap_ev, pc->nev,
			     sizeof(*pc->ev)))
		return;
	pc->ev[pc->nev++] = *v;
}

/*
 * Reserves the prefetch of a gap due at step j in [lo, j - 1]; returns the
 * step it is counted from: when it is due minus its transfer, the time a
 * queue served in deadline order starts it (see issue_in_deadline_order).
 * A start gap's take reads it: the tensor is off the device until then.
 */
static uint32_t reserve_fetch(struct plan_ctx *pc, uint32_t lo, uint32_t j,
			      double cost)
{
	uint32_t at;

	hyper_plan__cal_take_latest(&pc->h2d, lo, j - 1, cost);
	at = step_at(pc, pc->lf->t0[j] - cost / pc->scale, j);
	return at > lo ? at : lo;
}

/* How does the value held in gap c get a pool copy before step k? */
static int value_check(struct plan_ctx *pc, const struct cand *c,
		       uint32_t k, struct choice *ch)
{
	const struct epoch_store *es = &pc->ep[c->epoch];
	uint32_t fg = pc->first_gap[c->t];

	ch->how = CLEAN;
	if (c->a < 0 || es->clean)
		return TAKEN;
	ch->how = STORED;
	if (es->last >= 0 && es->issue <= 2 * c->a + 1)
		return es->last < (int32_t)k ? TAKEN : NEVER;
	ch->how = POOL_HOME;
	if (c->w < 0 && fg != NONE && pc->alive[fg] &&
	    hyper_plan__cal_avail(&pc->h2d, 0, pc->c[fg].j - 1) >= ch->h2d)
		return TAKEN;
	ch->how = NEW_STORE;
	if (pc->scale >= ANY_WAIT) {
		/* stored right away; the step that needs the room waits */
		ch->first = ch->last = c->a + 1;
		return TAKEN;
	}
	if (!k || (uint32_t)(c->w + 1) > k - 1 ||
	    hyper_plan__cal_find_run(&pc->d2h, c->w + 1, k - 1, ch->d2h,
			 &ch->first, &ch->last))
		return NEVER;
	return TAKEN;
}

/* The start gap of tensor t, taken now on behalf of a later gap. */
static void take_first_gap(struct plan_ctx *pc, uint32_t t, double cost)
{
	uint32_t fg = pc->first_gap[t], j = pc->c[fg].j;
	uint32_t at = reserve_fetch(pc, 0, j, cost);

	pc->alive[fg] = 0;
	if (at > 0)		/* off the device on steps not reached yet */
		plan_delta_add(pc, at - 1, pc->lf->g->t[t].bytes);
	record(pc, &(struct evict){ t, -1, j, -1, -1, at });
}

static int32_t new_store(struct plan_ctx *pc, const struct cand *c,
			 const struct choice *ch)
{
	struct epoch_store *es = &pc->ep[c->epoch];

	plan_ep_touch(pc, c->epoch);
	if (pc->scale < ANY_WAIT)
		hyper_plan__cal_take_run(&pc->d2h, ch->first, ch->last, ch->d2h);
	es->last = ch->last - (pc->scale >= ANY_WAIT);
	es->issue = ch->first ? 2 * ch->first - 1 : 0;
	if (es->issue > 2 * c->a + 1)
		es->issue = 2 * c->a + 1;
	return es->issue;
}

/*
 * The pool→device time offered in steps k + 1 .. j - 1 (j > k + 1):
 * hyper_plan__cal_avail(), its first half kept.  The sweep holds the
 * time before step k + 1 for its reaches (pc->before, passes/plan.c:
 * looked up as each step starts, and again after a take that took time
 * before k + 1, the only takes that move it), the same sum the same way.
 */
static double fetch_room(const struct plan_ctx *pc, uint32_t k, uint32_t j)
{
	if (pc->scratch)
		return hyper_plan__cal_avail(&pc->h2d, k + 1, j - 1);
	return hyper_plan__cal_before(&pc->h2d, j) - pc->before;
}

int hyper_plan__try_take(struct plan_ctx *pc, uint32_t i, uint32_t k, int32_t *s0)
{
	const struct cand *c = &pc->c[i];
	uint32_t n = pc->lf->n, fetch = n;
	double b = pc->lf->g->t[c->t].bytes;
	struct epoch_store *es = &pc->ep[c->epoch];
	struct choice ch = { .h2d = h2d_ns(pc->p, b), .d2h = d2h_ns(pc->p, b) };
	int32_t store = -1;
	int r;

	/* a last resort may even fetch it where it is used, and wait */
	if (c->j < (int32_t)n && pc->scale < ANY_WAIT &&
	    (c->j < (int32_t)k + 2 || fetch_room(pc, k, c->j) < ch.h2d))
		return RETRY;
	r = value_check(pc, c, k, &ch);
	if (r != TAKEN)
		return r;
	if (ch.how == POOL_HOME) {
		take_first_gap(pc, c->t, ch.h2d);
		plan_ep_touch(pc, c->epoch);
		es->clean = true;
	} else if (ch.how == NEW_STORE) {
		store = new_store(pc, c, &ch);
	}
	/*
	 * Only the start gap's take reads the step its prefetch is counted
	 * from (take_first_gap()): every other eviction's issue step is
	 * hyper_plan__issue_in_deadline_order()'s, and a selection that
	 * fails, or is made only for its saturated steps, is not issued.
	 * Its due step stands in (a step the issue may give it), where the
	 * search for the step cost a fifth of the calendar walk before it
	 * (12 M instructions at DeepSeek-V2-Lite training).
	 */
	if (c->j < (int32_t)n) {
		hyper_plan__cal_take_latest(&pc->h2d, k + 1, c->j - 1, ch.h2d);
		fetch = c->j;
	}
	*s0 = c->a + 1;
	if (c->a >= 0 && !es->clean && es->last + 1 > *s0)
		*s0 = es->last + 1;
	record(pc, &(struct evict){ c->t, c->a, c->j, store,
				    c->a >= 0 ? 2 * c->a + 1 : -1, fetch });
	return TAKEN;
}

static int cmp_due(const void *pa, const void *pb)
{
	const struct evict *a = pa, *b = pb;

	return (a->j < b->j) - (a->j > b->j);
}

/*
 * The evictions by due step, latest first, those due at the same step in
 * the order they were taken: what a stable sort by cmp_due() gives (glibc's
 * qsort() is a merge sort here), as a counting sort, O(n + nev).
 */
static int sort_due(struct plan_ctx *pc)
{
	uint32_t n = pc->lf->n, *off = pc->due_off, j, sum = 0, c;
	struct evict *out;
	size_t i;

	if (pc->scratch) {
		qsort(pc->ev, pc->nev, sizeof(*pc->ev), cmp_due);
		return 0;
	}
	if (pc->cap_sorted < pc->nev) {	/* as large as ev */
		free(pc->ev_sorted);
		pc->cap_sorted = 0;
		pc->ev_sorted = hyper_plan__array(pc->mem, pc->cap_ev,
						  sizeof(*pc->ev_sorted));
		if (!pc->ev_sorted)
			return -ENOMEM;
		pc->cap_sorted = pc->cap_ev;
	}
	memset(off, 0, ((size_t)n + 2) * sizeof(*off));
	for (i = 0; i < pc->nev; i++)
		off[n - pc->ev[i].j]++;	/* j in [0, n]: latest first */
	for (j = 0; j <= n; j++) {
		c = off[j];
		off[j] = sum;
		sum += c;
	}
	out = pc->ev_sorted;
	for (i = 0; i < pc->nev; i++)
		out[off[n - pc->ev[i].j]++] = pc->ev[i];
	pc->ev_sorted = pc->ev;		/* swapped, with their capacities */
	pc->ev = out;
	i = pc->cap_sorted;
	pc->cap_sorted = pc->cap_ev;
	pc->cap_ev = i;
	return 0;
}

/*
 * Prefetches are issued in deadline order, each as late as the queue
 * allows: packed backwards from the last deadline, one starts when the
 * next one due must start, or by its own deadline if that is earlier.
 * No later-issued prefetch is then due before an earlier one, so the
 * queue serves them as a preemptive schedule would, and the link time
 * the sweep reserved suffices.  None is issued before its tensor is free
 * to leave (the step after the gap starts).
 */
int hyper_plan__issue_in_deadline_order(struct plan_ctx *pc)
{
	const struct life *lf = pc->lf;
	double next = 1e300, end, start;
	size_t i;

	if (pc->nev && sort_due(pc))
		return -ENOMEM;
	for (i = 0; i < pc->nev; i++) {
		struct evict *v = &pc->ev[i];

		if (v->j >= (int32_t)lf->n)
			continue;
		end = lf->t0[v->j] < next ? lf->t0[v->j] : next;
		start = end - h2d_ns(pc->p, lf->g->t[v->t].bytes) / pc->scale;
		next = start;
		v->fetch_step = step_at(pc, start > 0 ? start : 0, v->j);
		if (v->fetch_step < v->a + 1)
			v->fetch_step = v->a + 1;
		if (v->fetch_step > v->j)
			v->fetch_step = v->j;
	}
	return 0;
}
