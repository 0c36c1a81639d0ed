// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Shared objects: named pool memory one node creates, writes and
 * publishes, and every node then opens read-only (the backends do the
 * naming: kmod's HYPER_IOC_OBJ_*, shmem's files in a directory).  On top
 * of them, this file defines the directory of tensors an object may
 * start with, once: hyper_object_pack() and hyper_object_export() write
 * it, hyper_object_entry() and hyper_bind_object() read it.  It also
 * holds the synchronous hyper_region_read() and hyper_region_write().
 *
 * Directory format (Documentation/supernode.md, "Tensors in an object"),
 * little-endian as the hosts of one pool are:
 *   header, 64 bytes: magic "HYPEROBJ", version 1, entry count, the
 *     directory's bytes (header, entries and strings, a multiple of 64),
 *     the FNV-1a 64 hash of those bytes taken with the hash field zero;
 *   an entry of 40 bytes per tensor: offset, bytes, kind, and where its
 *     id and description are in the string area (NUL-terminated);
 *   the strings; then the tensors' bytes, each at a multiple of 64 at or
 *     after the directory's end.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <hyper/graph_id.h>

#include "internal.h"

#define HX_OD_MAGIC	"HYPEROBJ"
#define HX_OD_VERSION	1
#define HX_OD_ALIGN	64
#define HX_OD_DESC_MAX	255
#define HX_OD_MAX_ENTRIES (1U << 24)

struct hx_od_hdr {
	char magic[8];
	uint32_t version;
	uint32_t nr;
	uint64_t dir_bytes;
	uint64_t checksum;
	uint64_t reserved[4];
};

struct hx_od_ent {
	uint64_t offset;
	uint64_t bytes;
	uint32_t kind;
	uint32_t id_off;	/* from the object's start */
	uint32_t id_len;	/* without the NUL */
	uint32_t desc_off;
	uint32_t desc_len;
	uint32_t reserved;
};

