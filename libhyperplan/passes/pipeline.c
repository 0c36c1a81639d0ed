// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The pipeline (pipeline.h): the table of passes and the driver.  Each
 * pass's run function is a thin call into its stage; what the stage does
 * is documented where it lives.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "policies/list.h"
#include "out/output.h"
#include "passes/pipeline.h"
#include "passes/rows.h"
#include "profile/retime.h"

static const char *const fact_name[HP_F_NR] = {
	"graph", "profile", "timed", "deps", "order", "refined", "life",
	"goal", "evicts", "sched", "sim", "arena", "chosen", "valid", "bound",
};

static struct hp_mem *pipe_mem(struct hyper_plan__pipe *pp)
{
	return pp->mem ? pp->mem : &pp->j->g.mem;
}

static int run_retime(struct hyper_plan__pipe *pp, struct hp_err *e)
{
	return hyper_plan__graph_retime(&pp->j->g, pp->time_on, e);
}

static bool skip_retime(const struct hyper_plan__pipe *pp)
{
	return !pp->time_on;
}

static int run_deps(struct hyper_plan__pipe *pp, struct hp_err *e)
{
	struct graph *g = &pp->j->g;

	if (!g->nop)
		return hyper_plan__errf(e, "graph: no operators");
	return hyper_plan__graph_deps(g, &pp->d, &g->mem, e);
}

static int run_order(struct hyper_plan__pipe *pp, struct hp_err *e)
{
	struct job *j = pp->j;

	j->order = hyper_plan__array(&j->g.mem, j->g.nop, sizeof(*j->order));
	if (!j->order)
		return hyper_plan__nomem(e);
	return hyper_plan__topo_order(&j->g, &pp->d, j->order, &j->g.mem, e);
}

static int run_reorder(struct hyper_plan__pipe *pp, struct hp_err *e)
{
	struct job *j = pp->j;
	size_t n = j->g.nop * sizeof(*j->order);
	int ret;

	j->refined = hyper_plan__array(&j->g.mem, j->g.nop, sizeof(*j->refined));
	if (!j->refined)
		return hyper_plan__nomem(e);
	memcpy(j->refined, j->order, n);
	ret = hyper_plan__refine_order(&j->g, &pp->d, j->refined, &j->g.mem);
	if (ret == -EINVAL)
		return hyper_plan__errf(e, "refine: the dependencies have a cycle");
	if (ret)
		return hyper_plan__nomem(e);
	j->has_ref = memcmp(j->refined, j->order, n) != 0;
	return 0;
}

static bool skip_reorder(const struct hyper_plan__pipe *pp)
{
	return pp->no_reorder;
}

static int run_life(struct hyper_plan__pipe *pp, struct hp_err *e)
{
	struct job *j = pp->j;

	if (hyper_plan__life_build(&j->lf, &j->g, j->order, &j->g.mem))
		return hyper_plan__nomem(e);
	if (j->has_ref && hyper_plan__life_build(&j->lf_ref, &j->g, j->refined, &j->g.mem)) {
		hyper_plan__life_free(&j->lf);
		return hyper_plan__nomem(e);
	}
	return 0;
}

static int run_goal(struct hyper_plan__pipe *pp, struct hp_err *e)
{
	uint64_t budget = pp->pb->goal.budget;

	return budget ? hyper_plan__job_check_budget(pp->j, budget, e) : 0;
}

/* What the search loop holds when it calls its passes. */
#define HP_IN_LOOP	(HP_F_GRAPH | HP_F_PROFILE | HP_F_TIMED | HP_F_LIFE | \
			 HP_F_GOAL)

/* The layout pass on @r, kept by the search loop; see run_search(). */
static int layout_pass(const struct problem *pb, struct result *r,
		       uint64_t limit, bool printed_only, struct hp_err *e)
{
	struct hyper_plan__pipe pp = {
		.pb = pb, .r = r, .mem = pb->mem, .in_loop = true,
		.printed_only = printed_only, .budget = limit,
		.have = HP_IN_LOOP | HP_F_SCHED,
	};

	return hyper_plan__pipeline_run(&pp, HP_PASS_LAYOUT, HP_PASS_LAYOUT, e);
}

