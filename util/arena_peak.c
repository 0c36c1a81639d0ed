// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The live peak of a set of intervals (util/arena.h): the most bytes
 * live at one instant, which no placement beats, by a counting sort of
 * the events into slices of time, and the reference by one sort.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena_int.h"
#include "util/huge.h"
#include "util/sort.h"

HU_DEFINE_SORT(sort_keys, struct key, key_before)

/* Event @e of @v: 2i is interval i's start, 2i + 1 its end. */
static struct key ev_key(const struct hu_ival *v, size_t e)
{
	const struct hu_ival *x = &v[e / 2];

	/* Ends sort before starts at the same time: [start, end). */
	return (struct key){ { e % 2 ? x->end : x->start, !(e % 2),
			       x->bytes }, (uint32_t)(e / 2) };
}

/*
 * One event more, in time order (@start: interval @x's start, else its
 * end): the live bytes, the peak and the instant it is first reached.
 */
static inline void ev_take(const struct hu_ival *x, bool start,
			   uint64_t *live, uint64_t *peak, uint64_t *at)
{
	/*
	 * An interval of no time is never live; its end, sorted before its
	 * start at the same instant, would take its bytes off first.
	 */
	if (x->end <= x->start)
		return;
	if (start)
		*live += x->bytes;
	else
		*live -= x->bytes;
	if (*live > *peak) {
		*peak = *live;
		*at = start ? x->start : x->end;
	}
}

/* live_peak() by one sort of all the events (the reference). */
static int live_peak_sort(const struct hu_ival *v, uint32_t n,
			  uint64_t *peak, uint64_t *at)
{
	struct key *ev = hu_malloc_huge(2 * (size_t)(n ?: 1) * sizeof(*ev));
	uint64_t live = 0;

	*peak = 0;
	*at = 0;
	if (!ev)
		return -ENOMEM;
	for (size_t e = 0; e < 2 * (size_t)n; e++)
		ev[e] = ev_key(v, e);
	sort_keys(ev, 2 * (size_t)n);
	for (size_t e = 0; e < 2 * (size_t)n; e++)
		ev_take(&v[ev[e].i], ev[e].k[1], &live, peak, at);
	free(ev);
	return 0;
}

/*
 * The slice of time of instant @t: of @ns slices 2^@shift instants long
 * from @t0, those past the last in the last (the instants' order kept).
 */
static inline uint32_t ev_slice(uint64_t t, uint64_t t0, uint32_t shift,
				uint32_t ns)
{
	uint64_t s = (t - t0) >> shift;

	return s < ns ? (uint32_t)s : ns - 1;
}

/*
 * Whether the @k events at @ids (2i: interval i's start, 2i + 1: its end)
 * all fall at one instant.
 */
static bool ev_one_instant(const struct hu_ival *v, const uint32_t *ids,
			   uint32_t k)
{
	uint64_t t = ev_key(v, ids[0]).k[0];

	for (uint32_t x = 1; x < k; x++)
		if (ev_key(v, ids[x]).k[0] != t)
			return false;
	return true;
}

/*
 * live_peak() where every instant that is not UINT64_MAX lies in
 * [@t0, @t0 + @span) and the bytes sum below 2^64: one running sum over
 * the instants, each instant's starts less its ends added at once.  In
 * one sort's order an instant takes its ends first, each only lowering
 * the live bytes (never above a peak already reached), then its starts,
 * which only raise them: the most live in it is what is live after it,
 * and a peak it sets is set at that instant.  The ends at UINT64_MAX
 * come after every other event and only lower the sum: left out.  A
 * plan's residencies begin and end on a clock that ticks about twice an
 * interval, so the instants are dense: two passes over the intervals
 * and one over the instants, where the slices read each interval again
 * for each event, in time order (at 1M decode operators, a read from
 * memory each).  Return: 0, or -ENOMEM.
 */
static int live_peak_dense(const struct hu_ival *v, uint32_t n, uint64_t t0,
			   uint64_t span, uint64_t *peak, uint64_t *at)
{
	uint64_t *d = hu_calloc_huge(span, sizeof(*d)), live = 0;

	if (!d)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (v[i].end <= v[i].start)
			continue;	/* never live, as in ev_take() */
		d[v[i].start - t0] += v[i].bytes;
		if (v[i].end != UINT64_MAX)
			d[v[i].end - t0] -= v[i].bytes;
	}
	for (uint64_t t = 0; t < span; t++) {
		live += d[t];
		if (live > *peak) {
			*peak = live;
			*at = t0 + t;
		}
	}
	free(d);
	return 0;
}

