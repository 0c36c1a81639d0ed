// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Random graphs that are valid by construction and exercise every shape
 * the planner must handle: read-only weights (some pinned), multi-writer
 * state updated in place like a KV cache, activations read soon or much
 * later, operators that take no time.  The same seed gives the same graph.
 */
#include <math.h>

#include "gen/model.h"

struct rng {
	uint64_t s;
};

static uint64_t next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unit(struct rng *r)
{
	return (next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static uint32_t below(struct rng *r, uint32_t n)
{
	return next(r) % n;
}

/* Log-uniform in [lo, hi]: sizes and times span orders of magnitude. */
static uint64_t loguni(struct rng *r, double lo, double hi)
{
	return (uint64_t)exp(log(lo) + unit(r) * (log(hi) - log(lo)));
}

struct rgen {
	struct graph *g;
	struct rng r;
	uint32_t nw, ns, *state_written, *acts;
	size_t nacts;
	uint32_t in[8], out[8], n_in, n_out;
};

static bool staged(const struct rgen *q, uint32_t t)
{
	uint32_t i;

	for (i = 0; i < q->n_in; i++)
		if (q->in[i] == t)
			return true;
	return false;
}

static void pick_inputs(struct rgen *q)
{
	uint32_t t, k;

	q->n_in = q->n_out = 0;
	for (k = 0; k < 3 && q->nacts; k++) {
		double u = unit(&q->r);

		if (u < 0.55)
			t = q->acts[q->nacts - 1 - below(&q->r, q->nacts < 6 ? q->nacts : 6)];
		else if (u < 0.7)
			t = q->acts[below(&q->r, q->nacts)];
		else
			continue;
		if (!staged(q, t))
			q->in[q->n_in++] = t;
	}
	if (unit(&q->r) < 0.6 && !staged(q, t = below(&q->r, q->nw)))
		q->in[q->n_in++] = t;
	if (unit(&q->r) < 0.2) {
		k = below(&q->r, q->ns);
		t = q->nw + k;
		if (q->state_written[k])
			q->in[q->n_in++] = t;	/* read, then updated in place */
		q->state_written[k] = 1;
		q->out[q->n_out++] = t;
	}
}

static int add_op(struct rgen *q, uint32_t i, struct hp_err *e)
{
	char id[32];
	uint64_t ns = unit(&q->r) < 0.05 ? 0 : loguni(&q->r, 1e3, 2e6);
	uint8_t flags = unit(&q->r) < 0.03 ? TF_LIVE_OUT : 0;
	uint32_t a;

	snprintf(id, sizeof(id), "a%u", i);
	a = hyper_plan__graph_add_tensor(q->g, id, loguni(&q->r, 16384, 8 << 20),
			     HYPER_KIND_ACTIVATION, flags, e);
	if (a == NONE)
		return -1;
	q->out[q->n_out++] = a;
	q->acts[q->nacts++] = a;
	snprintf(id, sizeof(id), "op%u", i);
	return hyper_plan__graph_add_op(q->g, id, ns, q->in, q->n_in, q->out, q->n_out,
			    NULL, e) == NONE ? -1 : 0;
}

static int add_tensors(struct rgen *q, struct hp_err *e)
{
	char id[32];
	uint32_t i;

	for (i = 0; i < q->nw; i++) {
		uint8_t f = hyper_plan__tkind_default_flags(HYPER_KIND_WEIGHT);

		snprintf(id, sizeof(id), "w%u", i);
		if (unit(&q->r) < 0.05)
			f |= TF_PIN;
		if (hyper_plan__graph_add_tensor(q->g, id, loguni(&q->r, 65536, 16 << 20),
				     HYPER_KIND_WEIGHT, f, e) == NONE)
			return -1;
	}
	for (i = 0; i < q->ns; i++) {
		snprintf(id, sizeof(id), "s%u", i);
		if (hyper_plan__graph_add_tensor(q->g, id, loguni(&q->r, 65536, 4 << 20),
				     HYPER_KIND_KV, hyper_plan__tkind_default_flags(HYPER_KIND_KV), e) ==
		    NONE)
			return -1;
	}
	return 0;
}

int gen_random(struct graph *g, const struct random_params *rp,
	       struct hp_err *e)
{
	struct rgen q = { .g = g, .r = { rp->seed * 7919 + 1 } };
	uint32_t i;
	int ret;

	if (rp->ops < 1 || rp->ops > (1U << 24))
		return hyper_plan__errf(e, "random graph: ops must be in 1..%u (got %u)",
			       1U << 24, rp->ops);
	q.nw = rp->ops / 8 + 2;
	q.ns = rp->ops / 64 + 1;
	q.state_written = hyper_plan__calloc(&g->mem, q.ns, sizeof(*q.state_written));
	q.acts = hyper_plan__array(&g->mem, rp->ops, sizeof(*q.acts));
	ret = q.state_written && q.acts ? add_tensors(&q, e) : hyper_plan__nomem(e);
	for (i = 0; i < rp->ops && !ret; i++) {
		pick_inputs(&q);
		ret = add_op(&q, i, e);
	}
	free(q.state_written);
	free(q.acts);
	return ret;
}
