// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policies/list.h"

const char *const hyper_plan__policy_name[POL_NR] = {
	[POL_NONE] = "none", [POL_PLAN] = "plan",
	[POL_DISTANCE] = "distance", [POL_GREEDY] = "greedy",
};

int hyper_plan__policy_parse(const char *s)
{
	int i;

	for (i = 0; i < POL_NR; i++)
		if (!strcmp(s, hyper_plan__policy_name[i]))
			return i;
	return -1;
}

/* What the memo keeps of its schedules at most (list.h). */
#define HP_POLMEMO_MAX	(64u << 20)

/*
 * One search's outcome: what it returned, said and handed out, by the
 * problem it searched (the same job's orders and profile, the same goal).
 */
struct hp_polmemo_ent {
	int pol;
	struct goal goal;
	const struct profile *p;
	const struct life *lf, *refined;
	int ret;
	struct hp_err e;
	struct result r;
	size_t bytes;
};

static size_t sched_bytes(const struct sched *s)
{
	return (s->home ? s->g->nt : 0) +
	       (s->slot_off ? (2 * (size_t)s->n + 1) * sizeof(*s->slot_off) : 0) +
	       (s->cops ? s->ncops * sizeof(*s->cops) : 0);
}

static void *dup_of(struct hp_mem *mem, const void *src, size_t n, int *ret)
{
	void *d;

	if (!src || *ret)
		return NULL;
	d = hyper_plan__malloc(mem, n ? n : 1);
	if (!d)
		*ret = -ENOMEM;
	else
		memcpy(d, src, n);
	return d;
}

/*
 * @d becomes a copy of @s, a search's result (a schedule with no layout:
 * hyper_plan__layout() comes after the search).  0, or -ENOMEM with @d
 * empty.
 */
static int result_copy(struct result *d, const struct result *s,
		       struct hp_mem *mem)
{
	const struct sched *ss = &s->s;
	int ret = 0;

	*d = *s;
	d->s.home = dup_of(mem, ss->home, ss->home ? ss->g->nt : 0, &ret);
	d->s.slot_off = dup_of(mem, ss->slot_off, (2 * (size_t)ss->n + 1) *
			       sizeof(*ss->slot_off), &ret);
	d->s.cops = dup_of(mem, ss->cops, ss->ncops * sizeof(*ss->cops), &ret);
	if (ret) {
		hyper_plan__result_free(d);
		return ret;
	}
	return 0;
}

static bool memo_of(int pol, const struct problem *pb)
{
	return pb->memo && (pb->goal.budget || pb->memo->rows) &&
	       (pol == POL_DISTANCE || pol == POL_GREEDY);
}

static struct hp_polmemo_ent *memo_find(struct hp_polmemo *m, int pol,
					const struct problem *pb)
{
	for (unsigned int k = 0; k < HP_POLMEMO_N; k++) {
		struct hp_polmemo_ent *me = m->ent[k];

		if (me && me->pol == pol && me->p == pb->p && me->lf == pb->lf &&
		    me->refined == pb->refined &&
		    me->goal.budget == pb->goal.budget &&
		    me->goal.max_slow == pb->goal.max_slow)
			return me;
	}
	return NULL;
}

/*
 * Keeps a copy of @r (returned as @ret, said in @e) in place of the
 * oldest, and drops the oldest of the others until all fit in
 * HP_POLMEMO_MAX.  A result that carries a layout, or alone is larger,
 * is not kept.  0, or -ENOMEM.
 */
static int memo_keep(struct hp_polmemo *m, int pol, const struct problem *pb,
		     int ret, const struct hp_err *e, const struct result *r)
{
	struct hp_polmemo_ent *me, *gone[HP_POLMEMO_N] = { NULL };
	size_t bytes = sched_bytes(&r->s);
	unsigned int k, ngone = 0;

	if (r->s.res_off || r->s.res_first || bytes > HP_POLMEMO_MAX)
		return 0;
	me = hyper_plan__malloc(pb->mem, sizeof(*me));
	if (!me)
		return -ENOMEM;
	*me = (struct hp_polmemo_ent){ pol, pb->goal, pb->p, pb->lf,
				       pb->refined, ret, .bytes = bytes };
	if (ret)
		me->e = *e;
	if (result_copy(&me->r, r, pb->mem)) {
		free(me);
		return -ENOMEM;
	}
	k = m->next;
	m->next = (k + 1) % HP_POLMEMO_N;
	/* the oldest's slot, which @me takes, then the next oldest */
	for (unsigned int i = 0; i < HP_POLMEMO_N;
	     i++, k = (k + 1) % HP_POLMEMO_N) {
		if (!m->ent[k] || (i && m->bytes + bytes <= HP_POLMEMO_MAX))
			continue;
		m->bytes -= m->ent[k]->bytes;
		gone[ngone++] = m->ent[k];
		m->ent[k] = NULL;
	}
	m->ent[(m->next + HP_POLMEMO_N - 1) % HP_POLMEMO_N] = me;
	m->bytes += bytes;
	for (k = 0; k < ngone; k++) {
		hyper_plan__result_free(&gone[k]->r);
		free(gone[k]);
	}
	return 0;
}

void hyper_plan__polmemo_free(struct hp_polmemo *m)
{
	for (unsigned int k = 0; k < HP_POLMEMO_N; k++) {
		if (m->ent[k])
			hyper_plan__result_free(&m->ent[k]->r);
		free(m->ent[k]);
		m->ent[k] = NULL;
	}
	free(m->seen);
	m->seen = NULL;
	m->nseen = 0;
	memset(m->zero, 0, sizeof(m->zero));
	m->zero_next = 0;
	m->next = 0;
	m->bytes = 0;
	hyper_plan__simbuf_free(&m->sim);
}

static int run(int pol, const struct problem *pb, struct result *r,
	       struct hp_err *e)
{
	switch (pol) {
	case POL_NONE: return hyper_plan__run_none(pb, r, e);
	case POL_PLAN: return hyper_plan__run_plan_best(pb, r, e);
	case POL_DISTANCE: return hyper_plan__run_distance(pb, r, e);
	default: return hyper_plan__run_greedy(pb, r, e);
	}
}

int hyper_plan__run_policy(int pol, const struct problem *pb, struct result *r,
	       struct hp_err *e)
{
	struct hp_polmemo_ent *me;
	int ret;

	if (!memo_of(pol, pb))
		return run(pol, pb, r, e);
	me = memo_find(pb->memo, pol, pb);
	if (me) {
		double t0 = hyper_plan__now_ns();

		if (result_copy(r, &me->r, pb->mem)) {
			memset(r, 0, sizeof(*r));
			return hyper_plan__nomem(e);
		}
		/* what this search cost: the copy */
		r->ms = (hyper_plan__now_ns() - t0) / 1e6;
		pb->memo->hits++;
		if (me->ret)
			*e = me->e;
		return me->ret;
	}
	ret = run(pol, pb, r, e);
	if (ret != -ENOMEM && memo_keep(pb->memo, pol, pb, ret, e, r)) {
		hyper_plan__result_free(r);
		return hyper_plan__nomem(e);
	}
	return ret;
}
