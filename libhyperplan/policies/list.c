// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "policies/list.h"

const char *const hyper_plan__policy_name[POL_NR] = {
	[POL_NONE] = "none", [POL_PLAN] = "plan",
	[POL_DISTANCE] = "distance", [POL_GREEDY] = "greedy",
};

int hyper_plan__policy_parse(const char *s)
{
	int i;

	for (i = 0; i < POL_NR; i++)
		if (!strcmp(s, hyper_plan__policy_name[i]))
			return i;
	return -1;
}

int hyper_plan__run_policy(int pol, const struct problem *pb, struct result *r,
	       struct hp_err *e)
{
	switch (pol) {
	case POL_NONE: return hyper_plan__run_none(pb, r, e);
	case POL_PLAN: return hyper_plan__run_plan_best(pb, r, e);
	case POL_DISTANCE: return hyper_plan__run_distance(pb, r, e);
	default: return hyper_plan__run_greedy(pb, r, e);
	}
}
