// SPDX-License-Identifier: GPL-2.0
/*
 * The shared pool's metadata memory (Documentation/supernode.md).  Other
 * hosts read and write it without cache coherence: every write is written
 * back from the cache and every read drops the cached lines first, and a
 * record whose crc32c fails is read again, then never acted on.
 */
#include <linux/delay.h>
#include <linux/libnvdimm.h>
#include <linux/string.h>

#include "hyper.h"
#include "pool_meta.h"

/**
 * hyk_pm_publish() - write back metadata this node wrote
 * @p:		kernel address in the pool
 * @len:	bytes
 *
 * The write-backs are ordered before any later store.
 */
void hyk_pm_publish(void *p, size_t len)
{
	arch_wb_cache_pmem(p, len);
	/* The write-backs complete before any later store is seen. */
	wmb();
}

/**
 * hyk_pm_fresh() - drop cached lines of metadata before reading it
 * @p:		kernel address in the pool
 * @len:	bytes
 *
 * So that a read sees what other hosts wrote, without coherence.
 */
void hyk_pm_fresh(void *p, size_t len)
{
	/* Earlier stores and loads are done before the lines go. */
	mb();
	arch_invalidate_pmem(p, len);
}

/**
 * hyk_pm_range() - hyk_pm_publish() or hyk_pm_fresh() over pool offsets
 * @pool:	the pool
 * @off:	first byte
 * @len:	bytes, which may span chunks of an emulated pool
 * @wb:		write back (else invalidate)
 */
void hyk_pm_range(struct hyk_pool *pool, u64 off, u64 len, bool wb)
{
	while (len) {
		phys_addr_t phys;
		void *va;
		u64 n = min(hyk_pool_span(pool, off, &va, &phys), len);

		if (wb)
			arch_wb_cache_pmem(va, n);
		else
			arch_invalidate_pmem(va, n);
		off += n;
		len -= n;
	}
	/* Write-backs or invalidations complete before what follows. */
	mb();
}

/**
 * hyk_pm_word() - read a word another node may have written
 * @w:		the word
 *
 * Return: its value, read afresh.
 */
u64 hyk_pm_word(struct hyk_pm_word *w)
{
	hyk_pm_fresh(w, sizeof(*w));
	return le64_to_cpu(READ_ONCE(w->val));
}

/**
 * hyk_pm_set_word() - write and publish a word of this node's
 * @w:		the word
 * @v:		its new value
 */
void hyk_pm_set_word(struct hyk_pm_word *w, u64 v)
{
	WRITE_ONCE(w->val, cpu_to_le64(v));
	hyk_pm_publish(w, sizeof(*w));
}

/**
 * hyk_pm_read_super() - read and check the superblock
 * @pm:		this node's view of the pool
 * @sb:		the superblock, read afresh
 *
 * Return: 0, -ENODATA if the pool was never formatted, -EPROTO if another
 * format version wrote it, -EBADMSG if it is corrupt, -EMEDIUMTYPE if it
 * describes another pool than this window.
 */
int hyk_pm_read_super(struct hyk_pmeta *pm, struct hyk_pm_super *sb)
{
	void *va = hyk_pm_va(pm->pool, HYK_PM_SUPER_OFF);

	hyk_pm_fresh(va, sizeof(*sb));
	memcpy(sb, va, sizeof(*sb));
	if (le64_to_cpu(sb->magic) != HYK_PM_MAGIC)
		return -ENODATA;
	if (le32_to_cpu(sb->version) != HYK_PM_VERSION)
		return -EPROTO;
	if (hyk_pm_crc(sb, offsetof(struct hyk_pm_super, crc)) !=
	    le32_to_cpu(sb->crc))
		return -EBADMSG;
	if (le64_to_cpu(sb->size) != pm->pool->size ||
	    le64_to_cpu(sb->chunk_size) != HYK_PM_CHUNK ||
	    le32_to_cpu(sb->max_nodes) != HYK_POOL_MAX_NODES ||
	    le32_to_cpu(sb->nr_chunks) != pm->nr_chunks ||
	    le32_to_cpu(sb->meta_chunks) != pm->meta_chunks)
		return -EMEDIUMTYPE;
	return 0;
}

/**
 * hyk_pm_read_rec() - read a checksummed record another node may write
 * @src:	the record in the pool
 * @dst:	where to copy it
 * @len:	its size
 * @crc_off:	offset of its crc32c, which covers the bytes before it
 *
 * A record that is all zeros is one never written since the format.  A
 * torn one is read again, three times in all.
 *
 * Return: 0, or -EBADMSG if it stays torn.
 */
int hyk_pm_read_rec(void *src, void *dst, size_t len, size_t crc_off)
{
	int tries;

	for (tries = 0; tries < 3; tries++) {
		const __le32 *crc = dst + crc_off;

		hyk_pm_fresh(src, len);
		memcpy(dst, src, len);
		if (!memchr_inv(dst, 0, len) ||
		    hyk_pm_crc(dst, crc_off) == le32_to_cpu(*crc))
			return 0;
		/* The writer may be half way through: look again. */
		usleep_range(10, 50);
	}
	return -EBADMSG;
}

/**
 * hyk_pm_read_node() - read a node's own record
 * @pool:	the pool
 * @n:		the node
 * @rec:	the record
 *
 * Return: 0 or -EBADMSG (torn).
 */
int hyk_pm_read_node(struct hyk_pool *pool, unsigned int n,
		     struct hyk_pm_node *rec)
{
	return hyk_pm_read_rec(&hyk_pm_slot(pool, n)->node, rec, sizeof(*rec),
			       offsetof(struct hyk_pm_node, crc));
}

static int hyk_pm_read_fence(struct hyk_pool *pool, unsigned int n,
			     struct hyk_pm_fence *rec)
{
	return hyk_pm_read_rec(&hyk_pm_slot(pool, n)->fence, rec, sizeof(*rec),
			       offsetof(struct hyk_pm_fence, crc));
}

/**
 * hyk_pm_read_slot() - read a node's record and the fence record of its slot
 * @pool:	the pool
 * @n:		the node
 * @rec:	its record
 * @f:		the fence record
 *
 * Return: 0 or -EBADMSG (either stays torn).
 */
int hyk_pm_read_slot(struct hyk_pool *pool, unsigned int n,
		     struct hyk_pm_node *rec, struct hyk_pm_fence *f)
{
	return hyk_pm_read_node(pool, n, rec) ?: hyk_pm_read_fence(pool, n, f);
}
