// SPDX-License-Identifier: GPL-2.0
/*
 * Synthetic compute: an operator lasts until its deadline.  "spin" only
 * reads the clock; "touch" streams through the tensors the operator uses,
 * so that it competes with transfers for memory bandwidth as a real
 * operator would.  Time, not iterations, is what is calibrated.
 */
#include "hyper-run.h"

static void spin(uint64_t deadline)
{
	while (hu_now_ns() < deadline)
		;
}

static void touch(uint64_t deadline, void *const *bufs, const uint64_t *lens,
		  unsigned int n)
{
	uint64_t acc = 0;

	if (!n) {
		spin(deadline);
		return;
	}
	for (;;) {
		for (unsigned int b = 0; b < n; b++) {
			const uint64_t *w = bufs[b];

			for (uint64_t off = 0; off + 4096 <= lens[b]; off += 4096) {
				for (int i = 0; i < 512; i += 8)
					acc += w[off / 8 + i];
				if (hu_now_ns() >= deadline)
					goto out;
			}
		}
		if (hu_now_ns() >= deadline)
			break;
	}
out:
	/* The loads must happen: make the sum look used. */
	__asm__ volatile("" : : "r"(acc));
}

void compute(enum compute_mode mode, uint64_t deadline, void *const *bufs,
	     const uint64_t *lens, unsigned int n)
{
	switch (mode) {
	case COMPUTE_SPIN:
	case COMPUTE_GEMM:	/* operators with no GEMM shape */
		spin(deadline);
		break;
	case COMPUTE_TOUCH:
		touch(deadline, bufs, lens, n);
		break;
	case COMPUTE_NONE:
		break;
	}
}
