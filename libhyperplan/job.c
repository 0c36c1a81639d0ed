// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "sim/bound.h"
#include "job.h"
#include "passes/order.h"
#include "passes/pipeline.h"

int hyper_plan__job_prepare(struct job *j, bool no_reorder, struct hp_err *e)
{
	return hyper_plan__prepare(j, NULL, no_reorder, e);
}

int hyper_plan__prepare(struct job *j, const struct profile *time_on,
			bool no_reorder, struct hp_err *e)
{
	struct hyper_plan__pipe pp = {
		.j = j, .time_on = time_on, .no_reorder = no_reorder,
		.verbose = j->verbose,
		.have = HP_F_GRAPH | HP_F_PROFILE | (time_on ? 0 : HP_F_TIMED),
	};
	int ret;

	/* from here on the job's big scratch passes from phase to phase */
	j->g.mem.keep = true;
	ret = hyper_plan__pipeline_run(&pp, HP_PASS_RETIME, HP_PASS_LIFE, e);

	if (ret) {
		/* as it was: the caller may fix the graph and prepare again */
		hyper_plan__mem_release(&j->g.mem);
		free(j->order);
		free(j->refined);
		j->order = j->refined = NULL;
		j->has_ref = false;
		return ret;
	}
	j->have = pp.have;
	return 0;
}

void hyper_plan__job_free(struct job *j)
{
	hyper_plan__life_free(&j->lf);
	if (j->has_ref)
		hyper_plan__life_free(&j->lf_ref);
	free(j->order);
	free(j->refined);
	hyper_plan__graph_free(&j->g);
	hyper_plan__laycache_free(&j->lay);
	hyper_plan__polmemo_free(&j->memo);
	j->order = j->refined = NULL;
	j->has_ref = false;
}

void hyper_plan__job_problem(struct job *j, struct problem *pb,
		 const struct goal *gl, struct hp_mem *mem)
{
	*pb = (struct problem){
		.p = &j->p, .lf = &j->lf,
		.refined = j->has_ref ? &j->lf_ref : NULL, .goal = *gl,
		.mem = mem, .lay = &j->lay, .memo = &j->memo,
	};
}

int hyper_plan__job_check_budget(const struct job *j, uint64_t budget, struct hp_err *e)
{
	const struct life *lf = &j->lf;
	uint32_t at = 0;
	uint64_t floor = hyper_plan__life_floor(lf, &at);
	char b[32], w[32];

	hyper_plan__fmt_bytes(b, sizeof(b), budget);
	if (budget < lf->max_ws) {
		hyper_plan__fmt_bytes(w, sizeof(w), lf->max_ws);
		return hyper_plan__errf(e, "budget %s (%llu bytes) is below the working set of op \"%s\": %s (%llu bytes) must be resident while it runs",
			       b, (unsigned long long)budget,
			       j->g.op[lf->order[lf->max_ws_step]].id, w,
			       (unsigned long long)lf->max_ws);
	}
	if (budget < floor) {
		hyper_plan__fmt_bytes(w, sizeof(w), floor);
		return hyper_plan__errf(e, "budget %s (%llu bytes) is below what op \"%s\" needs: its working set and the pinned tensors live around it, %s (%llu bytes)",
			       b, (unsigned long long)budget,
			       j->g.op[lf->order[at]].id, w,
			       (unsigned long long)floor);
	}
	return 0;
}

/*
 * The lesser of the two orders' bounds.  The refined order's first: it is
 * mostly the lower, and the given order's is then often ruled out below
 * it before its averaged windows (hyper_plan__lower_bound_pair()).
 */
uint64_t hyper_plan__job_bound(const struct job *j, double max_slow, struct hp_mem *mem)
{
	if (!j->has_ref)
		return hyper_plan__lower_bound(&j->lf, &j->p, max_slow, mem);
	return hyper_plan__lower_bound_pair(&j->lf_ref, &j->lf, &j->p,
					    max_slow, mem);
}
