// SPDX-License-Identifier: GPL-2.0
/*
 * A device's attributes read into one structure.  The attributes are read
 * one after the other, so the values are not a single atomic snapshot
 * (nor is anything sysfs gives).  mode and memory_tier are optional:
 * modules before the mode switch lack them; phys_base is root-only.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "hyperctl.h"

const char *const hc_counter_names[HC_NR_COUNTERS] = {
	[HC_BYTES_PREFETCH]	= "bytes_prefetch",
	[HC_BYTES_STORE]	= "bytes_store",
	[HC_OPS_PREFETCH]	= "ops_prefetch",
	[HC_OPS_STORE]		= "ops_store",
	[HC_REQUESTS]		= "requests",
	[HC_ERRORS]		= "errors",
};

/* Read an attribute; on failure *bad names it (for the error message). */
int hc_attr_text(int id, const char *attr, char *buf, size_t len,
		 const char **bad)
{
	int ret = hc_read_attr(id, attr, buf, len);

	if (ret)
		*bad = attr;
	return ret;
}

int hc_attr_s64(int id, const char *attr, int64_t *val, const char **bad)
{
	int ret = hc_read_attr_s64(id, attr, val);

	if (ret)
		*bad = attr;
	return ret;
}

int hc_attr_u64(int id, const char *attr, uint64_t *val, const char **bad)
{
	int64_t v;
	int ret = hc_attr_s64(id, attr, &v, bad);

	if (!ret)
		*val = (uint64_t)v;
	return ret;
}

/* "<bound> <count>" lines, as many as there are (at most HC_LAT_BUCKETS). */
static int read_latency(int id, struct hc_stats *st, const char **bad)
{
	char buf[4096], *line, *save = NULL;
	int ret;

	ret = hc_attr_text(id, "stats/latency_hist", buf, sizeof(buf), bad);
	if (ret)
		return ret;
	st->nr_lat = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long b, c;
		char extra;

		if (st->nr_lat == HC_LAT_BUCKETS ||
		    sscanf(line, "%llu %llu %c", &b, &c, &extra) != 2) {
			*bad = "stats/latency_hist";
			return -EINVAL;
		}
		st->lat_bound[st->nr_lat] = b;
		st->lat_count[st->nr_lat++] = c;
	}
	return 0;
}

int hc_stats_read(int id, struct hc_stats *st, const char **bad)
{
	char attr[64];
	int ret;

	memset(st, 0, sizeof(*st));
	for (int i = 0; i < HC_NR_COUNTERS; i++) {
		snprintf(attr, sizeof(attr), "stats/%s", hc_counter_names[i]);
		ret = hc_read_attr_s64(id, attr, (int64_t *)&st->c[i]);
		if (ret) {
			*bad = hc_counter_names[i];
			return ret;
		}
	}
	ret = hc_attr_s64(id, "stats/inflight", &st->inflight, bad);
	return ret ? ret : read_latency(id, st, bad);
}

/*
 * The upper bound of the latency bucket that holds quantile q (0 < q <= 1)
 * of the commands counted; -ENODATA if none was.
 */
int hc_stats_latency_bound(const struct hc_stats *st, double q, uint64_t *ns)
{
	uint64_t total = 0, sum = 0, want;

	for (int i = 0; i < st->nr_lat; i++)
		total += st->lat_count[i];
	if (!total)
		return -ENODATA;
	want = (uint64_t)ceil(q * (double)total);
	if (!want)
		want = 1;
	for (int i = 0; i < st->nr_lat; i++) {
		sum += st->lat_count[i];
		if (sum >= want) {
			*ns = st->lat_bound[i];
			return 0;
		}
	}
	return -ENODATA;
}

/*
 * A counter that went down was reset (reset_stats) during the interval:
 * what it counted since the reset is its value now.
 */
uint64_t hc_counter_delta(uint64_t prev, uint64_t cur)
{
	return cur >= prev ? cur - prev : cur;
}

/* Per second over secs, rounded. */
uint64_t hc_rate(uint64_t prev, uint64_t cur, double secs)
{
	return (uint64_t)((double)hc_counter_delta(prev, cur) / secs + 0.5);
}

int hc_dev_read(int id, struct hc_dev *dev)
{
	const char **bad = &dev->bad_attr;
	int64_t v;
	int ret;

	memset(dev, 0, sizeof(*dev));
	dev->id = id;
	hc_devname(id, dev->name);

	ret = hc_attr_text(id, "source", dev->source, sizeof(dev->source), bad) ?:
	      hc_attr_text(id, "origin", dev->origin, sizeof(dev->origin), bad) ?:
	      hc_attr_text(id, "copy_engine", dev->copy_engine,
			   sizeof(dev->copy_engine), bad) ?:
	      hc_attr_u64(id, "size", &dev->size, bad) ?:
	      hc_attr_u64(id, "used", &dev->used, bad) ?:
	      hc_attr_u64(id, "free", &dev->free, bad) ?:
	      hc_attr_s64(id, "nr_regions", &dev->nr_regions, bad) ?:
	      hc_attr_s64(id, "numa_node", &dev->numa_node, bad);
	for (int i = 0; !ret && i < HC_NR_KNOBS; i++)
		ret = hc_attr_u64(id, hc_knobs[i].name, &dev->knob[i], bad);
	if (!ret)
		ret = hc_stats_read(id, &dev->st, bad);
	if (ret)
		return ret;

	ret = hc_read_attr(id, "mode", dev->mode, sizeof(dev->mode));
	if (ret && ret != -ENOENT) {
		*bad = "mode";
		return ret;
	}
	ret = hc_read_attr_s64(id, "memory_tier", &dev->memory_tier);
	if (ret && ret != -ENOENT) {
		*bad = "memory_tier";
		return ret;
	}
	dev->has_memory_tier = !ret;
	/* Unreadable to all but root, as /proc/iomem's addresses are. */
	ret = hc_read_attr_s64(id, "phys_base", &v);
	if (ret && ret != -ENOENT && ret != -EACCES && ret != -EPERM) {
		*bad = "phys_base";
		return ret;
	}
	dev->has_phys_base = !ret;
	if (!ret)
		dev->phys_base = (uint64_t)v;
	dev->has_node = !hc_node_read((int)dev->numa_node, &dev->node);
	dev->has_blocks = !strcmp(dev->mode, "system-ram") && dev->has_phys_base &&
			  !hc_blocks(dev->phys_base, dev->size, NULL, &dev->blocks);
	return 0;
}
