// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kmod backend: /dev/hyperN.  Regions come from HYPER_IOC_ALLOC and are
 * mmap'd at the offset it returns; transfers are IORING_OP_URING_CMD
 * HYPER_URING_CMD_XFER on registered buffers, so the module copies
 * straight between pinned user pages and the pool; a step's several
 * requests go as one HYPER_URING_CMD_BATCH.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/hyper.h>

#include "internal.h"

static int kmod_open(struct hyper_ctx *ctx, const struct hyper_open_opts *o)
{
	const char *dev = o->device ? o->device : HX_DEFAULT_DEVICE;
	struct hyper_pool_info info;

	if (o->flags & HYPER_OPEN_NUMA)
		return hx_err(ctx, -EINVAL,
			      "the kmod pool's NUMA node is the module's to choose");
	if (o->objects_dir)
		return hx_err(ctx, -EINVAL,
			      "objects_dir is for the shmem backend: kmod's shared objects live in the pool");
	ctx->fd = open(dev, O_RDWR | O_CLOEXEC);
	if (ctx->fd < 0)
		return hx_err(ctx, -errno, "%s: %s%s", dev, strerror(errno),
			      errno == ENOENT ? " (is hyper.ko loaded?)" : "");
	memset(&info, 0, sizeof(info));
	if (ioctl(ctx->fd, HYPER_IOC_INFO, &info))
		return hx_err(ctx, -errno, "%s: HYPER_IOC_INFO: %s", dev,
			      strerror(errno));
	if (info.abi_version != HYPER_ABI_VERSION)
		return hx_err(ctx, -EPROTO, "%s: module ABI %u, libhyper speaks %u",
			      dev, info.abi_version, HYPER_ABI_VERSION);
	ctx->page_size = info.page_size;
	ctx->pool_size = info.size;
	ctx->numa_node = info.numa_node;
	ctx->max_batch = info.max_batch < HX_BATCH_MAX ? info.max_batch : HX_BATCH_MAX;
	return 0;
}

static void kmod_close(struct hyper_ctx *ctx)
{
	if (ctx->fd >= 0)
		close(ctx->fd);
}

static uint64_t kmod_len(const struct hyper_ctx *ctx, const struct hyper_region *reg)
{
	return (reg->size + ctx->page_size - 1) & ~(ctx->page_size - 1);
}

static int kmod_region_alloc(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	struct hyper_alloc a;

	memset(&a, 0, sizeof(a));
	a.size = kmod_len(ctx, reg);
	if (reg->flags & HYPER_REGION_HUGE_ALIGN)
		a.flags |= HYPER_ALLOC_HUGE_ALIGN;
	if (a.size < reg->size)
		return hx_err(ctx, -EOVERFLOW, "region size overflows");
	if (ioctl(ctx->fd, HYPER_IOC_ALLOC, &a))
		return hx_err(ctx, -errno, "HYPER_IOC_ALLOC of %llu bytes: %s",
			      (unsigned long long)a.size, strerror(errno));
	reg->handle = a.handle;
	reg->mmap_off = a.mmap_offset;
	return 0;
}

static void kmod_region_free(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	struct hyper_free f;

	if (reg->map)
		munmap(reg->map, kmod_len(ctx, reg));
	memset(&f, 0, sizeof(f));
	f.handle = reg->handle;
	ioctl(ctx->fd, HYPER_IOC_FREE, &f);
}

static int kmod_region_map(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	/* The module refuses a writable mapping of a read-only object. */
	void *p = mmap(NULL, kmod_len(ctx, reg),
		       reg->rdonly ? PROT_READ : PROT_READ | PROT_WRITE,
		       MAP_SHARED, ctx->fd, reg->mmap_off);

	if (p == MAP_FAILED)
		return hx_err(ctx, -errno, "mmap of region %u: %s", reg->handle,
			      strerror(errno));
	reg->map = p;
	return 0;
}

static void kmod_fill_desc(struct hyper_xfer *x, int dir, void *addr,
			   uint32_t len, const struct hyper_region *reg, uint64_t off)
{
	memset(x, 0, sizeof(*x));
	x->addr = (uintptr_t)addr;
	x->len = len;
	x->region_off = off;
	x->handle = reg->handle;
	x->dir = dir == HX_DIR_PREFETCH ? HYPER_DIR_PREFETCH : HYPER_DIR_STORE;
}

static void prep_cmd(struct io_uring_sqe *sqe, uint32_t op, uint16_t buf_index,
		     const void *payload, size_t len)
{
	/* liburing 2.3 has no io_uring_prep_uring_cmd(). */
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, 0, NULL, 0, 0);
	sqe->cmd_op = op;
	sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
	sqe->buf_index = buf_index;
	sqe->flags |= IOSQE_FIXED_FILE;
	/* The module must see zero padding after the command's structure. */
	memset(sqe->cmd, 0, HYPER_URING_CMD_PAYLOAD);
	memcpy(sqe->cmd, payload, len);
}

