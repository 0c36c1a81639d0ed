// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one place where offload decisions become cache operators, for the
 * planner and every baseline alike.  It replays the state machine while
 * it writes, so what it emits is valid by construction: a store is added
 * where a detach would drop the only copy of data still needed, and one
 * is dropped where the pool copy is already valid.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/residency.h>

#include "passes/sched.h"
#include "util/huge.h"
#include "util/sort.h"

/*
 * In a slot's order.  CL_DEFINE and CL_USE are a step's defines and uses
 * of an evicted tensor, only when the emitter tracks the evicted tensors
 * alone (hp_emit.mine): a step's defines come before its "after" slot's
 * operators, its uses after its "before" slot's, as replay() runs them.
 */
enum {
	CL_DEFINE, CL_STORE, CL_DETACH_LIVE, CL_DETACH_DEAD, CL_PREFETCH,
	CL_USE
};

struct item {
	uint32_t slot;
	uint8_t cls;
	uint32_t key;		/* prefetches in deadline order */
	uint32_t t;
};

struct hp_emit {
	const struct life *lf;
	struct sched *s;
	/*
	 * The items and sort_items()'s other half, cap items each: one
	 * block (it_block) where they span a huge page (items_room()).
	 */
	struct item *it;
	size_t n, cap;
	struct item *tmp;
	void *it_block;
	/*
	 * The radix sort's counters, counted as the items are made
	 * (item()): the low digit's, then hi of the high digit's, cnt_cap
	 * in all; cb the class's bits in the key (rkey()), 0 without
	 * them.
	 */
	size_t *cnt;
	size_t cnt_cap, hi;
	unsigned int cb;
	uint8_t *st;		/* residency state, <hyper/residency.h> */
	/*
	 * NULL: st holds every tensor's state.  Else the tensors the probe
	 * evicts, whose state st holds alone: every other one follows its
	 * transitions with nothing offloaded, which break no rule
	 * (life.dirty_t), so its dead detaches are emitted as they are.
	 * It is mine_all then, which is zero but for the nmine tensors of
	 * mine_t, zeroed again when the emission ends (emit_free()).
	 */
	uint8_t *mine;
	uint8_t *mine_all;
	size_t nt_cap;		/* the room in st and mine_all */
	uint32_t *mine_t;
	size_t nmine, mine_t_cap;
	/* the buffer this one is kept in between emissions; NULL: none */
	struct hp_emitbuf *buf;
	size_t cap_cops;
	struct hp_mem *mem;
	struct hp_err *e;
	uint32_t slot;		/* replay(): the next slot to emit */
	size_t x;		/* its first item */
	/*
	 * With mine: the steps with items, in order (sort_items(), in tmp,
	 * which the sort no longer needs), and the entry
	 * hyper_plan__sched_quiet_until() found last.
	 */
	const uint32_t *busy;
	size_t nbusy;
	size_t qx;
};

#define DIGIT_BITS	11
/* The class below the slot in the radix sort's keys, where they fit. */
#define CLS_BITS	3
_Static_assert(CL_USE < (1U << CLS_BITS), "a class in CLS_BITS");

/*
 * The items being made, @m's: a local copy of its fields, which the
 * counters' writes would otherwise make the compiler read again at
 * every item (a size_t may be m->n).
 */
struct items {
	struct item *it;
	size_t n;
	size_t *cnt;
	unsigned int cb;
};

/*
 * The radix sort's key: the slot, then, where @cb is not 0, the class in
 * its low @cb bits.  One key for the counts item() makes and the moves
 * by_digit() makes from them.
 */
static inline uint32_t rkey(uint32_t slot, uint8_t cls, unsigned int cb)
{
	return slot << cb | (cls & ((1U << cb) - 1));
}

/*
 * Room for every item is made before the first (hyper_plan__sched_start_in():
 * three an eviction, two an access), so none is checked for here.  Each
 * is counted in both digits of its radix_key() as it is made, while it
 * is at hand: the sort then reads the items only to move them.
 */
