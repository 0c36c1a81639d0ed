// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Writes a schedule as format v1 JSON.  Written through a buffer
 * (struct hu_jbuf, util/json.h) rather than a json-c tree, which would
 * cost gigabytes for a million steps, or a printf() per number.  Ids go
 * through hu_jbuf_str(), or as hu_json_plain_len() measured them once
 * when no byte needs an escape, so any id the graph accepted is escaped.
 */
#include <stdlib.h>

#include <hyper/graph_id.h>

#include "profile/profile.h"
#include "passes/sched.h"
#include "util/json.h"

/*
 * The words around each cache operator's tensor, and around a tensor's
 * kind and home, made once per schedule: a million-step schedule writes
 * millions of them, each before as four copies of strings whose lengths
 * were counted every time.
 */
struct words {
	char cop[HYPER_OP_DETACH + 1][40];
	size_t cop_len[HYPER_OP_DETACH + 1];
	char kh[HYPER_KIND_NR][HYPER_HOME_NONE + 1][56];
	size_t kh_len[HYPER_KIND_NR][HYPER_HOME_NONE + 1];
};

/*
 * Each tensor's id length (hu_json_plain_len()) where it needs no escape
 * and is below ID_SLOW bytes, else ID_SLOW: written through hu_jbuf_str().
 * A tensor's id goes out once in "tensors" and again in every list that
 * names it (at 100k decode operators 720,000 times for 100,000 tensors),
 * and measuring and scanning it each time was a third of the write.
 */
#define ID_SLOW	UINT16_MAX

struct ids {
	const struct graph *g;
	uint16_t *len;		/* NULL: every id through hu_jbuf_str() */
};

/*
 * Tensor @t's id as a JSON string, after @pre (@pre_len bytes): what
 * hu_jbuf_put(@pre) and hu_jbuf_str() write, from its known length.
 */
static inline void put_id(const struct ids *ids, struct hu_jbuf *w,
			  const char *pre, size_t pre_len, uint32_t t)
{
	const char *id = ids->g->t[t].id;

	if (ids->len && ids->len[t] != ID_SLOW) {
		hu_jbuf_quoted(w, pre, pre_len, id, ids->len[t]);
		return;
	}
	hu_jbuf_mem(w, pre, pre_len);
	hu_jbuf_str(w, id);
}

/*
 * The lengths, or none when out of memory: the write is void, and
 * without them every id is written as before, to the same bytes.
 */
static void ids_init(struct ids *ids, const struct graph *g)
{
	ids->g = g;
	ids->len = malloc((g->nt ? g->nt : 1) * sizeof(*ids->len));
	for (size_t t = 0; ids->len && t < g->nt; t++) {
		size_t len = hu_json_plain_len(g->t[t].id);

		ids->len[t] = len < ID_SLOW ? (uint16_t)len : ID_SLOW;
	}
}

/* What snprintf() wrote; an op, kind or home with no name is never written. */
static size_t word_len(int n)
{
	return n > 0 ? (size_t)n : 0;
}

static void words_init(struct words *wd)
{
	const char *a, *b;

	for (uint32_t op = 0; op <= HYPER_OP_DETACH; op++) {
		a = hyper_cache_op_name(op);
		wd->cop_len[op] = !a ? 0 :
			word_len(snprintf(wd->cop[op], sizeof(wd->cop[op]),
					  ", { \"op\": \"%s\", \"tensor\": ",
					  a));
	}
	for (uint32_t k = 0; k < HYPER_KIND_NR; k++)
		for (uint32_t h = 0; h <= HYPER_HOME_NONE; h++) {
			a = hyper_kind_name(k);
			b = hyper_home_name(h);
			wd->kh_len[k][h] = !a || !b ? 0 :
				word_len(snprintf(wd->kh[k][h],
						  sizeof(wd->kh[k][h]),
						  ", \"kind\": \"%s\", \"home\": \"%s\"",
						  a, b));
		}
}

/*
 * A step's list starts with its key's words, from the line's end to the
 * list's bracket (@open): one literal, given with its length, where the
 * key apart was three copies and a strlen() for each of 400,000 lists at
 * 100k decode operators.
 */
#define LIST_HEAD(key, open)	",\n   \"" key "\": " open
#define WORD(lit)		lit, sizeof(lit) - 1

static void write_cops(const struct sched *s, const struct words *wd,
		       const struct ids *ids, struct hu_jbuf *w, size_t slot,
		       const char *head, size_t head_len)
{
	size_t i;

	if (!slot_len(s, slot))
		return;
	hu_jbuf_word(w, head, head_len);
	for (i = s->slot_off[slot]; i < s->slot_off[slot + 1]; i++) {
		uint8_t op = s->cops[i].kind;
		/* the first without its comma */
		size_t first = i == s->slot_off[slot];

		hu_jbuf_word(w, wd->cop[op] + first, wd->cop_len[op] - first);
		put_id(ids, w, "", 0, s->cops[i].t);
		hu_jbuf_put(w, " }");
	}
	hu_jbuf_put(w, " ]");
}

static void write_ids(const struct ids *ids, struct hu_jbuf *w,
		      const char *head, size_t head_len, const uint32_t *t,
		      uint32_t n)
{
	uint32_t i;

	if (!n)
		return;
	hu_jbuf_word(w, head, head_len);
	put_id(ids, w, "", 0, t[0]);
	for (i = 1; i < n; i++)
		put_id(ids, w, ", ", 2, t[i]);
	hu_jbuf_put(w, " ]");
}

