// SPDX-License-Identifier: LGPL-2.1-or-later
/* hyper_plan_graph_*(): graphs built by the caller or read from JSON. */
#include <errno.h>
#include <string.h>

#include "api/api.h"
#include "graph/graph_json.h"

static int graph_alloc(const char *name, struct hyper_plan_graph **graphp)
{
	struct hyper_plan_graph *g;

	if (!graphp)
		return -EINVAL;
	*graphp = NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	if (hyper_plan__graph_init(&g->j.g, name ? name : "")) {
		hyper_plan__graph_free(&g->j.g);
		free(g);
		return -ENOMEM;
	}
	pthread_mutex_init(&g->lock, NULL);
	g->refs = 1;
	*graphp = g;
	return 0;
}

int hyper_plan_graph_new(const char *name, struct hyper_plan_graph **graphp)
{
	return graph_alloc(name, graphp);
}

int hyper_plan_graph_load(const char *path, struct hyper_plan_graph **graphp,
			  char *err, size_t errlen)
{
	struct hp_err e = { "" };
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (!graphp)
		return hyper_plan__null_arg(err, errlen, "hyper_plan_graph_load",
					    "graphp", "a struct hyper_plan_graph * to fill");
	*graphp = NULL;
	if (!path)
		return hyper_plan__null_arg(err, errlen, "hyper_plan_graph_load",
					    "path", "the graph's JSON file");
	ret = graph_alloc(path, graphp);
	if (ret)
		return ret;
	ret = hyper_plan__graph_load_json(&(*graphp)->j.g, path, &e);
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "%s", e.msg);
		if ((*graphp)->j.g.mem.failed)
			ret = -ENOMEM;
		hyper_plan_graph_free(*graphp);
		*graphp = NULL;
		return ret < 0 ? ret : -EINVAL;
	}
	return 0;
}

int hyper_plan__null_arg(char *err, size_t errlen, const char *fn,
			 const char *arg, const char *fix)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: %s is NULL: pass %s", fn, arg, fix);
	return -EINVAL;
}

void hyper_plan__graph_put(struct hyper_plan_graph *g)
{
	if (!g || __atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL))
		return;
	hyper_plan__job_free(&g->j);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

void hyper_plan_graph_free(struct hyper_plan_graph *graph)
{
	hyper_plan__graph_put(graph);
}

/* -ENOMEM when the call failed for memory, else -EINVAL. */
static int add_failed(struct hyper_plan_graph *g)
{
	return g->j.g.mem.failed ? -ENOMEM : -EINVAL;
}

static bool zero(const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i])
			return false;
	return true;
}

static int editable(struct hyper_plan_graph *g, const void *arg,
		    const char *what)
{
	if (!g)
		return -EINVAL;
	if (!arg || !*(const char *const *)arg)
		return hyper_plan__errf(&g->err, "%s: NULL structure or id", what);
	if (__atomic_load_n(&g->prepared, __ATOMIC_ACQUIRE)) {
		hyper_plan__errf(&g->err, "%s: the graph was planned already and is frozen; build a new one",
			what);
		return -EBUSY;
	}
	g->j.g.mem.failed = false;	/* this call's, if any, is reported */
	return 0;
}

int hyper_plan_graph_add_tensor(struct hyper_plan_graph *graph,
				const struct hyper_plan_tensor *t)
{
	uint32_t idx, flags, given;
	int ret = editable(graph, t, "add_tensor");

	if (ret)
		return ret;
	if (!hyper_kind_name(t->kind) || !zero(t->reserved, 4) ||
	    (t->flags & ~(HYPER_PLAN_LIVE_IN | HYPER_PLAN_LIVE_OUT |
			  HYPER_PLAN_PIN | HYPER_PLAN_LIVE_IN_SET |
			  HYPER_PLAN_LIVE_OUT_SET | HYPER_PLAN_EXPLICIT)))
		return hyper_plan__errf(&graph->err, "tensor \"%.127s\": kind %u unknown (enum hyper_tensor_kind), or unknown flags or non-zero reserved fields",
			       t->id, t->kind);
	/* The planner's TF_* bits are the API's: both are documented there. */
	given = (t->flags & (HYPER_PLAN_EXPLICIT | HYPER_PLAN_LIVE_IN_SET) ?
		 TF_LIVE_IN : 0) |
		(t->flags & (HYPER_PLAN_EXPLICIT | HYPER_PLAN_LIVE_OUT_SET) ?
		 TF_LIVE_OUT : 0);
	flags = (hyper_plan__tkind_default_flags(t->kind) & ~given) |
		(t->flags & given) | (t->flags & TF_PIN);
	idx = hyper_plan__graph_add_tensor(&graph->j.g, t->id, t->bytes, t->kind,
			       (uint8_t)flags, &graph->err);
	return idx == NONE ? add_failed(graph) : (int)idx;
}

int hyper_plan_graph_add_op(struct hyper_plan_graph *graph,
			    const struct hyper_plan_op *op)
{
	struct gemm gm;
	uint32_t idx;
	int ret = editable(graph, op, "add_op");

	if (ret)
		return ret;
	if (op->reserved0 || !zero(op->reserved, 4) ||
	    !(op->flops >= 0 && op->flops < 1e30) ||
	    !(op->bytes >= 0 && op->bytes < 1e30) ||
	    (op->nr_inputs && !op->inputs) || (op->nr_outputs && !op->outputs))
		return hyper_plan__errf(&graph->err, "op \"%.127s\": a list with a count but no array, flops or bytes out of 0..1e30, or non-zero reserved fields",
			       op->id);
	if (!op->gemm_m != !op->gemm_n || !op->gemm_m != !op->gemm_k)
		return hyper_plan__errf(&graph->err, "op \"%.127s\": give all of gemm_m, gemm_n, gemm_k or none",
			       op->id);
	gm = (struct gemm){ op->gemm_m, op->gemm_n, op->gemm_k };
	idx = hyper_plan__graph_add_op(&graph->j.g, op->id, op->compute_ns, op->inputs,
			   op->nr_inputs, op->outputs, op->nr_outputs, &gm,
			   &graph->err);
	if (idx == NONE)
		return add_failed(graph);
	graph->j.g.op[idx].flops = op->flops;
	graph->j.g.op[idx].bytes = op->bytes;
	return (int)idx;
}

const char *hyper_plan_graph_last_error(const struct hyper_plan_graph *graph)
{
	return graph ? graph->err.msg : "";
}