static inline void item(struct items *w, int64_t slot, uint8_t cls,
			uint32_t key, uint32_t t)
{
	uint32_t rk = rkey((uint32_t)slot, cls, w->cb);

	w->it[w->n++] = (struct item){ slot, cls, key, t };
	w->cnt[rk & ((1U << DIGIT_BITS) - 1)]++;
	w->cnt[(1U << DIGIT_BITS) + (rk >> DIGIT_BITS)]++;
}

static bool item_before(const struct item *a, const struct item *b)
{
	if (a->cls != b->cls)
		return a->cls < b->cls;
	if (a->key != b->key)
		return a->key < b->key;
	return a->t < b->t;
}

/*
 * The items of one slot (no two equal), util/sort.h: a slot that
 * prefetches a layer's KV blocks, or a baseline's probe that moves
 * thousands of tensors at one step, holds thousands of items.
 */
HU_DEFINE_SORT(sort_slot, struct item, item_before)

static inline uint32_t radix_key(const struct item *x, unsigned int cb)
{
	return rkey(x->slot, x->cls, cb);
}

/* @cnt's @ncnt counts made the offsets their digits start at. */
static void starts(size_t *cnt, size_t ncnt)
{
	size_t i, sum = 0, c;

	for (i = 0; i < ncnt; i++) {
		c = cnt[i];
		cnt[i] = sum;
		sum += c;
	}
}

/*
 * Stable, by one digit of the key, from the offsets in @cnt.  Inlined
 * where @cb is a constant, so that the key costs a shift.
 */
static inline __attribute__((always_inline)) void
by_digit(const struct item *in, struct item *out, size_t n, unsigned int cb,
	 unsigned int shift, size_t *cnt, size_t mask)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[cnt[(radix_key(&in[i], cb) >> shift) & mask]++] = in[i];
}

/*
 * @m's items by radix_key(), @cb a constant, from the counts item()
 * made: from @m->it into @out by the low digit, back by the high one.
 */
static inline __attribute__((always_inline)) void
by_key(struct hp_emit *m, struct item *out, unsigned int cb)
{
	size_t *lo = m->cnt, *hi = m->cnt + (1U << DIGIT_BITS);

	starts(lo, 1U << DIGIT_BITS);
	starts(hi, m->hi);
	by_digit(m->it, out, m->n, cb, 0, lo, (1U << DIGIT_BITS) - 1);
	by_digit(out, m->it, m->n, cb, DIGIT_BITS, hi, m->hi - 1);
}

/*
 * The radix sort's key and counters for @nslots slots, zero, before the
 * first item is made.  0, or -ENOMEM.
 */
static int sort_start(struct hp_emit *m, uint32_t nslots)
{
	size_t hi = 1;

	m->cb = 0;
	if (nslots <= 1U << (2 * DIGIT_BITS + 2 - CLS_BITS))
		m->cb = CLS_BITS;
	while (hi < ((size_t)nslots << m->cb >> DIGIT_BITS) + 1)
		hi *= 2;
	m->hi = hi;
	if (hyper_plan__room(m->mem, &m->cnt, &m->cnt_cap,
			     (1U << DIGIT_BITS) + hi, sizeof(*m->cnt)))
		return -ENOMEM;
	memset(m->cnt, 0, ((1U << DIGIT_BITS) + hi) * sizeof(*m->cnt));
	return 0;
}

/*
 * Bucket by slot, then order each slot: O(n log of the largest slot).
 * Bucketing is a radix sort of two passes: one counter per slot would be
 * scattered over megabytes on a big graph, a cache miss per item.
 *
 * The radix sort is stable, and most slots' items are made in their
 * tensors' order within each class (an eviction's store, detach and
 * prefetch, then its tensor's accesses, the evictions mostly in tensor
 * order), the classes interleaved.  So the key is the slot with the
 * class below it (CLS_BITS) wherever that stays within 24 bits, a second
 * digit of 13 at most: most slots then come out of it in order (of
 * those with several items, 98% on the MoE training graphs and 84% at
 * 100k decode operators, against 61% and 31% keyed by the slot alone),
 * and are only checked; the others are sorted as before.  Either way
 * each slot ends in item_before()'s order, which is total: the same
 * items in the same order.
 */
