// SPDX-License-Identifier: GPL-2.0
/*
 * Selection, placement and cache-operator choice in one backward sweep.
 *
 * Walking the steps from last to first, step k's residency is its
 * no-offload residency minus the gaps already chosen that leave the
 * tensor off the device at k.  Every gap spanning k ends later, so it was
 * seen already, and a gap chosen now only removes bytes from steps before
 * the prefetch it gets: steps already walked never grow.  When step k is
 * over budget, gaps spanning it are taken until it fits:
 *
 *  - gaps that need no prefetch (the tensor is not read again) first;
 *  - then the gap that started earliest: each prefetch costs link time
 *    in proportion to its bytes, and the earlier its gap started, the more
 *    of the steps still to come (those before k) its absence covers.  In
 *    a dense decode every gap is one token long and this is the
 *    just-in-time choice (soonest next use); in a mixture of experts it
 *    takes the experts idle for the most tokens first;
 *  - a gap is taken only if its prefetch fits on the pool→device link
 *    after step k and before its use, and, when the device holds the only
 *    copy of the value, its store fits on the device→pool link between
 *    the write and k.  One store serves every gap of the same value.
 *
 * Each link is a queue: a transfer issued first is served first.
 * Prefetches take link time as late as their deadline allows, anywhere it
 * is left (a preemptive schedule); issuing them in deadline order then
 * makes the queue serve them in time, since no later-issued transfer
 * would have preempted an earlier one (plan_take.c).  Stores cannot move
 * earlier than their write, so each takes a run of consecutive steps that
 * no other store crosses, as early as possible (calendar.c).
 *
 * A gap whose prefetch does not fit yet may fit further back, where its
 * window is longer, so it is only set aside for this step; one whose
 * store does not fit never will.  Candidates sit in buckets by next use,
 * each sorted by start, and a range-minimum tree over the buckets finds
 * the earliest start among those used late enough for a prefetch to fit:
 * the many that cannot are never walked.
 */
#include <string.h>

#include "plan.h"

/* Candidates tried (and set aside) for one step before it is given up. */
#define MAX_TRIES	65536

static void add_cand(struct plan_ctx *pc, const struct cand *c)
{
	grow(&pc->c, &pc->cap_c, pc->nc, sizeof(*pc->c));
	pc->c[pc->nc++] = *c;
}

/* Every live gap of tensor t that has at least one step inside it. */
static void tensor_cands(struct plan_ctx *pc, uint32_t t)
{
	const struct life *lf = pc->lf;
	size_t i, cnt = nr_accesses(lf, t), base = lf->acc_off[t];
	int32_t w = -1;
	int64_t a, j;
	uint32_t writes = 0, ep = pc->nep;
	double bytes = lf->g->t[t].bytes, fetch = h2d_ns(pc->p, bytes);
	/*
	 * A tensor whose transfers are mostly latency frees less than the
	 * link time it costs, and its stores would split the link into runs
	 * too short for the tensors that matter: a last resort only.
	 */
	bool small = bytes / pc->p->h2d_bps * 1e9 < pc->p->latency_ns ||
		     bytes / pc->p->d2h_bps * 1e9 < pc->p->latency_ns;

	for (i = 0; i <= cnt; i++) {
		if (i && (lf->acc_rw[base + i - 1] & ACC_W)) {
			w = lf->acc_step[base + i - 1];
			writes++;
		}
		gap_ends(lf, t, i, &a, &j);
		if (!gap_live(lf, t, i) || a + 1 > j - 1)
			continue;
		if (a < 0)
			pc->first_gap[t] = pc->nc;
		add_cand(pc, &(struct cand){ t, a, j, w, ep + writes, small });
		if (j < lf->n && !small && fetch < pc->min_fetch)
			pc->min_fetch = fetch;
	}
	pc->nep = ep + writes + 1;
}

static int cmp_start(const void *pa, const void *pb, void *ctx)
{
	const struct cand *c = ctx;
	const struct cand *a = &c[*(const uint32_t *)pa];
	const struct cand *b = &c[*(const uint32_t *)pb];

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return (a->t > b->t) - (a->t < b->t);
}

