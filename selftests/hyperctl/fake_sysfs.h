/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake sysfs tree in a temporary directory, for running hyperctl on the
 * host: class/hyper/hyperN/ with every attribute the module has, a NUMA
 * node and memory tiers.  hyperctl reads it through HYPERCTL_SYSFS.
 */
#ifndef FAKE_SYSFS_H
#define FAKE_SYSFS_H

#define _XOPEN_SOURCE_EXTENDED 1
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fake_dev {
	int id;
	const char *mode;		/* NULL: a module without the switch */
	const char *source, *origin;
	unsigned long long phys_base, size, used, regions;
	int node;
	unsigned int knob[4];		/* workers, chunk_size, queue_depth, inline_bytes */
	unsigned long long stat[7];	/* bytes_pf, bytes_st, ops_pf, ops_st, requests, errors, inflight */
};

static const char *const fake_stat_names[7] = {
	"bytes_prefetch", "bytes_store", "ops_prefetch", "ops_store",
	"requests", "errors", "inflight",
};

static const char *const fake_knob_names[4] = {
	"workers", "chunk_size", "queue_depth", "inline_bytes",
};

static inline int fake_mkdirs(const char *path)
{
	char buf[512], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, 0755) && errno != EEXIST ? -errno : 0;
}

/* Writes root/rel (creating directories) with printf-style contents. */
static inline int fake_put(const char *root, const char *rel, const char *fmt, ...)
{
	char path[512], *slash;
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	slash = strrchr(path, '/');
	*slash = 0;
	if (fake_mkdirs(path))
		return -errno;
	*slash = '/';
	f = fopen(path, "w");
	if (!f)
		return -errno;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	return fclose(f) ? -errno : 0;
}

/* Reads root/rel whole; "" when missing. */
static inline const char *fake_get(const char *root, const char *rel,
				   char *buf, size_t len)
{
	char path[512];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	buf[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return buf;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/*
 * The latency histogram: 40 buckets, count `a` in bucket 2^12 (< 4096 ns)
 * and `b` in bucket 2^20 (< 1048576 ns).
 */
static inline int fake_latency(const char *root, int id, unsigned int a,
			       unsigned int b)
{
	char rel[64], text[2048];
	int n = 0;

	for (int i = 0; i < 40; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%llu %u\n",
			      1ULL << i, i == 12 ? a : i == 20 ? b : 0);
	snprintf(rel, sizeof(rel), "class/hyper/hyper%d/stats/latency_hist", id);
	return fake_put(root, rel, "%s", text);
}

static inline int fake_dev_add(const char *root, const struct fake_dev *d)
{
	char rel[128];
	int ret = 0;

#define PUT(attr, ...) do {						\
		snprintf(rel, sizeof(rel), "class/hyper/hyper%d/%s", d->id, attr); \
		ret = ret ?: fake_put(root, rel, __VA_ARGS__);		\
	} while (0)

	if (d->mode)
		PUT("mode", "%s\n", d->mode);
	PUT("source", "%s\n", d->source);
	PUT("origin", "%s\n", d->origin);
	PUT("phys_base", "%#llx\n", d->phys_base);
	PUT("size", "%llu\n", d->size);
	PUT("used", "%llu\n", d->used);
	PUT("free", "%llu\n", d->size - d->used);
	PUT("nr_regions", "%llu\n", d->regions);
	PUT("numa_node", "%d\n", d->node);
	PUT("copy_engine", "cpu\n");
	PUT("memory_tier", "1024\n");
	PUT("reset_stats", "%s", "");
	for (int i = 0; i < 4; i++)
		PUT(fake_knob_names[i], "%u\n", d->knob[i]);
	for (int i = 0; i < 7; i++) {
		char attr[64];

		snprintf(attr, sizeof(attr), "stats/%s", fake_stat_names[i]);
		PUT(attr, "%llu\n", d->stat[i]);
	}
#undef PUT
	return ret ?: fake_latency(root, d->id, 0, 0);
}

/* Node 0 with CPUs in the DRAM tier, node 1 CPU-less in a slower one. */
static inline int fake_nodes(const char *root)
{
	return fake_put(root, "devices/system/node/node0/meminfo",
			"Node 0 MemTotal:        2097152 kB\nNode 0 MemFree:         1048576 kB\n") ?:
	       fake_put(root, "devices/system/node/node1/meminfo",
			"Node 1 MemTotal:        1048576 kB\nNode 1 MemFree:          262144 kB\n") ?:
	       fake_put(root, "devices/virtual/memory_tiering/memory_tier4/nodelist", "0\n") ?:
	       fake_put(root, "devices/virtual/memory_tiering/memory_tier22/nodelist", "1\n");
}

/*
 * Memory blocks of bs bytes covering [base, base + size), all "offline",
 * as after a hot-add that nobody onlined yet.
 */
static inline int fake_memblocks(const char *root, unsigned long long base,
				 unsigned long long size, unsigned long long bs)
{
	char rel[96];
	int ret = fake_put(root, "devices/system/memory/block_size_bytes",
			   "%llx\n", bs);

	for (unsigned long long b = base / bs; !ret && b < (base + size) / bs; b++) {
		snprintf(rel, sizeof(rel), "devices/system/memory/memory%llu/state", b);
		ret = fake_put(root, rel, "offline\n");
	}
	return ret;
}

static inline int fake_rm_one(const char *path, const struct stat *st, int flag,
			      struct FTW *ftw)
{
	return remove(path);
}

static inline int fake_remove(const char *root)
{
	return nftw(root, fake_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif /* FAKE_SYSFS_H */