static int sort_items(struct hp_emit *m)
{
	size_t i, end, nb = 0;
	struct item *tmp = m->it;
	uint32_t *busy;
	bool in_order;

	if (m->cb)
		by_key(m, m->tmp, CLS_BITS);
	else
		by_key(m, m->tmp, 0);
	/* no more items than slots with items, nor steps */
	busy = m->mine ? (uint32_t *)m->tmp : NULL;
	for (i = 0; i < m->n; i = end) {
		in_order = true;
		for (end = i + 1; end < m->n && tmp[end].slot == tmp[i].slot;
		     end++)
			in_order = in_order &&
				   !item_before(&tmp[end], &tmp[end - 1]);
		if (!in_order)
			sort_slot(tmp + i, end - i);
		if (busy && (!nb || busy[nb - 1] != tmp[i].slot / 2))
			busy[nb++] = tmp[i].slot / 2;
	}
	m->busy = busy;
	m->nbusy = nb;
	return 0;
}

/* The items and their sort's other half freed, none held. */
static void items_free(struct hp_emit *m)
{
	struct hu_part parts[] = {
		HU_PART(m->it, 0, false), HU_PART(m->tmp, 0, false),
	};

	hyper_plan__block_free(m->mem, &m->it_block, parts, ARRAY_SIZE(parts));
	m->cap = 0;
}

/*
 * Room for @need items and as many in the sort's other half.  Where the
 * two span a huge page they are one block on huge pages
 * (hyper_plan__parts()): apart, each was a heap block of 2 to 5 MB at
 * 100k decode operators on no 2 MiB bound, and the probes' first
 * touches of them were about 1,500 of the run's 4 KiB faults; the block
 * takes one a 2 MiB.  Below that they stay two arrays: one block of
 * both, grown at most probes of a small search, went past glibc's
 * dynamic mmap threshold each time and came fresh (OLMoE-1B-7B
 * `--compare` took 1,500 more faults).  The other half gets the bound,
 * not the count: what is not written of it stays untouched.  The old
 * room is freed first (hyper_plan__room()).  0, or -ENOMEM.
 */
static int items_room(struct hp_emit *m, size_t need)
{
	struct hu_part parts[] = {
		HU_PART(m->it, need, false),
		HU_PART(m->tmp, need, false),
	};

	if (need <= m->cap)
		return 0;
	items_free(m);
	if (hyper_plan__parts(m->mem, parts, ARRAY_SIZE(parts), &m->it_block))
		return -ENOMEM;
	m->cap = need;
	return 0;
}

/* The order's homes (struct life), and the pool for what @ev keeps there. */
static void homes(struct hp_emit *m, const struct evict *ev, size_t nev)
{
	size_t i;

	memcpy(m->s->home, m->lf->home0, m->lf->g->nt);
	for (i = 0; i < nev; i++)
		if (ev[i].a < 0 && ev[i].detach_slot < 0)
			m->s->home[ev[i].t] = HYPER_HOME_POOL;
}

static void evict_items(struct items *w, const struct evict *v, uint32_t n)
{
	if (v->detach_slot >= 0) {
		if (v->store_slot >= 0)
			item(w, v->store_slot, CL_STORE, 0, v->t);
		item(w, v->detach_slot, CL_DETACH_LIVE, 0, v->t);
	}
	if (v->j < (int32_t)n)
		item(w, 2 * v->fetch_step, CL_PREFETCH, v->j, v->t);
}

