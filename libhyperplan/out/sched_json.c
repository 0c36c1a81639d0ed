// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Writes a schedule as format v1 JSON.  Written through a buffer
 * (struct hu_jbuf, util/json.h) rather than a json-c tree, which would
 * cost gigabytes for a million steps, or a printf() per number.  Ids go
 * through hu_jbuf_str(), or as hu_json_plain_len() measured them when the
 * graph took them (no byte needs an escape), so any id the graph accepted
 * is escaped.
 */
#include <stdlib.h>

#include <hyper/graph_id.h>

#include "profile/profile.h"
#include "passes/sched.h"
#include "util/json.h"

/*
 * The schedule goes out at a cursor (hu_jbuf_at(), util/json.h): the
 * pieces below are stores at @p, which each item's hu_jbuf_room() has
 * made room for: PIECE bytes, the most any item writes between two such
 * calls (an id below ID_SLOW bytes with its words and a number), with
 * stores of fixed-size words reaching at most HU_JBUF_SLACK past it.
 * Before, each piece was a call's worth of tests and of w->n loaded and
 * stored back: about a third of the write at 1M decode operators.
 */
#define PIECE	512

/*
 * The words around each cache operator's tensor, and around a tensor's
 * kind and home, made once per schedule: a million-step schedule writes
 * millions of them.  Each is stored as one WORD_COPY-byte copy from its
 * slot, a compile-time size (no loop, no length's branches), and the
 * cursor moves on by its length: the bytes past it are written over.
 */
#define WORD_COPY	48
#define WORD_SLOT	64

struct words {
	char cop[HYPER_OP_DETACH + 1][WORD_SLOT];
	size_t cop_len[HYPER_OP_DETACH + 1];
	char kh[HYPER_KIND_NR][HYPER_HOME_NONE + 1][WORD_SLOT];
	size_t kh_len[HYPER_KIND_NR][HYPER_HOME_NONE + 1];
};

_Static_assert(WORD_SLOT - WORD_COPY <= HU_JBUF_SLACK &&
	       WORD_COPY + 1 <= WORD_SLOT, "a word's copy stays in its slot");

/* A word of @wd (@len bytes, below WORD_COPY) at @p; the end. */
static inline char *put_word(char *p, const char *word, size_t len)
{
	memcpy(p, word, WORD_COPY);
	return p + len;
}

/*
 * Ids go out as the graph measured them (struct tensor's and struct op's
 * @id_len and @id_plain): a tensor's id goes out once in "tensors" and
 * again in every list that names it (at 100k decode operators 720,000
 * times for 100,664 tensors), and measuring and scanning it each time was
 * a third of the write.  Measured here once per schedule instead, they
 * cost 8.8 M instructions at 100k, and op ids through hu_jbuf_str() 11.6
 * M; the graph measures them as it takes them, next to its strlen().
 */
_Static_assert(HP_MAX_ID + 2 + WORD_COPY + 2 + 64 <= PIECE &&
	       PIECE <= HU_JBUF_SIZE, "an item fits a piece");

/*
 * An id that needs an escape (or one the graph did not measure) at @p,
 * through hu_jbuf_str(); the cursor comes back with room for a whole
 * PIECE.
 */
static char *put_id_slow(struct hu_jbuf *w, char *p, const char *id)
{
	hu_jbuf_set(w, p);
	hu_jbuf_str(w, id);
	return hu_jbuf_room(w, hu_jbuf_at(w), PIECE);
}

/*
 * @id as a JSON string at @p, after @pre (@pre_len bytes, up to three,
 * stored as one word of four with the opening quote): what hu_jbuf_str()
 * writes, from its known length @len when @plain (no byte needs an
 * escape: then @len is strlen(@id), at most HP_MAX_ID).
 */
static inline char *put_str(struct hu_jbuf *w, char *p, const char pre[4],
			    size_t pre_len, const char *id, size_t len,
			    bool plain)
{
	memcpy(p, pre, 4);
	if (plain) {
		p += pre_len + 1;
		hu_copy_short(p, id, len);
		p[len] = '"';
		return p + len + 1;
	}
	return put_id_slow(w, p + pre_len, id);
}

