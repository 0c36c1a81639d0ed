// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A budget is what the device may hold, and the device holds the arena:
 * the peak residency plus what placement loses to holes and alignment.
 * A plan whose residency fills the budget therefore needs an arena above
 * it.  Rather than hand out such a layout, the policy is run again under
 * lower residency budgets: first scaled by how far the arena overshot,
 * then bisected between the highest that fit and the lowest that did not
 * (a lower residency budget costs transfers, so the highest that fits is
 * kept), a few rounds in all.  If none fits, the plan keeps the budget
 * for residency alone and carries no offsets, and the caller says so
 * (struct sched.arena_over).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/list.h"
#include "out/output.h"
#include "passes/pipeline.h"

#define FIT_ROUNDS	5

enum { NOTHING, FITS, TOO_BIG };

/* Plans under residency budget @b and lays it out against @want. */
static int try_under(int pol, const struct problem *pb, uint64_t b,
		     uint64_t want, struct result *out, struct hp_err *e)
{
	struct problem q = *pb;
	struct hp_err pe;
	int ret;

	q.goal.budget = b;
	ret = hyper_plan__run_policy(pol, &q, out, &pe);
	if (ret == -ENOMEM) {
		hyper_plan__result_free(out);
		return hyper_plan__nomem(e);
	}
	if (ret || !out->ok) {
		hyper_plan__result_free(out);
		return NOTHING;	/* nothing this low */
	}
	out->s.budget = want;
	ret = hyper_plan__layout(pb, out, want, e);
	if (ret) {
		hyper_plan__result_free(out);
		return ret;	/* -ENOMEM from the layout */
	}
	out->s.planned_under = b;
	return out->s.arena_over ? TOO_BIG : FITS;
}

static int fit_one(int pol, const struct problem *pb, struct result *r,
		   struct hp_err *e)
{
	uint64_t want = pb->goal.budget, fit = 0, over = want, over_by;
	int ret = hyper_plan__run_policy(pol, pb, r, e);

	if (ret || !r->ok)
		return ret;
	ret = hyper_plan__layout(pb, r, want, e);
	over_by = r->s.arena_over;
	for (int round = 0; !ret && over_by && round < FIT_ROUNDS; round++) {
		struct result again;
		uint64_t b;
		int got;

		if (!fit) {
			/* Shrink residency by the overshoot, at least 1%. */
			b = (uint64_t)((double)over * want / over_by);
			if (b > over - over / 100)
				b = over - over / 100;
		} else {
			b = fit + (over - fit) / 2;
			if (over - fit < want / 100)
				break;	/* close enough to the best */
		}
		got = try_under(pol, pb, b, want, &again, e);
		if (got < 0) {
			hyper_plan__result_free(r);
			return got;
		}
		if (got == FITS) {
			fit = b;
			hyper_plan__result_free(r);
			*r = again;
			continue;
		}
		if (got == NOTHING && !fit)
			break;		/* lower still would find nothing either */
		if (got == TOO_BIG)
			over_by = again.s.arena_over;
		hyper_plan__result_free(&again);
		over = b;
	}
	return ret;
}

/*
 * The planner's floor (hyper_plan__run_plan_best()) compares residency; the arena is
 * what must fit.  A baseline whose arena fits the budget may beat the
 * planner re-planned lower, so each baseline is fitted too and the best
 * whose arena fits is kept, by the floor's own rule.
 */
static int fit_best(int pol, const struct problem *pb, struct result *r,
		    struct hp_err *e)
{
	static const int base[] = { POL_DISTANCE, POL_GREEDY };
	int ret = fit_one(pol, pb, r, e);

	if (ret || !r->ok || pol != POL_PLAN || !pb->goal.budget)
		return ret;
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
		struct hp_err ignored;
		struct result c;
		char params[sizeof(c.params)];

		ret = fit_one(base[i], pb, &c, &ignored);
		if (ret == -ENOMEM) {
			hyper_plan__result_free(&c);
			hyper_plan__errf(e, "%s", ignored.msg);
			return -ENOMEM;
		}
		r->ms += c.ms;
		r->probes += c.probes;
		if (ret || !c.ok || c.s.arena_over ||
		    !(r->s.arena_over || hyper_plan__result_better(&pb->goal, &c, r))) {
			hyper_plan__result_free(&c);
			continue;
		}
		snprintf(params, sizeof(params), "%s", c.params);
		memcpy(c.policy, r->policy, sizeof(c.policy));
		snprintf(c.from, sizeof(c.from), "%s", hyper_plan__policy_name[base[i]]);
		snprintf(c.params, sizeof(c.params), "%s's schedule: %.120s",
			 hyper_plan__policy_name[base[i]], params);
		c.ms = r->ms;
		c.probes = r->probes;
		hyper_plan__result_free(r);
		*r = c;
	}
	return 0;
}

