/* SPDX-License-Identifier: GPL-2.0 */
/* A binary min-heap of 64-bit keys; callers pack (priority, index). */
#ifndef HP_HEAP_H
#define HP_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct heap {
	uint64_t *k;
	size_t n, cap;
};

void heap_push(struct heap *h, uint64_t key);
uint64_t heap_pop(struct heap *h);
static inline uint64_t heap_top(const struct heap *h)
{
	return h->k[0];
}
void heap_free(struct heap *h);

#endif
