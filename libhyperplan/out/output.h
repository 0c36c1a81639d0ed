/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a plan turns into: a struct hyper_schedule for libhyper, and
 * pictures of simulated runs (an SVG of memory over time, a Chrome trace).
 * The JSON schedule writer is sched_write_json() (sched.h).
 */
#ifndef HP_OUTPUT_H
#define HP_OUTPUT_H

#include <stdio.h>

#include <hyper/hyper.h>

#include "sim.h"

/* The plan as libhyper's schedule, validated by libhyper; -errno. */
int sched_to_hyper(const struct sched *s, const char *name,
		   struct hyper_schedule **out, struct hp_mem *mem,
		   struct hp_err *e);
/* 0 if libhyper's validator accepts the plan; -ENOMEM; else -EINVAL
 * naming why. */
int sched_check(const struct sched *s, struct hp_mem *mem, struct hp_err *e);
/*
 * sched_check() that keeps what it validated: the schedule named @name in
 * *@out (NULL: freed), so that the one handed out is the one validated.
 */
int hyper_plan__sched_validate(const struct sched *s, const char *name,
			       struct hyper_schedule **out,
			       struct hp_mem *mem, struct hp_err *e);

struct series {
	const char *name;
	double *t;		/* ns */
	double *bytes;
	size_t n, cap;
};

/* Records a schedule's memory over time by simulating it again. */
int series_record(struct series *sr, const char *name, const struct sched *s,
		  const struct profile *p, struct hp_err *e);
void series_free(struct series *sr);

/* Memory over time, one line per series; @bound draws a dashed floor. */
void plot_svg(FILE *f, const char *title, const struct series *sr,
	      size_t nsr, double bound);

/* Chrome trace-event JSON (opens in Perfetto and chrome://tracing). */
int trace_json(FILE *f, const struct sched *s, const struct profile *p,
	       struct hp_err *e);

/*
 * The trace writer, shared with render.c: a process per run, threads
 * 1 compute, 2 pool to device, 3 device to pool, 4 stalls; times in ns.
 */
void trace_begin(FILE *f);
void trace_process(FILE *f, int pid, const char *name);
void trace_span(FILE *f, int pid, int tid, const char *what, const char *id,
		double start, double end, double bytes);
void trace_memory(FILE *f, int pid, double t, double bytes);
void trace_end(FILE *f);

#endif
