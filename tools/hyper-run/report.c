// SPDX-License-Identifier: GPL-2.0
/* hyper-run's JSON report, written with json-c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "hyper-run.h"

static void add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

/*
 * Tensor uses the schedule has in all iterations: what uses_checked must
 * reach for "every tensor checked at every use" to hold.
 */
static uint64_t uses_scheduled(const struct hyper_schedule *s,
			       const struct hyper_schedule_info *info,
			       unsigned int iterations)
{
	struct hyper_step_info si;
	uint64_t n = 0;

	for (uint32_t i = 0; i < info->nr_steps; i++)
		if (!hyper_schedule_step(s, i, &si))
			n += si.nr_uses;
	return n * iterations;
}

static void add_object(struct json_object *root, const char *key,
		       const struct object_use *u)
{
	struct json_object *x;

	if (!u->name)
		return;
	x = json_object_new_object();
	json_object_object_add(x, "name", json_object_new_string(u->name));
	add_u64(x, "bytes", u->bytes);
	add_u64(x, "tensors", u->tensors);
	add_u64(x, "tensor_bytes", u->tensor_bytes);
	json_object_object_add(root, key, x);
}

int write_report(const struct run_opts *o, const struct hyper_schedule *s,
		 const char *backend, const struct run_result *r)
{
	struct json_object *root = json_object_new_object(), *x;
	struct hyper_schedule_info info;
	const char *txt;
	FILE *f = stdout;
	int ret = 0;

	if (!root)
		return -ENOMEM;
	json_object_object_add(root, "tool", json_object_new_string("hyper-run"));
	json_object_object_add(root, "schedule", json_object_new_string(o->schedule));
	json_object_object_add(root, "backend", json_object_new_string(backend));
	if (o->name)
		json_object_object_add(root, "run", json_object_new_string(o->name));
	json_object_object_add(root, "ok", json_object_new_boolean(r->ok));
	if (!r->ok)
		json_object_object_add(root, "error", json_object_new_string(r->error));
	if (s && !hyper_schedule_info(s, &info)) {
		json_object_object_add(root, "name", json_object_new_string(info.name));
		if (info.graph_hash)
			json_object_object_add(root, "graph_hash",
					       json_object_new_string(info.graph_hash));
		add_u64(root, "validated_peak_bytes", info.peak_device_bytes);
		if (info.arena_bytes)
			add_u64(root, "layout_arena_bytes", info.arena_bytes);
		if (info.flags & HYPER_SCHED_BUDGET)
			add_u64(root, "budget_bytes", info.budget_bytes);
		x = json_object_new_object();
		if (info.flags & HYPER_SCHED_PRED_PEAK)
			add_u64(x, "peak_device_bytes", info.pred_peak_device_bytes);
		if (info.flags & HYPER_SCHED_PRED_STALL)
			add_u64(x, "stall_ns", info.pred_stall_ns);
		if (info.flags & HYPER_SCHED_PRED_MAKESPAN)
			add_u64(x, "makespan_ns", info.pred_makespan_ns);
		json_object_object_add(root, "predicted", x);
	}
	if (o->until || o->from) {
		x = json_object_new_object();
		add_u64(x, "first_step", r->first_step);
		add_u64(x, "end_step", r->end_step);
		add_u64(x, "of_steps", r->nr_steps);
		add_u64(x, "kv_handed_over", r->handed);
		json_object_object_add(root, "part", x);
	}
	add_object(root, "weights_object", &r->weights);
	add_object(root, "kv_object", &r->kv);
	add_u64(root, "iterations", o->iterations);
	add_u64(root, "steps", r->steps);
	add_u64(root, "wall_ns", r->wall_ns);
	add_u64(root, "compute_ns", r->compute_ns);
	add_u64(root, "compute_overrun_ns", r->overrun_ns);
	add_u64(root, "stall_ns", r->st.stall_ns);
	add_u64(root, "stalls", r->st.nr_stalls);
	add_u64(root, "bytes_prefetched", r->st.bytes_prefetched);
	add_u64(root, "bytes_stored", r->st.bytes_stored);
	add_u64(root, "prefetches", r->st.nr_prefetch);
	add_u64(root, "stores", r->st.nr_store);
	add_u64(root, "detaches", r->st.nr_detach);
	add_u64(root, "requests", r->st.nr_requests);
	add_u64(root, "copied_inline", r->st.nr_copied_inline);
	add_u64(root, "early_prefetches", r->st.nr_early);
	add_u64(root, "peak_resident_bytes", r->st.peak_resident_bytes);
	add_u64(root, "peak_arena_bytes", r->st.peak_arena_bytes);
	add_u64(root, "device_bytes", r->device_bytes);
	if (o->compute == COMPUTE_GEMM) {
		x = json_object_new_object();
		add_u64(x, "sgemms", r->gemms);
		add_u64(x, "on_weights", r->weight_gemms);
		json_object_object_add(x, "gflop", json_object_new_double(r->gemm_flops / 1e9));
		json_object_object_add(root, "gemm", x);
	}
	x = json_object_new_object();
	add_u64(x, "uses_checked", r->checks);
	if (s && !hyper_schedule_info(s, &info))
		add_u64(x, "uses_scheduled", uses_scheduled(s, &info, o->iterations));
	add_u64(x, "bytes_checked", r->bytes_checked);
	add_u64(x, "stride_words", o->verify_stride);
	json_object_object_add(root, "checks", x);

	txt = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
					     JSON_C_TO_STRING_NOSLASHESCAPE);
	if (o->output && strcmp(o->output, "-")) {
		f = fopen(o->output, "w");
		if (!f) {
			ret = -errno;
			fprintf(stderr, "hyper-run: %s: %s\n", o->output, strerror(errno));
		}
	}
	if (f) {
		fprintf(f, "%s\n", txt);
		if (f != stdout && fclose(f))
			ret = -EIO;
	}
	json_object_put(root);
	return ret;
}
