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

/*
 * The plan goes to libhyper in pieces of PIECE tensors or steps
 * (hyper_schedule_begin() and the calls after it), each built in one
 * small buffer and copied by libhyper before the next: whole arrays were
 * 193 MB at a million steps (128 bytes a step), held beside libhyper's
 * copy through its validation and layout, the peak of the planner's run.
 */
#define PIECE	1024U

/* The cops of steps @k to @end (exclusive), in one run of s->cops. */
static size_t piece_cops(const struct sched *s, size_t k, size_t end)
{
	return s->slot_off[2 * end] - s->slot_off[2 * k];
}

static int add_tensors(const struct sched *s, struct hyper_schedule_builder *b,
		       struct hyper_tensor_info *ti, char *msg, size_t len)
{
	const struct graph *g = s->g;
	size_t i, k, n;
	int ret = 0;

	for (k = 0; k < g->nt && !ret; k += n) {
		n = g->nt - k < PIECE ? g->nt - k : PIECE;
		for (i = 0; i < n; i++)
			ti[i] = (struct hyper_tensor_info){
				.id = g->t[k + i].id, .bytes = g->t[k + i].bytes,
				.kind = g->t[k + i].kind, .home = s->home[k + i],
			};
		if (s->res_off)
			for (i = 0; i < n; i++) {
				const uint32_t *f = s->res_first + k + i;

				ti[i].arena_offsets = s->res_off + f[0];
				ti[i].nr_arena_offsets = f[1] - f[0];
			}
		ret = hyper_schedule_add_tensors(b, ti, (uint32_t)n, msg, len);
	}
	return ret;
}

static int add_steps(const struct sched *s, struct hyper_schedule_builder *b,
		     struct hyper_step_info *si, struct hyper_cop *cops,
		     char *msg, size_t len)
{
	const struct graph *g = s->g;
	size_t i, k, n, c0;
	int ret = 0;

	for (k = 0; k < s->n && !ret; k += n) {
		n = s->n - k < PIECE ? s->n - k : PIECE;
		c0 = s->slot_off[2 * k];
		for (i = 0; i < piece_cops(s, k, k + n); i++)
			cops[i] = (struct hyper_cop){ s->cops[c0 + i].kind,
						      s->cops[c0 + i].t };
		for (i = 0; i < n; i++) {
			const struct op *o = &g->op[s->order[k + i]];
			size_t slot = 2 * (k + i);

			si[i] = (struct hyper_step_info){
				.op = o->id, .compute_ns = o->compute_ns,
				.before = cops + s->slot_off[slot] - c0,
				.nr_before = (uint32_t)slot_len(s, slot),
				.after = cops + s->slot_off[slot + 1] - c0,
				.nr_after = (uint32_t)slot_len(s, slot + 1),
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
		ret = hyper_schedule_add_steps(b, si, (uint32_t)n, msg, len);
	}
	return ret;
}

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
	struct hyper_schedule_builder *b = NULL;
	struct hyper_tensor_info *ti;
	struct hyper_step_info *si;
	struct hyper_cop *cops;
	size_t k, most = 0;
	char msg[400];
	int ret;

	/* the most cops one piece of steps has */
	for (k = 0; k < s->n; k += PIECE) {
		size_t c = piece_cops(s, k, s->n - k < PIECE ? s->n : k + PIECE);

		most = c > most ? c : most;
	}
	/* every element is assigned whole below: nothing to clear */
	ti = hyper_plan__array(mem, g->nt < PIECE ? g->nt : PIECE, sizeof(*ti));
	si = hyper_plan__array(mem, s->n < PIECE ? s->n : PIECE, sizeof(*si));
	cops = hyper_plan__array(mem, most, sizeof(*cops));
	*out = NULL;
	if (!ti || !si || !cops) {
		ret = -ENOMEM;
		goto out;
	}
	ret = hyper_schedule_begin(&info, &b, msg, sizeof(msg));
	if (!ret)
		ret = add_tensors(s, b, ti, msg, sizeof(msg));
	if (!ret)
		ret = add_steps(s, b, si, cops, msg, sizeof(msg));
	if (b && ret)
		hyper_schedule_end(b, NULL, NULL, 0);	/* ret says why */
	else if (b)
		ret = hyper_schedule_end(b, out, msg, sizeof(msg));
out:
	if (ret == -ENOMEM)
		hyper_plan__errf(e, "out of memory handing the plan to libhyper");
	else if (ret)
		hyper_plan__errf(e, "%s", msg);
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
