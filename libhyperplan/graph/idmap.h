/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Name → index lookup for operator and tensor ids.  The map stores only
 * indices; the names live in the caller's array, reached through @name_of.
 */
#ifndef HP_IDMAP_H
#define HP_IDMAP_H

#include <stdint.h>

typedef const char *(*idmap_name_fn)(const void *owner, uint32_t idx);

struct idmap {
	uint32_t *slot;		/* index + 1; 0 marks an empty slot */
	uint32_t *hash;		/* each slot's name's hash: most misses skip strcmp */
	uint32_t cap;		/* a power of two */
	uint32_t used;
	idmap_name_fn name_of;
	const void *owner;
};

void idmap_init(struct idmap *m, idmap_name_fn name_of, const void *owner);
void idmap_free(struct idmap *m);
uint32_t idmap_find(const struct idmap *m, const char *name);
/* Returns the index already holding @name, or NONE once @idx is added. */
uint32_t idmap_add(struct idmap *m, const char *name, uint32_t idx);

#endif
