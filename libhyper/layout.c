// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Static placement of the device arena, worked out once per schedule.
 *
 * Placing tensors as they come (best fit at run time) fragments a tight
 * arena: streamed weights of several sizes and short-lived activations
 * leave the free space in pieces, and a large prefetch finds no hole
 * although the bytes are there.  A schedule says in advance when every
 * tensor becomes resident and when it is detached, so, as compilers plan
 * buffers, every residency interval gets its offset here: greedy by size,
 * each at the lowest offset no interval overlapping it in time holds.  The
 * arena this layout needs is reported as hyper_schedule_info.arena_bytes,
 * usually within a few percent of the peak residency.
 *
 * Time is a counter over the schedule's events (cache ops and defines in
 * order).  A detached tensor's space is free, in the layout, from its
 * detach on; at run time a store still reading it holds it until done,
 * and the executor waits for that before reusing the bytes.
 */
#include <errno.h>
#include <stdlib.h>

#include "schedule.h"

/* Above this many intervals the quadratic placement is skipped. */
#define HS_LAYOUT_MAX	16384

struct ival {
	uint64_t start, end, bytes, off;
	uint32_t tensor;
	uint32_t seq;		/* order of starts, for the per-tensor table */
};

struct lay {
	struct hyper_schedule *s;
	struct ival *v;
	uint32_t n, cap;
	uint32_t *open;		/* tensor -> interval index + 1 */
	uint64_t now;
};

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int begin(struct lay *l, uint32_t t)
{
	if (l->open[t])
		return 0;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 64;
		struct ival *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = (struct ival){
		.start = l->now, .end = UINT64_MAX, .tensor = t, .seq = l->n,
		.bytes = round_up(l->s->tensors[t].bytes, HS_DEV_ALIGN),
	};
	l->open[t] = ++l->n;
	return 0;
}

static void end(struct lay *l, uint32_t t)
{
	if (l->open[t])
		l->v[l->open[t] - 1].end = l->now;
	l->open[t] = 0;
}

static int ops(struct lay *l, const struct hyper_cop *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++, l->now++) {
		int ret = 0;

		if (c[i].op == HYPER_OP_PREFETCH)
			ret = begin(l, c[i].tensor);
		else if (c[i].op == HYPER_OP_DETACH)
			end(l, c[i].tensor);
		if (ret)
			return ret;
	}
	return 0;
}

/* The residency intervals, in the order the executor places them. */
static int collect(struct lay *l)
{
	struct hyper_schedule *s = l->s;
	int ret = 0;

	for (uint32_t t = 0; t < s->nr_tensors && !ret; t++)
		if (s->tensors[t].home == HYPER_HOME_DEVICE)
			ret = begin(l, t);
	l->now++;
	for (uint32_t i = 0; i < s->nr_steps && !ret; i++) {
		const struct hs_step *st = &s->steps[i];

		ret = ops(l, st->before, st->nr_before);
		for (uint32_t j = 0; j < st->nr_defines && !ret; j++, l->now++)
			ret = begin(l, st->defines[j]);
		if (!ret)
			ret = ops(l, st->after, st->nr_after);
	}
	return ret;
}

static int by_size(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_off(const void *a, const void *b)
{
	const struct ival *x = *(struct ival *const *)a;
	const struct ival *y = *(struct ival *const *)b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static int by_seq(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Greedy by size: the lowest gap among intervals that overlap in time. */
static uint64_t place_all(struct ival *v, uint32_t n, struct ival **tmp)
{
	uint64_t height = 0;

	qsort(v, n, sizeof(*v), by_size);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = 0;
		uint64_t off = 0;

		for (uint32_t j = 0; j < i; j++)
			if (v[j].start < v[i].end && v[i].start < v[j].end)
				tmp[k++] = &v[j];
		qsort(tmp, k, sizeof(*tmp), by_off);
		for (uint32_t j = 0; j < k; j++) {
			if (tmp[j]->off >= off + v[i].bytes)
				break;
			if (tmp[j]->off + tmp[j]->bytes > off)
				off = tmp[j]->off + tmp[j]->bytes;
		}
		v[i].off = off;
		if (off + v[i].bytes > height)
			height = off + v[i].bytes;
	}
	qsort(v, n, sizeof(*v), by_seq);
	return height;
}

/**
 * hs_layout() - give every residency interval of @s its arena offset
 * @s:	a validated schedule
 *
 * Sets s->arena_bytes and the per-tensor offset tables, or leaves
 * s->arena_bytes 0 (place at run time) for a schedule with more than
 * HS_LAYOUT_MAX intervals.
 *
 * Return: 0 or -ENOMEM.
 */
int hs_layout(struct hyper_schedule *s)
{
	struct lay l = { .s = s };
	struct ival **tmp = NULL;
	uint32_t *first = NULL;
	int ret;

	l.open = calloc(s->nr_tensors ?: 1, sizeof(*l.open));
	if (!l.open)
		return -ENOMEM;
	ret = collect(&l);
	if (ret || !l.n || l.n > HS_LAYOUT_MAX)
		goto out;
	tmp = malloc(l.n * sizeof(*tmp));
	s->res_off = malloc(l.n * sizeof(*s->res_off));
	first = calloc(s->nr_tensors + 1, sizeof(*first));
	if (!tmp || !s->res_off || !first) {
		ret = -ENOMEM;
		goto out;
	}
	s->arena_bytes = place_all(l.v, l.n, tmp);
	/* Offsets grouped by tensor, each group in the order of its starts. */
	for (uint32_t i = 0; i < l.n; i++)
		first[l.v[i].tensor + 1]++;
	for (uint32_t t = 0; t < s->nr_tensors; t++) {
		first[t + 1] += first[t];
		s->tensors[t].res_first = first[t];
	}
	for (uint32_t i = 0; i < l.n; i++)
		s->res_off[first[l.v[i].tensor]++] = l.v[i].off;
out:
	if (ret || !s->arena_bytes) {
		free(s->res_off);
		s->res_off = NULL;
		s->arena_bytes = 0;
	}
	free(first);
	free(tmp);
	free(l.v);
	free(l.open);
	return ret;
}