/*
 * Tensor @t's id.  @tt is the callers' copy of the graph's pointer: the
 * compiler keeps it in a register, where read through the graph it was
 * loaded again after every byte stored (a char may alias it).
 */
static inline char *put_id(const struct tensor *tt, struct hu_jbuf *w,
			   char *p, const char pre[4], size_t pre_len,
			   uint32_t t)
{
	const struct tensor *x = &tt[t];

	return put_str(w, p, pre, pre_len, x->id, x->id_len, x->id_plain);
}

/*
 * What snprintf() wrote, if it fit below WORD_COPY bytes; an op, kind or
 * home with no name (or too long a one: none is) is never written.
 */
static size_t word_len(int n)
{
	return n > 0 && n < WORD_COPY ? (size_t)n : 0;
}

static void words_init(struct words *wd)
{
	const char *a, *b;

	memset(wd, 0, sizeof(*wd));
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

/*
 * The cache operators @c to @end (one at least) after @head.  Pointers
 * and counts come in as arguments, and the loop keeps them in registers:
 * read through @s they were loaded again after every byte stored.
 */
static char *write_cops(const struct cop *c, const struct cop *end,
			const struct words *wd, const struct tensor *tt,
			struct hu_jbuf *w, char *p, const char *head,
			size_t head_len)
{
	size_t first = 1;	/* the first without its comma */

	p = hu_jbuf_room(w, p, PIECE);
	hu_copy_short(p, head, head_len);
	p += head_len;
	for (; c < end; c++, first = 0) {
		p = hu_jbuf_room(w, p, PIECE);
		p = put_word(p, wd->cop[c->kind] + first,
			     wd->cop_len[c->kind] - first);
		p = put_id(tt, w, p, "\"   ", 0, c->t);
		p = HU_CUR_LIT(p, " }");
	}
	return HU_CUR_LIT(p, " ]");
}

static inline __attribute__((always_inline)) char *
write_ids(const struct tensor *tt, struct hu_jbuf *w, char *p,
	  const char *head, size_t head_len, const uint32_t *t, uint32_t n)
{
	uint32_t i;

	p = hu_jbuf_room(w, p, PIECE);
	hu_copy_short(p, head, head_len);
	p = put_id(tt, w, p + head_len, "\"   ", 0, t[0]);
	for (i = 1; i < n; i++) {
		p = hu_jbuf_room(w, p, PIECE);
		p = put_id(tt, w, p, ", \" ", 2, t[i]);
	}
	return HU_CUR_LIT(p, " ]");
}

static char *write_step(const struct sched *s, const struct words *wd,
			struct hu_jbuf *w, char *p, uint32_t k)
{
	const struct graph *g = s->g;
	const struct tensor *tt = g->t;
	const struct op *o = &g->op[s->order[k]];
	/* where the cops before and after step @k start, and where they end */
	const uint32_t slot[3] = {
		s->slot_off[2 * k], s->slot_off[2 * k + 1],
		s->slot_off[2 * k + 2],
	};

	p = hu_jbuf_room(w, p, PIECE);
	p = put_str(w, HU_CUR_LIT(p, "  { \"op\": "), "\"   ", 0, o->id,
		    o->id_len, o->id_plain);
	p = HU_CUR_LIT(p, ", \"compute_ns\": ");
	p = hu_cur_u64(p, o->compute_ns);
	if (o->gemm.m) {
		p = HU_CUR_LIT(p, ", \"x-gemm\": { \"m\": ");
		p = hu_cur_u64(p, o->gemm.m);
		p = HU_CUR_LIT(p, ", \"n\": ");
		p = hu_cur_u64(p, o->gemm.n);
		p = HU_CUR_LIT(p, ", \"k\": ");
		p = hu_cur_u64(p, o->gemm.k);
		p = HU_CUR_LIT(p, " }");
	}
	/* lists with nothing in them are left out */
	if (slot[0] < slot[1])
		p = write_cops(s->cops + slot[0], s->cops + slot[1], wd, tt,
			       w, p, WORD(LIST_HEAD("before", "[")));
	if (o->n_in)
		p = write_ids(tt, w, p, WORD(LIST_HEAD("uses", "[ ")),
			      op_in(g, o), o->n_in);
	if (o->n_out)
		p = write_ids(tt, w, p, WORD(LIST_HEAD("defines", "[ ")),
			      op_out(g, o), o->n_out);
	if (slot[1] < slot[2])
		p = write_cops(s->cops + slot[1], s->cops + slot[2], wd, tt,
			       w, p, WORD(LIST_HEAD("after", "[")));
	p = hu_jbuf_room(w, p, PIECE);
	if (k + 1 < s->n)
		return HU_CUR_LIT(p, " },\n");
	return HU_CUR_LIT(p, " }\n");
}

/* Where each residency of tensor @t lives in the arena, if placed. */
static char *write_offsets(const struct sched *s, struct hu_jbuf *w, char *p,
			   size_t t)
{
	if (!s->res_off || s->res_first[t] == s->res_first[t + 1])
		return p;
	p = hu_jbuf_room(w, p, PIECE);
	p = HU_CUR_LIT(p, ", \"arena_offsets\": [ ");
	p = hu_cur_u64(p, s->res_off[s->res_first[t]]);
	for (uint32_t i = s->res_first[t] + 1; i < s->res_first[t + 1]; i++) {
		p = hu_jbuf_room(w, p, PIECE);
		p = hu_cur_u64(HU_CUR_LIT(p, ", "), s->res_off[i]);
	}
	return HU_CUR_LIT(p, " ]");
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

static char *write_tensor(const struct sched *s, const struct words *wd,
			  struct hu_jbuf *w, char *p, size_t t)
{
	const struct tensor *x = &s->g->t[t];
	uint8_t home = s->home[t];

	p = hu_jbuf_room(w, p, PIECE);
	p = put_id(s->g->t, w, HU_CUR_LIT(p, "  { \"id\": "), "\"   ", 0,
		   (uint32_t)t);
	p = hu_cur_u64(HU_CUR_LIT(p, ", \"bytes\": "), x->bytes);
	p = put_word(p, wd->kh[x->kind][home], wd->kh_len[x->kind][home]);
	p = write_offsets(s, w, p, t);
	p = hu_jbuf_room(w, p, PIECE);
	if (t + 1 < s->g->nt)
		return HU_CUR_LIT(p, " },\n");
	return HU_CUR_LIT(p, " }\n");
}

void hyper_plan__sched_write_json(const struct sched *s, FILE *f, const char *name,
		      const char *extra_json)
{
	const struct graph *g = s->g;
	struct hu_jbuf buf, *w = &buf;
	struct words wd;
	size_t t;
	uint32_t k;
	char *p;

	hu_jbuf_init(w, f);
	words_init(&wd);
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
	p = hu_jbuf_at(w);
	for (t = 0; t < g->nt; t++)
		p = write_tensor(s, &wd, w, p, t);
	p = hu_jbuf_room(w, p, PIECE);
	p = HU_CUR_LIT(p, " ],\n \"steps\": [\n");
	for (k = 0; k < s->n; k++)
		p = write_step(s, &wd, w, p, k);
	hu_jbuf_set(w, p);
	hu_jbuf_printf(w, " ],\n \"predicted\": { \"peak_device_bytes\": %llu, \"stall_ns\": %.0f, \"makespan_ns\": %.0f }",
		       (unsigned long long)s->pred.peak, s->pred.stall_ns,
		       s->pred.makespan_ns);
	if (extra_json) {
		hu_jbuf_put(w, ",\n \"x-planner\": ");
		hu_jbuf_put(w, extra_json);
	}
	hu_jbuf_put(w, "\n}\n");
	hu_jbuf_flush(w);
}

/* The planner's note in the schedule: which policy, profile and knobs. */
void hyper_plan__plan_note(char *buf, size_t len, const char *policy,
	       const struct profile *p, const char *params)
{
	snprintf(buf, len,
		 "{ \"policy\": \"%s\", \"profile\": \"%s\", \"chosen\": \"%s\" }",
		 policy, p->name, params);
}
