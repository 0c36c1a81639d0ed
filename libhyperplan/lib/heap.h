/* SPDX-License-Identifier: GPL-2.0 */
/* A binary min-heap of (key, value) pairs: the smallest key first. */
#ifndef HP_HEAP_H
#define HP_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct heap_item {
	double key;
	uint32_t val;
};

struct heap {
	struct heap_item *a;
	size_t n, cap;
};

void heap_push(struct heap *h, double key, uint32_t val);
struct heap_item heap_pop(struct heap *h);
static inline struct heap_item heap_top(const struct heap *h)
{
	return h->a[0];
}
void heap_free(struct heap *h);

#endif
