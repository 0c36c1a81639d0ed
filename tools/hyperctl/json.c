// SPDX-License-Identifier: GPL-2.0
/*
 * JSON output.  Keys are the sysfs attribute names; numbers are plain
 * integers in the attribute's unit (bytes, counts, nanoseconds).  An
 * attribute the device does not have (mode on a module without the mode
 * switch, phys_base for a non-root reader) is left out, not invented.
 */
#include <errno.h>
#include <stdio.h>

#include "hyperctl.h"

static void add_str(struct json_object *o, const char *key, const char *val)
{
	json_object_object_add(o, key, json_object_new_string(val));
}

static void add_int(struct json_object *o, const char *key, int64_t val)
{
	json_object_object_add(o, key, json_object_new_int64(val));
}

/* Byte and event counts can exceed INT64_MAX only in theory. */
static void add_uint(struct json_object *o, const char *key, uint64_t val)
{
	json_object_object_add(o, key, json_object_new_uint64(val));
}

struct json_object *hc_json_list(const struct hc_dev *dev)
{
	struct json_object *o = json_object_new_object();

	add_str(o, "dev", dev->name);
	add_int(o, "id", dev->id);
	if (dev->mode[0])
		add_str(o, "mode", dev->mode);
	add_str(o, "source", dev->source);
	add_str(o, "origin", dev->origin);
	add_uint(o, "size", dev->size);
	add_uint(o, "used", dev->used);
	add_uint(o, "free", dev->free);
	add_int(o, "nr_regions", dev->nr_regions);
	add_int(o, "numa_node", dev->numa_node);
	return o;
}

static struct json_object *node_json(const struct hc_node *n)
{
	struct json_object *o = json_object_new_object();

	add_int(o, "id", n->id);
	if (n->tier >= 0)
		add_int(o, "tier", n->tier);
	if (n->mem_total >= 0)
		add_int(o, "mem_total", n->mem_total);
	if (n->mem_free >= 0)
		add_int(o, "mem_free", n->mem_free);
	return o;
}

struct json_object *hc_json_status(const struct hc_dev *dev)
{
	struct json_object *o = hc_json_list(dev);
	char hex[32];

	if (dev->has_phys_base) {
		snprintf(hex, sizeof(hex), "%#llx",
			 (unsigned long long)dev->phys_base);
		add_str(o, "phys_base", hex);
	}
	add_str(o, "copy_engine", dev->copy_engine);
	for (int i = 0; i < HC_NR_KNOBS; i++)
		add_uint(o, hc_knobs[i].name, dev->knob[i]);
	add_int(o, "inflight", dev->st.inflight);
	if (dev->has_memory_tier)
		add_int(o, "memory_tier", dev->memory_tier);
	if (dev->has_blocks) {
		add_int(o, "memory_blocks", dev->blocks.total);
		add_int(o, "memory_blocks_online", dev->blocks.online);
		add_int(o, "memory_blocks_movable", dev->blocks.movable);
	}
	if (dev->has_node)
		json_object_object_add(o, "node", node_json(&dev->node));
	return o;
}

struct json_object *hc_json_stats(const struct hc_dev *dev)
{
	struct json_object *o = json_object_new_object();
	struct json_object *hist = json_object_new_array();
	const struct hc_stats *st = &dev->st;
	uint64_t ns;

	add_str(o, "dev", dev->name);
	for (int i = 0; i < HC_NR_COUNTERS; i++)
		add_uint(o, hc_counter_names[i], st->c[i]);
	add_int(o, "inflight", st->inflight);
	if (!hc_stats_latency_bound(st, 0.5, &ns))
		add_uint(o, "latency_p50_lt_ns", ns);
	if (!hc_stats_latency_bound(st, 0.99, &ns))
		add_uint(o, "latency_p99_lt_ns", ns);
	for (int i = 0; i < st->nr_lat; i++) {
		struct json_object *b;

		if (!st->lat_count[i])
			continue;
		b = json_object_new_object();
		add_uint(b, "lt_ns", st->lat_bound[i]);
		add_uint(b, "count", st->lat_count[i]);
		json_object_array_add(hist, b);
	}
	json_object_object_add(o, "latency_hist", hist);
	return o;
}

