// SPDX-License-Identifier: GPL-2.0
/*
 * The human forms (-H): tables for list and stats, a block per device for
 * status.  Sizes use binary suffixes; scripts should read the JSON.
 */
#include <errno.h>
#include <inttypes.h>

#include "hyperctl.h"

#define SZ	24	/* room for any formatted number */

static const char *fmt_u64(uint64_t v, char *buf)
{
	snprintf(buf, SZ, "%" PRIu64, v);
	return buf;
}

static const char *fmt_s64(int64_t v, char *buf)
{
	snprintf(buf, SZ, "%" PRId64, v);
	return buf;
}

/* "512ns", "2us", "1.5ms", "3s": a latency bucket's bound. */
static const char *fmt_ns(uint64_t ns, char *buf)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	double v = (double)ns;
	int u = 0;

	while (u < 3 && v >= 1000) {
		v /= 1000;
		u++;
	}
	snprintf(buf, SZ, v == (double)(uint64_t)v ? "<%.0f%s" : "<%.1f%s", v,
		 unit[u]);
	return buf;
}

static const char *mode_of(const struct hc_dev *dev)
{
	return dev->mode[0] ? dev->mode : "-";
}

static int print_table(FILE *f, struct hc_table *t, int ret)
{
	if (!ret)
		hc_table_print(t, f);
	hc_table_free(t);
	return ret;
}

int hc_human_list(FILE *f, const struct hc_dev *devs, int nr)
{
	static const char *const hdr[] = {
		"DEV", "MODE", "SOURCE", "ORIGIN", ">SIZE", ">USED", ">FREE",
		">REGIONS", ">NODE",
	};
	struct hc_table *t = hc_table_new(9, hdr);
	int ret = t ? 0 : -ENOMEM;

	for (int i = 0; !ret && i < nr; i++) {
		const struct hc_dev *d = &devs[i];
		char size[SZ], used[SZ], free[SZ], regions[SZ], node[SZ];
		const char *row[] = {
			d->name, mode_of(d), d->source, d->origin,
			hu_fmt_size(d->size, size, SZ),
			hu_fmt_size(d->used, used, SZ),
			hu_fmt_size(d->free, free, SZ),
			fmt_s64(d->nr_regions, regions),
			fmt_s64(d->numa_node, node),
		};

		ret = hc_table_add(t, row);
	}
	return t ? print_table(f, t, ret) : ret;
}

static void kv(FILE *f, const char *key, const char *val)
{
	fprintf(f, "  %-14s %s\n", key, val);
}

/* "1M (1048576)" */
static const char *size_exact(uint64_t v, char *buf, size_t len)
{
	char h[SZ];

	hu_fmt_size(v, h, sizeof(h));
	if (v < 1024)
		snprintf(buf, len, "%s", h);
	else
		snprintf(buf, len, "%s (%" PRIu64 ")", h, v);
	return buf;
}

