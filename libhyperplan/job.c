// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "bound.h"
#include "job.h"
#include "order.h"

int job_prepare(struct job *j, bool no_reorder, struct hp_err *e)
{
	struct graph *g = &j->g;
	struct deps d;
	int ret;

	if (!g->nop)
		return hp_errf(e, "graph: no operators");
	ret = graph_deps(g, &d, &g->mem, e);
	if (ret)
		return ret;
	j->order = hp_array(&g->mem, g->nop, sizeof(*j->order));
	ret = j->order ? topo_order(g, &d, j->order, &g->mem, e) : hp_nomem(e);
	if (!ret && !no_reorder) {
		j->refined = hp_array(&g->mem, g->nop, sizeof(*j->refined));
		if (!j->refined)
			ret = hp_nomem(e);
		else
			memcpy(j->refined, j->order, g->nop * sizeof(*j->order));
		if (!ret && refine_order(g, &d, j->refined, &g->mem))
			ret = hp_nomem(e);
		if (!ret)
			j->has_ref = memcmp(j->refined, j->order,
					    g->nop * sizeof(*j->order)) != 0;
	}
	deps_free(&d);
	if (!ret && life_build(&j->lf, g, j->order, &g->mem))
		ret = hp_nomem(e);
	if (!ret && j->has_ref &&
	    life_build(&j->lf_ref, g, j->refined, &g->mem)) {
		life_free(&j->lf);
		ret = hp_nomem(e);
	}
	if (ret) {
		/* as it was: the caller may fix the graph and prepare again */
		free(j->order);
		free(j->refined);
		j->order = j->refined = NULL;
		j->has_ref = false;
	}
	return ret;
}

void job_free(struct job *j)
{
	life_free(&j->lf);
	if (j->has_ref)
		life_free(&j->lf_ref);
	free(j->order);
	free(j->refined);
	graph_free(&j->g);
	j->order = j->refined = NULL;
	j->has_ref = false;
}

void job_problem(const struct job *j, struct problem *pb,
		 const struct goal *gl, struct hp_mem *mem)
{
	*pb = (struct problem){
		.p = &j->p, .lf = &j->lf,
		.refined = j->has_ref ? &j->lf_ref : NULL, .goal = *gl,
		.mem = mem,
	};
}

int job_check_budget(const struct job *j, uint64_t budget, struct hp_err *e)
{
	const struct life *lf = &j->lf;
	uint32_t at = 0;
	uint64_t floor = life_floor(lf, &at);
	char b[32], w[32];

	fmt_bytes(b, sizeof(b), budget);
	if (budget < lf->max_ws) {
		fmt_bytes(w, sizeof(w), lf->max_ws);
		return hp_errf(e, "budget %s (%llu bytes) is below the working set of op \"%s\": %s (%llu bytes) must be resident while it runs",
			       b, (unsigned long long)budget,
			       j->g.op[lf->order[lf->max_ws_step]].id, w,
			       (unsigned long long)lf->max_ws);
	}
	if (budget < floor) {
		fmt_bytes(w, sizeof(w), floor);
		return hp_errf(e, "budget %s (%llu bytes) is below what op \"%s\" needs: its working set and the pinned tensors live around it, %s (%llu bytes)",
			       b, (unsigned long long)budget,
			       j->g.op[lf->order[at]].id, w,
			       (unsigned long long)floor);
	}
	return 0;
}

uint64_t job_bound(const struct job *j, double max_slow, struct hp_mem *mem)
{
	uint64_t b = lower_bound(&j->lf, &j->p, max_slow, mem);

	if (j->has_ref && !mem->failed) {
		uint64_t r = lower_bound(&j->lf_ref, &j->p, max_slow, mem);

		b = r < b ? r : b;
	}
	return b;
}