/* Budgets a failed plan falls back to: the floor + k/LATTICE of the way to
 * no offload, and NEAR more between the floor and B, close below B. */
#define LATTICE		16
#define NEAR		4

static int cmp_desc(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return (a < b) - (a > b);
}

/*
 * More budget must never hurt, and the searches are heuristics that are
 * not monotone in the budget: one may find nothing, or nothing whose
 * arena fits, at a budget where a lower one succeeds.  So when the plan at
 * budget B does not fit, plans at lower budgets are tried, highest first,
 * and the first whose arena fits is taken: it fits under B too.  If none
 * fits and B found nothing at all, the highest that found a plan is taken
 * (its residency fits B; its arena does not, as B's would not).  They are
 * the graph's lattice (the same for every B) and a few just below B
 * (floor + (B - floor) * 7/8, 3/4, 1/2, 1/4).
 */
static int fit_lower(int pol, const struct problem *pb, struct result *r,
		     struct hp_err *e)
{
	const struct life *lf = pb->lf;
	uint64_t floor = hyper_plan__life_floor(lf, NULL), top = lf->peak0;
	uint64_t B = pb->goal.budget, x[LATTICE + NEAR];
	static const unsigned int eighths[NEAR] = { 7, 6, 4, 2 };
	struct result over = { 0 };	/* the highest found, arena over */
	size_t n = 0, i;
	int k, ret;

	if (top < floor)
		top = floor;
	for (k = 0; k < LATTICE; k++)
		x[n++] = floor + (top - floor) * (uint64_t)k / LATTICE;
	for (k = 0; k < NEAR && B > floor; k++)
		x[n++] = floor + (B - floor) / 8 * eighths[k];
	qsort(x, n, sizeof(*x), cmp_desc);
	for (i = 0; i < n; i++) {
		struct problem q = *pb;
		struct hp_err ignored;
		struct result c;

		if (x[i] >= B || (i && x[i] == x[i - 1]))
			continue;
		q.goal.budget = x[i];
		ret = fit_best(pol, &q, &c, &ignored);
		r->ms += c.ms;
		r->probes += c.probes;
		if (ret == -ENOMEM) {
			hyper_plan__result_free(&c);
			hyper_plan__result_free(&over);
			return hyper_plan__nomem(e);
		}
		if (!ret && c.ok && c.s.arena_over && !r->ok && !over.ok) {
			over = c;
			continue;
		}
		if (ret || !c.ok || c.s.arena_over) {
			hyper_plan__result_free(&c);
			continue;
		}
		hyper_plan__result_free(&over);
		c.ms = r->ms;
		c.probes = r->probes;
		snprintf(c.params + strnlen(c.params, sizeof(c.params) - 40),
			 40, " (at budget %llu)", (unsigned long long)x[i]);
		hyper_plan__result_free(r);
		*r = c;
		return 0;
	}
	if (over.ok) {
		over.ms = r->ms;
		over.probes = r->probes;
		hyper_plan__result_free(r);
		*r = over;
	}
	return 0;
}

static int fit_policy(int pol, const struct problem *pb, struct result *r,
		      struct hp_err *e)
{
	int ret = fit_best(pol, pb, r, e);

	if (ret == -ENOMEM || !pb->goal.budget || (!ret && r->ok &&
						  !r->s.arena_over))
		return ret;
	if (ret) {
		/*
		 * nothing at B: the fallback's, or B's own message; the row
		 * keeps its policy's name either way
		 */
		char name[sizeof(r->policy)];

		memcpy(name, r->policy, sizeof(name));
		hyper_plan__result_free(r);
		memset(r, 0, sizeof(*r));
		memcpy(r->policy, name, sizeof(name));
	}
	/*
	 * No offload is one schedule at every budget, laid out the same:
	 * one that does not meet B, or whose arena does not fit it, meets or
	 * fits no lower budget either.
	 */
	if (pol == POL_NONE)
		return ret;
	if (fit_lower(pol, pb, r, e) == -ENOMEM) {
		hyper_plan__result_free(r);
		return -ENOMEM;
	}
	if (r->ok)
		return 0;
	return ret ? ret : 0;
}

/*
 * Under a budget the baselines run again at budgets already searched (the
 * planner's floor and each baseline's own fit, both at the budget given):
 * a problem with no memo of its own (the API's plans) gets one for this
 * call alone.
 */
int hyper_plan__run_policy_fit(int pol, const struct problem *pb, struct result *r,
		   struct hp_err *e)
{
	struct hp_polmemo own = { 0 };
	struct problem q;
	int ret;

	if (pb->memo || !pb->goal.budget)
		return fit_policy(pol, pb, r, e);
	q = *pb;
	q.memo = &own;
	ret = fit_policy(pol, &q, r, e);
	hyper_plan__polmemo_free(&own);
	return ret;
}
