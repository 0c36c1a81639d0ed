/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the API's tests: a random graph (gen_random()) written to @path as
 * JSON and read back through hyper_plan_graph_load(), and whether two
 * plans are the same plan.
 */
#ifndef PLAN_RANDOM_H
#define PLAN_RANDOM_H

#include <stdbool.h>
#include <stdio.h>

#include <hyper/plan.h>

#include "kselftest_harness.h"

#include "graph/graph_json.h"
#include "gen/model.h"

static inline struct hyper_plan_graph *
plan_random(struct __test_metadata *_metadata, const char *path,
	    uint32_t ops, uint64_t seed)
{
	struct random_params rp = { ops, seed };
	struct hyper_plan_graph *g;
	struct hp_err e;
	struct graph gr;
	char err[256];
	FILE *f = fopen(path, "w");

	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, hyper_plan__graph_init(&gr, "random"));
	ASSERT_EQ(0, gen_random(&gr, &rp, &e)) TH_LOG("%s", e.msg);
	hyper_plan__graph_write_json(&gr, f);
	ASSERT_EQ(0, fclose(f));
	hyper_plan__graph_free(&gr);
	ASSERT_EQ(0, hyper_plan_graph_load(path, &g, err, sizeof(err)))
		TH_LOG("%s", err);
	return g;
}

static inline bool plan_same(const struct hyper_plan_prediction *a,
			     const struct hyper_plan_prediction *b)
{
	return a->peak_device_bytes == b->peak_device_bytes &&
	       a->baseline_peak_bytes == b->baseline_peak_bytes &&
	       a->bound_bytes == b->bound_bytes &&
	       a->stall_ns == b->stall_ns && a->makespan_ns == b->makespan_ns &&
	       a->compute_ns == b->compute_ns &&
	       a->h2d_bytes == b->h2d_bytes && a->d2h_bytes == b->d2h_bytes &&
	       a->policy == b->policy && a->arena_over == b->arena_over &&
	       a->arena_bytes == b->arena_bytes;
}

#endif /* PLAN_RANDOM_H */
