// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/graph_id.h>

#include "graph/graph.h"
#include "util/json.h"

_Static_assert(HP_MAX_ID <= UINT8_MAX, "an id's length fits its byte");

/* The kind named @s (schedule-format spelling), or -1. */
int hyper_plan__tkind_parse(const char *s)
{
	uint32_t k = hyper_vocab_parse(hyper_kind_name, s);

	return k ? (int)k : -1;
}

/* Weights and optimizer state exist before the graph and outlive it; the
 * KV cache outlives it (later tokens read it); the rest is transient. */
uint8_t hyper_plan__tkind_default_flags(enum hyper_tensor_kind k)
{
	switch (k) {
	case HYPER_KIND_WEIGHT:
	case HYPER_KIND_OPTIMIZER:
		return TF_LIVE_IN | TF_LIVE_OUT;
	case HYPER_KIND_KV:
		return TF_LIVE_OUT;
	default:
		return 0;
	}
}

static const char *tensor_name(const void *owner, uint32_t i)
{
	return ((const struct graph *)owner)->t[i].id;
}

static const char *op_name(const void *owner, uint32_t i)
{
	return ((const struct graph *)owner)->op[i].id;
}

/* @s (@len bytes) with its NUL; NULL when out of memory. */
static const char *arena_dup(struct str_arena *a, struct hp_mem *mem,
			     const char *s, size_t len)
{
	size_t n = len + 1, size = n > 65536 ? n : 65536;
	char *b;

	if (!a->block || a->used + n > a->size) {
		if (hyper_plan__grow(mem, &a->blocks, &a->capblocks, a->nblocks,
			    sizeof(char *)))
			return NULL;
		b = hyper_plan__malloc(mem, size);
		if (!b)
			return NULL;
		a->size = size;
		a->block = b;
		a->used = 0;
		a->blocks[a->nblocks++] = a->block;
	}
	memcpy(a->block + a->used, s, n);
	a->used += n;
	return a->block + a->used - n;
}

int hyper_plan__graph_init(struct graph *g, const char *name)
{
	memset(g, 0, sizeof(*g));
	hyper_plan__idmap_init(&g->tmap, tensor_name, g, &g->mem);
	hyper_plan__idmap_init(&g->omap, op_name, g, &g->mem);
	g->name = hyper_plan__strdup(&g->mem, name ? name : "");
	return g->name ? 0 : -ENOMEM;
}

/* When the graph's memory ran out; the graph is left as it was. */
static uint32_t no_mem(const struct graph *g, const char *what, size_t idx,
		       const char *id, struct hp_err *e)
{
	hyper_plan__errf(e, "%s %zu (\"%s\"): out of memory", what, idx, id);
	return NONE;
}

void hyper_plan__graph_free(struct graph *g)
{
	size_t i;

	for (i = 0; i < g->strs.nblocks; i++)
		free(g->strs.blocks[i]);
	free(g->strs.blocks);
	hyper_plan__idmap_free(&g->tmap);
	hyper_plan__idmap_free(&g->omap);
	free(g->t);
	free(g->op);
	free(g->refs);
	free(g->name);
	hyper_plan__mem_release(&g->mem);
	memset(g, 0, sizeof(*g));
}

void hyper_plan__graph_reset(struct graph *g)
{
	struct hp_mem mem;
	char *name = g->name;

	hyper_plan__mem_release(&g->mem);
	mem = g->mem;

	g->name = NULL;
	hyper_plan__graph_free(g);
	g->mem = mem;
	hyper_plan__idmap_init(&g->tmap, tensor_name, g, &g->mem);
	hyper_plan__idmap_init(&g->omap, op_name, g, &g->mem);
	g->name = name;
}

void hyper_plan__graph_drop_ids(struct graph *g)
{
	hyper_plan__idmap_free(&g->tmap);
	hyper_plan__idmap_free(&g->omap);
	g->ids_dropped = true;
}

/*
 * The maps hyper_plan__graph_drop_ids() freed, built again before an add
 * (ids are distinct: every add succeeds unless memory runs out).  On
 * -ENOMEM they stay dropped, and @g as it was.  Called only when they
 * were dropped.
 */
