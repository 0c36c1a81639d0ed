// SPDX-License-Identifier: GPL-2.0
/*
 * Device enumeration: every class/hyper/hyperN present, in ascending N,
 * and the selection a DEV argument makes: "hyperN", "N" or "all".
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "hyperctl.h"

/* "hyperN" or "N" with N a plain decimal; -1 for anything else. */
static int parse_dev_name(const char *s)
{
	long v = 0;

	if (!strncmp(s, "hyper", 5))
		s += 5;
	if (!*s || (s[0] == '0' && s[1]))
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return -1;
	}
	return (int)v;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* No class directory means no device: the module is not loaded. */
int hc_devs_scan(struct hc_devlist *list)
{
	struct dirent *e;
	char path[512];
	int ret, cap = 0;
	DIR *d;

	list->nr = 0;
	list->ids = NULL;
	ret = hc_path(path, sizeof(path), "class/hyper");
	if (ret)
		return ret;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		int id;

		if (strncmp(e->d_name, "hyper", 5))
			continue;
		id = parse_dev_name(e->d_name);
		if (id < 0)
			continue;
		if (list->nr == cap) {
			int *ids = realloc(list->ids, sizeof(*ids) * (cap ? cap * 2 : 8));

			if (!ids) {
				closedir(d);
				hc_devs_free(list);
				return -ENOMEM;
			}
			list->ids = ids;
			cap = cap ? cap * 2 : 8;
		}
		list->ids[list->nr++] = id;
	}
	closedir(d);
	qsort(list->ids, (size_t)list->nr, sizeof(*list->ids), cmp_int);
	return 0;
}

/*
 * NULL or "all": every device present (possibly none).  "hyperN" or "N":
 * that device, -ENODEV if it is not present.  Anything else: -EINVAL.
 */
int hc_devs_select(const char *sel, struct hc_devlist *list)
{
	int ret, id, i;

	list->nr = 0;
	list->ids = NULL;
	id = sel && strcmp(sel, "all") ? parse_dev_name(sel) : -2;
	if (id == -1)
		return -EINVAL;
	ret = hc_devs_scan(list);
	if (ret || id == -2)
		return ret;
	for (i = 0; i < list->nr; i++)
		if (list->ids[i] == id)
			break;
	if (i == list->nr) {
		hc_devs_free(list);
		return -ENODEV;
	}
	list->ids[0] = id;
	list->nr = 1;
	return 0;
}

/* "hyperN", in buf (HC_NAME_LEN bytes). */
const char *hc_devname(int id, char *buf)
{
	snprintf(buf, HC_NAME_LEN, "hyper%d", id);
	return buf;
}

void hc_devs_free(struct hc_devlist *list)
{
	free(list->ids);
	list->ids = NULL;
	list->nr = 0;
}
