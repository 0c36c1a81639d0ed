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

#include <hyper/residency.h>

#include "schedule.h"
#include "util/units.h"

struct replay {
	struct hyper_schedule *s;
	uint8_t *st;
	uint64_t resident;
	uint64_t peak;
	struct hs_err *e;
};

static int over_budget(struct replay *r, const char *where, const char *what)
{
	char have[32], budget[32];

	if (r->resident > r->peak)
		r->peak = r->resident;
	if (!(r->s->flags & HYPER_SCHED_BUDGET) || r->resident <= r->s->budget)
		return 0;
	hu_fmt_bytes(have, sizeof(have), r->resident, 1);
	hu_fmt_bytes(budget, sizeof(budget), r->s->budget, 1);
	hs_errf(r->e, "%s: device residency %s (%" PRIu64 " bytes) exceeds budget %s (%" PRIu64 " bytes) (%s)",
		where, have, r->resident, budget, r->s->budget, what);
	return -EBADMSG;
}

/* The rules are <hyper/residency.h>'s; this adds the byte count. */
static int apply(struct replay *r, const char *where, const struct hyper_cop *c)
{
	struct hs_tensor *t = &r->s->tensors[c->tensor];
	uint8_t *st = &r->st[c->tensor];
	char what[200];
	int why;

	if (!hyper_cache_op_name(c->op)) {
		hs_errf(r->e, "%s: unknown cache op %u", where, c->op);
		return -EBADMSG;
	}
	why = hyper_residency_step(st, c->op);
	if (why) {
		hs_errf(r->e, "%s: %s of tensor \"%s\" %s", where,
			hs_op_name(c->op), t->id, hyper_residency_reason(why));
		return -EBADMSG;
	}
	switch (c->op) {
	case HYPER_OP_PREFETCH:
		t->flags |= HYPER_TENSOR_NEEDS_POOL | HYPER_TENSOR_NEEDS_DEVICE;
		r->resident += t->bytes;
		snprintf(what, sizeof(what), "after prefetch of \"%s\"", t->id);
		return over_budget(r, where, what);
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
	char where[200];
	uint32_t j;
	int ret;

	/* Operator names are free text: keep messages bounded. */
	snprintf(where, sizeof(where), "step %u (%.120s)", i, step->op);
	for (j = 0; j < step->nr_before; j++) {
		ret = apply(r, where, &step->before[j]);
		if (ret)
			return ret;
	}
	for (j = 0; j < step->nr_uses; j++) {
		uint32_t ti = step->uses[j];

		if (hyper_residency_check(r->st[ti], HYPER_RES_USE)) {
			hs_errf(r->e, "%s: tensor \"%s\" used while not resident",
				where, r->s->tensors[ti].id);
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
	ret = over_budget(r, where, "after the operator's defines");
	if (ret)
		return ret;
	for (j = 0; j < step->nr_after; j++) {
		ret = apply(r, where, &step->after[j]);
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
	ret = over_budget(&r, "schedule start",
			  "tensors whose home is \"device\"");
	for (i = 0; !ret && i < s->nr_steps; i++)
		ret = replay_step(&r, i);
	if (!ret)
		s->peak = r.peak;
	free(r.st);
	return ret;
}