/*
 * The search loop: the policy's knobs searched, each probe selected,
 * emitted and simulated, the kept plan laid out in the arena and fitted
 * to the budget (policies/fit_arena.c).
 *
 * What reads a plan's layout (offsets, arena, peak residency): the
 * schedule written (-o, --trace) and the arena and peaks lines, the
 * chosen policy's all; a budget's fit (arena_over); a later plan of the
 * same steps, which takes a row's layout (passes/rows.c); and libhyper's
 * validator, which checks the offsets.  A --compare row's figures
 * (timed peak, reduction, slowdown, stall, GiB in and out) are its
 * simulation's, made before any layout, as --plot's series are.  So a
 * row printed only (@pp->printed_only: not the chosen policy, not
 * plotted, and no budget, which this checks again) is laid out in one
 * pass in start order, each size's blocks reused (HU_ARENA_ONLINE,
 * O(n log n)), offsets the validator checks as any: each of
 * DeepSeek-V2-Lite training's rows once made up to five greedy
 * placements for them, then one of 201M instructions, now 15M.  That
 * layout is not the planner's, so its row is never a later plan's twin
 * (the caller keeps it out of struct hp_polmemo's row); it still takes
 * a twin's, cheaper again.  Handed to the validator with no offsets,
 * the schedule would be placed by libhyper itself (up to 64Ki
 * residencies, every greedy order): no cheaper.
 */
static int run_search(struct hyper_plan__pipe *pp, struct hp_err *e)
{
	int ret;

	if (pp->printed_only && !pp->pb->goal.budget) {
		/* hyper_plan__run_policy_fit() with no budget, but the layout */
		ret = hyper_plan__run_policy(pp->pol, pp->pb, pp->r, e);
		if (!ret && pp->r->ok)
			ret = layout_pass(pp->pb, pp->r, 0, true, e);
	} else {
		ret = hyper_plan__run_policy_fit(pp->pol, pp->pb, pp->r, e);
	}

	/*
	 * The probes' buffers are the search's: freed once it ends, so that
	 * the layout, the checks and the writing that follow have the memory
	 * back (a search after this one allocates them again).
	 */
	if (pp->pb->memo)
		hyper_plan__simbuf_free(&pp->pb->memo->sim);
	if (!ret && !pp->r->ok)
		ret = hyper_plan__errf(e, "%s: no schedule meets the goal",
			      hyper_plan__policy_name[pp->pol]);
	return ret;
}

static int run_emit(struct hyper_plan__pipe *pp, struct hp_err *e)
{
	struct result *r = pp->r;
	/* the emitter's arrays kept from one probe to the next */
	struct hp_emitbuf *buf = pp->pb && pp->pb->memo ?
				 &pp->pb->memo->sim.emit : NULL;
	int ret = hyper_plan__sched_start_in(&r->s, pp->lf, pp->ev, pp->nev,
					     buf, pipe_mem(pp), e);

	/* a probe that may stop early is emitted as far as its run goes */
	if (!ret && !pp->give_up) {
		ret = hyper_plan__sched_emit(&r->s, r->s.n, e);
		if (ret)
			hyper_plan__sched_free(&r->s);
	}
	if (!ret)
		r->s.budget = pp->budget;
	return ret;
}

/* A simulation that breaks the budget is a probe that failed, not an error. */
static int run_simulate(struct hyper_plan__pipe *pp, struct hp_err *e)
{
	struct result *r = pp->r;
	struct hp_err ignored;
	struct sim_hooks stop = {
		/* a budget goal asks for the peak alone (search.c, feasible()) */
		.give_up = true,
		.max_slow = pp->pb->goal.budget ? HUGE_VAL : pp->pb->goal.max_slow,
		.max_peak = pp->pb->goal.budget,
		.lf = pp->lf,
	};
	int ret = hyper_plan__simulate_in(&r->s, pp->pb->p,
					  pp->give_up ? &stop : NULL, &r->sim,
					  pp->pb->memo ? &pp->pb->memo->sim :
					  NULL, pipe_mem(pp), &ignored);

	if (ret == -ENOMEM || ret == -EINVAL) {	/* -EINVAL: the emission's */
		hyper_plan__sched_free(&r->s);
		return ret == -ENOMEM ? hyper_plan__nomem(e) :
		       hyper_plan__errf(e, "%s", ignored.msg);
	}
	r->ok = !ret;
	r->s.pred = (struct prediction){ r->sim.peak, r->sim.stall_ns,
					 r->sim.makespan_ns };
	return 0;
}

