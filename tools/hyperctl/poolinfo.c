// SPDX-License-Identifier: GPL-2.0
/*
 * A shared pool's attributes read into one structure: pool/ of the device
 * (node_id, state, uuid, lease_ms, nodes) and the device's used, free,
 * node_used and node_free.  Read one after the other: not one snapshot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hyperctl.h"

/* pool/nodes: "ID STATE LEASE_AGE_MS BYTES GEN" a line, used slots only. */
static int read_nodes(struct hc_pool *p)
{
	char buf[4096], *line, *save = NULL;
	int ret = hc_attr_text(p->id, "pool/nodes", buf, sizeof(buf),
			       &p->bad_attr);

	if (ret)
		return ret;
	p->nr_nodes = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct hc_pool_node *n = &p->nodes[p->nr_nodes];
		unsigned long long bytes, gen;
		long long age;
		char extra;

		if (p->nr_nodes == HC_POOL_MAX_NODES ||
		    sscanf(line, "%d %15s %lld %llu %llu %c", &n->id, n->state,
			   &age, &bytes, &gen, &extra) != 5 ||
		    n->id < 0 || n->id >= HC_POOL_MAX_NODES) {
			p->bad_attr = "pool/nodes";
			return -EINVAL;
		}
		n->lease_age_ms = age;
		n->bytes = bytes;
		n->gen = gen;
		p->nr_nodes++;
	}
	return 0;
}

/**
 * hc_pool_read() - read a device's shared-pool attributes
 * @id:		N of hyperN
 * @p:		filled in; @p->bad_attr names the attribute a failure was on
 *
 * Return: 0, or the -errno of the first attribute that could not be read
 * (-ENOENT for a module without shared pools).
 */
int hc_pool_read(int id, struct hc_pool *p)
{
	const char **bad = &p->bad_attr;
	int ret;

	memset(p, 0, sizeof(*p));
	p->id = id;
	hc_devname(id, p->name);
	ret = hc_attr_s64(id, "pool/node_id", &p->node_id, bad) ?:
	      hc_attr_text(id, "pool/state", p->state, sizeof(p->state), bad) ?:
	      hc_attr_text(id, "pool/uuid", p->uuid, sizeof(p->uuid), bad) ?:
	      hc_attr_s64(id, "pool/lease_ms", &p->lease_ms, bad) ?:
	      hc_attr_u64(id, "size", &p->size, bad) ?:
	      hc_attr_u64(id, "used", &p->used, bad) ?:
	      hc_attr_u64(id, "free", &p->free, bad) ?:
	      hc_attr_u64(id, "node_used", &p->node_used, bad) ?:
	      hc_attr_u64(id, "node_free", &p->node_free, bad);
	return ret ?: read_nodes(p);
}

/**
 * hc_pool_objects_read() - a device's shared objects (pool/objects)
 * @id:		N of hyperN
 * @p:		filled in
 * @bad:	on failure, the attribute it was on
 *
 * Return: 0, -ENOENT for a module without shared objects, -EINVAL for a
 * line that is not "NAME STATE SIZE NODE REFS", or the read's -errno.
 */
int hc_pool_objects_read(int id, struct hc_pool_objects *p, const char **bad)
{
	size_t len = (size_t)HC_POOL_MAX_OBJECTS * 160 + 1;
	char *buf = malloc(len), *line, *save = NULL;
	int ret;

	memset(p, 0, sizeof(*p));
	hc_devname(id, p->name);
	if (!buf)
		return -ENOMEM;
	ret = hc_attr_text(id, "pool/objects", buf, len, bad);
	for (line = ret ? NULL : strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct hc_pool_object *o = &p->obj[p->nr];
		unsigned long long bytes, refs;
		char extra;

		if (p->nr == HC_POOL_MAX_OBJECTS ||
		    sscanf(line, "%63s %15s %llu %d %llu %c", o->name, o->state,
			   &bytes, &o->node, &refs, &extra) != 5) {
			*bad = "pool/objects";
			ret = -EINVAL;
			break;
		}
		o->bytes = bytes;
		o->refs = refs;
		p->nr++;
	}
	free(buf);
	return ret;
}
