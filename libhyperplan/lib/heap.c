// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>

#include "lib/heap.h"
#include "lib/util.h"

int hyper_plan__heap_push(struct heap *h, double key, uint32_t val, struct hp_mem *mem)
{
	size_t i = h->n, p;

	if (hyper_plan__grow(mem, &h->a, &h->cap, i, sizeof(*h->a)))
		return -ENOMEM;
	h->n++;
	for (; i && h->a[p = (i - 1) / 2].key > key; i = p)
		h->a[i] = h->a[p];
	h->a[i] = (struct heap_item){ key, val };
	return 0;
}

int hyper_plan__heap_reserve(struct heap *h, size_t n, struct hp_mem *mem)
{
	return n ? hyper_plan__grow(mem, &h->a, &h->cap, n - 1, sizeof(*h->a)) : 0;
}

struct heap_item hyper_plan__heap_pop(struct heap *h)
{
	struct heap_item top = h->a[0], last = h->a[--h->n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < h->n) {
		if (c + 1 < h->n && h->a[c + 1].key < h->a[c].key)
			c++;
		if (h->a[c].key >= last.key)
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	if (h->n)
		h->a[i] = last;
	return top;
}

void hyper_plan__heap_free(struct heap *h)
{
	free(h->a);
	h->a = NULL;
	h->n = h->cap = 0;
}
