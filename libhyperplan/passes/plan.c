// SPDX-License-Identifier: LGPL-2.1-or-later
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
 * store does not fit never will.  Candidates sit in buckets by size
 * class (a quarter of an octave of bytes) and next use, each sorted by
 * start, and a range-minimum tree over the buckets finds, class by
 * class, the earliest start among those used late enough for the class's
 * cheapest prefetch to fit: the many that cannot are never walked.  The
 * link's free time only shrinks within a step, so a bucket left out
 * stays out of reach, and the candidates are tried in the same order as
 * with one bucket per next use (start, next use, tensor), less the tries
 * bound to fail.  Those no longer count towards MAX_TRIES.
 *
 * A class's reach is looked up only when the class may hold the next
 * candidate: until then it is bounded by the reach of the cheapest
 * prefetch of all (at the step's start) or by its reach before the
 * takes since, which only moved it later, and a take moves only the
 * reaches past the first step it took time from.  Most classes lose to
 * another's earlier start without a look-up.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "passes/gallop.h"
#include "passes/plan.h"
#include "util/huge.h"
#include "util/sort.h"

/* Candidates tried (and set aside) for one step before it is given up. */
#define MAX_TRIES	65536

#define NR_RAW_CLS	256

/* Loops over the classes counted before the guess is used or not. */
#define GUESS_TRY	1024

/*
 * What index_by_use() counts of the candidates, counted as
 * tensor_cands() lists them: its arrays are placed before the
 * candidates (sized by what hyper_plan__life_build() counted), so that
 * no candidate, and no tensor behind one, is read back for them.
 */
struct cand_index {
	uint32_t *by_j;		/* candidates used at j, two slots up */
	uint8_t *cls;		/* raw class of each candidate */
	uint64_t *key;
	uint32_t *xj;
	size_t off[NR_RAW_CLS + 1];	/* class s's used again, one up */
	uint64_t least[NR_RAW_CLS];	/* and the least bytes among them */
	void *blk;
};

/*
 * A quarter of an octave of bytes: prefetch costs within a class differ
 * by 19% at most.
 */
static uint32_t raw_class(uint64_t b)
{
	uint32_t oct;

	if (b < 4)
		return b;
	oct = 63 - __builtin_clzll(b);
	return 4 * oct + (uint32_t)(b >> (oct - 2) & 3);
}

/*
 * Every live gap of tensor t that has at least one step inside it, into
 * pc->c sized by what hyper_plan__life_build() counted of them, with
 * what index_by_use() counts of each into @ix.  The gaps are walked as
 * hyper_plan__gap_ends() and hyper_plan__gap_live() tell them, with the
 * accesses in locals: gap 0 is live when the tensor is live_in and
 * first read, gap i in 1..cnt-1 when access i reads, gap cnt when the
 * tensor is live_out.  Asking those two for every gap was a third of
 * this function at 1M decode operators.  The class, the tensor's
 * bytes and its smallness are the same for each of its gaps.
 */
static void tensor_cands(struct plan_ctx *pc, uint32_t t,
			 struct cand_index *ix)
{
	const struct life *lf = pc->lf;
	size_t base = lf->acc_off[t], cnt = lf->acc_off[t + 1] - base;
	size_t nc = pc->nc, x, i;
	const uint32_t *st = lf->acc_step + base;
	const uint8_t *rw = lf->acc_rw + base;
	struct cand *c = pc->c;
	int32_t w = -1, a, j, n = lf->n;
	uint32_t writes = 0, ep = pc->nep;
	uint8_t flags = lf->g->t[t].flags;
	uint64_t ub = lf->g->t[t].bytes;
	uint32_t cls = raw_class(ub);
	double bytes = ub, fetch = h2d_ns(pc->p, bytes);
	/*
	 * A tensor whose transfers are mostly latency frees less than the
	 * link time it costs, and its stores would split the link into runs
	 * too short for the tensors that matter: a last resort only.
	 */
	bool small = bytes / pc->p->h2d_bps * 1e9 < pc->p->latency_ns ||
		     bytes / pc->p->d2h_bps * 1e9 < pc->p->latency_ns;

	if (!cnt) {
		pc->nep = ep + 1;
		return;
	}
	j = st[0];
	if ((rw[0] & ACC_R) && (flags & TF_LIVE_IN) && j > 0) {
		pc->first_gap[t] = nc;
		c[nc++] = (struct cand){ t, -1, j, -1, ep, small };
	}
	for (i = 1; i < cnt; i++) {
		a = j;
		if (rw[i - 1] & ACC_W) {
			w = a;
			writes++;
		}
		j = st[i];
		if ((rw[i] & ACC_R) && a + 1 < j)
			c[nc++] = (struct cand){ t, a, j, w, ep + writes, small };
	}
	x = nc;			/* [pc->nc, x): used again */
	if (rw[cnt - 1] & ACC_W) {
		w = j;
		writes++;
	}
	if ((flags & TF_LIVE_OUT) && j + 1 < n) {
		c[nc++] = (struct cand){ t, j, n, w, ep + writes, small };
		pc->nc_end++;
		ix->by_j[n + 2]++;
	}
	pc->nep = ep + writes + 1;
	if (x > pc->nc) {
		if (!small && fetch < pc->min_fetch)
			pc->min_fetch = fetch;
		ix->off[cls + 1] += x - pc->nc;
		if (ub < ix->least[cls])
			ix->least[cls] = ub;
	}
	for (i = pc->nc; i < nc; i++) {
		ix->by_j[c[i].j + 2]++;
		ix->cls[i] = cls;
		pc->alive0[i] = !small;	/* small ones wait for a last resort */
	}
	pc->nc = nc;
}

static bool key_before(const uint64_t *a, const uint64_t *b)
{
	return *a < *b;
}

HU_DEFINE_SORT(sort_keys, uint64_t, key_before)

/*
 * Buckets of one class and next use, made from idx sorted by both: class
 * s holds idx[coff[s] .. coff[s + 1]), the use of idx[x] is xj[x].  The
 * @nb buckets were counted as idx was (index_by_use()), so that every
 * array sized by them is one block (pc->blk_b), the bucket tree's with
 * them.  The tree is left to the first sweep's reset_all(), which sets
 * every node: a plan_ctx is swept from there (pc->swept NONE), and
 * nothing reads the tree before a sweep.
 */
static int make_buckets(struct plan_ctx *pc, const size_t *coff,
			const uint32_t *xj, size_t m, uint32_t nb)
{
	uint32_t n = pc->lf->n, b, s;
	struct hu_part part[] = {
		HU_PART(pc->b_j, (size_t)nb + 1, false),
		HU_PART(pc->by_b, (size_t)nb + 2, false),
		HU_PART(pc->cls_b, (size_t)pc->ncls + 1, false),
		HU_PART(pc->b_cls, nb, false),
		HU_PART(pc->at_j, nb, false),
		HU_PART(pc->cur, (size_t)nb + 1, false),
		HU_PART(pc->aside_gen, (size_t)nb + 1, true),
		{ 0 },		/* the bucket tree */
	};
	size_t x;

	hyper_plan__seg_part(&pc->seg, nb, &part[ARRAY_SIZE(part) - 1]);
	pc->blk_b = hyper_plan__block(pc->mem, part, ARRAY_SIZE(part));
	if (!pc->blk_b)
		return -ENOMEM;
	pc->nb = 0;
	for (s = 0; s < pc->ncls; s++) {
		pc->cls_b[s] = pc->nb;
		for (x = coff[s]; x < coff[s + 1]; x++) {
			if (x > coff[s] && xj[x] == pc->b_j[pc->nb - 1])
				continue;
			pc->b_j[pc->nb] = xj[x];
			pc->b_cls[pc->nb] = s;
			pc->at_off[xj[x] + 1]++;
			pc->by_b[pc->nb++] = x;
		}
	}
	pc->cls_b[pc->ncls] = pc->nb;
	pc->b_j[pc->nb] = n;
	pc->by_b[pc->nb] = m;		/* bucket nb: the gaps to the end */
	pc->by_b[pc->nb + 1] = pc->nc;
	for (x = 0; x <= n; x++)
		pc->at_off[x + 1] += pc->at_off[x];
	for (b = 0; b < pc->nb; b++)	/* at_off[j] ends as j's first */
		pc->at_j[pc->at_off[pc->b_j[b]]++] = b;
	for (x = n + 1; x > 0; x--)
		pc->at_off[x] = pc->at_off[x - 1];
	pc->at_off[0] = 0;
	return 0;
}

/*
 * index_by_use()'s arrays, before tensor_cands() fills them: by_j is
 * counted two slots up, as life.c counts.
 */
static int index_begin(struct plan_ctx *pc, struct cand_index *ix)
{
	size_t nc = pc->lf->nlive;
	uint32_t s;
	struct hu_part part[] = {
		HU_PART(ix->by_j, (size_t)pc->lf->n + 3, true),
		HU_PART(ix->cls, nc, false),
		HU_PART(ix->key, nc, false),
		HU_PART(ix->xj, nc, false),	/* those used again */
	};

	memset(ix->off, 0, sizeof(ix->off));
	for (s = 0; s < NR_RAW_CLS; s++)
		ix->least[s] = UINT64_MAX;
	ix->blk = hyper_plan__block(pc->mem, part, ARRAY_SIZE(part));
	return ix->blk ? 0 : -ENOMEM;
}

/*
 * Candidates by size class and next use (j = n, not used again, in one
 * bucket of its own at the end), each bucket by start, then tensor.
 *
 * The candidates were counted by use and class as they were listed
 * (tensor_cands()); here only a key per candidate, (start + 1) << 32 |
 * index, moves: grouped by use, each group sorted (the index stands for
 * the tensor: tensor_cands() adds the tensors in order, and no tensor
 * has two gaps used at one step), then stable by class, reading a byte
 * per candidate, and counting the buckets (a class's candidates of one
 * use land together, one use after another).  Following the indices
 * back into the candidates and their tensors at each of these steps was
 * half of this function at 1M decode operators, nearly all of it cache
 * misses.  A class's cheapest prefetch is its least tensor's: h2d_ns()
 * does not fall as the bytes grow.  @ix is freed.
 */
static int index_by_use(struct plan_ctx *pc, struct cand_index *ix)
{
	struct hp_mem *mem = pc->mem;
	uint32_t n = pc->lf->n, map[NR_RAW_CLS], last[NR_RAW_CLS], s, j;
	uint32_t *by_j = ix->by_j, *xj = ix->xj, nb = 0;
	size_t i, x, m, *off = ix->off;
	uint8_t *cls = ix->cls;
	uint64_t *key = ix->key;
	int ret = -ENOMEM;

	for (j = 0; j <= n; j++)	/* by_j[j + 1]: j's first */
		by_j[j + 2] += by_j[j + 1];
	for (i = 0; i < pc->nc; i++)	/* by_j[j + 1] ends as j's end */
		key[by_j[pc->c[i].j + 1]++] =
			(uint64_t)(uint32_t)(pc->c[i].a + 1) << 32 | i;
	for (j = 0; j <= n; j++)	/* most uses end one gap or none */
		if (by_j[j + 1] - by_j[j] > 1)
			sort_keys(key + by_j[j], by_j[j + 1] - by_j[j]);
	m = by_j[n];
	for (s = 0, pc->ncls = 0; s < NR_RAW_CLS; s++) {
		map[s] = pc->ncls;
		pc->ncls += off[s + 1] > 0;
		off[s + 1] += off[s];
		last[s] = NONE;
	}
	pc->cls_cost = hyper_plan__array(mem, pc->ncls, sizeof(double));
	if (!pc->cls_cost)
		goto out;
	for (s = 0; s < NR_RAW_CLS; s++)
		if (off[s + 1] > off[s])
			pc->cls_cost[map[s]] = h2d_ns(pc->p, ix->least[s]);
	for (j = 0; j < n; j++) {	/* then stable by class */
		for (i = by_j[j]; i < by_j[j + 1]; i++) {
			uint32_t k = (uint32_t)key[i];

			s = cls[k];
			nb += last[s] != j;
			last[s] = j;
			x = off[s]++;
			pc->idx[x] = k;
			xj[x] = j;
		}
	}
	for (i = m; i < pc->nc; i++)
		pc->idx[i] = (uint32_t)key[i];
	for (s = NR_RAW_CLS; s > 0; s--)	/* off[s]: s's first again */
		off[s] = off[s - 1];
	off[0] = 0;
	for (s = 0; s < NR_RAW_CLS; s++)	/* each class as mapped */
		off[map[s]] = off[s];
	off[pc->ncls] = m;
	if (make_buckets(pc, off, xj, m, nb))
		goto out;
	pc->cls_lo = hyper_plan__array(mem, pc->ncls, sizeof(*pc->cls_lo));
	pc->cls_from = hyper_plan__array(mem, pc->ncls, sizeof(*pc->cls_from));
	pc->cls_stale = hyper_plan__calloc(mem, pc->ncls, 1);
	pc->cls_base = hyper_plan__array(mem, pc->ncls, sizeof(*pc->cls_base));
	pc->cls_reach = hyper_plan__array(mem, pc->ncls,
					  sizeof(*pc->cls_reach));
	pc->min_key = hyper_plan__array(mem, pc->ncls, sizeof(*pc->min_key));
	pc->min_lo = hyper_plan__array(mem, pc->ncls, sizeof(*pc->min_lo));
	pc->min_b = hyper_plan__array(mem, pc->ncls, sizeof(*pc->min_b));
	pc->alt_key = hyper_plan__array(mem, pc->ncls, sizeof(*pc->alt_key));
	pc->alt_lo = hyper_plan__array(mem, pc->ncls, sizeof(*pc->alt_lo));
	pc->alt_b = hyper_plan__array(mem, pc->ncls, sizeof(*pc->alt_b));
	pc->cls_floor = hyper_plan__calloc(mem, pc->ncls,
					   sizeof(*pc->cls_floor));
	pc->cls_gen = hyper_plan__calloc(mem, pc->ncls, sizeof(*pc->cls_gen));
	pc->cls_now = hyper_plan__array(mem, pc->ncls, sizeof(*pc->cls_now));
	pc->cls_base2 = hyper_plan__array(mem, pc->ncls,
					  sizeof(*pc->cls_base2));
	pc->cls_ask2 = hyper_plan__calloc(mem, pc->ncls, sizeof(*pc->cls_ask2));
	pc->cls_floor2 = hyper_plan__calloc(mem, pc->ncls,
					    sizeof(*pc->cls_floor2));
	pc->cls_next = hyper_plan__array(mem, (size_t)pc->ncls * pc->ncls,
					 sizeof(*pc->cls_next));
	if (pc->cls_lo && pc->cls_from && pc->cls_stale && pc->cls_base &&
	    pc->cls_reach && pc->min_key && pc->min_lo && pc->min_b &&
	    pc->alt_key && pc->alt_lo && pc->alt_b &&
	    pc->cls_floor && pc->cls_gen && pc->cls_now && pc->cls_base2 &&
	    pc->cls_ask2 && pc->cls_floor2 && pc->cls_next)
		ret = 0;
	for (s = 0; !ret && s < pc->ncls; s++)	/* bucket_near()'s hints */
		pc->cls_lo[s] = pc->cls_base[s] = pc->cls_reach[s] =
			pc->cls_base2[s] = pc->cls_b[s];
	for (x = 0; !ret && x < (size_t)pc->ncls * pc->ncls; x++)
		pc->cls_next[x] = x % pc->ncls;	/* the last pick's again */
out:
	hyper_plan__free(pc->mem, ix->blk);
	return ret;
}

/*
 * The arrays sized by the tensors, the steps and the candidates, in one
 * block (pc->blk): each of them is fresh memory of 0.2 to 2.5 MB at 100k
 * decode operators, on 4 KiB pages apart.  The candidates and their
 * values are counted by hyper_plan__life_build(), so that the block
 * comes before them: the candidates grown by doubling touched about
 * twice their size in fresh pages, and stood apart.
 */
static int once_arrays(struct plan_ctx *pc)
{
	const struct life *lf = pc->lf;
	size_t n = lf->n, nc = lf->nlive;
	struct hu_part part[] = {
		HU_PART(pc->first_gap, lf->g->nt, false),
		HU_PART(pc->c, nc, false),
		HU_PART(pc->idx, nc, false),
		HU_PART(pc->at_off, n + 2, true),
		HU_PART(pc->cap, n, false),
		HU_PART(pc->ep, lf->nvals, false),
		HU_PART(pc->delta, n + 1, false),
		HU_PART(pc->alive, nc, false),
		HU_PART(pc->alive0, nc, false),
		HU_PART(pc->due_off, n + 2, false),
		HU_PART(pc->ep_undo, EP_UNDO, false),
		HU_PART(pc->delta_undo, DELTA_UNDO, false),
	};

	pc->blk = hyper_plan__block(pc->mem, part, ARRAY_SIZE(part));
	return pc->blk ? 0 : -ENOMEM;
}

int hyper_plan__plan_init(struct plan_ctx *pc, const struct life *lf,
	      const struct profile *p, struct hp_mem *mem)
{
	const struct graph *g = lf->g;
	struct cand_index ix;
	uint32_t t, k, n = lf->n;

	memset(pc, 0, sizeof(*pc));
	pc->lf = lf;
	pc->p = p;
	pc->mem = mem;
	pc->min_fetch = 1e300;
	if (once_arrays(pc) || index_begin(pc, &ix))
		goto fail;
	for (t = 0; t < g->nt; t++) {
		pc->first_gap[t] = NONE;
		if (!(g->t[t].flags & TF_PIN))
			tensor_cands(pc, t, &ix);
	}
	if (index_by_use(pc, &ix))
		goto fail;
	for (k = 0; k < n; k++)
		pc->cap[k] = g->op[lf->order[k]].compute_ns;
	/* prefetches take time latest first, stores in runs */
	if (hyper_plan__cal_init(&pc->h2d, n, CAL_LATEST, mem) ||
	    hyper_plan__cal_init_twin(&pc->d2h, &pc->h2d, CAL_RUNS, mem))
		goto fail;
	pc->gen = 1;
	pc->swept = NONE;
	pc->delta_ring = DELTA_UNDO;
	pc->ex_k = NONE;
	pc->base_lo = NONE;
	pc->base2_lo = NONE;
	pc->snap_need = INT64_MAX;
	pc->guess_left = GUESS_TRY;
	pc->cls_steady = true;
	return 0;
fail:
	hyper_plan__plan_free(pc);
	return -ENOMEM;
}

void hyper_plan__plan_free(struct plan_ctx *pc)
{
	hyper_plan__free(pc->mem, pc->blk);
	hyper_plan__free(pc->mem, pc->blk_b);
	hyper_plan__free(pc->mem, pc->cls_cost);
	hyper_plan__free(pc->mem, pc->cls_lo);
	hyper_plan__free(pc->mem, pc->cls_from);
	hyper_plan__free(pc->mem, pc->cls_stale);
	hyper_plan__free(pc->mem, pc->cls_base);
	hyper_plan__free(pc->mem, pc->cls_reach);
	hyper_plan__free(pc->mem, pc->min_key);
	hyper_plan__free(pc->mem, pc->min_lo);
	hyper_plan__free(pc->mem, pc->min_b);
	hyper_plan__free(pc->mem, pc->alt_key);
	hyper_plan__free(pc->mem, pc->alt_lo);
	hyper_plan__free(pc->mem, pc->alt_b);
	hyper_plan__free(pc->mem, pc->cls_floor);
	hyper_plan__free(pc->mem, pc->cls_gen);
	hyper_plan__free(pc->mem, pc->cls_now);
	hyper_plan__free(pc->mem, pc->cls_base2);
	hyper_plan__free(pc->mem, pc->cls_ask2);
	hyper_plan__free(pc->mem, pc->cls_floor2);
	hyper_plan__free(pc->mem, pc->cls_next);
	hyper_plan__free(pc->mem, pc->aside);
	hyper_plan__cal_free_in(&pc->h2d, pc->mem);
	hyper_plan__cal_free_in(&pc->d2h, pc->mem);
	hyper_plan__free(pc->mem, pc->ev);
	hyper_plan__free(pc->mem, pc->ev_sorted);
	hyper_plan__free(pc->mem, pc->ex_ev);
	hyper_plan__cal_snap_free(&pc->snap.h2d);
	hyper_plan__cal_snap_free(&pc->snap.d2h);
	hyper_plan__free(pc->mem, pc->snap.ev);
	hyper_plan__free(pc->mem, pc->snap.ep_x);
	hyper_plan__free(pc->mem, pc->snap.ep_v);
	hyper_plan__free(pc->mem, pc->snap.delta);
	memset(pc, 0, sizeof(*pc));
}

/*
 * Every bucket, the epochs, delta and the link calendars as a sweep
 * starts; the second way only what the last sweep wrote (reset()).
 */
static void reset_all(struct plan_ctx *pc, double scale)
{
	uint32_t n = pc->lf->n;
	size_t i;

	hyper_plan__cal_reset(&pc->h2d, pc->cap, scale);
	hyper_plan__cal_reset(&pc->d2h, pc->cap, scale);
	for (i = 0; i < pc->nep; i++)
		pc->ep[i] = (struct epoch_store){ -1, 0, false };
	memset(pc->delta, 0, (n + 1) * sizeof(*pc->delta));
	for (i = 0; i <= pc->nb; i++)
		pc->cur[i] = pc->by_b[i];
	hyper_plan__seg_clear(&pc->seg);
}

/*
 * A sweep that failed at step k touched the buckets used after k alone
 * (refresh() sees no other), the delta and epochs it noted, and the
 * calendars' steps they say (hyper_plan__cal_restore()): those go back
 * as reset_all() would set them, the rest already is.  Past a quarter of
 * the buckets, copying every place back is cheaper.
 *
 * The tree keeps the leaves the sweep wrote: no look-up reads a bucket
 * the next sweep has not reached (every range asked starts at or past
 * the step's first use, and each step's buckets are refreshed as it
 * starts), and the next sweep's refresh() writes a leaf only where its
 * key differs, mostly where the last sweep took or set candidates
 * aside.  Setting each leaf back to none, then again to the same key
 * as the sweep came by, made most of the tree's writes: 824 k over the
 * sweeps of DeepSeek-V2-Lite training's search, where 86 k are left.
 */
static void reset_written(struct plan_ctx *pc, double scale)
{
	uint32_t n = pc->lf->n, x, b, end;

	hyper_plan__cal_restore(&pc->h2d, pc->cap, scale);
	hyper_plan__cal_restore(&pc->d2h, pc->cap, scale);
	if (pc->ep_over) {
		for (x = 0; x < pc->nep; x++)
			pc->ep[x] = (struct epoch_store){ -1, 0, false };
	} else {
		for (x = 0; x < pc->nep_undo; x++)
			pc->ep[pc->ep_undo[x]] =
				(struct epoch_store){ -1, 0, false };
	}
	/*
	 * The steps reached are clear already: sweep() reads each once.
	 * Below, the entries written, one by one where they are fewer than
	 * the range's (a sweep that fails near its start at decode takes a
	 * few hundred gaps, whose starts lie all over the graph).
	 */
	end = pc->delta_hi < pc->swept ? pc->delta_hi + 1 : pc->swept;
	if (pc->delta_lo < end) {
		if (pc->ndelta_undo <= pc->delta_ring &&
		    pc->ndelta_undo < end - pc->delta_lo)
			for (x = 0; x < pc->ndelta_undo; x++)
				pc->delta[pc->delta_undo[x]] = 0;
		else
			memset(pc->delta + pc->delta_lo, 0,
			       (end - pc->delta_lo) * sizeof(*pc->delta));
	}
	pc->cur[pc->nb] = pc->by_b[pc->nb];
	if (pc->at_off[n + 1] - pc->at_off[pc->swept + 1] > pc->nb / 4) {
		memcpy(pc->cur, pc->by_b, pc->nb * sizeof(*pc->cur));
		return;
	}
	for (x = pc->at_off[pc->swept + 1]; x < pc->at_off[n + 1]; x++) {
		b = pc->at_j[x];
		pc->cur[b] = pc->by_b[b];
	}
}

static void reset(struct plan_ctx *pc, double scale)
{
	size_t i;

	pc->scale = scale;
	if (pc->swept == NONE || pc->scratch)
		reset_all(pc, scale);
	else
		reset_written(pc, scale);
	if (pc->scratch)
		for (i = 0; i < pc->nc; i++)
			pc->alive[i] = !pc->c[i].small || scale >= ANY_WAIT;
	else if (scale >= ANY_WAIT)
		memset(pc->alive, 1, pc->nc);
	else
		memcpy(pc->alive, pc->alive0, pc->nc);
	for (i = 0; i < pc->ncls; i++)
		pc->min_lo[i] = pc->alt_lo[i] = NONE;
	pc->base_lo = NONE;	/* the floors set anew (class_base_at()) */
	if (pc->base2_lo != NONE) {
		pc->base2_lo = NONE;
		memset(pc->cls_floor2, 0, pc->ncls * sizeof(*pc->cls_floor2));
	}
	pc->swept = pc->lf->n;
	pc->delta_lo = pc->lf->n + 1;
	pc->delta_hi = 0;
	pc->ndelta_undo = 0;
	pc->nep_undo = 0;
	pc->ep_over = false;
	pc->nev = 0;
}

struct fit {
	uint32_t k;
	int64_t over;
	int64_t *absent;
	uint32_t tries;
};

/* A snapshot pays when its steps cost less to copy than its takes. */
#define SNAP_TAKE	16

/*
 * The take of gap @i just brought the sweep's absent bytes to
 * pc->snap_need.  At step n - 1, in the walk of the gaps to the end (the
 * gap is one), that is the take that fitted the step within
 * pc->keep_aim: every sweep at that aim or below, on these links, has
 * made the same takes in the same order so far (see snap_begin()), and
 * is here.  Elsewhere (a later step, or a prefetch the step's classes
 * gave) nothing is kept, and no later take asks again.  What the sweep
 * wrote since its reset is kept (the calendars' steps from the first
 * written, the epochs and delta noted for reset_written(), the
 * evictions); the candidates it killed are those the walk passed and the
 * start gaps of the evictions from a gap's start.  A snapshot is taken
 * only when its steps cost less to copy than the takes it saves, and
 * never where the epochs written went past the undo list.  Out of
 * memory: none kept, pc->mem says so.
 */
static __attribute__((noinline)) void snap_save(struct plan_ctx *pc,
						const struct fit *f,
						uint32_t i)
{
	struct plan_snap *s = &pc->snap;
	struct hp_mem *mem = pc->mem;
	uint32_t n = pc->lf->n, nb = pc->nb, x;
	size_t steps = (size_t)(n - pc->h2d.dirty) + (n - pc->d2h.dirty);
	size_t nd = pc->delta_lo <= pc->delta_hi ?
		    pc->delta_hi - pc->delta_lo + 1 : 0, at;

	pc->snap_need = INT64_MAX;
	if (f->k + 1 != n || pc->c[i].j != (int32_t)n || pc->ep_over ||
	    pc->nev * SNAP_TAKE < steps + nd)
		return;
	for (at = pc->cur[nb]; pc->idx[at] != i; at++)	/* the walk's place */
		;
	s->aim = 0;
	if (hyper_plan__cal_save(&pc->h2d, &s->h2d, mem) ||
	    hyper_plan__cal_save(&pc->d2h, &s->d2h, mem) ||
	    hyper_plan__grow(mem, &s->ev, &s->cap_ev, pc->nev, sizeof(*s->ev)) ||
	    hyper_plan__grow(mem, &s->ep_x, &s->cap_ep, pc->nep_undo,
			     sizeof(*s->ep_x)) ||
	    hyper_plan__grow(mem, &s->ep_v, &s->cap_epv, pc->nep_undo,
			     sizeof(*s->ep_v)))
		return;
	if (nd && hyper_plan__grow(mem, &s->delta, &s->cap_delta, nd,
				   sizeof(*s->delta)))
		return;
	memcpy(s->ev, pc->ev, pc->nev * sizeof(*s->ev));
	s->nev = pc->nev;
	for (x = 0; x < pc->nep_undo; x++) {
		s->ep_x[x] = pc->ep_undo[x];
		s->ep_v[x] = pc->ep[pc->ep_undo[x]];
	}
	s->nep = pc->nep_undo;
	s->delta_lo = pc->delta_lo;
	s->delta_hi = pc->delta_hi;
	if (nd)
		memcpy(s->delta, pc->delta + pc->delta_lo, nd * sizeof(*s->delta));
	s->absent = *f->absent;
	s->next = at + 1;
	s->scale = pc->scale;
	s->aim = pc->keep_aim;
}

/* Tries candidate i for the step; true once the step fits. */
static bool offer(struct plan_ctx *pc, struct fit *f, uint32_t i)
{
	uint64_t b = pc->lf->g->t[pc->c[i].t].bytes;
	int32_t s0;
	int r;

	if (pc->c[i].small && pc->scale < ANY_WAIT)
		return false;
	r = hyper_plan__try_take(pc, i, f->k, &s0);
	if (r == TAKEN) {
		pc->alive[i] = 0;
		*f->absent += b;
		f->over -= b;
		if (s0 > 0)
			plan_delta_add(pc, s0 - 1, -(int64_t)b);
		if (*f->absent >= pc->snap_need)
			snap_save(pc, f, i);
	} else {
		if (r == NEVER)
			pc->alive[i] = 0;
		f->tries++;
	}
	return f->over <= 0;
}

/*
 * Bucket b's key is now @key: a minimum kept from bucket *@lo on, *@min
 * in bucket *@mb, with b in its range, follows it.  A key below the
 * minimum is the new one; only the bucket holding the minimum, grown,
 * needs the tree again.  Within a class a key's low half is its
 * bucket's use, so the minimum names its bucket.
 */
static inline __attribute__((always_inline)) void
min_follow(const struct plan_ctx *pc, uint32_t *lo, uint64_t *min,
	   uint32_t *mb, uint32_t b, uint64_t key)
{
	uint64_t was = *min;

	if (key < was) {
		*min = key;
		*mb = b;
	} else if (was != SEG_NONE && (uint32_t)was == pc->b_j[b]) {
		*lo = NONE;
	}
}

/*
 * The minima kept of b's class (class_min_find()) follow its new key.  A
 * bucket before the first kept range leaves both alone (the sweep's new
 * buckets, used at k + 1, lie there nearly always): the second lies
 * past the first.  The first lost, the second takes its place.
 */
static void class_min_moved(struct plan_ctx *pc, uint32_t b, uint64_t key)
{
	uint32_t s = pc->b_cls[b];

	if (b < pc->min_lo[s])	/* NONE, unknown, lies past every bucket */
		return;
	if (b >= pc->alt_lo[s])
		min_follow(pc, &pc->alt_lo[s], &pc->alt_key[s], &pc->alt_b[s],
			   b, key);
	min_follow(pc, &pc->min_lo[s], &pc->min_key[s], &pc->min_b[s], b, key);
	if (pc->min_lo[s] == NONE) {
		pc->min_lo[s] = pc->alt_lo[s];
		pc->min_key[s] = pc->alt_key[s];
		pc->min_b[s] = pc->alt_b[s];
		pc->alt_lo[s] = NONE;
	}
}

/*
 * Bucket b's first live candidate goes into the tree (b < nb).  Inline:
 * a full sweep runs it once per bucket and again per candidate taken,
 * and the call's own instructions were a tenth of it.
 */
static inline void refresh(struct plan_ctx *pc, uint32_t b)
{
	uint32_t *x = &pc->cur[b];
	uint64_t key;

	while (*x < pc->by_b[b + 1] && !pc->alive[pc->idx[*x]])
		(*x)++;
	key = *x < pc->by_b[b + 1] ?
	      (uint64_t)(pc->c[pc->idx[*x]].a + 1) << 32 | pc->b_j[b] :
	      SEG_NONE;
	/*
	 * A key unchanged leaves the tree and the class's minimum as they
	 * are: a take or a set-aside whose next candidate has the same
	 * start (half of the calls at decode), or a bucket the sweep
	 * reaches whose leaf the last sweep left with this key
	 * (reset_written()).  class_min_moved() would only have dropped a
	 * minimum still right.
	 */
	if (hyper_plan__seg_get(&pc->seg, b) == key && !pc->scratch)
		return;
	hyper_plan__seg_set(&pc->seg, b, key);
	class_min_moved(pc, b, key);
}

/*
 * What the offers of one step's gaps to the end saw of the device→pool
 * link, for the next while the link is as it was (offer_final_missed()
 * resets it after each take): no step with time left from full_lo to
 * hi, and the time left in [lo, hi], before_hi - the time before lo.
 */
struct store_miss {
	uint32_t full_lo;	/* NONE: not known; hi is k - 1 */
	uint32_t lo;		/* NONE: avail not known */
	bool hi_known;		/* before_hi looked up */
	double before_hi, avail;
};

static inline void store_miss_reset(struct store_miss *m)
{
	*m = (struct store_miss){ NONE, NONE, false, 0, 0 };
}

/*
 * Whether the offer of gap @i, to the end, ends NEVER at step @k, told
 * from what the offers since the link last changed saw of it (@m)
 * without a run search; false if it might not, or @m cannot tell (the
 * offer then runs whole).  Inline: a failing step asks it thousands of
 * times in a row.
 *
 * A gap to the end needs no prefetch; if its value has no pool copy yet,
 * hyper_plan__try_take() searches the device→pool link for a run in
 * [w + 1, k - 1].  When a step's gaps to the end fail, they fail by the
 * thousand (DeepSeek-V2-Lite training: 436 k searches at 57 steps), with
 * the link unchanged between: no take comes between them.  A window from
 * full_lo with no step with time left leaves none to a window from a
 * later step (the next step with time left is no earlier), and the time
 * left in the window from lo serves every store searched from lo: the
 * same two sums as hyper_plan__cal_find_run()'s, on the same tree, the
 * same bits.  Both pay as the gaps come by start, each written where it
 * starts: the windows only shrink, several begin at one step.
 */
static inline bool store_never(struct plan_ctx *pc, uint32_t i, uint32_t k,
			       struct store_miss *m)
{
	const struct cand *c = &pc->c[i];
	const struct epoch_store *es = &pc->ep[c->epoch];
	double b = pc->lf->g->t[c->t].bytes;
	uint32_t lo = c->w + 1;

	/* not the store's search in value_check(), or offer()'s small */
	if (c->j < (int32_t)pc->lf->n || c->a < 0 || c->w < 0 || c->small ||
	    pc->scale >= ANY_WAIT || es->clean ||
	    (es->last >= 0 && es->issue <= 2 * c->a + 1))
		return false;
	if (!k || lo > k - 1 || (m->full_lo != NONE && lo >= m->full_lo))
		return true;
	if (lo != m->lo) {	/* m->lo has a step with time left */
		if (hyper_plan__cal_next(&pc->d2h, lo) > k - 1) {
			m->full_lo = lo;
			return true;
		}
		if (!m->hi_known)
			m->before_hi = hyper_plan__cal_before(&pc->d2h, k);
		m->hi_known = true;
		m->avail = m->before_hi - hyper_plan__cal_before(&pc->d2h, lo);
		m->lo = lo;
	}
	return m->avail < d2h_ns(pc->p, b);
}

/*
 * The rest of offer_final()'s walk from @x, after an offer there that
 * took nothing: each gap store_never() knows ends NEVER is marked so
 * without its offer.  Out of line: most walks never get here (decode).
 */
static __attribute__((noinline)) bool
offer_final_missed(struct plan_ctx *pc, struct fit *f, size_t x)
{
	uint32_t n = pc->nb, i;
	bool missed = true;
	struct store_miss m;
	size_t nev;

	store_miss_reset(&m);
	while (++x < pc->by_b[n + 1] && pc->c[pc->idx[x]].a < (int32_t)f->k) {
		i = pc->idx[x];
		if (!pc->alive[i])
			continue;
		if (missed && store_never(pc, i, f->k, &m)) {
			pc->alive[i] = 0;	/* offer()'s NEVER */
			f->tries++;
			pc->miss_hits++;
			continue;
		}
		nev = pc->nev;
		if (offer(pc, f, i))
			return true;
		if (pc->nev != nev) {
			missed = false;
		} else if (!missed) {
			store_miss_reset(&m);
			missed = true;
		}
	}
	return false;
}

/*
 * The gaps to the end first: they need no prefetch, never wait.  An
 * offer of one always ends it (taken, or its store never fits: no
 * prefetch to retry further back), so every gap the walk passes is dead
 * and the next walk starts past them, also after one that fitted the
 * step: restarting from the old first left every step that fitted here
 * walking all the dead gaps again (a third of OLMoE's selection).  After
 * an offer that took nothing, the link is as it saw it until the next
 * take (offer_final_missed()).
 */
static bool offer_final(struct plan_ctx *pc, struct fit *f)
{
	uint32_t n = pc->nb;
	bool fits = false;
	size_t x, nev;

	for (x = pc->cur[n]; x < pc->by_b[n + 1] &&
	     pc->c[pc->idx[x]].a < (int32_t)f->k; x++) {
		if (!pc->alive[pc->idx[x]])
			continue;
		nev = pc->nev;
		if (offer(pc, f, pc->idx[x])) {
			fits = true;
			break;
		}
		if (pc->nev == nev && !pc->scratch) {
			fits = offer_final_missed(pc, f, x);
			break;
		}
	}
	while (pc->cur[n] < pc->by_b[n + 1] && !pc->alive[pc->idx[pc->cur[n]]])
		pc->cur[n]++;
	return fits;
}

/*
 * Bucket b's first candidate is set aside for this step.  Whether the
 * bucket is already in the list is its generation mark: O(1), where a
 * scan of the list made a step with many tries quadratic.
 */
static void set_aside(struct plan_ctx *pc, uint32_t b)
{
	if (pc->aside_gen[b] != pc->gen) {	/* remember where it was */
		/* out of memory: pc->mem says so, hyper_plan__plan_select() fails */
		if (hyper_plan__grow(pc->mem, &pc->aside, &pc->cap_aside, pc->naside,
			    sizeof(*pc->aside)))
			return;
		pc->aside_gen[b] = pc->gen;
		pc->aside[pc->naside++] = (uint64_t)b << 32 | pc->cur[b];
	}
	pc->cur[b]++;
	refresh(pc, b);
}

/*
 * A key of class s's bucket at or past the class's base: the class's
 * floor follows it down.  Keys come down only where a bucket's place
 * goes back (a take or a set-aside moves it on): the set-asides coming
 * back (restore_aside()), and the buckets each step brings into the
 * tree, which are used before the base that the last step over budget
 * set (a step's first use lies past the step) and are met, keys and
 * all, by the base's walk down to them (class_base_at()).  A sweep's
 * first step over budget sets the floors anew (reset() drops the base).
 * With @two, the same for the second base and floor (cls_floor2[]);
 * floor_others and floor_beyond follow either.
 */
static inline void class_floor_lower(struct plan_ctx *pc, bool two,
				     uint32_t s, uint64_t key)
{
	uint64_t *floor = two ? pc->cls_floor2 : pc->cls_floor;
	uint64_t other = two ? pc->cls_floor[s] : pc->cls_floor2[s];

	if (key >= floor[s])
		return;
	floor[s] = key;
	if (s == pc->cls_pick || (two && s < pc->cls_pick))
		return;
	if (!two && key < pc->floor_others)
		pc->floor_others = key;
	if (s > pc->cls_pick && other > key)	/* floor_beyond's two */
		key = other;
	if (key < pc->floor_beyond)
		pc->floor_beyond = key;
}

static void restore_aside(struct plan_ctx *pc)
{
	uint32_t s;
	size_t x;

	for (x = 0; x < pc->naside; x++) {
		uint32_t j = pc->aside[x] >> 32;

		pc->cur[j] = (uint32_t)pc->aside[x];
		refresh(pc, j);
		s = pc->b_cls[j];
		if (j >= pc->cls_base[s])
			class_floor_lower(pc, false, s,
					  hyper_plan__seg_get(&pc->seg, j));
		if (pc->base2_lo != NONE && j >= pc->cls_base2[s])
			class_floor_lower(pc, true, s,
					  hyper_plan__seg_get(&pc->seg, j));
	}
	pc->naside = 0;
	if (!++pc->gen) {		/* wrapped: no mark may match by chance */
		memset(pc->aside_gen, 0, (pc->nb + 1) * sizeof(*pc->aside_gen));
		pc->gen = 1;
	}
}

/*
 * The first use late enough for the cheapest prefetch to fit, from the
 * time offered before step k + 1 (pc->before, set here):
 * hyper_plan__cal_reach() in its two halves, the same sums.
 * class_reach() keeps that time where no take since took time before
 * k + 1, where it looked it up again (one Fenwick walk a step over
 * budget: 105 k of them at DeepSeek-V2-Lite training).
 */
static uint32_t first_use(struct plan_ctx *pc, uint32_t k)
{
	if (pc->scale >= ANY_WAIT)
		return k + 1;
	pc->before = hyper_plan__cal_before(&pc->h2d, k + 1);
	return hyper_plan__cal_reach_sum(&pc->h2d, pc->before +
					 pc->min_fetch) + 1;
}

struct bucket_key {
	const uint32_t *b_j;
	uint32_t j;
};

static bool bucket_past(const void *arg, uint32_t i)
{
	const struct bucket_key *k = arg;

	return k->b_j[i] >= k->j;
}

/*
 * The first of buckets lo .. hi - 1 used at step j or later, searched
 * out from lo: it finds the bucket of a class's minimum, which lies
 * mostly a few buckets past the class's reach (at 10k decode operators
 * the gallop costs a fifth less than the bisection did).
 */
static uint32_t bucket_from(const struct plan_ctx *pc, uint32_t lo,
			    uint32_t hi, uint32_t j)
{
	const struct bucket_key k = { pc->b_j, j };

	return gallop_first(lo, hi, pc->scratch ? NONE : lo, bucket_past, &k);
}

/*
 * The same, searched out from bucket @hint (the answer of a nearby
 * look-up): the reach moves by a few steps from one step to the next.
 * Within a class b_j only grows, as gallop_first() needs.
 */
static uint32_t bucket_near(const struct plan_ctx *pc, uint32_t lo,
			    uint32_t hi, uint32_t j, uint32_t hint)
{
	const struct bucket_key k = { pc->b_j, j };

	return gallop_first(lo, hi, pc->scratch ? NONE : hint, bucket_past,
			    &k);
}

/*
 * For each class, the first bucket whose use is late enough for the
 * class's cheapest prefetch to fit after step k (a nanosecond short,
 * against rounding: a bucket kept in by it only costs a try).  Inline in
 * class_ask()'s two places: at 100k decode operators its 319 k calls
 * cost 15 instructions each in the call alone.
 */
static inline __attribute__((always_inline)) void
reach_of(struct plan_ctx *pc, uint32_t s, uint32_t lo)
{
	double cost = pc->cls_cost[s] > 1 ? pc->cls_cost[s] - 1 : 0;
	uint32_t from = lo;

	if (pc->scale < ANY_WAIT)	/* cal_reach(k + 1, cost) */
		from = hyper_plan__cal_reach_sum(&pc->h2d, pc->before + cost) + 1;
	pc->cls_from[s] = from;
	pc->cls_lo[s] = bucket_near(pc, pc->cls_b[s], pc->cls_b[s + 1],
				    from > lo ? from : lo, pc->cls_reach[s]);
	pc->cls_reach[s] = pc->cls_lo[s];
	pc->cls_stale[s] = 0;
}

/* Steps of first use apart beyond which a gallop per class costs less. */
#define BASE_WALK	32

/*
 * The second base is walked (next_bucket()) while at least one pick in
 * BEYOND_PAYS that walked it ends there, give or take BEYOND_TRY: at
 * decode almost none does, and the walk would cost more than it saves.
 */
#define BEYOND_PAYS	4
#define BEYOND_TRY	256

/*
 * Each class's first bucket used at step lo or later (cls_base[]), from
 * the one used at pc->base_lo or later.  Those differ only in the
 * classes of the buckets used between the two steps, which at_j lists
 * step by step: walked down, each such bucket is its class's first so
 * far; walked up, a class's first left behind gives way to its next
 * bucket (within a class, buckets come in order of use), which the walk
 * meets again if it too is left behind.  From one step over budget to
 * the next the first use moves by a few steps and a few buckets, where
 * a gallop per class read every class (DeepSeek-V2-Lite training: 24
 * classes, 17 of them holding buckets).  The same buckets as
 * bucket_near() finds: what the answer is depends on lo alone, so it
 * holds across sweeps.
 */
static inline __attribute__((always_inline)) void
class_base_at(struct plan_ctx *pc, bool two, uint32_t lo)
{
	uint32_t *at = two ? &pc->base2_lo : &pc->base_lo, was = *at, j, x, b;
	uint32_t *base = two ? pc->cls_base2 : pc->cls_base, s;
	uint64_t *floor = two ? pc->cls_floor2 : pc->cls_floor, key;

	if (was == NONE || pc->scratch ||
	    (lo < was ? was - lo : lo - was) > BASE_WALK) {
		for (s = 0; s < pc->ncls; s++) {
			base[s] = bucket_near(pc, pc->cls_b[s],
					      pc->cls_b[s + 1], lo, base[s]);
			floor[s] = 0;
		}
		if (!two)
			pc->floor_others = 0;
		pc->floor_beyond = 0;
	} else if (lo < was) {
		for (j = was; j-- > lo;)
			for (x = pc->at_off[j]; x < pc->at_off[j + 1]; x++) {
				b = pc->at_j[x];
				s = pc->b_cls[b];
				base[s] = b;
				key = hyper_plan__seg_get(&pc->seg, b);
				class_floor_lower(pc, two, s, key);
			}
	} else {
		for (j = was; j < lo; j++)
			for (x = pc->at_off[j]; x < pc->at_off[j + 1]; x++) {
				b = pc->at_j[x];
				s = pc->b_cls[b];
				if (base[s] == b)
					base[s] = b + 1;
			}
	}
	*at = lo;
}

/*
 * Every class's reach, at the start of step k: first the buckets used
 * from lo on, which holds the reach (the cheapest prefetch of all needs
 * that long), the class stale until next_bucket() needs it.  Set in each
 * class as the step first asks it (class_touch()): at most steps one
 * class gives the pick and no other is asked (next_bucket()), where
 * setting every class at every step over budget cost 31 M instructions
 * at DeepSeek-V2-Lite training (24 classes).
 */
static void class_reach(struct plan_ctx *pc, uint32_t k, uint32_t lo)
{
	if (pc->scale >= ANY_WAIT)
		pc->before = 0;
	else if (pc->h2d.low <= k || pc->scratch)
		pc->before = hyper_plan__cal_before(&pc->h2d, k + 1);
	pc->h2d.low = pc->h2d.n;
	class_base_at(pc, false, lo);
	pc->ncls_now = 0;
	if (!++pc->reach_gen) {	/* wrapped: no class may match by chance */
		memset(pc->cls_gen, 0, pc->ncls * sizeof(*pc->cls_gen));
		memset(pc->cls_ask2, 0, pc->ncls * sizeof(*pc->cls_ask2));
		pc->reach_gen = 1;
	}
}

/* Class s's reach as class_reach() sets it, the first time a step asks. */
static inline void class_touch(struct plan_ctx *pc, uint32_t s, uint32_t lo)
{
	if (pc->cls_gen[s] == pc->reach_gen)
		return;
	pc->cls_gen[s] = pc->reach_gen;
	pc->cls_from[s] = lo;
	pc->cls_lo[s] = pc->cls_base[s];
	pc->cls_stale[s] = pc->scale < ANY_WAIT;
	pc->cls_now[pc->ncls_now++] = s;
}

/*
 * After a take, the classes whose reach it may have moved: those whose
 * reach lies past the first step it took time from (the steps up to a
 * reach keep their sums, so the reach stays), or all of them when it
 * took time before step k + 1 (a pool copy for the tensor's start gap),
 * which moves the time before.  They are looked up again only when they
 * could hold the next candidate (next_bucket()).
 */
static void reach_moved(struct plan_ctx *pc, uint32_t k)
{
	uint32_t s, x, low = pc->h2d.low;

	if (pc->scale >= ANY_WAIT)
		return;			/* no reach: every class from lo */
	pc->h2d.low = pc->h2d.n;
	if (low <= k)
		pc->before = hyper_plan__cal_before(&pc->h2d, k + 1);
	for (x = 0; x < pc->ncls_now; x++) {	/* the others are stale */
		s = pc->cls_now[x];
		if (low <= k || low < pc->cls_from[s])
			pc->cls_stale[s] = 1;
	}
}

/*
 * Whether a minimum kept from bucket @was (key @key) is left behind by a
 * look-up from bucket @lo past it: its bucket (the key's low half, the
 * bucket's use) lies before @lo's, so that it no longer serves.
 */
static inline bool min_left_behind(const struct plan_ctx *pc, uint32_t was,
				   uint64_t key, uint32_t lo)
{
	return lo > was && key != SEG_NONE && (uint32_t)key < pc->b_j[lo];
}

/*
 * What a minimum kept from bucket @was (key @key) costs a look-up from
 * bucket @lo: 0 where it serves as it is, the buckets before it where
 * their range minimum is added, NONE where the class's whole range from
 * @lo is looked up again (see class_min_find()).
 */
static inline uint32_t min_cost(const struct plan_ctx *pc, uint32_t was,
				uint64_t key, uint32_t lo)
{
	if (was == NONE)
		return NONE;
	if (lo < was)
		return was - lo;
	return min_left_behind(pc, was, key, lo) ? NONE : 0;
}

/*
 * A minimum *@key kept from bucket @was, widened to a look-up from @lo
 * before it: the smaller of it and the buckets [@lo, @was)'s.  Return:
 * whether those won (the bucket kept with *@key no longer holds it).
 */
static inline __attribute__((always_inline)) bool
min_widen(struct plan_ctx *pc, uint32_t lo, uint32_t was, uint64_t *key)
{
	uint64_t more = hyper_plan__seg_min(&pc->seg, lo, was - 1);

	if (more >= *key)
		return false;
	*key = more;
	return true;
}

/*
 * A whole-range look-up of class s from bucket @lo is due, the first
 * minimum kept left behind: the second serves instead if its bucket is
 * not, looked up from where it lies as the first would be, and becomes
 * the first.  Else the whole range, into the first.  Either way no
 * second is left: one left behind by @lo is of no use to the reaches
 * after it.  Out of line and called last (class_min_find() keeps
 * nothing across it).
 */
static __attribute__((noinline)) uint64_t
class_min_whole(struct plan_ctx *pc, uint32_t s, uint32_t lo)
{
	uint32_t was = pc->alt_lo[s], cost, b = NONE;
	uint64_t key = pc->alt_key[s];

	cost = min_cost(pc, was, key, lo);
	pc->alt_lo[s] = NONE;
	if (cost == NONE) {
		key = hyper_plan__seg_min(&pc->seg, lo, pc->cls_b[s + 1] - 1);
	} else {
		b = pc->alt_b[s];
		if (cost && min_widen(pc, lo, was, &key))
			b = NONE;
	}
	pc->min_b[s] = b;
	pc->min_key[s] = key;
	pc->min_lo[s] = lo;
	return key;
}

/*
 * Class s's earliest candidate from cls_lo[s]: the range minimum, kept
 * and followed through refreshes (class_min_moved()).  When the
 * reach moves, the minimum kept still serves: a reach moved earlier adds
 * only the buckets before the old one, and one moved later keeps it if
 * its bucket is not left behind (within a class, buckets come in order of
 * use, and a key's low half is that use: no two of a class are equal).
 *
 * At decode a step over budget asks a class from its base first
 * (class_touch()), which moves the minimum kept back from the reach the
 * step before looked up, then from its reach (reach_of()), where the
 * base's minimum is mostly left behind: a look-up of the class's whole
 * range at every such step (120 k of the 214 k at 100k decode
 * operators).  So the minimum a look-up moves back from is kept as the
 * second (alt_*), and a whole-range look-up takes it instead where it
 * serves (class_min_whole()): the reach moved by a few buckets.  Only
 * where the picks come round the classes in turn (pc->guess_on, see
 * class_guess()): at training few such look-ups are saved, and keeping
 * a second minimum each time cost more than they did.  Either way each
 * minimum is exact, and the picks the same.
 */
static uint64_t class_min_find(struct plan_ctx *pc, uint32_t s)
{
	uint32_t lo = pc->cls_lo[s], was = pc->min_lo[s];
	uint64_t key = pc->min_key[s];

	if (was == NONE || pc->scratch || min_left_behind(pc, was, key, lo)) {
		if (pc->alt_lo[s] != NONE)
			return class_min_whole(pc, s, lo);
		key = hyper_plan__seg_min(&pc->seg, lo, pc->cls_b[s + 1] - 1);
		pc->min_b[s] = NONE;
	} else if (lo < was) {
		if (pc->guess_on) {	/* moved back from: kept */
			pc->alt_lo[s] = was;
			pc->alt_key[s] = key;
			pc->alt_b[s] = pc->min_b[s];
		}
		if (min_widen(pc, lo, was, &key))
			pc->min_b[s] = NONE;
	} else if (pc->alt_lo[s] <= lo) {
		pc->alt_lo[s] = NONE;	/* kept past the first only */
	}
	pc->min_key[s] = key;
	pc->min_lo[s] = lo;
	return key;
}

/*
 * Most look-ups find the minimum kept: that test inline in
 * next_bucket()'s loop over the classes, the rest a call.
 */
static inline uint64_t class_min(struct plan_ctx *pc, uint32_t s)
{
	if (pc->min_lo[s] == pc->cls_lo[s] && !pc->scratch)
		return pc->min_key[s];
	return class_min_find(pc, s);
}

/* The bucket of class s that holds @key, its minimum (class_min()). */
static inline __attribute__((always_inline)) uint32_t
class_min_bucket(struct plan_ctx *pc, uint32_t s,
		 uint64_t key)
{
	if (pc->min_b[s] == NONE || pc->scratch)
		pc->min_b[s] = bucket_from(pc, pc->cls_lo[s], pc->cls_b[s + 1],
					   (uint32_t)key);
	return pc->min_b[s];
}

/* The pick so far of next_bucket(): its key, tensor and bucket. */
struct pick {
	uint64_t best;
	uint32_t bt, b;
};

/*
 * Class s asked for its earliest candidate (next_bucket()).  Inline, as
 * the loop's body was, in each of the three places that ask now: out of
 * line, it and class_min_bucket() cost 100k decode operators' picks
 * more in calls than the loop saves there.
 */
static inline __attribute__((always_inline)) void
class_ask(struct plan_ctx *pc, uint32_t s, uint32_t lo, struct pick *pk)
{
	uint32_t b, t, was;
	uint64_t key;

	class_touch(pc, s, lo);
	if (pc->cls_lo[s] >= pc->cls_b[s + 1]) {
		if (pc->cls_lo[s] == pc->cls_base[s])
			pc->cls_floor[s] = SEG_NONE;
		return;
	}
	if (pk->best == SEG_NONE && pc->cls_stale[s] && !pc->scratch) {
		reach_of(pc, s, lo);
		if (pc->cls_lo[s] >= pc->cls_b[s + 1])
			return;
	}
	key = class_min(pc, s);
	if (pc->cls_lo[s] == pc->cls_base[s])
		pc->cls_floor[s] = key;
	if (key == SEG_NONE || key > pk->best)
		return;
	if (pc->cls_stale[s]) {
		was = pc->cls_lo[s];
		reach_of(pc, s, lo);
		if (pc->cls_lo[s] >= pc->cls_b[s + 1])
			return;
		if (pc->cls_lo[s] != was)
			key = class_min(pc, s);
		if (key == SEG_NONE || key > pk->best)
			return;
	}
	b = class_min_bucket(pc, s, key);
	t = pc->c[pc->idx[pc->cur[b]]].t;
	if (key < pk->best || t < pk->bt) {
		pk->best = key;
		pk->bt = t;
		pk->b = b;
	}
}

/*
 * Whether class s's second floor (its keys from cls_base2[s] on) lies at
 * or below @best: looked up once a step when it does, where the walks
 * of the second base left it low.
 */
static inline bool class_floor2_below(struct plan_ctx *pc, uint32_t s,
				      uint64_t best)
{
	uint32_t b = pc->cls_base2[s];

	if (pc->cls_floor2[s] > best)
		return false;
	if (pc->cls_ask2[s] == pc->reach_gen)
		return true;
	pc->cls_ask2[s] = pc->reach_gen;
	pc->cls_floor2[s] = b < pc->cls_b[s + 1] ?
		hyper_plan__seg_min(&pc->seg, b, pc->cls_b[s + 1] - 1) :
		SEG_NONE;
	return pc->cls_floor2[s] <= best;
}

/*
 * The floors next_bucket()'s loop passes: the two least of the classes'
 * (m1, class c1, and m2) and the least of the higher of each class's two
 * floors where the second counts (beyond).
 */
struct floors_seen {
	uint64_t m1, m2, beyond;
	uint32_t c1;
};

/*
 * Classes @s .. @end - 1 asked, but those whose floor lies above the
 * pick so far, and with @two (classes costlier than the first asked,
 * the second base at its reach) those whose second floor does; their
 * floors noted in @fs once final.
 */
static inline __attribute__((always_inline)) void
classes_ask(struct plan_ctx *pc, uint32_t s, uint32_t end, uint32_t lo,
	    bool two, struct pick *pk, struct floors_seen *fs)
{
	uint64_t f;

	for (; s < end; s++) {
		if ((pc->cls_floor[s] <= pk->best &&
		     (!two || class_floor2_below(pc, s, pk->best))) ||
		    pc->scratch)
			class_ask(pc, s, lo, pk);
		f = pc->cls_floor[s];
		if (f < fs->m2) {
			if (f < fs->m1) {
				fs->m2 = fs->m1;
				fs->m1 = f;
				fs->c1 = s;
			} else {
				fs->m2 = f;
			}
		}
		if (two && pc->cls_floor2[s] > f)
			f = pc->cls_floor2[s];
		if (f < fs->beyond)
			fs->beyond = f;
	}
}

/*
 * The class to ask first at the next pick, after a pick of class @w
 * (pc->cls_next): the one whose pick followed the last two picks'
 * classes the time before.  At decode the picks walk the operators by
 * start, and the classes come round in a layer's order: at 100k decode
 * operators three classes give the picks, the last pick's class gives
 * the next in 22% of them, this guess in 93%.  A guess right the time
 * before is kept past one miss, so that where one class gives most
 * picks (training) a pick of another now and then does not move it.
 * Any class asked first gives the same pick.
 */
static inline uint32_t class_guess(struct plan_ctx *pc, uint32_t w)
{
	uint16_t *e = &pc->cls_next[pc->cls_ctx];

	if ((uint8_t)*e == w)
		*e |= 0x100;
	else
		*e = *e & 0x100 ? (uint8_t)*e : w;
	pc->cls_ctx = pc->cls_won * pc->ncls + w;
	pc->cls_won = w;
	pc->cls_steady = pc->cls_ctx == w * (pc->ncls + 1) &&
			 pc->cls_next[pc->cls_ctx] == (w | 0x100);
	return (uint8_t)pc->cls_next[pc->cls_ctx];
}

/*
 * The class to ask first after a loop over the classes picked one of
 * class @w: the guess (class_guess()) once it has shown it pays, else
 * @w, as while the first GUESS_TRY loops are counted.  At training the
 * guess is right about as often as the last pick's class (OLMoE-1B-7B:
 * 748 and 672 of the first 1024 loops), and asking it first cost more
 * than it saved (0.1 to 0.2% of the whole run's instructions): the
 * other classes' floors are kept for the last pick's class, and a pick
 * of it below them ends most picks there.
 */
static uint32_t class_after_loop(struct plan_ctx *pc, uint32_t w)
{
	uint32_t g;

	if (pc->guess_on)
		return class_guess(pc, w);
	if (!pc->guess_left)
		return w;
	pc->guess_hits += (uint8_t)pc->cls_next[pc->cls_ctx] == w;
	pc->last_hits += pc->cls_won == w;
	g = class_guess(pc, w);
	pc->guess_on = !--pc->guess_left &&
		       pc->guess_hits > pc->last_hits + GUESS_TRY / 8;
	if (pc->guess_on)
		return g;
	pc->cls_steady = true;
	return w;
}

/*
 * A pick of the class asked first, no other asked: the guess after it,
 * with floor_others and floor_beyond moved to that class (class_guess()).
 * The least floor but the guessed class's is the least but the first
 * class's, or the first's own, unless the guessed class's floor may be
 * that least: then the floors are read.
 */
static void class_guess_first(struct plan_ctx *pc, uint32_t first)
{
	uint32_t s, next = class_guess(pc, first);
	uint64_t f = pc->floor_others;

	if (next == first)
		return;
	pc->cls_pick = next;
	if (pc->cls_floor[next] > f && !pc->scratch) {
		if (pc->cls_floor[first] < f)
			f = pc->cls_floor[first];
	} else {
		f = SEG_NONE;
		for (s = 0; s < pc->ncls; s++)
			if (s != next && pc->cls_floor[s] < f)
				f = pc->cls_floor[s];
	}
	pc->floor_others = f;
	pc->floor_beyond = f;
}

/*
 * The bucket whose first candidate is next: start, use, tensor.  A stale
 * class's reach only moved later, so the first candidate from its old
 * reach is no later than from its new one: a class that loses from
 * there loses anyway, and is looked up again only if it may win.
 *
 * The class that gave the last pick, or the one guessed from the last
 * two (class_guess()), is asked first, then the others in order.  No two
 * classes lead with the same start, use and tensor (a tensor has one
 * size), so the pick is the least of the three whatever the order; but
 * one class gives nearly every pick (DeepSeek-V2-Lite training: 94%, one
 * of 24), and once its candidate is the best so far the others lose from
 * their old reach, without looking their own reach up (cal_reach_sum():
 * 584 k look-ups there, 235 k now).  At decode the guess is that class
 * (see class_guess()), and the classes asked before it no longer become
 * the best so far, each with its reach looked up.  Until a class
 * gives a candidate there is nothing to lose to: a stale class looks its
 * reach up at once, and its minimum once, from there.
 *
 * A class's reach lies at or past the step's first use, so no candidate
 * of its is below its floor (cls_floor[]: a bound on its keys from its
 * base on).  A class whose floor lies above the pick so far loses
 * unasked, and a candidate of the first class below every other floor
 * (floor_others) ends the loop there: 70% of the picks at DeepSeek-V2-
 * Lite training, where the loop asked each of the 24 classes at every
 * pick.  A floor equal to the pick asks the class, whose tensor may
 * break the tie; a class asked from its base gets its exact floor.
 *
 * Where a class with a costlier prefetch stands below the first class's
 * candidate, its cheap candidates mostly lie between its base and its
 * own reach.  No such class reaches before the first class does (the
 * classes come in order of size, so of cost, and a costlier prefetch
 * needs a longer window), so its keys from the second base, walked to
 * the first class's reach, bound it too: below floor_beyond, the
 * candidate ends the loop there (DeepSeek-V2-Lite training: 23 k of the
 * 43.6 k picks that ran the whole loop), and in the loop a class whose
 * second floor lies above the pick is passed over without its reach.
 *
 * A loop that runs to the end passes every class but the first, whose
 * floors are final once passed: their two least and the first class's
 * own give floor_others whichever class the pick is of, where a scan of
 * the 24 classes after each loop cost 9.9 M instructions there.  A pick
 * of another class leaves floor_beyond at floor_others, which bounds it,
 * until the next loop sets it.
 */
static uint32_t next_bucket(struct plan_ctx *pc, uint32_t lo)
{
	struct pick pk = { SEG_NONE, 0, NONE };
	struct floors_seen fs = { SEG_NONE, SEG_NONE, SEG_NONE, NONE };
	uint32_t first = pc->scratch ? 0 : pc->cls_pick, reach;
	uint64_t f;
	bool two = false;

	class_ask(pc, first, lo, &pk);
	if (pk.best < pc->floor_others && !pc->scratch) {
		pc->floor_hits++;
		if (!pc->cls_steady)
			class_guess_first(pc, first);
		return pk.b;
	}
	reach = pc->cls_from[first] > lo ? pc->cls_from[first] : lo;
	if (pk.best != SEG_NONE && pc->scale < ANY_WAIT && !pc->scratch &&
	    pc->beyond_hits * BEYOND_PAYS + BEYOND_TRY >= pc->beyond_tries &&
	    (first == pc->base2_cls || pc->base2_lo == NONE ||
	     (reach < pc->base2_lo ? pc->base2_lo - reach :
	      reach - pc->base2_lo) <= BASE_WALK)) {
		class_base_at(pc, true, reach);
		pc->base2_cls = first;
		pc->beyond_tries++;
		if (pk.best < pc->floor_beyond) {
			pc->floor_hits++;
			pc->beyond_hits++;
			if (!pc->cls_steady)
				class_guess_first(pc, first);
			return pk.b;
		}
		two = true;
	}
	classes_ask(pc, 0, first, lo, false, &pk, &fs);
	classes_ask(pc, first + 1, pc->ncls, lo, two, &pk, &fs);
	if (pk.b != NONE)
		pc->cls_pick = class_after_loop(pc, pc->b_cls[pk.b]);
	if (pc->cls_pick == first) {
		pc->floor_others = fs.m1;
		pc->floor_beyond = fs.beyond;
	} else {
		f = fs.c1 == pc->cls_pick ? fs.m2 : fs.m1;
		pc->floor_others = pc->cls_floor[first] < f ?
				   pc->cls_floor[first] : f;
		pc->floor_beyond = pc->floor_others;
	}
	return pk.b;
}

/*
 * What the refresh after an offer of bucket b's first candidate reads:
 * the next one's liveness and start, asked for while the offer runs (a
 * take or a set-aside moves the bucket on to it).
 */
static inline void prefetch_next(const struct plan_ctx *pc, uint32_t b)
{
	uint32_t x = pc->cur[b] + 1, i;

	if (x < pc->by_b[b + 1]) {
		i = pc->idx[x];
		__builtin_prefetch(&pc->alive[i]);
		__builtin_prefetch(&pc->c[i].a);
	}
}

/* Takes gaps spanning step k until it fits; false if it cannot. */
static bool fit_step(struct plan_ctx *pc, uint32_t k, uint64_t budget,
		     int64_t *absent)
{
	struct fit f = { k, (int64_t)pc->lf->base[k] - *absent -
			    (int64_t)budget, absent, 0 };
	uint32_t n = pc->lf->n, lo = n, b, i;
	bool fits = f.over <= 0;

	/*
	 * Most steps fit: no reach looked up (before the final gaps' takes,
	 * which class_reach() sees in pc->h2d.low: only its steps read it).
	 */
	if (!fits || pc->scratch)
		lo = first_use(pc, k);
	pc->h2d.low = pc->h2d.n;
	if (!fits)
		fits = offer_final(pc, &f);
	if (!fits && lo < n)
		class_reach(pc, k, lo);
	while (!fits && lo < n && f.tries < MAX_TRIES && !pc->mem->failed &&
	       (b = next_bucket(pc, lo)) != NONE) {
		size_t nev = pc->nev;

		i = pc->idx[pc->cur[b]];
		prefetch_next(pc, b);
		if (pc->c[i].a >= (int32_t)k)
			pc->alive[i] = 0;	/* spans nothing left to walk */
		else
			fits = offer(pc, &f, i);
		if (pc->nev != nev && !fits)	/* it took link time */
			reach_moved(pc, k);
		if (pc->alive[i])
			set_aside(pc, b);	/* may fit further back */
		else
			refresh(pc, b);
	}
	restore_aside(pc);
	pc->short_by = fits ? 0 : (uint64_t)f.over;
	return fits;
}

double hyper_plan__plan_saturated_ns(const struct plan_ctx *pc)
{
	double t = 0;
	uint32_t k;

	for (k = 0; k < pc->lf->n; k++)
		if (pc->h2d.cap[k] <= 0.01 * pc->cap[k] * pc->scale)
			t += pc->cap[k];
	return t;
}

/*
 * Whether the sweep at @budget is known to fail as the one noted in
 * pc->ex_k did (see struct plan_ctx): the same first step over budget,
 * the same links, and still over there after every take it made (the
 * takes at k0 only add to what is absent, so no take before the last
 * could have fitted the step either).  Then the outcome is that sweep's,
 * short by the difference: its evictions are handed back without a
 * sweep, and the context keeps what the sweep before left, which the
 * next reset() undoes as it would have.  A bisection's low aims fail
 * there again and again (at OLMoE training's last step, after 4000
 * takes each).  1: known, *fail_step set; 0: sweep; -ENOMEM.
 */
static int plan_select_known(struct plan_ctx *pc, uint64_t budget,
			     double scale, uint32_t *fail_step)
{
	uint32_t k = pc->lf->n;
	int64_t over;

	if (pc->ex_k == NONE || pc->scratch || scale != pc->ex_scale)
		return 0;
	while (k-- > 0 && (int64_t)pc->lf->base[k] - (int64_t)budget <= 0)
		;
	if (k != pc->ex_k)
		return 0;
	over = (int64_t)pc->lf->base[k] - pc->ex_absent - (int64_t)budget;
	if (over <= 0)
		return 0;
	if (hyper_plan__grow(pc->mem, &pc->ev, &pc->cap_ev, pc->ex_nev,
			     sizeof(*pc->ev)))
		return -ENOMEM;
	if (pc->ex_nev)		/* none taken: pc->ev may be NULL */
		memcpy(pc->ev, pc->ex_ev, pc->ex_nev * sizeof(*pc->ev));
	pc->nev = pc->ex_nev;
	pc->nev_before = 0;
	pc->short_by = (uint64_t)over;
	*fail_step = k;
	pc->ex_hits++;
	return 1;
}

/* The sweep failed at its first step over budget: noted for the above. */
static int note_failed_first(struct plan_ctx *pc, uint32_t k, double scale,
			     int64_t absent)
{
	pc->ex_k = NONE;
	if (pc->scratch)
		return 0;
	if (hyper_plan__grow(pc->mem, &pc->ex_ev, &pc->cap_ex, pc->nev,
			     sizeof(*pc->ex_ev)))
		return -ENOMEM;
	if (pc->nev)
		memcpy(pc->ex_ev, pc->ev, pc->nev * sizeof(*pc->ev));
	pc->ex_nev = pc->nev;
	pc->ex_absent = absent;
	pc->ex_scale = scale;
	pc->ex_k = k;
	return 0;
}

/*
 * How many steps ahead the sweep asks for what its new buckets will read
 * (prefetch_ahead()): each stage's addresses come from loads the stage
 * before asked for, in the cache by then.
 */
#define PF_FAR		16
#define PF_MID		8
#define PF_NEAR		4

/*
 * The loads of the refreshes that start step k - PF_* (sweep()), asked
 * for early.  Each step brings a bucket or two into the tree, and each
 * refresh follows the bucket's arrays to its place in the index and on
 * to a candidate and its liveness, each at an address of its own and
 * each waiting for the one before: at 1M decode operators that loop was
 * half the sweep's samples.  The steps ahead name their buckets
 * (at_j), and a bucket the sweep has not reached starts at its first
 * place (hyper_plan__ahead_cand()).  A prefetch changes nothing the
 * sweep reads: where a guess is wrong, only a line is fetched for
 * nothing.
 */
static inline void prefetch_ahead(const struct plan_ctx *pc, uint32_t k)
{
	uint32_t x, b, i;

	if (k >= PF_FAR)
		for (x = pc->at_off[k + 1 - PF_FAR];
		     x < pc->at_off[k + 2 - PF_FAR]; x++) {
			b = pc->at_j[x];
			__builtin_prefetch(&pc->by_b[b]);
			__builtin_prefetch(&pc->cur[b], 1);
			__builtin_prefetch(&pc->b_j[b]);
			__builtin_prefetch(&pc->seg.t[pc->seg.size + b], 1);
		}
	if (k >= PF_MID)
		for (x = pc->at_off[k + 1 - PF_MID];
		     x < pc->at_off[k + 2 - PF_MID]; x++)
			__builtin_prefetch(&pc->idx[pc->by_b[pc->at_j[x]]]);
	if (k >= PF_NEAR)
		for (x = pc->at_off[k + 1 - PF_NEAR];
		     x < pc->at_off[k + 2 - PF_NEAR]; x++) {
			i = hyper_plan__ahead_cand(pc, pc->at_j[x]);
			__builtin_prefetch(&pc->alive[i]);
			__builtin_prefetch(&pc->c[i].a);
		}
}

/*
 * Whether the sweep at @budget starts its last step from the snapshot
 * kept, and where it keeps one (pc->snap_need).  Up to its first step
 * over budget a sweep takes nothing; at the last step, n - 1, the
 * gaps to the end alone span it (no prefetch reaches past it), walked
 * by start from the state every reset leaves on the same links: each
 * aim over there makes the same offers with the same outcomes, in the
 * same order, until the step fits.  A lower aim only goes on further.
 * So the state right after the take that fitted aim A is on the path of
 * every aim up to A: such a sweep loads it and walks on from the gap
 * after that take (the gaps passed are dead, taken or never to fit).
 * Training graphs take thousands of gaps to the end there (DeepSeek-V2-
 * Lite 1,150 to 6,600 a sweep), every sweep again; the bisection's top
 * (pc->keep_aim) is the aim at which to keep one, which serves all the
 * sweeps after it.
 */
static bool snap_begin(struct plan_ctx *pc, uint64_t budget)
{
	const struct plan_snap *s = &pc->snap;
	uint32_t n = pc->lf->n;
	uint64_t top = n ? pc->lf->base[n - 1] : 0, want = pc->keep_aim;
	bool use;

	pc->snap_need = INT64_MAX;
	if (pc->scratch || !n)
		return false;
	use = s->aim && s->scale == pc->scale && budget <= s->aim;
	/*
	 * A state loaded that already holds the new aim's excess is the
	 * one for that aim too: its take was the one that fitted it, and
	 * the next take would be one too many.
	 */
	if (want && want < top && budget <= want &&
	    !(use && s->absent >= (int64_t)(top - want)))
		pc->snap_need = (int64_t)(top - want);
	return use;
}

/*
 * The snapshot's state written over the reset one; *@absent its own,
 * less what the sweep adds at step n - 1 (no take there writes it).
 */
static int snap_load(struct plan_ctx *pc, int64_t *absent)
{
	const struct plan_snap *s = &pc->snap;
	uint32_t nb = pc->nb, x;
	size_t e;

	if (hyper_plan__grow(pc->mem, &pc->ev, &pc->cap_ev, s->nev,
			     sizeof(*pc->ev)))
		return -ENOMEM;
	hyper_plan__cal_load(&pc->h2d, &s->h2d);
	hyper_plan__cal_load(&pc->d2h, &s->d2h);
	for (x = 0; x < s->nep; x++) {
		pc->ep_undo[x] = s->ep_x[x];
		pc->ep[s->ep_x[x]] = s->ep_v[x];
	}
	pc->nep_undo = s->nep;
	pc->delta_lo = s->delta_lo;
	pc->delta_hi = s->delta_hi;
	pc->ndelta_undo = pc->delta_ring + 1;	/* not listed: the range */
	if (s->delta_lo <= s->delta_hi)
		memcpy(pc->delta + s->delta_lo, s->delta,
		       (s->delta_hi - s->delta_lo + 1) * sizeof(*pc->delta));
	memcpy(pc->ev, s->ev, s->nev * sizeof(*pc->ev));
	pc->nev = s->nev;
	for (x = pc->by_b[nb]; x < s->next; x++)
		pc->alive[pc->idx[x]] = 0;
	for (e = 0; e < s->nev; e++)	/* from a start: its start gap */
		if (s->ev[e].a < 0)
			pc->alive[pc->first_gap[s->ev[e].t]] = 0;
	pc->cur[nb] = s->next;
	pc->snap_hits++;
	*absent = s->absent - pc->delta[pc->lf->n - 1];
	return 0;
}

/* The sweep of hyper_plan__plan_select(): the evictions, in the order taken. */
static int sweep(struct plan_ctx *pc, uint64_t budget, double scale,
		 uint32_t *fail_step)
{
	int64_t absent = 0;
	uint32_t k;
	int ret;

	ret = plan_select_known(pc, budget, scale, fail_step);
	if (ret)
		return ret < 0 ? ret : -1;
	reset(pc, scale);
	if (snap_begin(pc, budget) && snap_load(pc, &absent))
		return -ENOMEM;
	for (k = pc->lf->n; k-- > 0;) {
		uint32_t x;

		pc->swept = k;
		prefetch_ahead(pc, k);
		for (x = pc->at_off[k + 1]; x < pc->at_off[k + 2]; x++)
			refresh(pc, pc->at_j[x]);	/* read at k + 1: span k */
		absent += pc->delta[k];
		pc->delta[k] = 0;	/* read once: clear for the next sweep */
		pc->nev_before = pc->nev;
		/*
		 * Most steps fit (100k decode: four in five): fit_step() would
		 * take nothing there, and its call, the step's excess worked
		 * out again and the set-asides' empty restore cost 20
		 * instructions a step.
		 */
		if ((int64_t)pc->lf->base[k] - absent - (int64_t)budget <= 0 &&
		    !pc->scratch)
			continue;
		if (!fit_step(pc, k, budget, &absent)) {
			*fail_step = k;
			if (k + 1 == pc->lf->n)	/* a snapshot's takes too */
				pc->nev_before = 0;
			if (pc->mem->failed)
				return -ENOMEM;
			if (!pc->nev_before &&
			    note_failed_first(pc, k, scale, absent))
				return -ENOMEM;
			return -1;
		}
		if (pc->mem->failed)
			return -ENOMEM;
	}
	pc->short_by = 0;
	return 0;
}

int hyper_plan__plan_select(struct plan_ctx *pc, uint64_t budget, double scale,
		uint32_t *fail_step)
{
	int ret = sweep(pc, budget, scale, fail_step);

	return ret ? ret : hyper_plan__issue_in_deadline_order(pc);
}

/*
 * The link's saturated steps depend on the calendar alone, which the
 * evictions' issue steps (sorted by due step, each searched for) do not
 * touch: at 100k decode operators they were 4% of the sweep.
 */
int hyper_plan__plan_select_saturated(struct plan_ctx *pc, uint64_t budget,
				      double scale, double *busy)
{
	uint32_t fail;
	int ret = sweep(pc, budget, scale, &fail);

	*busy = ret ? 0 : hyper_plan__plan_saturated_ns(pc);
	return ret;
}
