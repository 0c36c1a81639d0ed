// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Time is in ns.  A transfer occupies its stream for latency + bytes/bw;
 * device memory is taken when a prefetch is issued or an operator defines
 * a tensor, and given back at a detach, or when the store in flight for a
 * detached tensor completes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/residency.h>

#include "lib/heap.h"
#include "sim/sim.h"

struct sim {
	const struct sched *s;
	const struct graph *g;
	const struct profile *p;
	const struct sim_hooks *h;
	struct sim_result *r;
	struct hp_err *e;
	struct hp_mem *hm;	/* the plan's allocations */
	uint8_t *st;		/* residency state, <hyper/residency.h> */
	double *fetch_done, *store_done;
	struct heap pend;	/* detached tensors by store completion */
	double now, h2d_free, d2h_free;
	double compute_all;	/* give_up: the whole run's compute */
	uint64_t mem;
	uint32_t step;
	uint32_t emitted;	/* s->emit: the steps whose slots are there */
	bool emit_failed;
};

/* Steps a schedule still being emitted is emitted ahead of the run. */
#define EMIT_AHEAD	64

static void mem_set(struct sim *m, double at, int64_t delta)
{
	m->mem += delta;
	if (m->mem > m->r->peak)
		m->r->peak = m->mem;
	if (m->h && m->h->mem)
		m->h->mem(m->h->ctx, at, m->mem);
}

static void free_done(struct sim *m)
{
	while (m->pend.n && heap_top(&m->pend).key <= m->now) {
		struct heap_item x = hyper_plan__heap_pop(&m->pend);

		mem_set(m, x.key, -(int64_t)m->g->t[x.val].bytes);
	}
}

/* The host blocks until @until: that is stall. */
static void wait_until(struct sim *m, double until)
{
	if (until > m->now) {
		m->r->stall_ns += until - m->now;
		m->now = until;
	}
	free_done(m);
}

static int fail(struct sim *m, uint32_t t, uint32_t event, int why)
{
	const char *op = m->g->op[m->s->order[m->step]].id;

	if (event == HYPER_RES_USE)
		return hyper_plan__errf(m->e, "step %u (%s): tensor \"%s\" used while not resident",
			       m->step, op, m->g->t[t].id);
	return hyper_plan__errf(m->e, "step %u (%s): %s of tensor \"%s\" %s", m->step,
		       op, hyper_residency_event_name(event), m->g->t[t].id,
		       hyper_residency_reason(why));
}

static int alloc(struct sim *m, uint32_t t)
{
	uint64_t b = m->g->t[t].bytes, budget = m->s->budget;

	while (budget && m->mem + b > budget && m->pend.n)
		wait_until(m, heap_top(&m->pend).key);
	if (budget && m->mem + b > budget)
		return hyper_plan__errf(m->e, "step %u (%s): device residency would exceed the budget (tensor \"%s\")",
			       m->step, m->g->op[m->s->order[m->step]].id,
			       m->g->t[t].id);
	mem_set(m, m->now, b);
	return 0;
}

static void stream(struct sim *m, uint32_t t, int store)
{
	double b = m->g->t[t].bytes, *free_at = store ? &m->d2h_free :
						&m->h2d_free;
	double start = *free_at > m->now ? *free_at : m->now;
	double end = start + (store ? d2h_ns(m->p, b) : h2d_ns(m->p, b));

	*free_at = end;
	if (store) {
		m->store_done[t] = end;
		m->r->d2h_bytes += b;
	} else {
		m->fetch_done[t] = end;
		m->r->h2d_bytes += b;
	}
	if (m->h && m->h->xfer)
		m->h->xfer(m->h->ctx, t, store, start, end);
}

