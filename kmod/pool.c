// SPDX-License-Identifier: GPL-2.0
/*
 * Pool sources: a firmware-reserved physical window, or an emulated pool
 * built from pages of one NUMA node.  Either way the pool is a linear
 * offset space [0, size) that regions are carved from with genalloc, and
 * hyk_pool_span() turns an offset into kernel and physical addresses.
 *
 * Every pool page has a struct page, so that mappings of regions are page
 * mappings that get_user_pages() and pin_user_pages() accept: an emulated
 * pool's own pages, split to order 0, and for a window ZONE_DEVICE pages
 * (MEMORY_DEVICE_GENERIC, as device-dax makes), made by memremap_pages()
 * one HYK_PGMAP_SHIFT granule at a time when a region first uses it.
 *
 * A freed region whose pages something still references (an io_uring
 * fixed buffer, an RDMA or CUDA registration, a pipe) is not given back
 * to the allocator: it goes on the pool's held list, and the module
 * stays loaded, until the last such reference is dropped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/genalloc.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/memory_hotplug.h>
#include <linux/memremap.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/numa.h>
#include <linux/slab.h>

#include "compat.h"
#include "hyper.h"

#define HYK_EMU_ORDER		get_order(HYK_EMU_CHUNK)

/* Descriptors of memory that firmware set aside for drivers like this one. */
static const struct {
	unsigned long desc;
	const char *origin;
} hyk_window_kinds[] = {
	{ IORES_DESC_SOFT_RESERVED, "soft-reserved" },
	{ IORES_DESC_PERSISTENT_MEMORY_LEGACY, "pmem-legacy" },
};

struct hyk_cover {
	u64 start;
	u64 end;
	bool covered;
};

/* walk_iomem_res_desc() hands us the resource clipped to the range asked. */
static int hyk_cover_cb(struct resource *res, void *arg)
{
	struct hyk_cover *c = arg;

	if (res->start == c->start && res->end == c->end) {
		c->covered = true;
		return 1;
	}
	return 0;
}

static const char *hyk_window_origin(u64 start, u64 size)
{
	struct hyk_cover c = { .start = start, .end = start + size - 1 };
	int i;

	for (i = 0; i < ARRAY_SIZE(hyk_window_kinds); i++) {
		walk_iomem_res_desc(hyk_window_kinds[i].desc, IORESOURCE_MEM,
				    c.start, c.end, &c, hyk_cover_cb);
		if (c.covered)
			return hyk_window_kinds[i].origin;
	}
	return NULL;
}

/*
 * A freed region's range that is kept out of use while still referenced;
 * of a shared object's handle, the object, whose reference it keeps.
 */
struct hyk_held {
	struct list_head node;
	u64 off;
	u64 size;
	struct hyk_obj *obj;
};

static void hyk_pool_sweep_work(struct work_struct *work)
{
	hyk_pool_sweep(container_of(to_delayed_work(work), struct hyk_pool,
				    sweep));
}

static void hyk_pool_init_common(struct hyk_pool *pool)
{
	spin_lock_init(&pool->lock);
	INIT_LIST_HEAD(&pool->regions);
	xa_init(&pool->pgmaps);
	mutex_init(&pool->pgmap_lock);
	mutex_init(&pool->held_lock);
	INIT_LIST_HEAD(&pool->held);
	INIT_DELAYED_WORK(&pool->sweep, hyk_pool_sweep_work);
}

static int hyk_pool_alloc_allocator(struct hyk_pool *pool)
{
	pool->gp = gen_pool_create(PAGE_SHIFT, pool->nid);
	if (!pool->gp)
		return -ENOMEM;
	if (gen_pool_add(pool->gp, pool->gp_base, pool->size, pool->nid)) {
		gen_pool_destroy(pool->gp);
		pool->gp = NULL;
		return -ENOMEM;
	}
	return 0;
}

/**
 * hyk_pool_claim_window() - take a window for device use
 * @pool:	a window pool, with phys_base and size set, not claimed
 *
 * Claims the range exclusively, so that /dev/mem cannot reach it either,
 * and maps it for the kernel's copies.
 *
 * Return: 0, -EBUSY if another driver holds it, -ENOMEM.
 */
