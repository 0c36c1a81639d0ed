// SPDX-License-Identifier: GPL-2.0
/*
 * A budget is what the device may hold, and the device holds the arena:
 * the peak residency plus what placement loses to holes and alignment.
 * A plan whose residency fills the budget therefore needs an arena above
 * it.  Rather than hand out such a layout, the policy is run again under
 * a lower residency budget, scaled by how far the arena overshot, until
 * the laid-out arena fits (a few rounds).  If no round fits, the plan
 * keeps the budget for residency alone and carries no offsets, and the
 * caller says so (struct sched.arena_over).
 */
#include "list.h"
#include "output.h"

#define FIT_ROUNDS	4

int run_policy_fit(int pol, const struct problem *pb, struct result *r,
		   struct hp_err *e)
{
	struct problem q = *pb;
	int ret = run_policy(pol, pb, r, e);

	if (ret || !r->ok)
		return ret;
	ret = sched_layout(&r->s, pb->goal.budget, e);
	for (int round = 0; !ret && r->s.arena_over && round < FIT_ROUNDS; round++) {
		uint64_t b = q.goal.budget, want = pb->goal.budget;
		struct result again;
		struct hp_err pe;

		/* Shrink residency by the overshoot, at least 1%. */
		q.goal.budget = (uint64_t)((double)b * want / r->s.arena_over);
		if (q.goal.budget > b - b / 100)
			q.goal.budget = b - b / 100;
		if (run_policy(pol, &q, &again, &pe) || !again.ok) {
			result_free(&again);
			break;		/* nothing lower: keep the plan, unplaced */
		}
		again.s.budget = want;
		ret = sched_layout(&again.s, want, e);
		if (ret) {
			result_free(&again);
			break;
		}
		again.s.planned_under = q.goal.budget;
		result_free(r);
		*r = again;
	}
	return ret;
}
