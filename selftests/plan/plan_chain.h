/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A transformer-like chain built through <hyper/plan.h>, for the API's
 * tests: @n layers, each a weight read by one op that turns activation i
 * into i + 1.  Weights are read once, so offloading them saves memory at
 * no cost when the link keeps up.  Weight i is 16 MiB + @step * i bytes:
 * with a step, no two have the same size (what a layout must pack).
 */
#ifndef PLAN_CHAIN_H
#define PLAN_CHAIN_H

#include <stdio.h>

#include <hyper/plan.h>

#include "kselftest_harness.h"

#define MIB	(1024ULL * 1024)

static inline struct hyper_plan_graph *
plan_chain(struct __test_metadata *_metadata, unsigned int n, uint64_t step)
{
	struct hyper_plan_graph *g;
	char id[32];
	int act, w, next;

	ASSERT_EQ(0, hyper_plan_graph_new("chain", &g));
	act = hyper_plan_graph_add_tensor(g, &(struct hyper_plan_tensor){
		.id = "x0", .bytes = MIB, .kind = HYPER_KIND_ACTIVATION,
		.flags = HYPER_PLAN_EXPLICIT | HYPER_PLAN_LIVE_IN });
	ASSERT_EQ(0, act);
	for (unsigned int i = 0; i < n; i++) {
		uint32_t in[2], out[1];

		snprintf(id, sizeof(id), "w%u", i);
		w = hyper_plan_graph_add_tensor(g, &(struct hyper_plan_tensor){
			.id = id, .bytes = 16 * MIB + step * i,
			.kind = HYPER_KIND_WEIGHT });
		snprintf(id, sizeof(id), "x%u", i + 1);
		next = hyper_plan_graph_add_tensor(g, &(struct hyper_plan_tensor){
			.id = id, .bytes = MIB, .kind = HYPER_KIND_ACTIVATION });
		ASSERT_GE(w, 0);
		ASSERT_GE(next, 0);
		in[0] = act;
		in[1] = w;
		out[0] = next;
		snprintf(id, sizeof(id), "layer%u", i);
		ASSERT_EQ((int)i, hyper_plan_graph_add_op(g, &(struct hyper_plan_op){
			.id = id, .compute_ns = 2000000, .inputs = in,
			.nr_inputs = 2, .outputs = out, .nr_outputs = 1 }))
			TH_LOG("%s", hyper_plan_graph_last_error(g));
		act = next;
	}
	return g;
}

#endif /* PLAN_CHAIN_H */