_Static_assert(sizeof(struct hx_od_hdr) == 64, "object directory header");
_Static_assert(sizeof(struct hx_od_ent) == 40, "object directory entry");

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int check_name(struct hyper_ctx *ctx, const char *name)
{
	size_t n;

	if (!name)
		return hx_err(ctx, -EINVAL, "no shared object name given");
	n = strnlen(name, HYPER_OBJECT_NAME_MAX + 1);
	if (!n || n > HYPER_OBJECT_NAME_MAX || strspn(name,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n ||
	    !strcmp(name, ".") || !strcmp(name, ".."))
		return hx_err(ctx, -EINVAL,
			      "shared object name \"%.80s%s\": give 1 to %d characters of A-Z a-z 0-9 . _ - (not \".\" or \"..\")",
			      name, n > 80 ? "..." : "", HYPER_OBJECT_NAME_MAX);
	return 0;
}

/* A new region of object @name: created (@bytes) or opened (@bytes 0). */
static int obj_region(struct hyper_ctx *ctx, const char *name, uint64_t bytes,
		      struct hyper_region **regp)
{
	struct hyper_region *reg;
	int ret;

	if (!ctx || !regp)
		return -EINVAL;
	*regp = NULL;
	ret = check_name(ctx, name);
	if (ret)
		return ret;
	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -ENOMEM;
	reg->object = true;
	reg->ofd = -1;
	reg->size = bytes;
	strcpy(reg->name, name);
	/* An opened object was published by someone, and is read-only. */
	reg->published = reg->rdonly = !bytes;
	return hx_region_add(ctx, reg, bytes ? ctx->be->obj_create : ctx->be->obj_open,
			     regp);
}

int hyper_object_create(struct hyper_ctx *ctx, const char *name, uint64_t bytes,
			struct hyper_region **regp)
{
	if (!ctx || !regp)
		return -EINVAL;
	*regp = NULL;
	if (name && !bytes)
		return hx_err(ctx, -EINVAL, "shared object \"%.80s\": size must not be zero",
			      name);
	if (name && bytes > HS_BYTES_MAX)
		return hx_err(ctx, -EINVAL,
			      "shared object \"%.80s\": %llu bytes is more than a pool holds",
			      name, (unsigned long long)bytes);
	return obj_region(ctx, name, bytes, regp);
}

int hyper_object_publish(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	int ret;

	if (!ctx || !reg)
		return -EINVAL;
	if (!hx_region_mine(ctx, reg) || !reg->object)
		return hx_err(ctx, -EINVAL,
			      "not a shared object of this context: publish what hyper_object_create() returned");
	if (reg->published || reg->rdonly)
		return hx_err(ctx, -EALREADY,
			      "shared object \"%s\" is already published", reg->name);
	ret = ctx->be->obj_publish(ctx, reg);
	if (ret)
		return ret;
	reg->published = true;
	reg->rdonly = true;
	return 0;
}

int hyper_object_open(struct hyper_ctx *ctx, const char *name,
		      struct hyper_region **regp)
{
	return obj_region(ctx, name, 0, regp);
}

int hyper_object_delete(struct hyper_ctx *ctx, const char *name)
{
	int ret;

	if (!ctx)
		return -EINVAL;
	ret = check_name(ctx, name);
	return ret ? ret : ctx->be->obj_delete(ctx, name);
}

/* ---- synchronous transfers ------------------------------------------- */

static int region_xfer(struct hyper_ctx *ctx, struct hyper_region *reg,
		       uint64_t off, void *buf, uint64_t len, int dir)
{
	const char *what = dir == HX_DIR_PREFETCH ? "hyper_region_read" :
			   "hyper_region_write";
	uint64_t end;
	int ret;

	if (!ctx || !reg)
		return -EINVAL;
	if (!hx_region_mine(ctx, reg))
		return hx_err(ctx, -EINVAL, "%s: not a region of this context", what);
	if (!buf && len)
		return hx_err(ctx, -EINVAL, "%s: no buffer given", what);
	if (__builtin_add_overflow(off, len, &end) || end > reg->size)
		return hx_err(ctx, -EINVAL,
			      "%s: bytes %llu to %llu are outside the region of %llu bytes",
			      what, (unsigned long long)off, (unsigned long long)end,
			      (unsigned long long)reg->size);
	if (dir == HX_DIR_STORE && reg->rdonly)
		return hx_err(ctx, -EACCES,
			      "hyper_region_write: shared object \"%s\" is read-only once published: its contents never change; create a new object for new contents",
			      reg->name);
	if (ctx->inflight || ctx->unsubmitted || ctx->stage)
		return hx_err(ctx, -EBUSY,
			      "%s: the schedule's transfers are in flight: call hyper_drain() first",
			      what);
	while (len) {
		uint64_t n = len < ctx->chunk ? len : ctx->chunk;
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ctx->ring);
		struct io_uring_cqe *cqe;
		int res;

		if (!sqe)
			return hx_err(ctx, -EBUSY, "%s: the submission queue is full", what);
		ctx->be->prep_plain(ctx, sqe, dir, buf, (uint32_t)n, reg, off);
		io_uring_sqe_set_data64(sqe, 0);
		ret = io_uring_submit_and_wait(&ctx->ring, 1);
		if (ret < 0)
			return hx_err(ctx, ret, "%s: io_uring_submit: %s", what,
				      strerror(-ret));
		ret = io_uring_wait_cqe(&ctx->ring, &cqe);
		if (ret)
			return hx_err(ctx, ret, "%s: io_uring_wait_cqe: %s", what,
				      strerror(-ret));
		res = cqe->res;
		io_uring_cqe_seen(&ctx->ring, cqe);
		if (res <= 0)
			return hx_err(ctx, res ? res : -EIO,
				      "%s of %llu bytes at offset %llu of the region: %s",
				      what, (unsigned long long)n,
				      (unsigned long long)off,
				      res ? strerror(-res) : "nothing moved");
		buf = (char *)buf + res;
		off += (uint64_t)res;
		len -= (uint64_t)res;
	}
	return 0;
}

int hyper_region_read(struct hyper_ctx *ctx, struct hyper_region *reg,
		      uint64_t off, void *buf, uint64_t len)
{
	return region_xfer(ctx, reg, off, buf, len, HX_DIR_PREFETCH);
}

int hyper_region_write(struct hyper_ctx *ctx, struct hyper_region *reg,
		       uint64_t off, const void *buf, uint64_t len)
{
	return region_xfer(ctx, reg, off, (void *)buf, len, HX_DIR_STORE);
}

/* ---- the directory ---------------------------------------------------- */