int hyk_pool_claim_window(struct hyk_pool *pool)
{
	phys_addr_t start = pool->phys_base;
	u64 size = pool->size;

	pool->res = request_mem_region_exclusive(start, size, HYK_NAME);
	if (!pool->res) {
		pr_err("window %pa+%#llx is claimed by another driver (see /proc/iomem)\n",
		       &start, size);
		return -EBUSY;
	}
	pool->vaddr = memremap(start, size, MEMREMAP_WB);
	if (!pool->vaddr) {
		pr_err("window %pa+%#llx: memremap failed\n", &start, size);
		release_mem_region(start, size);
		pool->res = NULL;
		return -ENOMEM;
	}
	return 0;
}

/**
 * hyk_pool_release_window() - undo hyk_pool_claim_window()
 * @pool:	a claimed window pool with no regions
 */
void hyk_pool_release_window(struct hyk_pool *pool)
{
	struct dev_pagemap *pgmap;
	unsigned long g;

	/* A window a failed mode switch could not reclaim is not ours. */
	if (!pool->res)
		return;
	/* No region exists, so no page of the window is referenced. */
	mutex_lock(&pool->pgmap_lock);
	xa_for_each(&pool->pgmaps, g, pgmap) {
		xa_erase(&pool->pgmaps, g);
		memunmap_pages(pgmap);
		kfree(pgmap);
	}
	mutex_unlock(&pool->pgmap_lock);
	memunmap(pool->vaddr);
	release_mem_region(pool->phys_base, pool->size);
	pool->vaddr = NULL;
	pool->res = NULL;
}

/**
 * hyk_pool_usable() - can regions be carved from the pool now
 * @pool:	the pool
 *
 * Return: false for a window this module holds no claim on, which only a
 * mode switch whose reclaim failed leaves behind.
 */
bool hyk_pool_usable(const struct hyk_pool *pool)
{
	return pool->source != HYPER_SOURCE_WINDOW || pool->vaddr;
}

/**
 * hyk_pool_init_window() - claim a firmware window as a pool
 * @pool:	pool to fill in
 * @start:	physical start, page aligned
 * @size:	bytes, page aligned
 * @origin:	how the window was found ("parameter" when named by the user)
 *
 * The range must be covered by one soft-reserved or legacy-pmem resource,
 * must not be claimed by anyone else, and must be HYK_WINDOW_ALIGN aligned
 * (struct pages are made in such subsections).
 *
 * Return: 0, or -EINVAL for a malformed or unreserved range, -EBUSY if
 * another driver holds it, -ENOMEM.
 */
int hyk_pool_init_window(struct hyk_pool *pool, phys_addr_t start,
			 u64 size, const char *origin)
{
	const char *kind;
	int ret;

	if (!size || !PAGE_ALIGNED(start) || !PAGE_ALIGNED(size) ||
	    start + size < start) {
		pr_err("window %pa+%#llx: start and size must be page aligned and non-zero\n",
		       &start, size);
		return -EINVAL;
	}
	if (region_intersects(start, size, IORESOURCE_SYSTEM_RAM,
			      IORES_DESC_NONE) != REGION_DISJOINT) {
		pr_err("window %pa+%#llx overlaps System RAM\n", &start, size);
		return -EINVAL;
	}
	kind = hyk_window_origin(start, size);
	if (!kind) {
		pr_err("window %pa+%#llx is not wholly inside one soft-reserved or legacy-pmem range (see /proc/iomem)\n",
		       &start, size);
		return -EINVAL;
	}
	if (!IS_ALIGNED(start, HYK_WINDOW_ALIGN) ||
	    !IS_ALIGNED(size, HYK_WINDOW_ALIGN)) {
		pr_err("window %pa+%#llx: start and size must be multiples of 2 MiB, the unit struct pages are made in\n",
		       &start, size);
		return -EINVAL;
	}

	hyk_pool_init_common(pool);
	pool->source = HYPER_SOURCE_WINDOW;
	pool->origin = strcmp(origin, "parameter") ? kind : origin;
	pool->phys_base = start;
	pool->size = size;
	pool->nid = phys_to_target_node(start);
	if (pool->nid == NUMA_NO_NODE)
		pool->nid = memory_add_physaddr_to_nid(start);
	ret = hyk_pool_claim_window(pool);
	if (ret)
		return ret;
	/* Allocator addresses are physical, so huge alignment is physical. */
	pool->gp_base = start;
	ret = hyk_pool_alloc_allocator(pool);
	if (ret)
		goto out_release;
	return 0;

out_release:
	hyk_pool_release_window(pool);
	return ret;
}

