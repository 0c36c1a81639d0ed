/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the three-node tests (selftests/vm/suites/threenode.suite):
 * hyperctl's JSON read back with json-c.
 */
#ifndef THREENODE_H
#define THREENODE_H

#include <json-c/json.h>

#include "twonode.h"

/*
 * Runs "hyperctl ARGS" (one shell word list, no quoting) and parses what
 * it prints; NULL with the cause printed when it fails or prints no JSON.
 * The caller puts the object.
 */
static inline struct json_object *tn_hyperctl_json(const char *args)
{
	char cmd[256], *buf;
	size_t len = 0, cap = 1 << 16;
	struct json_object *o = NULL;
	FILE *p;
	int st;

	buf = malloc(cap);
	if (!buf)
		return NULL;
	snprintf(cmd, sizeof(cmd), "%s %s", TN_HYPERCTL, args);
	fflush(NULL);
	p = popen(cmd, "r");
	if (!p) {
		free(buf);
		return NULL;
	}
	len = fread(buf, 1, cap - 1, p);
	buf[len] = 0;
	st = pclose(p);
	if (st)
		fprintf(stderr, "# hyperctl %s: exit status %#x\n", args, st);
	else
		o = json_tokener_parse(buf);
	if (!st && !o)
		fprintf(stderr, "# hyperctl %s printed no JSON: %.200s\n", args, buf);
	free(buf);
	return o;
}

/* Member @key of @o, or NULL. */
static inline struct json_object *tn_json_get(struct json_object *o,
					      const char *key)
{
	struct json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/*
 * The first device of "hyperctl pool objects --json": the "refs" of the
 * object @name, or -ENOENT when it is not listed, -EIO when no JSON.
 */
static inline long long tn_json_obj_refs(const char *name)
{
	struct json_object *a = tn_hyperctl_json("pool objects --json hyper0");
	struct json_object *objs;
	long long refs = -ENOENT;

	if (!a)
		return -EIO;
	objs = tn_json_get(json_object_array_get_idx(a, 0), "objects");
	for (size_t i = 0; objs && i < json_object_array_length(objs); i++) {
		struct json_object *ob = json_object_array_get_idx(objs, i);
		struct json_object *n = tn_json_get(ob, "name");

		if (n && !strcmp(json_object_get_string(n), name))
			refs = json_object_get_int64(tn_json_get(ob, "refs"));
	}
	json_object_put(a);
	return refs;
}

#endif /* THREENODE_H */