static void status_one(FILE *f, const struct hc_dev *d)
{
	char a[SZ], b[SZ], c[SZ], line[160];

	fprintf(f, "%s\n", d->name);
	kv(f, "mode:", d->mode[0] ? d->mode : "(no mode switch in this module)");
	if (d->has_phys_base)
		snprintf(line, sizeof(line), "%s, %s, at %#" PRIx64, d->source,
			 d->origin, d->phys_base);
	else
		snprintf(line, sizeof(line), "%s, %s", d->source, d->origin);
	kv(f, "source:", line);
	snprintf(line, sizeof(line), "%s, used %s, free %s",
		 hu_fmt_size(d->size, a, SZ), hu_fmt_size(d->used, b, SZ),
		 hu_fmt_size(d->free, c, SZ));
	kv(f, "size:", line);
	kv(f, "regions:", fmt_s64(d->nr_regions, a));
	snprintf(line, sizeof(line), "%" PRId64, d->numa_node);
	if (d->has_node && d->node.tier >= 0)
		snprintf(line, sizeof(line), "%" PRId64 " (memory_tier%d)",
			 d->numa_node, d->node.tier);
	kv(f, "numa node:", line);
	if (d->has_node && d->node.mem_total >= 0) {
		snprintf(line, sizeof(line), "%s, free %s",
			 hu_fmt_size((uint64_t)d->node.mem_total, a, SZ),
			 hu_fmt_size((uint64_t)(d->node.mem_free < 0 ? 0 :
						d->node.mem_free), b, SZ));
		kv(f, "node memory:", line);
	}
	if (d->has_memory_tier) {
		snprintf(line, sizeof(line),
			 "%" PRId64 " (abstract distance in system-ram mode; DRAM is 576)",
			 d->memory_tier);
		kv(f, "memory_tier:", line);
	}
	if (d->has_blocks) {
		snprintf(line, sizeof(line), "%" PRId64 ", %" PRId64 " online, %"
			 PRId64 " movable", d->blocks.total, d->blocks.online,
			 d->blocks.movable);
		kv(f, "memory blocks:", line);
	}
	kv(f, "copy engine:", d->copy_engine);
	for (int i = 0; i < HC_NR_KNOBS; i++) {
		char key[32];

		snprintf(key, sizeof(key), "%s:", hc_knobs[i].name);
		kv(f, key, hc_knobs[i].bytes ?
		   size_exact(d->knob[i], line, sizeof(line)) :
		   fmt_u64(d->knob[i], a));
	}
	kv(f, "inflight:", fmt_s64(d->st.inflight, a));
}

int hc_human_status(FILE *f, const struct hc_dev *devs, int nr)
{
	for (int i = 0; i < nr; i++)
		status_one(f, &devs[i]);
	return 0;
}

/* A block per device: the pool, this node, then a table of the nodes. */
int hc_human_pool(FILE *f, const struct hc_pool *p, int nr)
{
	static const char *const hdr[] = {
		">NODE", "STATE", ">LEASE_AGE", ">HELD", ">GEN",
	};
	int ret = 0;

	for (int i = 0; !ret && i < nr; i++) {
		char a[SZ], b[SZ], c[SZ], d[SZ];
		struct hc_table *t;

		fprintf(f, "%s: node %" PRId64 ", %s%s%s\n", p[i].name,
			p[i].node_id, p[i].state, p[i].uuid[0] ? ", pool " : "",
			p[i].uuid);
		fprintf(f, "  pool:      %s used, %s free of %s\n",
			hu_fmt_size(p[i].used, a, SZ), hu_fmt_size(p[i].free, b, SZ),
			hu_fmt_size(p[i].size, c, SZ));
		fprintf(f, "  this node: %s used, %s free in its chunks; lease %" PRId64 " ms\n",
			hu_fmt_size(p[i].node_used, d, SZ),
			hu_fmt_size(p[i].node_free, a, SZ), p[i].lease_ms);
		if (!p[i].nr_nodes)
			continue;
		t = hc_table_new(5, hdr);
		if (!t)
			return -ENOMEM;
		for (int k = 0; !ret && k < p[i].nr_nodes; k++) {
			const struct hc_pool_node *n = &p[i].nodes[k];
			char id[SZ], age[SZ] = "-", held[SZ], gen[SZ];

			if (n->lease_age_ms >= 0)
				snprintf(age, SZ, "%" PRId64 " ms", n->lease_age_ms);
			const char *row[] = {
				fmt_s64(n->id, id), n->state, age,
				hu_fmt_size(n->bytes, held, SZ), fmt_u64(n->gen, gen),
			};
			ret = hc_table_add(t, row);
		}
		ret = print_table(f, t, ret);
	}
	return ret;
}

