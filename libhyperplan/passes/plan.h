/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The planner's selection pass: given a device budget, which live gaps to
 * take off the device and where their transfers go.  See plan.c.
 */
#ifndef HP_PLAN_H
#define HP_PLAN_H

#include "passes/calendar.h"
#include "passes/minseg.h"
#include "profile/profile.h"
#include "passes/sched.h"

struct cand {
	uint32_t t;
	int32_t a, j;		/* the gap: -1 is the start, n the end */
	int32_t w;		/* last write at or before a; -1: none */
	uint32_t epoch;		/* which value of the tensor the gap holds */
	bool small;		/* its transfers would be mostly latency */
};

/* A link this much faster is a last resort: any wait is accepted. */
#define ANY_WAIT	1e6

struct epoch_store {
	int32_t last;		/* step in which its store completes; -1: none */
	int32_t issue;		/* slot the store is issued in */
	bool clean;		/* the live_in value, with the pool as its home */
};

/*
 * A sweep's state at its last step, n - 1, right after the take that
 * brought that step within @aim (plan.c, snap_save()): the state every
 * sweep at an aim up to @aim on links @scale faster passes through.
 */
struct plan_snap {
	uint64_t aim;		/* 0: none kept */
	double scale;
	int64_t absent;
	uint32_t next;		/* the gaps to the end's walk resumes here */
	struct cal_snap h2d, d2h;
	struct evict *ev;
	size_t nev, cap_ev;
	uint32_t *ep_x;		/* the epochs written, and their stores */
	struct epoch_store *ep_v;
	size_t nep, cap_ep, cap_epv;
	int64_t *delta;		/* delta[delta_lo .. delta_hi] */
	size_t cap_delta;
	uint32_t delta_lo, delta_hi;
};

