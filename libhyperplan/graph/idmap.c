// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "idmap.h"
#include "util.h"

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

void idmap_init(struct idmap *m, idmap_name_fn name_of, const void *owner)
{
	memset(m, 0, sizeof(*m));
	m->name_of = name_of;
	m->owner = owner;
}

void idmap_free(struct idmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->used = 0;
}

static uint32_t *probe(const struct idmap *m, const char *name)
{
	uint32_t i = hash(name) & (m->cap - 1);

	while (m->slot[i] &&
	       strcmp(m->name_of(m->owner, m->slot[i] - 1), name))
		i = (i + 1) & (m->cap - 1);
	return &m->slot[i];
}

uint32_t idmap_find(const struct idmap *m, const char *name)
{
	return m->cap ? *probe(m, name) - 1 : NONE;
}

static void rehash(struct idmap *m)
{
	uint32_t *old = m->slot, oldcap = m->cap, i;

	m->cap = oldcap ? oldcap * 2 : 1024;
	m->slot = xcalloc(m->cap, sizeof(*m->slot));
	for (i = 0; i < oldcap; i++)
		if (old[i])
			*probe(m, m->name_of(m->owner, old[i] - 1)) = old[i];
	free(old);
}

uint32_t idmap_add(struct idmap *m, const char *name, uint32_t idx)
{
	uint32_t *s;

	if ((m->used + 1) * 2 > m->cap)
		rehash(m);
	s = probe(m, name);
	if (*s)
		return *s - 1;
	*s = idx + 1;
	m->used++;
	return NONE;
}