static uint64_t dir_hash(const void *dir, uint64_t bytes)
{
	static const uint64_t zero;
	uint64_t h;

	h = hyper_fnv1a(HYPER_FNV_OFFSET, dir, offsetof(struct hx_od_hdr, checksum));
	h = hyper_fnv1a(h, &zero, sizeof(zero));
	return hyper_fnv1a(h, (const char *)dir + offsetof(struct hx_od_hdr, reserved),
			   bytes - offsetof(struct hx_od_hdr, reserved));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts @ids; the first one given twice, or NULL. */
static const char *dup_id(const char **ids, uint32_t n)
{
	qsort(ids, n, sizeof(*ids), cmp_str);
	for (uint32_t i = 1; i < n; i++)
		if (!strcmp(ids[i - 1], ids[i]))
			return ids[i];
	return NULL;
}

/* Ids 1..HS_ID_MAX characters, unique; descriptions short. */
static int check_entries(struct hyper_ctx *ctx, const struct hyper_object_entry *ents,
			 const void *const *data, unsigned int n)
{
	const char **ids, *dup;
	int ret = 0;

	if (!n || n > HX_OD_MAX_ENTRIES)
		return hx_err(ctx, -EINVAL, "%u tensors to pack: give 1 to %u", n,
			      HX_OD_MAX_ENTRIES);
	for (unsigned int i = 0; i < n; i++) {
		const struct hyper_object_entry *e = &ents[i];
		size_t len = e->id ? strnlen(e->id, HS_ID_MAX + 1) : 0;

		if (!len || len > HS_ID_MAX)
			return hx_err(ctx, -EINVAL,
				      "entry %u: a tensor id of 1 to %d characters is needed",
				      i, HS_ID_MAX);
		if (e->desc && strnlen(e->desc, HX_OD_DESC_MAX + 1) > HX_OD_DESC_MAX)
			return hx_err(ctx, -EINVAL,
				      "tensor \"%s\": its description is longer than %d characters",
				      e->id, HX_OD_DESC_MAX);
		if (!e->bytes || e->bytes > HS_BYTES_MAX || !data[i])
			return hx_err(ctx, -EINVAL,
				      "tensor \"%s\": %llu bytes%s: give 1 to 2^48 bytes and its data",
				      e->id, (unsigned long long)e->bytes,
				      data[i] ? "" : " and no data");
		if (e->kind >= HYPER_KIND_NR || e->reserved0 || e->reserved[0] ||
		    e->reserved[1])
			return hx_err(ctx, -EINVAL,
				      "tensor \"%s\": kind %u is not a tensor kind, or a reserved field is set",
				      e->id, e->kind);
	}
	ids = malloc(n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++)
		ids[i] = ents[i].id;
	dup = dup_id(ids, n);
	if (dup)
		ret = hx_err(ctx, -EINVAL, "tensor \"%s\" is given twice", dup);
	free(ids);
	return ret;
}

/* The directory and the tensors into a new object; published. */
static int pack(struct hyper_ctx *ctx, const char *name,
		const struct hyper_object_entry *ents, const void *const *data,
		unsigned int n, struct hyper_region **regp)
{
	uint64_t str = sizeof(struct hx_od_hdr) + (uint64_t)n * sizeof(struct hx_od_ent);
	uint64_t dir_bytes = str, total;
	struct hyper_region *reg;
	struct hx_od_hdr *h;
	struct hx_od_ent *oe;
	void *addr;
	char *base;
	int ret;

	for (unsigned int i = 0; i < n; i++)
		dir_bytes += strlen(ents[i].id) + 1 +
			     (ents[i].desc ? strlen(ents[i].desc) : 0) + 1;
	if (dir_bytes > UINT32_MAX)
		return hx_err(ctx, -E2BIG, "%u tensors: the directory would pass 4 GiB", n);
	dir_bytes = align_up(dir_bytes, HX_OD_ALIGN);
	total = dir_bytes;
	for (unsigned int i = 0; i < n; i++)
		total = align_up(total, HX_OD_ALIGN) + ents[i].bytes;
	ret = hyper_object_create(ctx, name, total, &reg);
	if (ret)
		return ret;
	ret = hyper_region_map(ctx, reg, &addr);
	if (ret)
		goto fail;
	base = addr;
	h = (struct hx_od_hdr *)base;
	oe = (struct hx_od_ent *)(h + 1);
	memset(base, 0, dir_bytes);
	memcpy(h->magic, HX_OD_MAGIC, sizeof(h->magic));
	h->version = HX_OD_VERSION;
	h->nr = n;
	h->dir_bytes = dir_bytes;
	total = dir_bytes;
	for (unsigned int i = 0; i < n; i++) {
		const char *desc = ents[i].desc ? ents[i].desc : "";

		oe[i].offset = total = align_up(total, HX_OD_ALIGN);
		oe[i].bytes = ents[i].bytes;
		oe[i].kind = ents[i].kind;
		oe[i].id_off = (uint32_t)str;
		oe[i].id_len = (uint32_t)strlen(ents[i].id);
		memcpy(base + str, ents[i].id, oe[i].id_len);
		str += oe[i].id_len + 1;
		oe[i].desc_off = (uint32_t)str;
		oe[i].desc_len = (uint32_t)strlen(desc);
		memcpy(base + str, desc, oe[i].desc_len);
		str += oe[i].desc_len + 1;
		memcpy(base + total, data[i], ents[i].bytes);
		total += ents[i].bytes;
	}
	h->checksum = dir_hash(base, dir_bytes);
	ret = hyper_object_publish(ctx, reg);
	if (ret)
		goto fail;
	if (regp)
		*regp = reg;
	else
		hyper_region_free(ctx, reg);
	return 0;
fail:
	hyper_region_free(ctx, reg);
	return ret;
}

int hyper_object_pack(struct hyper_ctx *ctx, const char *name,
		      const struct hyper_object_entry *ents,
		      const void *const *data, unsigned int n,
		      struct hyper_region **regp)
{
	int ret;

	if (!ctx)
		return -EINVAL;
	if (regp)
		*regp = NULL;
	if (!ents || !data)
		return hx_err(ctx, -EINVAL, "hyper_object_pack: no entries or no data given");
	ret = check_name(ctx, name);
	if (!ret)
		ret = check_entries(ctx, ents, data, n);
	return ret ? ret : pack(ctx, name, ents, data, n, regp);
}

/* No tensor twice in a directory: a bind by id would be ambiguous. */
static int unique_ids(struct hyper_ctx *ctx, const struct hyper_region *obj,
		      const char *base, const struct hx_od_ent *oe, uint32_t n)
{
	const char **ids = malloc((n ?: 1) * sizeof(*ids)), *dup;
	int ret = 0;

	if (!ids)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		ids[i] = base + oe[i].id_off;
	dup = dup_id(ids, n);
	if (dup)
		ret = hx_err(ctx, -EBADMSG,
			     "shared object \"%s\": its tensor directory is corrupt (tensor \"%s\" is in it twice)",
			     obj->name, dup);
	free(ids);
	return ret;
}

/* @obj's directory, checked once (a published object never changes). */
static int dir_get(struct hyper_ctx *ctx, struct hyper_region *obj,
		   const struct hx_od_hdr **hp)
{
	const struct hx_od_hdr *h;
	const struct hx_od_ent *oe;
	const char *base;
	void *addr;
	int ret;

	if (!obj || !hx_region_mine(ctx, obj) || !obj->object)
		return hx_err(ctx, -EINVAL,
			      "not a shared object of this context (hyper_object_open() returns one)");
	if (!obj->rdonly)
		return hx_err(ctx, -EINVAL,
			      "shared object \"%s\" is not published yet: its directory is read after hyper_object_publish()",
			      obj->name);
	ret = hyper_region_map(ctx, obj, &addr);
	if (ret)
		return ret;
	base = addr;
	h = (const struct hx_od_hdr *)base;
	*hp = h;
	if (obj->dir_ok)
		return 0;
	if (obj->size < sizeof(*h) || memcmp(h->magic, HX_OD_MAGIC, sizeof(h->magic)))
		return hx_err(ctx, -EBADMSG,
			      "shared object \"%s\" has no tensor directory (it was not made by hyper_object_pack() or hyper_object_export())",
			      obj->name);
	if (h->version != HX_OD_VERSION)
		return hx_err(ctx, -EPROTONOSUPPORT,
			      "shared object \"%s\": directory version %u, this libhyper reads %u",
			      obj->name, h->version, HX_OD_VERSION);
	if (h->dir_bytes > obj->size || h->dir_bytes % HX_OD_ALIGN ||
	    h->nr > HX_OD_MAX_ENTRIES ||
	    sizeof(*h) + (uint64_t)h->nr * sizeof(*oe) > h->dir_bytes ||
	    h->checksum != dir_hash(base, h->dir_bytes))
		goto bad;
	oe = (const struct hx_od_ent *)(h + 1);
	for (uint32_t i = 0; i < h->nr; i++) {
		uint64_t str = sizeof(*h) + (uint64_t)h->nr * sizeof(*oe), end;

		if (oe[i].id_off < str || oe[i].desc_off < str || !oe[i].id_len ||
		    (uint64_t)oe[i].id_off + oe[i].id_len >= h->dir_bytes ||
		    (uint64_t)oe[i].desc_off + oe[i].desc_len >= h->dir_bytes ||
		    base[oe[i].id_off + oe[i].id_len] ||
		    base[oe[i].desc_off + oe[i].desc_len] ||
		    strlen(base + oe[i].id_off) != oe[i].id_len ||
		    oe[i].kind >= HYPER_KIND_NR || oe[i].offset < h->dir_bytes ||
		    __builtin_add_overflow(oe[i].offset, oe[i].bytes, &end) ||
		    end > obj->size)
			goto bad;
	}
	ret = unique_ids(ctx, obj, base, oe, h->nr);
	if (ret)
		return ret;
	obj->dir_ok = true;
	return 0;
bad:
	return hx_err(ctx, -EBADMSG,
		      "shared object \"%s\": its tensor directory is corrupt (bad size, offset or checksum)",
		      obj->name);
}

int hyper_object_entry(struct hyper_ctx *ctx, struct hyper_region *obj,
		       unsigned int idx, struct hyper_object_entry *e)
{
	const struct hx_od_hdr *h;
	const struct hx_od_ent *oe;
	int ret;

	if (!ctx || !e)
		return -EINVAL;
	ret = dir_get(ctx, obj, &h);
	if (ret)
		return ret;
	if (idx >= h->nr)
		return -ENOENT;
	oe = (const struct hx_od_ent *)(h + 1) + idx;
	memset(e, 0, sizeof(*e));
	e->id = (const char *)h + oe->id_off;
	e->desc = (const char *)h + oe->desc_off;
	e->offset = oe->offset;
	e->bytes = oe->bytes;
	e->kind = oe->kind;
	return 0;
}

/* ---- a schedule's tensors --------------------------------------------- */

int hyper_object_export(struct hyper_ctx *ctx, const char *name, uint32_t kinds,
			struct hyper_region **regp)
{
	const struct hyper_schedule *s;
	struct hyper_object_entry *ents;
	const void **data;
	unsigned int n = 0;
	int ret;

	if (!ctx)
		return -EINVAL;
	if (regp)
		*regp = NULL;
	ret = check_name(ctx, name);
	if (ret)
		return ret;
	if (!ctx->prepared)
		return hx_err(ctx, -EINVAL,
			      "hyper_object_export: the pool copies exist after hyper_prepare()");
	if (!kinds || kinds & ~(((1U << HYPER_KIND_NR) - 1) & ~1U))
		return hx_err(ctx, -EINVAL,
			      "hyper_object_export: kinds 0x%x: give a mask of 1u << HYPER_KIND_*",
			      kinds);
	if (ctx->in_step)
		return hx_err(ctx, -EBUSY,
			      "hyper_object_export: a step is in progress: export between runs");
	/* The stores of the last run must have landed. */
	ret = hyper_drain(ctx);
	if (ret)
		return ret;
	s = ctx->sched;
	ents = calloc(s->nr_tensors ?: 1, sizeof(*ents));
	data = calloc(s->nr_tensors ?: 1, sizeof(*data));
	if (!ents || !data) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < s->nr_tensors; i++) {
		const struct hx_tensor *t = &ctx->t[i];

		if (!(kinds & (1U << s->tensors[i].kind)) || !t->reg || !t->reg->map)
			continue;
		ents[n].id = s->tensors[i].id;
		ents[n].bytes = s->tensors[i].bytes;
		ents[n].kind = s->tensors[i].kind;
		data[n++] = (const char *)t->reg->map + t->reg_off;
	}
	if (!n)
		ret = hx_err(ctx, -ENOENT,
			     "hyper_object_export: no tensor of kinds 0x%x has a pool copy in this schedule",
			     kinds);
	else
		ret = pack(ctx, name, ents, data, n, regp);
out:
	free(ents);
	free(data);
	return ret;
}