static int ids_back(struct graph *g)
{
	uint32_t dup, i;

	for (i = 0; i < g->nt; i++)
		if (hyper_plan__idmap_add(&g->tmap, g->t[i].id, i, &dup))
			goto fail;
	for (i = 0; i < g->nop; i++)
		if (hyper_plan__idmap_add(&g->omap, g->op[i].id, i, &dup))
			goto fail;
	g->ids_dropped = false;
	return 0;
fail:
	hyper_plan__graph_drop_ids(g);
	return -ENOMEM;
}

/* Length of the UTF-8 sequence at @s, or 0 if it is not well formed. */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned int n, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, past U+10FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/*
 * Whether the @n bytes at @s are all ASCII, a word at a time (the last
 * word overlapping the one before it): such an id is UTF-8 with no
 * sequence to check.  A byte at a time through utf8_seq(), the check
 * was 270 M instructions of building a graph of a million operators.
 */
static bool all_ascii(const char *s, size_t n)
{
	const uint64_t high = 0x8080808080808080ULL;
	uint64_t x, any = 0;
	size_t i;

	if (n < 8) {
		for (i = 0; i < n; i++)
			any |= (unsigned char)s[i];
		return !(any & 0x80);
	}
	for (i = 0; i + 8 < n; i += 8) {
		memcpy(&x, s + i, 8);
		any |= x;
	}
	memcpy(&x, s + n - 8, 8);
	return !((any | x) & high);
}

/*
 * Ids end up in JSON schedules and messages: 1..127 bytes of UTF-8.
 * Its length to *@len when it is one.
 */
static int check_id(const char *what, size_t idx, const char *id,
		    uint8_t *len, struct hp_err *e)
{
	size_t n = strlen(id), i, k;

	if (n < 1 || n > HP_MAX_ID)
		return hyper_plan__errf(e, "%s %zu: id must be 1..%d bytes (got %zu)",
			       what, idx, HP_MAX_ID, n);
	*len = (uint8_t)n;
	if (all_ascii(id, n))
		return 0;
	for (i = 0; i < n; i += k) {
		k = utf8_seq((const unsigned char *)id + i);
		if (!k)
			return hyper_plan__errf(e, "%s %zu: id is not valid UTF-8 (byte %zu)",
				       what, idx, i);
	}
	return 0;
}

uint32_t hyper_plan__graph_add_tensor(struct graph *g, const char *id, uint64_t bytes,
			  enum hyper_tensor_kind kind, uint8_t flags, struct hp_err *e)
{
	struct tensor *t;
	uint32_t dup;
	uint8_t len;
	int ret;

	if (check_id("tensor", g->nt, id, &len, e))
		return NONE;
	if (bytes < 1 || bytes > HP_MAX_BYTES) {
		hyper_plan__errf(e, "tensor %zu (\"%s\"): bytes must be an integer in 1..2^48 (got %llu)",
			g->nt, id, (unsigned long long)bytes);
		return NONE;
	}
	if (g->nt >= NONE - 1) {
		hyper_plan__errf(e, "tensor \"%s\": too many tensors", id);
		return NONE;
	}
	/* Every residency sum is then exact, in integers and in doubles. */
	if (g->total_bytes + bytes > HP_MAX_TOTAL) {
		hyper_plan__errf(e, "tensor %zu (\"%s\"): the tensors' sizes add up to more than 2^60 bytes",
			g->nt, id);
		return NONE;
	}
	if ((g->ids_dropped && ids_back(g)) ||
	    hyper_plan__grow(&g->mem, &g->t, &g->cap_t, g->nt, sizeof(*g->t)))
		return no_mem(g, "tensor", g->nt, id, e);
	t = &g->t[g->nt];
	t->id = arena_dup(&g->strs, &g->mem, id, len);
	if (!t->id)
		return no_mem(g, "tensor", g->nt, id, e);
	t->id_len = len;
	t->id_plain = hu_json_plain_len(id) != SIZE_MAX;
	ret = hyper_plan__idmap_add(&g->tmap, t->id, g->nt, &dup);
	if (ret == -ENOMEM)
		return no_mem(g, "tensor", g->nt, id, e);
	if (ret) {
		hyper_plan__errf(e, "tensor %zu: duplicate id \"%s\" (first defined as tensor %u)",
			g->nt, id, dup);
		return NONE;
	}
	g->total_bytes += bytes;
	t->bytes = bytes;
	t->kind = kind;
	t->flags = flags;
	return g->nt++;
}

