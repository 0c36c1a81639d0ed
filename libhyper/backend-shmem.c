// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shmem backend: the pool is a memfd, and a prefetch or store is a
 * memcpy by libhyper's copy worker (copy-worker.c, the default), or a
 * READ_FIXED or WRITE_FIXED between it and a registered buffer.  It needs
 * no module, so it runs on any kernel with io_uring; binding the memfd to
 * a NUMA node (mbind on its shared mapping sets the file's policy) puts
 * the pool on, for instance, a CXL memory node.
 */
#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define SHMEM_PAGE	4096ULL
#define SHMEM_HUGE	(2ULL << 20)

static int shmem_open(struct hyper_ctx *ctx, const struct hyper_open_opts *o)
{
	uint64_t size = o->pool_bytes ? o->pool_bytes : HX_DEFAULT_POOL;
	int ret;

	if (o->flags & HYPER_OPEN_NUMA) {
		if (numa_available() < 0)
			return hx_err(ctx, -EOPNOTSUPP, "NUMA is not available");
		if (o->numa_node < 0 || o->numa_node > numa_max_node() ||
		    !numa_bitmask_isbitset(numa_all_nodes_ptr, o->numa_node))
			return hx_err(ctx, -EINVAL, "no usable NUMA node %d",
				      o->numa_node);
		ctx->numa_node = o->numa_node;
	}
	size = (size + SHMEM_PAGE - 1) & ~(SHMEM_PAGE - 1);
	ctx->fd = memfd_create("hyper-pool", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (ctx->fd < 0)
		return hx_err(ctx, -errno, "memfd_create: %s", strerror(errno));
	/* Sparse: memory is used only where regions are written. */
	if (ftruncate(ctx->fd, size))
		return hx_err(ctx, -errno, "memfd of %llu bytes: %s",
			      (unsigned long long)size, strerror(errno));
	/*
	 * The copy worker touches the pool through its mapping: a pool that
	 * shrank would be a SIGBUS, so it never can.  Punching holes (freeing
	 * a region) is still allowed.
	 */
	if (fcntl(ctx->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL))
		return hx_err(ctx, -errno, "sealing the pool memfd: %s",
			      strerror(errno));
	ctx->pool_size = size;
	ret = hx_range_init(&ctx->pool, size, SHMEM_PAGE);
	return ret;
}

static void shmem_close(struct hyper_ctx *ctx)
{
	if (ctx->fd >= 0)
		close(ctx->fd);
	hx_range_fini(&ctx->pool);
}

/*
 * Allocate a region's pages now (after mbind, so on its node), not at
 * the first copy into it: on make bench-feedback a run's first store, an
 * 8 MB one into a pool copy never written, ran at 1.8 GB/s against 15
 * for the same copy later, and every prefetch queued behind it waited.
 * MADV_POPULATE_WRITE is Linux 5.14 and later; older kernels (EINVAL)
 * fault the pages in at first use, as before.
 */
static int populate(struct hyper_ctx *ctx, void *map, uint64_t len)
{
#ifdef MADV_POPULATE_WRITE
	if (!madvise(map, len, MADV_POPULATE_WRITE) || errno == EINVAL)
		return 0;
	return hx_err(ctx, -errno,
		      "shmem pool: allocating %llu bytes of pool pages: %s (a smaller pool, or more memory)",
		      (unsigned long long)len, strerror(errno));
#else
	return 0;
#endif
}

static int shmem_region_alloc(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	uint64_t len = hx_range_round(&ctx->pool, reg->size);
	uint64_t align = reg->flags & HYPER_REGION_HUGE_ALIGN ? SHMEM_HUGE : 0;
	int ret;

	if (len < reg->size || hx_range_alloc(&ctx->pool, len, align, &reg->off))
		return hx_err(ctx, -ENOMEM,
			      "shmem pool: no room for %llu bytes (%llu of %llu used)",
			      (unsigned long long)reg->size,
			      (unsigned long long)ctx->pool.used,
			      (unsigned long long)ctx->pool.size);
	reg->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->fd,
			reg->off);
	if (reg->map == MAP_FAILED) {
		ret = hx_err(ctx, -errno, "mmap of a pool region: %s",
			     strerror(errno));
		goto fail;
	}
	if (ctx->numa_node >= 0) {
		unsigned long mask[(ctx->numa_node / (8 * sizeof(long))) + 1];

		memset(mask, 0, sizeof(mask));
		mask[ctx->numa_node / (8 * sizeof(long))] |=
			1UL << (ctx->numa_node % (8 * sizeof(long)));
		if (mbind(reg->map, len, MPOL_BIND, mask, 8 * sizeof(mask), 0)) {
			ret = hx_err(ctx, -errno, "mbind to node %d: %s",
				     ctx->numa_node, strerror(errno));
			munmap(reg->map, len);
			goto fail;
		}
	}
	ret = populate(ctx, reg->map, len);
	if (ret) {
		munmap(reg->map, len);
		goto fail;
	}
	return 0;
fail:
	reg->map = NULL;
	hx_range_free(&ctx->pool, reg->off, len);
	return ret;
}

static void shmem_region_free(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	uint64_t len = hx_range_round(&ctx->pool, reg->size);

	munmap(reg->map, len);
	/* Like the module's regions, the next one to get this space sees zeros. */
	fallocate(ctx->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, reg->off, len);
	hx_range_free(&ctx->pool, reg->off, len);
}

static int shmem_region_map(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	/* Mapped at allocation, since mbind needs the mapping. */
	return reg->map ? 0 : -EINVAL;
}

static void shmem_prep_xfer(struct hyper_ctx *ctx, struct io_uring_sqe *sqe,
			    int dir, void *addr, uint32_t len, uint16_t buf_index,
			    const struct hyper_region *reg, uint64_t off)
{
	if (dir == HX_DIR_PREFETCH)
		io_uring_prep_read_fixed(sqe, 0, addr, len, reg->off + off, buf_index);
	else
		io_uring_prep_write_fixed(sqe, 0, addr, len, reg->off + off, buf_index);
	/*
	 * A memfd read or write never blocks, so io_uring would copy inline,
	 * inside the submitting call, and nothing would overlap the operator.
	 * IOSQE_ASYNC hands the copy to an io-wq worker instead.  With SQPOLL
	 * the inline copy already runs on the SQ thread's own CPU.
	 */
	sqe->flags |= IOSQE_FIXED_FILE;
	if (!(ctx->ring.flags & IORING_SETUP_SQPOLL))
		sqe->flags |= IOSQE_ASYNC;
}

const struct hx_backend hx_backend_shmem = {
	.name = "shmem",
	.id = HYPER_BACKEND_SHMEM,
	.open = shmem_open,
	.close = shmem_close,
	.region_alloc = shmem_region_alloc,
	.region_free = shmem_region_free,
	.region_map = shmem_region_map,
	.prep_xfer = shmem_prep_xfer,
};
