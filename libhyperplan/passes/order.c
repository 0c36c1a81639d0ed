// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "lib/heap.h"
#include "passes/order.h"

struct edge {
	uint32_t src, dst, via;
};

struct edges {
	struct edge *a;
	size_t n;
};

/*
 * The edges are allocated once for as many as there can be (see
 * hyper_plan__graph_deps()), so an add neither checks nor grows: growing
 * by doubling copied them 15 times at 100k decode operators.
 */
static inline void edge_add(struct edges *E, uint32_t s, uint32_t d,
			    uint32_t t)
{
	if (s != d)
		E->a[E->n++] = (struct edge){ s, d, t };
}

/*
 * Writers of every tensor, in listed order: w[woff[t]..woff[t+1]).  A
 * counting sort without a cursor array: counts go two slots up, so that
 * after the prefix sum woff[t + 1] is where t's writers start, and it
 * has moved on to where they end once they are in.
 */
static int writers(const struct graph *g, size_t **woff, uint32_t **w,
		   struct hp_mem *mem)
{
	size_t *off = hyper_plan__calloc(mem, g->nt + 2, sizeof(*off)), i;
	const uint32_t *refs = g->refs;
	uint32_t j, *wr;

	*woff = off;
	*w = NULL;
	if (!off)
		return -ENOMEM;
	for (i = 0; i < g->nop; i++) {
		const uint32_t *out = refs + g->op[i].ref + g->op[i].n_in;

		for (j = 0; j < g->op[i].n_out; j++)
			off[out[j] + 2]++;
	}
	for (i = 2; i <= g->nt; i++)
		off[i + 1] += off[i];
	*w = wr = hyper_plan__array(mem, off[g->nt + 1], sizeof(*wr));
	if (!wr)
		return -ENOMEM;
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

static int read_edges(const struct graph *g, uint32_t b, uint32_t t,
		      const uint32_t *w, size_t nw, struct edges *E,
		      struct hp_err *e)
{
	size_t v = writers_before(w, nw, b);

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

/*
 * -ENOMEM leaves what it allocated in @d, for hyper_plan__deps_free().
 * The same counting sort as writers(): d->off has one slot more than
 * the ops and one, never read.
 */
static int build_csr(const struct graph *g, struct edges *E, struct deps *d,
		     struct hp_mem *mem)
{
	const struct edge *a = E->a;
	size_t i, *off;

	d->off = off = hyper_plan__calloc(mem, g->nop + 2, sizeof(*d->off));
	d->indeg = hyper_plan__calloc(mem, g->nop, sizeof(*d->indeg));
	if (!off || !d->indeg)
		return -ENOMEM;
	for (i = 0; i < E->n; i++) {
		off[a[i].src + 2]++;
		d->indeg[a[i].dst]++;
	}
	for (i = 2; i <= g->nop; i++)
		off[i + 1] += off[i];
	d->dst = hyper_plan__array(mem, E->n, sizeof(*d->dst));
	d->via = hyper_plan__array(mem, E->n, sizeof(*d->via));
	if (!d->dst || !d->via)
		return -ENOMEM;
	for (i = 0; i < E->n; i++) {
		size_t at = off[a[i].src + 1]++;

		d->dst[at] = a[i].dst;
		d->via[at] = a[i].via;
	}
	return 0;
}

int hyper_plan__graph_deps(const struct graph *g, struct deps *d, struct hp_mem *mem,
	       struct hp_err *e)
{
	struct edges E = { 0 };
	uint32_t *w = NULL, b, j;
	size_t *woff = NULL, t;
	int ret;

	memset(d, 0, sizeof(*d));
	/*
	 * At most one edge per written tensor's later writer (write after
	 * write) and two per read (from the write it sees, to the write
	 * after it): twice the refs bound them.  Only what is added is
	 * touched; the rest stays untouched address space.
	 */
	E.a = hyper_plan__array(mem, 2 * g->nrefs + 1, sizeof(*E.a));
	ret = E.a ? writers(g, &woff, &w, mem) : -ENOMEM;
	for (t = 0; !ret && t < g->nt; t++)	/* write after write */
		for (j = woff[t] + 1; j < woff[t + 1]; j++)
			edge_add(&E, w[j - 1], w[j], t);
	for (b = 0; b < g->nop && !ret; b++)
		for (j = 0; j < g->op[b].n_in && !ret; j++) {
			t = op_in(g, &g->op[b])[j];
			ret = read_edges(g, b, t, w + woff[t],
					 woff[t + 1] - woff[t], &E, e);
		}
	if (!ret)
		ret = build_csr(g, &E, d, mem);
	free(E.a);
	free(woff);
	free(w);
	if (ret == -ENOMEM) {
		hyper_plan__deps_free(d);
		return hyper_plan__nomem(e);
	}
	return ret;
}

void hyper_plan__deps_free(struct deps *d)
{
	free(d->off);
	free(d->dst);
	free(d->via);
	free(d->indeg);
	memset(d, 0, sizeof(*d));
}

/* Every op left over by Kahn's algorithm has a left-over predecessor, so
 * walking predecessors from any of them must come round to a cycle. */
static int report_cycle(const struct graph *g, const struct deps *d,
			const uint32_t *indeg, struct hp_mem *mem,
			struct hp_err *e)
{
	uint32_t *pred = hyper_plan__array(mem, g->nop, sizeof(*pred));
	uint32_t *via = hyper_plan__array(mem, g->nop, sizeof(*via));
	uint32_t *seen = hyper_plan__calloc(mem, g->nop, sizeof(*seen));
	uint32_t i, x = NONE, step = 0, start;
	char msg[400];
	size_t k, len = 0;
	int ret = -EINVAL;

	if (!pred || !via || !seen) {
		ret = hyper_plan__nomem(e);
		goto out;
	}
	for (i = 0; i < g->nop; i++)
		for (k = d->off[i]; indeg[i] && k < d->off[i + 1]; k++)
			if (indeg[d->dst[k]]) {
				pred[d->dst[k]] = i;
				via[d->dst[k]] = d->via[k];
			}
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