static int run_layout(struct hyper_plan__pipe *pp, struct hp_err *e)
{
	const struct sched *twin =
		pp->budget ? NULL :
		hyper_plan__row_twin(pp->pb, &pp->r->s, false);

	/*
	 * The probes' buffers (three arrays of the graph's size) are the
	 * search's, and the layout is the run's highest point in memory:
	 * freed before it, the arena's arrays take their place instead of
	 * growing the heap (41 MB of 890 at 1M decode operators).  A probe
	 * after this layout (under a budget) allocates them again.
	 */
	if (pp->pb && pp->pb->memo)
		hyper_plan__simbuf_free(&pp->pb->memo->sim);
	if (twin) {
		pp->pb->memo->row_layouts++;
		return hyper_plan__row_layout(&pp->r->s, twin, pipe_mem(pp),
					      e);
	}
	if (pp->printed_only)	/* run_search() */
		return hyper_plan__sched_layout_first(&pp->r->s, pipe_mem(pp),
						      e);
	return hyper_plan__sched_layout_cached(&pp->r->s, pp->budget,
					       pp->pb ? pp->pb->lay : NULL,
					       pipe_mem(pp), e);
}

/* The schedule handed out is the one validated: built once. */
static int run_validate(struct hyper_plan__pipe *pp, struct hp_err *e)
{
	if (!pp->hs && !pp->name &&
	    hyper_plan__row_twin(pp->pb, &pp->r->s, true)) {
		/* the same input as a row's that passed: it passes */
		pp->pb->memo->row_checks++;
		return 0;
	}
	return hyper_plan__sched_validate(&pp->r->s, pp->name ? pp->name : "",
					  pp->hs, pipe_mem(pp), e);
}

static int run_bound(struct hyper_plan__pipe *pp, struct hp_err *e)
{
	struct job tmp = *pp->j;
	struct hp_mem *mem = pipe_mem(pp);

	tmp.p = *pp->pb->p;
	pp->bound = hyper_plan__job_bound(&tmp, pp->pb->goal.max_slow, mem);
	return mem->failed ? hyper_plan__nomem(e) : 0;
}

static bool skip_bound(const struct hyper_plan__pipe *pp)
{
	return !pp->want_bound || pp->pb->goal.budget;
}