/* The rules are <hyper/residency.h>'s; this adds time and memory. */
static int cache_op(struct sim *m, const struct cop *c)
{
	uint32_t t = c->t;
	int why = hyper_residency_check(m->st[t], c->kind);

	if (why)
		return fail(m, t, c->kind, why);
	switch (c->kind) {
	case HYPER_OP_PREFETCH:
		wait_until(m, m->store_done[t]);
		if (alloc(m, t))
			return -1;
		stream(m, t, 0);
		break;
	case HYPER_OP_STORE:
		wait_until(m, m->fetch_done[t]);
		stream(m, t, 1);
		break;
	default:
		if (m->store_done[t] > m->now) {
			if (hyper_plan__heap_push(&m->pend, m->store_done[t], t, m->hm))
				return hyper_plan__nomem(m->e);
		} else {
			mem_set(m, m->now, -(int64_t)m->g->t[t].bytes);
		}
		break;
	}
	m->st[t] = hyper_residency_next(m->st[t], c->kind);
	return 0;
}

static int slot(struct sim *m, size_t sl)
{
	size_t i;

	int ret;

	for (i = m->s->slot_off[sl]; i < m->s->slot_off[sl + 1]; i++) {
		ret = cache_op(m, &m->s->cops[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int run_step(struct sim *m, uint32_t k)
{
	const struct op *o = &m->g->op[m->s->order[k]];
	double ready = m->now, start;
	uint32_t i, t;

	int ret;

	m->step = k;
	if (m->s->emit && k >= m->emitted) {
		m->emitted = k + EMIT_AHEAD;
		ret = hyper_plan__sched_emit(m->s, m->emitted, m->e);
		if (ret) {
			m->emit_failed = ret != -ENOMEM;
			return ret;
		}
	}
	free_done(m);
	ret = slot(m, 2 * k);
	if (ret)
		return ret;
	for (i = 0; i < o->n_in; i++) {
		t = op_in(m->g, o)[i];
		if (hyper_residency_check(m->st[t], HYPER_RES_USE))
			return fail(m, t, HYPER_RES_USE, 0);
		if (m->fetch_done[t] > ready)
			ready = m->fetch_done[t];
	}
	wait_until(m, ready);
	for (i = 0; i < o->n_out; i++) {
		t = op_out(m->g, o)[i];
		wait_until(m, m->store_done[t]);
		if (!(m->st[t] & HYPER_RES_DEVICE) && alloc(m, t))
			return -1;
		m->st[t] = hyper_residency_next(m->st[t], HYPER_RES_DEFINE);
	}
	start = m->now;
	m->now += o->compute_ns;
	m->r->compute_ns += o->compute_ns;
	if (m->h && m->h->compute)
		m->h->compute(m->h->ctx, k, start, m->now);
	free_done(m);
	return slot(m, 2 * k + 1);
}

/*
 * Whether the goal of @m->h is out of reach already.  The run ends no
 * earlier than the compute stream's clock and either link's, and its
 * compute is summed in the order run_step() sums it, so the slowdown
 * tested here is never above the one the run would end with.
 *
 * Nor does it end before the compute still to come has run after the
 * compute clock, one step after another: a stall of more than the
 * slowdown allowed is out of reach at the step it happens, not only
 * once the clock has run past the goal near the end.  That compute is
 * the whole run's less the steps run, both summed in the same order,
 * so it is off by a few ulps a step at most; hyper_plan__sim_beyond()'s
 * margin of 1e-6 covers that many times over, and a run within it
 * goes on to the test above.
 */
static bool out_of_reach(const struct sim *m)
{
	struct sim_result end = { .compute_ns = m->compute_all };

	if (m->h->max_peak && m->r->peak > m->h->max_peak)
		return true;
	end.makespan_ns = m->now > m->h2d_free ? m->now : m->h2d_free;
	if (m->d2h_free > end.makespan_ns)
		end.makespan_ns = m->d2h_free;
	if (slowdown(&end) > m->h->max_slow + 1e-12)
		return true;
	return hyper_plan__sim_beyond(m->now + (m->compute_all -
						m->r->compute_ns),
				      m->compute_all, m->h->max_slow);
}

static int sim_init(struct sim *m, const struct sched *s)
{
	const struct graph *g = s->g;
	size_t t;

	if (m->h && m->h->give_up)
		for (t = 0; t < s->n; t++)
			m->compute_all += g->op[s->order[t]].compute_ns;

	m->st = hyper_plan__array(m->hm, g->nt, 1);	/* set below */
	m->fetch_done = hyper_plan__calloc(m->hm, g->nt, sizeof(double));
	m->store_done = hyper_plan__calloc(m->hm, g->nt, sizeof(double));
	/* a tensor waits in pend once at a time: a prefetch waits for it */
	if (!m->st || !m->fetch_done || !m->store_done ||
	    hyper_plan__heap_reserve(&m->pend, g->nt, m->hm))
		return hyper_plan__nomem(m->e);
	for (t = 0; t < g->nt; t++) {
		m->st[t] = hyper_residency_start(s->home[t]);
		if (m->st[t] & HYPER_RES_DEVICE)
			mem_set(m, 0, g->t[t].bytes);
	}
	return 0;
}

int hyper_plan__simulate(const struct sched *s, const struct profile *p,
	     const struct sim_hooks *hooks, struct sim_result *r,
	     struct hp_mem *mem, struct hp_err *e)
{
	struct sim m = { .s = s, .g = s->g, .p = p, .h = hooks, .r = r,
			 .e = e, .hm = mem };
	uint32_t k;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = sim_init(&m, s);
	if (!ret && s->budget && m.mem > s->budget)
		ret = hyper_plan__errf(e, "schedule start: tensors whose home is \"device\" exceed the budget");
	for (k = 0; k < s->n && !ret; k++) {
		ret = run_step(&m, k);
		if (!ret && hooks && hooks->give_up && out_of_reach(&m)) {
			hyper_plan__errf(e, "step %u (%s): the goal is out of reach, simulation stopped",
					 k, m.g->op[s->order[k]].id);
			ret = 1;
		}
	}
	m.now = m.now > m.h2d_free ? m.now : m.h2d_free;
	r->makespan_ns = m.now > m.d2h_free ? m.now : m.d2h_free;
	free(m.st);
	free(m.fetch_done);
	free(m.store_done);
	hyper_plan__heap_free(&m.pend);
	if (m.emit_failed)
		return -EINVAL;
	return ret == -ENOMEM || ret == 1 ? ret : ret ? -1 : 0;
}

/*
 * The pool->device link serves prefetches one at a time, in the order
 * they are issued, and a prefetch in step k's "before" list is issued
 * no earlier than the step starts, which is no earlier than t0[k] (the
 * compute clock only gains stall).  So the link is busy at least until
 * the end of the same queue with every prefetch issued at t0 of its
 * step: a floor on the run's makespan that the evictions alone give,
 * before anything is emitted.
 */
int hyper_plan__sim_fetch_floor(const struct life *lf, const struct profile *p,
				const struct evict *ev, size_t nev,
				struct hp_mem *mem, double *floor_ns)
{
	double *busy, end = 0;
	uint32_t k;
	size_t i;

	*floor_ns = 0;
	if (!nev)
		return 0;
	busy = hyper_plan__calloc(mem, lf->n, sizeof(*busy));
	if (!busy)
		return -ENOMEM;
	for (i = 0; i < nev; i++)
		if (ev[i].j < (int32_t)lf->n)	/* fetched back: a prefetch */
			busy[ev[i].fetch_step] +=
				h2d_ns(p, lf->g->t[ev[i].t].bytes);
	for (k = 0; k < lf->n; k++)
		if (busy[k] > 0)
			end = hyper_plan__sim_floor_step(end, lf->t0[k], busy[k]);
	free(busy);
	*floor_ns = end;
	return 0;
}

bool hyper_plan__sim_beyond(double floor_ns, double compute_ns,
			    double max_slow)
{
	/*
	 * The floor sums in another order than the run's clocks: rounding
	 * may put it a few ulps per transfer above the makespan, which 1e-6
	 * covers many times over; only a floor clearly beyond the goal says
	 * the run would miss it.
	 */
	return compute_ns > 0 &&
	       floor_ns * (1 - 1e-6) > (1 + max_slow + 1e-9) * compute_ns;
}

