// SPDX-License-Identifier: LGPL-2.1-or-later
/* hyper_plan_run() and what a plan gives back. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "out/output.h"
#include "passes/pipeline.h"

static void set_err(char *err, size_t errlen, const struct hp_err *e)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", e->msg);
}

static int check_opts(const struct hyper_plan_opts *o, struct hp_err *e)
{
	for (size_t i = 0; i < sizeof(o->reserved) / sizeof(o->reserved[0]); i++)
		if (o->reserved[i])
			return hyper_plan__errf(e, "hyper_plan_opts: reserved fields must be zero");
	if (o->flags & ~HYPER_PLAN_FLAGS_MASK)
		return hyper_plan__errf(e, "hyper_plan_opts: unknown flags 0x%x",
			       o->flags & ~HYPER_PLAN_FLAGS_MASK);
	if (o->policy > HYPER_PLAN_POLICY_GREEDY)
		return hyper_plan__errf(e, "hyper_plan_opts: unknown policy %u (enum hyper_plan_policy)",
			       o->policy);
	if ((o->flags & HYPER_PLAN_SLOWDOWN) &&
	    !(o->max_slowdown >= 0 && o->max_slowdown <= 10))
		return hyper_plan__errf(e, "hyper_plan_opts: max_slowdown must be a fraction in 0..10 (0.01 is 1%%)");
	if (o->profile && o->profile_file)
		return hyper_plan__errf(e, "hyper_plan_opts: give profile or profile_file, not both");
	return 0;
}

/* The public policy numbers are not the list's: PLAN is the default, 0. */
static int policy_of(uint32_t p)
{
	static const int map[] = {
		[HYPER_PLAN_POLICY_PLAN] = POL_PLAN,
		[HYPER_PLAN_POLICY_NONE] = POL_NONE,
		[HYPER_PLAN_POLICY_DISTANCE] = POL_DISTANCE,
		[HYPER_PLAN_POLICY_GREEDY] = POL_GREEDY,
	};

	return map[p];
}

static uint32_t public_policy(int pol)
{
	switch (pol) {
	case POL_NONE: return HYPER_PLAN_POLICY_NONE;
	case POL_DISTANCE: return HYPER_PLAN_POLICY_DISTANCE;
	case POL_GREEDY: return HYPER_PLAN_POLICY_GREEDY;
	default: return HYPER_PLAN_POLICY_PLAN;
	}
}

/*
 * Times the graph for @p and analyses it, once; later plans use @p too.
 * Plans running at once wait here for the first to prepare the graph;
 * from then on they only read it.
 */
static int prepare(struct hyper_plan_graph *g, const struct profile *p,
		   struct hp_mem *mem, struct hp_err *e)
{
	int ret = 0;

	if (!__atomic_load_n(&g->prepared, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&g->lock);
		if (!__atomic_load_n(&g->prepared, __ATOMIC_RELAXED)) {
			g->j.g.mem.failed = false;
			/* fails with the graph as it was: the caller may fix
			 * it, or free memory, and plan again */
			ret = hyper_plan__prepare(&g->j, p, false, e);
			if (!ret) {
				/*
				 * frozen from here on (graph_api.c) and
				 * planned by index: its id maps would only
				 * hold memory
				 */
				hyper_plan__graph_drop_ids(&g->j.g);
				/*
				 * what the preparation kept is the plan's
				 * that prepared it; the graph, shared by
				 * plans running at once, keeps nothing more
				 */
				hyper_plan__mem_hand(&g->j.g.mem, mem);
				g->j.g.mem.keep = false;
				__atomic_store_n(&g->prepared, true,
						 __ATOMIC_RELEASE);
			}
		}
		pthread_mutex_unlock(&g->lock);
		if (ret)
			return ret;
	}
	if (strcmp(g->j.g.timed_on, p->name))
		return hyper_plan__errf(e, "graph \"%s\" was timed for %s when first planned; build or load it again to plan it for %s",
			       g->j.g.name, g->j.g.timed_on, p->name);
	return 0;
}

int hyper_plan_run(struct hyper_plan_graph *graph,
		   const struct hyper_plan_opts *opts, struct hyper_plan **planp,
		   char *err, size_t errlen)
{
	struct hp_mem mem = { .keep = true };

	return hyper_plan__plan_run(graph, opts, planp, &mem, err, errlen);
}

