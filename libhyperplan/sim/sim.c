// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Time is in ns.  A transfer occupies its stream for latency + bytes/bw;
 * device memory is taken when a prefetch is issued or an operator defines
 * a tensor, and given back at a detach, or when the store in flight for a
 * detached tensor completes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/residency.h>

#include "lib/heap.h"
#include "util/huge.h"
#include "sim/sim.h"

struct sim {
	const struct sched *s;
	const struct graph *g;
	const struct tensor *t;		/* g->t */
	const struct op *op;		/* g->op */
	const uint32_t *order;		/* s->order */
	const uint32_t *slot_off;	/* s->slot_off */
	const struct cop *cops;		/* s->cops, again after each emission */
	const struct profile *p;
	const struct sim_hooks *h;	/* NULL: none */
	struct sim_result *r;
	struct hp_err *e;
	struct hp_mem *hm;	/* the plan's allocations */
	uint8_t *st;		/* residency state, <hyper/residency.h> */
	struct hp_sim_xend *end;
	struct heap pend;	/* detached tensors by store completion */
	/*
	 * Runs without hooks: the detached tensors whose stores end no
	 * earlier than the last one's, in the order they were detached
	 * (pend_push()), a ring of fq_cap from fq_head up to fq_tail (the
	 * next one's place), fq_last the end of the last one queued; NULL:
	 * none, every one in pend.  pend_at: the first end of either,
	 * HUGE_VAL if none.
	 */
	struct heap_item *fq;
	size_t fq_cap, fq_head, fq_tail, fq_n;
	double fq_last;
	double pend_at;
	double now, h2d_free, d2h_free;
	double stall, compute;	/* r's, written to it at the end */
	double compute_all;	/* give_up: the whole run's compute */
	double slow_at, beyond_at;	/* give_up: out_of_reach()'s bounds */
	uint64_t peak_lim;	/* give_up: m->h's max_peak, none the most */
	uint64_t mem, peak, budget;
	uint32_t step;
	uint32_t emitted;	/* s->emit: the steps whose slots are there */
	/* quiet_steps(): the life's tables (NULL: none) */
	const struct hp_simq *q;
	const uint8_t *q_new;
	const uint32_t *mine;	/* with q: the tracked tensors, nmine */
	size_t nmine;
	const uint32_t *bs;	/* hyper_plan__sched_busy(), nbs of them */
	size_t nbs, bx;		/* bx: the first not below the step */
	uint32_t busy;		/* the first step not quiet, as last asked */
	bool give_up;
	bool hooked;		/* h has a callback: the search's have none */
	bool emit_failed;
};

/*
 * A step of a life's order with nothing offloaded (struct hp_simbuf):
 * its compute as the clock adds it, the bytes its defines allocate and
 * its dead detaches free, and whether each of its defines allocates,
 * q_new[out + i] for its i-th output.
 */
struct hp_simq {
	double c;
	uint64_t def, free;
	uint32_t out;
};

/* Steps a schedule still being emitted is emitted ahead of the run. */
#define EMIT_AHEAD	64

/*
 * A bit of st[t] above <hyper/residency.h>'s, which its transitions keep:
 * t was streamed in this run, so its ends (end[t]) are this run's, both
 * set at its first transfer (stream()).  A tensor without it has both
 * ends zero to the run, which reads neither: the waits on them are no
 * waits, and a use is ready as early as the step.  So end[] holds what
 * earlier runs left there and is never zeroed: most tensors of a probe
 * are never moved, and their ends are scattered over the graph's size.
 */
#define ST_XFER		(1U << 7)
_Static_assert(!(ST_XFER & (HYPER_RES_DEVICE | HYPER_RES_POOL |
			    HYPER_RES_DETACHED)),
	       "ST_XFER is a residency bit");

/*
 * Another, in a run that takes quiet steps in bulk (m->q): t is one of
 * the tensors the emitter tracks (hyper_plan__sched_tracked()), the only
 * ones whose states the run keeps.  Every other tensor's st is zero and
 * stays so: it follows its transitions with nothing offloaded, which
 * break no rule, and is never streamed, so each of its uses is resident
 * and ready at the step, each define allocates where the life's replay
 * allocates (q_new), and its cache ops are its dead gaps' detaches,
 * which free it at once.  Quiet steps then write no state, and a run
 * sets and clears the tracked tensors' alone (init_tracked()).  A
 * tracked state may be zero itself (before a first define): the bit
 * tells them apart.
 */
#define ST_MINE		(1U << 6)
_Static_assert(!(ST_MINE & (ST_XFER | HYPER_RES_DEVICE | HYPER_RES_POOL |
			    HYPER_RES_DETACHED)),
	       "ST_MINE is a residency bit");

/*
 * The peak is kept here and written to the result at the end: the hot
 * loop then reads no pointer to test it.  Memory only grows through
 * mem_add(); mem_sub() gives back what a tensor took, so it cannot pass
 * the peak.
 */
static inline void mem_add(struct sim *m, double at, uint64_t b, bool hooked)
{
	m->mem += b;
	if (m->mem > m->peak)
		m->peak = m->mem;
	if (hooked && m->h->mem)
		m->h->mem(m->h->ctx, at, m->mem);
}