/*
 * The live peak, and in *@at the first instant it is reached: the events
 * in the order of one sort of them all by key (live_peak_sort()), found
 * by a counting sort into slices of time, twice as many as the events
 * (the instants past the last slice, such as UINT64_MAX, in the last),
 * then each slice of more than one event sorted by key.  A plan's
 * residencies start and end at distinct instants of a clock that ticks
 * about twice an interval, so most slices hold one event or none, and
 * the sort of 2n keys (7% of the layout's instructions at 1M decode
 * operators, and called twice a plan) becomes a few passes.
 * A slice whose events all fall at one instant (a training step's
 * residencies from the first tick or to the last, thousands of them:
 * 60M of the layout's 951M instructions at OLMoE --compare) needs no
 * sort: in the sort's order its ends come first, each only lowers the
 * live bytes (below the peak), then its starts, which only raise them,
 * to the same sum in any order, and any that sets the peak sets it at
 * that one instant.  Unless the bytes of all the intervals sum past
 * 2^64, where the order of the wrapped sums would tell.  Where the
 * instants are fewer than the slices and the sum does not wrap, each
 * slice would be one instant: live_peak_dense() takes them in place.
 */
static int live_peak(const struct hu_ival *v, uint32_t n, uint64_t *peak,
		     uint64_t *at)
{
	uint64_t t0 = UINT64_MAX, t1 = 0, live = 0, total = 0;
	uint32_t *first, *ids, shift = 0, ns, most = 0;
	bool wrap = false;
	struct key *ks;

	if (!n || n > UINT32_MAX / 4)
		return live_peak_sort(v, n, peak, at);
	*peak = 0;
	*at = 0;
	ns = 4 * n;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = v[i].start, z = v[i].end;

		t0 = a < t0 ? a : t0;
		t0 = z < t0 ? z : t0;
		t1 = a > t1 && a != UINT64_MAX ? a : t1;
		t1 = z > t1 && z != UINT64_MAX ? z : t1;
		if (z > a && __builtin_add_overflow(total, v[i].bytes, &total))
			wrap = true;
	}
	if (!wrap && t1 >= t0 && t1 - t0 < ns)
		return live_peak_dense(v, n, t0, t1 - t0 + 1, peak, at);
	while (t1 > t0 && ((t1 - t0) >> shift) >= ns)
		shift++;
	first = hu_calloc_huge((size_t)ns + 1, sizeof(*first));
	ids = hu_malloc_huge(2 * (size_t)n * sizeof(*ids));
	if (!first || !ids) {
		free(ids);
		free(first);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		first[ev_slice(v[i].start, t0, shift, ns) + 1]++;
		first[ev_slice(v[i].end, t0, shift, ns) + 1]++;
	}
	for (uint32_t s = 0; s < ns; s++) {
		most = first[s + 1] > most ? first[s + 1] : most;
		first[s + 1] += first[s];
	}
	ks = hu_malloc_huge(most * sizeof(*ks));
	if (!ks) {
		free(ids);
		free(first);
		return -ENOMEM;
	}
	/* each event (2i: i's start, 2i + 1: its end) in its slice */
	for (uint32_t i = 0; i < n; i++) {
		ids[first[ev_slice(v[i].start, t0, shift, ns)]++] = 2 * i;
		ids[first[ev_slice(v[i].end, t0, shift, ns)]++] = 2 * i + 1;
	}
	/* first[s] is now the end of slice s */
	for (uint32_t s = 0, j = 0; s < ns; j = first[s++]) {
		uint32_t k = first[s] - j;

		if (!k)
			continue;
		if (k == 1) {
			ev_take(&v[ids[j] / 2], !(ids[j] % 2), &live, peak,
				at);
			continue;
		}
		if (!wrap && ev_one_instant(v, &ids[j], k)) {
			for (uint32_t x = 0; x < k; x++)
				if (ids[j + x] % 2)
					ev_take(&v[ids[j + x] / 2], false,
						&live, peak, at);
			for (uint32_t x = 0; x < k; x++)
				if (!(ids[j + x] % 2))
					ev_take(&v[ids[j + x] / 2], true,
						&live, peak, at);
			continue;
		}
		for (uint32_t x = 0; x < k; x++)
			ks[x] = ev_key(v, ids[j + x]);
		sort_keys(ks, k);
		for (uint32_t x = 0; x < k; x++)
			ev_take(&v[ks[x].i], ks[x].k[1], &live, peak, at);
	}
	free(ks);
	free(ids);
	free(first);
	return 0;
}

int hu_arena_live_peak(const struct hu_ival *v, uint32_t n, uint64_t *peak)
{
	uint64_t at;

	return live_peak(v, n, peak, &at);
}

int hu_arena_live_peak_way(const struct hu_ival *v, uint32_t n,
			   enum hu_arena_way way, uint64_t *peak, uint64_t *at)
{
	return way & HU_ARENA_WHOLE ? live_peak_sort(v, n, peak, at) :
	       live_peak(v, n, peak, at);
}