/* Out of line: the generator's look-ups keep their tail call to the map. */
static __attribute__((noinline)) uint32_t tensor_scan(const struct graph *g,
						      const char *id)
{
	uint32_t i;

	for (i = 0; i < g->nt; i++)
		if (!strcmp(g->t[i].id, id))
			return i;
	return NONE;
}

uint64_t hyper_plan__graph_largest(const struct graph *g)
{
	uint64_t most = 0;

	for (uint32_t t = 0; t < g->nt; t++)
		if (g->t[t].bytes > most)
			most = g->t[t].bytes;
	return most;
}

uint32_t hyper_plan__graph_tensor(const struct graph *g, const char *id)
{
	if (g->ids_dropped)
		return tensor_scan(g, id);
	return hyper_plan__idmap_find(&g->tmap, id);
}

static int check_refs(const struct graph *g, const char *id,
		      const uint32_t *r, uint32_t n, const char *list,
		      struct hp_err *e)
{
	uint32_t i, j;

	for (i = 0; i < n; i++) {
		if (r[i] >= g->nt)
			return hyper_plan__errf(e, "op %zu (\"%s\"): bad tensor index in %s",
				       g->nop, id, list);
		for (j = 0; j < i; j++)
			if (r[j] == r[i])
				return hyper_plan__errf(e, "op %zu (\"%s\"): tensor \"%s\" listed twice in %s",
					       g->nop, id, g->t[r[i]].id, list);
	}
	return 0;
}

uint32_t hyper_plan__graph_add_op(struct graph *g, const char *id, uint64_t compute_ns,
		      const uint32_t *in, uint32_t n_in,
		      const uint32_t *out, uint32_t n_out,
		      const struct gemm *gemm, struct hp_err *e)
{
	struct op *o;
	uint32_t dup;
	uint8_t len;
	int ret;

	if (check_id("op", g->nop, id, &len, e))
		return NONE;
	if (compute_ns > HP_MAX_OP_NS) {
		hyper_plan__errf(e, "op %zu (\"%s\"): compute_ns must be in 0..%llu (one hour), got %llu",
			g->nop, id, HP_MAX_OP_NS, (unsigned long long)compute_ns);
		return NONE;
	}
	if (check_refs(g, id, in, n_in, "inputs", e) ||
	    check_refs(g, id, out, n_out, "outputs", e))
		return NONE;
	if (g->nop >= NONE - 1) {
		hyper_plan__errf(e, "op \"%s\": too many operators", id);
		return NONE;
	}
	if ((g->ids_dropped && ids_back(g)) ||
	    hyper_plan__grow(&g->mem, &g->op, &g->cap_op, g->nop,
			     sizeof(*g->op)) ||
	    hyper_plan__grow(&g->mem, &g->refs, &g->cap_refs, g->nrefs + n_in + n_out,
		    sizeof(*g->refs)))
		return no_mem(g, "op", g->nop, id, e);
	o = &g->op[g->nop];
	o->id = arena_dup(&g->strs, &g->mem, id, len);
	if (!o->id)
		return no_mem(g, "op", g->nop, id, e);
	o->id_len = len;
	o->id_plain = hu_json_plain_len(id) != SIZE_MAX;
	ret = hyper_plan__idmap_add(&g->omap, o->id, g->nop, &dup);
	if (ret == -ENOMEM)
		return no_mem(g, "op", g->nop, id, e);
	if (ret) {
		hyper_plan__errf(e, "op %zu: duplicate id \"%s\" (first defined as op %u)",
			g->nop, id, dup);
		return NONE;
	}
	o->compute_ns = compute_ns;
	o->ref = g->nrefs;
	o->n_in = n_in;
	o->n_out = n_out;
	if (n_in)
		memcpy(g->refs + g->nrefs, in, n_in * sizeof(*in));
	if (n_out)
		memcpy(g->refs + g->nrefs + n_in, out, n_out * sizeof(*out));
	o->outs_unread = true;
	for (uint32_t y = 0; y < n_out && o->outs_unread; y++)
		o->outs_unread = !hyper_plan__op_reads(g, o, out[y]);
	g->nrefs += n_in + n_out;
	o->gemm = gemm ? *gemm : (struct gemm){ 0 };
	o->flops = o->bytes = 0;	/* the caller sets them if it knows */
	return g->nop++;
}

