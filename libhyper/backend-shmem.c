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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
	if (o->objects_dir && !*o->objects_dir)
		return hx_err(ctx, -EINVAL, "hyper_open_opts.objects_dir is empty: give a directory, or NULL for the default");
	if (o->objects_dir || getenv("HYPER_OBJECTS_DIR")) {
		ctx->objects_dir = strdup(o->objects_dir ? o->objects_dir :
					  getenv("HYPER_OBJECTS_DIR"));
		ret = ctx->objects_dir ? 0 : -ENOMEM;
	} else {
		ret = asprintf(&ctx->objects_dir, "/dev/shm/hyperoffload-objects-%u",
			       (unsigned int)getuid()) < 0 ? -ENOMEM : 0;
	}
	if (ret)
		return ret;
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
	if (ctx->objdir_fd >= 0)
		close(ctx->objdir_fd);
	free(ctx->objects_dir);
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

static uint64_t obj_len(const struct hyper_region *reg)
{
	return (reg->size + SHMEM_PAGE - 1) & ~(SHMEM_PAGE - 1);
}

static void shmem_region_free(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	uint64_t len = hx_range_round(&ctx->pool, reg->size);

	if (reg->object) {
		/* The file's memory goes with its last name and mapping. */
		if (reg->map)
			munmap(reg->map, obj_len(reg));
		close(reg->ofd);
		return;
	}

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
	/* A shared object is a file of its own, not in the pool's memfd. */
	int fd = reg->object ? reg->ofd : 0;

	if (!reg->object)
		off += reg->off;
	if (dir == HX_DIR_PREFETCH)
		io_uring_prep_read_fixed(sqe, fd, addr, len, off, buf_index);
	else
		io_uring_prep_write_fixed(sqe, fd, addr, len, off, buf_index);
	/*
	 * A memfd read or write never blocks, so io_uring would copy inline,
	 * inside the submitting call, and nothing would overlap the operator.
	 * IOSQE_ASYNC hands the copy to an io-wq worker instead.  With SQPOLL
	 * the inline copy already runs on the SQ thread's own CPU.
	 */
	if (!reg->object)
		sqe->flags |= IOSQE_FIXED_FILE;
	if (!(ctx->ring.flags & IORING_SETUP_SQPOLL))
		sqe->flags |= IOSQE_ASYNC;
}

static void shmem_prep_plain(struct hyper_ctx *ctx, struct io_uring_sqe *sqe,
			     int dir, void *addr, uint32_t len,
			     const struct hyper_region *reg, uint64_t off)
{
	int fd = reg->object ? reg->ofd : 0;

	if (!reg->object)
		off += reg->off;
	if (dir == HX_DIR_PREFETCH)
		io_uring_prep_read(sqe, fd, addr, len, off);
	else
		io_uring_prep_write(sqe, fd, addr, len, off);
	if (!reg->object)
		sqe->flags |= IOSQE_FIXED_FILE;
}

/*
 * Shared objects are files in a directory of this user's (objects_dir):
 * create is an O_TMPFILE there, which no other process can see; publish
 * links it under its name, atomically, so a torn object is never visible
 * (a creator that dies first leaves nothing); open maps it read-only;
 * delete unlinks the name, and the memory goes with the last mapping.
 */
static int objdir(struct hyper_ctx *ctx)
{
	const char *d = ctx->objects_dir;
	struct stat st;
	int fd;

	if (ctx->objdir_fd >= 0)
		return ctx->objdir_fd;
	if (mkdir(d, 0700) && errno != EEXIST)
		return hx_err(ctx, -errno,
			      "shared objects directory %s: %s (set HYPER_OBJECTS_DIR or hyper_open_opts.objects_dir to a directory of yours)",
			      d, strerror(errno));
	/* Not through a link: another user may have planted it. */
	fd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return hx_err(ctx, -errno,
			      "shared objects directory %s: %s%s (set HYPER_OBJECTS_DIR or hyper_open_opts.objects_dir to a directory of yours)",
			      d, strerror(errno),
			      errno == ELOOP || errno == ENOTDIR ? ", or a symbolic link, which is refused: give the directory itself" : "");
	if (fstat(fd, &st) || st.st_uid != geteuid() || st.st_mode & 022) {
		close(fd);
		return hx_err(ctx, -EPERM,
			      "shared objects directory %s is not this user's, or others may write it: another user could replace its objects; remove it or set HYPER_OBJECTS_DIR",
			      d);
	}
	ctx->objdir_fd = fd;
	return fd;
}

