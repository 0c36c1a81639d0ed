/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The closed loop: a real run's timeline (hyper-run --timeline) fed back
 * into the planner, so that the next plan is made with measured times.
 */
#ifndef HP_FEEDBACK_H
#define HP_FEEDBACK_H

#include "graph/graph.h"
#include "profile/profile.h"

struct feedback_stats {
	size_t ops_timed;	/* operators whose compute_ns was replaced */
	size_t xfers[2];	/* transfers measured: prefetch, store */
};

/*
 * Reads the timeline at @path and, when it is a run of @g (its graph
 * hash, or else every operator id, must match), replaces each operator's
 * compute_ns by its mean measured time and @p's link (h2d, d2h bandwidth,
 * latency) by the one fitted to the measured transfers.  Refuses, naming
 * the mismatch, a run of another graph, a truncated file and negative
 * timings; @g and @p are then unchanged.
 */
int graph_feedback(struct graph *g, struct profile *p, const char *path,
		   struct feedback_stats *st, struct hp_err *e);

#endif