static inline void mem_sub(struct sim *m, double at, uint64_t b, bool hooked)
{
	m->mem -= b;
	if (hooked && m->h->mem)
		m->h->mem(m->h->ctx, at, m->mem);
}

/* The first end of a store a detached tensor waits for: HUGE_VAL if none. */
static inline double pend_first(const struct sim *m)
{
	double at = m->fq_n ? m->fq[m->fq_head].key : HUGE_VAL;

	if (m->pend.n && heap_top(&m->pend).key < at)
		at = heap_top(&m->pend).key;
	return at;
}

/*
 * Detached tensor @t waits for its store, which ends at @at.  The
 * device-to-pool link takes its stores one after another, so their
 * ends only grow in the order they were issued, and the tensors are
 * mostly detached in that order too: those whose ends do not fall
 * below the last one queued go to the ring, in order, in O(1) and
 * without the heap's sifts (a deep heap, many stores in flight); the
 * others to the heap.  Both together hold what the heap alone held,
 * and free_due() frees the same tensors at the same clock: a run
 * without hooks frees them in another order among those due at once,
 * which changes no sum (memory is integers, and a free moves no peak).
 * A run with hooks, which tells each free, has no ring: the heap's
 * order.  Room for every tensor is in both (sim_bufs()).
 */
static inline int pend_push(struct sim *m, double at, uint32_t t)
{
	if (m->fq && (!m->fq_n || at >= m->fq_last)) {
		m->fq[m->fq_tail] = (struct heap_item){ at, t };
		if (++m->fq_tail == m->fq_cap)
			m->fq_tail = 0;
		m->fq_n++;
		m->fq_last = at;
	} else if (hyper_plan__heap_push(&m->pend, at, t, m->hm)) {
		return -ENOMEM;
	}
	if (at < m->pend_at)
		m->pend_at = at;
	return 0;
}

static void free_due(struct sim *m)
{
	struct heap_item x;

	while (m->fq_n && m->fq[m->fq_head].key <= m->now) {
		x = m->fq[m->fq_head];
		m->fq_n--;
		if (++m->fq_head == m->fq_cap)
			m->fq_head = 0;
		mem_sub(m, x.key, m->t[x.val].bytes, m->hooked);
	}
	while (m->pend.n && heap_top(&m->pend).key <= m->now) {
		x = hyper_plan__heap_pop(&m->pend);
		mem_sub(m, x.key, m->t[x.val].bytes, m->hooked);
	}
	m->pend_at = pend_first(m);
}

static inline void free_done(struct sim *m)
{
	if (m->pend_at <= m->now)
		free_due(m);
}

/*
 * The host blocks until @until: that is stall.  A store frees its tensor
 * at the first wait past its end: every store pending ends after the
 * clock (one is pushed only then, and each move of the clock frees those
 * it passes), so a wait that does not move it frees none.
 */
static inline void wait_until(struct sim *m, double until)
{
	if (until > m->now) {
		m->stall += until - m->now;
		m->now = until;
		free_done(m);
	}
}

static int __attribute__((cold)) fail(struct sim *m, uint32_t t,
				      uint32_t event, int why)
{
	const char *op = m->g->op[m->s->order[m->step]].id;

	if (event == HYPER_RES_USE)
		return hyper_plan__errf(m->e, "step %u (%s): tensor \"%s\" used while not resident",
			       m->step, op, m->g->t[t].id);
	return hyper_plan__errf(m->e, "step %u (%s): %s of tensor \"%s\" %s", m->step,
		       op, hyper_residency_event_name(event), m->g->t[t].id,
		       hyper_residency_reason(why));
}

/* alloc() of a tensor that does not fit yet: it waits for stores. */
static int alloc_wait(struct sim *m, uint32_t t, uint64_t b)
{
	while (m->mem + b > m->budget && (m->pend.n || m->fq_n))
		wait_until(m, m->pend_at);
	if (m->mem + b > m->budget)
		return hyper_plan__errf(m->e, "step %u (%s): device residency would exceed the budget (tensor \"%s\")",
			       m->step, m->g->op[m->s->order[m->step]].id,
			       m->g->t[t].id);
	mem_add(m, m->now, b, m->hooked);
	return 0;
}

static inline int alloc(struct sim *m, uint32_t t, bool hooked)
{
	uint64_t b = m->t[t].bytes;

	if (m->budget && m->mem + b > m->budget)
		return alloc_wait(m, t, b);
	mem_add(m, m->now, b, hooked);
	return 0;
}

static inline void stream(struct sim *m, uint32_t t, int store,
			  bool hooked)
{
	double b = m->t[t].bytes, *free_at = store ? &m->d2h_free :
						&m->h2d_free;
	double start = *free_at > m->now ? *free_at : m->now;
	double end = start + (store ? d2h_ns(m->p, b) : h2d_ns(m->p, b));

	*free_at = end;
	if (!(m->st[t] & ST_XFER)) {
		/* its first: the other end, left by an earlier run, is zero */
		m->st[t] |= ST_XFER;
		m->end[t] = (struct hp_sim_xend){ 0, 0 };
	}
	if (store) {
		m->end[t].store = end;
		m->r->d2h_bytes += b;
	} else {
		m->end[t].fetch = end;
		m->r->h2d_bytes += b;
	}
	if (hooked && m->h->xfer)
		m->h->xfer(m->h->ctx, t, store, start, end);
}

