// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "lib/heap.h"
#include "lib/util.h"
#include "passes/order.h"
#include "util/huge.h"

/*
 * The edges are not stored as a list: they are walked in the order that
 * list had (write after write per tensor, then each op's reads), once
 * to count each op's successors and predecessors, once to place the
 * successors (a counting sort by source, so each op's keep that order)
 * and, for a cycle's message alone, once more for the tensors behind
 * the cycle's edges.  The list (12 bytes an edge) and the tensor kept
 * with each successor (4 more) were 35 MB of the deps' 61 MB of fresh
 * memory at 1M decode operators; the second walk costs about what
 * writing the list and reading it back did.
 */
enum edge_pass { EDGE_COUNT, EDGE_PLACE, EDGE_VIA };

struct edge_walk {
	enum edge_pass pass;
	size_t *off;		/* EDGE_COUNT: counts two up; PLACE: cursors */
	uint32_t *indeg;	/* EDGE_COUNT */
	uint32_t *dst;		/* EDGE_PLACE */
	/*
	 * EDGE_VIA: the tensor behind the last edge from pred[d] to each op
	 * d that Kahn's algorithm left (left[] not zero), as report_cycle()
	 * took it from the successors in their order.
	 */
	const uint32_t *pred, *left;
	uint32_t *via;
};

static inline __attribute__((always_inline)) void
edge_add(struct edge_walk *E, uint32_t s, uint32_t d, uint32_t t)
{
	if (s == d)
		return;
	switch (E->pass) {
	case EDGE_COUNT:
		E->off[s + 2]++;
		E->indeg[d]++;
		break;
	case EDGE_PLACE:
		E->dst[E->off[s + 1]++] = d;
		break;
	case EDGE_VIA:
		if (E->left[s] && E->left[d] && E->pred[d] == s)
			E->via[d] = t;
		break;
	}
}

/*
 * writers()'s offsets and writers, in one block (hyper_plan__block())
 * on big graphs (deps_blocks()): at 1M decode operators the two (8 and
 * 4 MB) lay in the heap apart, on no 2 MiB bound, and their first
 * touches were about 960 faults of 4 KiB.  The block sizes the writers
 * by a bound, the graph's references (what is not written of it is not
 * touched), so that it is taken before they are counted.  Below
 * DEPS_BLOCK_MIN they are the two arrays they were, the writers counted
 * first: blocks and bounds there move the smaller graphs' heap, and
 * cost faults and peak RSS.
 */
#define WRITERS_PARTS(woff, w, nt, nw) {				\
	HU_PART(woff, (nt) + 2, true), HU_PART(w, nw, false),		\
}

/*
 * Whether graph_deps()'s arrays (and writers()'s) take their blocks:
 * where the successors' bound reaches DEPS_BLOCK_MIN.  A block of a
 * few huge pages faults whole pages the bound never fills: at 100k
 * decode operators (4 MB of successors' bound) blocks took 13 MiB more
 * peak RSS and 140 more faults; at 1M (24 MB) 5 MiB less and 1,100
 * fewer.
 */
#define DEPS_BLOCK_MIN	((size_t)8 << 20)

static bool deps_blocks(const struct graph *g)
{
	return g->nrefs >= DEPS_BLOCK_MIN / (2 * sizeof(uint32_t));
}

static void writers_free(void **blk, size_t **woff, uint32_t **w)
{
	struct hu_part parts[] = WRITERS_PARTS(*woff, *w, 0, 0);

	hu_block_free(blk, parts, ARRAY_SIZE(parts));
}

/*
 * Writers of every tensor, in listed order: w[woff[t]..woff[t+1]).  A
 * counting sort without a cursor array: counts go two slots up, so that
 * after the prefix sum woff[t + 1] is where t's writers start, and it
 * has moved on to where they end once they are in.  Both freed by
 * writers_free() (*@blk: their block, or NULL), on failure too.
 */
static int writers(const struct graph *g, size_t **woff, uint32_t **w,
		   void **blk, struct hp_mem *mem)
{
	struct hu_part parts[] = WRITERS_PARTS(*woff, *w, g->nt, g->nrefs);
	const uint32_t *refs = g->refs;
	uint32_t j, *wr;
	size_t *off, i;

	*blk = NULL;
	*w = NULL;
	if (deps_blocks(g)) {
		*blk = hyper_plan__block(mem, parts, ARRAY_SIZE(parts));
		if (!*blk)
			return -ENOMEM;
	} else {
		*woff = hyper_plan__calloc(mem, g->nt + 2, sizeof(**woff));
		if (!*woff)
			return -ENOMEM;
	}
	off = *woff;
	for (i = 0; i < g->nop; i++) {
		const uint32_t *out = refs + g->op[i].ref + g->op[i].n_in;

		for (j = 0; j < g->op[i].n_out; j++)
			off[out[j] + 2]++;
	}
	for (i = 2; i <= g->nt; i++)
		off[i + 1] += off[i];
	if (!*blk) {
		*w = hyper_plan__array(mem, off[g->nt + 1], sizeof(**w));
		if (!*w)
			return -ENOMEM;
	}
	wr = *w;
	for (i = 0; i < g->nop; i++) {
		const uint32_t *out = refs + g->op[i].ref + g->op[i].n_in;

		for (j = 0; j < g->op[i].n_out; j++)
			wr[off[out[j] + 1]++] = i;
	}
	return 0;
}

