/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policies the planner can be compared with, in one list: the
 * planner itself and the baselines it must never lose to.
 */
#ifndef HP_POLICY_LIST_H
#define HP_POLICY_LIST_H

#include "policies/search.h"

enum { POL_NONE, POL_PLAN, POL_DISTANCE, POL_GREEDY, POL_NR };

extern const char *const hyper_plan__policy_name[POL_NR];
int hyper_plan__policy_parse(const char *s);

/*
 * The baselines' results under a budget, kept: a search is a function of
 * its problem alone, and the same baseline runs at the same budget again
 * and again (in the planner's floor, hyper_plan__run_plan_best(), then in
 * the baseline's own fit, then in its own row of --compare).  With no
 * budget a baseline runs twice only when its own row follows the
 * planner's (--compare): kept then too, when @rows says so.  A few of
 * them, the oldest dropped first, HP_POLMEMO_MAX bytes of schedules at
 * most; a zeroed memo is an empty one.  One thread uses it: a job's, or
 * one hyper_plan__run_policy_fit() call's own (the API's plans).
 */
#define HP_POLMEMO_N	16

struct hp_polmemo_ent;

/*
 * And what each distance probe's simulation said under a budget
 * (policies/search.c, distance_probe()), which a lower budget reads.
 */
struct hp_dseen;

/*
 * The zero-tensor probe, as hyper_plan__probe() ran it: the planner,
 * distance and greedy each begin their search with it (and none's row
 * with --compare), and with the same order, profile, goal, budget and
 * stop it is the same schedule and the same run, to the step it stopped
 * at.  At 1M decode operators those are three of the searches' 19
 * probes, 27% of the steps they simulate.
 */
struct hp_zseen {
	const struct life *lf;		/* NULL: an empty slot */
	const struct profile *p;
	struct goal goal;
	uint64_t budget;
	bool give_up;
	bool ok;
	uint32_t emitted;		/* the steps its schedule had */
	struct sim_result sim;
};

#define HP_ZSEEN_N	4

struct hp_polmemo {
	unsigned int next;		/* the slot the next one takes */
	size_t bytes;			/* what their schedules hold */
	unsigned int hits;		/* results handed out again */
	bool rows;			/* each baseline has its own row next:
					 * kept with no budget too */
	struct hp_polmemo_ent *ent[HP_POLMEMO_N];
	struct hp_dseen *seen;		/* distance probes simulated */
	uint32_t nseen, seen_hits;
	struct hp_zseen zero[HP_ZSEEN_N];	/* the oldest replaced first */
	unsigned int zero_next, zero_hits;
	/*
	 * The rows planned so far, each laid out and validated (the
	 * caller's results: hyper-plan's --compare, which clears them
	 * before it frees them; NULL: none).  A schedule the same as one
	 * of theirs takes its layout (with no budget: under one the layouts
	 * are kept, struct hp_laycache) and is not validated again
	 * (passes/rows.c).
	 */
	const struct result *row[POL_NR];
	unsigned int row_layouts, row_checks;	/* taken from a row */
	/* the probes' simulation buffers (sim/sim.h) */
	struct hp_simbuf sim;
};

/* Frees what @m keeps: it is empty after. */
void hyper_plan__polmemo_free(struct hp_polmemo *m);

/*
 * Runs one policy's search; a baseline that finds nothing is not fatal.
 * POL_PLAN is hyper_plan__run_plan_best(): never worse than the baselines.
 * Under a budget (with none as well where @pb->memo->rows), a baseline's
 * result comes from @pb->memo when it was made there before (a copy: the
 * caller owns it), and is kept there when it is new; the same as
 * searching again, byte for byte, but for its ms (the copy's), -ENOMEM
 * included when keeping or copying runs out.
 */
int hyper_plan__run_policy(int pol, const struct problem *pb, struct result *r,
	       struct hp_err *e);
/*
 * hyper_plan__run_policy(), its plan laid out in the device arena (hyper_plan__sched_layout()),
 * and planned again under a lower residency budget while the arena would
 * exceed the budget (policies/fit_arena.c).  For POL_PLAN with a budget
 * each baseline is fitted as well and the best whose arena fits is kept,
 * so the never-worse floor holds for what is handed out.  When nothing
 * fits the budget, lower budgets are tried (fit_lower()): a larger budget
 * never fails where a smaller one succeeds.
 */
int hyper_plan__run_policy_fit(int pol, const struct problem *pb, struct result *r,
		   struct hp_err *e);

#endif