const struct hyper_plan__pass hyper_plan__passes[HP_PASS_NR] = {
	[HP_PASS_RETIME] = {
		"retime", "profile/retime.c",
		"times each operator on the profile (graph files; generated graphs are timed as they are built)",
		HP_F_GRAPH | HP_F_PROFILE, HP_F_TIMED, false,
		run_retime, skip_retime,
	},
	[HP_PASS_DEPS] = {
		"deps", "passes/order.c",
		"dependencies by versions of each tensor; a cycle is named",
		HP_F_GRAPH, HP_F_DEPS, false, run_deps, NULL,
	},
	[HP_PASS_ORDER] = {
		"order", "passes/order.c", "stable topological sort: the initial order",
		HP_F_DEPS, HP_F_ORDER, false, run_order, NULL,
	},
	[HP_PASS_REORDER] = {
		"reorder", "passes/reorder.c",
		"runs memory-releasing operators earlier (not with --no-reorder)",
		HP_F_DEPS | HP_F_ORDER, HP_F_REFINED, false,
		run_reorder, skip_reorder,
	},
	[HP_PASS_LIFE] = {
		"life", "passes/life.c",
		"gaps, working sets, no-offload residency and timeline of each order",
		HP_F_ORDER | HP_F_TIMED, HP_F_LIFE, false, run_life, NULL,
	},
	[HP_PASS_GOAL] = {
		"goal", "job.c",
		"a budget is refused below the working set or the floor",
		HP_F_LIFE, HP_F_GOAL, false, run_goal, NULL,
	},
	[HP_PASS_SELECT] = {
		"select", "passes/plan.c, passes/plan_take.c, policies/policy_*.c",
		"the policy's offload decisions for one knob value: the search loop's own call",
		HP_F_LIFE | HP_F_GOAL, HP_F_EVICTS, true, NULL, NULL,
	},
	[HP_PASS_EMIT] = {
		"emit", "passes/sched.c",
		"cache operators of each step, by one emitter for every policy",
		HP_F_LIFE | HP_F_EVICTS, HP_F_SCHED, true, run_emit, NULL,
	},
	[HP_PASS_SIMULATE] = {
		"simulate", "sim/sim.c",
		"replays the schedule on the profile: timed peak, stall, makespan",
		HP_F_SCHED | HP_F_TIMED | HP_F_PROFILE, HP_F_SIM, true,
		run_simulate, NULL,
	},
	[HP_PASS_LAYOUT] = {
		"layout",
		"passes/arena.c, passes/rows.c, util/residency.c, util/arena.c",
		"residency intervals placed in the arena, fitted to the budget (a row printed only: one pass in start order, each size's blocks reused)",
		HP_F_SCHED, HP_F_ARENA, true, run_layout, NULL,
	},
	[HP_PASS_VALIDATE] = {
		"validate", "out/sched_hyper.c",
		"libhyper's validator builds the schedule handed out, once",
		HP_F_CHOSEN | HP_F_ARENA, HP_F_VALID, false, run_validate, NULL,
	},
	[HP_PASS_BOUND] = {
		"bound", "sim/bound.c",
		"the lower bound on the peak at the slowdown (no budget; --bound)",
		HP_F_LIFE | HP_F_TIMED | HP_F_PROFILE, HP_F_BOUND, false,
		run_bound, skip_bound,
	},
};

const struct hyper_plan__pass hyper_plan__search_loop = {
	"search loop", "policies/search.c, policies/fit_arena.c",
	"not a pass: searches the policy's knobs, running select, emit and simulate per probe and layout per kept plan; keeps the best",
	HP_F_LIFE | HP_F_GOAL | HP_F_TIMED | HP_F_PROFILE,
	HP_F_EVICTS | HP_F_SCHED | HP_F_SIM | HP_F_ARENA | HP_F_CHOSEN, false,
	run_search, NULL,
};

void hyper_plan__pipeline_facts(char *buf, size_t len, uint32_t f)
{
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < HP_F_NR; i++)
		if (f & (1U << i) && at < len)
			at += snprintf(buf + at, len - at, "%s%s",
				       at ? ", " : "", fact_name[i]);
	if (!at)
		snprintf(buf, len, "-");
}

static int missing(const struct hyper_plan__pass *p, uint32_t have,
		   struct hp_err *e)
{
	char m[200];

	hyper_plan__pipeline_facts(m, sizeof(m), p->requires & ~have);
	return hyper_plan__errf(e, "internal error: pass \"%s\" requires %s, which no pass before it ensures",
		       p->name, m);
}

static int run_one(struct hyper_plan__pipe *pp,
		   const struct hyper_plan__pass *p, struct hp_err *e)
{
	double t0 = 0;
	int ret;

	if (p->skip && p->skip(pp))
		return 0;
	if (p->requires & ~pp->have)
		return missing(p, pp->have, e);
	if (!p->run)
		return hyper_plan__errf(e, "internal error: pass \"%s\" is the search loop's own call",
			       p->name);
	if (pp->verbose)
		t0 = hyper_plan__now_ns();
	ret = p->run(pp, e);
	if (pp->verbose)
		fprintf(pp->verbose, "hyper-plan: %s%-11s %10.3f ms%s\n",
			p == &hyper_plan__search_loop ? "" : "pass ", p->name,
			(hyper_plan__now_ns() - t0) / 1e6, ret ? " (failed)" : "");
	if (!ret)
		pp->have |= p->ensures;
	return ret;
}