static void write_step(const struct sched *s, const struct words *wd,
		       const struct ids *ids, struct hu_jbuf *w, uint32_t k)
{
	const struct graph *g = s->g;
	const struct op *o = &g->op[s->order[k]];

	hu_jbuf_put(w, "  { \"op\": ");
	hu_jbuf_str(w, o->id);
	hu_jbuf_put(w, ", \"compute_ns\": ");
	hu_jbuf_u64(w, o->compute_ns);
	if (o->gemm.m) {
		hu_jbuf_put(w, ", \"x-gemm\": { \"m\": ");
		hu_jbuf_u64(w, o->gemm.m);
		hu_jbuf_put(w, ", \"n\": ");
		hu_jbuf_u64(w, o->gemm.n);
		hu_jbuf_put(w, ", \"k\": ");
		hu_jbuf_u64(w, o->gemm.k);
		hu_jbuf_put(w, " }");
	}
	write_cops(s, wd, ids, w, 2 * k, WORD(LIST_HEAD("before", "[")));
	write_ids(ids, w, WORD(LIST_HEAD("uses", "[ ")), op_in(g, o), o->n_in);
	write_ids(ids, w, WORD(LIST_HEAD("defines", "[ ")), op_out(g, o),
		  o->n_out);
	write_cops(s, wd, ids, w, 2 * k + 1, WORD(LIST_HEAD("after", "[")));
	hu_jbuf_put(w, " }");
}

/* Where each residency of tensor @t lives in the arena, if placed. */
static void write_offsets(const struct sched *s, struct hu_jbuf *w, size_t t)
{
	if (!s->res_off || s->res_first[t] == s->res_first[t + 1])
		return;
	hu_jbuf_put(w, ", \"arena_offsets\": [ ");
	hu_jbuf_u64(w, s->res_off[s->res_first[t]]);
	for (uint32_t i = s->res_first[t] + 1; i < s->res_first[t + 1]; i++) {
		hu_jbuf_put(w, ", ");
		hu_jbuf_u64(w, s->res_off[i]);
	}
	hu_jbuf_put(w, " ]");
}

/* The graph's identity (include/hyper/graph_id.h), which libhyper checks. */
static void write_graph(const struct sched *s, struct hu_jbuf *w)
{
	char hash[HYPER_GRAPH_HASH_LEN];

	hyper_plan__graph_identity(s->g, hash);
	hu_jbuf_put(w, ",\n \"graph\": { \"name\": ");
	hu_jbuf_str(w, s->g->name ? s->g->name : "");
	hu_jbuf_put(w, ", \"hash\": \"");
	hu_jbuf_put(w, hash);
	hu_jbuf_put(w, "\" }");
}

static void write_tensor(const struct sched *s, const struct words *wd,
			 const struct ids *ids, struct hu_jbuf *w, size_t t)
{
	const struct tensor *x = &s->g->t[t];

	hu_jbuf_put(w, "  { \"id\": ");
	put_id(ids, w, "", 0, (uint32_t)t);
	hu_jbuf_put(w, ", \"bytes\": ");
	hu_jbuf_u64(w, x->bytes);
	hu_jbuf_word(w, wd->kh[x->kind][s->home[t]],
		     wd->kh_len[x->kind][s->home[t]]);
	write_offsets(s, w, t);
	if (t + 1 < s->g->nt)
		hu_jbuf_put(w, " },\n");
	else
		hu_jbuf_put(w, " }\n");
}

void hyper_plan__sched_write_json(const struct sched *s, FILE *f, const char *name,
		      const char *extra_json)
{
	const struct graph *g = s->g;
	struct hu_jbuf buf, *w = &buf;
	struct words wd;
	struct ids ids;
	size_t t;
	uint32_t k;

	hu_jbuf_init(w, f);
	words_init(&wd);
	ids_init(&ids, g);
	hu_jbuf_put(w, "{\n \"format\": \"hyper-schedule\",\n \"version\": 1,\n \"name\": ");
	hu_jbuf_str(w, name);
	write_graph(s, w);
	if (s->budget) {
		hu_jbuf_put(w, ",\n \"device_budget_bytes\": ");
		hu_jbuf_u64(w, s->budget);
	}
	if (s->res_off) {
		hu_jbuf_put(w, ",\n \"arena_bytes\": ");
		hu_jbuf_u64(w, s->arena);
	}
	hu_jbuf_put(w, ",\n \"tensors\": [\n");
	for (t = 0; t < g->nt; t++)
		write_tensor(s, &wd, &ids, w, t);
	hu_jbuf_put(w, " ],\n \"steps\": [\n");
	for (k = 0; k < s->n; k++) {
		write_step(s, &wd, &ids, w, k);
		if (k + 1 < s->n)
			hu_jbuf_put(w, ",\n");
		else
			hu_jbuf_put(w, "\n");
	}
	hu_jbuf_printf(w, " ],\n \"predicted\": { \"peak_device_bytes\": %llu, \"stall_ns\": %.0f, \"makespan_ns\": %.0f }",
		       (unsigned long long)s->pred.peak, s->pred.stall_ns,
		       s->pred.makespan_ns);
	if (extra_json) {
		hu_jbuf_put(w, ",\n \"x-planner\": ");
		hu_jbuf_put(w, extra_json);
	}
	hu_jbuf_put(w, "\n}\n");
	hu_jbuf_flush(w);
	free(ids.len);
}

/* The planner's note in the schedule: which policy, profile and knobs. */
void hyper_plan__plan_note(char *buf, size_t len, const char *policy,
	       const struct profile *p, const char *params)
{
	snprintf(buf, len,
		 "{ \"policy\": \"%s\", \"profile\": \"%s\", \"chosen\": \"%s\" }",
		 policy, p->name, params);
}