static void hyk_pool_free_chunks(struct hyk_pool *pool)
{
	unsigned int i, j;

	/* Each page goes on its own: split_page() made them order 0. */
	for (i = 0; i < pool->nr_chunks; i++)
		for (j = 0; j < 1U << HYK_EMU_ORDER; j++)
			__free_page(pool->chunks[i] + j);
	kvfree(pool->chunks);
	pool->chunks = NULL;
	pool->nr_chunks = 0;
}

/**
 * hyk_pool_init_emulated() - build a pool from pages of one node
 * @pool:	pool to fill in
 * @size:	bytes, a non-zero multiple of HYK_EMU_CHUNK
 * @nid:	node to take the pages from, NUMA_NO_NODE for the local one
 *
 * For machines with no firmware window: the memory is ordinary RAM, taken
 * in HYK_EMU_CHUNK pieces that never fall back to another node, each split
 * into order-0 pages so that each can be mapped and pinned on its own.
 *
 * Return: 0, -EINVAL for a bad size or node, -ENOMEM.
 */
int hyk_pool_init_emulated(struct hyk_pool *pool, u64 size, int nid)
{
	u64 nr = size / HYK_EMU_CHUNK;
	int ret;

	if (!size || !IS_ALIGNED(size, HYK_EMU_CHUNK) || nr > UINT_MAX) {
		pr_err("emulate_size %llu must be a non-zero multiple of %u\n",
		       size, HYK_EMU_CHUNK);
		return -EINVAL;
	}
	if (nid == NUMA_NO_NODE)
		nid = numa_mem_id();
	if (nid < 0 || nid >= MAX_NUMNODES || !node_state(nid, N_MEMORY)) {
		pr_err("emulate_node %d is not a node with memory\n", nid);
		return -EINVAL;
	}

	hyk_pool_init_common(pool);
	pool->chunks = kvcalloc(nr, sizeof(*pool->chunks), GFP_KERNEL);
	if (!pool->chunks)
		return -ENOMEM;
	while (pool->nr_chunks < nr) {
		struct page *page;

		page = alloc_pages_node(nid, GFP_KERNEL | __GFP_THISNODE |
					__GFP_NOWARN | __GFP_RETRY_MAYFAIL,
					HYK_EMU_ORDER);
		if (!page) {
			pr_err("emulated pool: node %d gave %llu of %llu bytes\n",
			       nid, (u64)pool->nr_chunks * HYK_EMU_CHUNK, size);
			ret = -ENOMEM;
			goto out_free;
		}
		split_page(page, HYK_EMU_ORDER);
		pool->chunks[pool->nr_chunks++] = page;
		cond_resched();
	}

	pool->source = HYPER_SOURCE_EMULATED;
	pool->origin = "emulated";
	pool->phys_base = 0;
	pool->size = size;
	pool->nid = nid;
	/* Any non-zero, chunk-aligned base: genalloc reports failure as 0. */
	pool->gp_base = HYK_EMU_CHUNK;
	ret = hyk_pool_alloc_allocator(pool);
	if (ret)
		goto out_free;
	return 0;

out_free:
	hyk_pool_free_chunks(pool);
	return ret;
}

/**
 * hyk_pool_destroy() - release everything hyk_pool_init_*() took
 * @pool:	pool with no regions left, held ones included (a held range
 *		keeps the module loaded)
 */
void hyk_pool_destroy(struct hyk_pool *pool)
{
	hyk_pm_destroy(pool);
	cancel_delayed_work_sync(&pool->sweep);
	WARN_ON(!list_empty(&pool->held));
	if (pool->gp)
		gen_pool_destroy(pool->gp);
	pool->gp = NULL;
	if (pool->source == HYPER_SOURCE_WINDOW)
		hyk_pool_release_window(pool);
	else
		hyk_pool_free_chunks(pool);
}

struct hyk_find {
	int (*found)(phys_addr_t start, u64 size, const char *origin);
	const char *origin;
	int ret;
};

static int hyk_find_cb(struct resource *res, void *arg)
{
	struct hyk_find *f = arg;

	f->ret = f->found(res->start, resource_size(res), f->origin);
	return f->ret;
}

/**
 * hyk_pool_find_windows() - report every firmware window
 * @found:	called for each; a non-zero return stops the walk
 *
 * Soft-reserved ranges (how CXL and fabric windows are handed to the OS)
 * come first, then legacy persistent memory (memmap=nn!ss).
 *
 * Return: the first non-zero value @found returned, or 0.
 */
