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
#include "util/sort.h"
#include "util/units.h"

struct replay {
	struct hyper_schedule *s;
	uint8_t *st;
	uint64_t resident;
	uint64_t peak;
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
 * or at the start (@i UINT32_MAX).  The words are made only for the
 * message: a replay is a million steps, and each would format them.
 */
static int over_budget(struct replay *r, uint32_t i, uint32_t t)
{
	char have[32], budget[32], w[200], what[200];

	if (r->resident > r->peak)
		r->peak = r->resident;
	if (!(r->s->flags & HYPER_SCHED_BUDGET) || r->resident <= r->s->budget)
		return 0;
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

/* The rules are <hyper/residency.h>'s; this adds the byte count. */
static int apply(struct replay *r, uint32_t i, const struct hyper_cop *c)
{
	struct hs_tensor *t = &r->s->tensors[c->tensor];
	uint8_t *st = &r->st[c->tensor];
	char w[200];
	int why;

	if (!hyper_cache_op_name(c->op)) {
		hs_errf(r->e, "%s: unknown cache op %u",
			where(w, sizeof(w), r, i), c->op);
		return -EBADMSG;
	}
	why = hyper_residency_step(st, c->op);
	if (why) {
		hs_errf(r->e, "%s: %s of tensor \"%s\" %s",
			where(w, sizeof(w), r, i), hs_op_name(c->op), t->id,
			hyper_residency_reason(why));
		return -EBADMSG;
	}
	switch (c->op) {
	case HYPER_OP_PREFETCH:
		t->flags |= HYPER_TENSOR_NEEDS_POOL | HYPER_TENSOR_NEEDS_DEVICE;
		r->resident += t->bytes;
		return over_budget(r, i, c->tensor);
	case HYPER_OP_STORE:
		t->flags |= HYPER_TENSOR_NEEDS_POOL;
		return 0;
	default:
		r->resident -= t->bytes;
		return 0;
	}
}

static int replay_step(struct replay *r, uint32_t i)
{
	struct hs_step *step = &r->s->steps[i];
	char w[200];
	uint32_t j;
	int ret;

	for (j = 0; j < step->nr_before; j++) {
		ret = apply(r, i, &step->before[j]);
		if (ret)
			return ret;
	}
	for (j = 0; j < step->nr_uses; j++) {
		uint32_t ti = step->uses[j];

		if (hyper_residency_check(r->st[ti], HYPER_RES_USE)) {
			hs_errf(r->e, "%s: tensor \"%s\" used while not resident",
				where(w, sizeof(w), r, i), r->s->tensors[ti].id);
			return -EBADMSG;
		}
	}
	for (j = 0; j < step->nr_defines; j++) {
		uint32_t ti = step->defines[j];
		struct hs_tensor *t = &r->s->tensors[ti];

		if (!(r->st[ti] & HYPER_RES_DEVICE))
			r->resident += t->bytes;
		hyper_residency_step(&r->st[ti], HYPER_RES_DEFINE);
		t->flags |= HYPER_TENSOR_NEEDS_DEVICE;
	}
	ret = over_budget(r, i, UINT32_MAX);
	if (ret)
		return ret;
	for (j = 0; j < step->nr_after; j++) {
		ret = apply(r, i, &step->after[j]);
		if (ret)
			return ret;
	}
	return 0;
}

int hs_validate(struct hyper_schedule *s, struct hs_err *e)
{
	struct replay r = { .s = s, .e = e };
	uint32_t i;
	int ret;

	r.st = calloc(s->nr_tensors ?: 1, 1);
	if (!r.st)
		return -ENOMEM;
	for (i = 0; i < s->nr_tensors; i++) {
		struct hs_tensor *t = &s->tensors[i];

		t->flags = 0;
		r.st[i] = hyper_residency_start(t->home);
		if (r.st[i] & HYPER_RES_POOL)
			t->flags |= HYPER_TENSOR_NEEDS_POOL;
		if (r.st[i] & HYPER_RES_DEVICE) {
			t->flags |= HYPER_TENSOR_NEEDS_DEVICE;
			r.resident += t->bytes;
		}
	}
	ret = over_budget(&r, UINT32_MAX, UINT32_MAX);
	for (i = 0; !ret && i < s->nr_steps; i++)
		ret = replay_step(&r, i);
	if (!ret)
		s->peak = r.peak;
	free(r.st);
	return ret;
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

/* Each residency's count, alignment and range. */
static int check_each(const struct hyper_schedule *s, const struct hu_resid *v,
		      uint32_t n, struct hs_err *e)
{
	uint32_t *count = calloc(s->nr_tensors ?: 1, sizeof(*count));
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

struct active {
	uint64_t off, end;
	uint32_t i;
};

/* Index of the first active entry whose offset is >= @off. */
static uint32_t active_pos(const struct active *a, uint32_t na, uint64_t off)
{
	uint32_t lo = 0, hi = na;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* An interval's end, and its index: the order they leave the sweep. */
struct end {
	uint64_t end;
	uint32_t i;
};

static bool end_before(const struct end *a, const struct end *b)
{
	return a->end < b->end || (a->end == b->end && a->i < b->i);
}

HU_DEFINE_SORT(sort_ends, struct end, end_before)

/*
 * No two residencies live at the same time share a byte: a sweep over
 * time keeps the live ones sorted by offset, disjoint so far, so a new one
 * need only be checked against its two neighbours.
 */
static int check_overlap(const struct hyper_schedule *s,
			 const struct hu_resid *v, uint32_t n, struct hs_err *e)
{
	struct active *a = malloc((n ?: 1) * sizeof(*a));
	struct end *ends = malloc((n ?: 1) * sizeof(*ends));
	uint32_t na = 0, ne = 0;
	int ret = 0;

	if (!a || !ends) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		ends[i] = (struct end){ v[i].end, i };
	sort_ends(ends, n);
	for (uint32_t i = 0; i < n && !ret; i++) {
		const struct hs_tensor *t = &s->tensors[v[i].tensor];
		uint64_t off = t->plan_off[v[i].nth];
		uint32_t p, other = UINT32_MAX;
		char x[300], y[300], w[200];

		/* Those that ended before this one begins leave first. */
		for (; ne < n && ends[ne].end <= v[i].start; ne++) {
			const struct hu_resid *d = &v[ends[ne].i];
			uint64_t doff = s->tensors[d->tensor].plan_off[d->nth];

			p = active_pos(a, na, doff);
			while (p < na && a[p].i != ends[ne].i)
				p++;
			if (p < na) {
				memmove(&a[p], &a[p + 1], (na - p - 1) * sizeof(*a));
				na--;
			}
		}
		p = active_pos(a, na, off);
		if (p > 0 && a[p - 1].end > off)
			other = a[p - 1].i;
		else if (p < na && off + v[i].bytes > a[p].off)
			other = a[p].i;
		if (other != UINT32_MAX) {
			ival_desc(x, sizeof(x), s, &v[other]);
			ival_desc(y, sizeof(y), s, &v[i]);
			where_desc(w, sizeof(w), s, v[i].step);
			hs_errf(e, "arena: %s and %s are resident together %s and overlap",
				x, y, w);
			ret = -EBADMSG;
			break;
		}
		memmove(&a[p + 1], &a[p], (na - p) * sizeof(*a));
		a[p] = (struct active){ off, off + v[i].bytes, i };
		na++;
	}
out:
	free(ends);
	free(a);
	return ret;
}

/**
 * hs_check_offsets() - the schedule's own layout against its residencies
 * @s:	a validated schedule with HYPER_SCHED_ARENA or "arena_offsets"
 * @v:	its residencies (hs_intervals())
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
	ret = check_each(s, v, n, e);
	if (!ret)
		ret = check_overlap(s, v, n, e);
	return ret;
}