/* Number of writers of the list listed before op @b. */
static size_t writers_before(const uint32_t *w, size_t n, uint32_t b)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (w[mid] < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The edges of op @b's read of tensor @t, written by @w[0..nw): inline
 * with the walk, as edge_add(), so that each walk is compiled for its
 * pass.  Most tensors read have one writer or none (weights).
 */
static inline __attribute__((always_inline)) int
read_edges(const struct graph *g, uint32_t b, uint32_t t, const uint32_t *w,
	   size_t nw, struct edge_walk *E, struct hp_err *e)
{
	size_t v = nw == 1 ? w[0] < b : writers_before(w, nw, b);

	if (v) {
		edge_add(E, w[v - 1], b, t);
	} else if (!(g->t[t].flags & TF_LIVE_IN)) {
		if (!nw || w[0] == b)
			return hyper_plan__errf(e, "op %u (\"%s\") reads tensor \"%s\", which no operator writes first and which is not live_in",
				       b, g->op[b].id, g->t[t].id);
		edge_add(E, w[0], b, t);	/* forward reference */
		v = 1;
	}
	if (v < nw)
		edge_add(E, b, w[v], t);	/* write after read */
	return 0;
}

/* Every edge, in order, to @E; only the first walk can fail. */
static inline __attribute__((always_inline)) int
walk_edges(const struct graph *g, const size_t *woff, const uint32_t *w,
	   struct edge_walk *E, struct hp_err *e)
{
	const uint32_t *refs = g->refs;
	const struct op *o = g->op;
	size_t t, x, at = 0, end;
	uint32_t b;

	for (t = 0; t < g->nt; t++, at = end) {	/* write after write */
		end = woff[t + 1];
		for (x = at + 1; x < end; x++)
			edge_add(E, w[x - 1], w[x], t);
	}
	for (b = 0; b < g->nop; b++, o++) {
		const uint32_t *in = refs + o->ref, *in_end = in + o->n_in;

		for (; in < in_end; in++) {
			int ret;

			at = woff[*in];
			ret = read_edges(g, b, *in, w + at, woff[*in + 1] - at,
					 E, e);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * The deps' counts, in-degrees and successors, in one block
 * (hyper_plan__block()) where writers() takes one: apart, at 1M decode
 * operators, their first touches (8, 4 and 9 MB, on no 2 MiB bound)
 * were about 1,100 faults of 4 KiB.  The block sizes the successors by
 * a bound, as the writers: each written reference adds at most one
 * edge (write after write), each read at most two (from its writer, to
 * the next write), so two per reference.  Below that, the three arrays
 * they were, the successors counted first.
 */
#define DEPS_PARTS(d, nop, nrefs) {					\
	HU_PART((d)->off, (nop) + 2, true),				\
	HU_PART((d)->indeg, nop, true),					\
	HU_PART((d)->dst, 2 * (nrefs), false),				\
}

/*
 * The successors by a counting sort, as writers() sorts: d->off has one
 * slot more than the ops and one, never read.  -ENOMEM leaves what it
 * allocated in @d, for hyper_plan__deps_free().
 */
int hyper_plan__graph_deps(const struct graph *g, struct deps *d, struct hp_mem *mem,
	       struct hp_err *e)
{
	struct hu_part parts[] = DEPS_PARTS(d, g->nop, g->nrefs);
	struct edge_walk E = { .pass = EDGE_COUNT };
	uint32_t *w = NULL;
	size_t *woff = NULL, i, *off;
	void *wblk = NULL;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	if (deps_blocks(g)) {
		d->blk = hyper_plan__block(mem, parts, ARRAY_SIZE(parts));
		if (!d->blk)
			ret = -ENOMEM;
	} else {
		d->off = hyper_plan__calloc(mem, g->nop + 2, sizeof(*d->off));
		d->indeg = hyper_plan__calloc(mem, g->nop, sizeof(*d->indeg));
		if (!d->off || !d->indeg)
			ret = -ENOMEM;
	}
	if (!ret)
		ret = writers(g, &woff, &w, &wblk, mem);
	off = d->off;
	E.off = off;
	E.indeg = d->indeg;
	if (!ret)
		ret = walk_edges(g, woff, w, &E, e);
	if (!ret) {
		for (i = 2; i <= g->nop; i++)
			off[i + 1] += off[i];
		if (!d->blk) {
			d->dst = hyper_plan__array(mem, off[g->nop + 1],
						   sizeof(*d->dst));
			if (!d->dst)
				ret = -ENOMEM;
		}
	}
	if (!ret) {
		E.pass = EDGE_PLACE;
		E.dst = d->dst;
		walk_edges(g, woff, w, &E, e);
	}
	writers_free(&wblk, &woff, &w);
	if (ret) {
		hyper_plan__deps_free(d);
		return ret == -ENOMEM ? hyper_plan__nomem(e) : ret;
	}
	return 0;
}

void hyper_plan__deps_free(struct deps *d)
{
	struct hu_part parts[] = DEPS_PARTS(d, 0, 0);

	hu_block_free(&d->blk, parts, ARRAY_SIZE(parts));
	memset(d, 0, sizeof(*d));
}

/*
 * Every op left over by Kahn's algorithm has a left-over predecessor, so
 * walking predecessors from any of them must come round to a cycle.  The
 * tensor behind each step is found by walking the edges again: the last
 * edge from an op's predecessor to it, in the successors' order.
 */
static int report_cycle(const struct graph *g, const struct deps *d,
			const uint32_t *indeg, struct hp_mem *mem,
			struct hp_err *e)
{
	uint32_t *pred = hyper_plan__array(mem, g->nop, sizeof(*pred));
	uint32_t *via = hyper_plan__array(mem, g->nop, sizeof(*via));
	uint32_t *seen = hyper_plan__calloc(mem, g->nop, sizeof(*seen));
	struct edge_walk E = {
		EDGE_VIA, .pred = pred, .left = indeg, .via = via,
	};
	uint32_t i, x = NONE, step = 0, start, *w = NULL;
	size_t k, len = 0, *woff = NULL;
	void *wblk = NULL;
	char msg[400];
	int ret = -EINVAL;

	if (!pred || !via || !seen || writers(g, &woff, &w, &wblk, mem)) {
		ret = hyper_plan__nomem(e);
		goto out;
	}
	for (i = 0; i < g->nop; i++)
		for (k = d->off[i]; indeg[i] && k < d->off[i + 1]; k++)
			if (indeg[d->dst[k]])
				pred[d->dst[k]] = i;
	walk_edges(g, woff, w, &E, e);
	for (i = 0; i < g->nop && x == NONE; i++)
		if (indeg[i])
			x = i;
	while (!seen[x]) {
		seen[x] = ++step;
		x = pred[x];
	}
	start = x;
	msg[0] = 0;
	for (step = 0; (x != start || !step) && step < 8; step++) {
		len += snprintf(msg + len, sizeof(msg) - len,
				"\"%.40s\" <- (%.40s) <- ", g->op[x].id,
				g->t[via[x]].id);
		x = pred[x];
		if (len >= sizeof(msg))
			break;
	}
	hyper_plan__errf(e, "graph: cycle between operators: %s\"%.40s\"%s", msg,
		g->op[x].id, x == start ? "" : " ...");
out:
	free(pred);
	free(via);
	free(seen);
	writers_free(&wblk, &woff, &w);
	return ret;
}

/*
 * Kahn's algorithm, the least ready op first.  Ops are mostly listed in a
 * valid order, so the least ready one is mostly found by a cursor going
 * up the ids: an op becomes ready either above the cursor, where the
 * cursor will find it, or below, passed over while it waited, and only
 * those go through the heap.  A heap's op is below the cursor, so below
 * any the cursor finds: the heap first, then the cursor, is the least
 * ready op, as a heap of every op gave, at a push and a pop for a few.
 */
int hyper_plan__topo_order(const struct graph *g, const struct deps *d, uint32_t *order,
	       struct hp_mem *mem, struct hp_err *e)
{
	uint32_t *indeg = hyper_plan__array(mem, g->nop, sizeof(*indeg));
	struct heap late = { 0 };
	size_t n = 0, k;
	uint32_t i, cur = 0, nop = g->nop;
	int ret = 0;

	/* each op is ready once */
	if (!indeg || hyper_plan__heap_reserve(&late, g->nop, mem)) {
		ret = hyper_plan__nomem(e);
		goto out;
	}
	memcpy(indeg, d->indeg, g->nop * sizeof(*indeg));
	for (;;) {
		if (late.n) {
			i = hyper_plan__heap_pop(&late).val;
		} else {
			while (cur < nop && indeg[cur])
				cur++;
			if (cur == nop)
				break;
			i = cur++;
		}
		order[n++] = i;
		for (k = d->off[i]; k < d->off[i + 1]; k++) {
			uint32_t s = d->dst[k];

			if (!--indeg[s] && s < cur)
				hyper_plan__heap_push(&late, s, s, mem);
		}
	}
	if (n < g->nop)
		ret = report_cycle(g, d, indeg, mem, e);
out:
	hyper_plan__heap_free(&late);
	free(indeg);
	return ret;
}