static int bad(struct hp_emit *m, uint32_t slot, uint32_t event, int why,
	       uint32_t t)
{
	uint32_t k = slot / 2;

	return hyper_plan__errf(m->e, "internal: step %u (%s): %s of tensor \"%s\" %s", k,
		       m->lf->g->op[m->lf->order[k]].id,
		       hyper_residency_event_name(event), m->lf->g->t[t].id,
		       hyper_residency_reason(why));
}

static int check_uses(struct hp_emit *m, uint32_t k);

/*
 * Room in the cops for @need of them.  The offsets into them are 32-bit
 * (slot_off: 2n + 1 of them, 8 MB at 1M decode operators where size_t
 * took 16, held by every schedule kept), so a schedule of more than
 * UINT32_MAX cops, 32 GiB of them, is refused as out of memory.
 */
static int cops_room(struct hp_emit *m, size_t need)
{
	struct sched *s = m->s;

	if (need >= UINT32_MAX) {
		m->mem->failed = true;
		return hyper_plan__nomem(m->e);
	}
	if (hyper_plan__grow(m->mem, &s->cops, &m->cap_cops, need,
			     sizeof(*s->cops)))
		return hyper_plan__nomem(m->e);
	return 0;
}

/* Emits @kind, which the rules must allow; the state follows it. */
static int put(struct hp_emit *m, uint32_t slot, uint32_t t, uint8_t kind)
{
	struct sched *s = m->s;
	int why = hyper_residency_step(&m->st[t], kind);

	if (why)
		return bad(m, slot, kind, why, t);
	if (s->ncops == m->cap_cops && cops_room(m, s->ncops))
		return -ENOMEM;
	s->cops[s->ncops++] = (struct cop){ t, kind };
	return 0;
}

/* Applies one decision to the state machine; emits what it needs. */
static int apply(struct hp_emit *m, const struct item *x)
{
	uint32_t t = x->t;
	bool stale = !(m->st[t] & HYPER_RES_POOL);
	int ret = 0;

	switch (x->cls) {
	case CL_STORE:
		/* a store while the pool copy is current would be redundant */
		if ((m->st[t] & HYPER_RES_DEVICE) && stale)
			ret = put(m, x->slot, t, HYPER_OP_STORE);
		return ret;
	case CL_DETACH_LIVE:
	case CL_DETACH_DEAD:
		/* a live value keeps its only copy in the pool */
		if (x->cls == CL_DETACH_LIVE && stale &&
		    (m->st[t] & HYPER_RES_DEVICE))
			ret = put(m, x->slot, t, HYPER_OP_STORE);
		return ret ? ret : put(m, x->slot, t, HYPER_OP_DETACH);
	case CL_PREFETCH:
		return put(m, x->slot, t, HYPER_OP_PREFETCH);
	case CL_DEFINE:
		hyper_residency_step(&m->st[t], HYPER_RES_DEFINE);
		return 0;
	default:
		/* the first input refused, as check_uses() would say */
		if (hyper_residency_check(m->st[t], HYPER_RES_USE))
			return check_uses(m, x->slot / 2);
		return 0;
	}
}

static void run_op(struct hp_emit *m, uint32_t k)
{
	const struct graph *g = m->lf->g;
	const struct op *o = &g->op[m->lf->order[k]];
	uint32_t i;

	for (i = 0; i < o->n_out; i++)
		hyper_residency_step(&m->st[op_out(g, o)[i]], HYPER_RES_DEFINE);
}

static int check_uses(struct hp_emit *m, uint32_t k)
{
	const struct graph *g = m->lf->g;
	const struct op *o = &g->op[m->lf->order[k]];
	uint32_t i;
	int why;

	for (i = 0; i < o->n_in; i++) {
		if (m->mine && !m->mine[op_in(g, o)[i]])
			continue;	/* one no rule refuses */
		why = hyper_residency_check(m->st[op_in(g, o)[i]], HYPER_RES_USE);
		if (why)
			return bad(m, 2 * k, HYPER_RES_USE, why, op_in(g, o)[i]);
	}
	return 0;
}

