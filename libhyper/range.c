// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Best fit rather than first fit: schedules stream large weights through
 * memory that also holds small activations, and best fit keeps the large
 * holes whole for the next weight.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "range.h"

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

uint64_t hx_range_round(const struct hx_range *r, uint64_t len)
{
	return round_up(len, r->align);
}

void hx_range_reset(struct hx_range *r)
{
	r->n = 0;
	r->used = 0;
	r->live = 0;
	if (r->size) {
		r->v[0].off = 0;
		r->v[0].len = r->size;
		r->n = 1;
	}
}

int hx_range_init(struct hx_range *r, uint64_t size, uint64_t align)
{
	memset(r, 0, sizeof(*r));
	if (!align || (align & (align - 1)))
		return -EINVAL;
	r->align = align;
	r->size = size & ~(align - 1);
	r->cap = 16;
	r->v = malloc(r->cap * sizeof(*r->v));
	if (!r->v)
		return -ENOMEM;
	hx_range_reset(r);
	return 0;
}

void hx_range_fini(struct hx_range *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/*
 * Free extents are separated by allocations, so there are at most
 * live + 1 of them: growing the table in alloc means free never fails.
 */
static int reserve(struct hx_range *r, uint32_t want)
{
	struct hx_extent *v;
	uint32_t cap = r->cap;

	if (want <= cap)
		return 0;
	while (cap < want)
		cap *= 2;
	v = realloc(r->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->v = v;
	r->cap = cap;
	return 0;
}

static void insert_at(struct hx_range *r, uint32_t i, uint64_t off, uint64_t len)
{
	memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof(*r->v));
	r->v[i].off = off;
	r->v[i].len = len;
	r->n++;
}

static void remove_at(struct hx_range *r, uint32_t i)
{
	memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof(*r->v));
	r->n--;
}

/*
 * Large blocks from the top, first fit downwards: weights that stream
 * through the arena then pack against its end, and the small, short-lived
 * activations below them cannot cut the space a large one needs next.
 */
int hx_range_alloc_high(struct hx_range *r, uint64_t len, uint64_t *offp)
{
	uint32_t i;

	if (!len || len > r->size)
		return -ENOMEM;
	len = round_up(len, r->align);
	for (i = r->n; i-- > 0; ) {
		uint64_t end = r->v[i].off + r->v[i].len;

		if (r->v[i].len < len)
			continue;
		if (reserve(r, r->live + 2))
			return -ENOMEM;
		*offp = (end - len) & ~(r->align - 1);
		if (*offp == r->v[i].off)
			remove_at(r, i);
		else
			r->v[i].len = *offp - r->v[i].off;
		r->used += len;
		r->live++;
		return 0;
	}
	return -ENOMEM;
}

/* Take exactly [@off, @off + @len): -EBUSY if any of it is allocated. */
int hx_range_alloc_at(struct hx_range *r, uint64_t off, uint64_t len)
{
	uint32_t lo = 0, hi = r->n;
	uint64_t end, xend;

	len = round_up(len, r->align);
	if (!len || off % r->align || off + len > r->size || off + len < off)
		return -EINVAL;
	/* The last free extent starting at or before @off. */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (r->v[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -EBUSY;
	lo--;
	end = off + len;
	xend = r->v[lo].off + r->v[lo].len;
	if (end > xend)
		return -EBUSY;
	if (reserve(r, r->live + 2))
		return -ENOMEM;
	if (end < xend) {
		if (off > r->v[lo].off) {
			insert_at(r, lo + 1, end, xend - end);
			r->v[lo].len = off - r->v[lo].off;
		} else {
			r->v[lo].off = end;
			r->v[lo].len = xend - end;
		}
	} else if (off > r->v[lo].off) {
		r->v[lo].len = off - r->v[lo].off;
	} else {
		remove_at(r, lo);
	}
	r->used += len;
	r->live++;
	return 0;
}

/* @align (a power of two, or 0 for the range's) applies to the start only. */
int hx_range_alloc(struct hx_range *r, uint64_t len, uint64_t align,
		   uint64_t *offp)
{
	uint64_t best_waste = UINT64_MAX, start = 0, off, end;
	uint32_t i, best = UINT32_MAX;

	if (!len || len > r->size)
		return -ENOMEM;
	if (align < r->align)
		align = r->align;
	len = round_up(len, r->align);
	for (i = 0; i < r->n; i++) {
		off = round_up(r->v[i].off, align);
		end = r->v[i].off + r->v[i].len;
		if (off >= end || end - off < len)
			continue;
		if (r->v[i].len - len < best_waste) {
			best_waste = r->v[i].len - len;
			best = i;
			start = off;
			if (!best_waste)
				break;
		}
	}
	if (best == UINT32_MAX || reserve(r, r->live + 2))
		return -ENOMEM;

	off = r->v[best].off;
	end = off + r->v[best].len;
	/* Split into [off, start) + allocation + [start + len, end). */
	if (start + len < end) {
		if (start > off) {
			insert_at(r, best + 1, start + len, end - start - len);
			r->v[best].len = start - off;
		} else {
			r->v[best].off = start + len;
			r->v[best].len = end - start - len;
		}
	} else if (start > off) {
		r->v[best].len = start - off;
	} else {
		remove_at(r, best);
	}
	r->used += len;
	r->live++;
	*offp = start;
	return 0;
}

int hx_range_free(struct hx_range *r, uint64_t off, uint64_t len)
{
	uint32_t lo = 0, hi = r->n;
	int prev, next;

	len = round_up(len, r->align);
	if (off + len > r->size || off + len < off)
		return -EINVAL;
	/* First extent after @off. */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (r->v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* A free that overlaps free space is a caller bug: refuse it. */
	if ((lo < r->n && off + len > r->v[lo].off) ||
	    (lo > 0 && r->v[lo - 1].off + r->v[lo - 1].len > off))
		return -EINVAL;
	prev = lo > 0 && r->v[lo - 1].off + r->v[lo - 1].len == off;
	next = lo < r->n && off + len == r->v[lo].off;
	if (prev && next) {
		r->v[lo - 1].len += len + r->v[lo].len;
		remove_at(r, lo);
	} else if (prev) {
		r->v[lo - 1].len += len;
	} else if (next) {
		r->v[lo].off = off;
		r->v[lo].len += len;
	} else {
		insert_at(r, lo, off, len);
	}
	r->used -= len;
	r->live--;
	return 0;
}

uint64_t hx_range_largest(const struct hx_range *r)
{
	uint64_t m = 0;

	for (uint32_t i = 0; i < r->n; i++)
		if (r->v[i].len > m)
			m = r->v[i].len;
	return m;
}
