/* SPDX-License-Identifier: LGPL-2.1-or-later */
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

struct hp_mem;

/* 0, or -ENOMEM with @h as it was: no room, and @mem could not add it. */
int hyper_plan__heap_push(struct heap *h, double key, uint32_t val, struct hp_mem *mem);
/* Room for @n items, so that the first @n pushes allocate nothing. */
int hyper_plan__heap_reserve(struct heap *h, size_t n, struct hp_mem *mem);
struct heap_item hyper_plan__heap_pop(struct heap *h);
static inline struct heap_item heap_top(const struct heap *h)
{
	return h->a[0];
}
void hyper_plan__heap_free(struct heap *h);

#endif