static void kmod_prep_xfer(struct hyper_ctx *ctx, struct io_uring_sqe *sqe,
			   int dir, void *addr, uint32_t len, uint16_t buf_index,
			   const struct hyper_region *reg, uint64_t off)
{
	struct hyper_xfer x;

	kmod_fill_desc(&x, dir, addr, len, reg, off);
	prep_cmd(sqe, HYPER_URING_CMD_XFER, buf_index, &x, sizeof(x));
}

/*
 * A step's requests as one command: one SQE, one CQE, and the module
 * shares the descriptors out among its workers.  The array stays ours
 * until the CQE (io_uring may reissue the command from a worker, which
 * reads it again).
 */
static void kmod_prep_batch(struct hyper_ctx *ctx, struct io_uring_sqe *sqe,
			    const struct hx_batch *b)
{
	struct hyper_xfer_batch p = {
		.descs = (uintptr_t)b->desc,
		.count = b->n,
	};

	if (b->n == 1)
		prep_cmd(sqe, HYPER_URING_CMD_XFER, b->buf_index, &b->desc[0],
			 sizeof(b->desc[0]));
	else
		prep_cmd(sqe, HYPER_URING_CMD_BATCH, b->buf_index, &p, sizeof(p));
}

static void kmod_prep_plain(struct hyper_ctx *ctx, struct io_uring_sqe *sqe,
			    int dir, void *addr, uint32_t len,
			    const struct hyper_region *reg, uint64_t off)
{
	struct hyper_xfer x;

	kmod_fill_desc(&x, dir, addr, len, reg, off);
	prep_cmd(sqe, HYPER_URING_CMD_XFER, 0, &x, sizeof(x));
	/* A plain user address: the module pins it for the request. */
	sqe->uring_cmd_flags = 0;
	sqe->buf_index = 0;
}

/* The module's objects (Documentation/supernode.md, "Shared objects"). */
static int obj_ioctl(struct hyper_ctx *ctx, unsigned long cmd, const char *what,
		     const char *name, void *arg)
{
	int err;

	if (!ioctl(ctx->fd, cmd, arg))
		return 0;
	err = errno;
	return hx_err(ctx, -err, "%s shared object \"%s\": %s%s", what, name,
		      strerror(err),
		      err == ENODEV ? " (this node has not joined a pool: hyperctl pool format, then hyperctl pool join)" :
		      err == EEXIST ? " (the name is taken, published or not: delete it, or choose another name)" :
		      err == ENOENT ? " (not published yet, or deleted)" :
		      err == ENOSPC ? " (no room in the pool)" :
		      err == ENFILE ? " (the pool's object table is full: delete objects)" : "");
}

static int kmod_obj_create(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	struct hyper_obj o;
	int ret;

	memset(&o, 0, sizeof(o));
	strcpy(o.name, reg->name);
	o.size = kmod_len(ctx, reg);
	ret = obj_ioctl(ctx, HYPER_IOC_OBJ_CREATE, "creating", reg->name, &o);
	if (ret)
		return ret;
	reg->handle = o.handle;
	reg->mmap_off = o.mmap_offset;
	return 0;
}

static int kmod_obj_publish(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	struct hyper_obj_publish p;
	bool mapped = reg->map;
	int ret;

	/* The module publishes no object with a writable mapping. */
	if (mapped) {
		munmap(reg->map, kmod_len(ctx, reg));
		reg->map = NULL;
	}
	memset(&p, 0, sizeof(p));
	p.handle = reg->handle;
	ret = obj_ioctl(ctx, HYPER_IOC_OBJ_PUBLISH, "publishing", reg->name, &p);
	reg->rdonly = !ret;
	/* Mapped again, read-only now (hyper_region_map() tells where). */
	if (mapped) {
		int r = kmod_region_map(ctx, reg);

		ret = ret ? ret : r;
	}
	return ret;
}

static int kmod_obj_open(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	struct hyper_obj o;
	int ret;

	memset(&o, 0, sizeof(o));
	strcpy(o.name, reg->name);
	ret = obj_ioctl(ctx, HYPER_IOC_OBJ_OPEN, "opening", reg->name, &o);
	if (ret)
		return ret;
	reg->size = o.size;
	reg->handle = o.handle;
	reg->mmap_off = o.mmap_offset;
	return 0;
}

static int kmod_obj_delete(struct hyper_ctx *ctx, const char *name)
{
	struct hyper_obj o;

	memset(&o, 0, sizeof(o));
	strcpy(o.name, name);
	return obj_ioctl(ctx, HYPER_IOC_OBJ_DELETE, "deleting", name, &o);
}

const struct hx_backend hx_backend_kmod = {
	.name = "kmod",
	.id = HYPER_BACKEND_KMOD,
	/* CQE32: the module puts each request's completion time there. */
	.ring_flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32,
	.open = kmod_open,
	.close = kmod_close,
	.region_alloc = kmod_region_alloc,
	.region_free = kmod_region_free,
	.region_map = kmod_region_map,
	.prep_xfer = kmod_prep_xfer,
	.fill_desc = kmod_fill_desc,
	.prep_batch = kmod_prep_batch,
	.prep_plain = kmod_prep_plain,
	.obj_create = kmod_obj_create,
	.obj_publish = kmod_obj_publish,
	.obj_open = kmod_obj_open,
	.obj_delete = kmod_obj_delete,
};
