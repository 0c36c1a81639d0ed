/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --compare plans each policy as a row, and the plan of the goal asked
 * for is often the same schedule as one of them: the same steps take the
 * row's layout (a layout depends on the residencies alone), and the same
 * whole schedule passed libhyper's validator already.  passes/rows.c.
 */
#ifndef HP_ROWS_H
#define HP_ROWS_H

#include "policies/list.h"

/*
 * A row already planned (struct hp_polmemo, row) whose schedule is @s's
 * steps laid out, or with @whole its every field; NULL: none.
 */
const struct sched *hyper_plan__row_twin(const struct problem *pb,
					 const struct sched *s, bool whole);
/*
 * @s takes @twin's layout, the one placing its residencies would make.
 * 0, or -ENOMEM (said in @e) with no layout, as a failed placing leaves.
 */
int hyper_plan__row_layout(struct sched *s, const struct sched *twin,
			   struct hp_mem *mem, struct hp_err *e);

#endif
