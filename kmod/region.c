// SPDX-License-Identifier: GPL-2.0
/*
 * Regions: zeroed pieces of a pool, reference counted so that the memory
 * outlives the handle for as long as a mapping or a transfer still uses it.
 */
#include <linux/libnvdimm.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "hyper.h"

/*
 * Zero in chunks, giving the CPU up between them: a multi-TiB region takes
 * minutes, and a task killed meanwhile stops at the next chunk.
 */
static int hyk_region_zero(struct hyk_region *r)
{
	struct hyk_pool *pool = &r->hdev->pool;
	u64 done = 0;

	while (done < r->size) {
		phys_addr_t phys;
		void *va;
		u64 n;

		if (fatal_signal_pending(current))
			return -EINTR;
		n = hyk_pool_span(pool, r->off + done, &va, &phys);
		n = min3(n, r->size - done, (u64)SZ_2M);
		memset(va, 0, n);
		done += n;
		cond_resched();
	}
	return 0;
}

/**
 * hyk_region_create() - allocate and zero a region
 * @hdev:	device to take it from
 * @size:	bytes, page aligned and non-zero (checked by the caller)
 * @flags:	HYPER_ALLOC_* flags (checked by the caller)
 *
 * Return: a region holding one reference, ERR_PTR(-ENOMEM), or
 * ERR_PTR(-EINTR) when the caller was killed while the region was zeroed.
 */
struct hyk_region *hyk_region_create(struct hyk_dev *hdev, u64 size,
				     u32 flags)
{
	u64 align = flags & HYPER_ALLOC_HUGE_ALIGN ? HYK_HUGE_ALIGN : PAGE_SIZE;
	struct hyk_region *r;
	int ret;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return ERR_PTR(-ENOMEM);
	ret = hyk_pool_alloc(&hdev->pool, size, align, &r->off);
	if (ret) {
		kfree(r);
		return ERR_PTR(ret);
	}
	kref_init(&r->ref);
	r->hdev = hdev;
	r->size = size;
	r->flags = flags;
	r->owner = task_tgid_nr(current);
	/* The previous owner's data must never reach the next one. */
	ret = hyk_region_zero(r);
	if (ret) {
		hyk_pool_free(&hdev->pool, r->off, size);
		kfree(r);
		return ERR_PTR(ret);
	}
	atomic_inc(&hdev->pool.nr_regions);
	spin_lock(&hdev->pool.lock);
	list_add_tail(&r->node, &hdev->pool.regions);
	spin_unlock(&hdev->pool.lock);
	return r;
}

/**
 * hyk_region_wrap() - a region over memory that a shared object owns
 * @hdev:	the device
 * @off:	pool offset of the object's memory
 * @size:	its bytes
 * @obj:	the object, which the region frees on its release
 * @zero:	zero the memory (a new object)
 *
 * The region holds a reference to the object instead of owning memory:
 * its release drops the reference (hyk_obj_drop()).  On failure the
 * caller still owns @obj.
 *
 * Return: the region holding one reference, ERR_PTR(-ENOMEM), or
 * ERR_PTR(-EINTR) when the caller was killed while it was zeroed.
 */
struct hyk_region *hyk_region_wrap(struct hyk_dev *hdev, u64 off, u64 size,
				   struct hyk_obj *obj, bool zero)
{
	struct hyk_region *r;
	int ret;

	ret = hyk_pool_add_pages(&hdev->pool, off, size);
	if (ret)
		return ERR_PTR(ret);
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return ERR_PTR(-ENOMEM);
	kref_init(&r->ref);
	r->hdev = hdev;
	r->off = off;
	r->size = size;
	r->owner = task_tgid_nr(current);
	ret = zero ? hyk_region_zero(r) : 0;
	if (ret) {
		kfree(r);
		return ERR_PTR(ret);
	}
	r->obj = obj;
	atomic_inc(&hdev->pool.nr_regions);
	spin_lock(&hdev->pool.lock);
	list_add_tail(&r->node, &hdev->pool.regions);
	spin_unlock(&hdev->pool.lock);
	return r;
}

static void hyk_region_release(struct kref *ref)
{
	struct hyk_region *r = container_of(ref, struct hyk_region, ref);
	struct hyk_pool *pool = &r->hdev->pool;

	spin_lock(&pool->lock);
	list_del(&r->node);
	spin_unlock(&pool->lock);
	if (r->obj)
		hyk_obj_drop(r);
	else
		hyk_pool_free(pool, r->off, r->size);
	atomic_dec(&pool->nr_regions);
	kfree_rcu(r, rcu);
}

/**
 * hyk_region_get() - take another reference
 * @r:	a region the caller already holds a reference to
 */
void hyk_region_get(struct hyk_region *r)
{
	kref_get(&r->ref);
}

/**
 * hyk_region_put() - drop a reference; the last one frees the memory
 * @r:	the region
 */
void hyk_region_put(struct hyk_region *r)
{
	kref_put(&r->ref, hyk_region_release);
}

/**
 * hyk_region_flush() - write a region's stores back to its memory
 * @r:		the region
 * @off:	first byte, below @r->size
 * @len:	bytes; @off + @len <= @r->size
 *
 * For msync(MS_SYNC) and fsync(2).  A window (legacy pmem, or
 * soft-reserved memory that may be persistent too) gets the CPU cache
 * lines of the range written back, so that the data survives a power
 * loss where the platform makes the memory persistent.  An emulated pool
 * is ordinary RAM: nothing to do.
 */
void hyk_region_flush(struct hyk_region *r, u64 off, u64 len)
{
	struct hyk_pool *pool = &r->hdev->pool;

	if (pool->source != HYPER_SOURCE_WINDOW)
		return;
	while (len) {
		phys_addr_t phys;
		void *va;
		u64 n = hyk_pool_span(pool, r->off + off, &va, &phys);

		n = min3(n, len, (u64)SZ_2M);
		arch_wb_cache_pmem(va, n);
		off += n;
		len -= n;
		cond_resched();
	}
	/* The write-backs are complete before the caller returns. */
	wmb();
}

/**
 * hyk_region_lookup() - find a region of this open file by handle
 * @hf:		the open file
 * @handle:	handle from HYPER_IOC_ALLOC
 *
 * Handles are private to the file that made them, so another opener's
 * handle is simply not found.
 *
 * Return: the region with a reference the caller must put, or NULL.
 */
struct hyk_region *hyk_region_lookup(struct hyk_file *hf, u32 handle)
{
	struct hyk_region *r;

	rcu_read_lock();
	r = xa_load(&hf->regions, handle);
	if (r && !kref_get_unless_zero(&r->ref))
		r = NULL;
	rcu_read_unlock();
	return r;
}