int hyper_plan__plan_run(struct hyper_plan_graph *graph,
		const struct hyper_plan_opts *opts, struct hyper_plan **planp,
		struct hp_mem *mem, char *err, size_t errlen)
{
	static const struct hyper_plan_opts defaults;
	const struct hyper_plan_opts *o = opts ? opts : &defaults;
	struct hp_err e = { "" };
	struct hyper_plan *p;
	struct hyper_plan__pipe pp;
	struct problem pb;
	struct goal gl;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!planp)
		return hyper_plan__null_arg(err, errlen, "hyper_plan_run", "planp",
					    "a struct hyper_plan * to fill");
	*planp = NULL;
	if (!graph)
		return hyper_plan__null_arg(err, errlen, "hyper_plan_run", "graph",
					    "a graph from hyper_plan_graph_new() or hyper_plan_graph_load()");
	if (check_opts(o, &e)) {
		set_err(err, errlen, &e);
		return -EINVAL;
	}
	p = hyper_plan__calloc(mem, 1, sizeof(*p));
	if (!p) {
		hyper_plan__nomem(&e);
		set_err(err, errlen, &e);
		return -ENOMEM;
	}
	p->policy = policy_of(o->policy);
	gl = (struct goal){
		.max_slow = o->flags & HYPER_PLAN_SLOWDOWN ? o->max_slowdown : 0.01,
		.budget = o->budget_bytes,
	};
	ret = o->profile_file ? hyper_plan__profile_load(o->profile_file, &p->p, &e) :
	      hyper_plan__profile_get(o->profile ? o->profile : "supernode-npu", &p->p, &e);
	if (!ret)
		ret = prepare(graph, &p->p, mem, &e);
	if (ret)
		goto fail;
	__atomic_add_fetch(&graph->refs, 1, __ATOMIC_ACQ_REL);
	p->g = graph;
	hyper_plan__job_problem(&graph->j, &pb, &gl, mem);
	pb.p = &p->p;
	/*
	 * A plan of the API keeps no layouts or results on its graph: it
	 * makes the same allocations each time, whatever was planned before,
	 * and plans of one graph run at once share nothing more.
	 */
	pb.lay = NULL;
	pb.memo = NULL;
	if (o->flags & HYPER_PLAN_NO_REORDER)
		pb.refined = NULL;
	pp = (struct hyper_plan__pipe){
		.j = &graph->j, .pol = p->policy, .pb = &pb, .r = &p->res,
		.name = graph->j.g.name, .hs = &p->hs, .mem = mem,
		.want_bound = o->flags & HYPER_PLAN_BOUND,
		.have = graph->j.have,
	};
	/* goal, the search loop, validate, bound: passes/pipeline.c */
	ret = hyper_plan__pipeline_run(&pp, HP_PASS_GOAL, HP_PASS_BOUND, &e);
	p->bound = pp.bound;
	/* whatever failed for memory on the way, the plan is refused */
	if (!ret && mem->failed)
		ret = -ENOMEM;
	if (ret == -ENOMEM)
		hyper_plan__nomem(&e);
	if (ret)
		goto fail;
	hyper_plan__mem_release(mem);
	*planp = p;
	return 0;
fail:
	hyper_plan__mem_release(mem);
	set_err(err, errlen, &e);
	hyper_plan_free(p);
	return ret < 0 ? ret : -EINVAL;
}

void hyper_plan_free(struct hyper_plan *plan)
{
	if (!plan)
		return;
	hyper_schedule_free(plan->hs);
	hyper_plan__result_free(&plan->res);
	hyper_plan__graph_put(plan->g);
	free(plan);
}

int hyper_plan_prediction(const struct hyper_plan *plan,
			  struct hyper_plan_prediction *pred)
{
	const struct sim_result *r;

	if (!plan || !pred)
		return -EINVAL;
	r = &plan->res.sim;
	*pred = (struct hyper_plan_prediction){
		.peak_device_bytes = r->peak,
		.baseline_peak_bytes = plan->g->j.lf.peak0,
		.bound_bytes = plan->bound,
		.stall_ns = (uint64_t)r->stall_ns,
		.makespan_ns = (uint64_t)r->makespan_ns,
		.compute_ns = (uint64_t)r->compute_ns,
		.h2d_bytes = (uint64_t)r->h2d_bytes,
		.d2h_bytes = (uint64_t)r->d2h_bytes,
		.slowdown = slowdown(r),
		.policy = public_policy(plan->res.from[0] ?
					hyper_plan__policy_parse(plan->res.from) :
					plan->policy),
		.arena_over = plan->res.s.arena_over != 0,
		.arena_bytes = plan->res.s.arena_over ? plan->res.s.arena_over :
			       plan->res.s.arena,
	};
	return 0;
}

/* The schedule validated when the plan was made (built once). */
int hyper_plan_schedule(const struct hyper_plan *plan,
			struct hyper_schedule **schedp, char *err,
			size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!schedp)
		return hyper_plan__null_arg(err, errlen, "hyper_plan_schedule",
					    "schedp", "a struct hyper_schedule * to fill");
	if (!plan)
		return hyper_plan__null_arg(err, errlen, "hyper_plan_schedule",
					    "plan", "a plan from hyper_plan_run()");
	*schedp = hyper_schedule_get(plan->hs);
	return 0;
}

int hyper_plan_write_json(const struct hyper_plan *plan, const char *path,
			  char *err, size_t errlen)
{
	struct hp_err e = { "" };
	char note[400];
	FILE *f;
	int ret = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!plan)
		return hyper_plan__null_arg(err, errlen, "hyper_plan_write_json",
					    "plan", "a plan from hyper_plan_run()");
	if (!path)
		return hyper_plan__null_arg(err, errlen, "hyper_plan_write_json",
					    "path", "the file to write");
	f = fopen(path, "w");
	if (!f) {
		ret = -errno;
		hyper_plan__errf(&e, "%s: %s", path, strerror(errno));
		set_err(err, errlen, &e);
		return ret;
	}
	hyper_plan__plan_note(note, sizeof(note), plan->res.policy, &plan->p,
		  plan->res.params);
	hyper_plan__sched_write_json(&plan->res.s, f, plan->g->j.g.name, note);
	if (ferror(f) | fclose(f)) {
		hyper_plan__errf(&e, "%s: write error", path);
		set_err(err, errlen, &e);
		return -EIO;
	}
	return 0;
}
