// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lib/heap.h"
#include "lib/util.h"
#include "util/heap.h"

/*
 * Smaller keys first.  A sifted item stays above a child whose key is not
 * below its own by >=, not by !<: a NaN key is moved past, as it always
 * was here.
 */
static inline bool item_before(const void *ctx, const struct heap_item *x,
			       const struct heap_item *y)
{
	return x->key < y->key;
}

static inline bool item_stays(const void *ctx, const struct heap_item *x,
			      const struct heap_item *y)
{
	return x->key >= y->key;
}

HU_DEFINE_HEAP(items, struct heap_item, const void *, item_before, item_stays)

int hyper_plan__heap_push(struct heap *h, double key, uint32_t val, struct hp_mem *mem)
{
	if (hyper_plan__grow(mem, &h->a, &h->cap, h->n, sizeof(*h->a)))
		return -ENOMEM;
	items_push(NULL, h->a, h->n++, (struct heap_item){ key, val });
	return 0;
}

int hyper_plan__heap_reserve(struct heap *h, size_t n, struct hp_mem *mem)
{
	return n ? hyper_plan__grow(mem, &h->a, &h->cap, n - 1, sizeof(*h->a)) : 0;
}

struct heap_item hyper_plan__heap_pop(struct heap *h)
{
	return items_pop(NULL, h->a, h->n--);
}

void hyper_plan__heap_free(struct heap *h)
{
	free(h->a);
	h->a = NULL;
	h->n = h->cap = 0;
}