/*
 * Dead gaps: free the value after the access that last needed it.  They
 * sort between the live detaches and the prefetches of their slot, in
 * tensor order (item_before()); hyper_plan__life_build() keeps them in that order.
 */
static int dead(struct hp_emit *m, uint32_t slot)
{
	const struct life *lf = m->lf;
	struct sched *s = m->s;
	size_t i, k = slot / 2;
	int ret = 0;

	for (i = lf->dead_off[k]; i < lf->dead_off[k + 1] && !ret; i++) {
		struct item x = { slot, CL_DETACH_DEAD, 0, lf->dead_t[i] };

		if (!m->mine || m->mine[x.t]) {
			ret = apply(m, &x);
			continue;
		}
		if (s->ncops == m->cap_cops && cops_room(m, s->ncops))
			return -ENOMEM;
		s->cops[s->ncops++] = (struct cop){ x.t, HYPER_OP_DETACH };
	}
	return ret;
}

/*
 * Slots [@slot, @to) without items, when the emitter tracks the evicted
 * tensors alone: their dead gaps' detaches are all they hold, one a gap,
 * so room for them is made once, and the count of cops is kept here.
 * Most slots of a probe are these, pulled a few steps at a time by the
 * simulator.  A tracked tensor's dead gap follows one of its accesses at
 * its step, an item in the step's "before" slot (a use) or its "after"
 * slot (a define): without items from @slot on, only @slot itself can
 * be such a gap's, an "after" slot just past a use.  That slot goes
 * through apply() for the tracked tensors it frees (which emits each
 * detach alone); every later step is copied whole, its "before" slot
 * empty and its "after" slot its dead gaps as they are.  Those steps'
 * dead gaps are one run of dead_t, so they go in two flat loops, the
 * offsets then the detaches: each slot starts where its step's dead
 * gaps do, shifted by the busy slots' operators before them (base).
 */
static int bare(struct hp_emit *m, uint32_t slot, uint32_t to)
{
	const size_t *dead_off = m->lf->dead_off;
	const uint32_t *dead_t = m->lf->dead_t;
	const uint8_t *mine = m->mine;
	struct sched *s = m->s;
	size_t i, end, n, base, need = dead_off[to / 2] - dead_off[slot / 2];
	uint32_t *slot_off = s->slot_off;
	uint32_t k, t, off;
	struct cop *c;
	int ret;

	if (need && s->ncops + need >= m->cap_cops &&
	    cops_room(m, s->ncops + need))
		return -ENOMEM;
	c = s->cops;
	n = s->ncops;
	if (slot < to && (slot & 1)) {
		slot_off[slot] = n;
		end = dead_off[slot / 2 + 1];
		for (i = dead_off[slot / 2]; i < end; i++) {
			t = dead_t[i];
			if (!mine[t]) {
				c[n++] = (struct cop){ t, HYPER_OP_DETACH };
				continue;
			}
			s->ncops = n;
			ret = apply(m, &(struct item){ slot, CL_DETACH_DEAD,
						       0, t });
			if (ret)
				return ret;
			/* room was made above, but put() may still move it */
			c = s->cops;
			n = s->ncops;
		}
		slot++;
	}
	/* the whole steps [slot / 2, @to / 2); base may wrap (unsigned) */
	base = n - dead_off[slot / 2];
	for (k = slot / 2; k < to / 2; k++) {
		off = (uint32_t)(base + dead_off[k]);
		slot_off[2 * k] = off;
		slot_off[2 * k + 1] = off;
	}
	end = dead_off[to / 2];
	for (i = dead_off[slot / 2]; i < end; i++)
		c[base + i] = (struct cop){ dead_t[i], HYPER_OP_DETACH };
	n = base + end;
	if (to & 1)		/* a "before" slot, the last: empty */
		slot_off[to - 1] = n;
	s->ncops = n;
	return 0;
}