int hyper_plan__pipeline_run(struct hyper_plan__pipe *pp, int first, int last,
			     struct hp_err *e)
{
	bool looped = false;
	int ret = 0;

	for (int i = first; i <= last && !ret; i++) {
		const struct hyper_plan__pass *p = &hyper_plan__passes[i];

		if (!p->in_loop || pp->in_loop) {
			ret = run_one(pp, p, e);
		} else if (!looped) {
			looped = true;
			ret = run_one(pp, &hyper_plan__search_loop, e);
		}
	}
	if (pp->d.off || pp->d.dst || pp->d.indeg) {
		/* the dependencies serve the orders only */
		hyper_plan__deps_free(&pp->d);
		memset(&pp->d, 0, sizeof(pp->d));
		pp->have &= ~HP_F_DEPS;
	}
	return ret;
}

/* The zero-tensor probe @pb->memo tells of, with these inputs; NULL: none. */
static struct hp_zseen *zseen_find(const struct problem *pb,
				   const struct life *lf, uint64_t budget,
				   bool give_up)
{
	for (int i = 0; pb->memo && i < HP_ZSEEN_N; i++) {
		struct hp_zseen *z = &pb->memo->zero[i];

		if (z->lf == lf && z->p == pb->p && z->budget == budget &&
		    z->give_up == give_up &&
		    z->goal.max_slow == pb->goal.max_slow &&
		    z->goal.budget == pb->goal.budget)
			return z;
	}
	return NULL;
}

static void zseen_note(const struct problem *pb, const struct life *lf,
		       uint64_t budget, bool give_up, const struct result *r)
{
	struct hp_polmemo *m = pb->memo;

	m->zero[m->zero_next] = (struct hp_zseen){
		.lf = lf, .p = pb->p, .goal = pb->goal, .budget = budget,
		.give_up = give_up, .ok = r->ok,
		.emitted = hyper_plan__sched_emitted(&r->s), .sim = r->sim,
	};
	m->zero_next = (m->zero_next + 1) % HP_ZSEEN_N;
}

/*
 * @z's probe again: its schedule emitted as far as that run emitted it
 * (every step where it ran to its end), its figures the run's, and the
 * simulation, a function of the same schedule and inputs, not run.
 */
static int zseen_again(struct hyper_plan__pipe *pp, const struct hp_zseen *z,
		       struct hp_err *e)
{
	struct result *r = pp->r;
	int ret = hyper_plan__pipeline_run(pp, HP_PASS_EMIT, HP_PASS_EMIT, e);

	if (!ret)
		ret = hyper_plan__sched_emit(&r->s, z->emitted, e);
	if (ret) {
		hyper_plan__sched_free(&r->s);
		return ret == -ENOMEM ? hyper_plan__nomem(e) : ret;
	}
	pp->pb->memo->zero_hits++;
	r->ok = z->ok;
	r->sim = z->sim;
	r->s.pred = (struct prediction){ r->sim.peak, r->sim.stall_ns,
					 r->sim.makespan_ns };
	return 0;
}

