// SPDX-License-Identifier: GPL-2.0
/*
 * The NUMA node of a pool as the rest of the kernel sees it: its memory
 * (devices/system/node/nodeN/meminfo) and the memory tier that lists it
 * (devices/virtual/memory_tiering/memory_tierN/nodelist).  In system-ram
 * mode this is where the hot-added window shows.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hyperctl.h"

/* Whether a node list such as "0-1,3" names nid. */
bool hc_nodelist_has(const char *list, int nid)
{
	const char *p = list;

	while (*p) {
		char *end;
		long lo, hi;

		lo = strtol(p, &end, 10);
		if (end == p || lo < 0)
			return false;
		hi = lo;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo)
				return false;
			p = end;
		}
		if (nid >= lo && nid <= hi)
			return true;
		if (*p == ',')
			p++;
		else if (*p)
			return false;
	}
	return false;
}

/* N of the memory_tierN whose nodelist has nid; -1 if none does. */
static int node_tier(int nid)
{
	char path[512], list[256];
	struct dirent *e;
	int tier = -1;
	DIR *d;

	if (hc_path(path, sizeof(path), "devices/virtual/memory_tiering"))
		return -1;
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char *end;
		long n;

		if (strncmp(e->d_name, "memory_tier", 11))
			continue;
		n = strtol(e->d_name + 11, &end, 10);
		if (end == e->d_name + 11 || *end || n < 0)
			continue;
		if (hc_path(path, sizeof(path),
			    "devices/virtual/memory_tiering/%s/nodelist",
			    e->d_name) ||
		    hc_read_file(path, list, sizeof(list)))
			continue;
		if (hc_nodelist_has(list, nid)) {
			tier = (int)n;
			break;
		}
	}
	closedir(d);
	return tier;
}

/* "Node 1 MemTotal:  1048576 kB" */
static int64_t meminfo_bytes(const char *meminfo, const char *key)
{
	const char *p = strstr(meminfo, key);

	return p ? strtoll(p + strlen(key), NULL, 10) * 1024 : -1;
}

int hc_node_read(int nid, struct hc_node *node)
{
	char path[512], buf[4096];
	int ret;

	node->id = nid;
	node->tier = -1;
	node->mem_total = node->mem_free = -1;
	if (nid < 0)
		return -ENOENT;
	ret = hc_path(path, sizeof(path), "devices/system/node/node%d/meminfo",
		      nid);
	if (!ret)
		ret = hc_read_file(path, buf, sizeof(buf));
	if (ret)
		return ret;
	node->mem_total = meminfo_bytes(buf, " MemTotal:");
	node->mem_free = meminfo_bytes(buf, " MemFree:");
	node->tier = node_tier(nid);
	return 0;
}