int hyk_pool_find_windows(int (*found)(phys_addr_t start, u64 size,
				       const char *origin))
{
	struct hyk_find f = { .found = found };
	int i;

	for (i = 0; i < ARRAY_SIZE(hyk_window_kinds) && !f.ret; i++) {
		f.origin = hyk_window_kinds[i].origin;
		walk_iomem_res_desc(hyk_window_kinds[i].desc, IORESOURCE_MEM,
				    0, -1, &f, hyk_find_cb);
	}
	return f.ret;
}

/**
 * hyk_pool_span() - addresses of a pool offset
 * @pool:	the pool
 * @off:	offset below @pool->size
 * @vaddr:	kernel address of @off
 * @phys:	physical address of @off
 *
 * Return: bytes that are contiguous from @off in both address spaces.
 */
u64 hyk_pool_span(const struct hyk_pool *pool, u64 off, void **vaddr,
		  phys_addr_t *phys)
{
	struct page *page;
	u64 in;

	if (pool->source == HYPER_SOURCE_WINDOW) {
		*vaddr = pool->vaddr + off;
		*phys = pool->phys_base + off;
		return pool->size - off;
	}
	page = pool->chunks[off / HYK_EMU_CHUNK];
	in = off % HYK_EMU_CHUNK;
	*vaddr = page_address(page) + in;
	*phys = page_to_phys(page) + in;
	return HYK_EMU_CHUNK - in;
}

/**
 * hyk_pool_page() - the struct page of a pool offset
 * @pool:	the pool
 * @off:	page-aligned offset inside a live region (whose pages exist)
 *
 * Return: the page.
 */
struct page *hyk_pool_page(const struct hyk_pool *pool, u64 off)
{
	if (pool->source == HYPER_SOURCE_WINDOW)
		return pfn_to_page(PHYS_PFN(pool->phys_base + off));
	return pool->chunks[off / HYK_EMU_CHUNK] +
	       ((off % HYK_EMU_CHUNK) >> PAGE_SHIFT);
}

/* Physical bounds of window granule @g, clipped to the window. */
static void hyk_granule(const struct hyk_pool *pool, unsigned long g,
			phys_addr_t *start, phys_addr_t *end)
{
	*start = max_t(phys_addr_t, pool->phys_base,
		       (phys_addr_t)g << HYK_PGMAP_SHIFT);
	*end = min_t(phys_addr_t, pool->phys_base + pool->size,
		     (phys_addr_t)(g + 1) << HYK_PGMAP_SHIFT);
}

static int hyk_pool_add_pgmap(struct hyk_pool *pool, unsigned long g)
{
	struct dev_pagemap *pgmap;
	phys_addr_t start, end;
	int nid = pool->nid;
	void *va;
	int ret;

	pgmap = kzalloc(sizeof(*pgmap), GFP_KERNEL);
	if (!pgmap)
		return -ENOMEM;
	hyk_granule(pool, g, &start, &end);
	pgmap->type = MEMORY_DEVICE_GENERIC;
	pgmap->range.start = start;
	pgmap->range.end = end - 1;
	pgmap->nr_range = 1;
	/* The struct pages live on the window's node if it is online. */
	if (nid != NUMA_NO_NODE && !node_online(nid))
		nid = NUMA_NO_NODE;
	va = memremap_pages(pgmap, nid);
	if (IS_ERR(va)) {
		ret = PTR_ERR(va);
		pr_err("window %pa-%pa: no struct pages (memremap_pages: %d)\n",
		       &start, &end, ret);
		goto out_free;
	}
	ret = xa_insert(&pool->pgmaps, g, pgmap, GFP_KERNEL);
	if (ret)
		goto out_unmap;
	return 0;

out_unmap:
	memunmap_pages(pgmap);
out_free:
	kfree(pgmap);
	return ret;
}

/**
 * hyk_pool_add_pages() - make the struct pages of a window range
 * @pool:	the pool
 * @off:	pool offset of a range a new region takes
 * @size:	its bytes
 *
 * Nothing to do in an emulated pool, whose pages always exist.
 *
 * Return: 0 or -errno.
 */
int hyk_pool_add_pages(struct hyk_pool *pool, u64 off, u64 size)
{
	phys_addr_t first = pool->phys_base + off;
	unsigned long g = first >> HYK_PGMAP_SHIFT;
	unsigned long last = (first + size - 1) >> HYK_PGMAP_SHIFT;
	int ret = 0;

	if (pool->source != HYPER_SOURCE_WINDOW)
		return 0;
	mutex_lock(&pool->pgmap_lock);
	for (; g <= last && !ret; g++)
		if (!xa_load(&pool->pgmaps, g))
			ret = hyk_pool_add_pgmap(pool, g);
	mutex_unlock(&pool->pgmap_lock);
	return ret;
}

