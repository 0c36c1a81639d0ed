// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Residency is counted in step order with the rules of <hyper/residency.h>,
 * as libhyper's validator does; the simulator then adds the time a
 * detached tensor waits for its store.
 * Eviction candidates are listed by next use, the furthest first and,
 * for the same use, the lowest tensor.  A tensor whose next use moved
 * waits in a list, once however often it moved, until an eviction needs
 * the candidates: a step that fits lists nothing.  Each tensor is listed
 * once, under the use it had when last listed; once the waiting ones
 * are listed, every resident tensor is, under its current next use.
 *
 * The lists hang off an array by use, and a 64-ary tree of bits says
 * which uses have one, so the furthest is a few word reads away and a
 * tensor moves from one use to another in O(1).  Most walks list a
 * tensor many times for each eviction (at 100k decode operators, 1.1M
 * times for 22k evictions): the binary heap this replaces took a push of
 * log(entries) for each, and kept the stale ones.  gc->scratch still
 * walks with that heap, keyed by (-next use, tensor) and refreshed
 * lazily (an entry whose tensor moved on is skipped when it surfaces):
 * both give the same evictions (plan_greedy's walks_kept_match_scratch).
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include <hyper/residency.h>

#include "lib/heap.h"
#include "policies/policy.h"
#include "sim/sim.h"
#include "util/huge.h"
#include "util/sort.h"

struct want {
	uint32_t step, t;
};

/* A fetch of this step: the step that reads it, its link time. */
struct due {
	uint32_t step;
	double ns;
};

static bool due_before(const struct due *a, const struct due *b)
{
	return a->step < b->step;
}

HU_DEFINE_SORT(sort_due, struct due, due_before)

/*
 * The evictions still to be fetched (owed), by the step that reads them:
 * a node of the walk's tree (q->ow, a heap's layout, a leaf per step)
 * over a range of steps, empty (-inf) where it has none.  Within the
 * range, Q(j) is the time of the owed fetches read at its steps to j,
 * a(j) = t0[j - lookahead] (0 below: no fetch starts sooner) and b(j) =
 * -t0[j]; over the owed steps h <= i of the range, @ma is the largest
 * a(h) - Q(h - 1), @mb the largest Q(i) + b(i), @best the largest sum of
 * both.  A node is its two halves' (owe_join()), so an eviction or a
 * fetch rewrites one path and the root holds the whole walk's.
 */
struct owe {
	double s, ma, mb, best;	/* @s: Q at the range's end */
	uint32_t cnt;		/* a leaf's: owed evictions read at its step */
};

/* Levels of the uses' bit tree: 64^6 > 2^32 uses. */
#define VLEVELS		6

/* q->quiet_add of a step that reads a tensor not resident: never waits. */
#define QUIET_NO	UINT64_MAX

/* The most evictions a walk makes and still lets steps wait: quiet(). */
#define QUIET_NEV	64

/* A tensor's place among the candidates. */
struct vlink {
	uint32_t prev, next;	/* in its use's list, NONE at the ends */
	uint32_t use;		/* the use it is listed under; NONE: none */
};

struct greedy {
	struct greedy_ctx *gc;
	const struct life *lf;
	const struct graph *g;
	uint64_t budget, mem;
	uint8_t *st;		/* residency state, <hyper/residency.h> */
	size_t *cur;		/* next access of each tensor */
	uint32_t *open;		/* its evict record awaiting a prefetch */
	uint32_t *stamp;	/* k + 1: in step k's working set, or fetched in k */
	/* the candidates by next use, furthest first: vlast(), vfirst() */
	uint32_t *vhead;	/* [n + 1]: a use's first, if its bit is set */
	struct vlink *vl;	/* [nt] */
	uint64_t *vbits;	/* level l at vbits + voff[l]; one word on top */
	size_t voff[VLEVELS];
	uint32_t nlev;
	struct heap victims;	/* gc->scratch: (-next use, t) */
	uint32_t *pend;		/* tensors whose next use moved, not in victims yet */
	size_t npend;
	uint8_t *pending;	/* in pend, or pinned (never in pend) */
	struct want *win;	/* gc->scratch: reads within the lookahead */
	size_t whead, wtail, wcap;
	uint32_t ws, wi;	/* else the next want: step, gc->step_t index */
	uint32_t *aside;	/* candidates passed over by make_room() */
	size_t naside, cap_aside;
	uint32_t *ts;		/* the step's tensors: run_step() */
	size_t cap_ts;
	/* gc->p: the simulator's clocks from below, clock_step() */
	struct due *due;	/* this step's fetches */
	size_t ndue, cap_due;
	double *ready;		/* step j at ready[j & mask]: inputs in */
	uint32_t mask;		/* 2^x - 1, 2^x above the lookahead */
	size_t cap_ready;
	uint32_t due_end;	/* past the last step a fetch is read at */
	double link, clock;	/* link free, this step's start */
	/* hyper_plan__sim_beyond()'s bound for this walk's goal: beyond() */
	double lim;
	bool timed;
	/* evictions not fetched back: how many still to be read, bytes */
	uint32_t owed;
	uint64_t away;
	/* no eviction still owed is read before this step: lookahead_rows() */
	uint32_t owe_min;
	/*
	 * The start's candidates in the order make_room() takes them, the
	 * furthest use first, then the lowest tensor: (n - use) << 32 | t,
	 * sorted, built by the first start that evicts (start()).
	 */
	uint64_t *ord;
	/* steps whose run_step() began: their tensors are the ones touched */
	uint32_t walked;
	/*
	 * Where the arrays stand (prefix_take()): 0, the start's, or gc->pre
	 * as listed at step @base (its flush_victims()) but for the tensors
	 * of the steps from @base to @walked and of gc->ev[0 .. @nev_prev),
	 * the evictions of the last walk on them.
	 */
	uint32_t base;
	size_t nev_prev;
	/*
	 * The lists hold something (flush_victims(), prefix_take()); false
	 * where the arrays are the start's again, and where a walk from the
	 * start evicted there alone (start()) and never made room.
	 */
	bool listed;
	size_t nwords;		/* of vbits */
	/*
	 * The owed fetches' bound (owe_beyond()): their transfer time
	 * summed, a limit below which that cannot put the run beyond the
	 * goal, and their tree (NULL: none yet; @owl leaves, a power of 2
	 * at least n), which holds every owed eviction once @warm.
	 */
	double owed_ns, owe_lim;
	struct owe *ow;
	uint64_t *owv;		/* a bit per node of ow: it holds something */
	size_t *owq, cap_owq;	/* owe_warm()'s nodes of a level */
	uint32_t owl, ahead;
	bool warm;
	/*
	 * gc->pre's (prefix_to()): the most room its steps asked, and the
	 * goal it ran for; @dead: its last step was beyond that goal.
	 */
	uint64_t most;
	const struct profile *pp;
	double pslow;
	bool dead;
	/*
	 * gc->walk's, once per search, as far as its walks ask
	 * (quiet_more()): the walk without offload's device bytes at each
	 * step's start (@quiet_mem, n + 1) and what comes in at each step
	 * (@quiet_add, n; QUIET_NO where a read comes in).
	 */
	uint64_t *quiet_mem, *quiet_add;
	uint8_t *quiet_on;	/* quiet_more()'s: a tensor on the device */
	uint64_t quiet_run;	/* the bytes at step @quiet_k's start */
	uint32_t quiet_k;	/* the tables hold the steps below it */
	/*
	 * One of gc->kept (prefix_keep()): gc->pre's residency and the
	 * accesses its steps ran, per tensor; NULL in a walk.  The rest of
	 * its arrays are none: what a walk takes from it follows from these
	 * (take_one(), take_kept()).
	 */
	uint8_t *kst;
	uint32_t *kdone;
	/* walk_alloc()'s arrays (a kept's two) in one block, quiet_more()'s */
	void *blk, *blk_quiet;
};

static uint32_t next_use(const struct greedy *q, uint32_t t)
{
	size_t i = q->cur[t];

	return i < q->lf->acc_off[t + 1] ? q->lf->acc_step[i] : q->lf->n;
}

/*
 * What @event does to @t by the shared rules, and to device memory.
 * Inlined: each caller's event is a constant, which leaves one case of
 * the rules' switch (1.4M calls at 100k decode operators).
 */
static inline __attribute__((always_inline)) void
move(struct greedy *q, uint32_t t, uint32_t event)
{
	uint8_t was = q->st[t];

	q->st[t] = hyper_residency_next(was, event);
	if ((was ^ q->st[t]) & HYPER_RES_DEVICE) {
		if (was & HYPER_RES_DEVICE)
			q->mem -= q->g->t[t].bytes;
		else
			q->mem += q->g->t[t].bytes;
	}
}

static bool resident(const struct greedy *q, uint32_t t)
{
	return q->st[t] & HYPER_RES_DEVICE;
}

/*
 * The levels' bits for use j, set or cleared up to the first that stays.
 * This and the lists' two below are inlined: a walk lists and unlists a
 * candidate 1.1M times at 100k decode operators, each a few stores.
 */
static inline __attribute__((always_inline)) void
vmark(struct greedy *q, uint32_t j, bool on)
{
	uint32_t l;

	for (l = 0; l < q->nlev; l++, j >>= 6) {
		uint64_t *w = &q->vbits[q->voff[l] + (j >> 6)];
		uint64_t bit = 1ULL << (j & 63), was = *w;

		*w = on ? was | bit : was & ~bit;
		if (on ? was != 0 : *w != 0)
			return;		/* the level above says so already */
	}
}

/* A use's first tensor is read only while its bit says it has one. */
static inline __attribute__((always_inline)) void
vlink_add(struct greedy *q, uint32_t t, uint32_t j)
{
	uint32_t h = NONE;

	if (q->vbits[j >> 6] & 1ULL << (j & 63)) {
		h = q->vhead[j];
		q->vl[h].prev = t;
	} else {
		vmark(q, j, true);
	}
	q->vl[t] = (struct vlink){ NONE, h, j };
	q->vhead[j] = t;
}

static inline __attribute__((always_inline)) void
vlink_del(struct greedy *q, uint32_t t)
{
	struct vlink *v = &q->vl[t];

	if (v->prev != NONE)
		q->vl[v->prev].next = v->next;
	else if (v->next != NONE)
		q->vhead[v->use] = v->next;
	else
		vmark(q, v->use, false);	/* it was the only one */
	if (v->next != NONE)
		q->vl[v->next].prev = v->prev;
	v->use = NONE;
}

/* The furthest use a tensor is listed under; NONE: none is. */
static uint32_t vlast(const struct greedy *q)
{
	uint32_t l = q->nlev - 1, j;
	uint64_t w = q->vbits[q->voff[l]];

	if (!w)
		return NONE;
	j = 63 - __builtin_clzll(w);
	while (l--)
		j = j * 64 + 63 - __builtin_clzll(q->vbits[q->voff[l] + j]);
	return j;
}

/* The lowest tensor listed under use j: the step's tensors, a few. */
static uint32_t vfirst(const struct greedy *q, uint32_t j)
{
	uint32_t t, best = q->vhead[j];

	for (t = q->vl[best].next; t != NONE; t = q->vl[t].next)
		if (t < best)
			best = t;
	return best;
}

/* The scratch heap's key: furthest next use first, then lowest tensor. */
static double victim_key(const struct greedy *q, uint32_t t)
{
	return -(double)next_use(q, t) + t / 33554432.0;
}

/* t's next use moved: its entry waits until flush_victims() */
static inline void push_victim(struct greedy *q, uint32_t t)
{
	if (q->pending[t])
		return;			/* waits already, or pinned: start() */
	q->pending[t] = 1;
	q->pend[q->npend++] = t;	/* at most one per tensor: sized nt */
}

/*
 * The waiting tensors still resident are listed under their next use,
 * the others no longer (the heap leaves those to surface stale).
 */
static void flush_victims(struct greedy *q)
{
	/* read once: the byte stores below could alias it otherwise */
	const bool scratch = q->gc->scratch;
	size_t x, n = q->npend;

	q->listed = true;
	for (x = 0; x < n; x++) {
		uint32_t t = q->pend[x];

		q->pending[t] = 0;
		if (scratch) {
			if (!resident(q, t))
				continue;	/* would surface stale */
			/* out of memory: q->gc->mem says so, and
			 * hyper_plan__greedy_evicts() fails */
			hyper_plan__heap_push(&q->victims, victim_key(q, t), t,
					      q->gc->mem);
			continue;
		}
		if (q->vl[t].use != NONE)
			vlink_del(q, t);
		if (resident(q, t))
			vlink_add(q, t, next_use(q, t));
	}
	q->npend = 0;
}

/*
 * The next candidate (its tensor in *@t) and its use, furthest first;
 * NONE when none is left or the next is used at @after or before, and
 * then it stays.  The tensor may have left the device since or be used
 * sooner now (the scratch heap's stale entries): make_room() checks.
 */
static uint32_t next_victim(struct greedy *q, uint32_t after, uint32_t *t)
{
	uint32_t next;

	if (q->gc->scratch) {
		struct heap_item top;

		if (!q->victims.n)
			return NONE;
		top = heap_top(&q->victims);
		*t = top.val;
		next = (uint32_t)ceil(-top.key);
		if (next <= after)
			return NONE;
		hyper_plan__heap_pop(&q->victims);
		return next;
	}
	next = vlast(q);
	if (next == NONE || next <= after)
		return NONE;
	*t = vfirst(q, next);
	vlink_del(q, *t);
	return next;
}

static double dmax(double a, double b)
{
	return a > b ? a : b;
}

/* Node @x of the tree, or NULL where its bit in q->owv says it is empty. */
static const struct owe *owe_at(const struct greedy *q, size_t x)
{
	return q->owv[x / 64] & 1ULL << (x % 64) ? &q->ow[x] : NULL;
}

/*
 * Node @x's bit set, and @x queued at q->owq[*@w] for owe_warm()'s next
 * level where it was clear (@w NULL: owe_step(), which queues nothing).
 * Returns whether it was: the node's entries are then not yet its own.
 */
static bool owe_mark(struct greedy *q, size_t x, size_t *w)
{
	uint64_t *word = &q->owv[x / 64], bit = 1ULL << (x % 64);

	if (*word & bit)
		return false;
	*word |= bit;
	if (w)
		q->owq[(*w)++] = x;
	return true;
}

/*
 * @o: the steps of @l, then those of @r.  An empty node's maxima are
 * -inf and its sum 0, so the sums below leave the other half's as they
 * are.
 */
static inline void owe_join(struct owe *o, const struct owe *l,
			    const struct owe *r)
{
	o->s = l->s + r->s;
	o->ma = dmax(l->ma, r->ma - l->s);
	o->mb = dmax(l->mb, r->mb + l->s);
	o->best = dmax(dmax(l->best, r->best), l->ma + l->s + r->mb);
}

/*
 * One more (@d 1) or one fewer (-1) owed eviction read at step @j: its
 * leaf, then each node above it from the one below and its sibling.
 */
static void owe_step(struct greedy *q, uint32_t j, double ns, int d)
{
	static const struct owe none = { 0, -INFINITY, -INFINITY, -INFINITY,
					 0 };
	const double *t0 = q->lf->t0;
	size_t x = q->owl + (size_t)j;
	struct owe *o = &q->ow[x];

	if (!owe_at(q, x))
		o->cnt = 0;
	if (d > 0)
		o->s = o->cnt++ ? o->s + ns : ns;
	else
		o->s = --o->cnt ? o->s - ns : 0;
	*o = o->cnt ? (struct owe){ o->s, t0[j > q->ahead ? j - q->ahead : 0],
				    o->s - t0[j], 0, o->cnt } : none;
	o->best = o->ma + o->mb;	/* -inf where empty */
	for (; x > 1; x /= 2) {
		const struct owe *sib = owe_at(q, x ^ 1);

		sib = sib ? sib : &none;
		owe_mark(q, x, NULL);
		if (x & 1)
			owe_join(&q->ow[x / 2], sib, &q->ow[x]);
		else
			owe_join(&q->ow[x / 2], &q->ow[x], sib);
	}
	owe_mark(q, 1, NULL);	/* the root */
}

/* An eviction read again at step @j, its fetch @ns long, is owed. */
static void owe_add(struct greedy *q, uint32_t j, double ns)
{
	q->owed_ns += ns;
	if (q->warm)
		owe_step(q, j, ns, 1);
}

/* The owed eviction read at step @j is fetched. */
static void owe_del(struct greedy *q, uint32_t j, double ns)
{
	q->owed_ns -= ns;
	if (q->warm)
		owe_step(q, j, ns, -1);
}

/*
 * The tree of the owed evictions, built the first time a walk asks for
 * it (most never do): those of gc->ev not fetched and read again.  Its
 * nodes are not cleared: a node holds what it says only while its bit
 * in q->owv is set, so a context clears a bit per node, and a walk
 * touches the paths of its evictions alone.
 *
 * Built from below, a level at a time: each leaf summed in gc->ev's
 * order as owe_step() sums it, then each node above one once, from its
 * two halves as they end up, where owe_step() joins every node on an
 * eviction's path again for each (a node's last join there is of the
 * same halves: the same doubles).  A walk that evicts thousands at its
 * start and stops at its first ask (OLMoE's lowest budgets) joins each
 * node once, not once per eviction below it.  0, or -ENOMEM.
 */
static int owe_warm(struct greedy *q)
{
	static const struct owe none = { 0, -INFINITY, -INFINITY, -INFINITY,
					 0 };
	const struct greedy_ctx *gc = q->gc;
	const double *t0 = q->lf->t0;
	size_t i, w = 0, r, x;

	if (!q->ow) {
		for (q->owl = 1; q->owl < q->lf->n; q->owl *= 2)
			;
		q->ow = hyper_plan__array(gc->mem, 2 * (size_t)q->owl,
					  sizeof(*q->ow));
		q->owv = hyper_plan__calloc(gc->mem, q->owl / 32 + 1,
					    sizeof(*q->owv));
		if (!q->ow || !q->owv)
			return -ENOMEM;	/* walk_free() frees either */
	}
	if (gc->nev > q->cap_owq &&
	    hyper_plan__grow(gc->mem, &q->owq, &q->cap_owq, gc->nev - 1,
			     sizeof(*q->owq)))
		return -ENOMEM;
	q->warm = true;
	if (gc->owe_paths) {		/* tests: eviction by eviction */
		for (i = 0; i < gc->nev; i++)
			if (gc->ev[i].fetch_step == (int32_t)q->lf->n &&
			    gc->ev[i].j < (int32_t)q->lf->n)
				owe_step(q, gc->ev[i].j,
					 h2d_ns(gc->p,
						q->g->t[gc->ev[i].t].bytes), 1);
		return 0;
	}
	for (i = 0; i < gc->nev; i++) {		/* the leaves' sums */
		const struct evict *e = &gc->ev[i];
		double ns;
		struct owe *o;

		if (e->fetch_step != (int32_t)q->lf->n ||
		    e->j >= (int32_t)q->lf->n)
			continue;
		ns = h2d_ns(gc->p, q->g->t[e->t].bytes);
		x = q->owl + (size_t)e->j;
		o = &q->ow[x];
		if (owe_mark(q, x, &w))
			o->cnt = 0;
		o->s = o->cnt++ ? o->s + ns : ns;
	}
	for (i = 0; i < w; i++) {		/* as owe_step() leaves them */
		uint32_t j = (uint32_t)(q->owq[i] - q->owl);
		struct owe *o = &q->ow[q->owq[i]];

		*o = (struct owe){ o->s, t0[j > q->ahead ? j - q->ahead : 0],
				   o->s - t0[j], 0, o->cnt };
		o->best = o->ma + o->mb;
	}
	while (w && q->owq[0] > 1) {	/* a level up, each node once */
		size_t n = w;

		for (r = 0, w = 0; r < n; r++)
			owe_mark(q, q->owq[r] / 2, &w);
		for (i = 0; i < w; i++) {
			const struct owe *l = owe_at(q, 2 * q->owq[i]);
			const struct owe *h = owe_at(q, 2 * q->owq[i] + 1);

			owe_join(&q->ow[q->owq[i]], l ? l : &none,
				 h ? h : &none);
		}
	}
	return 0;
}

/*
 * The tree empty again for the next walk: the paths of this one's.  A
 * node's bit is set only with its path to the root (owe_step(),
 * owe_warm()), so a path is cleared up to the first node found clear:
 * an earlier path cleared it and everything above it.  The start's
 * thousands of evictions share their upper nodes.
 */
static void owe_clean(struct greedy *q)
{
	size_t i, x;
	uint64_t *w, bit;

	if (!q->warm)
		return;
	for (i = 0; i < q->gc->nev; i++) {
		if (q->gc->ev[i].j >= (int32_t)q->lf->n)
			continue;
		for (x = q->owl + q->gc->ev[i].j; x; x /= 2) {
			w = &q->owv[x / 64];
			bit = 1ULL << (x % 64);
			if (!(*w & bit))
				break;
			*w &= ~bit;
		}
	}
	q->warm = false;
}

/* Evicts t before step k; k = n: the schedule starts with it in the pool. */
static void evict(struct greedy *q, uint32_t t, uint32_t k)
{
	const struct life *lf = q->lf;
	size_t i = q->cur[t];
	int32_t a = i > lf->acc_off[t] ? (int32_t)lf->acc_step[i - 1] : -1;

	if (hyper_plan__grow(q->gc->mem, &q->gc->ev, &q->gc->cap_ev, q->gc->nev,
		    sizeof(*q->gc->ev)))
		return;
	q->gc->ev[q->gc->nev] = (struct evict){
		.t = t, .a = a, .j = next_use(q, t),
		.store_slot = a >= 0 && hyper_plan__initial_value(lf, t, a) ? 0 : -1,
		.detach_slot = k < lf->n ? 2 * (int32_t)k : -1,
		.fetch_step = lf->n,
	};
	q->open[t] = q->gc->nev++;
	q->away += q->g->t[t].bytes;
	if (next_use(q, t) < lf->n) {
		q->owed++;		/* read again: fetched before that */
		if (next_use(q, t) < q->owe_min)
			q->owe_min = next_use(q, t);
		if (q->gc->p)
			owe_add(q, next_use(q, t),
				h2d_ns(q->gc->p, q->g->t[t].bytes));
	}
	/* the emitter stores a value still needed before detaching it */
	if (!(q->st[t] & HYPER_RES_POOL))
		move(q, t, HYPER_RES_STORE);
	move(q, t, HYPER_RES_DETACH);
}

/* Frees room for @need bytes, evicting only tensors used after @after. */
static bool make_room(struct greedy *q, uint64_t need, uint32_t k,
		      uint32_t after)
{
	size_t i;

	q->naside = 0;
	if (q->mem + need > q->budget)
		flush_victims(q);
	while (q->mem + need > q->budget && !q->gc->mem->failed) {
		uint32_t t, next = next_victim(q, after, &t);

		if (next == NONE)
			break;
		if (!resident(q, t) || next_use(q, t) != next)
			continue;		/* stale entry */
		if (q->stamp[t] == k + 1) {
			if (hyper_plan__grow(q->gc->mem, &q->aside, &q->cap_aside,
				    q->naside, sizeof(*q->aside)))
				break;
			q->aside[q->naside++] = t;
			continue;
		}
		evict(q, t, k);
	}
	/* the passed over, at the use they had: resident, none used since */
	for (i = 0; i < q->naside; i++)
		if (q->gc->scratch)
			hyper_plan__heap_push(&q->victims,
					      victim_key(q, q->aside[i]),
					      q->aside[i], q->gc->mem);
		else
			vlink_add(q, q->aside[i], next_use(q, q->aside[i]));
	return q->mem + need <= q->budget;
}

/* Room for @need bytes, make_room() only when short: most steps fit. */
static inline bool room(struct greedy *q, uint64_t need, uint32_t k,
			uint32_t after)
{
	return q->mem + need <= q->budget || make_room(q, need, k, after);
}

/* A tensor fetched in step k stays through k: its detach would land in
 * the same slot as its prefetch, and be ordered before it. */
static void fetch(struct greedy *q, uint32_t t, uint32_t k, uint32_t s)
{
	q->stamp[t] = k + 1;
	q->gc->ev[q->open[t]].fetch_step = k;
	if (q->gc->p) {
		double ns = h2d_ns(q->gc->p, q->g->t[t].bytes);

		if (q->ndue < q->cap_due ||
		    !hyper_plan__grow(q->gc->mem, &q->due, &q->cap_due,
				      q->ndue, sizeof(*q->due)))
			q->due[q->ndue++] = (struct due){ s, ns };
		owe_del(q, s, ns);
	}
	if (s >= q->due_end)
		q->due_end = s + 1;
	q->open[t] = NONE;
	q->away -= q->g->t[t].bytes;
	q->owed--;
	if (!q->owed)
		q->owed_ns = 0;		/* no rounding left over */
	move(q, t, HYPER_RES_PREFETCH);
	push_victim(q, t);
}

/* gc->scratch: step s's reads join the window, q->win. */
static void want_step(struct greedy *q, uint32_t s)
{
	const struct op *o = &q->g->op[q->lf->order[s]];
	const uint32_t *in = op_in(q->g, o);
	uint32_t i, n_in = o->n_in;

	if (!n_in)
		return;
	if (q->wtail + n_in > q->wcap && q->whead &&
	    q->whead >= q->wtail - q->whead) {
		/* the wants behind whead are done, half the buffer or more:
		 * the window moves down, and the buffer stays about the
		 * lookahead's size instead of growing with every read */
		memmove(q->win, q->win + q->whead,
			(q->wtail - q->whead) * sizeof(*q->win));
		q->wtail -= q->whead;
		q->whead = 0;
	}
	if (q->wtail + n_in > q->wcap &&
	    hyper_plan__grow(q->gc->mem, &q->win, &q->wcap,
			     q->wtail + n_in - 1, sizeof(*q->win)))
		return;
	for (i = 0; i < n_in; i++)
		q->win[q->wtail++] = (struct want){ s, in[i] };
}

/* gc->scratch: fetches the window's wants, in order, while there is room. */
static void lookahead(struct greedy *q, uint32_t k)
{
	while (q->whead < q->wtail) {
		struct want w = q->win[q->whead];

		if (w.step < k || resident(q, w.t) || q->open[w.t] == NONE ||
		    next_use(q, w.t) != w.step) {
			q->whead++;
			continue;
		}
		if (!room(q, q->g->t[w.t].bytes, k, w.step))
			return;
		fetch(q, w.t, k, w.step);
		q->whead++;
	}
}

static void catch_up(struct greedy *q, uint32_t k);

/*
 * lookahead() on the context's step lists: the window at step @k is the
 * reads of the steps to @last in step order, which gc->step_t holds in
 * that order already, so a cursor over them (q->ws, q->wi) stands for
 * q->win and nothing is copied.  The same wants in the same order, each
 * passed once; those of steps before @k are passed without a look, as
 * lookahead() passes them.
 */
static void lookahead_rows(struct greedy *q, uint32_t k, uint32_t last)
{
	const uint32_t *off = q->gc->step_off, *row = q->gc->step_t;
	uint32_t s = q->ws, i = q->wi, t;

	if (s < k) {
		s = k;
		i = off[2 * s];
	}
	if ((!q->owed || last < q->owe_min) && s <= last) {
		/*
		 * none evicted is read again by @last: every want to it is
		 * passed (the check below wants one away, read at its step;
		 * one evicted is read no sooner than it was going to be when
		 * evicted, which q->owe_min is at most)
		 */
		s = last + 1;
		i = off[2 * s];
	}
	for (; s <= last; s++, i = off[2 * s]) {
		for (; i < off[2 * s + 1]; i++) {
			t = row[i];
			/* most were never evicted: that asked first */
			if (q->open[t] == NONE || resident(q, t) ||
			    next_use(q, t) != s)
				continue;
			if (q->mem + q->g->t[t].bytes > q->budget) {
				/* make_room() reads the lists: as if walked */
				if (q->walked < k)
					catch_up(q, k);
				if (!make_room(q, q->g->t[t].bytes, k, s))
					goto out;
			}
			fetch(q, t, k, s);
		}
	}
out:
	q->ws = s;
	q->wi = i;
}

/*
 * One step of the walk: step k's tensors, as for_each_op_tensor() gives
 * them (its reads first), for its three passes: the context's lists
 * (gc->step_t), or with gc->scratch listed here.
 */
static inline __attribute__((always_inline)) void
run_step_in(struct greedy *q, uint32_t k)
{
	const struct op *o = &q->g->op[q->lf->order[k]];
	const uint32_t *ts = q->ts;
	const uint8_t *live_after = q->gc->live_after;
	uint32_t t, x, y, m = 0, n_in = o->n_in;
	bool stamped = true;

	if (!q->gc->scratch) {
		const uint32_t *off = q->gc->step_off + 2 * k;

		ts = q->gc->step_t + off[0];
		n_in = off[1] - off[0];
		m = off[2] - off[0];
		stamped = false;	/* below, when make_room() needs them */
	} else {
		if (o->n_in + o->n_out > q->cap_ts &&
		    hyper_plan__grow(q->gc->mem, &q->ts, &q->cap_ts,
				     o->n_in + o->n_out - 1, sizeof(*q->ts)))
			return;		/* out of memory: the walk ends */
		ts = q->ts;
		for_each_op_tensor(q->g, o, t, x) {
			q->stamp[t] = k + 1;
			q->ts[m++] = t;
		}
	}
	for (x = 0; x < m; x++) {
		t = ts[x];
		if (resident(q, t))
			continue;
		/*
		 * room(), but only make_room() reads the stamps, and only
		 * this step's own (k + 1): those of this step's tensors are
		 * written once it is called, not at every step (most fit).
		 */
		if (q->mem + q->g->t[t].bytes > q->budget) {
			for (y = 0; !stamped && y < m; y++)
				q->stamp[ts[y]] = k + 1;
			stamped = true;
			make_room(q, q->g->t[t].bytes, k, 0);
		}
		if (x < n_in)
			fetch(q, t, k, k);
		else
			move(q, t, HYPER_RES_DEFINE);
	}
	for (x = 0; x < m; x++) {
		size_t i;
		bool live;

		t = ts[x];
		i = q->cur[t]++;
		/* gc->live_after is NULL with gc->scratch */
		live = !live_after ? hyper_plan__gap_live(q->lf, t, i -
					q->lf->acc_off[t] + 1) :
		       live_after[i];
		if (live) {
			push_victim(q, t);
		} else {
			move(q, t, HYPER_RES_DETACH);	/* dead: the emitter frees it */
		}
	}
}

/* run_step_in() as a call: the walks' main loop inlines it. */
static void run_step(struct greedy *q, uint32_t k)
{
	run_step_in(q, k);
}

/* Steps quiet_more() adds to the tables past the one asked, at most. */
#define QUIET_CHUNK	4096

/*
 * q->quiet_mem and q->quiet_add: the walk without offload (gc->pre's
 * walk), which every walk is but for the tensors it holds away, told by
 * each step's device bytes alone.  A tensor is on the device at the
 * start as in gc->st0, comes in where a step lists it and it is not, and
 * leaves where its gap after an access is dead (lf->dead_t, what
 * gc->live_after says at that access): run_step()'s two loops with a
 * byte per tensor (q->quiet_on, nonzero on the device).
 *
 * Built as far as the walks ask, from where the last call stopped
 * (q->quiet_k: quiet_add holds the steps below it, quiet_mem to it, and
 * q->quiet_run is the bytes at its start) to step @k + QUIET_CHUNK
 * (gc->quiet_chunk in tests) or the end.  Built whole once per search,
 * the tables cost 98 M instructions at 1M decode operators, whose walks
 * that may wait pass QUIET_NEV evictions within a few thousand steps
 * and asked them to step 5,175 at most.  0, or -ENOMEM.
 */
static int quiet_more(struct greedy *q, uint32_t k)
{
	const struct greedy_ctx *gc = q->gc;
	const struct life *lf = q->lf;
	const uint32_t *off = gc->step_off, *row = gc->step_t;
	size_t nt = q->g->nt, i;
	uint64_t mem = q->quiet_run, add;
	uint8_t *on = q->quiet_on;
	uint32_t end, t, chunk = gc->quiet_chunk ? gc->quiet_chunk :
				 QUIET_CHUNK;
	bool read_in;

	if (!q->blk_quiet) {
		struct hu_part part[] = {
			HU_PART(q->quiet_mem, (size_t)lf->n + 1, false),
			HU_PART(q->quiet_add, lf->n ? lf->n : 1, false),
			HU_PART(q->quiet_on, nt ? nt : 1, false),
		};

		/* one block: 8 MB, 8 MB and 1 MB at 1M decode operators */
		q->blk_quiet = hyper_plan__block(gc->mem, part,
						 ARRAY_SIZE(part));
		if (!q->blk_quiet) {
			q->quiet_mem = q->quiet_add = NULL;
			q->quiet_on = NULL;
			return -ENOMEM;
		}
		on = q->quiet_on;
		memcpy(on, gc->st0, nt);	/* 0, or on the device */
		mem = gc->mem0;
		q->quiet_k = 0;
	}
	end = lf->n - k > chunk ? k + chunk : lf->n;
	for (k = q->quiet_k; k < end; k++) {
		q->quiet_mem[k] = mem;
		add = 0;
		read_in = false;
		for (i = off[2 * k]; i < off[2 * k + 2]; i++) {
			t = row[i];
			if (on[t])
				continue;
			on[t] = 1;
			add += q->g->t[t].bytes;
			read_in |= i < off[2 * k + 1];
		}
		q->quiet_add[k] = read_in ? QUIET_NO : add;
		mem += add;
		for (i = lf->dead_off[k]; i < lf->dead_off[k + 1]; i++) {
			t = lf->dead_t[i];
			if (on[t])
				mem -= q->g->t[t].bytes;
			on[t] = 0;
		}
	}
	q->quiet_mem[end] = mem;
	q->quiet_run = mem;
	q->quiet_k = end;
	return 0;
}

/*
 * Whether step @k of a walk may wait, run_step() left for catch_up():
 * what the step does to the arrays then tells nothing the walk asks
 * before catch_up() runs it.  A walk holds what the walk without offload
 * holds at its step, but for the tensors it holds away (evicted, not
 * fetched back: q->open), each resident there (a live gap, or it would
 * not have been a candidate): its device bytes are q->quiet_mem[k] less
 * q->away, and a step that lists none of those away finds the same ones
 * not resident, so it runs short of room only if q->mem plus
 * q->quiet_add[k] passes the budget.  Such a step changes only the
 * entries of its tensors, none of them away: the lookahead reads only
 * the entries of those away (lookahead_rows()), the clocks and the stops
 * none, and make_room() runs the steps that waited first.  So a walk
 * that ends on a stop or settled with steps waiting never runs them.
 * Only in walks that took up the walk without budget (q->base), while
 * they evicted at most QUIET_NEV: those make room seldom and end waiting
 * (DeepSeek-V2-Lite's bisections walk on 5k steps to fetch back one to
 * four tensors).  Walks from the start (most walks on the decode graphs,
 * whose starts do not fit) make room at step after step: their steps
 * would run soon after they waited.  The decode graphs' top budgets take
 * up the walk without budget but evict past QUIET_NEV within a few
 * thousand steps, so the tables are built only as far as a walk asks
 * (quiet_more()), not for all 100k or 1M steps.  Not with gc->scratch.
 * The caller asks the first two once per walk.
 */
static bool quiet(struct greedy *q, uint32_t k)
{
	const struct greedy_ctx *gc = q->gc;
	uint64_t add;
	uint32_t i;

	if (gc->nev > QUIET_NEV)
		return false;
	if (k >= q->quiet_k && quiet_more(q, k))
		return false;		/* out of memory: the walk ends */
	add = q->quiet_add[k];
	if (add == QUIET_NO || q->mem + add > q->budget)
		return false;
	/* one away is read no sooner than q->owe_min (evict()) */
	if (q->owed && k >= q->owe_min)
		for (i = gc->step_off[2 * k]; i < gc->step_off[2 * k + 1]; i++)
			if (q->open[gc->step_t[i]] != NONE)
				return false;
	return true;
}

/*
 * The steps that waited, q->walked to @k (the caller asks q->walked < @k
 * first), run in order, as they would have run: none of them makes room
 * (quiet()), so they run without a budget, from the device bytes they
 * left, and leave q->mem as it is.  What the walk did meanwhile was to
 * tensors held away (its fetches), which no step before a fetch lists:
 * each step finds the entries it reads as it would have then.
 */
static void catch_up(struct greedy *q, uint32_t k)
{
	uint64_t budget = q->budget;
	uint32_t s;

	q->mem -= q->quiet_mem[k] - q->quiet_mem[q->walked];
	q->budget = UINT64_MAX;
	for (s = q->walked; s < k; s++)
		run_step(q, s);
	q->budget = budget;
	q->walked = k;
}

/* Step @k of a walk that lets quiet steps wait: it waits, or runs. */
static void step_or_wait(struct greedy *q, uint32_t k)
{
	if (quiet(q, k)) {
		/* its bytes as the walk without offload's */
		q->mem += q->quiet_mem[k + 1] - q->quiet_mem[k];
		return;
	}
	if (q->walked < k)
		catch_up(q, k);
	q->walked = k + 1;
	run_step_in(q, k);
}

/*
 * hyper_plan__sim_beyond() against this walk's goal, with the limit that
 * does not change during the walk worked out once (q->lim, q->timed) by
 * hyper_plan__sim_beyond_lim(): the same doubles, the same answers.
 * gc->scratch asks hyper_plan__sim_beyond() itself.
 */
static inline bool beyond(const struct greedy *q, double floor_ns)
{
	const struct life *lf = q->lf;

	if (q->gc->scratch)
		return hyper_plan__sim_beyond(floor_ns, lf->t0[lf->n],
					      q->gc->max_slow);
	return q->timed && hyper_plan__sim_beyond_at(floor_ns, q->lim);
}

/*
 * Whether the evictions still owed after step @k put the run beyond the
 * goal, with the simulator's clocks from below as clock_step()'s: each
 * owed eviction is fetched before the step that reads it, at the start
 * of a step no earlier than the lookahead before it (lookahead_rows())
 * and than step k + 1; the link takes one fetch after the other, from
 * q->link on; a step starts once its fetches are in, and steps run one
 * after the other.  So step k + 1 starts no earlier than q->clock and a
 * later step s than c0 + t0[s], c0 = q->clock - t0[k + 1]; the fetches
 * read at the owed steps h to i, started at h's earliest, end no
 * earlier than that plus their time, and step i's compute and what
 * follows, t0[n] - t0[i], come after: the run ends no earlier than
 *	c0 + max(a(h) - Q(h - 1) + Q(i) + b(i)) + t0[n]
 * over the owed steps h <= i (the tree's root, struct owe), nor than
 * max(q->link, q->clock) + max(Q(i) + b(i)) + t0[n].  Fetches and
 * evictions still to come only add to the link and the waits.
 *
 * Every walk this stops would be stopped by the clocks anyway: the
 * walk's own clocks keep the same rules, so they end no earlier than
 * this (less 1e-8 for the order of the sums): the same walks stop, and
 * gc->beyond is the same, only sooner.
 */
static bool owe_beyond(struct greedy *q, uint32_t k)
{
	const struct owe *root;
	double at;

	if (!q->warm && owe_warm(q))
		return false;	/* out of memory: the walk ends */
	root = owe_at(q, 1);
	if (!root)
		return false;
	at = dmax((q->link > q->clock ? q->link : q->clock) + root->mb,
		  q->clock - q->lf->t0[k + 1] + root->best) +
	     q->lf->t0[q->lf->n];
	return beyond(q, at * (1 - 1e-8));
}

/*
 * The simulator's clocks after step @k, from below: the compute clock
 * (q->clock, at the next step's start) and the link's (q->link).  The
 * emitter prefetches step k's fetches at the step's start, in the order
 * of the step that reads them (passes/sched.c), one after the other on
 * the link; a step starts once the fetches it reads are in.  Whatever
 * else the simulator waits for (room, stores) only comes on top, so
 * each clock here is one the simulator's never runs ahead of, and the
 * run ends no earlier than the compute clock plus the compute still to
 * come.  Returns whether that is beyond the goal: every probe of this
 * walk's evictions then misses it.  Inlined: once a step walked (682k
 * calls at 100k decode), its call cost as much as its sums.
 */
static inline __attribute__((always_inline)) bool
clock_step(struct greedy *q, uint32_t k)
{
	const struct life *lf = q->lf;
	double end, *in = &q->ready[k & q->mask];
	size_t i;

	if (q->ndue) {
		sort_due(q->due, q->ndue);
		end = q->link > q->clock ? q->link : q->clock;
		for (i = 0; i < q->ndue; i++) {
			double *r = &q->ready[q->due[i].step & q->mask];

			end += q->due[i].ns;
			if (end > *r)
				*r = end;
		}
		q->link = end;
		q->ndue = 0;
	}
	if (*in > q->clock)
		q->clock = *in;
	*in = 0;
	q->clock += q->g->op[lf->order[k]].compute_ns;
	end = q->clock + (lf->t0[lf->n] - lf->t0[k + 1]);
	return beyond(q, q->link > end ? q->link : end);
}

/*
 * owe_beyond() where it may stop the walk after step @k: with evictions
 * owed, the kept path, and every eighth step (the caller asks k & 7
 * first: stopping a few steps later costs less than asking at each),
 * once the compute or link clock plus the compute to come and every
 * owed fetch, a bound at least as high, passes the goal's limit.
 */
static bool owe_gate(struct greedy *q, uint32_t k)
{
	const struct life *lf = q->lf;
	double c = q->link > q->clock ? q->link : q->clock;

	if (!q->owed || q->gc->scratch)
		return false;
	c += (lf->t0[lf->n] - lf->t0[k + 1]) + q->owed_ns;
	return c > q->owe_lim && owe_beyond(q, k);
}

/*
 * clock_step() from step @k to the end, where nothing is fetched any
 * more and every fetch taken was read before @k (q->due_end): the link
 * stays, each step's inputs are in (its ready entry is 0, and the clock
 * is not below 0), so a step only adds its compute.  The same sums in
 * the same order as clock_step()'s, without what cannot change them.
 */
static bool clock_rest(struct greedy *q, uint32_t k)
{
	const struct life *lf = q->lf;
	const struct op *op = q->g->op;
	double t_n = lf->t0[lf->n], end;

	for (; k < lf->n; k++) {
		q->clock += op[lf->order[k]].compute_ns;
		end = q->clock + (t_n - lf->t0[k + 1]);
		if (beyond(q, q->link > end ? q->link : end))
			return true;
	}
	return false;
}

/*
 * Whether the walk's evictions are settled at step @k: none is read
 * again (each fetch is of one, so none is left to fetch), and the
 * largest residency without offload from @k on, less the evicted ones
 * (they stay away), fits the budget.  Without offload a tensor is
 * resident at its accesses and its live gaps (lf->base); the walk holds
 * the same, its dead gaps freed alike, but for those evicted and not
 * fetched: room() never falls short, and what is left of the walk evicts
 * and fetches nothing.  Not with gc->scratch, which walks to the end.
 */
static bool settled(const struct greedy *q, uint32_t k)
{
	uint64_t rest;

	if (q->owed || q->gc->scratch)
		return false;
	rest = q->gc->rest_peak[k];
	return rest <= q->away || rest - q->away <= q->budget;
}

/*
 * gc->step_t, once for every walk: each step's tensors as
 * for_each_op_tensor() gives them, the reads (op_in()) first, then the
 * writes not also read.  An op none of whose outputs it reads (most:
 * o->outs_unread) lists its refs as they are, counted and copied whole;
 * the others have their writes asked once, in the count, and are copied
 * by what it found: every write, none (an update in place, most of the
 * rest) or those not read, asked again.  (Two walks of every op's
 * tensors were 131 M instructions at 1M decode operators; the 99k ops
 * there that update in place were 53 M of the 100 M left.)  0, or
 * -ENOMEM.
 */
static int step_lists(struct greedy_ctx *gc)
{
	const struct life *lf = gc->lf;
	const struct graph *g = lf->g;
	uint32_t *off, k, y, m = 0, n;

	off = gc->step_off = hyper_plan__array(gc->mem,
					       2 * (size_t)lf->n + 1,
					       sizeof(*gc->step_off));
	if (!gc->step_off)
		return -ENOMEM;
	for (k = 0; k < lf->n; k++) {
		const struct op *o = &g->op[lf->order[k]];
		const uint32_t *out = op_out(g, o);

		off[2 * k] = m;
		m += o->n_in;
		off[2 * k + 1] = m;
		if (o->outs_unread) {
			m += o->n_out;
			continue;
		}
		for (y = 0; y < o->n_out; y++)
			m += !hyper_plan__op_reads(g, o, out[y]);
	}
	off[2 * (size_t)lf->n] = m;
	gc->step_t = hyper_plan__array(gc->mem, m, sizeof(*gc->step_t));
	if (!gc->step_t)
		return -ENOMEM;
	for (k = 0; k < lf->n; k++) {
		const struct op *o = &g->op[lf->order[k]];
		const uint32_t *out = op_out(g, o);
		uint32_t *row = gc->step_t + off[2 * k];

		n = off[2 * k + 2] - off[2 * k];
		if (n == o->n_in + o->n_out) {		/* no write read */
			memcpy(row, g->refs + o->ref, n * sizeof(*row));
			continue;
		}
		memcpy(row, op_in(g, o), o->n_in * sizeof(*row));
		if (n == o->n_in)
			continue;			/* every write read */
		for (y = 0, row += o->n_in; y < o->n_out; y++)
			if (!hyper_plan__op_reads(g, o, out[y]))
				*row++ = out[y];
	}
	return 0;
}

/*
 * Every walk's state before its first step, but for what the budget does
 * to it (start()): gc->st0, gc->pending0, gc->pend0 and gc->mem0, built
 * once per search beside gc->live_after.  0, or -ENOMEM.
 */
static int start_state(struct greedy_ctx *gc)
{
	const struct life *lf = gc->lf;
	const struct graph *g = lf->g;
	uint32_t t;

	gc->st0 = hyper_plan__calloc(gc->mem, g->nt ? g->nt : 1, 1);
	gc->pending0 = hyper_plan__array(gc->mem, g->nt ? g->nt : 1, 1);
	if (!gc->st0 || !gc->pending0)
		return -ENOMEM;
	gc->npend0 = 0;
	gc->mem0 = 0;
	for (t = 0; t < g->nt; t++) {
		gc->pending0[t] = !!(g->t[t].flags & TF_PIN);
		if (hyper_plan__gap_live(lf, t, 0)) {
			gc->st0[t] = hyper_residency_start(HYPER_HOME_DEVICE);
			gc->mem0 += g->t[t].bytes;
			gc->npend0 += !gc->pending0[t];
		}
	}
	gc->pend0 = hyper_plan__array(gc->mem, gc->npend0 ? gc->npend0 : 1,
				      sizeof(*gc->pend0));
	if (!gc->pend0)
		return -ENOMEM;
	gc->npend0 = 0;
	for (t = 0; t < g->nt; t++)
		if (gc->st0[t] && !gc->pending0[t]) {
			gc->pending0[t] = 1;	/* as push_victim() */
			gc->pend0[gc->npend0++] = t;
		}
	return 0;
}

/*
 * gc->rest_peak: the largest residency without offload (lf->base) from
 * each step to the end; 0 past the last.  0, or -ENOMEM.
 */
static int rest_peak(struct greedy_ctx *gc)
{
	const struct life *lf = gc->lf;
	uint32_t k = lf->n;

	gc->rest_peak = hyper_plan__array(gc->mem, (size_t)lf->n + 1,
					  sizeof(*gc->rest_peak));
	if (!gc->rest_peak)
		return -ENOMEM;
	gc->rest_peak[k] = 0;
	while (k--)
		gc->rest_peak[k] = lf->base[k] > gc->rest_peak[k + 1] ?
				   lf->base[k] : gc->rest_peak[k + 1];
	return 0;
}

/*
 * gc->live_after, gc->step_t, gc->rest_peak and the start's state, once
 * for every walk: 0, or -ENOMEM.
 */
static int live_after(struct greedy_ctx *gc)
{
	const struct life *lf = gc->lf;
	uint32_t t, nt = lf->g->nt;
	size_t i, na = lf->acc_off[nt];

	if (gc->live_after || gc->scratch)
		return 0;
	if (step_lists(gc) || rest_peak(gc) || start_state(gc))
		return -ENOMEM;
	gc->live_after = hyper_plan__malloc(gc->mem, na ? na : 1);
	if (!gc->live_after)
		return -ENOMEM;
	/*
	 * hyper_plan__gap_live(lf, t, i + 1) at each access i of t: the
	 * next access reads it, or after the last, it is live out.  So every
	 * entry but each tensor's last is the next access's read bit, in
	 * one flat pass, eight at a time (ACC_R is bit 0: a byte masked so
	 * is 0 or 1), then the last ones are set (asked access by access,
	 * 110 M instructions at 1M decode operators).
	 */
	_Static_assert(ACC_R == 1, "the read bit is a byte's lowest");
	for (i = 0; i + 9 <= na; i += 8) {
		uint64_t w;

		memcpy(&w, lf->acc_rw + i + 1, sizeof(w));
		w &= 0x0101010101010101ULL;
		memcpy(gc->live_after + i, &w, sizeof(w));
	}
	for (; i + 1 < na; i++)
		gc->live_after[i] = lf->acc_rw[i + 1] & ACC_R;
	for (t = 0; t < nt; t++)
		if (lf->acc_off[t + 1] > lf->acc_off[t])
			gc->live_after[lf->acc_off[t + 1] - 1] =
				!!(lf->g->t[t].flags & TF_LIVE_OUT);
	return 0;
}

/*
 * The walk's arrays, one entry per tensor or per use, and its buffers:
 * each walk's own with gc->scratch, else gc->walk's, kept from one walk
 * to the next.  0, or -ENOMEM (walk_free() frees what was allocated).
 */
static int walk_alloc(struct greedy *q)
{
	size_t words = 0, w = (size_t)q->lf->n + 1;
	size_t nt = q->g->nt ? q->g->nt : 1;
	bool lists = !q->gc->scratch;
	struct hu_part part[] = {
		HU_PART(q->st, nt, true),
		HU_PART(q->cur, nt, false),
		HU_PART(q->open, nt, false),
		HU_PART(q->stamp, nt, true),
		HU_PART(q->pend, nt, false),
		HU_PART(q->pending, nt, false),
		/* the lists by use: none with gc->scratch */
		HU_PART(q->vhead, lists ? w : 0, false),
		HU_PART(q->vl, lists ? nt : 0, false),
		HU_PART(q->vbits, 0, true),		/* sized below */
	};

	q->nlev = 0;
	while (lists) {		/* to a level of one word */
		w = (w + 63) / 64;
		q->voff[q->nlev++] = words;
		words += w;
		if (w == 1)
			break;
	}
	q->nwords = words;
	part[ARRAY_SIZE(part) - 1].n = words;
	/*
	 * One block: apart, each array of 0.04 to 0.5 MB at DeepSeek-V2-Lite
	 * (38,809 tensors) and of 1 to 8 MB at 1M decode operators was fresh
	 * memory faulted 4 KiB at a time but for the huge pages inside it,
	 * and the walk without budget copies all of them (one kept of it
	 * keeps two: prefix_keep()).
	 */
	q->blk = hyper_plan__block(q->gc->mem, part, ARRAY_SIZE(part));
	return q->blk ? 0 : -ENOMEM;
}

static void walk_free(struct greedy *q)
{
	struct hp_mem *m = q->gc ? q->gc->mem : NULL;

	hyper_plan__free(m, q->blk);
	hyper_plan__free(m, q->win);
	hyper_plan__free(m, q->aside);
	hyper_plan__free(m, q->ts);
	hyper_plan__free(m, q->due);
	hyper_plan__free(m, q->ready);
	hyper_plan__free(m, q->ow);
	hyper_plan__free(m, q->owv);
	hyper_plan__free(m, q->owq);
	hyper_plan__free(m, q->ord);
	hyper_plan__free(m, q->blk_quiet);
	hyper_plan__heap_free(&q->victims);
}

static void pre_free(struct greedy_ctx *gc)
{
	uint32_t i;

	if (gc->pre) {
		walk_free(gc->pre);
		free(gc->pre);
		gc->pre = NULL;
	}
	for (i = 0; i < gc->nkept; i++) {
		walk_free(gc->kept[i]);
		free(gc->kept[i]);
	}
	gc->nkept = 0;
}

/*
 * Every tensor's entries as a walk starts them, but for what the budget
 * does (start()): copies of the context's, nothing listed.
 */
static void walk_reset(struct greedy *q)
{
	const struct greedy_ctx *gc = q->gc;
	size_t nt = q->g->nt;

	memcpy(q->cur, q->lf->acc_off, nt * sizeof(*q->cur));
	memset(q->open, 0xff, nt * sizeof(*q->open));	/* NONE */
	memset(q->stamp, 0, nt * sizeof(*q->stamp));
	memset(q->vl, 0xff, nt * sizeof(*q->vl));	/* unlisted */
	memset(q->vbits, 0, q->nwords * sizeof(*q->vbits));
	memcpy(q->pending, gc->pending0, nt);
	memcpy(q->st, gc->st0, nt);
	q->base = 0;
	q->nev_prev = 0;
	q->listed = false;
}

/*
 * The entries of each tensor of @ts[0 .. @n) back to the start's, taken
 * out of the lists.  The arrays' addresses are held in locals: through
 * q, the byte stores would have every one reloaded for the next tensor
 * (1.8M tensors at 1M decode operators, 34 instructions each as calls).
 */
static void clean_some(struct greedy *q, const uint32_t *ts, size_t n)
{
	const size_t *acc = q->lf->acc_off;
	const uint8_t *st0 = q->gc->st0, *pending0 = q->gc->pending0;
	const struct vlink *vl = q->vl;
	uint32_t *open = q->open, *stamp = q->stamp, t;
	uint8_t *st = q->st, *pending = q->pending;
	size_t *cur = q->cur, x;

	for (x = 0; x < n; x++) {
		t = ts[x];
		if (vl[t].use != NONE)
			vlink_del(q, t);
		cur[t] = acc[t];
		open[t] = NONE;
		stamp[t] = 0;
		st[t] = st0[t];
		pending[t] = pending0[t];
	}
}

/*
 * The arrays back to the start's, by what the walks on them since they
 * last were touched (q->walked, the steps they ran): a tensor's entries
 * change only where a step it is in is run (run_step()) or where it is a
 * candidate (listed from q->pend, so one of the start's, gc->pend0, or
 * of a step run), and a fetch or an eviction is of a candidate.  Most
 * walks stop within a few hundred steps of the 100k or 1M tensors:
 * cleaned by those steps' tensors and the start's candidates, not by
 * copying every tensor's again.  Where nothing was listed (!q->listed:
 * a walk from the start that evicted there alone and stopped before it
 * made room, as the training graphs' lowest budgets do at their first
 * step), the start's candidates are untouched but for those it evicted:
 * those (gc->ev, q->nev_prev) and the steps' tensors.  A walk that
 * touched as many as there are tensors is reset whole.  Done by the next
 * walk, which knows what it wants them for (prefix_take() may copy over
 * them instead).
 */
static void walk_clean(struct greedy *q)
{
	const struct greedy_ctx *gc = q->gc;
	size_t x, m = gc->step_off[2 * (size_t)q->walked];
	size_t cand = q->listed ? gc->npend0 : q->nev_prev;

	q->walked = 0;
	if (cand + m >= q->g->nt) {
		walk_reset(q);
		return;
	}
	if (q->listed)
		clean_some(q, gc->pend0, cand);
	else
		for (x = 0; x < cand; x++)
			clean_some(q, &gc->ev[x].t, 1);
	clean_some(q, gc->step_t, m);
	q->base = 0;
	q->nev_prev = 0;
	q->listed = false;
}

/*
 * The walk's state for this search: gc->walk, allocated and reset by the
 * first walk and cleaned by each after it for itself (walk_clean(),
 * prefix_take()); with gc->scratch @fresh, allocated for this walk
 * alone.  NULL: out of memory.
 */
static struct greedy *walk_get(struct greedy_ctx *gc, struct greedy *fresh)
{
	struct greedy *q = gc->scratch ? fresh : gc->walk;

	if (q)
		return q;
	q = hyper_plan__calloc(gc->mem, 1, sizeof(*q));
	if (!q)
		return NULL;
	*q = (struct greedy){ .gc = gc, .lf = gc->lf, .g = gc->lf->g };
	if (walk_alloc(q)) {
		walk_free(q);
		free(q);
		return NULL;
	}
	walk_reset(q);
	gc->walk = q;
	return q;
}

/* This walk's own: its budget, lookahead window, clocks and counts. */
static int walk_begin(struct greedy *q, uint64_t budget, uint32_t ahead)
{
	const struct life *lf = q->lf;
	/* a step's fetches are read within the lookahead */
	uint32_t span = ahead < lf->n ? ahead : lf->n, r = 1;

	while (r <= span)
		r *= 2;
	if (hyper_plan__grow(q->gc->mem, &q->ready, &q->cap_ready, r - 1,
			     sizeof(*q->ready)))
		return -ENOMEM;
	memset(q->ready, 0, r * sizeof(*q->ready));
	q->mask = r - 1;
	q->budget = budget;
	q->mem = 0;
	q->npend = q->whead = q->wtail = q->naside = q->ndue = 0;
	q->ws = q->wi = 0;
	q->due_end = 0;
	q->link = q->clock = 0;
	q->timed = lf->t0[lf->n] > 0;
	q->lim = hyper_plan__sim_beyond_lim(lf->t0[lf->n], q->gc->max_slow);
	/*
	 * below it owe_beyond() cannot stop the walk: the bound it tests
	 * is at most the compute clock or the link's, plus the compute to
	 * come and every owed fetch; 1e-7 covers its margins many times
	 */
	q->owe_lim = q->timed ? q->lim * (1 - 1e-7) : INFINITY;
	q->owed_ns = 0;
	q->ahead = ahead;
	q->owed = 0;
	q->owe_min = UINT32_MAX;
	q->away = 0;
	q->walked = 0;
	return 0;
}

/*
 * q->ord, once per search: the start's candidates, gc->pend0, by key.
 * pend0 is in tensor order, so a stable sort by n - use does: a byte at
 * a time, the least significant first, as far as n has bits (two passes
 * at 21k steps, where a comparison sort of 21k keys cost four times as
 * much).  0, or -ENOMEM.
 */
static int start_order(struct greedy *q)
{
	const struct greedy_ctx *gc = q->gc;
	size_t x, m = gc->npend0, at[256];
	uint64_t *a, *b, *tmp;
	uint32_t sh, d;

	q->ord = hyper_plan__array(gc->mem, m ? m : 1, sizeof(*q->ord));
	tmp = hyper_plan__array(gc->mem, m ? m : 1, sizeof(*tmp));
	if (!q->ord || !tmp) {
		free(q->ord);
		free(tmp);
		q->ord = NULL;
		return -ENOMEM;
	}
	for (x = 0; x < m; x++)
		q->ord[x] = (uint64_t)(q->lf->n - next_use(q, gc->pend0[x]))
			    << 32 | gc->pend0[x];
	a = q->ord;
	b = tmp;
	for (sh = 32; sh < 64 && (uint64_t)q->lf->n >> (sh - 32); sh += 8) {
		memset(at, 0, sizeof(at));
		for (x = 0; x < m; x++)
			at[a[x] >> sh & 255]++;
		for (d = 0, x = 0; d < 256; d++) {	/* each digit's first */
			size_t c = at[d];

			at[d] = x;
			x += c;
		}
		for (x = 0; x < m; x++)
			b[at[a[x] >> sh & 255]++] = a[x];
		tmp = a;
		a = b;
		b = tmp;
	}
	if (a != q->ord)
		memcpy(q->ord, a, m * sizeof(*a));
	free(b == q->ord ? a : b);
	return 0;
}

/*
 * The walk's start: the budget's evictions, the rest as the context's
 * start (gc->scratch: built tensor by tensor).  Where the start does not
 * fit, make_room() would list every candidate (on the training graphs
 * 21k at DeepSeek-V2-Lite) and take the first few thousand: the same
 * ones, whatever the budget, in q->ord's order, so they are taken from
 * there, and the rest wait to be listed (q->pend), as if pushed once
 * more, by the walk's first make_room(), if any: most such walks stop
 * at their first step.  Those taken are no longer waiting, as after
 * flush_victims(); the lists are read by make_room() alone, after its
 * flush, when every resident tensor is listed under its next use.
 */
static void start(struct greedy *q)
{
	const struct life *lf = q->lf;
	const struct greedy_ctx *gc = q->gc;
	uint32_t t, x;

	if (!gc->scratch) {	/* the arrays are the start's */
		q->mem = gc->mem0;
		if (q->mem <= q->budget) {
			memcpy(q->pend, gc->pend0,
			       gc->npend0 * sizeof(*q->pend));
			q->npend = gc->npend0;
			return;
		}
		if (!q->ord && start_order(q))
			return;		/* gc->mem->failed: the walk ends */
		/* make_room(q, 0, lf->n, 0): no use at 0 or before */
		for (x = 0; x < gc->npend0 && q->mem > q->budget &&
			    q->ord[x] >> 32 < lf->n && !gc->mem->failed; x++) {
			t = (uint32_t)q->ord[x];
			q->pending[t] = 0;
			evict(q, t, lf->n);
		}
		for (q->npend = 0; x < gc->npend0; x++)
			q->pend[q->npend++] = (uint32_t)q->ord[x];
		return;
	}
	for (t = 0; t < q->g->nt; t++) {
		q->cur[t] = lf->acc_off[t];
		q->open[t] = NONE;
		/* a pinned tensor never leaves the device: never listed */
		q->pending[t] = !!(q->g->t[t].flags & TF_PIN);
		if (hyper_plan__gap_live(lf, t, 0)) {
			/* on the device until make_room() sends it home */
			q->st[t] = hyper_residency_start(HYPER_HOME_DEVICE);
			q->mem += q->g->t[t].bytes;
			push_victim(q, t);
		}
	}
	make_room(q, 0, lf->n, 0);	/* what does not fit starts in the pool */
}

/*
 * The most device bytes step @k has once one of its tensors not resident
 * comes in, in a walk in @pre's state (gc->pre or one kept of it): what
 * run_step()'s first loop asks room for, which a walk makes where it
 * passes the budget.  A tensor listed twice comes in once: gc->pre's
 * open, NONE all along in a walk that evicts nothing, marks the ones
 * seen and is put back.
 */
static uint64_t step_need(const struct greedy *pre, uint32_t k)
{
	const uint32_t *off = pre->gc->step_off + 2 * (size_t)k;
	const uint32_t *ts = pre->gc->step_t;
	const uint8_t *st = pre->kdone ? pre->kst : pre->st;
	uint32_t *seen = pre->gc->pre->open;
	uint64_t mem = pre->mem, most = 0;
	uint32_t x, t;

	for (x = off[0]; x < off[2]; x++) {
		t = ts[x];
		if ((st[t] & HYPER_RES_DEVICE) || seen[t] != NONE)
			continue;
		seen[t] = k;
		mem += pre->g->t[t].bytes;
		if (mem > most)
			most = mem;
	}
	for (x = off[0]; x < off[2]; x++)
		seen[ts[x]] = NONE;
	return most;
}

/* gc->pre at the start of a walk without budget, for gc's goal now. */
static int prefix_reset(struct greedy_ctx *gc)
{
	struct greedy *pre = gc->pre;

	if (!pre) {
		pre = hyper_plan__calloc(gc->mem, 1, sizeof(*pre));
		if (!pre)
			return -ENOMEM;
		*pre = (struct greedy){ .gc = gc, .lf = gc->lf,
					.g = gc->lf->g };
		gc->pre = pre;
		if (walk_alloc(pre))
			return -ENOMEM;		/* the caller frees it */
		walk_reset(pre);
	} else {
		walk_clean(pre);
	}
	if (walk_begin(pre, UINT64_MAX, 0))
		return -ENOMEM;
	start(pre);		/* evicts nothing: mem0 fits */
	pre->most = 0;
	pre->pp = gc->p;
	pre->pslow = gc->max_slow;
	pre->dead = false;
	return 0;
}

/*
 * Whether a walk at @budget under gc's goal gets as far as @pre (gc->pre
 * or one kept of it) without a stop: rest_peak falls and the most room
 * only grows, so none of the steps before it stops the walk.
 */
static bool prefix_reaches(const struct greedy_ctx *gc,
			   const struct greedy *pre, uint64_t budget)
{
	return pre->pp == gc->p && pre->pslow == gc->max_slow &&
	       (!pre->walked || (pre->most <= budget &&
				 gc->rest_peak[pre->walked - 1] > budget));
}

static void prefix_take(struct greedy *q, const struct greedy *from);
static void prefix_copy(struct greedy *q, const struct greedy *from);

/*
 * gc->pre where it stands kept for later walks (gc->kept), unless one is
 * kept at that step already or as many are kept as may be.  0, or
 * -ENOMEM.
 *
 * Kept is what a walk cannot tell from elsewhere: each tensor's
 * residency and accesses run (s->kst, s->kdone), 5 bytes a tensor.  Its
 * other entries follow from those: pre is listed (flush_victims() just
 * ran), so nothing waits and every resident tensor but the pinned is
 * listed under its next use, where a list's order does not count
 * (vfirst()); its open and stamp entries are the start's.  Stale
 * entries (a tensor detached since it was listed) are left out, which
 * make_room() would pass over.  A copy of every array, as walks hold
 * them, was 0.75 MB of fresh pages for each kept at OLMoE-1B-7B (23,574
 * tensors) and 1.25 MB at DeepSeek-V2-Lite (38,809).
 */
static int prefix_keep(struct greedy_ctx *gc)
{
	const struct greedy *pre = gc->pre;
	const size_t *off = gc->lf->acc_off;
	size_t t, nt = pre->g->nt ? pre->g->nt : 1;
	struct greedy *s;
	uint32_t i;
	struct hu_part part[2];

	if (gc->nkept == ARRAY_SIZE(gc->kept))
		return 0;
	for (i = 0; i < gc->nkept; i++)
		if (gc->kept[i]->walked == pre->walked &&
		    gc->kept[i]->pp == pre->pp &&
		    gc->kept[i]->pslow == pre->pslow)
			return 0;
	s = hyper_plan__calloc(gc->mem, 1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (struct greedy){ .gc = gc, .lf = gc->lf, .g = gc->lf->g };
	part[0] = (struct hu_part)HU_PART(s->kst, nt, false);
	part[1] = (struct hu_part)HU_PART(s->kdone, nt, false);
	s->blk = hyper_plan__block(gc->mem, part, ARRAY_SIZE(part));
	if (!s->blk) {
		free(s);
		return -ENOMEM;
	}
	memcpy(s->kst, pre->st, pre->g->nt);
	for (t = 0; t < pre->g->nt; t++)
		s->kdone[t] = (uint32_t)(pre->cur[t] - off[t]);
	/*
	 * pre is listed, so nothing waits: a kept has no pend array (s->pend
	 * NULL), and prefix_copy() copies none only where pre->npend is 0.
	 * A pend left here would be written through NULL, or lost.
	 */
	assert(pre->npend == 0);
	prefix_copy(s, pre);
	gc->kept[gc->nkept++] = s;
	return 0;
}

/*
 * A walk at @budget whose start evicts nothing (gc->mem0 fits) is the
 * walk without budget, gc->pre, step for step, until the first step it
 * is settled at (settled()) or makes room in (step_need()): before
 * then it evicts and fetches nothing, so its lookahead finds nothing
 * owed, and its clocks add the same compute in the same order.  Runs
 * gc->pre on to that step, from where it stands, from the furthest of
 * it kept (gc->kept) that the walk gets to, or from its start if that
 * step is behind them all.  Each lookahead's bisection asks later and
 * later steps, and the next lookahead's asks the same ones again: where
 * one kept stands at the walk's step already, the walk takes that up
 * (*@at) and gc->pre stays.  1: the walk is beyond the goal at a step
 * before that (where gc->pre was: every walk that gets there is), else
 * 0 with *@at at that step, or -ENOMEM.
 */
static int prefix_to(struct greedy_ctx *gc, uint64_t budget,
		     struct greedy **at)
{
	const struct life *lf = gc->lf;
	struct greedy *pre = gc->pre, *from = NULL;
	uint32_t i, k;

	if (pre && prefix_reaches(gc, pre, budget))
		from = pre;
	for (i = 0; i < gc->nkept; i++)
		if (prefix_reaches(gc, gc->kept[i], budget) &&
		    (!from || gc->kept[i]->walked > from->walked))
			from = gc->kept[i];
	if (from && from->dead)
		return 1;
	k = from ? from->walked : 0;
	if (from && from != pre &&
	    (k == lf->n || gc->rest_peak[k] <= budget ||
	     step_need(from, k) > budget)) {
		*at = from;		/* it stops there too */
		return 0;
	}
	if (!from) {
		if (prefix_reset(gc)) {
			pre_free(gc);
			return -ENOMEM;
		}
		pre = gc->pre;
	} else if (from != pre) {
		/* pre's ready entries are all 0: it fetches nothing */
		prefix_take(pre, from);
		if (walk_begin(pre, UINT64_MAX, 0))
			return -ENOMEM;
		prefix_copy(pre, from);
	}
	for (k = pre->walked; k < lf->n; k++) {
		uint64_t need;

		if (gc->rest_peak[k] <= budget)
			break;
		need = step_need(pre, k);
		if (need > budget)
			break;
		run_step(pre, k);
		pre->walked = k + 1;
		if (need > pre->most)
			pre->most = need;
		if (gc->p && clock_step(pre, k)) {
			pre->dead = true;
			return 1;
		}
	}
	/*
	 * Listed here, once, for every walk that copies it (prefix_copy()),
	 * not by each walk's first make_room(): by then nearly every tensor
	 * waits (pend0 and the steps walked).  A walk's own flush lists what
	 * moved after this under its use then, so each resident tensor is
	 * listed under its next use as if it had all waited till then; one
	 * listed here and dropped since (a dead detach) is a stale entry
	 * make_room() passes over, and a tensor comes back only through
	 * push_victim().  So pre taken up from one kept, its lists flushed
	 * at other steps than walking on from its start would have, lists
	 * the same but for stale entries.
	 */
	if (pre->walked) {
		flush_victims(pre);
		pre->base = pre->walked;
		if (prefix_keep(gc))
			return -ENOMEM;
	}
	*at = pre;
	return 0;
}

/*
 * Tensor t's entries as @pre's (listed at its step: see prefix_take()),
 * gc->pre's or one kept's (prefix_keep(): listed under its next use if
 * resident, but for the pinned, which alone wait).  Listed under the
 * same use already, it stays where it is in its list: only the lists'
 * members count, not their order (a tensor the range lists at each of
 * its accesses is moved once).
 */
static void take_one(struct greedy *q, const struct greedy *pre, uint32_t t)
{
	uint32_t use;

	if (pre->kdone) {
		q->st[t] = pre->kst[t];
		q->cur[t] = q->lf->acc_off[t] + pre->kdone[t];
		q->pending[t] = !!(q->g->t[t].flags & TF_PIN);
		use = resident(q, t) && !q->pending[t] ? next_use(q, t) : NONE;
	} else {
		q->st[t] = pre->st[t];
		q->cur[t] = pre->cur[t];
		q->pending[t] = pre->pending[t];
		use = pre->vl[t].use;
	}
	if (q->vl[t].use != use) {
		if (q->vl[t].use != NONE)
			vlink_del(q, t);
		if (use != NONE)
			vlink_add(q, t, use);
	}
	q->open[t] = NONE;
	q->stamp[t] = 0;
}

/*
 * The walk @q's arrays at the step of @kp, one kept (prefix_keep()),
 * from whatever the walks before left in them, to step @s: the tensors
 * of the steps kp ran and the start's candidates as kp holds them, those
 * resident listed, over the start's (walk_clean()), where nothing is
 * listed.  The start's candidates no longer wait there (kp was listed),
 * and only the pinned do: every other tensor whose pending entry is set
 * is one of them (start_state()).  A tensor among both is listed once.
 * Where those are nearly every tensor, each array is set whole, in one
 * pass, not cleaned tensor by tensor first.
 */
static void take_kept(struct greedy *q, const struct greedy *kp, uint32_t s)
{
	const struct greedy_ctx *gc = q->gc;
	const size_t *off = q->lf->acc_off;
	size_t x, np = gc->npend0, m = gc->step_off[2 * (size_t)kp->walked];
	size_t nt = q->g->nt;
	uint32_t t;

	if (np + gc->step_off[2 * (size_t)s] >= nt) {
		memcpy(q->st, kp->kst, nt);
		memcpy(q->pending, gc->pending0, nt);
		memset(q->open, 0xff, nt * sizeof(*q->open));	/* NONE */
		memset(q->stamp, 0, nt * sizeof(*q->stamp));
		memset(q->vbits, 0, q->nwords * sizeof(*q->vbits));
		for (x = 0; x < np; x++)
			q->pending[gc->pend0[x]] = 0;
		for (t = 0; t < nt; t++) {
			q->cur[t] = off[t] + kp->kdone[t];
			/* an unlisted one's links are never read */
			if (resident(q, t) && !q->pending[t])
				vlink_add(q, t, next_use(q, t));
			else
				q->vl[t].use = NONE;
		}
		return;
	}
	walk_clean(q);
	for (x = 0; x < np; x++)
		q->pending[gc->pend0[x]] = 0;
	for (x = 0; x < m; x++) {
		t = gc->step_t[x];
		q->st[t] = kp->kst[t];
		q->cur[t] = off[t] + kp->kdone[t];
	}
	for (x = 0; x < np + m; x++) {
		t = x < np ? gc->pend0[x] : gc->step_t[x - np];
		if (resident(q, t) && !q->pending[t] && q->vl[t].use == NONE)
			vlink_add(q, t, next_use(q, t));
	}
}

/*
 * The walk @q's arrays at @pre's step (gc->pre or one kept of it), from
 * whatever the walks before left in them (q->walked).  pre evicts and
 * fetches nothing and never runs short, and where it stops it lists
 * every tensor waiting: its open, stamp and waiting entries are the
 * start's but for the start's candidates (listed), and its residency
 * and next access differ from one of its steps to another only in the
 * tensors of the steps between.
 *
 * Where @q's arrays stand at such a step (q->base) but for a walk's
 * own (the tensors of its steps and its evictions: all it changes but
 * for the lists' links), only the tensors of the steps between the two
 * and that walk's are taken from pre, each taken out of @q's lists and
 * listed again as pre lists it: the lists hold the same valid entries
 * as pre's, in another order, and perhaps other stale ones (a tensor
 * detached, which make_room() passes over).  A resident tensor outside
 * those is listed under its next use in both: the walk listed none of
 * them, and took out none but those it evicted or passed over (its
 * own).  On the training graphs a walk takes up the walk without budget
 * a few hundred steps past the walk before, where copying every
 * tensor's entries cost 1.4 MB a walk.
 *
 * Otherwise, where neither walk touched a tensor both hold the start's:
 * the tensors either touched are enough, cleaned to the start's, then
 * pre's copied (every one pre lists is among them).  Where that is
 * nearly every tensor, each array is copied from gc->pre whole, in one
 * pass, not reset whole and copied whole again.  The use lists' bits are
 * copied whole then, and a use's first tensor where its bit is: @q's own
 * first tensors are read only where a bit says so.  One kept has no
 * lists to copy: those tensors are listed one by one (take_kept()).
 */
static void prefix_take(struct greedy *q, const struct greedy *pre)
{
	const struct greedy_ctx *gc = q->gc;
	uint32_t s = q->walked > pre->walked ? q->walked : pre->walked, t;
	size_t x, nt = q->g->nt, m = gc->step_off[2 * (size_t)pre->walked];
	size_t lo = gc->step_off[2 * (size_t)(q->base < pre->walked ?
					      q->base : pre->walked)];
	uint64_t w;

	if (q->base &&
	    2 * (gc->step_off[2 * (size_t)s] - lo + q->nev_prev) < nt) {
		for (x = lo; x < gc->step_off[2 * (size_t)s]; x++)
			take_one(q, pre, gc->step_t[x]);
		for (x = 0; x < q->nev_prev; x++)
			take_one(q, pre, gc->ev[x].t);
	} else if (pre->kdone) {
		take_kept(q, pre, s);
	} else {
		if (gc->npend0 + gc->step_off[2 * (size_t)s] >= nt) {
			memcpy(q->st, pre->st, nt);
			memcpy(q->cur, pre->cur, nt * sizeof(*q->cur));
			memcpy(q->pending, pre->pending, nt);
			memcpy(q->vl, pre->vl, nt * sizeof(*q->vl));
			memset(q->open, 0xff, nt * sizeof(*q->open));
			memset(q->stamp, 0, nt * sizeof(*q->stamp));
		} else {
			walk_clean(q);
			for (x = 0; x < gc->npend0 + m; x++) {
				t = x < gc->npend0 ? gc->pend0[x] :
				    gc->step_t[x - gc->npend0];
				q->st[t] = pre->st[t];
				q->cur[t] = pre->cur[t];
				q->pending[t] = pre->pending[t];
				q->vl[t] = pre->vl[t];
			}
		}
		memcpy(q->vbits, pre->vbits, q->nwords * sizeof(*q->vbits));
		/* level 0, a bit per use of the n + 1 */
		for (x = 0; x < ((size_t)q->lf->n + 64) / 64; x++)
			for (w = pre->vbits[x]; w; w &= w - 1) {
				t = (uint32_t)(x * 64 + __builtin_ctzll(w));
				q->vhead[t] = pre->vhead[t];
			}
	}
	q->walked = q->base = pre->walked;
	q->nev_prev = 0;
	q->listed = true;
}

/* The rest of @q at @pre's step, once walk_begin() set it. */
static void prefix_copy(struct greedy *q, const struct greedy *pre)
{
	if (pre->npend)		/* none in one kept, which has no pend */
		memcpy(q->pend, pre->pend, pre->npend * sizeof(*q->pend));
	q->npend = pre->npend;
	q->mem = pre->mem;
	q->clock = pre->clock;
	q->link = pre->link;
	q->walked = pre->walked;
	q->most = pre->most;
	q->pp = pre->pp;
	q->pslow = pre->pslow;
	q->dead = pre->dead;
}

int hyper_plan__greedy_evicts(struct greedy_ctx *gc, uint64_t budget,
		  uint32_t lookahead_ops)
{
	const struct life *lf = gc->lf;
	struct greedy fresh = { .gc = gc, .lf = lf, .g = lf->g }, *q = NULL;
	struct greedy *from = NULL;
	uint32_t k = 0, x;
	bool ran = false, wait;

	gc->nev = 0;
	gc->beyond = false;
	if (live_after(gc) || (gc->scratch && walk_alloc(&fresh)))
		goto out;
	q = walk_get(gc, &fresh);
	if (!q)
		goto out;
	gc->settled = lf->n;
	k = 0;
	if (!gc->scratch && gc->mem0 <= budget) {
		int r = prefix_to(gc, budget, &from);

		if (r < 0)
			goto out;
		if (r) {
			gc->beyond = true;	/* evicting nothing */
			goto out;
		}
		k = from->walked;
	}
	/* before walk_begin(): the arrays' state is the walks' before */
	if (k)
		prefix_take(q, from);
	else if (!gc->scratch)
		walk_clean(q);
	ran = true;
	if (walk_begin(q, budget, lookahead_ops))
		goto out;
	if (k)
		prefix_copy(q, from);
	else
		start(q);
	for (x = 0; x < lookahead_ops && x < lf->n && gc->scratch; x++)
		want_step(q, x);
	wait = q->base && !gc->scratch;		/* step_or_wait() */
	for (; k < lf->n && !gc->mem->failed; k++) {
		if (settled(q, k)) {
			gc->settled = k;
			break;
		}
		if (!gc->scratch) {
			lookahead_rows(q, k, lookahead_ops < lf->n - k ?
					     k + lookahead_ops : lf->n - 1);
		} else {
			if (k + lookahead_ops < lf->n)
				want_step(q, k + lookahead_ops);
			lookahead(q, k);
		}
		if (wait) {
			step_or_wait(q, k);
		} else {
			q->walked = k + 1;
			run_step_in(q, k);
		}
		if (gc->p && (clock_step(q, k) ||
			      (!(k & 7) && owe_gate(q, k)))) {
			gc->beyond = true;
			break;
		}
	}
	/* the rest fetches nothing: only the clocks still move */
	for (; k < lf->n && gc->p && !gc->beyond && !gc->mem->failed; k++) {
		if (k >= q->due_end && !gc->scratch) {
			gc->beyond = clock_rest(q, k);
			break;
		}
		gc->beyond = clock_step(q, k);
	}
out:
	if (gc->scratch) {
		walk_free(&fresh);
	} else if (gc->walk && gc->mem->failed) {
		walk_free(gc->walk);	/* left as it was: not kept */
		free(gc->walk);
		gc->walk = NULL;
		pre_free(gc);
	} else if (q) {
		owe_clean(q);	/* gc->ev's paths: this walk's */
		if (ran)
			q->nev_prev = gc->nev;	/* for prefix_take() */
	}
	return gc->mem->failed ? -ENOMEM : 0;
}

void hyper_plan__greedy_free(struct greedy_ctx *gc)
{
	if (gc->walk) {
		walk_free(gc->walk);
		free(gc->walk);
	}
	pre_free(gc);
	free(gc->ev);
	free(gc->live_after);
	free(gc->step_off);
	free(gc->step_t);
	free(gc->rest_peak);
	free(gc->st0);
	free(gc->pending0);
	free(gc->pend0);
	memset(gc, 0, sizeof(*gc));
}
