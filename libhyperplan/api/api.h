/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The objects behind the opaque handles of <hyper/plan.h>. */
#ifndef HP_API_H
#define HP_API_H

#include <pthread.h>

#include <hyper/plan.h>

#include "job.h"
#include "policies/list.h"

/*
 * A graph and, once planned, its orders and lifetimes: those do not
 * depend on the profile or the goal, so they are computed on the first
 * hyper_plan_run() and the graph is frozen from then on.  Plans hold a
 * reference, since their schedules point into it.  Plans of one graph
 * may run at once from several threads: the first to find it unprepared
 * prepares it under @lock, and from then on plans only read it; each
 * plan allocates through its own struct hp_mem.
 */
struct hyper_plan_graph {
	struct job j;		/* j.p is unused: each plan has its profile */
	int refs;		/* atomic: the caller's and each plan's */
	bool prepared;		/* atomic; set under @lock */
	pthread_mutex_t lock;
	struct hp_err err;	/* hyper_plan_graph_last_error() */
};

struct hyper_plan {
	struct hyper_plan_graph *g;
	struct profile p;
	struct result res;
	struct hyper_schedule *hs;	/* res.s as libhyper validated it */
	int policy;		/* POL_* of res */
	uint64_t bound;
};

void hyper_plan__graph_put(struct hyper_plan_graph *g);

/*
 * hyper_plan_run() with the plan's allocations through @mem (a fresh
 * one per call; its fail_at is the tests' hook).  The graph's first
 * preparation allocates through the graph's own.
 */
int hyper_plan__plan_run(struct hyper_plan_graph *graph,
		const struct hyper_plan_opts *opts, struct hyper_plan **planp,
		struct hp_mem *mem, char *err, size_t errlen);

/*
 * A NULL argument of a public call that has an error buffer: says which
 * one and what to pass instead in @err (when there is room), and
 * returns -EINVAL.
 */
int hyper_plan__null_arg(char *err, size_t errlen, const char *fn,
			 const char *arg, const char *fix);

#endif
