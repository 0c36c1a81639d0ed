// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Execution-order refinement.  List scheduling over the dependencies with
 * one rule on top of the initial order: an operator that is ready and
 * frees at least as much device memory as it allocates runs at once.
 * Everything else keeps its initial position as priority, so the pass
 * only moves memory-releasing work earlier.  The typical win is training:
 * an optimizer update becomes ready as soon as its layer's gradient
 * exists, and running it then frees that gradient instead of holding every
 * gradient until the end of the backward pass.
 *
 * An operator's net allocation only falls as others run (its outputs get
 * allocated by others, it becomes the last reader of more tensors), so an
 * operator found eager stays eager.  The last remaining accessor of a
 * tensor is found without a list: the XOR of all accessors, minus those
 * that ran, is the one left.  The next op that is not eager is the first
 * ready one in the initial order, found by a cursor (next()), not a heap.
 */
#include <errno.h>
#include <string.h>

#include "lib/heap.h"
#include "passes/order.h"

struct refine {
	const struct graph *g;
	uint32_t *pos;		/* initial position: the priority */
	uint32_t *init;		/* the initial order: position → op */
	uint32_t first;		/* every op before it in init[] has run */
	uint32_t *left;		/* accessors of each tensor not yet run */
	uint32_t *xacc;		/* XOR of those accessors */
	uint8_t *alloc;		/* tensor holds device memory */
	uint8_t *done, *ready;
	struct heap eager;
	struct hp_mem *mem;	/* no push allocates: refine_init() reserves */
};

/* Whether @t is among the @n tensors of @r (an op's inputs). */
static inline bool lists(const uint32_t *r, uint32_t n, uint32_t t)
{
	uint32_t x;

	for (x = 0; x < n; x++)
		if (r[x] == t)
			return true;
	return false;
}

/*
 * Each distinct tensor op @o touches, as for_each_op_tensor() lists them
 * (inputs, then the outputs it does not read), with its refs, input
 * count, access count and outs_unread in locals (@in, @nin, @end, @un)
 * and the check for a read output inline: the macro's reloads and its
 * call to hyper_plan__op_reads() per output were half of this pass's
 * time.  The op's fields were read again at each access, and the
 * arrays' pointers after each byte stored (a byte may alias them): 3%
 * of what was left, at 100k decode operators.
 * (k) < nin tells a read.  The outputs of an op that reads none of them
 * (outs_unread) are not looked for.
 */
#define for_each_access(g, o, in, nin, end, un, t, k)			\
	for ((in) = (g)->refs + (o)->ref, (nin) = (o)->n_in,		\
	     (end) = (nin) + (o)->n_out, (un) = (o)->outs_unread,	\
	     (k) = 0; (k) < (end) && ((t) = (in)[k], 1); (k)++)		\
		if ((k) < (nin) || (un) || !lists((in), (nin), (t)))

static int64_t net_alloc(const struct refine *r, uint32_t i)
{
	const struct graph *g = r->g;
	const struct op *o = &g->op[i];
	const struct tensor *ten = g->t;
	const uint32_t *in, *left = r->left;
	const uint8_t *alloc = r->alloc;
	int64_t net = 0;
	uint32_t t, k, nin, end;
	bool un;

	for_each_access(g, o, in, nin, end, un, t, k) {
		if (!alloc[t] && k >= nin)
			net += ten[t].bytes;
		else if (left[t] == 1 && !(ten[t].flags & TF_LIVE_OUT))
			net -= ten[t].bytes;
	}
	return net;
}

static void make_ready(struct refine *r, uint32_t i)
{
	r->ready[i] = 1;
	if (net_alloc(r, i) <= 0)
		hyper_plan__heap_push(&r->eager, r->pos[i], i, r->mem);
}

static void run(struct refine *r, uint32_t i)
{
	const struct graph *g = r->g;
	const struct op *o = &g->op[i];
	const uint32_t *in;
	uint32_t t, k, nin, end, last, *xacc = r->xacc, *left = r->left;
	uint8_t *alloc = r->alloc;
	bool un;

	r->done[i] = 1;
	for_each_access(g, o, in, nin, end, un, t, k) {
		alloc[t] = 1;
		xacc[t] ^= i;
		if (--left[t] != 1)
			continue;
		last = xacc[t];
		if (r->ready[last] && !r->done[last] &&
		    net_alloc(r, last) <= 0)
			hyper_plan__heap_push(&r->eager, r->pos[last], last, r->mem);
	}
}

