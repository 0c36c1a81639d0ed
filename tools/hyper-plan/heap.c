// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include "heap.h"
#include "util.h"

void heap_push(struct heap *h, uint64_t key)
{
	size_t i = h->n++, p;

	grow(&h->k, &h->cap, i, sizeof(*h->k));
	for (; i && h->k[p = (i - 1) / 2] > key; i = p)
		h->k[i] = h->k[p];
	h->k[i] = key;
}

uint64_t heap_pop(struct heap *h)
{
	uint64_t top = h->k[0], last = h->k[--h->n];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < h->n) {
		if (c + 1 < h->n && h->k[c + 1] < h->k[c])
			c++;
		if (h->k[c] >= last)
			break;
		h->k[i] = h->k[c];
		i = c;
	}
	if (h->n)
		h->k[i] = last;
	return top;
}

void heap_free(struct heap *h)
{
	free(h->k);
	h->k = NULL;
	h->n = h->cap = 0;
}
