// SPDX-License-Identifier: GPL-2.0
/*
 * Pool sources: a firmware-reserved physical window, or an emulated pool
 * built from pages of one NUMA node.  Either way the pool is a linear
 * offset space [0, size) that regions are carved from with genalloc, and
 * hyk_pool_span() turns an offset into kernel and physical addresses.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/genalloc.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/numa.h>
#include <linux/slab.h>

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

static int hyk_pool_alloc_allocator(struct hyk_pool *pool)
{
	spin_lock_init(&pool->lock);
	INIT_LIST_HEAD(&pool->regions);
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
	/* A window a failed mode switch could not reclaim is not ours. */
	if (!pool->res)
		return;
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
 * The range must be covered by one soft-reserved or legacy-pmem resource
 * and must not be claimed by anyone else.
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
	unsigned int i;

	for (i = 0; i < pool->nr_chunks; i++)
		__free_pages(pool->chunks[i], HYK_EMU_ORDER);
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
 * in HYK_EMU_CHUNK pieces that never fall back to another node.
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
 * @pool:	pool with no regions left
 */
void hyk_pool_destroy(struct hyk_pool *pool)
{
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
 * hyk_pool_alloc() - take a range of the pool
 * @pool:	the pool
 * @size:	bytes, page aligned, at most HYK_REGION_MAX
 * @align:	PAGE_SIZE or HYK_HUGE_ALIGN
 * @off:	pool offset of the range
 *
 * Return: 0 or -ENOMEM.
 */
int hyk_pool_alloc(struct hyk_pool *pool, u64 size, u64 align, u64 *off)
{
	struct genpool_data_align data = { .align = align };
	unsigned long addr;

	/* genalloc's search takes the page count as an unsigned int. */
	if (size >> PAGE_SHIFT > HYK_REGION_MAX_PAGES)
		return -ENOMEM;
	if (align > PAGE_SIZE)
		addr = gen_pool_alloc_algo(pool->gp, size,
					   gen_pool_first_fit_align, &data);
	else
		addr = gen_pool_alloc(pool->gp, size);
	if (!addr)
		return -ENOMEM;
	*off = addr - pool->gp_base;
	atomic64_add(size, &pool->used);
	return 0;
}

/**
 * hyk_pool_free() - give back a range from hyk_pool_alloc()
 * @pool:	the pool
 * @off:	its offset
 * @size:	its size
 */
void hyk_pool_free(struct hyk_pool *pool, u64 off, u64 size)
{
	gen_pool_free(pool->gp, pool->gp_base + off, size);
	atomic64_sub(size, &pool->used);
}

/**
 * hyk_pool_free_bytes() - bytes not held by any region
 * @pool:	the pool
 *
 * Return: free bytes; fragmentation may keep a request this large from
 * succeeding.
 */
u64 hyk_pool_free_bytes(const struct hyk_pool *pool)
{
	return pool->size - atomic64_read(&pool->used);
}
