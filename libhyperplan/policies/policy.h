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
};

/* 0, or -ENOMEM (free @d either way). */
int hyper_plan__distance_init(struct distance_ctx *d, const struct life *lf,
		  struct hp_mem *mem);
void hyper_plan__distance_free(struct distance_ctx *d);
/* 0, or -ENOMEM: d->ev is then incomplete. */
int hyper_plan__distance_evicts(struct distance_ctx *d, const struct distance_params *dp);

/*
 * Greedy "evict the longest access gap first": walks the steps in order
 * within @budget; when memory is short it evicts the resident tensor
 * whose next use is furthest away, and it prefetches a tensor read within
 * the next @lookahead operators once there is room.
 */
struct greedy_ctx {
	const struct life *lf;
	struct hp_mem *mem;	/* the plan's */
	/*
	 * With @p, the walk stops once the prefetches taken so far put a
	 * floor on the makespan beyond a slowdown of @max_slow
	 * (hyper_plan__sim_fetch_floor(), hyper_plan__sim_beyond()):
	 * @beyond then says so and @ev is incomplete, a probe that would
	 * miss that goal.
	 */
	const struct profile *p;
	double max_slow;
	bool beyond;
	struct evict *ev;
	size_t nev, cap_ev;
};

/* 0, or -ENOMEM: gc->ev is then incomplete. */
int hyper_plan__greedy_evicts(struct greedy_ctx *gc, uint64_t budget,
		  uint32_t lookahead);
void hyper_plan__greedy_free(struct greedy_ctx *gc);

#endif
