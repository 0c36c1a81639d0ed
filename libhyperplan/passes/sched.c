// SPDX-License-Identifier: GPL-2.0
/*
 * The one place where offload decisions become cache operators, for the
 * planner and every baseline alike.  It replays the state machine while
 * it writes, so what it emits is valid by construction: a store is added
 * where a detach would drop the only copy of data still needed, and one
 * is dropped where the pool copy is already valid.
 */
#include <stdlib.h>
#include <string.h>

#include "sched.h"

enum { CL_STORE, CL_DETACH_LIVE, CL_DETACH_DEAD, CL_PREFETCH };

struct item {
	uint32_t slot;
	uint8_t cls;
	uint32_t key;		/* prefetches in deadline order */
	uint32_t t;
};

struct emit {
	const struct life *lf;
	struct sched *s;
	struct item *it;
	size_t n, cap;
	uint8_t *res, *pool;
	size_t cap_cops;
	struct hp_err *e;
};

static void item(struct emit *m, int64_t slot, uint8_t cls, uint32_t key,
		 uint32_t t)
{
	grow(&m->it, &m->cap, m->n, sizeof(*m->it));
	m->it[m->n++] = (struct item){ slot, cls, key, t };
}

static bool item_before(const struct item *a, const struct item *b)
{
	if (a->cls != b->cls)
		return a->cls < b->cls;
	if (a->key != b->key)
		return a->key < b->key;
	return a->t < b->t;
}

static int cmp_item(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;

	return item_before(a, b) ? -1 : item_before(b, a);
}