int hc_human_pool_objects(FILE *f, const struct hc_pool_objects *p, int nr)
{
	static const char *const hdr[] = {
		"NAME", "STATE", ">SIZE", ">NODE", ">REFS",
	};
	int ret = 0;

	for (int i = 0; !ret && i < nr; i++) {
		struct hc_table *t;

		fprintf(f, "%s: %d shared objects\n", p[i].name, p[i].nr);
		if (!p[i].nr)
			continue;
		t = hc_table_new(5, hdr);
		if (!t)
			return -ENOMEM;
		for (int k = 0; !ret && k < p[i].nr; k++) {
			const struct hc_pool_object *o = &p[i].obj[k];
			char size[SZ], node[SZ], refs[SZ];
			const char *row[] = {
				o->name, o->state, hu_fmt_size(o->bytes, size, SZ),
				fmt_s64(o->node, node), fmt_u64(o->refs, refs),
			};

			ret = hc_table_add(t, row);
		}
		ret = print_table(f, t, ret);
	}
	return ret;
}

int hc_human_stats(FILE *f, const struct hc_dev *devs, int nr)
{
	static const char *const hdr[] = {
		"DEV", ">PREFETCH", ">STORE", ">OPS_PF", ">OPS_ST", ">REQUESTS",
		">ERRORS", ">INFLIGHT", ">P50", ">P99",
	};
	struct hc_table *t = hc_table_new(10, hdr);
	int ret = t ? 0 : -ENOMEM;

	for (int i = 0; !ret && i < nr; i++) {
		const struct hc_stats *st = &devs[i].st;
		char c[6][SZ], infl[SZ], p50[SZ] = "-", p99[SZ] = "-";
		uint64_t ns;

		if (!hc_stats_latency_bound(st, 0.5, &ns))
			fmt_ns(ns, p50);
		if (!hc_stats_latency_bound(st, 0.99, &ns))
			fmt_ns(ns, p99);
		const char *row[] = {
			devs[i].name,
			hu_fmt_size(st->c[HC_BYTES_PREFETCH], c[0], SZ),
			hu_fmt_size(st->c[HC_BYTES_STORE], c[1], SZ),
			fmt_u64(st->c[HC_OPS_PREFETCH], c[2]),
			fmt_u64(st->c[HC_OPS_STORE], c[3]),
			fmt_u64(st->c[HC_REQUESTS], c[4]),
			fmt_u64(st->c[HC_ERRORS], c[5]),
			fmt_s64(st->inflight, infl), p50, p99,
		};
		ret = hc_table_add(t, row);
	}
	return t ? print_table(f, t, ret) : ret;
}

/* One table per interval: per-second rates of the counters. */
int hc_human_rates(FILE *f, const struct hc_dev *devs,
		   const struct hc_stats *prev, int nr, double secs)
{
	static const char *const hdr[] = {
		"DEV", ">PREFETCH/s", ">STORE/s", ">OPS_PF/s", ">OPS_ST/s",
		">REQUESTS/s", ">ERRORS", ">INFLIGHT",
	};
	struct hc_table *t = hc_table_new(8, hdr);
	int ret = t ? 0 : -ENOMEM;

	for (int i = 0; !ret && i < nr; i++) {
		const struct hc_stats *st = &devs[i].st;
		char c[HC_NR_COUNTERS][SZ], infl[SZ];
		uint64_t r[HC_NR_COUNTERS];

		for (int k = 0; k < HC_NR_COUNTERS; k++)
			r[k] = hc_rate(prev[i].c[k], st->c[k], secs);
		const char *row[] = {
			devs[i].name,
			hu_fmt_size(r[HC_BYTES_PREFETCH], c[0], SZ),
			hu_fmt_size(r[HC_BYTES_STORE], c[1], SZ),
			fmt_u64(r[HC_OPS_PREFETCH], c[2]),
			fmt_u64(r[HC_OPS_STORE], c[3]),
			fmt_u64(r[HC_REQUESTS], c[4]),
			fmt_u64(hc_counter_delta(prev[i].c[HC_ERRORS],
						 st->c[HC_ERRORS]), c[5]),
			fmt_s64(st->inflight, infl),
		};
		ret = hc_table_add(t, row);
	}
	return t ? print_table(f, t, ret) : ret;
}
