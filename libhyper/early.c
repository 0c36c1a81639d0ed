// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Late-prefetch adaptation (HYPER_OPEN_EARLY_PREFETCH).  When an operator
 * had to wait for a prefetch, the schedule issued it too late for this
 * machine; from then on, while each operator runs, the executor issues
 * the prefetches of the next early_ahead steps ahead of their step, one
 * step further after each late one (up to HX_EARLY_MAX_AHEAD).
 *
 * An early prefetch never breaks what the schedule promised:
 *  - budget: during every step it spans, up to its prefetch in its own
 *    step, the plan's most resident bytes plus every early prefetch
 *    resident then stays within the schedule's budget (its validated
 *    peak if it has none);
 *  - arena: it goes to the place the layout gave that residency, only if
 *    that place is free now and no residency the plan starts before its
 *    step overlaps it (so nothing planned has to wait for it or move);
 *    without a layout nothing is issued early, since first-fit placement
 *    cannot promise later tensors their holes;
 *  - order: nothing touches the tensor (a cache op, a use, a define)
 *    between now and its prefetch, so it reads the same pool copy;
 *  - none while a prefetch is deferred behind a store (exec.c), since
 *    its place is not yet held and an early one could take it.
 * At its step the scheduled prefetch is then skipped (exec.c issue()).
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

#define HX_EARLY_MAX_AHEAD	8
/* Tensors a look-ahead window may touch; past that, stop looking. */
#define HX_EARLY_WIN		256

void hx_early_late(struct hyper_ctx *ctx)
{
	if (ctx->flags & HYPER_OPEN_EARLY_PREFETCH &&
	    ctx->early_ahead < HX_EARLY_MAX_AHEAD)
		ctx->early_ahead++;
}

/*
 * The plan's residency replayed: each step's most resident bytes, and
 * for each op before a step the most resident in that step before it
 * (from the step's start up to, not counting, that op).
 */
static void plan_peaks(const struct hyper_schedule *s, uint64_t *peak,
		       uint64_t *pre, const uint32_t *pre_first)
{
	bool *res = calloc(s->nr_tensors ?: 1, sizeof(*res));
	uint64_t cur = 0;

	if (!res) {
		/* Unknown: the budget check then refuses every early prefetch. */
		for (uint32_t k = 0; k < s->nr_steps; k++) {
			peak[k] = UINT64_MAX / 2;
			for (uint32_t j = 0; j < s->steps[k].nr_before; j++)
				pre[pre_first[k] + j] = UINT64_MAX / 2;
		}
		return;
	}
	for (uint32_t i = 0; i < s->nr_tensors; i++)
		if (s->tensors[i].home == HYPER_HOME_DEVICE) {
			res[i] = true;
			cur += s->tensors[i].bytes;
		}
	for (uint32_t k = 0; k < s->nr_steps; k++) {
		const struct hs_step *st = &s->steps[k];
		uint64_t m = cur;

		for (int part = 0; part < 3; part++) {
			const struct hyper_cop *ops = part == 0 ? st->before : st->after;
			uint32_t n = part == 0 ? st->nr_before : st->nr_after;

			if (part == 1) {
				for (uint32_t j = 0; j < st->nr_defines; j++)
					if (!res[st->defines[j]]) {
						res[st->defines[j]] = true;
						cur += s->tensors[st->defines[j]].bytes;
					}
				if (cur > m)
					m = cur;
				continue;
			}
			for (uint32_t j = 0; j < n; j++) {
				uint32_t t = ops[j].tensor;

				if (part == 0)
					pre[pre_first[k] + j] = m;
				if (ops[j].op == HYPER_OP_PREFETCH && !res[t]) {
					res[t] = true;
					cur += s->tensors[t].bytes;
				} else if (ops[j].op == HYPER_OP_DETACH && res[t]) {
					res[t] = false;
					cur -= s->tensors[t].bytes;
				}
				if (cur > m)
					m = cur;
			}
		}
		peak[k] = m;
	}
	free(res);
}