int hyper_bind_object(struct hyper_ctx *ctx, struct hyper_region *obj,
		      unsigned int flags)
{
	const struct hyper_schedule *s;
	const struct hx_od_hdr *h;
	const struct hx_od_ent *oe;
	int ret, n = 0;

	if (!ctx)
		return -EINVAL;
	if (!ctx->sched)
		return hx_err(ctx, -EINVAL, "hyper_bind_object: attach a schedule first");
	if (ctx->prepared)
		return hx_err(ctx, -EBUSY,
			      "hyper_bind_object: bindings are fixed by hyper_prepare(): bind before it");
	if (flags & ~HYPER_BIND_OBJECT_COPY)
		return hx_err(ctx, -EINVAL, "hyper_bind_object: unknown flags 0x%x",
			      flags & ~HYPER_BIND_OBJECT_COPY);
	ret = dir_get(ctx, obj, &h);
	if (ret)
		return ret;
	if (ctx->cu && !(flags & HYPER_BIND_OBJECT_COPY))
		return hx_err(ctx, -EOPNOTSUPP,
			      "shared object \"%s\": a CUDA context pins its pool and cannot pin a read-only object: bind it with HYPER_BIND_OBJECT_COPY",
			      obj->name);
	s = ctx->sched;
	oe = (const struct hx_od_ent *)(h + 1);
	/* Check every entry first: a refusal binds nothing. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t e = 0; e < h->nr; e++) {
			int i = hs_find(s, (const char *)h + oe[e].id_off);
			struct hx_tensor *t;

			if (i < 0 || !(s->tensors[i].flags & HYPER_TENSOR_NEEDS_POOL))
				continue;
			t = &ctx->t[i];
			if (!pass && s->tensors[i].bytes != oe[e].bytes)
				return hx_err(ctx, -EINVAL,
					      "tensor \"%s\": %llu bytes in the schedule, %llu in shared object \"%s\": not the same tensor",
					      s->tensors[i].id,
					      (unsigned long long)s->tensors[i].bytes,
					      (unsigned long long)oe[e].bytes, obj->name);
			if (!pass && (t->reg || t->copy_from))
				return hx_err(ctx, -EBUSY,
					      "tensor \"%s\" already has its pool copy bound",
					      s->tensors[i].id);
			if (!pass)
				continue;
			if (flags & HYPER_BIND_OBJECT_COPY) {
				t->copy_from = obj;
				t->copy_off = oe[e].offset;
			} else {
				t->reg = obj;
				t->reg_off = oe[e].offset;
			}
			n++;
		}
	}
	return n;
}

static const char *store_step(const struct hyper_schedule *s, uint32_t ti,
			      uint32_t *stepp)
{
	for (uint32_t k = 0; k < s->nr_steps; k++) {
		const struct hs_step *st = &s->steps[k];

		for (uint32_t j = 0; j < st->nr_before + st->nr_after; j++) {
			const struct hyper_cop *c = j < st->nr_before ? &st->before[j] :
						    &st->after[j - st->nr_before];

			if (c->tensor == ti && c->op == HYPER_OP_STORE) {
				*stepp = k;
				return st->op;
			}
		}
	}
	return NULL;
}

/*
 * hyper_prepare(), before placing: no store into a read-only pool copy,
 * and no CUDA transfer from an object (hyper_bind_pool() could bind one).
 */
int hx_object_check(struct hyper_ctx *ctx)
{
	const struct hyper_schedule *s = ctx->sched;

	for (uint32_t i = 0; i < s->nr_tensors; i++) {
		const struct hyper_region *r = ctx->t[i].reg;
		const char *op;
		uint32_t k;

		if (r && r->object && ctx->cu)
			return hx_err(ctx, -EOPNOTSUPP,
				      "tensor \"%s\" is bound to shared object \"%s\": a CUDA context copies only from the pool it pinned; bind the object with HYPER_BIND_OBJECT_COPY",
				      s->tensors[i].id, r->name);
		if (!r || !r->rdonly || !(op = store_step(s, i, &k)))
			continue;
		return hx_err(ctx, -EACCES,
			      "tensor \"%s\" is bound read-only to shared object \"%s\" and step %u (%s) stores it: bind the object with HYPER_BIND_OBJECT_COPY for a private copy",
			      s->tensors[i].id, r->name, k, op);
	}
	return 0;
}

/* hyper_prepare(), once pool copies are mapped: HYPER_BIND_OBJECT_COPY. */
void hx_object_fill(struct hyper_ctx *ctx)
{
	const struct hyper_schedule *s = ctx->sched;

	for (uint32_t i = 0; i < s->nr_tensors; i++) {
		struct hx_tensor *t = &ctx->t[i];

		if (!t->copy_from)
			continue;
		memcpy((char *)t->reg->map + t->reg_off,
		       (const char *)t->copy_from->map + t->copy_off,
		       s->tensors[i].bytes);
		t->copy_from = NULL;
	}
}