/* Candidates by next use (j = n: not used again), each bucket by start. */
static void index_by_use(struct plan_ctx *pc)
{
	uint32_t n = pc->lf->n, *fill = xcalloc(n + 1, sizeof(*fill));
	size_t i;

	pc->by_j = xcalloc(n + 2, sizeof(*pc->by_j));
	for (i = 0; i < pc->nc; i++)
		pc->by_j[pc->c[i].j + 1]++;
	for (i = 0; i <= n; i++)
		pc->by_j[i + 1] += pc->by_j[i];
	pc->idx = xmalloc((pc->nc ? pc->nc : 1) * sizeof(*pc->idx));
	for (i = 0; i < pc->nc; i++)
		pc->idx[pc->by_j[pc->c[i].j] + fill[pc->c[i].j]++] = i;
	for (i = 0; i <= n; i++)
		qsort_r(pc->idx + pc->by_j[i], pc->by_j[i + 1] - pc->by_j[i],
			sizeof(*pc->idx), cmp_start, pc->c);
	free(fill);
}

void plan_init(struct plan_ctx *pc, const struct life *lf,
	       const struct profile *p)
{
	const struct graph *g = lf->g;
	uint32_t t, k, n = lf->n;

	memset(pc, 0, sizeof(*pc));
	pc->lf = lf;
	pc->p = p;
	pc->min_fetch = 1e300;
	pc->first_gap = xmalloc((g->nt ? g->nt : 1) * sizeof(*pc->first_gap));
	for (t = 0; t < g->nt; t++)
		pc->first_gap[t] = NONE;
	for (t = 0; t < g->nt; t++)
		if (!(g->t[t].flags & TF_PIN))
			tensor_cands(pc, t);
	index_by_use(pc);
	pc->cap = xmalloc((n ? n : 1) * sizeof(*pc->cap));
	for (k = 0; k < n; k++)
		pc->cap[k] = g->op[lf->order[k]].compute_ns;
	cal_init(&pc->h2d, n);
	cal_init(&pc->d2h, n);
	pc->ep = xmalloc((pc->nep ? pc->nep : 1) * sizeof(*pc->ep));
	pc->delta = xmalloc((n + 1) * sizeof(*pc->delta));
	pc->alive = xmalloc(pc->nc ? pc->nc : 1);
	pc->cur = xmalloc((n + 1) * sizeof(*pc->cur));
	pc->aside_gen = xcalloc(n + 1, sizeof(*pc->aside_gen));
	pc->gen = 1;
	seg_init(&pc->seg, n ? n : 1);
}

void plan_free(struct plan_ctx *pc)
{
	free(pc->c);
	free(pc->by_j);
	free(pc->idx);
	free(pc->cur);
	free(pc->aside_gen);
	seg_free(&pc->seg);
	free(pc->aside);
	free(pc->cap);
	cal_free(&pc->h2d);
	cal_free(&pc->d2h);
	free(pc->ep);
	free(pc->delta);
	free(pc->first_gap);
	free(pc->alive);
	free(pc->ev);
	memset(pc, 0, sizeof(*pc));
}

static void reset(struct plan_ctx *pc, double scale)
{
	uint32_t n = pc->lf->n;
	size_t i;

	pc->scale = scale;
	cal_reset(&pc->h2d, pc->cap, scale);
	cal_reset(&pc->d2h, pc->cap, scale);
	for (i = 0; i < pc->nep; i++)
		pc->ep[i] = (struct epoch_store){ -1, 0, false };
	memset(pc->delta, 0, (n + 1) * sizeof(*pc->delta));
	for (i = 0; i < pc->nc; i++)	/* small ones wait for a last resort */
		pc->alive[i] = !pc->c[i].small || scale >= ANY_WAIT;
	for (i = 0; i <= n; i++)
		pc->cur[i] = pc->by_j[i];
	seg_clear(&pc->seg);
	pc->nev = 0;
}

struct fit {
	uint32_t k;
	int64_t over;
	int64_t *absent;
	uint32_t tries;
};

/* Tries candidate i for the step; true once the step fits. */
static bool offer(struct plan_ctx *pc, struct fit *f, uint32_t i)
{
	uint64_t b = pc->lf->g->t[pc->c[i].t].bytes;
	int32_t s0;
	int r;

	if (pc->c[i].small && pc->scale < ANY_WAIT)
		return false;
	r = try_take(pc, i, f->k, &s0);
	if (r == TAKEN) {
		pc->alive[i] = 0;
		*f->absent += b;
		f->over -= b;
		if (s0 > 0)
			pc->delta[s0 - 1] -= b;
	} else {
		if (r == NEVER)
			pc->alive[i] = 0;
		f->tries++;
	}
	return f->over <= 0;
}