/* Most slots hold a few items: qsort's setup would cost more. */
static void insertion_sort(struct item *a, size_t n)
{
	struct item x;
	size_t i, j;

	for (i = 1; i < n; i++) {
		x = a[i];
		for (j = i; j && item_before(&x, &a[j - 1]); j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/* Bucket by slot, then order each slot: O(n log of the largest slot). */
static void sort_items(struct emit *m, uint32_t nslots)
{
	size_t *off = xcalloc(nslots + 2, sizeof(*off)), i;
	struct item *out = xmalloc((m->n ? m->n : 1) * sizeof(*out));

	for (i = 0; i < m->n; i++)
		off[m->it[i].slot + 2]++;
	for (i = 0; i < nslots; i++)
		off[i + 2] += off[i + 1];
	for (i = 0; i < m->n; i++)
		out[off[m->it[i].slot + 1]++] = m->it[i];
	for (i = 0; i < nslots; i++)
		if (off[i + 1] - off[i] > 16)
			qsort(out + off[i], off[i + 1] - off[i], sizeof(*out),
			      cmp_item);
		else if (off[i + 1] - off[i] > 1)
			insertion_sort(out + off[i], off[i + 1] - off[i]);
	free(off);
	free(m->it);
	m->it = out;
	m->cap = m->n;
}

static void homes(struct emit *m, const struct evict *ev, size_t nev)
{
	const struct life *lf = m->lf;
	const struct graph *g = lf->g;
	uint32_t t;
	size_t i;

	for (t = 0; t < g->nt; t++) {
		if (!nr_accesses(lf, t))
			m->s->home[t] = g->t[t].flags & TF_LIVE_IN ? HYPER_HOME_POOL :
					HYPER_HOME_NONE;
		else
			m->s->home[t] = gap_live(lf, t, 0) ? HYPER_HOME_DEVICE :
					HYPER_HOME_NONE;
	}
	for (i = 0; i < nev; i++)
		if (ev[i].a < 0 && ev[i].detach_slot < 0)
			m->s->home[ev[i].t] = HYPER_HOME_POOL;
}

static void evict_items(struct emit *m, const struct evict *v)
{
	if (v->detach_slot >= 0) {
		if (v->store_slot >= 0)
			item(m, v->store_slot, CL_STORE, 0, v->t);
		item(m, v->detach_slot, CL_DETACH_LIVE, 0, v->t);
	}
	if (v->j < (int32_t)m->lf->n)
		item(m, 2 * v->fetch_step, CL_PREFETCH, v->j, v->t);
}

static void put(struct emit *m, uint32_t t, uint8_t kind)
{
	struct sched *s = m->s;

	grow(&s->cops, &m->cap_cops, s->ncops, sizeof(*s->cops));
	s->cops[s->ncops++] = (struct cop){ t, kind };
}

static int bad(struct emit *m, uint32_t slot, const char *what, uint32_t t)
{
	uint32_t k = slot / 2;

	return hp_errf(m->e, "internal: step %u (%s): %s of tensor \"%s\"", k,
		       m->lf->g->op[m->lf->order[k]].id, what,
		       m->lf->g->t[t].id);
}

/* Applies one decision to the state machine; emits what it needs. */
static int apply(struct emit *m, const struct item *x)
{
	uint32_t t = x->t;

	switch (x->cls) {
	case CL_STORE:
		if (m->res[t] && !m->pool[t]) {
			put(m, t, HYPER_OP_STORE);
			m->pool[t] = 1;
		}
		return 0;
	case CL_DETACH_LIVE:
	case CL_DETACH_DEAD:
		if (!m->res[t])
			return bad(m, x->slot, "detach while not resident", t);
		if (x->cls == CL_DETACH_LIVE && !m->pool[t]) {
			put(m, t, HYPER_OP_STORE);
			m->pool[t] = 1;
		}
		put(m, t, HYPER_OP_DETACH);
		m->res[t] = 0;
		return 0;
	default:
		if (m->res[t] || !m->pool[t])
			return bad(m, x->slot, "prefetch without a pool copy", t);
		put(m, t, HYPER_OP_PREFETCH);
		m->res[t] = 1;
		return 0;
	}
}

static void run_op(struct emit *m, uint32_t k)
{
	const struct graph *g = m->lf->g;
	const struct op *o = &g->op[m->lf->order[k]];
	uint32_t i;

	for (i = 0; i < o->n_out; i++) {
		m->res[op_out(g, o)[i]] = 1;
		m->pool[op_out(g, o)[i]] = 0;
	}
}

static int check_uses(struct emit *m, uint32_t k)
{
	const struct graph *g = m->lf->g;
	const struct op *o = &g->op[m->lf->order[k]];
	uint32_t i;

	for (i = 0; i < o->n_in; i++)
		if (!m->res[op_in(g, o)[i]])
			return bad(m, 2 * k, "use while not resident",
				   op_in(g, o)[i]);
	return 0;
}

/*
 * Dead gaps: free the value after the access that last needed it.  They
 * sort between the live detaches and the prefetches of their slot, in
 * tensor order (item_before()); life_build() keeps them in that order.
 */
static int dead(struct emit *m, uint32_t slot)
{
	const struct life *lf = m->lf;
	size_t i, k = slot / 2;
	int ret = 0;

	for (i = lf->dead_off[k]; i < lf->dead_off[k + 1] && !ret; i++) {
		struct item x = { slot, CL_DETACH_DEAD, 0, lf->dead_t[i] };

		ret = apply(m, &x);
	}
	return ret;
}

static int replay(struct emit *m)
{
	struct sched *s = m->s;
	uint32_t slot, nslots = 2 * s->n, t;
	size_t x = 0;
	int ret = 0;

	for (t = 0; t < s->g->nt; t++) {
		m->res[t] = s->home[t] == HYPER_HOME_DEVICE;
		m->pool[t] = s->home[t] == HYPER_HOME_POOL;
	}
	for (slot = 0; slot < nslots && !ret; slot++) {
		s->slot_off[slot] = s->ncops;
		if (slot & 1)
			run_op(m, slot / 2);
		for (; x < m->n && m->it[x].slot == slot &&
		     m->it[x].cls < CL_DETACH_DEAD && !ret; x++)
			ret = apply(m, &m->it[x]);
		if (slot & 1)
			ret = ret ? ret : dead(m, slot);
		for (; x < m->n && m->it[x].slot == slot && !ret; x++)
			ret = apply(m, &m->it[x]);
		if (!(slot & 1) && !ret)
			ret = check_uses(m, slot / 2);
	}
	s->slot_off[nslots] = s->ncops;
	return ret;
}

int sched_build(struct sched *s, const struct life *lf,
		const struct evict *ev, size_t nev, struct hp_err *e)
{
	struct emit m = { .lf = lf, .s = s, .e = e };
	const struct graph *g = lf->g;
	size_t i;
	int ret;

	memset(s, 0, sizeof(*s));
	s->g = g;
	s->order = lf->order;
	s->n = lf->n;
	s->home = xcalloc(g->nt, 1);
	s->slot_off = xcalloc(2 * (size_t)s->n + 1, sizeof(*s->slot_off));
	m.res = xcalloc(g->nt, 1);
	m.pool = xcalloc(g->nt, 1);
	homes(&m, ev, nev);
	for (i = 0; i < nev; i++)
		evict_items(&m, &ev[i]);
	sort_items(&m, 2 * s->n);
	ret = replay(&m);
	free(m.it);
	free(m.res);
	free(m.pool);
	if (ret)
		sched_free(s);
	return ret;
}

void sched_free(struct sched *s)
{
	free(s->home);
	free(s->slot_off);
	free(s->cops);
	free(s->res_off);
	free(s->res_first);
	memset(s, 0, sizeof(*s));
}
