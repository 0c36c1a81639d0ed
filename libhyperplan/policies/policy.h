/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The baselines.  Each turns its parameters into offload decisions for
 * hyper_plan__sched_build(), so that every policy goes through the same emitter and
 * the same simulator as the planner.
 */
#ifndef HP_POLICY_H
#define HP_POLICY_H

#include "passes/sched.h"

/*
 * A MindSpore-style distance heuristic: the @count tensors with the
 * longest gap between uses (in operators) are offloaded in every gap
 * longer than the two distances; each is released @release operators
 * after a use and prefetched @prefetch operators before the next.
 */
struct distance_params {
	uint32_t prefetch, release, count;
};

struct distance_ctx {
	const struct life *lf;
	struct hp_mem *mem;	/* the plan's */
	uint32_t *rank;		/* tensors, longest gap first */
	uint32_t nrank;
	struct evict *ev;
	size_t nev, cap_ev;
	/*
	 * A count's evictions are those of the first ranked tensors in rank
	 * order, so @ev keeps every one made so far with the same distances:
	 * the evictions of the first @done ranked tensors, @off[r] those of
	 * the first r.  A count up to @done is a prefix, a larger one extends
	 * it.
	 */
	uint32_t *off;
	uint32_t done, prefetch, release;
};

/* 0, or -ENOMEM (free @d either way). */
int hyper_plan__distance_init(struct distance_ctx *d, const struct life *lf,
		  struct hp_mem *mem);
void hyper_plan__distance_free(struct distance_ctx *d);
/*
 * The evictions of @dp in d->ev[0 .. d->nev): 0, or -ENOMEM (d->nev is
 * then 0).  The entries past d->nev are the next counts' evictions, to be
 * read by no one.
 */
int hyper_plan__distance_evicts(struct distance_ctx *d, const struct distance_params *dp);

/*
 * The search over a count in [0, @n] that the distance baseline runs, for
 * a goal that assumes @test monotone: with @most, the largest count it
 * passes, count 0 passing untested; without, the smallest, count @n
 * passing untested.  A bisection; with @gallop and @most, the count is
 * first doubled from 1 while it passes, so a search whose answer is a
 * small count c tests about 2 log2(c) + 1 counts, not log2(@n).  In
 * *@found; 0, or the first error @test returns.
 */
int hyper_plan__count_search(uint32_t n, bool most, bool gallop,
			     int (*test)(void *arg, uint32_t count, bool *ok),
			     void *arg, uint32_t *found);

/*
 * Greedy "evict the longest access gap first": walks the steps in order
 * within @budget; when memory is short it evicts the resident tensor
 * whose next use is furthest away, and it prefetches a tensor read within
 * the next @lookahead operators once there is room.
 */
struct greedy;

struct greedy_ctx {
	const struct life *lf;
	struct hp_mem *mem;	/* the plan's */
	/*
	 * With @p, the walk stops once the prefetches taken so far put
	 * the makespan beyond a slowdown of @max_slow: it follows the
	 * simulator's compute and link clocks from below (each step waits
	 * for the prefetches it reads, none for room or stores;
	 * hyper_plan__sim_beyond()), or once the evictions it still owes,
	 * fetched no sooner than the lookahead allows, would (the same
	 * clocks' stop, reached sooner).  @beyond then says so and @ev is
	 * incomplete, a probe that would miss that goal at any budget.
	 */
	const struct profile *p;
	double max_slow;
	bool beyond;
	struct evict *ev;
	size_t nev, cap_ev;
	/*
	 * Per access of @lf, in its order (lf->acc_step), whether the gap
	 * after it is live (hyper_plan__gap_live()): one byte read where a
	 * walk's step asked the tensor, its accesses and flags.  Built by
	 * the first walk, kept for the next.  Tests: @scratch asks
	 * hyper_plan__gap_live() at every access instead, keeps the
	 * eviction candidates in a binary heap, not in lists by next use,
	 * builds each walk's start tensor by tensor and walks every step.
	 */
	uint8_t *live_after;
	/*
	 * Step k's tensors as for_each_op_tensor() gives them, in a row:
	 * its reads (op_in()) at step_t[step_off[2k] .. step_off[2k + 1]),
	 * then its writes not also read, to step_off[2k + 2].  Built with
	 * @live_after, so that a walk reads the steps in order instead of
	 * each operator's references and its reads again for each write.
	 */
	uint32_t *step_off, *step_t;
	/*
	 * The largest residency without offload from step k to the end, at
	 * rest_peak[k] (0 at n), built with @live_after: a walk whose
	 * evictions are all fetched or never read again, and whose rest fits
	 * under this less the ones away, evicts and fetches nothing more,
	 * and only its clocks run on.  @settled: the step where the last
	 * walk found so (n: it did not; its steps before then were walked).
	 */
	uint64_t *rest_peak;
	uint32_t settled;
	/*
	 * Every walk's start before the budget's evictions, built with
	 * @live_after and copied by each walk instead of asking every
	 * tensor again: residency (@st0), device bytes (@mem0), the pinned
	 * and the candidates waiting to be listed (@pending0 per tensor,
	 * @pend0 in tensor order).
	 */
	uint8_t *st0, *pending0;
	uint32_t *pend0, npend0;
	uint64_t mem0;
	/*
	 * The walks' arrays (one entry per tensor, per use) and buffers,
	 * kept from one walk to the next and put back to the start's by
	 * what the walk touched (policy_greedy.c, walk_clean()); with
	 * @scratch, each walk allocates and fills its own.
	 */
	struct greedy *walk;
	/*
	 * The walk without offload (no budget), run as far as a walk asked
	 * and kept (policy_greedy.c, prefix_to()): until its first step
	 * short of room or settled, a walk whose start evicts nothing is
	 * that walk, step for step, so it copies that state and walks on
	 * from there.  Not with @scratch.
	 */
	struct greedy *pre;
	/*
	 * gc->pre as it stood where walks took it up, the first few steps
	 * (policy_greedy.c, prefix_keep()): the next lookahead's bisection
	 * asks the same steps again, and takes them up from here instead of
	 * walking gc->pre there again from its start.
	 */
	struct greedy *kept[4];
	uint32_t nkept;
	bool scratch;
	/*
	 * Tests: the owed evictions' tree built eviction by eviction, as
	 * the walk adds them after, not a level at a time (owe_warm()).
	 */
	bool owe_paths;
	/*
	 * Tests: the quiet steps' tables built this many steps past the
	 * one asked at a time (policy_greedy.c, quiet_more()); 0: the
	 * default, a few thousand.
	 */
	uint32_t quiet_chunk;
};

/* 0, or -ENOMEM: gc->ev is then incomplete. */
int hyper_plan__greedy_evicts(struct greedy_ctx *gc, uint64_t budget,
		  uint32_t lookahead);
void hyper_plan__greedy_free(struct greedy_ctx *gc);

#endif
