/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A lower bound on the peak device memory of any schedule of one
 * execution order whose makespan is at most (1 + max_slow) times the
 * no-offload one.  Derivation: Documentation/bench-plan.md.
 */
#ifndef HP_BOUND_H
#define HP_BOUND_H

#include "passes/life.h"
#include "profile/profile.h"

/* 0 with @mem failed when memory runs out (0 is also the empty graph's). */
uint64_t hyper_plan__lower_bound(const struct life *lf, const struct profile *p,
		     double max_slow, struct hp_mem *mem);

/*
 * The lesser of hyper_plan__lower_bound() and @cap, the same to the
 * byte, cheaper where what stays at any budget, or the windows short of
 * the averaged ones, already rule out every budget up to @cap (the other
 * order's bound, say).  0 with @mem failed.
 */
uint64_t hyper_plan__lower_bound_below(const struct life *lf,
				       const struct profile *p,
				       double max_slow, uint64_t cap,
				       struct hp_mem *mem);

uint64_t hyper_plan__lower_bound_pair(const struct life *first,
				      const struct life *then,
				      const struct profile *p,
				      double max_slow, struct hp_mem *mem);

/*
 * For the tests: what hyper_plan__lower_bound() bisects over, built the
 * same way (sim/bound.c says what each is).  Windows are (x, y), grid
 * instants x < y.
 */
struct bound_tables {
	uint32_t ng, *step;	/* grid instants, as steps */
	double *pinned;		/* [ng] */
	double *h, *d;		/* [y * (y - 1) / 2 + x]; d in h's block */
	double floor;		/* what stays at any budget */
	uint32_t ncg, *cg;	/* coarse instants, as grid indices */
	double *lev;		/* [(x * span + y - x - 1) * nlev + l], coarse */
	double *ub;		/* [x * span + y - x - 1]: at or above each
				 * level of the window */
	uint32_t span, nlev;	/* averaged windows: the longest, the levels */
	uint32_t nbuck;		/* knapsack buckets, 1% wide, */
	double buck_lo;		/* from this log(bytes per ns) */
};

/* -EINVAL for an empty order, -ENOMEM with @mem failed. */
int hyper_plan__bound_tables(const struct life *lf, const struct profile *p,
			     double max_slow, struct bound_tables *bt,
			     struct hp_mem *mem);
void hyper_plan__bound_tables_free(struct bound_tables *bt);

/*
 * For the tests: the stall the bisection's step finds at each of @n
 * budgets, into @stall; one over the slack may stop short of the most.
 * -EINVAL for an empty order, -ENOMEM with @mem failed.
 */
int hyper_plan__bound_stalls(const struct life *lf, const struct profile *p,
			     double max_slow, const double *budget, size_t n,
			     double *stall, struct hp_mem *mem);

#endif