/*
 * Pages of [@off, @off + @size) referenced beyond the pool's own
 * reference: by pins, get_user_pages(), pipe buffers, and also by page
 * tables unless @skip_maps.  Granules of a window that have no struct
 * pages were never mapped: nothing refers to them.  Stops counting at the
 * first such page if @any.
 */
static u64 hyk_pool_extra_refs(struct hyk_pool *pool, u64 off, u64 size,
			       bool skip_maps, bool any)
{
	u64 end = off + size, n = 0;

	while (off < end) {
		u64 next = end;

		if (pool->source == HYPER_SOURCE_WINDOW) {
			phys_addr_t gs, ge;
			unsigned long g = (pool->phys_base + off) >>
					  HYK_PGMAP_SHIFT;

			hyk_granule(pool, g, &gs, &ge);
			next = min_t(u64, end, ge - pool->phys_base);
			if (!xa_load(&pool->pgmaps, g)) {
				off = next;
				continue;
			}
		}
		for (; off < next; off += PAGE_SIZE) {
			struct page *page = hyk_pool_page(pool, off);

			int refs = page_ref_count(page);

			if (skip_maps)
				refs -= hyk_page_mapcount(page);
			if (refs > HYK_PAGE_IDLE_REFS) {
				n++;
				if (any)
					return n;
			}
			if (IS_ALIGNED(off, SZ_2M))
				cond_resched();
		}
	}
	return n;
}

/**
 * hyk_pool_alloc() - take a range of the pool
 * @pool:	the pool
 * @size:	bytes, page aligned, at most HYK_REGION_MAX
 * @align:	PAGE_SIZE or HYK_HUGE_ALIGN
 * @off:	pool offset of the range
 *
 * Ranges of freed regions that are no longer pinned are given back first.
 * In a window, the struct pages of the range are made if they do not
 * exist yet.
 *
 * In a pool shared with other nodes the range comes from this node's
 * chunks (hyk_pm_alloc()).
 *
 * Return: 0, -ENOMEM, or hyk_pm_alloc()'s error.
 */
int hyk_pool_alloc(struct hyk_pool *pool, u64 size, u64 align, u64 *off)
{
	struct genpool_data_align data = { .align = align };
	unsigned long addr;

	/* genalloc's search takes the page count as an unsigned int. */
	if (size >> PAGE_SHIFT > HYK_REGION_MAX_PAGES)
		return -ENOMEM;
	hyk_pool_sweep(pool);
	if (pool->pm) {
		int ret = hyk_pm_alloc(pool, size, align, &addr);

		if (ret)
			return ret;
	} else if (align > PAGE_SIZE) {
		addr = gen_pool_alloc_algo(pool->gp, size,
					   gen_pool_first_fit_align, &data);
	} else {
		addr = gen_pool_alloc(pool->gp, size);
	}
	if (!addr)
		return -ENOMEM;
	*off = addr - pool->gp_base;
	if (hyk_pool_add_pages(pool, *off, size)) {
		gen_pool_free(pool->gp, addr, size);
		return -ENOMEM;
	}
	atomic64_add(size, &pool->used);
	return 0;
}

static void hyk_pool_give_back(struct hyk_pool *pool, u64 off, u64 size)
{
	gen_pool_free(pool->gp, pool->gp_base + off, size);
	atomic64_sub(size, &pool->used);
}

/**
 * hyk_pool_free() - give back a range from hyk_pool_alloc()
 * @pool:	the pool
 * @off:	its offset
 * @size:	its size
 *
 * If something still references its pages (a pin outlives the mapping it
 * was taken through; a failed mmap() zaps its pages after this), the range is
 * held, and still counts in @pool->nr_regions and @pool->used, until the
 * last reference goes: reusing it would let the pin's owner see the next
 * region's data.  The module stays loaded while any range is held.
 */
void hyk_pool_free(struct hyk_pool *pool, u64 off, u64 size)
{
	if (!hyk_pool_extra_refs(pool, off, size, false, true)) {
		hyk_pool_give_back(pool, off, size);
		return;
	}
	hyk_pool_hold(pool, off, size, NULL);
}

/**
 * hyk_pool_referenced() - whether something outside holds pool pages
 * @pool:	the pool
 * @off:	pool offset of a range
 * @size:	its bytes
 * @skip_maps:	page tables do not count
 *
 * Return: true if a page of the range has a reference beyond the pool's
 * (and its mappings', with @skip_maps): a pin, get_user_pages(), a pipe.
 */
