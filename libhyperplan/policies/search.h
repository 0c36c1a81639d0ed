/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every policy is searched over its own knobs for the same goal, judged
 * by the same simulator: either the lowest peak at a slowdown of at most
 * max_slow against no offload, or (budget given) the least slowdown whose
 * peak stays within the budget.
 */
#ifndef HP_SEARCH_H
#define HP_SEARCH_H

#include "sim/sim.h"

struct goal {
	double max_slow;	/* 0.01: 1% */
	uint64_t budget;	/* 0: search the lowest peak instead */
};

struct hp_polmemo;

struct problem {
	const struct profile *p;
	const struct life *lf;		/* initial order */
	const struct life *refined;	/* refined order, or NULL if the same */
	struct goal goal;
	/*
	 * The plan's own allocator: plans of one graph run at once, each
	 * with its own.  Any policy returns -ENOMEM ("out of memory" in its
	 * hp_err) once it has failed.
	 */
	struct hp_mem *mem;
	/* the layouts kept, shared by the plans of one graph; NULL: none */
	struct hp_laycache *lay;
	/* the baselines' results kept under a budget (policies/list.h) */
	struct hp_polmemo *memo;
	/*
	 * Set by hyper_plan__run_plan_best() for a baseline whose result
	 * only matters if it beats this one: the greedy bisection then
	 * stops where nothing it has left to probe could (NULL: runs whole).
	 */
	const struct result *beat;
};

struct result {
	char policy[16];
	char from[16];		/* hyper_plan__run_plan_best(): whose schedule won */
	char params[160];
	bool ok;
	struct sched s;
	struct sim_result sim;
	double ms;		/* wall time of the search */
	unsigned int probes;
};

int hyper_plan__run_none(const struct problem *pb, struct result *r, struct hp_err *e);
int hyper_plan__run_plan(const struct problem *pb, struct result *r, struct hp_err *e);
/* hyper_plan__run_plan(), then the baselines: the best of them (never worse). */
int hyper_plan__run_plan_best(const struct problem *pb, struct result *r,
		  struct hp_err *e);
int hyper_plan__run_distance(const struct problem *pb, struct result *r,
		 struct hp_err *e);
int hyper_plan__run_greedy(const struct problem *pb, struct result *r, struct hp_err *e);
void hyper_plan__result_free(struct result *r);
/* Whether @a meets @gl and beats @b: the rule every search keeps by. */
bool hyper_plan__result_better(const struct goal *gl, const struct result *a,
		   const struct result *b);

#endif
