// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The cost model: an operator that carries its FLOPs and bytes moved is
 * timed for the profile it is planned on, with the profile's roofline.
 * One that carries only compute_ns keeps it, which is only right on the
 * profile it was measured on: planning it for another is refused, where
 * it used to plan silently with the wrong times.
 */
#include <math.h>
#include <string.h>

#include "profile/profile.h"
#include "profile/retime.h"

int hyper_plan__graph_retime(struct graph *g, const struct profile *p, struct hp_err *e)
{
	size_t only = 0, i;

	for (i = 0; i < g->nop; i++) {
		struct op *o = &g->op[i];
		double ns;

		if (!o->flops && !o->bytes) {
			only++;
			continue;
		}
		ns = ceil(roofline_ns(p, o->flops, o->bytes));
		if (ns > HP_MAX_OP_NS)
			return hyper_plan__errf(e, "op %zu (\"%s\"): %.3g FLOP and %.3g bytes take %.0f s on %s, more than an hour",
				       i, o->id, o->flops, o->bytes, ns / 1e9,
				       p->name);
		o->compute_ns = (uint64_t)ns;
	}
	if (only && g->timed_on[0] && strcmp(g->timed_on, p->name))
		return hyper_plan__errf(e, "graph \"%s\": %zu of its %zu operators carry only compute_ns, measured on %s: plan it with -p %s, or give them flops and bytes (graph-format.md)",
			       g->name, only, g->nop, g->timed_on, g->timed_on);
	snprintf(g->timed_on, sizeof(g->timed_on), "%s", p->name);
	return 0;
}