struct json_object *hc_json_rates(const struct hc_dev *dev,
				  const struct hc_stats *prev, double secs)
{
	struct json_object *o = json_object_new_object();
	struct json_object *delta = json_object_new_object();
	struct json_object *rate = json_object_new_object();
	char s[32];

	add_str(o, "dev", dev->name);
	snprintf(s, sizeof(s), "%.3f", secs);
	json_object_object_add(o, "interval_s", json_object_new_double_s(secs, s));
	for (int i = 0; i < HC_NR_COUNTERS; i++) {
		uint64_t d = hc_counter_delta(prev->c[i], dev->st.c[i]);

		add_uint(delta, hc_counter_names[i], d);
		add_uint(rate, hc_counter_names[i],
			 hc_rate(prev->c[i], dev->st.c[i], secs));
	}
	json_object_object_add(o, "delta", delta);
	json_object_object_add(o, "per_s", rate);
	add_int(o, "inflight", dev->st.inflight);
	return o;
}

/*
 * A shared pool: the pool's whole counts (size, used, free), this node's
 * (node_used, node_free), and one object per node in the node table.
 */
struct json_object *hc_json_pool(const struct hc_pool *p)
{
	struct json_object *o = json_object_new_object();
	struct json_object *nodes = json_object_new_array();

	add_str(o, "dev", p->name);
	add_int(o, "node_id", p->node_id);
	add_str(o, "state", p->state);
	if (p->uuid[0])
		add_str(o, "uuid", p->uuid);
	add_int(o, "lease_ms", p->lease_ms);
	add_uint(o, "size", p->size);
	add_uint(o, "used", p->used);
	add_uint(o, "free", p->free);
	add_uint(o, "node_used", p->node_used);
	add_uint(o, "node_free", p->node_free);
	for (int i = 0; i < p->nr_nodes; i++) {
		const struct hc_pool_node *n = &p->nodes[i];
		struct json_object *no = json_object_new_object();

		add_int(no, "id", n->id);
		add_str(no, "state", n->state);
		if (n->lease_age_ms >= 0)
			add_int(no, "lease_age_ms", n->lease_age_ms);
		add_uint(no, "bytes", n->bytes);
		add_uint(no, "gen", n->gen);
		json_object_array_add(nodes, no);
	}
	json_object_object_add(o, "nodes", nodes);
	return o;
}

/* A device's shared objects: {"dev", "objects": [...]}. */
struct json_object *hc_json_pool_objects(const struct hc_pool_objects *p)
{
	struct json_object *o = json_object_new_object();
	struct json_object *objs = json_object_new_array();

	add_str(o, "dev", p->name);
	for (int i = 0; i < p->nr; i++) {
		const struct hc_pool_object *ob = &p->obj[i];
		struct json_object *jo = json_object_new_object();

		add_str(jo, "name", ob->name);
		add_str(jo, "state", ob->state);
		add_uint(jo, "bytes", ob->bytes);
		add_int(jo, "node", ob->node);
		add_uint(jo, "refs", ob->refs);
		json_object_array_add(objs, jo);
	}
	json_object_object_add(o, "objects", objs);
	return o;
}

/* Prints and releases obj; -EIO if standard output failed. */
int hc_json_print(struct json_object *obj, bool pretty)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE |
		    (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED :
			      JSON_C_TO_STRING_PLAIN);
	int ret;

	/* json-c prints an empty array as "[\n]" when pretty. */
	if (json_object_is_type(obj, json_type_array) &&
	    !json_object_array_length(obj))
		ret = puts("[]") < 0 ? -EIO : 0;
	else
		ret = puts(json_object_to_json_string_ext(obj, flags)) < 0 ? -EIO : 0;
	json_object_put(obj);
	if (fflush(stdout))
		ret = -EIO;
	return ret;
}
