/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Deterministic tensor contents.  Word i of a buffer with seed s is
 * base(s) ^ (i * K), K odd: distinct seeds differ in every word, and data
 * shifted by any number of words differs too.  It is cheap enough to fill
 * and check whole tensors inside an operator's compute time (both loops
 * vectorize).  Header-only: hyper-run and the libhyper tests share it.
 */
#ifndef HYPER_RUN_PATTERN_H
#define HYPER_RUN_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PAT_K		0x9e3779b97f4a7c15ULL
#define PAT_BLOCK	512	/* words checked between early exits */

static inline uint64_t pat_base(uint64_t seed)
{
	uint64_t z = seed + PAT_K;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Stride in words: 1 writes or checks everything, 512 one word per 4 KiB. */
static inline void fill_pat_stride(void *p, size_t len, uint64_t seed, size_t stride)
{
	uint64_t base = pat_base(seed), *w = p, last;
	size_t n = len / 8;

	if (stride == 1) {
		for (size_t i = 0; i < n; i++)
			w[i] = base ^ (i * PAT_K);
	} else {
		for (size_t i = 0; i < n; i += stride)
			w[i] = base ^ (i * PAT_K);
		if (n)
			w[n - 1] = base ^ ((n - 1) * PAT_K);
	}
	/* A tail shorter than a word holds the low bytes of word n. */
	last = base ^ (n * PAT_K);
	memcpy((char *)p + n * 8, &last, len % 8);
}

static inline long pat_scan(const uint64_t *w, size_t from, size_t to,
			    uint64_t base, size_t stride)
{
	for (size_t i = from; i < to; i += stride)
		if (w[i] != (base ^ (i * PAT_K)))
			return (long)i * 8;
	return -1;
}

/*
 * Offset of a wrong byte, or -1.  The check runs from the end backwards:
 * a copy still in flight fills front to back, so its tail is the part
 * that is surely not there yet.
 */
static inline long check_pat_stride(const void *p, size_t len, uint64_t seed,
				    size_t stride)
{
	uint64_t base = pat_base(seed), last = base ^ ((len / 8) * PAT_K);
	const uint64_t *w = p;
	size_t n = len / 8, b;

	if (memcmp((const char *)p + n * 8, &last, len % 8))
		return (long)(n * 8);
	if (stride != 1) {
		if (n && w[n - 1] != (base ^ ((n - 1) * PAT_K)))
			return (long)(n - 1) * 8;
		return pat_scan(w, 0, n, base, stride);
	}
	for (b = (n + PAT_BLOCK - 1) / PAT_BLOCK; b-- > 0;) {
		size_t from = b * PAT_BLOCK, to = from + PAT_BLOCK < n ? from + PAT_BLOCK : n;
		uint64_t diff = 0;

		for (size_t i = from; i < to; i++)
			diff |= w[i] ^ (base ^ (i * PAT_K));
		if (diff)
			return pat_scan(w, from, to, base, 1);
	}
	return -1;
}

static inline void fill_pat(void *p, size_t len, uint64_t seed)
{
	fill_pat_stride(p, len, seed, 1);
}

static inline long check_pat(const void *p, size_t len, uint64_t seed)
{
	return check_pat_stride(p, len, seed, 1);
}

#endif /* HYPER_RUN_PATTERN_H */
