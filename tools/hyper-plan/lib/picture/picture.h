/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pictures of simulated runs, for hyper-plan and hyper-timeline: an SVG
 * of memory over time and a Chrome trace.  Not part of libhyperplan.
 */
#ifndef HP_PICTURE_H
#define HP_PICTURE_H

#include <stdio.h>

#include "sim/sim.h"

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