int hyper_plan__probe(const struct problem *pb, const struct life *lf,
		      const struct evict *ev, size_t nev, uint64_t budget,
		      bool give_up, struct result *r, struct hp_err *e)
{
	struct hyper_plan__pipe pp = {
		.pb = pb, .r = r, .mem = pb->mem, .in_loop = true, .lf = lf,
		.ev = ev, .nev = nev, .budget = budget, .give_up = give_up,
		.have = HP_IN_LOOP | HP_F_EVICTS,
	};
	struct hp_zseen *z;
	double floor_ns;
	int ret;

	memset(r, 0, sizeof(*r));
	if (pb->mem->failed)
		return hyper_plan__nomem(e);	/* the evictions given are incomplete */
	/*
	 * A probe that only asks whether it meets a slowdown goal is first
	 * held against the floor its prefetches alone put on the makespan
	 * (sim.h): one beyond the goal is a probe the simulation would give
	 * up on, so it is neither emitted nor simulated.
	 */
	if (give_up && !pb->goal.budget) {
		if (hyper_plan__sim_fetch_floor_in(lf, pb->p, ev, nev,
						   pb->memo ? &pb->memo->sim :
						   NULL, pb->mem, &floor_ns))
			return hyper_plan__nomem(e);
		if (hyper_plan__sim_beyond(floor_ns, lf->t0[lf->n],
					   pb->goal.max_slow))
			return 0;	/* r->ok false: the goal is out of reach */
	}
	if (nev)
		return hyper_plan__pipeline_run(&pp, HP_PASS_EMIT,
						HP_PASS_SIMULATE, e);
	z = zseen_find(pb, lf, budget, give_up);
	if (z)
		return zseen_again(&pp, z, e);
	ret = hyper_plan__pipeline_run(&pp, HP_PASS_EMIT, HP_PASS_SIMULATE, e);
	if (!ret && pb->memo)
		zseen_note(pb, lf, budget, give_up, r);
	return ret;
}

bool hyper_plan__row_printed_only(int pol, int chosen, bool plotted,
				  uint64_t budget)
{
	return pol != chosen && !plotted && !budget;
}

int hyper_plan__layout(const struct problem *pb, struct result *r,
		       uint64_t limit, struct hp_err *e)
{
	return layout_pass(pb, r, limit, false, e);
}

int hyper_plan__pipeline_check(const struct hyper_plan__pass *t, size_t n,
			       uint32_t inputs, struct hp_err *e)
{
	const struct hyper_plan__pass *loop = &hyper_plan__search_loop;
	uint32_t have = inputs, in_loop = 0;
	bool looped = false, inside = false;

	for (size_t i = 0; i < n; i++) {
		const struct hyper_plan__pass *p = &t[i];

		if (p->in_loop && !looped) {
			if (loop->requires & ~have)
				return missing(loop, have, e);
			looped = inside = true;
			in_loop = have;
		}
		if (p->in_loop && inside) {
			if (p->requires & ~in_loop)
				return missing(p, in_loop, e);
			in_loop |= p->ensures;
			continue;
		}
		if (p->in_loop)
			return hyper_plan__errf(e, "internal error: pass \"%s\" is in the search loop, which ended before it",
				       p->name);
		if (inside) {
			/* leaving the loop: what it ensures is its passes' */
			if (loop->ensures & ~(in_loop | HP_F_CHOSEN))
				return hyper_plan__errf(e, "internal error: the search loop ensures what none of its passes does");
			have |= loop->ensures;
			inside = false;
		}
		if (p->requires & ~have)
			return missing(p, have, e);
		have |= p->ensures;
	}
	return 0;
}

static void row(FILE *f, const char *num, const char *name,
		const struct hyper_plan__pass *p)
{
	char r[200], en[200];

	hyper_plan__pipeline_facts(r, sizeof(r), p->requires);
	hyper_plan__pipeline_facts(en, sizeof(en), p->ensures);
	fprintf(f, "| %s | %s | %s | %s | %s | `%s` |\n", num, name, r, en,
		p->what, p->src);
}

void hyper_plan__pipeline_print(FILE *f)
{
	bool looped = false;
	char num[16], name[64];

	fprintf(f, "| # | pass | requires | ensures | what | source |\n");
	fprintf(f, "|---|------|----------|---------|------|--------|\n");
	for (int i = 0; i < HP_PASS_NR; i++) {
		const struct hyper_plan__pass *p = &hyper_plan__passes[i];

		if (p->in_loop && !looped) {
			looped = true;
			row(f, "", "**search loop**", &hyper_plan__search_loop);
		}
		snprintf(num, sizeof(num), "%d", i + 1);
		snprintf(name, sizeof(name), "%s`%s`", p->in_loop ? "↳ " : "",
			 p->name);
		row(f, num, name, p);
	}
}
