/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An independent replay of a schedule, from its JSON text, against the
 * graph it was planned from: the test's own reading of
 * Documentation/schedule-format.md, sharing no code with the planner's
 * emitter or simulator.
 */
#ifndef PLAN_CHECKER_H
#define PLAN_CHECKER_H

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"
#include "passes/sched.h"

struct check_result {
	uint64_t peak;		/* order-based residency, as the validator counts */
	uint64_t budget;	/* device_budget_bytes, 0 if absent */
	char msg[512];		/* why it failed */
};

/* 0 if @json is a valid schedule of graph @g, -1 with r->msg if not. */
int check_schedule(const struct graph *g, const char *json,
		   struct check_result *r);

/* Writes @s as JSON into a malloc'd string. */
char *schedule_text(const struct sched *s);

#endif
