// SPDX-License-Identifier: GPL-2.0
/*
 * Real compute: a step the schedule marks with an "x-gemm" shape runs an
 * OpenBLAS SGEMM of that shape on one thread, reading the step's weight
 * tensor straight from device memory, so the operator really depends on
 * the bytes a prefetch brought.  A and C are scratch buffers: the runner's
 * checked tensor contents are never overwritten.
 */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <xmmintrin.h>

#include "hyper-run.h"

/* Grow a scratch matrix; new floats are small and finite. */
static float *scratch(float **buf, size_t *cap, uint64_t elems)
{
	if (elems > *cap) {
		float *p = realloc(*buf, elems * sizeof(float));

		if (!p)
			return NULL;
		for (uint64_t i = *cap; i < elems; i++)
			p[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
		*buf = p;
		*cap = elems;
	}
	return *buf;
}

int gemm_init(struct gemm_ws *ws)
{
	memset(ws, 0, sizeof(*ws));
	/* One thread: the other CPU carries the transfer engine. */
	openblas_set_num_threads(1);
	/*
	 * Weights hold test patterns, not trained values: many are denormal
	 * as floats, which would make the timing depend on the pattern.
	 */
	_mm_setcsr(_mm_getcsr() | 0x8040);
	return 0;
}

void gemm_fini(struct gemm_ws *ws)
{
	free(ws->a);
	free(ws->b);
	free(ws->c);
	memset(ws, 0, sizeof(*ws));
}

int gemm_run(struct gemm_ws *ws, uint64_t m, uint64_t n, uint64_t k,
	     const float *weight)
{
	const float *a = scratch(&ws->a, &ws->a_cap, m * k);
	const float *b = weight ? weight : scratch(&ws->b, &ws->b_cap, k * n);
	float *c = scratch(&ws->c, &ws->c_cap, m * n);

	if (!a || !b || !c)
		return -1;
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n,
		    (int)k, 1.0f, a, (int)k, b, (int)n, 0.0f, c, (int)n);
	ws->flops += 2.0 * m * n * k;
	ws->gemms++;
	if (weight)
		ws->weight_gemms++;
	return 0;
}