bool hyk_pool_referenced(struct hyk_pool *pool, u64 off, u64 size,
			 bool skip_maps)
{
	return hyk_pool_extra_refs(pool, off, size, skip_maps, true);
}

/**
 * hyk_pool_hold() - keep a range out of use until nothing references it
 * @pool:	the pool
 * @off:	its offset
 * @size:	its size
 * @obj:	of a shared object's handle, the object, whose reference the
 *		range keeps until nothing but page tables (its other handles'
 *		mappings) refers to it (hyk_obj_put()); NULL for a region's
 *		range, which goes back to the allocator when nothing does
 *
 * The range counts in @pool->nr_regions meanwhile (and a region's in
 * @pool->used).  The module stays loaded while any range is held.
 */
void hyk_pool_hold(struct hyk_pool *pool, u64 off, u64 size,
		   struct hyk_obj *obj)
{
	struct hyk_held *h;

	/* Small, and the memory must not be lost track of. */
	h = kmalloc(sizeof(*h), GFP_KERNEL | __GFP_NOFAIL);
	h->off = off;
	h->size = size;
	h->obj = obj;
	atomic_inc(&pool->nr_regions);
	mutex_lock(&pool->held_lock);
	if (list_empty(&pool->held))
		__module_get(THIS_MODULE);
	list_add_tail(&h->node, &pool->held);
	mutex_unlock(&pool->held_lock);
	schedule_delayed_work(&pool->sweep, HZ);
}

/**
 * hyk_pool_sweep() - give back held ranges nothing references any more
 * @pool:	the pool
 *
 * Runs every second while a range is held, and before every allocation.
 */
void hyk_pool_sweep(struct hyk_pool *pool)
{
	struct hyk_held *h, *next;
	bool was_held, still_held;

	mutex_lock(&pool->held_lock);
	was_held = !list_empty(&pool->held);
	list_for_each_entry_safe(h, next, &pool->held, node) {
		/* An object's pages may be mapped by its other handles. */
		if (hyk_pool_extra_refs(pool, h->off, h->size, h->obj, true))
			continue;
		list_del(&h->node);
		if (h->obj)
			hyk_obj_put(pool->pm, h->obj);
		else
			hyk_pool_give_back(pool, h->off, h->size);
		atomic_dec(&pool->nr_regions);
		kfree(h);
	}
	still_held = !list_empty(&pool->held);
	if (still_held)
		schedule_delayed_work(&pool->sweep, HZ);
	mutex_unlock(&pool->held_lock);
	/* Unload waits for this work (hyk_pool_destroy()) before freeing it. */
	if (was_held && !still_held)
		module_put(THIS_MODULE);
}

/**
 * hyk_pool_pin_stats() - how much of the pool is referenced from outside
 * @pool:	the pool
 * @pinned_pages: pool pages with references beyond the pool's and its
 *		mappings' (pins, get_user_pages(), pipe buffers)
 * @held_bytes:	bytes of freed regions kept out of use for that reason
 *
 * Sweeps first.  Walks every page that has a struct page: for tests and
 * debugging, not for hot paths.
 */
void hyk_pool_pin_stats(struct hyk_pool *pool, u64 *pinned_pages,
			u64 *held_bytes)
{
	struct hyk_held *h;
	u64 pinned = 0, held = 0;

	hyk_pool_sweep(pool);
	mutex_lock(&pool->pgmap_lock);
	if (hyk_pool_usable(pool))
		pinned = hyk_pool_extra_refs(pool, 0, pool->size, true, false);
	mutex_unlock(&pool->pgmap_lock);
	mutex_lock(&pool->held_lock);
	list_for_each_entry(h, &pool->held, node)
		held += h->size;
	mutex_unlock(&pool->held_lock);
	*pinned_pages = pinned;
	*held_bytes = held;
}

/**
 * hyk_pool_free_bytes() - bytes not held by any region
 * @pool:	the pool
 *
 * Return: free bytes; fragmentation may keep a request this large from
 * succeeding.  In a pool shared with other nodes: what this node could
 * still take (hyk_pm_free_bytes()).
 */
u64 hyk_pool_free_bytes(struct hyk_pool *pool)
{
	if (pool->pm)
		return hyk_pm_free_bytes(pool);
	return pool->size - atomic64_read(&pool->used);
}