/*
 * The rules are <hyper/residency.h>'s; this adds time and memory.  With
 * @q (a run in bulk, ST_MINE), an untracked tensor's detach frees it.
 */
static inline __attribute__((always_inline)) int
cache_op(struct sim *m, const struct cop *c, bool hooked, bool q)
{
	uint32_t t = c->t;
	uint8_t st = m->st[t];
	int why;

	if (q && !st && c->kind == HYPER_OP_DETACH) {
		mem_sub(m, m->now, m->t[t].bytes, hooked);
		return 0;
	}
	why = hyper_residency_check(st, c->kind);
	if (why)
		return fail(m, t, c->kind, why);
	switch (c->kind) {
	case HYPER_OP_PREFETCH:
		if (st & ST_XFER)
			wait_until(m, m->end[t].store);
		if (alloc(m, t, hooked))
			return -1;
		stream(m, t, 0, hooked);
		break;
	case HYPER_OP_STORE:
		if (st & ST_XFER)
			wait_until(m, m->end[t].fetch);
		stream(m, t, 1, hooked);
		break;
	default:
		if ((st & ST_XFER) && m->end[t].store > m->now) {
			if (pend_push(m, m->end[t].store, t))
				return hyper_plan__nomem(m->e);
		} else {
			mem_sub(m, m->now, m->t[t].bytes, hooked);
		}
		break;
	}
	m->st[t] = hyper_residency_next(m->st[t], c->kind);
	return 0;
}

static inline __attribute__((always_inline)) int
slot(struct sim *m, size_t sl, bool hooked, bool q)
{
	/* ends in locals: cache_op() stores a byte, which may alias them */
	const struct cop *c = m->cops + m->slot_off[sl];
	const struct cop *end = m->cops + m->slot_off[sl + 1];
	int ret;

	for (; c < end; c++) {
		ret = cache_op(m, c, hooked, q);
		if (ret)
			return ret;
	}
	return 0;
}