struct plan_ctx {
	const struct life *lf;
	struct hp_mem *mem;	/* the plan's: failed says a probe lost data */
	const struct profile *p;
	struct cand *c;
	size_t nc;
	size_t nc_end;		/* of them, the gaps to the end */
	/*
	 * The blocks (util/huge.h) that hold the arrays sized by the
	 * tensors, steps and candidates (first_gap, c, idx, at_off, cap,
	 * ep, delta, alive, alive0, due_off, ep_undo) and those sized by the buckets (b_j, by_b,
	 * cls_b, b_cls, at_j, cur, aside_gen and seg's tree): each freed
	 * once, never its parts.
	 */
	void *blk, *blk_b;
	/*
	 * Buckets: the candidates of one size class used next at one step j,
	 * class by class, then the gaps to the end (bucket nb).
	 */
	uint32_t nb, ncls;
	uint32_t *b_j;		/* step of each bucket */
	uint32_t *cls_b;	/* class s: buckets cls_b[s] .. cls_b[s+1]) */
	double *cls_cost;	/* class s: its cheapest prefetch */
	uint32_t *cls_lo;	/* class s: first step its prefetch reaches */
	uint32_t *cls_from;	/* class s: that step before lo and buckets */
	uint8_t *cls_stale;	/* class s: a take may have moved its reach */
	/*
	 * Class s's three fields above are this step's only where cls_gen[s]
	 * is reach_gen (class_touch()); the classes touched this step,
	 * cls_now[0 .. ncls_now), are the ones a take can mark stale.
	 */
	uint32_t *cls_gen, *cls_now;
	uint32_t reach_gen, ncls_now;
	/*
	 * Class s's first bucket used at step base_lo or later (NONE: not
	 * known), moved with the step's first use (class_base_at()), and
	 * its last bucket from its own reach (reach_of()): where the next
	 * look-up starts, a bucket or two away.
	 */
	uint32_t *cls_base, *cls_reach;
	uint32_t base_lo;
	/*
	 * Class s's earliest candidate from min_lo[s] (its range minimum,
	 * NONE when unknown) and the bucket holding it (NONE until looked
	 * up), kept through refreshes: serves cls_lo[s] == min_lo[s].
	 */
	uint64_t *min_key;
	uint32_t *min_lo, *min_b;
	/*
	 * A second such minimum per class, from alt_lo[s] (NONE when
	 * unknown), followed through refreshes the same way: the one a
	 * look-up moved back from, its reach's (class_min_find()).  Kept
	 * only past the first: alt_lo[s] > min_lo[s] unless NONE.
	 */
	uint64_t *alt_key;
	uint32_t *alt_lo, *alt_b;
	/*
	 * Class s: no key of its buckets from cls_base[s] on is below
	 * cls_floor[s] (0: not known; none kept while base_lo is NONE),
	 * lowered as keys come down there and as the base walks down;
	 * floor_others: the least of the classes' but cls_pick's.  A pick
	 * of cls_pick's below it needs no other class asked.
	 */
	uint64_t *cls_floor;
	uint64_t floor_others;
	/*
	 * The same from a second base, the first bucket used at base2_lo or
	 * later (cls_base2[], NONE: none kept, every cls_floor2[] 0), which
	 * next_bucket() moves to the last pick's class's reach: no class
	 * with a costlier prefetch reaches before it.  floor_beyond: no
	 * class but cls_pick's is below it, taking the higher of its two
	 * floors for the classes after cls_pick's (those costlier).
	 * cls_ask2[s]: the reach_gen of class s's last floor2 look-up.
	 */
	uint32_t *cls_base2, *cls_ask2;
	uint64_t *cls_floor2;
	uint32_t base2_lo, base2_cls;
	uint64_t floor_beyond;
	uint8_t *b_cls;		/* class of each bucket */
	uint32_t cls_pick;	/* the class asked first (next_bucket()) */
	/*
	 * The guess of the class to ask first (next_bucket()):
	 * cls_next[p * ncls + w], after picks of class p, then w, is the
	 * class of the pick that followed them last time (its low byte),
	 * kept past one miss while bit 8 says it was right the time before.
	 * cls_ctx is p * ncls + w for the last two picks, cls_won that w.
	 * The first GUESS_TRY loops over the classes count how often the
	 * guess and the last pick's class were right (guess_left, the
	 * loops left), and the guess is used from then on only if it was
	 * right clearly more often (guess_on).  cls_steady: a pick of the
	 * class asked first changes none of it.
	 */
	uint16_t *cls_next;
	uint32_t cls_ctx, cls_won;
	uint32_t guess_left, guess_hits, last_hits;
	bool guess_on, cls_steady;
	double before;		/* link time offered before the step after k */
	uint32_t *at_j;		/* buckets used at j: at_j[at_off[j] .. [j+1]) */
	uint32_t *at_off;
	uint32_t *by_b;		/* bucket b's candidates: */
	uint32_t *idx;		/* idx[by_b[b] .. by_b[b+1]), earliest start first */
	double min_fetch;	/* the cheapest prefetch that is not small */
	double *cap;		/* compute time of each step */
	size_t nep;
	/* per probe */
	double scale;		/* links assumed this much faster */
	struct calendar h2d, d2h;
	struct epoch_store *ep;
	int64_t *delta;		/* absent bytes gained when the sweep reaches k */
	uint32_t *first_gap;	/* candidate of each tensor's start gap; NONE */
	uint8_t *alive;
	uint32_t *cur;		/* each bucket's first candidate not passed over */
	struct minseg seg;	/* per bucket: (start + 1) << 32 | j of it */
	uint64_t *aside;	/* buckets passed over in this step */
	size_t naside, cap_aside;
	uint32_t *aside_gen;	/* bucket b is in aside when == gen */
	uint32_t gen;
	/*
	 * What a sweep wrote, for the next reset to undo alone (a sweep
	 * that fails near its start writes little): the lowest step it
	 * began, the range of delta written, and the epochs it gave a
	 * store, up to EP_UNDO of them (ep_over past that: all reset).
	 * The entries of delta written, up to delta_ring of them, in a ring
	 * (delta_undo[x % delta_ring] the x-th; ndelta_undo past delta_ring:
	 * the range).  delta_ring is DELTA_UNDO, or a smaller power of two
	 * that a test sets to make the ring run over.
	 */
	uint32_t swept;		/* NONE: nothing known, reset all */
	uint32_t delta_lo, delta_hi;
	uint32_t *delta_undo;
	uint32_t ndelta_undo, delta_ring;
	uint32_t *ep_undo;
	uint32_t nep_undo;
	bool ep_over;
	uint8_t *alive0;	/* alive at reset, links not ANY_WAIT */
	struct evict *ev;
	size_t nev, cap_ev;
	struct evict *ev_sorted;	/* the evictions by due step, built */
	size_t cap_sorted;		/* there and swapped with ev */
	uint32_t *due_off;		/* per due step j: its first there */
	/*
	 * After a failed selection: the bytes its failing step was still
	 * over, and the evictions chosen at the steps swept before it.
	 */
	uint64_t short_by;
	size_t nev_before;
	/*
	 * The last sweep that failed at its first step over budget, k0
	 * (nothing taken before it), on links @ex_scale faster: every
	 * candidate tried there, ex_absent bytes off the device after, its
	 * evictions copied (ex_k NONE: none).  Up to k0 a sweep takes
	 * nothing, so each aim with the same k0 and links starts k0 the
	 * same, tries the same candidates in the same order, and fails the
	 * same where ex_absent still leaves it over (plan_select_known()).
	 */
	uint32_t ex_k;
	double ex_scale;
	int64_t ex_absent;
	struct evict *ex_ev;
	size_t ex_nev, cap_ex;
	uint32_t ex_hits;	/* sweeps it answered (tests) */
	/*
	 * Set by the caller before a sweep: no later sweep on these links
	 * aims above it (a bisection's top; 0: unknown).  A sweep that
	 * takes enough at step n - 1 keeps its state there at that aim
	 * (snap), and the later ones start from it.
	 */
	uint64_t keep_aim;
	int64_t snap_need;	/* absent at n - 1 to save at; INT64_MAX */
	struct plan_snap snap;
	uint32_t snap_hits;	/* sweeps started from it (tests) */
	uint64_t miss_hits;	/* offers store_never() answered (tests) */
	uint64_t floor_hits;	/* picks no other class was asked for (tests) */
	uint64_t beyond_hits;	/* of them, by floor_beyond */
	uint64_t beyond_tries;	/* picks that walked the second base */
	/*
	 * Tests: every reuse off (the class minima looked up each time, the
	 * evictions sorted by qsort()), the from-scratch path to compare
	 * with.
	 */
	bool scratch;
};

