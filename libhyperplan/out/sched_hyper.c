// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A planned schedule handed to libhyper as a struct hyper_schedule, with
 * no JSON in between: hyper_schedule_new() runs libhyper's own validator
 * on it, the one every schedule file goes through.  The planner submits
 * every plan it returns, so a plan libhyper would refuse is reported as
 * the planner's bug instead of reaching a runner.
 */
#include <errno.h>
#include <string.h>

#include "out/output.h"

int hyper_plan__sched_to_hyper(const struct sched *s, const char *name,
		   struct hyper_schedule **out, struct hp_mem *mem,
		   struct hp_err *e)
{
	const struct graph *g = s->g;
	struct hyper_schedule_info info = {
		.name = name,
		.flags = HYPER_SCHED_PRED_PEAK | HYPER_SCHED_PRED_STALL |
			 HYPER_SCHED_PRED_MAKESPAN |
			 (s->budget ? HYPER_SCHED_BUDGET : 0) |
			 (s->res_off ? HYPER_SCHED_ARENA : 0),
		.nr_tensors = (uint32_t)g->nt,
		.nr_steps = s->n,
		.budget_bytes = s->budget,
		.pred_peak_device_bytes = s->pred.peak,
		.pred_stall_ns = (uint64_t)s->pred.stall_ns,
		.pred_makespan_ns = (uint64_t)s->pred.makespan_ns,
		.arena_bytes = s->res_off ? s->arena : 0,
	};
	/* every element is assigned whole below: nothing to clear */
	struct hyper_tensor_info *ti =
		hyper_plan__array(mem, g->nt, sizeof(*ti));
	struct hyper_step_info *si = hyper_plan__array(mem, s->n, sizeof(*si));
	struct hyper_cop *cops =
		hyper_plan__array(mem, s->ncops, sizeof(*cops));
	char msg[400];
	size_t i;
	int ret;

	*out = NULL;
	if (!ti || !si || !cops) {
		hyper_plan__errf(e, "out of memory handing the plan to libhyper");
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < g->nt; i++)
		ti[i] = (struct hyper_tensor_info){
			.id = g->t[i].id, .bytes = g->t[i].bytes,
			.kind = g->t[i].kind, .home = s->home[i],
		};
	if (s->res_off)
		for (i = 0; i < g->nt; i++) {
			ti[i].arena_offsets = s->res_off + s->res_first[i];
			ti[i].nr_arena_offsets = s->res_first[i + 1] - s->res_first[i];
		}
	for (i = 0; i < s->ncops; i++)
		cops[i] = (struct hyper_cop){ s->cops[i].kind, s->cops[i].t };
	for (i = 0; i < s->n; i++) {
		const struct op *o = &g->op[s->order[i]];

		si[i] = (struct hyper_step_info){
			.op = o->id, .compute_ns = o->compute_ns,
			.before = cops + s->slot_off[2 * i],
			.nr_before = (uint32_t)slot_len(s, 2 * i),
			.after = cops + s->slot_off[2 * i + 1],
			.nr_after = (uint32_t)slot_len(s, 2 * i + 1),
			.uses = op_in(g, o), .nr_uses = o->n_in,
			.defines = op_out(g, o), .nr_defines = o->n_out,
		};
		if (o->gemm.m) {
			si[i].flags = HYPER_STEP_GEMM;
			si[i].gemm_m = o->gemm.m;
			si[i].gemm_n = o->gemm.n;
			si[i].gemm_k = o->gemm.k;
		}
	}
	ret = hyper_schedule_new(&info, ti, si, out, msg, sizeof(msg));
	if (ret == -ENOMEM)
		hyper_plan__errf(e, "out of memory handing the plan to libhyper");
	else if (ret)
		hyper_plan__errf(e, "%s", msg);
out:
	free(ti);
	free(si);
	free(cops);
	return ret;
}

int hyper_plan__sched_validate(const struct sched *s, const char *name,
			       struct hyper_schedule **out,
			       struct hp_mem *mem, struct hp_err *e)
{
	struct hyper_schedule *hs;
	struct hp_err ve;
	int ret = hyper_plan__sched_to_hyper(s, name, &hs, mem, &ve);

	if (out)
		*out = NULL;
	if (ret == -ENOMEM) {
		hyper_plan__errf(e, "%s", ve.msg);
		return ret;
	}
	if (ret)
		return hyper_plan__errf(e, "internal error: libhyper's validator refuses the plan (%s); please report it with the graph",
			       ve.msg);
	if (out)
		*out = hs;
	else
		hyper_schedule_free(hs);
	return 0;
}

int hyper_plan__sched_check(const struct sched *s, struct hp_mem *mem, struct hp_err *e)
{
	return hyper_plan__sched_validate(s, "", NULL, mem, e);
}
