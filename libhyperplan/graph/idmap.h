/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Name → index lookup for operator and tensor ids.  The map stores only
 * indices; the names live in the caller's array, reached through @name_of.
 */
#ifndef HP_IDMAP_H
#define HP_IDMAP_H

#include <stdint.h>

typedef const char *(*idmap_name_fn)(const void *owner, uint32_t idx);

/* One slot, its index and its name's hash side by side: one cache miss. */
struct idslot {
	uint32_t idx;		/* index + 1; 0 marks an empty slot */
	uint32_t hash;		/* the name's hash: most misses skip strcmp */
};

struct idmap {
	struct idslot *slot;
	uint32_t cap;		/* a power of two */
	uint32_t used;
	idmap_name_fn name_of;
	const void *owner;
	struct hp_mem *mem;	/* the graph's: its rehash can fail */
};

struct hp_mem;

void hyper_plan__idmap_init(struct idmap *m, idmap_name_fn name_of, const void *owner,
		struct hp_mem *mem);
void hyper_plan__idmap_free(struct idmap *m);
uint32_t hyper_plan__idmap_find(const struct idmap *m, const char *name);
/*
 * 0 once @idx is added; -EEXIST, with the index already holding @name in
 * *@dup; -ENOMEM, with the map unchanged.
 */
int hyper_plan__idmap_add(struct idmap *m, const char *name, uint32_t idx, uint32_t *dup);

#endif