/* Emits the slots before @upto, from where the last call stopped. */
static int replay(struct hp_emit *m, uint32_t upto)
{
	struct sched *s = m->s;
	uint32_t slot, nslots = 2 * s->n, stop;
	size_t x = m->x;
	int ret = 0;

	for (slot = m->slot; slot < upto && !ret; slot++) {
		if (m->mine) {
			stop = x < m->n && m->it[x].slot < upto ?
			       m->it[x].slot : upto;
			if (slot < stop) {
				ret = bare(m, slot, stop);
				slot = stop - 1;	/* the loop's ++ */
				continue;
			}
		}
		s->slot_off[slot] = s->ncops;
		if ((slot & 1) && !m->mine)
			run_op(m, slot / 2);
		for (; x < m->n && m->it[x].slot == slot &&
		     m->it[x].cls < CL_DETACH_DEAD && !ret; x++)
			ret = apply(m, &m->it[x]);
		if (slot & 1)
			ret = ret ? ret : dead(m, slot);
		for (; x < m->n && m->it[x].slot == slot && !ret; x++)
			ret = apply(m, &m->it[x]);
		if (!(slot & 1) && !ret && !m->mine)
			ret = check_uses(m, slot / 2);
	}
	m->slot = slot;
	m->x = x;
	/* where the last slot emitted ends (the next one starts there) */
	if (slot <= nslots)
		s->slot_off[slot] = s->ncops;
	return ret;
}

/* mine_all zero again, none tracked. */
static void mine_clear(struct hp_emit *m)
{
	size_t i;

	for (i = 0; i < m->nmine; i++)
		m->mine_all[m->mine_t[i]] = 0;
	m->nmine = 0;
	m->mine = NULL;
}

/*
 * Whether the emitter tracks @ev's tensors alone (hp_emit.mine): it
 * does when every tensor that breaks a rule with nothing offloaded is
 * among them, and their accesses, each an item, are no more than the
 * steps, whose every use and define replay() visits otherwise.  @nacc:
 * those accesses.  0, or -ENOMEM.
 */
static int track_mine(struct hp_emit *m, const struct evict *ev, size_t nev,
		      size_t *nacc)
{
	const struct life *lf = m->lf;
	uint8_t *mine = m->mine_all;
	size_t i, acc = 0;

	if (hyper_plan__room(m->mem, &m->mine_t, &m->mine_t_cap, nev,
			     sizeof(*m->mine_t)))
		return -ENOMEM;
	for (i = 0; i < nev && acc <= lf->n; i++)
		if (!mine[ev[i].t]) {
			mine[ev[i].t] = 1;
			m->mine_t[m->nmine++] = ev[i].t;
			acc += nr_accesses(lf, ev[i].t);
		}
	for (i = 0; i < lf->ndirty && acc <= lf->n; i++)
		if (!mine[lf->dirty_t[i]])
			acc = SIZE_MAX;
	if (acc > lf->n) {
		mine_clear(m);
		return 0;
	}
	m->mine = mine;
	*nacc = acc;
	return 0;
}

/*
 * A tracked tensor's uses and defines, one item a step (its accesses
 * are in step order), and its state at the start.
 */
static void access_items(struct hp_emit *m, struct items *w, uint32_t t)
{
	const struct life *lf = m->lf;
	size_t i, end = lf->acc_off[t + 1];
	uint8_t rw;

	m->st[t] = hyper_residency_start(m->s->home[t]);
	for (i = lf->acc_off[t]; i < end; ) {
		uint32_t k = lf->acc_step[i];

		for (rw = 0; i < end && lf->acc_step[i] == k; i++)
			rw |= lf->acc_rw[i];
		if (rw & ACC_R)
			item(w, 2 * (int64_t)k, CL_USE, 0, t);
		if (rw & ACC_W)
			item(w, 2 * (int64_t)k + 1, CL_DEFINE, 0, t);
	}
}

