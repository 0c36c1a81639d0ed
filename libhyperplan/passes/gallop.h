/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The search the selection pass makes twice: the bucket a class reaches
 * (passes/plan.c) and the step a transfer starts in (passes/plan_take.c).
 */
#ifndef HP_GALLOP_H
#define HP_GALLOP_H

#include <stdbool.h>
#include <stdint.h>

typedef bool gallop_past_fn(const void *arg, uint32_t i);

/*
 * The first i in lo .. hi for which @past(@arg, i) holds, given that once
 * it holds it holds for every later i (hi if it holds for none before).
 * Static inline, as the callers' @past: each caller's copy inlines its
 * own, with no call through the pointer left in the loop.
 */
static inline uint32_t bisect_first(uint32_t lo, uint32_t hi,
				    gallop_past_fn *past, const void *arg)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (past(arg, mid))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * The same, searched out from @hint, the answer of a nearby look-up (one
 * outside lo .. hi, such as NONE, is none).  Answers move by a few places
 * from one look-up to the next, so a gallop from the hint narrows lo .. hi
 * in a few reads where the bisection takes log2(hi - lo); the bisection
 * then ends in what is left: the same answer, with or without a hint.
 */
static inline uint32_t gallop_first(uint32_t lo, uint32_t hi, uint32_t hint,
				    gallop_past_fn *past, const void *arg)
{
	uint32_t d;

	if (hint < lo || hint > hi)
		return bisect_first(lo, hi, past, arg);
	if (hint < hi && !past(arg, hint)) {	/* the answer is above */
		lo = hint + 1;
		for (d = 1; hi - lo > d; d *= 2) {
			if (past(arg, lo + d - 1)) {
				hi = lo + d - 1;
				break;
			}
			lo += d;
		}
	} else {				/* at or below */
		hi = hint;
		for (d = 1; hi - lo > d; d *= 2) {
			if (!past(arg, hi - d)) {
				lo = hi - d + 1;
				break;
			}
			hi -= d;
		}
	}
	return bisect_first(lo, hi, past, arg);
}

#endif
