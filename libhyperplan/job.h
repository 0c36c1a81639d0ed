/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One planning job: a graph, its initial and refined execution orders and
 * their lifetime analyses, and the profile they are judged on.
 */
#ifndef HP_JOB_H
#define HP_JOB_H

#include "policies/list.h"

struct job {
	struct graph g;
	struct profile p;
	uint32_t *order, *refined;
	struct life lf, lf_ref;
	bool has_ref;		/* the refined order differs */
	uint32_t have;		/* HP_F_* facts the passes ensured */
	FILE *verbose;		/* each pass as it runs, or NULL */
	struct hp_laycache lay;	/* layouts its plans made under a budget */
	struct hp_polmemo memo;	/* the baselines' results (policies/list.h) */
};

/*
 * Orders and analyses @j->g (already filled); reorder unless @no_reorder.
 * Fails with @j as it was: -ENOMEM ("out of memory" in @e) when @j->g.mem
 * runs out.
 */
int hyper_plan__job_prepare(struct job *j, bool no_reorder, struct hp_err *e);
/*
 * hyper_plan__job_prepare() on a graph timed on @time_on first (NULL: timed already,
 * as a generated graph is): the pipeline's passes retime to life
 * (passes/pipeline.c).
 */
int hyper_plan__prepare(struct job *j, const struct profile *time_on,
			bool no_reorder, struct hp_err *e);
void hyper_plan__job_free(struct job *j);
/* The problem of @j's orders at @gl, its allocations through @mem. */
void hyper_plan__job_problem(struct job *j, struct problem *pb,
		 const struct goal *gl, struct hp_mem *mem);
/* Fails naming the operator if @budget is below its working set. */
int hyper_plan__job_check_budget(const struct job *j, uint64_t budget, struct hp_err *e);
/* The lower bound, valid for schedules of either order; 0 with @mem
 * failed when memory runs out. */
uint64_t hyper_plan__job_bound(const struct job *j, double max_slow, struct hp_mem *mem);

#endif