int hx_early_reset(struct hyper_ctx *ctx)
{
	const struct hyper_schedule *s = ctx->sched;
	size_t n = s->nr_steps ?: 1;

	if (!(ctx->flags & HYPER_OPEN_EARLY_PREFETCH))
		return 0;
	if (!ctx->step_peak) {
		size_t nb = 0;

		ctx->step_peak = calloc(n, sizeof(*ctx->step_peak));
		ctx->early_extra = calloc(n, sizeof(*ctx->early_extra));
		ctx->pre_first = calloc(n, sizeof(*ctx->pre_first));
		if (ctx->pre_first)
			for (uint32_t k = 0; k < s->nr_steps; k++) {
				ctx->pre_first[k] = nb;
				nb += s->steps[k].nr_before;
			}
		ctx->pre_peak = calloc(nb ?: 1, sizeof(*ctx->pre_peak));
		if (!ctx->step_peak || !ctx->early_extra || !ctx->pre_first ||
		    !ctx->pre_peak) {
			hx_early_fini(ctx);
			return hx_err(ctx, -ENOMEM, "out of memory for early prefetches");
		}
		plan_peaks(s, ctx->step_peak, ctx->pre_peak, ctx->pre_first);
	}
	for (size_t k = 0; k < n; k++)
		ctx->early_extra[k] = 0;
	/* The look-ahead learned so far is kept: the machine is the same. */
	return 0;
}

void hx_early_fini(struct hyper_ctx *ctx)
{
	free(ctx->step_peak);
	free(ctx->early_extra);
	free(ctx->pre_peak);
	free(ctx->pre_first);
	ctx->step_peak = NULL;
	ctx->early_extra = NULL;
	ctx->pre_peak = NULL;
	ctx->pre_first = NULL;
}

/* What the window does to one tensor before the point being looked at. */
struct win_t {
	uint32_t t;
	bool resident;
	uint32_t begins;	/* residencies it starts in the window */
};

struct win {
	struct win_t v[HX_EARLY_WIN];
	uint32_t n;
	/* residencies the plan starts in the window: tensor, its index */
	struct { uint32_t t, idx; } beg[HX_EARLY_WIN];
	uint32_t nbeg;
	bool full;
};

static struct win_t *win_get(struct win *w, const struct hyper_ctx *ctx,
			     uint32_t t)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (w->v[i].t == t)
			return &w->v[i];
	if (w->n == HX_EARLY_WIN) {
		w->full = true;
		return NULL;
	}
	w->v[w->n] = (struct win_t){ t, ctx->t[t].resident, 0 };
	return &w->v[w->n++];
}

static void win_begin(struct win *w, const struct hyper_ctx *ctx,
		      struct win_t *e)
{
	if (w->nbeg == HX_EARLY_WIN) {
		w->full = true;
		return;
	}
	w->beg[w->nbeg].t = e->t;
	w->beg[w->nbeg++].idx = ctx->t[e->t].res_next + e->begins++;
	e->resident = true;
}

static void win_op(struct win *w, const struct hyper_ctx *ctx,
		   const struct hyper_cop *c)
{
	struct win_t *e = win_get(w, ctx, c->tensor);

	if (!e)
		return;
	if (c->op == HYPER_OP_PREFETCH && !e->resident)
		win_begin(w, ctx, e);
	else if (c->op == HYPER_OP_DETACH)
		e->resident = false;
}

static void win_step(struct win *w, const struct hyper_ctx *ctx,
		     const struct hs_step *st)
{
	for (uint32_t j = 0; j < st->nr_uses; j++)
		win_get(w, ctx, st->uses[j]);
	for (uint32_t j = 0; j < st->nr_defines; j++) {
		struct win_t *e = win_get(w, ctx, st->defines[j]);

		if (e && !e->resident)
			win_begin(w, ctx, e);
	}
	for (uint32_t j = 0; j < st->nr_after; j++)
		win_op(w, ctx, &st->after[j]);
}

static bool touched(const struct win *w, uint32_t t)
{
	for (uint32_t i = 0; i < w->n; i++)
		if (w->v[i].t == t)
			return true;
	return false;
}

static uint64_t res_off(const struct hyper_schedule *s, uint32_t t,
			uint32_t idx)
{
	return s->res_off[s->tensors[t].res_first + idx];
}

