/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a plan turns into: a struct hyper_schedule for libhyper.  The JSON
 * schedule writer is hyper_plan__sched_write_json() (sched.h); the pictures of
 * simulated runs are the tools' (tools/hyper-plan/lib/picture/).
 */
#ifndef HP_OUTPUT_H
#define HP_OUTPUT_H

#include <stdio.h>

#include <hyper/hyper.h>

#include "sim/sim.h"

/* The plan as libhyper's schedule, validated by libhyper; -errno. */
int hyper_plan__sched_to_hyper(const struct sched *s, const char *name,
		   struct hyper_schedule **out, struct hp_mem *mem,
		   struct hp_err *e);
/* 0 if libhyper's validator accepts the plan; -ENOMEM; else -EINVAL
 * naming why. */
int hyper_plan__sched_check(const struct sched *s, struct hp_mem *mem, struct hp_err *e);
/*
 * hyper_plan__sched_check() that keeps what it validated: the schedule named @name in
 * *@out (NULL: freed), so that the one handed out is the one validated.
 */
int hyper_plan__sched_validate(const struct sched *s, const char *name,
			       struct hyper_schedule **out,
			       struct hp_mem *mem, struct hp_err *e);

#endif