static void emit_free_all(struct hp_emit *m)
{
	items_free(m);
	free(m->cnt);
	free(m->st);
	free(m->mine_all);
	free(m->mine_t);
	free(m);
}

/* An emission ended: @m back in its buffer, with mine_all zero again. */
static void emit_free(struct hp_emit *m)
{
	if (!m)
		return;
	if (!m->buf) {
		emit_free_all(m);
		return;
	}
	mine_clear(m);
	m->buf->busy = false;
}

/*
 * The context of an emission about to start, with room for @nt tensors'
 * states (not set) and mine_all zero: @buf's, when it has one not in use
 * (most of a search's probes), else one of its own (and @buf's from then
 * on when it had none).  NULL when out of memory.
 */
static struct hp_emit *emit_get(struct hp_emitbuf *buf, size_t nt,
				struct hp_mem *mem)
{
	struct hp_emit *m = buf && !buf->busy ? buf->m : NULL;

	if (!m) {
		m = hyper_plan__calloc(mem, 1, sizeof(*m));
		if (!m)
			return NULL;
		if (buf && !buf->m) {
			buf->m = m;
			m->buf = buf;
		}
	}
	if (m->nt_cap < nt) {
		free(m->st);
		free(m->mine_all);
		m->nt_cap = 0;
		m->st = hyper_plan__array(mem, nt, 1);
		m->mine_all = hyper_plan__calloc(mem, nt, 1);
		if (!m->st || !m->mine_all) {
			free(m->st);
			free(m->mine_all);
			m->st = m->mine_all = NULL;
			if (!m->buf)
				emit_free_all(m);
			return NULL;
		}
		m->nt_cap = nt;
	}
	if (m->buf)
		m->buf->busy = true;
	/* what one emission leaves: the arrays and their room stay */
	m->n = 0;
	m->mine = NULL;
	m->nmine = 0;
	m->cap_cops = 0;
	m->slot = 0;
	m->x = 0;
	m->busy = NULL;
	m->nbusy = 0;
	m->qx = 0;
	return m;
}

void hyper_plan__emitbuf_free(struct hp_emitbuf *buf)
{
	if (buf->m && buf->busy)
		buf->m->buf = NULL;	/* its schedule's, freed with it */
	else if (buf->m)
		emit_free_all(buf->m);
	*buf = (struct hp_emitbuf){ 0 };
}

int hyper_plan__sched_start(struct sched *s, const struct life *lf,
			    const struct evict *ev, size_t nev,
			    struct hp_mem *mem, struct hp_err *e)
{
	return hyper_plan__sched_start_in(s, lf, ev, nev, NULL, mem, e);
}

int hyper_plan__sched_start_in(struct sched *s, const struct life *lf,
			       const struct evict *ev, size_t nev,
			       struct hp_emitbuf *buf, struct hp_mem *mem,
			       struct hp_err *e)
{
	struct hp_emit *m;
	const struct graph *g = lf->g;
	size_t i, nacc = 0, need;
	struct items w;
	uint32_t t;