/* Would [off, off + bytes) hold a residency the window starts before? */
static bool overlaps(const struct hyper_ctx *ctx, const struct win *w,
		     uint64_t off, uint64_t bytes)
{
	const struct hyper_schedule *s = ctx->sched;

	for (uint32_t i = 0; i < w->nbeg; i++) {
		uint32_t t = w->beg[i].t;
		uint64_t o = res_off(s, t, w->beg[i].idx);
		uint64_t b = hx_range_round(&ctx->arena, s->tensors[t].bytes);

		if (o < off + hx_range_round(&ctx->arena, bytes) && off < o + b)
			return true;
	}
	return false;
}

/*
 * Steps cur..j-1, and step j up to its before op @k (the prefetch), stay
 * within the budget with @bytes more resident.  Step j's peak may come
 * before the prefetch (other prefetches ahead of a detach), and the
 * tensor is then resident at it; after the prefetch the plan counts it.
 * early_extra[j] may hold bytes extra only early in step j: counting
 * them at every point of it is conservative, never over the budget.
 */
static bool within_budget(const struct hyper_ctx *ctx, uint32_t j,
			  uint32_t k, uint64_t bytes)
{
	const struct hyper_schedule *s = ctx->sched;
	uint64_t cap = s->flags & HYPER_SCHED_BUDGET ? s->budget : s->peak;

	for (uint32_t i = ctx->cur; i < j; i++)
		if (ctx->step_peak[i] + ctx->early_extra[i] + bytes > cap)
			return false;
	return ctx->pre_peak[ctx->pre_first[j] + k] + ctx->early_extra[j] +
	       bytes <= cap;
}

/* Try to issue now the prefetch of tensor @ti, before op @k of step @j. */
static int try_early(struct hyper_ctx *ctx, const struct win *w, uint32_t j,
		     uint32_t k, uint32_t ti)
{
	const struct hyper_schedule *s = ctx->sched;
	const struct hx_tensor *t = &ctx->t[ti];
	uint64_t bytes = s->tensors[ti].bytes;
	int ret;

	if (t->resident || t->early || t->explicit_dev || touched(w, ti) ||
	    !within_budget(ctx, j, k, bytes) ||
	    overlaps(ctx, w, res_off(s, ti, t->res_next), bytes))
		return 0;
	ret = hx_prefetch_now(ctx, ti);
	if (ret == -EAGAIN)
		return 0;
	/* Extra from now through step j's prefetch point (all of j, safely). */
	for (uint32_t i = ctx->cur; i <= j; i++)
		ctx->early_extra[i] += bytes;
	return ret;
}

/* Called as step ctx->cur's operator is about to run. */
int hx_early_issue(struct hyper_ctx *ctx)
{
	const struct hyper_schedule *s = ctx->sched;
	struct win *w;
	uint32_t last;
	int ret = 0;

	/*
	 * A deferred prefetch (exec.c) has not taken its place yet: an early
	 * one could take it first.  None go early until those are placed.
	 */
	if (!ctx->early_ahead || !ctx->step_peak || !s->res_off || ctx->nr_defer ||
	    !ctx->has_arena || !s->arena_bytes || ctx->arena.size < s->arena_bytes)
		return 0;
	last = ctx->cur + ctx->early_ahead;
	if (last >= s->nr_steps)
		last = s->nr_steps - 1;
	w = malloc(sizeof(*w));
	if (!w)
		return 0;	/* an optimisation: skip it, never fail for it */
	w->n = w->nbeg = 0;
	w->full = false;
	/* The rest of this step: what its operator reads and writes, after. */
	win_step(w, ctx, &s->steps[ctx->cur]);
	for (uint32_t j = ctx->cur + 1; j <= last && !w->full && !ret; j++) {
		const struct hs_step *st = &s->steps[j];

		for (uint32_t k = 0; k < st->nr_before && !w->full && !ret; k++) {
			const struct hyper_cop *c = &st->before[k];

			if (c->op == HYPER_OP_PREFETCH)
				ret = try_early(ctx, w, j, k, c->tensor);
			win_op(w, ctx, c);
		}
		win_step(w, ctx, st);
	}
	free(w);
	return ret;
}
