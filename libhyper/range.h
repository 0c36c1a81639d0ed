/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Best-fit allocator over one address range, for the device arena and for
 * the shmem pool.  Free extents are kept sorted by offset so that a free
 * merges with its neighbours in O(log n).
 */
#ifndef LIBHYPER_RANGE_H
#define LIBHYPER_RANGE_H

#include <stdint.h>

struct hx_extent {
	uint64_t off, len;
};

struct hx_range {
	struct hx_extent *v;
	uint32_t n, cap;
	uint64_t size;
	uint64_t align;
	uint64_t used;
	uint32_t live;		/* allocations */
};

int hx_range_init(struct hx_range *r, uint64_t size, uint64_t align);
void hx_range_fini(struct hx_range *r);
void hx_range_reset(struct hx_range *r);
uint64_t hx_range_round(const struct hx_range *r, uint64_t len);
int hx_range_alloc(struct hx_range *r, uint64_t len, uint64_t align,
		   uint64_t *offp);
int hx_range_alloc_high(struct hx_range *r, uint64_t len, uint64_t *offp);
int hx_range_alloc_at(struct hx_range *r, uint64_t off, uint64_t len);
int hx_range_free(struct hx_range *r, uint64_t off, uint64_t len);
uint64_t hx_range_largest(const struct hx_range *r);

#endif /* LIBHYPER_RANGE_H */
