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
 * Runs one policy's search; a baseline that finds nothing is not fatal.
 * POL_PLAN is hyper_plan__run_plan_best(): never worse than the baselines.
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
