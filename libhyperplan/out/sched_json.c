// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Writes a schedule as format v1 JSON.  Written with stdio rather than a
 * json-c tree: a million-step schedule would otherwise cost gigabytes.
 * Ids go through hu_json_write_str() (util/json.c), so any id the graph accepted is escaped.
 */
#include <hyper/graph_id.h>

#include "profile/profile.h"
#include "passes/sched.h"

static void write_cops(const struct sched *s, FILE *f, size_t slot,
		       const char *key)
{
	size_t i;

	if (!slot_len(s, slot))
		return;
	fprintf(f, ",\n   \"%s\": [", key);
	for (i = s->slot_off[slot]; i < s->slot_off[slot + 1]; i++) {
		fprintf(f, "%s{ \"op\": \"%s\", \"tensor\": ",
			i > s->slot_off[slot] ? ", " : " ",
			hyper_cache_op_name(s->cops[i].kind));
		hu_json_write_str(f, s->g->t[s->cops[i].t].id);
		fputs(" }", f);
	}
	fputs(" ]", f);
}

static void write_ids(const struct graph *g, FILE *f, const char *key,
		      const uint32_t *t, uint32_t n)
{
	uint32_t i;

	if (!n)
		return;
	fprintf(f, ",\n   \"%s\": [", key);
	for (i = 0; i < n; i++) {
		fputs(i ? ", " : " ", f);
		hu_json_write_str(f, g->t[t[i]].id);
	}
	fputs(" ]", f);
}

static void write_step(const struct sched *s, FILE *f, uint32_t k)
{
	const struct graph *g = s->g;
	const struct op *o = &g->op[s->order[k]];

	fputs("  { \"op\": ", f);
	hu_json_write_str(f, o->id);
	fprintf(f, ", \"compute_ns\": %llu", (unsigned long long)o->compute_ns);
	if (o->gemm.m)
		fprintf(f, ", \"x-gemm\": { \"m\": %u, \"n\": %u, \"k\": %u }",
			o->gemm.m, o->gemm.n, o->gemm.k);
	write_cops(s, f, 2 * k, "before");
	write_ids(g, f, "uses", op_in(g, o), o->n_in);
	write_ids(g, f, "defines", op_out(g, o), o->n_out);
	write_cops(s, f, 2 * k + 1, "after");
	fputs(" }", f);
}

/* Where each residency of tensor @t lives in the arena, if placed. */
static void write_offsets(const struct sched *s, FILE *f, size_t t)
{
	if (!s->res_off || s->res_first[t] == s->res_first[t + 1])
		return;
	fputs(", \"arena_offsets\": [", f);
	for (uint32_t i = s->res_first[t]; i < s->res_first[t + 1]; i++)
		fprintf(f, "%s%llu", i > s->res_first[t] ? ", " : " ",
			(unsigned long long)s->res_off[i]);
	fputs(" ]", f);
}

/* The graph's identity (include/hyper/graph_id.h), which libhyper checks. */
static void write_graph(const struct sched *s, FILE *f)
{
	char hash[HYPER_GRAPH_HASH_LEN];

	hyper_plan__graph_identity(s->g, hash);
	fputs(",\n \"graph\": { \"name\": ", f);
	hu_json_write_str(f, s->g->name ? s->g->name : "");
	fprintf(f, ", \"hash\": \"%s\" }", hash);
}

void hyper_plan__sched_write_json(const struct sched *s, FILE *f, const char *name,
		      const char *extra_json)
{
	const struct graph *g = s->g;
	size_t t;
	uint32_t k;

	fputs("{\n \"format\": \"hyper-schedule\",\n \"version\": 1,\n \"name\": ", f);
	hu_json_write_str(f, name);
	write_graph(s, f);
	if (s->budget)
		fprintf(f, ",\n \"device_budget_bytes\": %llu",
			(unsigned long long)s->budget);
	if (s->res_off)
		fprintf(f, ",\n \"arena_bytes\": %llu",
			(unsigned long long)s->arena);
	fputs(",\n \"tensors\": [\n", f);
	for (t = 0; t < g->nt; t++) {
		fputs("  { \"id\": ", f);
		hu_json_write_str(f, g->t[t].id);
		fprintf(f, ", \"bytes\": %llu, \"kind\": \"%s\", \"home\": \"%s\"",
			(unsigned long long)g->t[t].bytes,
			hyper_kind_name(g->t[t].kind), hyper_home_name(s->home[t]));
		write_offsets(s, f, t);
		fprintf(f, " }%s\n", t + 1 < g->nt ? "," : "");
	}
	fputs(" ],\n \"steps\": [\n", f);
	for (k = 0; k < s->n; k++) {
		write_step(s, f, k);
		fputs(k + 1 < s->n ? ",\n" : "\n", f);
	}
	fprintf(f, " ],\n \"predicted\": { \"peak_device_bytes\": %llu, \"stall_ns\": %.0f, \"makespan_ns\": %.0f }",
		(unsigned long long)s->pred.peak, s->pred.stall_ns,
		s->pred.makespan_ns);
	if (extra_json)
		fprintf(f, ",\n \"x-planner\": %s", extra_json);
	fputs("\n}\n", f);
}

/* The planner's note in the schedule: which policy, profile and knobs. */
void hyper_plan__plan_note(char *buf, size_t len, const char *policy,
	       const struct profile *p, const char *params)
{
	snprintf(buf, len,
		 "{ \"policy\": \"%s\", \"profile\": \"%s\", \"chosen\": \"%s\" }",
		 policy, p->name, params);
}