/* Bucket j's first live candidate goes into the tree (j < n). */
static void refresh(struct plan_ctx *pc, uint32_t j)
{
	size_t *x = &pc->cur[j];

	while (*x < pc->by_j[j + 1] && !pc->alive[pc->idx[*x]])
		(*x)++;
	seg_set(&pc->seg, j, *x < pc->by_j[j + 1] ?
		(uint64_t)(pc->c[pc->idx[*x]].a + 1) << 32 | j : SEG_NONE);
}

/* The gaps to the end first: they need no prefetch, never wait. */
static bool offer_final(struct plan_ctx *pc, struct fit *f)
{
	uint32_t n = pc->lf->n;
	size_t x;

	for (x = pc->cur[n]; x < pc->by_j[n + 1] &&
	     pc->c[pc->idx[x]].a < (int32_t)f->k; x++)
		if (pc->alive[pc->idx[x]] && offer(pc, f, pc->idx[x]))
			return true;
	while (pc->cur[n] < pc->by_j[n + 1] && !pc->alive[pc->idx[pc->cur[n]]])
		pc->cur[n]++;
	return false;
}

/*
 * Bucket j's first candidate is set aside for this step.  Whether the
 * bucket is already in the list is its generation mark: O(1), where a
 * scan of the list made a step with many tries quadratic.
 */
static void set_aside(struct plan_ctx *pc, uint32_t j)
{
	if (pc->aside_gen[j] != pc->gen) {	/* remember where it was */
		pc->aside_gen[j] = pc->gen;
		grow(&pc->aside, &pc->cap_aside, pc->naside,
		     sizeof(*pc->aside));
		pc->aside[pc->naside++] = (uint64_t)j << 32 | pc->cur[j];
	}
	pc->cur[j]++;
	refresh(pc, j);
}

static void restore_aside(struct plan_ctx *pc)
{
	size_t x;

	for (x = 0; x < pc->naside; x++) {
		uint32_t j = pc->aside[x] >> 32;

		pc->cur[j] = (uint32_t)pc->aside[x];
		refresh(pc, j);
	}
	pc->naside = 0;
	if (!++pc->gen) {		/* wrapped: no mark may match by chance */
		memset(pc->aside_gen, 0, (pc->lf->n + 1) * sizeof(*pc->aside_gen));
		pc->gen = 1;
	}
}

/* The first use late enough for the cheapest prefetch to fit. */
static uint32_t first_use(struct plan_ctx *pc, uint32_t k)
{
	if (pc->scale >= ANY_WAIT)
		return k + 1;
	return cal_reach(&pc->h2d, k + 1, pc->min_fetch) + 1;
}

/* Takes gaps spanning step k until it fits; false if it cannot. */
static bool fit_step(struct plan_ctx *pc, uint32_t k, uint64_t budget,
		     int64_t *absent)
{
	struct fit f = { k, (int64_t)pc->lf->base[k] - *absent -
			    (int64_t)budget, absent, 0 };
	uint32_t n = pc->lf->n, lo = first_use(pc, k), j, i;
	bool fits = f.over <= 0 || offer_final(pc, &f);
	uint64_t key;

	while (!fits && lo < n && f.tries < MAX_TRIES &&
	       (key = seg_min(&pc->seg, lo, n - 1)) != SEG_NONE) {
		j = (uint32_t)key;
		i = pc->idx[pc->cur[j]];
		if (pc->c[i].a >= (int32_t)k)
			pc->alive[i] = 0;	/* spans nothing left to walk */
		else
			fits = offer(pc, &f, i);
		if (pc->alive[i])
			set_aside(pc, j);	/* may fit further back */
		else
			refresh(pc, j);
	}
	restore_aside(pc);
	return fits;
}

double plan_saturated_ns(const struct plan_ctx *pc)
{
	double t = 0;
	uint32_t k;

	for (k = 0; k < pc->lf->n; k++)
		if (pc->h2d.cap[k] <= 0.01 * pc->cap[k] * pc->scale)
			t += pc->cap[k];
	return t;
}

int plan_select(struct plan_ctx *pc, uint64_t budget, double scale,
		uint32_t *fail_step)
{
	int64_t absent = 0;
	uint32_t k;

	reset(pc, scale);
	for (k = pc->lf->n; k-- > 0;) {
		if (k + 1 < pc->lf->n)	/* gaps read at k + 1 span k */
			refresh(pc, k + 1);
		absent += pc->delta[k];
		if (!fit_step(pc, k, budget, &absent)) {
			*fail_step = k;
			return -1;
		}
	}
	issue_in_deadline_order(pc);
	return 0;
}