/* Map the object's file; on failure the file is closed. */
static int obj_map(struct hyper_ctx *ctx, struct hyper_region *reg, int prot)
{
	int ret;

	reg->map = mmap(NULL, obj_len(reg), prot, MAP_SHARED, reg->ofd, 0);
	if (reg->map != MAP_FAILED)
		return 0;
	reg->map = NULL;
	ret = hx_err(ctx, -errno, "mmap of shared object \"%s\": %s", reg->name,
		     strerror(errno));
	close(reg->ofd);
	reg->ofd = -1;
	return ret;
}

static int shmem_obj_create(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	int dfd = objdir(ctx), ret;

	if (dfd < 0)
		return dfd;
	if (!faccessat(dfd, reg->name, F_OK, AT_SYMLINK_NOFOLLOW))
		return hx_err(ctx, -EEXIST,
			      "shared object \"%s\" exists in %s: delete it first, or choose another name",
			      reg->name, ctx->objects_dir);
	reg->ofd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (reg->ofd < 0)
		return hx_err(ctx, -errno,
			      "shared object \"%s\": O_TMPFILE in %s: %s%s", reg->name,
			      ctx->objects_dir, strerror(errno),
			      errno == EOPNOTSUPP || errno == EISDIR ?
			      " (its file system has no O_TMPFILE: use a tmpfs directory such as /dev/shm)" : "");
	/* Reserve the memory now: a full tmpfs is ENOSPC here, not SIGBUS later. */
	if (fallocate(reg->ofd, 0, 0, obj_len(reg))) {
		ret = hx_err(ctx, -errno, "shared object \"%s\" of %llu bytes in %s: %s",
			     reg->name, (unsigned long long)reg->size,
			     ctx->objects_dir, strerror(errno));
		goto fail;
	}
	return obj_map(ctx, reg, PROT_READ | PROT_WRITE);
fail:
	close(reg->ofd);
	reg->ofd = -1;
	return ret;
}

static int shmem_obj_publish(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	char path[64];

	/* Read-only from now on, for this process and for any other. */
	if (mprotect(reg->map, obj_len(reg), PROT_READ) || fchmod(reg->ofd, 0400))
		return hx_err(ctx, -errno, "shared object \"%s\": making it read-only: %s",
			      reg->name, strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", reg->ofd);
	if (linkat(AT_FDCWD, path, ctx->objdir_fd, reg->name, AT_SYMLINK_FOLLOW)) {
		int err = errno;

		mprotect(reg->map, obj_len(reg), PROT_READ | PROT_WRITE);
		fchmod(reg->ofd, 0600);
		return hx_err(ctx, -err, "publishing shared object \"%s\" in %s: %s%s",
			      reg->name, ctx->objects_dir, strerror(err),
			      err == EEXIST ? " (another process published that name first: delete it, or choose another name)" :
			      err == ENOENT ? " (it needs /proc mounted)" : "");
	}
	return 0;
}

static int shmem_obj_open(struct hyper_ctx *ctx, struct hyper_region *reg)
{
	int dfd = objdir(ctx), ret;
	struct stat st;

	if (dfd < 0)
		return dfd;
	reg->ofd = openat(dfd, reg->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (reg->ofd < 0)
		return hx_err(ctx, -errno, "shared object \"%s\" in %s: %s%s",
			      reg->name, ctx->objects_dir, strerror(errno),
			      errno == ENOENT ? " (not published yet, or deleted)" : "");
	if (fstat(reg->ofd, &st) || !S_ISREG(st.st_mode) || !st.st_size) {
		ret = hx_err(ctx, -EINVAL, "shared object \"%s\" in %s is not a published object (an empty or special file)",
			     reg->name, ctx->objects_dir);
		goto fail;
	}
	reg->size = (uint64_t)st.st_size;
	return obj_map(ctx, reg, PROT_READ);
fail:
	close(reg->ofd);
	reg->ofd = -1;
	return ret;
}

static int shmem_obj_delete(struct hyper_ctx *ctx, const char *name)
{
	int dfd = objdir(ctx);

	if (dfd < 0)
		return dfd;
	if (unlinkat(dfd, name, 0))
		return hx_err(ctx, -errno, "deleting shared object \"%s\" in %s: %s",
			      name, ctx->objects_dir, strerror(errno));
	return 0;
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
	.prep_plain = shmem_prep_plain,
	.obj_create = shmem_obj_create,
	.obj_publish = shmem_obj_publish,
	.obj_open = shmem_obj_open,
	.obj_delete = shmem_obj_delete,
};
