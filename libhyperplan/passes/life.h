/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lifetime analysis over one execution order.  Each tensor's accesses, in
 * step order, cut its life into gaps: (start, first access), between two
 * accesses, (last access, end).  A gap is *live* when the data must
 * survive it: the access that ends it reads the tensor, or it is the end
 * and the tensor is live_out, or it is the start and the tensor is live_in
 * and first read.  Every other gap is dead: no policy keeps the tensor
 * there.  Live gaps are what offloading can take off the device.
 */
#ifndef HP_LIFE_H
#define HP_LIFE_H

#include "graph/graph.h"

#define ACC_R	1
#define ACC_W	2

struct life {
	const struct graph *g;
	const uint32_t *order;	/* step → op */
	uint32_t n;		/* steps */
	size_t *acc_off;	/* accesses of tensor t: [acc_off[t], acc_off[t+1]) */
	uint32_t *acc_step;
	uint8_t *acc_rw;
	double *t0;		/* start of each step without offload; t0[n] = end */
	uint64_t *ws;		/* working set of each step */
	uint64_t *base;		/* residency at each step without offload (n + 1 held) */
	uint32_t *first_w;	/* step of each tensor's first write; n: none */
	/* Dead gaps, by the step that ends them (their values are freed
	 * after it): tensors [dead_off[k], dead_off[k+1]) of dead_t, in
	 * tensor order.  The same for every schedule of this order, so
	 * hyper_plan__sched_build() does not redo it on every probe. */
	size_t *dead_off;
	uint32_t *dead_t;
	/* Each tensor's home when nothing is offloaded (HYPER_HOME_*), the
	 * start hyper_plan__sched_build() gives each probe's evictions. */
	uint8_t *home0;
	/* The tensors whose residency, with nothing offloaded, breaks a
	 * rule somewhere (none in a valid order): a probe's schedule is
	 * emitted tracking its evicted tensors alone only when they are all
	 * among them (passes/sched.c). */
	uint32_t *dirty_t;
	size_t ndirty;
	/*
	 * Of the tensors not pinned: the live gaps with a step inside (what
	 * a policy can take off the device) and the values (one before the
	 * first write, one from each write), for hyper_plan__plan_init() to
	 * place its arrays of them before it lists them.
	 */
	size_t nlive, nvals;
	uint64_t peak0, max_ws;
	uint32_t max_ws_step;
	uint64_t floor;		/* hyper_plan__life_floor() */
	uint32_t floor_step;
	/*
	 * The block (util/huge.h) of the arrays above but dirty_t: freed
	 * once, never its parts.
	 */
	void *blk;
};

/* 0, or -ENOMEM with @lf freed. */
int hyper_plan__life_build(struct life *lf, const struct graph *g, const uint32_t *order,
	       struct hp_mem *mem);
/* No budget holds below this: a step's working set plus the pinned
 * tensors live around it; *at (if given) is that step. */
uint64_t hyper_plan__life_floor(const struct life *lf, uint32_t *at);
void hyper_plan__life_free(struct life *lf);

/*
 * Gap i of tensor t runs from access i-1 to access i (i = 0: from the
 * start, i = count: to the end).  Steps are returned as a and j, with -1
 * and n standing for the start and the end.
 */
static inline size_t nr_accesses(const struct life *lf, uint32_t t)
{
	return lf->acc_off[t + 1] - lf->acc_off[t];
}

/*
 * Whether the value tensor t holds just after step a (a = -1: at the
 * start) is its live_in one: baselines write such values back to the
 * pool as soon as the schedule starts, since nothing can change them.
 */
bool hyper_plan__initial_value(const struct life *lf, uint32_t t, int64_t a);

/* Inline: the policies and the sweep ask for every gap of every probe. */
static inline void hyper_plan__gap_ends(const struct life *lf, uint32_t t,
					size_t i, int64_t *a, int64_t *j)
{
	size_t base = lf->acc_off[t], cnt = nr_accesses(lf, t);

	*a = i ? (int64_t)lf->acc_step[base + i - 1] : -1;
	*j = i < cnt ? (int64_t)lf->acc_step[base + i] : (int64_t)lf->n;
}

static inline bool hyper_plan__gap_live(const struct life *lf, uint32_t t,
					size_t i)
{
	size_t base = lf->acc_off[t], cnt = nr_accesses(lf, t);
	uint8_t flags = lf->g->t[t].flags;

	if (!cnt)
		return false;	/* never touched: it stays in the pool */
	if (i == cnt)
		return flags & TF_LIVE_OUT;
	if (!(lf->acc_rw[base + i] & ACC_R))
		return false;
	return i || (flags & TF_LIVE_IN);
}

#endif
