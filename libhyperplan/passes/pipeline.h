/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The planner's pipeline in one table: each pass with what it requires
 * and what it ensures, and one driver that runs them in order, checking
 * both (in the spirit of torch.fx's PassManager).  The search loop is not
 * a pass: it sits between "goal" and "validate", and runs the passes
 * marked in_loop once per probe or per fitted plan (policies/search.c,
 * policies/fit_arena.c): select is its own call (the policy's knob),
 * emit and simulate go through the driver (hyper_plan__probe()), and so
 * does layout (hyper_plan__layout()).
 * Documentation/planner.md's "The passes" follows this table;
 * `hyper-plan --passes` prints it.
 */
#ifndef HP_PIPELINE_H
#define HP_PIPELINE_H

#include "job.h"
#include "passes/order.h"

/* The facts passes require and ensure. */
enum {
	HP_F_GRAPH	= 1U << 0,	/* operators and tensors, checked */
	HP_F_PROFILE	= 1U << 1,	/* the device profile planned for */
	HP_F_TIMED	= 1U << 2,	/* each operator's time on it */
	HP_F_DEPS	= 1U << 3,	/* dependencies between operators */
	HP_F_ORDER	= 1U << 4,	/* the initial execution order */
	HP_F_REFINED	= 1U << 5,	/* the refined order */
	HP_F_LIFE	= 1U << 6,	/* gaps, working sets, residency */
	HP_F_GOAL	= 1U << 7,	/* a slowdown or budget, checked */
	HP_F_EVICTS	= 1U << 8,	/* offload decisions */
	HP_F_SCHED	= 1U << 9,	/* cache operators per step */
	HP_F_SIM	= 1U << 10,	/* the timed peak, stall, makespan */
	HP_F_ARENA	= 1U << 11,	/* residency offsets in the arena */
	HP_F_CHOSEN	= 1U << 12,	/* the search loop's schedule */
	HP_F_VALID	= 1U << 13,	/* libhyper's validator took it */
	HP_F_BOUND	= 1U << 14,	/* the lower bound on the peak */
	HP_F_NR		= 15,
};

/* The passes, in the table's order. */
enum {
	HP_PASS_RETIME, HP_PASS_DEPS, HP_PASS_ORDER, HP_PASS_REORDER,
	HP_PASS_LIFE, HP_PASS_GOAL, HP_PASS_SELECT, HP_PASS_EMIT,
	HP_PASS_SIMULATE, HP_PASS_LAYOUT, HP_PASS_VALIDATE, HP_PASS_BOUND,
	HP_PASS_NR,
};

/* What the driver runs passes on: a job, and for a plan its result. */
struct hyper_plan__pipe {
	struct job *j;
	const struct profile *time_on;	/* retime: the profile to time on */
	bool no_reorder;
	/* a plan */
	int pol;			/* POL_* */
	const struct problem *pb;
	struct result *r;
	const char *name;		/* the validated schedule's */
	struct hyper_schedule **hs;	/* validate: keeps it; NULL: freed */
	/*
	 * a --compare row that is printed only: its layout need only pass
	 * the validator (passes/pipeline.c, run_search)
	 */
	bool printed_only;
	bool want_bound;
	uint64_t bound;
	struct hp_mem *mem;		/* the plan's; NULL: the graph's */
	FILE *verbose;			/* each pass as it runs, timed */
	uint32_t have;			/* facts so far */
	struct deps d;			/* deps to reorder */
	/* the search loop's passes, on one probe or kept plan */
	bool in_loop;			/* run the in_loop passes */
	const struct life *lf;		/* the order probed */
	const struct evict *ev;		/* select's decisions */
	size_t nev;
	uint64_t budget;		/* emit: the schedule's; layout: the arena's */
	bool give_up;			/* simulate: stop once pb's goal is out of reach */
};

struct hyper_plan__pass {
	const char *name, *src, *what;
	uint32_t requires, ensures;
	bool in_loop;			/* run by the search loop, not here */
	/* 0, or -errno with @e set; NULL for in_loop passes */
	int (*run)(struct hyper_plan__pipe *pp, struct hp_err *e);
	/* whether it has nothing to do for @pp (NULL: never) */
	bool (*skip)(const struct hyper_plan__pipe *pp);
};

extern const struct hyper_plan__pass hyper_plan__passes[HP_PASS_NR];

/* The search loop, named: what it requires and ensures. */
extern const struct hyper_plan__pass hyper_plan__search_loop;

/*
 * Runs passes @first..@last of the table in order (the search loop
 * where the in_loop passes stand), each once its requires hold: a pass
 * whose requires do not is the planner's bug, and refused as such.
 * Returns 0 or the failing pass's -errno, @e saying why.
 */
int hyper_plan__pipeline_run(struct hyper_plan__pipe *pp, int first,
			     int last, struct hp_err *e);

/*
 * The search loop's passes emit and simulate, on @ev (select's, @nev of
 * them) in order @lf, simulated within @budget (0: none), into @r; @r->ok
 * is false if the simulation breaks the budget.  With @give_up, the
 * simulation stops as soon as @pb's goal is out of reach (@r->ok false,
 * its figures partial): for a search that only asks whether the probe
 * meets the goal.  A zero-tensor probe (@nev 0) asked for again with the
 * same inputs is @pb->memo's (struct hp_zseen): emitted as far as the
 * first, its figures the first's, not simulated again.  0, or -ENOMEM.
 */
int hyper_plan__probe(const struct problem *pb, const struct life *lf,
		      const struct evict *ev, size_t nev, uint64_t budget,
		      bool give_up, struct result *r, struct hp_err *e);
/*
 * Whether --compare's row of policy @pol is printed only, its layout read
 * by nothing but libhyper's validator (run_search() in passes/pipeline.c
 * says why): not the @chosen policy (written with -o and --trace, its
 * arena printed), not @plotted, and with no @budget (whose fit reads the
 * arena).  Such a row is laid out in one pass in start order
 * (HU_ARENA_ONLINE), and is not a twin a later plan may take (struct
 * hp_polmemo, row).
 */
bool hyper_plan__row_printed_only(int pol, int chosen, bool plotted,
				  uint64_t budget);
/* The layout pass on a kept plan @r, its arena within @limit (0: any). */
int hyper_plan__layout(const struct problem *pb, struct result *r,
		       uint64_t limit, struct hp_err *e);

/*
 * Checks @n passes of @t statically: each one's requires are among
 * @inputs and the ensures of those before it (the search loop's at the
 * first in_loop pass).  0, or -EINVAL naming the pass and the fact.
 */
int hyper_plan__pipeline_check(const struct hyper_plan__pass *t, size_t n,
			       uint32_t inputs, struct hp_err *e);

/* What the first pass may take as given: a graph, a profile, a goal. */
#define HP_PIPELINE_INPUTS	(HP_F_GRAPH | HP_F_PROFILE)

/*
 * The table as a Markdown table, one pass a row (hyper-plan --passes;
 * Documentation/planner.md carries it verbatim).
 */
void hyper_plan__pipeline_print(FILE *f);
/* @f's facts by name, ", " between ("-" for none). */
void hyper_plan__pipeline_facts(char *buf, size_t len, uint32_t f);

#endif