bool hyper_plan__op_reads(const struct graph *g, const struct op *o, uint32_t t)
{
	uint32_t k;

	for (k = 0; k < o->n_in; k++)
		if (op_in(g, o)[k] == t)
			return true;
	return false;
}

uint64_t hyper_plan__op_working_set(const struct graph *g, const struct op *o)
{
	uint64_t sum = 0;
	uint32_t t, k;

	for_each_op_tensor(g, o, t, k)
		sum += g->t[t].bytes;
	return sum;
}

/* Tensor @t's id length (struct tensor's @id_len). */
static inline size_t id_len(const struct graph *g, uint32_t t)
{
	return id_bytes(g->t[t].id, g->t[t].id_len);
}

/* A step's role for the @k-th tensor @o lists: its inputs, then outputs. */
static inline char id_role(const struct op *o, uint32_t k)
{
	return k < o->n_in ? 'U' : 'D';
}

static inline uint64_t step_begin(const struct op *o)
{
	return hyper_graph_step_begin_len(o->id, id_bytes(o->id, o->id_len));
}

/* @o's share from its @k-th tensor on, @h its share before that one. */
static inline uint64_t step_share(const struct graph *g, const struct op *o,
				  uint64_t h, uint32_t k)
{
	const uint32_t *r = g->refs + o->ref;

	for (; k < o->n_in + o->n_out; k++)
		h = hyper_graph_step_add_len(h, id_role(o, k), g->t[r[k]].id,
					     id_len(g, r[k]));
	return h;
}

/*
 * The shares of @o and @p, hashed side by side while both list a tensor
 * (hyper_graph_step_add2()): a step's share is one long chain of
 * multiplies, each waiting for the one before, and two chains at once
 * cut the identity's time by a sixth at 100k decode operators.
 */
static uint64_t step_shares2(const struct graph *g, const struct op *o,
			     const struct op *p)
{
	const uint32_t *a = g->refs + o->ref, *b = g->refs + p->ref;
	uint32_t na = o->n_in + o->n_out, nb = p->n_in + p->n_out, k;
	uint64_t h[2] = { step_begin(o), step_begin(p) };

	for (k = 0; k < na && k < nb; k++)
		hyper_graph_step_add2(h, id_role(o, k), g->t[a[k]].id,
				      id_len(g, a[k]), id_role(p, k),
				      g->t[b[k]].id, id_len(g, b[k]));
	return step_share(g, o, h[0], k) + step_share(g, p, h[1], k);
}

/*
 * @g's identity as schedules and timelines carry it (include/hyper/graph_id.h).
 * Ids' lengths come from the graph (struct tensor), the kinds' names'
 * from a table made here: no strlen() of any id or name, where there
 * were two for each tensor and one for each operator.
 */
void hyper_plan__graph_identity(const struct graph *g, char *hash)
{
	/* every value of struct tensor's kind: a name, or none (length 0) */
	const char *kind[UINT8_MAX + 1];
	size_t kind_len[UINT8_MAX + 1];
	uint64_t ts = 0, ss = 0;
	size_t i;

	for (i = 0; i <= UINT8_MAX; i++) {
		kind[i] = hyper_kind_name((uint32_t)i);
		kind_len[i] = kind[i] ? strlen(kind[i]) : 0;
	}
	for (i = 0; i < g->nt; i++) {
		const struct tensor *t = &g->t[i];

		ts += hyper_graph_tensor_hash_len(t->id, id_len(g, (uint32_t)i),
						  t->bytes, kind[t->kind],
						  kind_len[t->kind]);
	}
	/* A sum of the steps' shares: the graph's order is as good as any. */
	for (i = 0; i + 1 < g->nop; i += 2)
		ss += step_shares2(g, &g->op[i], &g->op[i + 1]);
	if (i < g->nop)
		ss += step_share(g, &g->op[i], step_begin(&g->op[i]), 0);
	hyper_graph_hash(hash, ts, g->nt, ss, g->nop);
}
