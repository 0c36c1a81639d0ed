// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <string.h>

#include "graph/idmap.h"
#include "lib/util.h"

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

void hyper_plan__idmap_init(struct idmap *m, idmap_name_fn name_of, const void *owner,
		struct hp_mem *mem)
{
	memset(m, 0, sizeof(*m));
	m->name_of = name_of;
	m->owner = owner;
	m->mem = mem;
}

void hyper_plan__idmap_free(struct idmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->used = 0;
}

/* The slot holding @name (hash @h), or the empty one it would go in. */
static uint32_t probe(const struct idmap *m, const char *name, uint32_t h)
{
	uint32_t i = h & (m->cap - 1);

	while (m->slot[i].idx &&
	       (m->slot[i].hash != h ||
		strcmp(m->name_of(m->owner, m->slot[i].idx - 1), name)))
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint32_t hyper_plan__idmap_find(const struct idmap *m, const char *name)
{
	return m->cap ? m->slot[probe(m, name, hash(name))].idx - 1 : NONE;
}

static int rehash(struct idmap *m)
{
	struct idslot *old = m->slot;
	uint32_t oldcap = m->cap, i, j;
	uint32_t cap = oldcap ? oldcap * 2 : 1024;
	struct idslot *slot = hyper_plan__malloc(m->mem, cap * sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	memset(slot, 0, cap * sizeof(*slot));
	m->cap = cap;
	m->slot = slot;
	for (i = 0; i < oldcap; i++) {
		if (!old[i].idx)
			continue;
		for (j = old[i].hash & (m->cap - 1); m->slot[j].idx;
		     j = (j + 1) & (m->cap - 1))
			;	/* names are distinct: the first empty slot */
		m->slot[j] = old[i];
	}
	free(old);
	return 0;
}

int hyper_plan__idmap_add(struct idmap *m, const char *name, uint32_t idx, uint32_t *dup)
{
	uint32_t h = hash(name), i;

	if ((m->used + 1) * 2 > m->cap && rehash(m))
		return -ENOMEM;
	i = probe(m, name, h);
	if (m->slot[i].idx) {
		*dup = m->slot[i].idx - 1;
		return -EEXIST;
	}
	m->slot[i] = (struct idslot){ idx + 1, h };
	m->used++;
	return 0;
}