	memset(s, 0, sizeof(*s));
	m = emit_get(buf, g->nt, mem);
	if (!m)
		return hyper_plan__nomem(e);
	m->lf = lf;
	m->s = s;
	m->mem = mem;
	m->e = e;
	s->emit = m;
	s->g = g;
	s->order = lf->order;
	s->n = lf->n;
	/* each written before it is read: homes(), replay(), below */
	s->home = hyper_plan__array(mem, g->nt, 1);
	s->slot_off = hyper_plan__array(mem, 2 * (size_t)s->n + 1,
					sizeof(*s->slot_off));
	if (!s->home || !s->slot_off)
		goto out;
	homes(m, ev, nev);
	if (track_mine(m, ev, nev, &nacc))
		goto out;
	/*
	 * at most three items an eviction and two an access: one
	 * allocation, no copies (none at all with room kept from the last)
	 */
	need = 3 * nev + 2 * nacc;
	if (items_room(m, need) ||
	    sort_start(m, 2 * s->n))
		goto out;
	/*
	 * The cops, at most one a dead gap and four an eviction (a store
	 * at its slot and another at its detach, should a define come
	 * between, the detach and the prefetch): one allocation, no copies
	 * as the emission goes; a probe given up early touches its start.
	 */
	m->cap_cops = lf->dead_off[lf->n] + 4 * nev + 1;
	if (m->cap_cops > UINT32_MAX)
		m->cap_cops = UINT32_MAX;	/* cops_room() */
	s->cops = hyper_plan__array(mem, m->cap_cops, sizeof(*s->cops));
	if (!s->cops)
		goto out;
	w = (struct items){ m->it, 0, m->cnt, m->cb };
	for (i = 0; i < nev; i++) {
		evict_items(&w, &ev[i], lf->n);
		if (m->mine && m->mine[ev[i].t] == 1) {
			m->mine[ev[i].t] = 2;	/* its accesses, once */
			access_items(m, &w, ev[i].t);
		}
	}
	m->n = w.n;
	if (mem->failed || sort_items(m))
		goto out;
	for (t = 0; t < g->nt && !m->mine; t++)
		m->st[t] = hyper_residency_start(s->home[t]);
	return 0;
out:
	hyper_plan__sched_free(s);
	return hyper_plan__nomem(e);
}

int hyper_plan__sched_emit(const struct sched *s, uint32_t steps,
			   struct hp_err *e)
{
	struct hp_emit *m = s->emit;
	int ret;

	if (!m)
		return 0;
	m->e = e;
	ret = replay(m, 2 * (steps < s->n ? steps : s->n));
	if (!ret && m->slot == 2 * s->n) {
		m->s->emit = NULL;	/* emitted whole */
		emit_free(m);
	}
	return ret;
}

/*
 * Every step that touches a tracked tensor has an item: its uses and
 * defines are items (access_items()), its prefetches, stores and live
 * detaches are, and its dead detaches follow one of its accesses at the
 * same step.  So the first step with items from k on is the first busy
 * step (hp_emit.busy); the cursor moves forward as the simulator asks
 * (back, should it ask again lower).
 */
uint32_t hyper_plan__sched_quiet_until(const struct sched *s, uint32_t k)
{
	struct hp_emit *m = s->emit;

	if (!m || !m->mine || k >= s->n)
		return k;
	return hyper_plan__busy_from(m->busy, m->nbusy, &m->qx, k, s->n);
}

const uint32_t *hyper_plan__sched_busy(const struct sched *s, size_t *n)
{
	if (!s->emit || !s->emit->mine)
		return NULL;
	*n = s->emit->nbusy;
	return s->emit->busy;
}

const struct life *hyper_plan__sched_life(const struct sched *s)
{
	return s->emit && s->emit->mine ? s->emit->lf : NULL;
}

const uint32_t *hyper_plan__sched_tracked(const struct sched *s, size_t *n)
{
	if (!s->emit || !s->emit->mine)
		return NULL;
	*n = s->emit->nmine;
	return s->emit->mine_t;
}

uint32_t hyper_plan__sched_emitted(const struct sched *s)
{
	return s->emit ? s->emit->slot / 2 : s->n;
}

int hyper_plan__sched_build(struct sched *s, const struct life *lf,
		const struct evict *ev, size_t nev, struct hp_mem *mem,
		struct hp_err *e)
{
	int ret = hyper_plan__sched_start(s, lf, ev, nev, mem, e);

	if (!ret)
		ret = hyper_plan__sched_emit(s, s->n, e);
	if (ret)
		hyper_plan__sched_free(s);
	return ret;
}

void hyper_plan__sched_free(struct sched *s)
{
	emit_free(s->emit);
	free(s->home);
	free(s->slot_off);
	free(s->cops);
	free(s->res_off);
	free(s->res_first);
	memset(s, 0, sizeof(*s));
}