/* One step; with @q, untracked tensors as ST_MINE says. */
static inline __attribute__((always_inline)) int
run_step(struct sim *m, uint32_t k, bool hooked, bool q)
{
	const struct op *o = &m->op[m->order[k]];
	const uint32_t *ref;
	const uint8_t *q_new;
	double ready = m->now, start;
	uint32_t i, t, n_out;
	uint8_t st, *sts;
	int ret;

	m->step = k;
	/* no store is due: the last step ended with its clock's frees */
	ret = slot(m, 2 * k, hooked, q);
	if (ret)
		return ret;
	ref = op_in(m->g, o);
	for (i = 0; i < o->n_in; i++) {
		t = ref[i];
		st = m->st[t];
		/* in bulk most are untracked: that test first */
		if ((q && !st) ||
		    (st & (HYPER_RES_DEVICE | ST_XFER)) == HYPER_RES_DEVICE)
			continue;	/* resident, its fetch end zero */
		if (hyper_residency_check(st, HYPER_RES_USE))
			return fail(m, t, HYPER_RES_USE, 0);
		if (m->end[t].fetch > ready)
			ready = m->end[t].fetch;
	}
	wait_until(m, ready);
	/*
	 * The outputs' count, the states and the step's allocation bytes
	 * in locals: a state stored is a byte, which may alias anything
	 * read through a pointer, and none of them moves during the step.
	 */
	ref = op_out(m->g, o);
	n_out = o->n_out;
	sts = m->st;
	q_new = q ? m->q_new + m->q[k].out : NULL;
	for (i = 0; i < n_out; i++) {
		t = ref[i];
		st = sts[t];
		if (q && !st) {
			if (q_new[i] && alloc(m, t, hooked))
				return -1;
			continue;
		}
		if (st & ST_XFER)
			wait_until(m, m->end[t].store);
		if (!(st & HYPER_RES_DEVICE) && alloc(m, t, hooked))
			return -1;
		sts[t] = hyper_residency_next(st, HYPER_RES_DEFINE);
	}
	start = m->now;
	m->now += o->compute_ns;
	m->compute += o->compute_ns;
	if (hooked && m->h->compute)
		m->h->compute(m->h->ctx, k, start, m->now);
	free_done(m);
	return slot(m, 2 * k + 1, hooked, q);
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
 * so it is off by a few ulps a step at most; the beyond test's margin
 * of 1e-6 covers that many times over, and a run within it goes on to
 * the test above.
 *
 * Both tests are sim.h's, slowdown()'s and hyper_plan__sim_beyond()'s,
 * each a function of one double that never falls as it grows (IEEE
 * arithmetic rounds monotonically), held against limits that do not
 * change during the run: each is worked out once as the least double
 * that passes it (hyper_plan__sim_reach_at()), so that a step compares
 * and neither divides nor multiplies.  The same answers.
 */
static inline bool out_of_reach_at(const struct sim *m, double now,
				   double compute, uint64_t peak)
{
	double makespan;

	if (peak > m->peak_lim)
		return true;
	makespan = now > m->h2d_free ? now : m->h2d_free;
	if (m->d2h_free > makespan)
		makespan = m->d2h_free;
	if (makespan >= m->slow_at)
		return true;
	return now + (m->compute_all - compute) >= m->beyond_at;
}

static inline bool out_of_reach(const struct sim *m)
{
	return out_of_reach_at(m, m->now, m->compute, m->peak);
}

static int __attribute__((cold)) gave_up(struct sim *m, uint32_t k)
{
	hyper_plan__errf(m->e, "step %u (%s): the goal is out of reach, simulation stopped",
			 k, m->op[m->order[k]].id);
	return 1;
}

/*
 * Steps from *@k up to @hi that are quiet (hyper_plan__sched_quiet_until()):
 * no cache op in their "before" slots, only dead detaches of untracked
 * tensors in their "after" slots, and every tensor they use or define
 * untracked.  Such a tensor follows its transitions with nothing
 * offloaded and was never streamed (ST_XFER clear), so run_step() finds
 * each use resident and ready at the step's start, waits for nothing,
 * allocates each define the life's replay allocates and frees each dead
 * detach at once, and its state is not kept (ST_MINE): all of it is
 * in the tables, which give the same sums in the same order (memory is
 * integers, so the defines' bytes summed first reach the same peak; the
 * clock and the compute add the same doubles one step at a time).  The
 * stores pending free at the same clock, and the give-up test is asked
 * after every step.  A step whose defines would pass the budget would
 * wait in alloc_wait(): the run stops before it, *@k, for run_step().
 * 0, or 1 given up.
 */
static inline __attribute__((always_inline)) int
quiet_steps(struct sim *m, uint32_t *k, uint32_t hi, bool give_up)
{
	const struct hp_simq *q = m->q;
	double now = m->now, compute = m->compute;
	uint64_t mem = m->mem, peak = m->peak, budget = m->budget;
	uint32_t j = *k;
	int ret = 0;

	for (; j < hi; j++) {
		if (budget && mem + q[j].def > budget)
			break;
		mem += q[j].def;
		if (mem > peak)
			peak = mem;
		now += q[j].c;
		compute += q[j].c;
		if (m->pend_at <= now) {
			m->mem = mem;
			m->now = now;
			free_due(m);
			mem = m->mem;
		}
		mem -= q[j].free;
		if (give_up && out_of_reach_at(m, now, compute, peak)) {
			ret = gave_up(m, j);
			break;
		}
	}
	m->now = now;
	m->compute = compute;
	m->mem = mem;
	m->peak = peak;
	*k = j;
	return ret;
}

/*
 * hyper_plan__sched_quiet_until(@m->s, @k), from its list of busy steps
 * walked here (@k only grows in a run): a call at every busy step cost
 * more than the walk.  @k where the emission is over, as it says.
 */
static inline uint32_t quiet_until(struct sim *m, uint32_t k)
{
	if (!m->s->emit)
		return k;
	return hyper_plan__busy_from(m->bs, m->nbs, &m->bx, k, m->s->n);
}

/*
 * The steps from @k to @hi, whose slots are there: with @give_up a
 * constant, the loop tests neither it nor the emission at each step;
 * with @hooked (m->hooked) a constant false, no step, transfer or
 * change of memory tests the hooks (the searches' runs have none);
 * with @q (m->q, never with hooks), quiet steps go in bulk.
 */
static inline __attribute__((always_inline)) int
run_steps(struct sim *m, uint32_t k, uint32_t hi, bool give_up,
	  bool hooked, bool q)
{
	int ret;

	while (k < hi) {
		if (q && k >= m->busy)
			m->busy = quiet_until(m, k);
		if (q && k < m->busy) {
			ret = quiet_steps(m, &k, m->busy < hi ? m->busy : hi,
					  give_up);
			if (ret)
				return ret;
			if (k == hi || k == m->busy)
				continue;
			/* its defines pass the budget: the usual way */
		}
		ret = run_step(m, k, hooked, q);
		if (ret)
			return ret;
		if (give_up && out_of_reach(m))
			return gave_up(m, k);
		k++;
	}
	return 0;
}

/*
 * Emits @m->s a few steps ahead of step @k, where the run is: 0, or
 * the emission's error, said in @m->e.
 */
static int emit_ahead(struct sim *m, uint32_t k)
{
	int ret;

	m->step = k;
	m->emitted = k + EMIT_AHEAD;
	ret = hyper_plan__sched_emit(m->s, m->emitted, m->e);
	m->cops = m->s->cops;	/* grown: it may have moved */
	if (ret)
		m->emit_failed = ret != -ENOMEM;
	return ret;
}

/* Doubles in their order as integers, and back: -0 and 0 are both 0. */
static int64_t dbl_key(double x)
{
	int64_t b;

	memcpy(&b, &x, sizeof(b));
	return b >= 0 ? b : -(b & INT64_MAX);
}

static double key_dbl(int64_t k)
{
	uint64_t b = k >= 0 ? (uint64_t)k : (uint64_t)-k | (1ULL << 63);
	double x;

	memcpy(&x, &b, sizeof(x));
	return x;
}

/*
 * A test out_of_reach() makes of one double x, whose answer never turns
 * from true to false as x grows: the slowdown's (@beyond false) or the
 * floor's, by sim.h's expressions with the limits worked out as
 * out_of_reach_init() works them out.
 */
static bool reach_test(double compute_ns, double slow_lim, double beyond_lim,
		       bool beyond, double x)
{
	if (beyond)
		return compute_ns > 0 && hyper_plan__sim_beyond_at(x, beyond_lim);
	return hyper_plan__slowdown_of(x, compute_ns) > slow_lim;
}

/* A bisection of the doubles in their order, 64 tests at most. */
double hyper_plan__sim_reach_at(double compute_ns, double max_slow,
				bool beyond)
{
	double sl = max_slow + 1e-12,
	       bl = hyper_plan__sim_beyond_lim(compute_ns, max_slow);
	int64_t lo = dbl_key(-HUGE_VAL), hi = dbl_key(HUGE_VAL), mid;

	if (reach_test(compute_ns, sl, bl, beyond, -HUGE_VAL))
		return -HUGE_VAL;
	if (!reach_test(compute_ns, sl, bl, beyond, HUGE_VAL))
		return NAN;
	/* lo fails, hi passes; their distance overflows an int64_t */
	while ((uint64_t)hi - (uint64_t)lo > 1) {
		mid = lo + (int64_t)(((uint64_t)hi - (uint64_t)lo) / 2);
		if (reach_test(compute_ns, sl, bl, beyond, key_dbl(mid)))
			hi = mid;
		else
			lo = mid;
	}
	return key_dbl(hi);
}

static void out_of_reach_init(struct sim *m)
{
	m->slow_at = hyper_plan__sim_reach_at(m->compute_all, m->h->max_slow,
					      false);
	m->beyond_at = hyper_plan__sim_reach_at(m->compute_all,
						m->h->max_slow, true);
	/* a peak is never above the most: no zero test at each step */
	m->peak_lim = m->h->max_peak ? m->h->max_peak : UINT64_MAX;
}

/* @buf's buffers, with room for @m->g's tensors. */
static int sim_bufs(struct sim *m, struct hp_simbuf *buf)
{
	size_t nt = m->g->nt;

	if (!buf->end || !buf->st || buf->nt < nt) {
		free(buf->end);
		free(buf->st);
		buf->nt = 0;
		/* read only behind ST_XFER, set with them: never zeroed */
		buf->end = hyper_plan__array(m->hm, nt, sizeof(*buf->end));
		buf->st = hyper_plan__array(m->hm, nt, 1);
		buf->st_zero = false;
		if (!buf->end || !buf->st) {
			free(buf->end);
			free(buf->st);
			buf->end = NULL;
			buf->st = NULL;
			return -ENOMEM;
		}
		buf->nt = nt;
	}
	/* a tensor waits in pend once at a time: a prefetch waits for it */
	if (hyper_plan__heap_reserve(&buf->pend, nt, m->hm))
		return -ENOMEM;
	if (!m->hooked && hyper_plan__room(m->hm, &buf->fq, &buf->fq_cap, nt,
					   sizeof(*buf->fq)))
		return -ENOMEM;
	m->end = buf->end;
	m->st = buf->st;
	m->pend = buf->pend;
	m->pend.n = 0;
	if (!m->hooked) {
		m->fq = buf->fq;
		m->fq_cap = buf->fq_cap;
	}
	m->pend_at = HUGE_VAL;
	return 0;
}

/* A byte @x in each byte of a word. */
#define BYTES(x)	(0x0101010101010101ULL * (uint8_t)(x))

_Static_assert(HYPER_HOME_POOL == 1 && HYPER_HOME_DEVICE == 2 &&
	       HYPER_HOME_NONE == 3 && HYPER_RES_POOL == 2 &&
	       HYPER_RES_DEVICE == 1, "init_states() crosses the homes' bits");

/*
 * Each tensor's state from its home (hyper_residency_start()), eight at
 * a time: the homes the pool (1), the device (2) and none (3) start as
 * HYPER_RES_POOL (2), HYPER_RES_DEVICE (1) and nothing, the home's two
 * low bits crossed where only one is set; a word with any other byte
 * goes byte by byte.  Then the tensors the device holds take their
 * memory, in tensor order as before: few words hold one, as most of a
 * graph's tensors are defined by a step.  Every probe starts so, over
 * every tensor of the graph.
 */
static void init_states(struct sim *m, const uint8_t *home, size_t nt)
{
	uint64_t h, lo, hi, st;
	size_t t, i;

	for (t = 0; t + 8 <= nt; t += 8) {
		memcpy(&h, home + t, sizeof(h));
		if (h & BYTES(0xfc)) {
			for (i = t; i < t + 8; i++)
				m->st[i] = hyper_residency_start(home[i]);
		} else {
			lo = h & BYTES(1);
			hi = (h >> 1) & BYTES(1);
			st = ((lo & ~hi) << 1) | (hi & ~lo);
			memcpy(m->st + t, &st, sizeof(st));
			if (!(st & BYTES(HYPER_RES_DEVICE)))
				continue;
		}
		for (i = t; i < t + 8; i++)
			if (m->st[i] & HYPER_RES_DEVICE)
				mem_add(m, 0, m->t[i].bytes, m->hooked);
	}
	for (; t < nt; t++) {
		m->st[t] = hyper_residency_start(home[t]);
		if (m->st[t] & HYPER_RES_DEVICE)
			mem_add(m, 0, m->t[t].bytes, m->hooked);
	}
}

/*
 * A run in bulk's start (ST_MINE): every untracked tensor's st zero, as
 * the last such run in @b left it (else zeroed here), and each tracked
 * tensor's state from its home.  Only the tracked tensors' homes may
 * differ from the life's (the emitter keeps the evicted tensors alone
 * in the pool, sched.c's homes(), and tracks every one of them): the
 * bytes the device holds at the start are the life's sum mended there.
 * The memory only grows as init_states() takes it, so its peak is its
 * sum, the same integer in any order.  With no hooks: init_states()
 * calls them tensor by tensor.
 */
static void init_tracked(struct sim *m, struct hp_simbuf *b,
			 const uint8_t *home)
{
	const uint8_t *home0 = b->q_lf->home0;
	uint64_t mem = b->q_mem0;
	uint32_t t;
	size_t i;

	if (!b->st_zero)
		memset(m->st, 0, b->nt);
	b->st_zero = false;		/* until done_tracked() */
	for (i = 0; i < m->nmine; i++) {
		t = m->mine[i];
		m->st[t] = hyper_residency_start(home[t]) | ST_MINE;
		if (home[t] == home0[t])
			continue;
		if (hyper_residency_start(home0[t]) & HYPER_RES_DEVICE)
			mem -= m->t[t].bytes;
		if (m->st[t] & HYPER_RES_DEVICE)
			mem += m->t[t].bytes;
	}
	m->mem = mem;
	m->peak = mem;
}

/* The tracked tensors' states zero again: only they were written. */
static void done_tracked(struct sim *m, struct hp_simbuf *b)
{
	size_t i;

	for (i = 0; i < m->nmine; i++)
		m->st[m->mine[i]] = 0;
	b->st_zero = true;
}

static void quiet_free(struct hp_simbuf *b)
{
	hyper_plan__free(b->q_mem, b->q_blk);
	b->q_blk = NULL;
	b->q = NULL;
	b->q_new = NULL;
	b->q_mem0 = 0;
	b->q_lf = NULL;
}

/*
 * @lf's order replayed with nothing offloaded, as life.c's gaps() replays
 * each tensor and run_step() would run it: each step's defines, then its
 * dead gaps' detaches, into @b's tables.  Once per life and buffer, for
 * the life's next runs: O(steps + defines + dead gaps).  The tables and
 * the replay's states are one block (3.3 MB at 100k decode operators,
 * fresh at each search's first run): on huge pages, not 4 KiB ones
 * apart.  0, or -ENOMEM with @b holding none.
 */
static int quiet_tables(struct hp_simbuf *b, const struct life *lf,
			struct hp_mem *hm)
{
	const struct graph *g = lf->g;
	const struct tensor *tn = g->t;
	const struct op *ops = g->op;
	const uint32_t *order = lf->order, *dead_t = lf->dead_t;
	const size_t *dead_off = lf->dead_off;
	const uint8_t *home0 = lf->home0;
	size_t i, w = 0, nw = 0;
	struct hp_simq *q;
	uint8_t *st, *scratch, *q_new;
	uint64_t def, fr, mem0 = 0;
	uint32_t k, x, t, n = lf->n;
	struct hu_part part[] = {
		HU_PART(b->q, (size_t)lf->n + 1, false),
		HU_PART(b->q_new, 0, false),
		HU_PART(scratch, g->nt, false),
	};

	if (b->q_lf == lf && b->q_order == lf->order && b->q_n == lf->n &&
	    b->q_dead == lf->dead_t)
		return 0;
	quiet_free(b);
	for (k = 0; k < n; k++)
		nw += ops[order[k]].n_out;
	if (nw > UINT32_MAX)
		return 0;	/* none: every step the usual way */
	part[1].n = nw;
	b->q_mem = hm;
	b->q_blk = hyper_plan__block(hm, part, ARRAY_SIZE(part));
	if (!b->q_blk)
		return -ENOMEM;
	/*
	 * Everything the loops read is in locals: each byte stored (st,
	 * q_new) may alias any memory, and would reload what is read
	 * through a pointer, the tensors' sizes and the life's arrays.
	 */
	q = b->q;
	q_new = b->q_new;
	st = scratch;
	for (t = 0; t < g->nt; t++) {
		st[t] = hyper_residency_start(home0[t]);
		if (st[t] & HYPER_RES_DEVICE)
			mem0 += tn[t].bytes;
	}
	for (k = 0; k < n; k++) {
		const struct op *o = &ops[order[k]];
		const uint32_t *out = op_out(g, o);
		size_t lo = dead_off[k], hi = dead_off[k + 1];
		uint32_t n_out = o->n_out;

		def = 0;
		fr = 0;
		for (x = 0; x < n_out; x++, w++) {
			t = out[x];
			q_new[w] = !(st[t] & HYPER_RES_DEVICE);
			if (!(st[t] & HYPER_RES_DEVICE))
				def += tn[t].bytes;
			st[t] = hyper_residency_next(st[t], HYPER_RES_DEFINE);
		}
		for (i = lo; i < hi; i++) {
			t = dead_t[i];
			fr += tn[t].bytes;
			st[t] = hyper_residency_next(st[t], HYPER_RES_DETACH);
		}
		/* the double run_step() converts the compute to and adds */
		q[k] = (struct hp_simq){ .c = (double)o->compute_ns,
					 .def = def, .free = fr,
					 .out = (uint32_t)(w - n_out) };
	}
	q[n] = (struct hp_simq){ .out = (uint32_t)w };
	b->q_mem0 = mem0;
	b->q_lf = lf;
	b->q_order = lf->order;
	b->q_dead = lf->dead_t;
	b->q_n = lf->n;
	return 0;
}

/*
 * Quiet steps are taken in bulk when @s is being emitted tracking its
 * evicted tensors alone (its life known) and the run has a buffer to
 * keep the tables in and no hooks to call at each event.
 */
static int quiet_init(struct sim *m, const struct sched *s,
		      struct hp_simbuf *buf)
{
	const struct life *lf = hyper_plan__sched_life(s);
	const uint32_t *mine;
	size_t n;

	if (!lf || m->hooked || lf->g != s->g || lf->order != s->order ||
	    lf->n != s->n)
		return 0;
	if (quiet_tables(buf, lf, m->hm))
		return -ENOMEM;
	if (!buf->q)
		return 0;
	/* copied: an emission with no buffer frees its own as it ends */
	mine = hyper_plan__sched_tracked(s, &n);
	if (hyper_plan__room(m->hm, &buf->mine, &buf->mine_cap, n,
			     sizeof(*buf->mine)))
		return -ENOMEM;
	if (n)
		memcpy(buf->mine, mine, n * sizeof(*buf->mine));
	m->mine = buf->mine;
	m->nmine = n;
	m->q = buf->q;
	m->q_new = buf->q_new;
	m->bs = hyper_plan__sched_busy(s, &m->nbs);
	return 0;
}

static int sim_init(struct sim *m, const struct sched *s,
		    struct hp_simbuf *buf, bool own)
{
	const struct graph *g = s->g;
	size_t t;

	if (m->give_up) {
		const struct life *lf = m->h->lf;

		if (lf && lf->g == g && lf->order == s->order && lf->n == s->n)
			m->compute_all = lf->t0[lf->n];
		else
			for (t = 0; t < s->n; t++)
				m->compute_all += g->op[s->order[t]].compute_ns;
		out_of_reach_init(m);
	}
	if (sim_bufs(m, buf) || (!own && quiet_init(m, s, buf)))
		return hyper_plan__nomem(m->e);
	if (m->q) {	/* the life's tables are there, and no hooks */
		init_tracked(m, buf, s->home);
	} else {
		buf->st_zero = false;
		init_states(m, s->home, g->nt);
	}
	return 0;
}

/* @buf's heap handed back: a push may have moved it. */
static void sim_done(struct sim *m, struct hp_simbuf *buf)
{
	if (m->end)
		buf->pend = m->pend;
	if (m->q)
		done_tracked(m, buf);
}

void hyper_plan__simbuf_free(struct hp_simbuf *b)
{
	free(b->end);
	free(b->st);
	hyper_plan__heap_free(&b->pend);
	free(b->busy);
	free(b->fq);
	free(b->mine);
	quiet_free(b);
	hyper_plan__emitbuf_free(&b->emit);
	*b = (struct hp_simbuf){ 0 };
}

int hyper_plan__simulate_in(const struct sched *s, const struct profile *p,
			    const struct sim_hooks *hooks, struct sim_result *r,
			    struct hp_simbuf *buf, struct hp_mem *mem,
			    struct hp_err *e)
{
	struct sim m = { .s = s, .g = s->g, .t = s->g->t, .op = s->g->op,
			 .order = s->order, .slot_off = s->slot_off,
			 .cops = s->cops, .p = p, .h = hooks,
			 .r = r, .e = e, .hm = mem, .budget = s->budget,
			 .give_up = hooks && hooks->give_up,
			 .hooked = hooks && (hooks->compute || hooks->xfer ||
					     hooks->mem) };
	struct hp_simbuf own = { 0 };
	uint32_t k, hi;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = sim_init(&m, s, buf ? buf : &own, !buf);
	if (!ret && s->budget && m.mem > s->budget)
		ret = hyper_plan__errf(e, "schedule start: tensors whose home is \"device\" exceed the budget");
	for (k = 0; k < s->n && !ret; k = hi) {
		hi = s->n;
		if (s->emit) {
			ret = emit_ahead(&m, k);
			if (ret)
				break;
			hi = m.emitted < hi ? m.emitted : hi;
		}
		if (m.hooked)
			ret = run_steps(&m, k, hi, m.give_up, true, false);
		else if (m.q && m.give_up)
			ret = run_steps(&m, k, hi, true, false, true);
		else if (m.q)
			ret = run_steps(&m, k, hi, false, false, true);
		else if (m.give_up)
			ret = run_steps(&m, k, hi, true, false, false);
		else
			ret = run_steps(&m, k, hi, false, false, false);
	}
	r->stall_ns = m.stall;
	r->compute_ns = m.compute;
	m.now = m.now > m.h2d_free ? m.now : m.h2d_free;
	r->makespan_ns = m.now > m.d2h_free ? m.now : m.d2h_free;
	r->peak = m.peak;
	if (buf) {
		sim_done(&m, buf);
	} else {
		sim_done(&m, &own);	/* own's heap, whatever failed */
		hyper_plan__simbuf_free(&own);
	}
	if (m.emit_failed)
		return -EINVAL;
	return ret == -ENOMEM || ret == 1 ? ret : ret ? -1 : 0;
}

int hyper_plan__simulate(const struct sched *s, const struct profile *p,
	     const struct sim_hooks *hooks, struct sim_result *r,
	     struct hp_mem *mem, struct hp_err *e)
{
	return hyper_plan__simulate_in(s, p, hooks, r, NULL, mem, e);
}

/*
 * The floor's per-step sums, @n of them, then a bit a step (1 where a
 * sum was added to), in one block of 8-byte words: the bits after the
 * sums of however many steps the block has room for.
 */
static size_t floor_words(size_t n)
{
	return n + (n + 63) / 64;
}

static uint64_t *floor_bits(double *busy, size_t room)
{
	return (uint64_t *)(busy + room);
}

/*
 * The pool->device link serves prefetches one at a time, in the order
 * they are issued, and a prefetch in step k's "before" list is issued
 * no earlier than the step starts, which is no earlier than t0[k] (the
 * compute clock only gains stall).  So the link is busy at least until
 * the end of the same queue with every prefetch issued at t0 of its
 * step: a floor on the makespan that the evictions alone give, before
 * anything is emitted.  The steps that prefetch are found by their bits,
 * in step order, a word of 64 steps at a time: most steps of a probe
 * prefetch nothing, and a walk over every step's sum cost more than the
 * sums (at 100k decode operators, about 5 M instructions of the 9.8 M).
 * Each step met is zeroed with its bit, so a buffer is zero between
 * runs.
 */
int hyper_plan__sim_fetch_floor_in(const struct life *lf,
				   const struct profile *p,
				   const struct evict *ev, size_t nev,
				   struct hp_simbuf *buf, struct hp_mem *mem,
				   double *floor_ns)
{
	size_t i, w, room = lf->n;
	double *busy, end = 0;
	uint64_t *bits, word;
	uint32_t k;

	*floor_ns = 0;
	if (!nev)
		return 0;
	if (buf && (!buf->busy || buf->nbusy < lf->n)) {
		free(buf->busy);
		buf->nbusy = 0;
		buf->busy = hyper_plan__calloc(mem, floor_words(lf->n),
					       sizeof(*busy));
		if (!buf->busy)
			return -ENOMEM;
		buf->nbusy = lf->n;
	}
	if (buf) {
		busy = buf->busy;
		room = buf->nbusy;
	} else {
		busy = hyper_plan__calloc(mem, floor_words(lf->n),
					  sizeof(*busy));
		if (!busy)
			return -ENOMEM;
	}
	bits = floor_bits(busy, room);
	for (i = 0; i < nev; i++) {
		if (ev[i].j >= (int32_t)lf->n)
			continue;	/* not fetched back: no prefetch */
		k = ev[i].fetch_step;
		busy[k] += h2d_ns(p, lf->g->t[ev[i].t].bytes);
		bits[k / 64] |= 1ULL << (k % 64);
	}
	for (w = 0; w < ((size_t)lf->n + 63) / 64; w++) {
		if (!bits[w])
			continue;
		for (word = bits[w]; word; word &= word - 1) {
			k = (uint32_t)(w * 64 + __builtin_ctzll(word));
			if (busy[k] > 0)
				end = hyper_plan__sim_floor_step(end,
							lf->t0[k], busy[k]);
			busy[k] = 0;
		}
		bits[w] = 0;
	}
	if (!buf)
		free(busy);
	*floor_ns = end;
	return 0;
}

int hyper_plan__sim_fetch_floor(const struct life *lf, const struct profile *p,
				const struct evict *ev, size_t nev,
				struct hp_mem *mem, double *floor_ns)
{
	return hyper_plan__sim_fetch_floor_in(lf, p, ev, nev, NULL, mem,
					      floor_ns);
}