#define EP_UNDO		65536
#define DELTA_UNDO	4096	/* a power of two */

/*
 * Adds @v to delta[x], noting the range written and the entry, the
 * latter without a test: past delta_ring writes the ring has lost some,
 * which the count says.
 */
static inline void plan_delta_add(struct plan_ctx *pc, uint32_t x, int64_t v)
{
	pc->delta[x] += v;
	if (x < pc->delta_lo)
		pc->delta_lo = x;
	if (x > pc->delta_hi)
		pc->delta_hi = x;
	pc->delta_undo[pc->ndelta_undo++ & (pc->delta_ring - 1)] = x;
}

/* Epoch @x is about to be written: noted if it is as reset left it. */
static inline void plan_ep_touch(struct plan_ctx *pc, uint32_t x)
{
	if (pc->ep[x].last != -1 || pc->ep[x].clean)
		return;			/* noted already */
	if (pc->nep_undo < EP_UNDO)
		pc->ep_undo[pc->nep_undo++] = x;
	else
		pc->ep_over = true;
}

/*
 * The candidate bucket @b's first refresh reads first, while the sweep
 * has not reached the bucket's use: reset() leaves every bucket at its
 * first place, and only a refresh, a take or a set-aside of the bucket,
 * all after the sweep reaches it, moves it on.  What the sweep's
 * prefetches ask for ahead of its steps (passes/plan.c).
 */
static inline uint32_t hyper_plan__ahead_cand(const struct plan_ctx *pc,
					      uint32_t b)
{
	return pc->idx[pc->by_b[b]];
}

/* plan_take.c */
enum { TAKEN, RETRY, NEVER };
int hyper_plan__try_take(struct plan_ctx *pc, uint32_t i, uint32_t k, int32_t *s0);
/* 0, or -ENOMEM (pc->mem failed). */
int hyper_plan__issue_in_deadline_order(struct plan_ctx *pc);

/* 0, or -ENOMEM with @pc freed. */
int hyper_plan__plan_init(struct plan_ctx *pc, const struct life *lf,
	      const struct profile *p, struct hp_mem *mem);
void hyper_plan__plan_free(struct plan_ctx *pc);

/*
 * Chooses gaps so that every step fits @budget, with transfers hidden in
 * the compute time of links @scale times faster than the profile's (a
 * scale above 1 spends slowdown where the link is the bottleneck).
 * Returns 0 with pc->ev/nev, or -1 with the step that cannot fit.
 */
/* 0: pc->ev fits @budget; -1: step *fail_step does not, pc->short_by over
 * it after every take it could make, pc->nev_before gaps taken before it;
 * -ENOMEM. */
int hyper_plan__plan_select(struct plan_ctx *pc, uint64_t budget, double scale,
		uint32_t *fail_step);
/* Compute time of the steps whose pool→device link time the last
 * selection used up: where a faster link would have been spent. */
double hyper_plan__plan_saturated_ns(const struct plan_ctx *pc);
/*
 * The selection at @budget only for that: *busy as the above gives it
 * after hyper_plan__plan_select() (0 if the selection fails), pc->ev as
 * taken, without issue steps or their order.  0, -1 (does not fit) or
 * -ENOMEM.
 */
int hyper_plan__plan_select_saturated(struct plan_ctx *pc, uint64_t budget,
				      double scale, double *busy);

#endif
