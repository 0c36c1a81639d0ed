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

#endif
