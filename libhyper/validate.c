// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The validator replays a parsed schedule on the per-tensor state machine
 * of Documentation/schedule-format.md ("Meaning, and what the validator
 * checks"), whose transitions are <hyper/residency.h>'s.  The executor
 * trusts what passes here, so every rule a transfer or an operator relies
 * on must be enforced in this file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/residency.h>

#include "schedule.h"
#include "util/huge.h"
#include "util/sort.h"
#include "util/units.h"

/*
 * The replay, which drives util/residency.c's builder (@res) as it goes:
 * the builder's clock ticks once for each cache op and each define, and
 * it is told where the state machine gives a tensor a device copy and
 * where a detach takes it away.  hs_intervals() made the same intervals
 * in a second walk of every step after the replay, as many instructions
 * as the replay itself.
 */
struct replay {
	struct hyper_schedule *s;
	uint8_t *st;
	uint64_t resident;
	uint64_t peak;
	struct hu_res res;	/* the residency intervals */
	struct hs_err *e;
};

/* Where a message points: "step I (OP)", or the start for UINT32_MAX. */
static const char *where(char *buf, size_t len, const struct replay *r,
			 uint32_t i)
{
	/* Operator names are free text: keep messages bounded. */
	if (i == UINT32_MAX)
		snprintf(buf, len, "schedule start");
	else
		snprintf(buf, len, "step %u (%.120s)", i, r->s->steps[i].op);
	return buf;
}

/*
 * After step @i's prefetch of tensor @t, or its defines (@t UINT32_MAX),
 * or at the start (@i UINT32_MAX): the message for a residency beyond
 * the budget.  Out of line, as are the replay's other messages: their
 * buffers made a frame for each of a million checks that pass.
 */
static __attribute__((noinline, cold)) int budget_msg(struct replay *r,
						       uint32_t i, uint32_t t)
{
	char have[32], budget[32], w[200], what[200];

	if (i == UINT32_MAX)
		snprintf(what, sizeof(what), "tensors whose home is \"device\"");
	else if (t == UINT32_MAX)
		snprintf(what, sizeof(what), "after the operator's defines");
	else
		snprintf(what, sizeof(what), "after prefetch of \"%s\"",
			 r->s->tensors[t].id);
	hu_fmt_bytes(have, sizeof(have), r->resident, 1);
	hu_fmt_bytes(budget, sizeof(budget), r->s->budget, 1);
	hs_errf(r->e, "%s: device residency %s (%" PRIu64 " bytes) exceeds budget %s (%" PRIu64 " bytes) (%s)",
		where(w, sizeof(w), r, i), have, r->resident, budget,
		r->s->budget, what);
	return -EBADMSG;
}

/* The peak so far, and the budget: budget_msg() names where. */
static inline int over_budget(struct replay *r, uint32_t i, uint32_t t)
{
	if (r->resident > r->peak)
		r->peak = r->resident;
	if (!(r->s->flags & HYPER_SCHED_BUDGET) || r->resident <= r->s->budget)
		return 0;
	return budget_msg(r, i, t);
}

/* A cache op unknown (@why 0) or refused by <hyper/residency.h>. */
static __attribute__((noinline, cold)) int op_msg(struct replay *r, uint32_t i,
						   const struct hyper_cop *c,
						   int why)
{
	char w[200];

	if (!why)
		hs_errf(r->e, "%s: unknown cache op %u",
			where(w, sizeof(w), r, i), c->op);
	else
		hs_errf(r->e, "%s: %s of tensor \"%s\" %s",
			where(w, sizeof(w), r, i), hs_op_name(c->op),
			r->s->tensors[c->tensor].id,
			hyper_residency_reason(why));
	return -EBADMSG;
}

static __attribute__((noinline, cold)) int use_msg(struct replay *r, uint32_t i,
						    uint32_t ti)
{
	char w[200];

	hs_errf(r->e, "%s: tensor \"%s\" used while not resident",
		where(w, sizeof(w), r, i), r->s->tensors[ti].id);
	return -EBADMSG;
}

/*
 * The rules are <hyper/residency.h>'s; this adds the byte count and the
 * intervals.  The caller ticks the builder's clock after each op.
 */
static inline __attribute__((always_inline)) int
apply(struct replay *r, uint32_t i, const struct hyper_cop *c)
{
	struct hs_tensor *t = &r->s->tensors[c->tensor];
	int why;

	if (!hyper_cache_op_name(c->op))
		return op_msg(r, i, c, 0);
	why = hyper_residency_step(&r->st[c->tensor], c->op);
	if (why)
		return op_msg(r, i, c, why);
	switch (c->op) {
	case HYPER_OP_PREFETCH:
		t->flags |= HYPER_TENSOR_NEEDS_POOL | HYPER_TENSOR_NEEDS_DEVICE;
		r->resident += t->bytes;
		hu_res_begin(&r->res, c->tensor, t->bytes);
		return over_budget(r, i, c->tensor);
	case HYPER_OP_STORE:
		t->flags |= HYPER_TENSOR_NEEDS_POOL;
		return 0;
	default:
		r->resident -= t->bytes;
		hu_res_end(&r->res, c->tensor);
		return 0;
	}
}

static int replay_step(struct replay *r, uint32_t i)
{
	struct hs_step *step = &r->s->steps[i];
	uint32_t j;
	int ret;

	r->res.step = i;
	for (j = 0; j < step->nr_before; j++, hu_res_tick(&r->res)) {
		ret = apply(r, i, &step->before[j]);
		if (ret)
			return ret;
	}
	for (j = 0; j < step->nr_uses; j++) {
		uint32_t ti = step->uses[j];

		if (hyper_residency_check(r->st[ti], HYPER_RES_USE))
			return use_msg(r, i, ti);
	}
	for (j = 0; j < step->nr_defines; j++, hu_res_tick(&r->res)) {
		uint32_t ti = step->defines[j];
		struct hs_tensor *t = &r->s->tensors[ti];

		if (!(r->st[ti] & HYPER_RES_DEVICE)) {
			r->resident += t->bytes;
			hu_res_begin(&r->res, ti, t->bytes);
		}
		hyper_residency_step(&r->st[ti], HYPER_RES_DEFINE);
		t->flags |= HYPER_TENSOR_NEEDS_DEVICE;
	}
	ret = over_budget(r, i, UINT32_MAX);
	if (ret)
		return ret;
	for (j = 0; j < step->nr_after; j++, hu_res_tick(&r->res)) {
		ret = apply(r, i, &step->after[j]);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * hs_validate() - replay a schedule on the residency rules
 * @s:	the schedule, filled
 * @vp:	set to its residency intervals (util/residency.h's, malloc'ed, in
 *	the order they begin), or to NULL on failure
 * @np:	set to their number
 * @e:	the first rule broken
 *
 * Sets each tensor's flags and s->peak.  A rule broken is reported
 * before the builder's running out of memory, as when the intervals were
 * built after the replay.
 *
 * Return: 0, -EBADMSG or -ENOMEM.
 */
int hs_validate(struct hyper_schedule *s, struct hu_resid **vp, uint32_t *np,
		struct hs_err *e)
{
	struct replay r = { .s = s, .e = e };
	uint64_t most = 0;
	uint32_t i;
	int ret;

	*vp = NULL;
	*np = 0;
	r.st = hu_calloc_huge(s->nr_tensors ?: 1, 1);
	if (!r.st || hu_res_init(&r.res, s->nr_tensors, HS_DEV_ALIGN, NULL,
				 NULL)) {
		free(r.st);
		hu_res_free(&r.res);
		return -ENOMEM;
	}
	/*
	 * A schedule's own offsets are one per residency where it is right:
	 * the array is sized by their count before the first begins, where
	 * a million steps' intervals grown by doubling were copied and left
	 * the heap a larger block than they fill.  It grows on where the
	 * count falls short; running out of memory here is
	 * hu_res_finish()'s to report.
	 */
	for (i = 0; i < s->nr_tensors; i++)
		most += s->tensors[i].nr_plan_off;
	if (most > UINT32_MAX / 2)
		most = UINT32_MAX / 2;	/* the builder's own limit */
	(void)hu_res_reserve(&r.res, (uint32_t)most);
	for (i = 0; i < s->nr_tensors; i++) {
		struct hs_tensor *t = &s->tensors[i];

		t->flags = 0;
		r.st[i] = hyper_residency_start(t->home);
		if (r.st[i] & HYPER_RES_POOL)
			t->flags |= HYPER_TENSOR_NEEDS_POOL;
		if (r.st[i] & HYPER_RES_DEVICE) {
			t->flags |= HYPER_TENSOR_NEEDS_DEVICE;
			r.resident += t->bytes;
			hu_res_begin(&r.res, i, t->bytes);
		}
	}
	hu_res_tick(&r.res);
	ret = over_budget(&r, UINT32_MAX, UINT32_MAX);
	for (i = 0; !ret && i < s->nr_steps; i++)
		ret = replay_step(&r, i);
	if (!ret)
		s->peak = r.peak;
	free(r.st);
	if (ret) {
		hu_res_free(&r.res);
		return ret;
	}
	return hu_res_finish(&r.res, vp, np);
}

/* The residency an interval is, for messages: its tensor and offset. */
static void ival_desc(char *buf, size_t len, const struct hyper_schedule *s,
		      const struct hu_resid *v)
{
	const struct hs_tensor *t = &s->tensors[v->tensor];

	snprintf(buf, len, "tensor \"%s\" (arena_offsets[%u] = %" PRIu64 ", %" PRIu64 " bytes)",
		 t->id, v->nth, t->plan_off[v->nth], t->bytes);
}

static void where_desc(char *buf, size_t len, const struct hyper_schedule *s,
		       uint32_t step)
{
	if (step == UINT32_MAX)
		snprintf(buf, len, "at the schedule's start");
	else
		snprintf(buf, len, "from step %u (%.120s) on", step,
			 s->steps[step].op);
}

/*
 * Each residency's count, alignment and range, checked in the order of
 * the messages; the first rule broken is named.
 */
static __attribute__((noinline, cold)) int
each_msg(const struct hyper_schedule *s, const struct hu_resid *v,
	 uint32_t n, struct hs_err *e)
{
	uint32_t *count = hu_calloc_huge(s->nr_tensors ?: 1, sizeof(*count));
	int ret = 0;

	if (!count)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		count[v[i].tensor]++;
	for (uint32_t ti = 0; ti < s->nr_tensors && !ret; ti++) {
		const struct hs_tensor *t = &s->tensors[ti];

		if (t->nr_plan_off != count[ti]) {
			hs_errf(e, "tensors[%u].arena_offsets: tensor \"%s\" becomes resident %u times but has %u offsets (one per residency, in the order they begin)",
				ti, t->id, count[ti], t->nr_plan_off);
			ret = -EBADMSG;
		}
	}
	for (uint32_t i = 0; i < n && !ret; i++) {
		const struct hs_tensor *t = &s->tensors[v[i].tensor];
		uint64_t off = t->plan_off[v[i].nth];

		if (off % HS_DEV_ALIGN) {
			hs_errf(e, "tensors[%u].arena_offsets[%u]: offset %" PRIu64 " of tensor \"%s\" is not a multiple of %d",
				v[i].tensor, v[i].nth, off, t->id, HS_DEV_ALIGN);
			ret = -EBADMSG;
		} else if (off > s->arena_bytes ||
			   v[i].bytes > s->arena_bytes - off) {
			hs_errf(e, "tensors[%u].arena_offsets[%u]: tensor \"%s\" at offset %" PRIu64 " (%" PRIu64 " bytes, %" PRIu64 " aligned) ends past arena_bytes %" PRIu64,
				v[i].tensor, v[i].nth, t->id, off, t->bytes,
				v[i].bytes, s->arena_bytes);
			ret = -EBADMSG;
		}
	}
	free(count);
	return ret;
}

/*
 * Each residency's count, alignment and range; its offset into
 * @off_of[i], where check_overlap() reads them in order.  Looked up
 * again there (the tensor, then its offset list), each residency's key
 * cost two cache misses more at a million steps.
 *
 * A tensor's residencies are numbered 0, 1, ... in the order they begin
 * (hu_res_begin()), so every tensor has as many offsets as residencies
 * exactly when each residency's number is below its tensor's count of
 * offsets and the counts add up to @n: checked so, in the pass that
 * reads the offsets, with no count of each tensor's residencies (an
 * array as long as the tensors, cleared and written at random).
 * each_msg() names what is wrong.
 */
static int check_each(const struct hyper_schedule *s, const struct hu_resid *v,
		      uint32_t n, uint64_t *off_of, struct hs_err *e)
{
	uint64_t total = 0, arena = s->arena_bytes;
	bool bad = false;

	for (uint32_t ti = 0; ti < s->nr_tensors; ti++)
		total += s->tensors[ti].nr_plan_off;
	for (uint32_t i = 0; i < n; i++) {
		const struct hs_tensor *t = &s->tensors[v[i].tensor];
		uint64_t off;

		if (v[i].nth >= t->nr_plan_off) {
			bad = true;	/* the counts differ */
			break;
		}
		off = t->plan_off[v[i].nth];
		off_of[i] = off;
		bad |= (off % HS_DEV_ALIGN) | (off > arena) |
		       (v[i].bytes > arena - off);
	}
	return bad || total != n ? each_msg(s, v, n, e) : 0;
}

/*
 * A set of ranks 0..n-1 with the nearest member below a rank in
 * O(log64 n): a bit per rank, and above each level a bit per non-empty
 * word of the one below.
 */
#define RANKS_LEVELS	6	/* 64^6 > 2^32 */

struct ranks {
	uint64_t *w[RANKS_LEVELS];
	unsigned int nl;
};

static int ranks_init(struct ranks *b, uint32_t n)
{
	uint64_t words = n;

	memset(b, 0, sizeof(*b));
	do {
		words = (words + 63) / 64;
		b->w[b->nl] = hu_calloc_huge(words, sizeof(uint64_t));
		if (!b->w[b->nl++])
			return -ENOMEM;
	} while (words > 1);
	return 0;
}

static void ranks_free(struct ranks *b)
{
	for (unsigned int l = 0; l < RANKS_LEVELS; l++)
		free(b->w[l]);
}

static void ranks_set(struct ranks *b, uint32_t r)
{
	for (unsigned int l = 0; l < b->nl; l++, r >>= 6) {
		uint64_t was = b->w[l][r >> 6];

		b->w[l][r >> 6] = was | 1ULL << (r & 63);
		if (was)
			break;
	}
}

static void ranks_clear(struct ranks *b, uint32_t r)
{
	for (unsigned int l = 0; l < b->nl; l++, r >>= 6)
		if ((b->w[l][r >> 6] &= ~(1ULL << (r & 63))))
			break;
}

static bool ranks_has(const struct ranks *b, uint32_t r)
{
	return b->w[0][r >> 6] >> (r & 63) & 1;
}

/* The greatest member below @r, or UINT32_MAX. */
static uint32_t ranks_below(const struct ranks *b, uint32_t r)
{
	for (unsigned int l = 0; l < b->nl; l++, r >>= 6) {
		uint64_t m = b->w[l][r >> 6] & ((1ULL << (r & 63)) - 1);

		if (m) {
			uint64_t pos = (r & ~63U) + 63 - __builtin_clzll(m);

			while (l--)
				pos = pos * 64 + 63 - __builtin_clzll(b->w[l][pos]);
			return (uint32_t)pos;
		}
	}
	return UINT32_MAX;
}

/*
 * A distinct offset, and its index in the order first met; sorted, its
 * position.  Below 2^32 granules of arena (256 GiB) the two are one
 * number, the offset in granules above the index: the same order, sorted
 * as numbers.
 */
struct at {
	uint64_t off;
	uint32_t i;
};

static bool at_before(const struct at *a, const struct at *b)
{
	return a->off < b->off || (a->off == b->off && a->i < b->i);
}

static bool key_before(const uint64_t *a, const uint64_t *b)
{
	return *a < *b;
}

HU_DEFINE_SORT(sort_at, struct at, at_before)
HU_DEFINE_SORT(sort_key, uint64_t, key_before)

/*
 * The radix sort's digits of the packed keys' offset half: three of 11
 * bits cover its 32, and their counts take 24 KiB of stack.  Below
 * RADIX_MIN keys the comparison sort is the cheaper.
 */
#define RADIX_BITS	11
#define RADIX_DIGITS	3
#define RADIX_MIN	256

static unsigned int digit(uint64_t key, unsigned int d)
{
	return key >> (32 + d * RADIX_BITS) & ((1U << RADIX_BITS) - 1);
}

/*
 * Sorts @key (@n keys, each an offset in granules below 2^@bits packed
 * above its index) as sort_key() does.  The keys are made in index
 * order, so a stable sort by the offset half alone gives the order of
 * the whole keys: least significant digit first, all digits counted in
 * one pass, a digit every key shares skipped.  At 100k decode operators
 * the introsort was two thirds of the overlap check.  @tmp has room for
 * @n keys.
 *
 * Return: @key or @tmp, whichever holds the sorted keys.
 */
static uint64_t *radix_keys(uint64_t *key, uint64_t *tmp, uint32_t n,
			    unsigned int bits)
{
	uint32_t cnt[RADIX_DIGITS][1U << RADIX_BITS];
	unsigned int nd = (bits + RADIX_BITS - 1) / RADIX_BITS, d;

	/*
	 * Every digit counted, used or not: a loop over the digits used
	 * shifted by a variable and branched per digit, three times the
	 * instructions of the count of a training plan's keys.
	 */
	_Static_assert(RADIX_DIGITS == 3, "the count below takes three digits");
	memset(cnt, 0, sizeof(cnt));
	for (uint32_t i = 0; i < n; i++) {
		uint64_t k = key[i];

		cnt[0][digit(k, 0)]++;
		cnt[1][digit(k, 1)]++;
		cnt[2][digit(k, 2)]++;
	}
	for (d = 0; d < nd; d++) {
		uint32_t *c = cnt[d], at = 0, k;
		uint64_t *t;

		if (c[digit(key[0], d)] == n)
			continue;	/* one value for all: nothing moves */
		for (size_t x = 0; x < 1U << RADIX_BITS; x++) {
			k = c[x];
			c[x] = at;
			at += k;
		}
		for (uint32_t i = 0; i < n; i++)
			tmp[c[digit(key[i], d)]++] = key[i];
		t = key;
		key = tmp;
		tmp = t;
	}
	return key;
}

/*
 * The live intervals in offset order, twice: a set of positions, to find
 * the greatest below a new one, and a list through them, to step from
 * there to the one above and past those that have ended.  Two set
 * searches per interval (below, then above) were two thirds of the
 * overlap check at 100k decode operators; the list leaves one.
 *
 * A position is one of the distinct offsets, in ascending order: two
 * intervals live together at one offset overlap, so until the sweep
 * stops a position holds at most one live interval; occ[] names the one
 * that came there last (joined, or took an ended one's place).  A
 * decode plan reuses few offsets (980 for 146,271 intervals at 100k
 * operators): a set of intervals' ranks had about one member a word,
 * and its searches climbed a level for nearly every one; its sort was
 * of every interval, where the positions' is of each offset once.
 */
struct link {
	uint32_t prev, next;	/* positions; the sentinel is nil */
};

struct sweep {
	const struct hu_resid *v;
	struct ranks live;	/* by position; some may have ended: see drop() */
	struct link *ln;	/* position -> its neighbours while in the set */
	uint32_t nil;		/* the list's sentinel: the number of positions */
	uint32_t *pos;		/* interval -> its offset's position */
	uint32_t *occ;		/* position -> its interval while in the set */
	uint64_t *off;		/* position -> its offset */
};

/*
 * Position @q leaves the set and the list: its interval ended before the
 * one being checked began.  The intervals begin in order, so one ended
 * for it is ended for every later one.
 */
static void drop(struct sweep *w, uint32_t q)
{
	struct link *l = &w->ln[q];

	w->ln[l->prev].next = l->next;
	w->ln[l->next].prev = l->prev;
	ranks_clear(&w->live, q);
}

/* Still resident when interval @i begins (the sentinel is not). */
static bool still_live(const struct sweep *w, uint32_t q, uint32_t i)
{
	return w->v[w->occ[q]].end > w->v[i].start;
}

/*
 * The positions nearest to @p below and above (@p itself, if in the set,
 * counts as above) whose intervals are still resident when interval @i
 * begins, each the sentinel if none; those met that ended leave.  The
 * greatest member below @p comes from the set; the list is in order, so
 * from it (or the sentinel) the next member is the least from @p on:
 * none lies between.  Returns whether @p is in the set with an interval
 * that ended: @i takes its place there, and the neighbour above is the
 * next one past it.  A decode plan's intervals mostly come to an offset
 * whose last one ended (119,376 of 146,271 at 100k operators): that one
 * leaving and @i joining were two updates of the set and six writes of
 * the list, for a position that stays where it was.
 */
static bool neighbours(struct sweep *w, uint32_t p, uint32_t i,
		       uint32_t *lo, uint32_t *hi)
{
	uint32_t q, x;
	bool ended_at_p = false;

	if (ranks_has(&w->live, p)) {
		q = w->ln[p].prev;	/* the greatest member below */
	} else {
		q = ranks_below(&w->live, p);
		if (q == UINT32_MAX)
			q = w->nil;
	}
	while (q != w->nil && !still_live(w, q, i)) {
		x = w->ln[q].prev;
		drop(w, q);
		q = x;
	}
	*lo = q;
	q = w->ln[q].next;
	if (q == p && !still_live(w, q, i)) {
		ended_at_p = true;
		q = w->ln[q].next;
	}
	while (q != w->nil && !still_live(w, q, i)) {
		x = w->ln[q].next;
		drop(w, q);
		q = x;
	}
	*hi = q;
	return ended_at_p;
}

/* Interval @i joins the set and the list at @p, between @lo and @hi. */
static void join(struct sweep *w, uint32_t p, uint32_t i, uint32_t lo,
		 uint32_t hi)
{
	w->ln[p] = (struct link){ lo, hi };
	w->ln[lo].next = p;
	w->ln[hi].prev = p;
	w->occ[p] = i;
	ranks_set(&w->live, p);
}

/*
 * Offsets in ascending order, each with its index: below 2^32 granules
 * of arena (256 GiB) packed as one number (key), else as pairs (at).
 */
struct order {
	uint64_t *key;
	struct at *at;
};

static uint32_t ord_idx(const struct order *o, uint32_t q)
{
	return o->key ? (uint32_t)o->key[q] : o->at[q].i;
}

static uint64_t ord_off(const struct order *o, uint32_t q)
{
	return o->key ? (o->key[q] >> 32) * HS_DEV_ALIGN : o->at[q].off;
}

/*
 * @offs (@n, aligned, below arena_bytes: check_each(); freed) in order;
 * out of memory, neither array.  Returned by value, its arrays stay out
 * of memory the loops over them write.
 */
static struct order offset_order(const struct hyper_schedule *s,
				 uint64_t *offs, uint32_t n)
{
	struct order o = { 0 };

	if (s->arena_bytes / HS_DEV_ALIGN <= UINT32_MAX) {
		uint64_t top = s->arena_bytes / HS_DEV_ALIGN | 1, *tmp = NULL;

		o.key = offs;
		for (uint32_t i = 0; i < n; i++)
			o.key[i] = offs[i] / HS_DEV_ALIGN << 32 | i;
		/* no room for the radix sort's second array: sort in place */
		if (n >= RADIX_MIN)
			tmp = hu_malloc_huge(n * sizeof(*tmp));
		if (tmp) {
			uint64_t *k = radix_keys(o.key, tmp, n, 64 -
						 (unsigned int)__builtin_clzll(top));

			free(k == tmp ? o.key : tmp);
			o.key = k;
		} else {
			sort_key(o.key, n);
		}
		return o;
	}
	o.at = hu_malloc_huge((n ?: 1) * sizeof(*o.at));
	if (o.at) {
		for (uint32_t i = 0; i < n; i++)
			o.at[i] = (struct at){ offs[i], i };
		sort_at(o.at, n);
	}
	free(offs);
	return o;
}

/*
 * The distinct offsets, in the order first met (d), found through an
 * open-addressing table of their indices + 1 with twice d's room: both
 * double together, from DISTINCT_FIRST.  Where offsets repeat (a decode
 * plan's 146,271 intervals at 100k operators have 980) this and a sort
 * of each offset once cost a fifth of a sort of every interval; where
 * most are distinct (DeepSeek-V2-Lite training: 23,499 of 38,818) the
 * sort of every interval is the cheaper.  The first DISTINCT_PROBE
 * intervals decide: once more than a quarter of them are distinct, all
 * are sorted.
 */
#define DISTINCT_FIRST	256U
#define DISTINCT_PROBE	4096U

struct distinct {
	uint64_t *d;
	uint32_t *tab;
	uint32_t nd, cap;
	unsigned int shift;	/* the table has 2^(64 - shift) slots */
};

static uint32_t distinct_slot(uint64_t off, unsigned int shift)
{
	return (uint32_t)(off / HS_DEV_ALIGN * 0x9e3779b97f4a7c15ULL >> shift);
}

static int distinct_grow(struct distinct *x)
{
	uint32_t cap = x->cap ? 2 * x->cap : DISTINCT_FIRST, mask, h;
	uint64_t *d;

	if (x->cap > UINT32_MAX / 4)
		return -ENOMEM;
	d = hu_realloc_huge(x->d, cap * sizeof(*d));
	if (!d)
		return -ENOMEM;
	x->d = d;
	free(x->tab);
	x->tab = hu_calloc_huge(2 * (size_t)cap, sizeof(*x->tab));
	if (!x->tab)
		return -ENOMEM;
	x->cap = cap;
	x->shift = 63 - (unsigned int)__builtin_ctz(cap);
	mask = 2 * cap - 1;
	for (uint32_t k = 0; k < x->nd; k++) {
		for (h = distinct_slot(d[k], x->shift); x->tab[h];
		     h = (h + 1) & mask)
			;
		x->tab[h] = k + 1;
	}
	return 0;
}

/*
 * Offsets @from to @to of @offs: each one's index among the distinct
 * ones into @slot.  Return: 0, -ENOMEM, or 1 as soon as more than @most
 * are distinct.  The table and array are read through locals: the
 * stores to @slot could alias x's fields, read again for each offset.
 */
static int distinct_of(struct distinct *x, const uint64_t *offs,
		       uint32_t from, uint32_t to, uint32_t most,
		       uint32_t *slot)
{
	uint32_t i = from;

	while (i < to) {
		uint32_t *tab = x->tab, nd = x->nd, mask = 2 * x->cap - 1;
		uint32_t room = most < x->cap ? most + 1 : x->cap;
		unsigned int shift = x->shift;
		uint64_t *d = x->d;

		for (; i < to && nd < room; i++) {
			uint64_t g = offs[i];
			uint32_t h = distinct_slot(g, shift), k;

			while ((k = tab[h]) && d[k - 1] != g)
				h = (h + 1) & mask;
			if (!k) {
				d[nd++] = g;
				k = nd;
				tab[h] = k;
			}
			slot[i] = k - 1;
		}
		x->nd = nd;
		if (nd > most)
			return 1;
		if (i < to && distinct_grow(x))
			return -ENOMEM;
	}
	return 0;
}

/*
 * w->off and w->pos from every interval's offset in order: a position
 * for each run of one offset.
 */
static int by_sorting(const struct hyper_schedule *s, struct sweep *w,
		      uint32_t n, uint64_t *offs)
{
	uint64_t last = UINT64_MAX, *off = NULL;	/* offsets < 2^48 */
	uint32_t nd = 0, *pos = w->pos;
	const struct order o = offset_order(s, offs, n);
	int ret = 0;

	if (o.key || o.at)
		off = hu_malloc_huge((n ?: 1) * sizeof(*off));
	if (!off)
		ret = -ENOMEM;
	for (uint32_t q = 0; !ret && q < n; q++) {
		uint64_t x = ord_off(&o, q);

		if (x != last) {
			off[nd++] = x;
			last = x;
		}
		pos[ord_idx(&o, q)] = nd - 1;
	}
	w->off = off;
	w->nil = nd;
	free(o.key);
	free(o.at);
	return ret;
}

/*
 * w->off and w->pos from the distinct offsets of @x, each interval's
 * index among them already in w->pos: the distinct ones in order, then
 * each index made its position through @x's table, no longer looked up.
 */
static int by_distinct(const struct hyper_schedule *s, struct sweep *w,
		       uint32_t n, struct distinct *x)
{
	uint32_t *perm = x->tab;
	const struct order o = offset_order(s, x->d, x->nd);
	int ret = o.key || o.at ? 0 : -ENOMEM;

	x->d = NULL;	/* offset_order() has it */
	if (!ret)
		w->off = hu_malloc_huge((x->nd ?: 1) * sizeof(*w->off));
	if (!ret && !w->off)
		ret = -ENOMEM;
	for (uint32_t q = 0; !ret && q < x->nd; q++) {
		perm[ord_idx(&o, q)] = q;
		w->off[q] = ord_off(&o, q);
	}
	for (uint32_t i = 0; !ret && i < n; i++)
		w->pos[i] = perm[w->pos[i]];
	w->nil = x->nd;
	free(o.key);
	free(o.at);
	return ret;
}

/*
 * The distinct offsets in ascending order, w->off, and each interval's
 * position among them, w->pos.  @offs (each residency's offset, from
 * check_each()) is freed.
 */
static int by_position(const struct hyper_schedule *s, struct sweep *w,
		       uint32_t n, uint64_t *offs)
{
	uint32_t probe = n < DISTINCT_PROBE ? n : DISTINCT_PROBE;
	struct distinct x = { 0 };
	int ret;

	w->pos = hu_malloc_huge((n ?: 1) * sizeof(*w->pos));
	if (!w->pos) {
		free(offs);
		return -ENOMEM;
	}
	ret = distinct_of(&x, offs, 0, probe, DISTINCT_PROBE / 4, w->pos);
	/* none at all: by_distinct() would take no array for out of memory */
	if (ret == 1 || (!ret && !n)) {
		free(x.d);
		free(x.tab);
		return by_sorting(s, w, n, offs);
	}
	if (!ret)
		ret = distinct_of(&x, offs, probe, n, UINT32_MAX, w->pos);
	free(offs);
	if (!ret)
		ret = by_distinct(s, w, n, &x);
	free(x.d);
	free(x.tab);
	return ret;
}

/*
 * No two residencies live at the same time share a byte: a sweep over
 * time keeps the live ones as a set ordered by offset, disjoint so far,
 * so a new one need only be checked against its two neighbours: the
 * live one nearest below if it reaches the new one, else the one nearest
 * above.  A live one at the new one's own offset (one at most) is its
 * neighbour above here, and was its neighbour below when the set held
 * intervals ranked by offset and index: either way it is the one named,
 * as nothing live below can reach the offset it holds.  @offs is each
 * residency's offset (check_each()), freed here.
 */
static int check_overlap(const struct hyper_schedule *s,
			 const struct hu_resid *v, uint32_t n, uint64_t *offs,
			 struct hs_err *e)
{
	struct sweep w = { .v = v };
	int ret = by_position(s, &w, n, offs);

	if (!ret && ranks_init(&w.live, w.nil ?: 1))
		ret = -ENOMEM;
	if (!ret) {
		w.ln = hu_malloc_huge(((size_t)w.nil + 1) * sizeof(*w.ln));
		w.occ = hu_malloc_huge((w.nil ?: 1) * sizeof(*w.occ));
		if (!w.ln || !w.occ)
			ret = -ENOMEM;
		else
			w.ln[w.nil] = (struct link){ w.nil, w.nil };	/* empty */
	}
	for (uint32_t i = 0; !ret && i < n; i++) {
		uint32_t p = w.pos[i], lo, hi, other = UINT32_MAX;
		uint64_t off = w.off[p];
		bool kept;
		char x[300], y[300], where[200];

		/* the live one nearest below, else the one nearest above */
		kept = neighbours(&w, p, i, &lo, &hi);
		if (lo != w.nil && w.off[lo] + v[w.occ[lo]].bytes > off)
			other = w.occ[lo];
		else if (hi != w.nil && off + v[i].bytes > w.off[hi])
			other = w.occ[hi];
		if (other != UINT32_MAX) {
			ival_desc(x, sizeof(x), s, &v[other]);
			ival_desc(y, sizeof(y), s, &v[i]);
			where_desc(where, sizeof(where), s, v[i].step);
			hs_errf(e, "arena: %s and %s are resident together %s and overlap",
				x, y, where);
			ret = -EBADMSG;
			break;
		}
		if (kept)
			w.occ[p] = i;	/* in the set and list, between lo and hi */
		else
			join(&w, p, i, lo, hi);
	}
	ranks_free(&w.live);
	free(w.ln);
	free(w.occ);
	free(w.pos);
	free(w.off);
	return ret;
}

/**
 * hs_check_offsets() - the schedule's own layout against its residencies
 * @s:	a validated schedule with HYPER_SCHED_ARENA or "arena_offsets"
 * @v:	its residencies (hs_validate())
 * @n:	how many
 * @e:	the first rule broken
 *
 * Every residency has an offset, aligned to HS_DEV_ALIGN and inside
 * arena_bytes; no two that are resident together overlap.  (The budget
 * bounds residency, as everywhere in the format; keeping the arena in the
 * user's budget is the planner's job.)  The executor places tensors where
 * this accepted.
 *
 * Return: 0, -EBADMSG or -ENOMEM.
 */
int hs_check_offsets(const struct hyper_schedule *s, const struct hu_resid *v,
		     uint32_t n, struct hs_err *e)
{
	uint64_t *off;
	int ret;

	if (!(s->flags & HYPER_SCHED_ARENA)) {
		for (uint32_t t = 0; t < s->nr_tensors; t++)
			if (s->tensors[t].nr_plan_off) {
				hs_errf(e, "tensors[%u].arena_offsets: given without the schedule's \"arena_bytes\"",
					t);
				return -EBADMSG;
			}
		return 0;
	}
	/*
	 * hyper_set_arena() rounds the arena's size down to the alignment:
	 * an arena_bytes off it could not be given exactly.
	 */
	if (s->arena_bytes % HYPER_ARENA_ALIGN) {
		hs_errf(e, "arena_bytes: %llu is not a multiple of %u (HYPER_ARENA_ALIGN): round it up",
			(unsigned long long)s->arena_bytes, HYPER_ARENA_ALIGN);
		return -EBADMSG;
	}
	off = hu_malloc_huge((n ?: 1) * sizeof(*off));
	if (!off)
		return -ENOMEM;
	ret = check_each(s, v, n, off, e);
	if (ret)
		free(off);
	else
		ret = check_overlap(s, v, n, off, e);
	return ret;
}