/*
 * The eager op first in the initial order, else the ready op first in it
 * that has not run.  An op eager when made ready waits in the eager heap
 * until it runs, so with none there every ready op is one the second
 * rule picks among.  That one needs no heap of its own (a push and a pop
 * of 16 bytes for nearly every op at decode, 16 MB of fresh memory at
 * 1M operators): the initial order is topological, so once every op
 * before @first in it has run, the op there is ready, and it is the
 * first not run.  (Were it not topological, the scan would go on to the
 * first ready one, the same answer.)  NONE where no op left is ready,
 * which only dependencies with a cycle leave: the scan stops at the end
 * of the order rather than read past it.
 */
static uint32_t next(struct refine *r)
{
	uint32_t i, c, n = r->g->nop;

	while (r->eager.n) {
		i = hyper_plan__heap_pop(&r->eager).val;
		if (!r->done[i])
			return i;
	}
	/* some op has not run (the caller's count): the first stops there */
	while (r->done[r->init[r->first]])
		r->first++;
	for (c = r->first; c < n && (!r->ready[r->init[c]] ||
				     r->done[r->init[c]]); c++)
		;
	return c < n ? r->init[c] : NONE;
}

/* -ENOMEM leaves what it allocated for refine_free(). */
static int refine_init(struct refine *r, const struct graph *g,
		       const uint32_t *order, struct hp_mem *mem)
{
	const uint32_t *in;
	uint32_t i, t, k, nin, end, *left, *xacc;
	bool un;

	memset(r, 0, sizeof(*r));
	r->g = g;
	r->mem = mem;
	r->pos = hyper_plan__array(mem, g->nop, sizeof(*r->pos));
	r->init = hyper_plan__array(mem, g->nop, sizeof(*r->init));
	r->left = hyper_plan__calloc(mem, g->nt, sizeof(*r->left));
	r->xacc = hyper_plan__calloc(mem, g->nt, sizeof(*r->xacc));
	r->alloc = hyper_plan__array(mem, g->nt, 1);	/* all set below */
	r->done = hyper_plan__calloc(mem, g->nop, 1);
	r->ready = hyper_plan__calloc(mem, g->nop, 1);
	/* An op is pushed once when ready, and onto eager at most once more
	 * per tensor it accesses (run()): no push needs to allocate. */
	if (!r->pos || !r->init || !r->left || !r->xacc || !r->alloc ||
	    !r->done || !r->ready ||
	    hyper_plan__heap_reserve(&r->eager, g->nop + g->nrefs, mem))
		return -ENOMEM;
	/* the refined order is written over @order as it goes */
	memcpy(r->init, order, g->nop * sizeof(*order));
	for (i = 0; i < g->nop; i++)
		r->pos[order[i]] = i;
	left = r->left;
	xacc = r->xacc;
	for (i = 0; i < g->nop; i++)
		for_each_access(g, &g->op[i], in, nin, end, un, t, k) {
			left[t]++;
			xacc[t] ^= i;
		}
	for (t = 0; t < g->nt; t++)
		r->alloc[t] = !!(g->t[t].flags & TF_LIVE_IN);
	return 0;
}

static void refine_free(struct refine *r)
{
	free(r->pos);
	free(r->init);
	free(r->left);
	free(r->xacc);
	free(r->alloc);
	free(r->done);
	free(r->ready);
	/* the heap's array (a prepare's biggest) kept for later phases */
	hyper_plan__free(r->mem, r->eager.a);
	r->eager.a = NULL;
	hyper_plan__heap_free(&r->eager);
}

int hyper_plan__refine_order(const struct graph *g, const struct deps *d,
		 uint32_t *order, struct hp_mem *mem)
{
	uint32_t *indeg = hyper_plan__array(mem, g->nop, sizeof(*indeg));
	struct refine r;
	size_t n, k;
	uint32_t i;
	int ret = 0;

	if (refine_init(&r, g, order, mem) || !indeg) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(indeg, d->indeg, g->nop * sizeof(*indeg));
	for (i = 0; i < g->nop; i++)
		if (!indeg[i])
			make_ready(&r, i);
	for (n = 0; n < g->nop; n++) {
		i = next(&r);
		if (__builtin_expect(i == NONE, 0)) {
			/* @d has a cycle: put back what was written */
			memcpy(order, r.init, g->nop * sizeof(*order));
			ret = -EINVAL;
			goto out;
		}
		run(&r, i);
		order[n] = i;
		for (k = d->off[i]; k < d->off[i + 1]; k++)
			if (!--indeg[d->dst[k]])
				make_ready(&r, d->dst[k]);
	}
out:
	refine_free(&r);
	free(indeg);
	return ret;
}
