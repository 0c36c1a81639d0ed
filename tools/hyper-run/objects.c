// SPDX-License-Identifier: GPL-2.0
/*
 * Shared objects (Documentation/supernode.md): a schedule's weights
 * published once and bound read-only by every node that runs it, and the
 * KV cache handed from the node that ran the prompt to the one that
 * decodes.  libhyper writes and binds the objects; what is checked here
 * is that an object is the one this schedule needs, tensor by tensor,
 * before anything is bound, so that a wrong one is refused by name and
 * not found out by a failed pattern check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hyper-run.h"

static int lib_err(const struct hyper_ctx *ctx, char *err, size_t len,
		   const char *what, const char *name, int ret)
{
	snprintf(err, len, "%s %s: %s: %s", what, name, hyper_strerror(ret),
		 hyper_last_error(ctx));
	return ret;
}

/*
 * Each tensor in @obj's directory: one of @s of @kind, its bytes, with a
 * pool copy in @s to take, and one of @want when that is given; every
 * tensor of @want is there.  Marks them in @from; fills @u.
 */
static int check_directory(struct hyper_ctx *ctx, const struct hyper_schedule *s,
			   struct hyper_region *obj, const char *name,
			   uint32_t kind, const bool *want, bool *from,
			   struct object_use *u, char *err, size_t len)
{
	struct hyper_schedule_info info;
	struct hyper_object_entry e;
	struct hyper_tensor_info ti;
	unsigned int i;
	int ret, t;

	hyper_schedule_info(s, &info);
	u->name = name;
	u->bytes = hyper_region_size(obj);
	for (i = 0; !(ret = hyper_object_entry(ctx, obj, i, &e)); i++) {
		t = hyper_schedule_find(s, e.id);
		if (t < 0) {
			snprintf(err, len, "object %s holds tensor \"%s\", which %s does not have: it was made for another schedule",
				 name, e.id, info.name);
			return -EINVAL;
		}
		hyper_schedule_tensor(s, t, &ti);
		if (ti.kind != kind || e.bytes != ti.bytes) {
			snprintf(err, len, "object %s holds %llu bytes of %s tensor \"%s\"; the schedule's is %s of %llu bytes: it was made for another schedule",
				 name, (unsigned long long)e.bytes,
				 hyper_kind_name(e.kind) ?: "?", e.id,
				 hyper_kind_name(ti.kind) ?: "?",
				 (unsigned long long)ti.bytes);
			return -EINVAL;
		}
		if (ti.home != HYPER_HOME_POOL || (want && !want[t])) {
			snprintf(err, len, "object %s holds tensor \"%s\", which %s: it was made for another schedule or split",
				 name, e.id, want ? "is not handed over at this split" :
				 "has no pool copy in this schedule (its home is not the pool)");
			return -EINVAL;
		}
		from[t] = true;
		u->tensors++;
		u->tensor_bytes += e.bytes;
	}
	if (ret != -ENOENT)
		return lib_err(ctx, err, len, "reading the directory of", name, ret);
	for (t = 0; want && t < (int)info.nr_tensors; t++) {
		if (want[t] && !from[t]) {
			hyper_schedule_tensor(s, t, &ti);
			snprintf(err, len, "object %s lacks tensor \"%s\", which the steps after the split read: export it with hyper-run --until at the same step of the same schedule",
				 name, ti.id);
			return -ENOENT;
		}
	}
	return 0;
}

static int bind(struct hyper_ctx *ctx, const struct hyper_schedule *s,
		const char *name, uint32_t kind, const bool *want,
		unsigned int flags, bool *from, struct hyper_region **regp,
		struct object_use *u, char *err, size_t len)
{
	int ret;

	memset(u, 0, sizeof(*u));
	ret = hyper_object_open(ctx, name, regp);
	if (ret) {
		*regp = NULL;
		return lib_err(ctx, err, len, "opening object", name, ret);
	}
	ret = check_directory(ctx, s, *regp, name, kind, want, from, u, err,
			      len);
	if (ret)
		return ret;
	ret = hyper_bind_object(ctx, *regp, flags);
	if (ret < 0)
		return lib_err(ctx, err, len, "binding object", name, ret);
	if ((uint32_t)ret != u->tensors) {
		snprintf(err, len, "binding object %s: libhyper bound %d of its %u tensors",
			 name, ret, u->tensors);
		return -EPROTO;
	}
	return 0;
}

int objects_bind_weights(struct hyper_ctx *ctx, const struct hyper_schedule *s,
			 const char *name, bool *from, struct hyper_region **regp,
			 struct object_use *u, char *err, size_t len)
{
	return bind(ctx, s, name, HYPER_KIND_WEIGHT, NULL, 0, from, regp, u,
		    err, len);
}

int objects_bind_kv(struct hyper_ctx *ctx, const struct hyper_schedule *s,
		    const char *name, const bool *handed, bool *from,
		    struct hyper_region **regp, struct object_use *u, char *err,
		    size_t len)
{
	return bind(ctx, s, name, HYPER_KIND_KV, handed,
		    HYPER_BIND_OBJECT_COPY, from, regp, u, err, len);
}

/*
 * A new object of the tensors of @kind that are at home in the pool, or
 * of exactly @want when that is given, from their pool copies.  Not
 * hyper_object_export(), which takes every tensor with a pool copy: a
 * weight the schedule offloads after its first use has one, which holds
 * nothing yet, and a KV block the steps after a split never read.
 */
int objects_export(struct hyper_ctx *ctx, const struct hyper_schedule *s,
		   const char *name, uint32_t kind, const bool *want,
		   struct object_use *u, char *err, size_t len)
{
	struct hyper_schedule_info info;
	struct hyper_object_entry *ents;
	struct hyper_tensor_info ti;
	struct hyper_region *obj;
	const void **data;
	unsigned int n = 0;
	int ret;

	memset(u, 0, sizeof(*u));
	hyper_schedule_info(s, &info);
	ents = calloc(info.nr_tensors ?: 1, sizeof(*ents));
	data = calloc(info.nr_tensors ?: 1, sizeof(*data));
	if (!ents || !data) {
		snprintf(err, len, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t t = 0; t < info.nr_tensors; t++) {
		hyper_schedule_tensor(s, t, &ti);
		if (ti.kind != kind ||
		    (want ? !want[t] : ti.home != HYPER_HOME_POOL))
			continue;
		data[n] = hyper_tensor_pool_ptr(ctx, t);
		if (!data[n]) {
			snprintf(err, len, "object %s: tensor \"%s\" has no pool copy",
				 name, ti.id);
			ret = -ENOENT;
			goto out;
		}
		ents[n].id = ti.id;
		ents[n].desc = "";
		ents[n].bytes = ti.bytes;
		ents[n].kind = kind;
		u->tensor_bytes += ti.bytes;
		n++;
	}
	if (!n) {
		snprintf(err, len, "object %s: the schedule has no %s tensor %s",
			 name, hyper_kind_name(kind),
			 want ? "to hand over at this split" : "at home in the pool");
		ret = -ENOENT;
		goto out;
	}
	ret = hyper_object_pack(ctx, name, ents, data, n, &obj);
	if (ret) {
		lib_err(ctx, err, len, "publishing object", name, ret);
		goto out;
	}
	u->name = name;
	u->tensors = n;
	u->bytes = hyper_region_size(obj);
	hyper_region_free(ctx, obj);
out:
	free(ents);
	free(data);
	return ret;
}
