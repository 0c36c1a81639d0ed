// SPDX-License-Identifier: GPL-2.0
/*
 * A pool shared by several nodes (Documentation/supernode.md).
 *
 * With node_id set, the pool carries its own metadata in its first
 * chunks: a superblock, a node table with one slot per node, a redo
 * record and a chunk table that names the owner of every 2 MiB chunk.
 * The memory may not be cache coherent between hosts and offers no
 * atomics between them, so every write of metadata is written back from
 * the cache (arch_wb_cache_pmem() and a fence) and every read drops the
 * cached lines first (arch_invalidate_pmem()); records carry a crc32c so
 * that a torn one is never acted on.
 *
 * The chunk table changes only under a lock that Lamport's bakery
 * algorithm builds from per-slot words each node alone writes.  A node
 * takes whole chunks under the lock and carves its regions from its own
 * chunks with the usual allocator, without the lock.  A node proves it
 * is alive by counting a heartbeat in its slot; a node whose heartbeat
 * stood still for lease_ms is dead, and an operator fences it, which
 * gives its chunks back.
 *
 * This file: the operator's commands (format, join, leave, fence), the
 * heartbeat, allocation from this node's chunks and what sysfs shows.
 * pool_mem.c reads and writes the metadata memory; pool_lock.c has the
 * lock and the chunk table.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/genalloc.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uuid.h>

#include "hyper.h"
#include "pool_meta.h"

static int node_id = -1;
module_param(node_id, int, 0444);
MODULE_PARM_DESC(node_id,
		 "This node's id on a pool shared with other nodes, 0 to 31 (-1: the pool is this node's alone, with no on-pool metadata)");

static unsigned int lease_ms = 10000;

static int lease_ms_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 0, &v);
	if (ret)
		return ret;
	if (v < HYK_PM_LEASE_MIN || v > HYK_PM_LEASE_MAX) {
		pr_err("lease_ms %u refused: want %u to %u\n", v,
		       HYK_PM_LEASE_MIN, HYK_PM_LEASE_MAX);
		return -EINVAL;
	}
	WRITE_ONCE(lease_ms, v);
	return 0;
}

static const struct kernel_param_ops lease_ms_ops = {
	.set = lease_ms_set,
	.get = param_get_uint,
};
module_param_cb(lease_ms, &lease_ms_ops, &lease_ms, 0644);
MODULE_PARM_DESC(lease_ms,
		 "A node whose heartbeat stood still this long (ms, 1000 to 3600000) is dead and may be fenced; the same on every node");

static u64 hyk_pm_meta_bytes(u32 nr_chunks)
{
	return hyk_pm_objs_off(nr_chunks) + HYK_PM_OBJ_BYTES;
}

/* Write this node's record; under @beat_lock. */
static void hyk_pm_write_node(struct hyk_pmeta *pm, u32 state)
{
	struct hyk_pm_slot *s = hyk_pm_slot(pm->pool, pm->node);
	struct hyk_pm_node rec;

	memset(&rec, 0, sizeof(rec));
	rec.seq = cpu_to_le64(++pm->seq);
	rec.gen = cpu_to_le64(pm->gen);
	rec.heartbeat = cpu_to_le64(pm->heartbeat);
	rec.state = cpu_to_le32(state);
	rec.id = cpu_to_le32(pm->node);
	rec.crc = cpu_to_le32(hyk_pm_crc(&rec,
					 offsetof(struct hyk_pm_node, crc)));
	memcpy(&s->node, &rec, sizeof(rec));
	hyk_pm_publish(&s->node, sizeof(rec));
}

/* Note who moved their heartbeat since the last look; under @beat_lock. */
static void hyk_pm_observe(struct hyk_pmeta *pm)
{
	unsigned int n;

	for (n = 0; n < HYK_POOL_MAX_NODES; n++) {
		struct hyk_pm_seen *s = &pm->seen[n];
		struct hyk_pm_node rec;
		u64 gen, hb;

		if (hyk_pm_read_node(pm->pool, n, &rec))
			continue;
		gen = le64_to_cpu(rec.gen);
		hb = le64_to_cpu(rec.heartbeat);
		if (!s->valid || s->gen != gen || s->heartbeat != hb) {
			s->gen = gen;
			s->heartbeat = hb;
			s->at = jiffies;
			s->valid = true;
		}
	}
}

/* Milliseconds since node @n's heartbeat was seen to move. */
static u64 hyk_pm_age_ms(struct hyk_pmeta *pm, unsigned int n)
{
	if (n == pm->node && pm->beating)
		return 0;
	return jiffies_to_msecs(jiffies - pm->seen[n].at);
}

static void hyk_pm_beat_work(struct work_struct *work)
{
	struct hyk_pmeta *pm = container_of(to_delayed_work(work),
					    struct hyk_pmeta, beat);
	struct hyk_pm_super sb;
	struct hyk_pm_fence f;
	struct hyk_pm_node rec;

	mutex_lock(&pm->beat_lock);
	if (!pm->beating)
		goto out;
	/* A format --force under a joined node took its chunks away. */
	if (hyk_pm_read_super(pm, &sb) || memcmp(sb.uuid, pm->uuid, 16)) {
		WRITE_ONCE(pm->fenced, true);
		pm->beating = false;
		pr_err("the pool under node %u was formatted again: its allocations are refused; free its regions, then hyperctl pool leave and hyperctl pool join\n",
		       pm->node);
		goto out;
	}
	if (!hyk_pm_read_slot(pm->pool, pm->node, &rec, &f) &&
	    le64_to_cpu(f.gen) == pm->gen) {
		WRITE_ONCE(pm->fenced, true);
		pm->beating = false;
		pr_err("node %u was fenced by node %u: its allocations are refused; free its regions, then hyperctl pool leave and hyperctl pool join\n",
		       pm->node, le32_to_cpu(f.by));
		goto out;
	}
	pm->heartbeat++;
	hyk_pm_write_node(pm, HYK_PM_SLOT_JOINED);
	hyk_pm_observe(pm);
	schedule_delayed_work(&pm->beat, msecs_to_jiffies(HYK_PM_BEAT_MS));
out:
	mutex_unlock(&pm->beat_lock);
}

static void hyk_pm_stop_beat(struct hyk_pmeta *pm, u32 state)
{
	mutex_lock(&pm->beat_lock);
	pm->beating = false;
	hyk_pm_write_node(pm, state);
	mutex_unlock(&pm->beat_lock);
	cancel_delayed_work_sync(&pm->beat);
}

/* Take free chunks, contiguous, for @size bytes; under @op_lock. */
static int hyk_pm_grow(struct hyk_pmeta *pm, u64 size)
{
	struct hyk_pool *pool = pm->pool;
	u64 need = DIV_ROUND_UP(size, HYK_PM_CHUNK), applied;
	u32 i, first = 0, run = 0;
	int ret;

	if (need > pm->nr_chunks)
		return -ENOMEM;
	ret = hyk_pm_lock(pm);
	if (ret)
		return ret;
	applied = hyk_pm_replay(pm);
	for (i = pm->meta_chunks; i < pm->nr_chunks && run < need; i++) {
		if (hyk_pm_owner(pool, i) != HYK_PM_OWNER_FREE) {
			run = 0;
			continue;
		}
		if (!run++)
			first = i;
	}
	if (run < need) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	applied = hyk_pm_change(pm, applied, HYK_PM_OWNER_FREE, pm->node + 1,
				first, need);
	ret = gen_pool_add(pool->gp, pool->gp_base + (u64)first * HYK_PM_CHUNK,
			   need * HYK_PM_CHUNK, pool->nid);
	if (ret) {
		hyk_pm_change(pm, applied, pm->node + 1, HYK_PM_OWNER_FREE,
			      first, need);
		goto out_unlock;
	}
	WRITE_ONCE(pm->held, pm->held + need * HYK_PM_CHUNK);
out_unlock:
	hyk_pm_count(pm, &pm->pool_free, NULL);
	hyk_pm_unlock(pm);
	return ret;
}

static unsigned long hyk_pm_carve(struct hyk_pool *pool, u64 size, u64 align)
{
	struct genpool_data_align data = { .align = align };

	if (align > PAGE_SIZE)
		return gen_pool_alloc_algo(pool->gp, size,
					   gen_pool_first_fit_align, &data);
	return gen_pool_alloc(pool->gp, size);
}

/**
 * hyk_pm_alloc() - carve a range from this node's chunks
 * @pool:	a shared pool
 * @size:	bytes, page aligned
 * @align:	PAGE_SIZE or HYK_HUGE_ALIGN
 * @addr:	the range's allocator address
 *
 * Takes more chunks from the pool when this node's do not have the room.
 *
 * Return: 0, -ENODEV when this node has not joined the pool or was
 * fenced, -ENOMEM, -EINTR when killed while waiting, or what taking the
 * metadata lock returned (-EINTR, -ETIMEDOUT).
 */
int hyk_pm_alloc(struct hyk_pool *pool, u64 size, u64 align,
		 unsigned long *addr)
{
	struct hyk_pmeta *pm = pool->pm;
	int ret = 0;

	/* A join or a fence may hold it for a lease. */
	if (mutex_lock_killable(&pm->op_lock))
		return -EINTR;
	if (!pm->joined || READ_ONCE(pm->fenced)) {
		pr_info_ratelimited("ALLOC refused: node %u %s\n", pm->node,
				    pm->joined ? "was fenced: hyperctl pool leave, then join" :
				    "has not joined the pool: hyperctl pool join");
		ret = -ENODEV;
		goto out;
	}
	*addr = hyk_pm_carve(pool, size, align);
	if (!*addr) {
		ret = hyk_pm_grow(pm, size);
		if (!ret)
			*addr = hyk_pm_carve(pool, size, align);
		if (!ret && !*addr)
			ret = -ENOMEM;
	}
out:
	mutex_unlock(&pm->op_lock);
	return ret;
}

/**
 * hyk_pm_free_bytes() - what this node could still allocate
 * @pool:	a shared pool
 *
 * Return: free bytes of this node's chunks plus free chunks of the pool
 * at the last look, 0 when not joined.
 */
u64 hyk_pm_free_bytes(struct hyk_pool *pool)
{
	struct hyk_pmeta *pm = pool->pm;
	u64 used = atomic64_read(&pool->used), held = READ_ONCE(pm->held);

	/* Unlocked: a join or fence may hold @op_lock for a lease. */
	if (!READ_ONCE(pm->joined) || READ_ONCE(pm->fenced))
		return 0;
	return (held > used ? held - used : 0) + READ_ONCE(pm->pool_free);
}

/*
 * Whether a node whose record says joined moves its heartbeat within a
 * lease: watches it for one lease.  Returns 1 if it moved, 0 if not,
 * -EINTR.
 */
static int hyk_pm_alive(struct hyk_pmeta *pm, unsigned int n)
{
	struct hyk_pm_node a, b;
	unsigned long end = jiffies + msecs_to_jiffies(READ_ONCE(lease_ms));
	int ret_a;

	ret_a = hyk_pm_read_node(pm->pool, n, &a);
	while (time_before(jiffies, end)) {
		if (schedule_timeout_killable(msecs_to_jiffies(HYK_PM_BEAT_MS)) ||
		    fatal_signal_pending(current))
			return -EINTR;
		if (hyk_pm_read_node(pm->pool, n, &b))
			continue;
		if (ret_a || a.gen != b.gen || a.heartbeat != b.heartbeat ||
		    a.state != b.state)
			return 1;
	}
	return 0;
}

/* Say in one line why the superblock stops @what. */
static void hyk_pm_super_err(int ret, const char *what)
{
	switch (ret) {
	case -ENODATA:
		pr_err("%s refused: the pool is not formatted: hyperctl pool format\n",
		       what);
		break;
	case -EPROTO:
		pr_err("%s refused: the pool was formatted by another format version: reformat it (hyperctl pool format --force) once no node uses it\n",
		       what);
		break;
	case -EMEDIUMTYPE:
		pr_err("%s refused: the superblock describes another pool size: every node's window must be the same memory\n",
		       what);
		break;
	default:
		pr_err("%s refused: the pool's superblock is corrupt: reformat it (hyperctl pool format --force) once no node uses it\n",
		       what);
		break;
	}
}

/**
 * hyk_pm_format() - write a new, empty pool format
 * @pool:	a shared pool
 * @force:	overwrite a format, or what claims to be one
 *
 * Return: 0, -EEXIST if the pool is formatted (and not @force), -EBUSY
 * while this or another node is joined (with @force: another node whose
 * heartbeat moves within a lease), -EINTR.
 */
int hyk_pm_format(struct hyk_pool *pool, bool force)
{
	struct hyk_pmeta *pm = pool->pm;
	struct hyk_pm_super sb, old;
	unsigned int n;
	u64 formats = 0;
	u32 i;
	int ret;

	mutex_lock(&pm->op_lock);
	ret = -EBUSY;
	if (pm->joined) {
		pr_err("format refused: this node (%u) is joined: hyperctl pool leave first\n",
		       pm->node);
		goto out;
	}
	ret = hyk_pm_read_super(pm, &old);
	if (ret != -ENODATA && !force) {
		pr_err("format refused: the pool is formatted already; --force erases it\n");
		ret = -EEXIST;
		goto out;
	}
	if (!ret) {
		formats = le64_to_cpu(old.formats);
		for (n = 0; n < HYK_POOL_MAX_NODES; n++) {
			struct hyk_pm_fence f;
			struct hyk_pm_node rec;

			if (hyk_pm_read_slot(pool, n, &rec, &f) ||
			    le32_to_cpu(rec.state) != HYK_PM_SLOT_JOINED ||
			    hyk_pm_is_fenced(&rec, &f))
				continue;
			ret = hyk_pm_alive(pm, n);
			if (ret < 0)
				goto out;
			if (ret) {
				pr_err("format refused: node %u is joined and alive: it must leave first\n",
				       n);
				ret = -EBUSY;
				goto out;
			}
		}
	}

	/* Unpublish the old format before touching what it describes. */
	memset(&sb, 0, sizeof(sb));
	memcpy(hyk_pm_va(pool, HYK_PM_SUPER_OFF), &sb, sizeof(sb));
	hyk_pm_publish(hyk_pm_va(pool, HYK_PM_SUPER_OFF), sizeof(sb));
	memset(hyk_pm_va(pool, HYK_PM_NODES_OFF), 0,
	       HYK_PM_TABLE_OFF - HYK_PM_NODES_OFF);
	hyk_pm_publish(hyk_pm_va(pool, HYK_PM_NODES_OFF),
		       HYK_PM_TABLE_OFF - HYK_PM_NODES_OFF);
	for (i = 0; i < pm->nr_chunks; i++)
		WRITE_ONCE(*hyk_pm_entry(pool, i),
			   cpu_to_le16(i < pm->meta_chunks ? HYK_PM_OWNER_META :
				       HYK_PM_OWNER_FREE));
	hyk_pm_range(pool, HYK_PM_TABLE_OFF, 2ULL * pm->nr_chunks, true);
	hyk_obj_format(pm);

	sb.magic = cpu_to_le64(HYK_PM_MAGIC);
	sb.version = cpu_to_le32(HYK_PM_VERSION);
	sb.max_nodes = cpu_to_le32(HYK_POOL_MAX_NODES);
	sb.size = cpu_to_le64(pool->size);
	sb.chunk_size = cpu_to_le64(HYK_PM_CHUNK);
	sb.nr_chunks = cpu_to_le32(pm->nr_chunks);
	sb.meta_chunks = cpu_to_le32(pm->meta_chunks);
	generate_random_uuid(sb.uuid);
	sb.formats = cpu_to_le64(formats + 1);
	sb.format_node = cpu_to_le32(pm->node);
	sb.crc = cpu_to_le32(hyk_pm_crc(&sb,
					offsetof(struct hyk_pm_super, crc)));
	memcpy(hyk_pm_va(pool, HYK_PM_SUPER_OFF), &sb, sizeof(sb));
	hyk_pm_publish(hyk_pm_va(pool, HYK_PM_SUPER_OFF), sizeof(sb));

	mutex_lock(&pm->beat_lock);
	memset(pm->seen, 0, sizeof(pm->seen));
	pm->gen = 0;
	pm->seq = 0;
	mutex_unlock(&pm->beat_lock);
	WRITE_ONCE(pm->pool_free,
		   (u64)(pm->nr_chunks - pm->meta_chunks) * HYK_PM_CHUNK);
	pr_info("node %u formatted the pool %pUb: %u chunks of 2 MiB, %u of them metadata\n",
		pm->node, sb.uuid, pm->nr_chunks, pm->meta_chunks);
	ret = 0;
out:
	mutex_unlock(&pm->op_lock);
	return ret;
}

/**
 * hyk_pm_join() - take this node's slot of a formatted pool
 * @pool:	a shared pool
 *
 * A slot whose record says joined is taken over only when its heartbeat
 * stands still for a lease (this node's own earlier life, which crashed
 * or was unloaded without leaving); its chunks go back to the pool.
 *
 * Return: 0, -EALREADY, -EBUSY while a fenced incarnation's regions are
 * left, -ENODATA, -EPROTO, -EBADMSG or -EMEDIUMTYPE for the superblock
 * (see hyk_pm_read_super()), -EADDRINUSE when a live node has the id,
 * -EINTR, -ETIMEDOUT.
 */
int hyk_pm_join(struct hyk_pool *pool)
{
	struct hyk_pmeta *pm = pool->pm;
	struct hyk_pm_slot *me = hyk_pm_slot(pool, pm->node);
	struct hyk_pm_super sb;
	struct hyk_pm_fence f;
	struct hyk_pm_node rec;
	u64 applied, refs;
	int ret;

	mutex_lock(&pm->op_lock);
	if (pm->joined) {
		ret = READ_ONCE(pm->fenced) ? -EBUSY : -EALREADY;
		pr_err("join refused: node %u %s\n", pm->node,
		       ret == -EBUSY ? "was fenced: hyperctl pool leave first" :
		       "is joined already");
		goto out;
	}
	ret = hyk_pm_read_super(pm, &sb);
	if (ret) {
		hyk_pm_super_err(ret, "join");
		goto out;
	}
	ret = hyk_pm_read_slot(pool, pm->node, &rec, &f);
	if (ret || (le32_to_cpu(rec.state) == HYK_PM_SLOT_JOINED &&
		    !hyk_pm_is_fenced(&rec, &f))) {
		ret = hyk_pm_alive(pm, pm->node);
		if (ret < 0)
			goto out;
		if (ret) {
			pr_err("join refused: node id %u is taken by a live node; give this node another node_id\n",
			       pm->node);
			ret = -EADDRINUSE;
			goto out;
		}
		if (hyk_pm_read_slot(pool, pm->node, &rec, &f)) {
			memset(&rec, 0, sizeof(rec));
			memset(&f, 0, sizeof(f));
		}
	}

	mutex_lock(&pm->beat_lock);
	pm->gen = max(le64_to_cpu(rec.gen), le64_to_cpu(f.gen)) + 1;
	pm->seq = le64_to_cpu(rec.seq);
	pm->heartbeat = 0;
	pm->fenced = false;
	hyk_pm_write_node(pm, HYK_PM_SLOT_JOINED);
	mutex_unlock(&pm->beat_lock);
	hyk_pm_set_word(&me->choosing, 0);
	hyk_pm_set_word(&me->ticket, 0);

	ret = hyk_pm_lock(pm);
	if (ret) {
		mutex_lock(&pm->beat_lock);
		hyk_pm_write_node(pm, HYK_PM_SLOT_LEFT);
		mutex_unlock(&pm->beat_lock);
		goto out;
	}
	/* What an earlier life of this node held is nobody's now. */
	applied = hyk_pm_replay(pm);
	applied = hyk_pm_release_all(pm, applied, pm->node);
	hyk_obj_forget(pm, applied, pm->node, &refs);
	hyk_pm_count(pm, &pm->pool_free, NULL);
	hyk_pm_unlock(pm);

	WRITE_ONCE(pm->held, 0);
	WRITE_ONCE(pm->joined, true);
	memcpy(pm->uuid, sb.uuid, sizeof(pm->uuid));
	mutex_lock(&pm->beat_lock);
	pm->beating = true;
	hyk_pm_observe(pm);
	mutex_unlock(&pm->beat_lock);
	schedule_delayed_work(&pm->beat, msecs_to_jiffies(HYK_PM_BEAT_MS));
	pr_info("node %u joined the pool %pUb (incarnation %llu)\n", pm->node,
		sb.uuid, pm->gen);
out:
	mutex_unlock(&pm->op_lock);
	return ret;
}

/* A new, empty allocator for this node's chunks. */
static int hyk_pm_new_allocator(struct hyk_pool *pool)
{
	struct gen_pool *gp = gen_pool_create(PAGE_SHIFT, pool->nid);

	if (!gp)
		return -ENOMEM;
	if (pool->gp)
		gen_pool_destroy(pool->gp);
	pool->gp = gp;
	return 0;
}

/**
 * hyk_pm_leave() - give this node's chunks back and free its slot
 * @pool:	a shared pool
 *
 * Refused while a region of this node exists: its memory would go to
 * other nodes under it.  A fenced node leaves without touching the chunk
 * table: its fencer gave the chunks back.
 *
 * Return: 0, -ENOTCONN when not joined, -EBUSY while regions exist,
 * -ENOMEM, -EINTR, -ETIMEDOUT.
 */
int hyk_pm_leave(struct hyk_pool *pool)
{
	struct hyk_pmeta *pm = pool->pm;
	u64 applied;
	int ret;

	/* The last references' frees, before the node goes. */
	flush_work(&pm->reap);
	mutex_lock(&pm->op_lock);
	ret = -ENOTCONN;
	if (!pm->joined) {
		pr_err("leave refused: node %u has not joined the pool\n",
		       pm->node);
		goto out;
	}
	ret = -EBUSY;
	if (atomic64_read(&pool->used) || atomic_read(&pool->nr_regions)) {
		pr_err("leave refused: %d regions of node %u still exist (%lld bytes): free them first\n",
		       atomic_read(&pool->nr_regions), pm->node,
		       atomic64_read(&pool->used));
		goto out;
	}
	ret = hyk_pm_new_allocator(pool);
	if (ret)
		goto out;
	if (!READ_ONCE(pm->fenced)) {
		ret = hyk_pm_lock(pm);
		if (ret)
			goto out;
		applied = hyk_pm_replay(pm);
		hyk_pm_release_all(pm, applied, pm->node);
		hyk_pm_count(pm, &pm->pool_free, NULL);
		hyk_pm_unlock(pm);
	}
	hyk_pm_stop_beat(pm, HYK_PM_SLOT_LEFT);
	pr_info("node %u left the pool: %llu bytes of chunks given back\n",
		pm->node, READ_ONCE(pm->fenced) ? 0 : pm->held);
	WRITE_ONCE(pm->joined, false);
	WRITE_ONCE(pm->held, 0);
	WRITE_ONCE(pm->fenced, false);
out:
	mutex_unlock(&pm->op_lock);
	return ret;
}

/**
 * hyk_pm_fence() - give a dead node's chunks back to the pool
 * @pool:	a shared pool this node joined
 * @victim:	the node to fence, below HYK_POOL_MAX_NODES
 * @force:	even if its heartbeat moved within the lease
 *
 * The fence record goes into the victim's slot first, so that the lock
 * skips the victim even if it died holding it; then, under the lock,
 * every chunk it owns is given back and its lock words are cleared.
 *
 * Return: 0, -ENOTCONN when this node has not joined, -EINVAL for this
 * node itself, -EBUSY when the victim's lease is live and not @force,
 * -ENOENT when the victim holds nothing and is not joined, -EAGAIN when
 * its record stays torn, -EINTR, -ETIMEDOUT.
 */
int hyk_pm_fence(struct hyk_pool *pool, unsigned int victim, bool force)
{
	struct hyk_pmeta *pm = pool->pm;
	u64 held[HYK_POOL_MAX_NODES], pool_free, applied, age, refs, before;
	struct hyk_pm_slot *s = hyk_pm_slot(pool, victim);
	struct hyk_pm_fence f;
	struct hyk_pm_node rec;
	bool joined;
	int ret;

	mutex_lock(&pm->op_lock);
	ret = -ENOTCONN;
	if (!pm->joined || READ_ONCE(pm->fenced)) {
		pr_err("fence refused: node %u has not joined the pool: hyperctl pool join\n",
		       pm->node);
		goto out;
	}
	ret = -EINVAL;
	if (victim == pm->node) {
		pr_err("fence refused: node %u cannot fence itself: hyperctl pool leave\n",
		       victim);
		goto out;
	}
	ret = -EAGAIN;
	if (hyk_pm_read_slot(pool, victim, &rec, &f)) {
		pr_err("fence refused: node %u's record is torn: try again\n",
		       victim);
		goto out;
	}
	joined = le32_to_cpu(rec.state) == HYK_PM_SLOT_JOINED &&
		 !hyk_pm_is_fenced(&rec, &f);
	mutex_lock(&pm->beat_lock);
	hyk_pm_observe(pm);
	age = hyk_pm_age_ms(pm, victim);
	mutex_unlock(&pm->beat_lock);
	ret = -EBUSY;
	if (joined && age < READ_ONCE(lease_ms) && !force) {
		pr_err("fence refused: node %u's heartbeat moved %llu ms ago, within its lease of %u ms; --force if it is surely down\n",
		       victim, age, READ_ONCE(lease_ms));
		goto out;
	}
	hyk_pm_range(pool, HYK_PM_TABLE_OFF, 2ULL * pm->nr_chunks, false);
	hyk_pm_count(pm, &pool_free, held);
	ret = -ENOENT;
	if (!joined && !held[victim]) {
		pr_err("fence refused: node %u is not joined and holds nothing\n",
		       victim);
		goto out;
	}
	if (joined) {
		struct hyk_pm_fence nf;

		memset(&nf, 0, sizeof(nf));
		nf.seq = cpu_to_le64(le64_to_cpu(f.seq) + 1);
		nf.gen = rec.gen;
		nf.by = cpu_to_le32(pm->node);
		nf.crc = cpu_to_le32(hyk_pm_crc(&nf,
						offsetof(struct hyk_pm_fence, crc)));
		memcpy(&s->fence, &nf, sizeof(nf));
		hyk_pm_publish(&s->fence, sizeof(nf));
	}
	ret = hyk_pm_lock(pm);
	if (ret)
		goto out;
	applied = hyk_pm_replay(pm);
	hyk_pm_count(pm, &pool_free, held);
	applied = hyk_pm_release_all(pm, applied, victim);
	hyk_pm_count(pm, &before, NULL);
	hyk_obj_forget(pm, applied, victim, &refs);
	hyk_pm_set_word(&s->ticket, 0);
	hyk_pm_set_word(&s->choosing, 0);
	hyk_pm_count(pm, &pm->pool_free, NULL);
	hyk_pm_unlock(pm);
	pr_info("node %u fenced node %u: %llu bytes of its chunks and %llu of objects given back to the pool, %llu references to objects dropped\n",
		pm->node, victim, held[victim], pm->pool_free - before, refs);
out:
	mutex_unlock(&pm->op_lock);
	return ret;
}

/**
 * hyk_pm_state() - this node's view of the pool, for sysfs
 * @pool:	the pool
 *
 * Return: "standalone", "joined", "fenced", or for a node that has not
 * joined "formatted", "unformatted", "other-version", "corrupt" or
 * "wrong-size".
 */
const char *hyk_pm_state(struct hyk_pool *pool)
{
	struct hyk_pmeta *pm = pool->pm;
	struct hyk_pm_super sb;
	const char *s;

	if (!pm)
		return "standalone";
	if (READ_ONCE(pm->fenced))
		return "fenced";
	mutex_lock(&pm->op_lock);
	switch (pm->joined ? 1 : hyk_pm_read_super(pm, &sb)) {
	case 1:
		s = "joined";
		break;
	case 0:
		s = "formatted";
		break;
	case -ENODATA:
		s = "unformatted";
		break;
	case -EPROTO:
		s = "other-version";
		break;
	case -EMEDIUMTYPE:
		s = "wrong-size";
		break;
	default:
		s = "corrupt";
		break;
	}
	mutex_unlock(&pm->op_lock);
	return s;
}

/**
 * hyk_pm_node_id() - the node_id parameter
 *
 * Return: this node's id, -1 when standalone.
 */
int hyk_pm_node_id(void)
{
	return node_id;
}

/**
 * hyk_pm_lease_ms() - the lease_ms parameter
 *
 * Return: the lease in milliseconds.
 */
unsigned int hyk_pm_lease_ms(void)
{
	return READ_ONCE(lease_ms);
}

/**
 * hyk_pm_uuid() - the pool's UUID
 * @pool:	the pool
 * @uuid:	filled in
 *
 * Return: 0, or the superblock's error (-ENODEV when standalone).
 */
int hyk_pm_uuid(struct hyk_pool *pool, u8 uuid[16])
{
	struct hyk_pm_super sb;
	int ret;

	if (!pool->pm)
		return -ENODEV;
	ret = hyk_pm_read_super(pool->pm, &sb);
	if (!ret)
		memcpy(uuid, sb.uuid, sizeof(sb.uuid));
	return ret;
}

/**
 * hyk_pm_usage() - chunk bytes in use, from a fresh read of the table
 * @pool:	a shared pool
 * @pool_used:	bytes of chunks any node or the metadata holds; 0 when the
 *		pool has no valid format
 * @node_held:	bytes of chunks this node holds
 */
void hyk_pm_usage(struct hyk_pool *pool, u64 *pool_used, u64 *node_held)
{
	struct hyk_pmeta *pm = pool->pm;
	u64 held[HYK_POOL_MAX_NODES], free_bytes;
	struct hyk_pm_super sb;

	*pool_used = 0;
	*node_held = 0;
	if (hyk_pm_read_super(pm, &sb))
		return;
	hyk_pm_range(pool, HYK_PM_TABLE_OFF, 2ULL * pm->nr_chunks, false);
	hyk_pm_count(pm, &free_bytes, held);
	*pool_used = pool->size - free_bytes;
	*node_held = held[pm->node];
}

/**
 * hyk_pm_reports() - every used slot of the node table, for sysfs
 * @pool:	a shared pool with a valid format
 * @rep:	one entry per node id; @rep[n].state NULL for a slot never used
 */
void hyk_pm_reports(struct hyk_pool *pool,
		    struct hyk_pm_report rep[HYK_POOL_MAX_NODES])
{
	struct hyk_pmeta *pm = pool->pm;
	u64 held[HYK_POOL_MAX_NODES], free_bytes;
	unsigned int n;

	memset(rep, 0, HYK_POOL_MAX_NODES * sizeof(*rep));
	hyk_pm_range(pool, HYK_PM_TABLE_OFF, 2ULL * pm->nr_chunks, false);
	hyk_pm_count(pm, &free_bytes, held);
	mutex_lock(&pm->beat_lock);
	hyk_pm_observe(pm);
	for (n = 0; n < HYK_POOL_MAX_NODES; n++) {
		struct hyk_pm_report *r = &rep[n];
		struct hyk_pm_fence f;
		struct hyk_pm_node rec;

		r->held = held[n];
		r->lease_age_ms = -1;
		if (hyk_pm_read_slot(pool, n, &rec, &f)) {
			r->state = "torn";
			continue;
		}
		r->gen = le64_to_cpu(rec.gen);
		if (le32_to_cpu(rec.state) == HYK_PM_SLOT_EMPTY && !r->held)
			continue;
		if (hyk_pm_is_fenced(&rec, &f)) {
			r->state = "fenced";
		} else if (le32_to_cpu(rec.state) == HYK_PM_SLOT_JOINED) {
			r->lease_age_ms = hyk_pm_age_ms(pm, n);
			r->state = r->lease_age_ms >= READ_ONCE(lease_ms) ?
				   "dead" : "joined";
		} else {
			r->state = "left";
		}
	}
	mutex_unlock(&pm->beat_lock);
}

/**
 * hyk_pm_superblock() - the superblock's memory, for debugfs
 * @pool:	the pool
 *
 * Return: its kernel address.
 */
void *hyk_pm_superblock(struct hyk_pool *pool)
{
	return hyk_pm_va(pool, HYK_PM_SUPER_OFF);
}

/**
 * hyk_pm_init() - set up a pool shared with other nodes, if node_id says so
 * @hdev:	a device whose pool was just made
 *
 * Nothing is read from or written to the pool: format and join are the
 * operator's.  The pool's allocator is left empty; chunks are added to it
 * as this node takes them.
 *
 * Return: 0, -EINVAL for a bad node_id or a pool too small to share,
 * -ENOMEM.
 */
int hyk_pm_init(struct hyk_dev *hdev)
{
	struct hyk_pool *pool = &hdev->pool;
	struct hyk_pmeta *pm;
	u64 nr = pool->size / HYK_PM_CHUNK;
	int ret;

	if (node_id < 0)
		return 0;
	if (node_id >= HYK_POOL_MAX_NODES) {
		pr_err("node_id %d refused: want 0 to %d, or -1 for a pool of this node alone\n",
		       node_id, HYK_POOL_MAX_NODES - 1);
		return -EINVAL;
	}
	/* An emulated pool's metadata must fit its first (contiguous) chunk. */
	if (nr > U32_MAX || DIV_ROUND_UP(hyk_pm_meta_bytes(nr), HYK_PM_CHUNK) >=
	    nr || (pool->source != HYPER_SOURCE_WINDOW &&
		   hyk_pm_meta_bytes(nr) > HYK_EMU_CHUNK)) {
		pr_err("hyper%d: a pool of %llu MiB cannot be shared: want more than %u MiB (an emulated one below 1.8 TiB)\n",
		       hdev->id, pool->size >> 20, 2 * (HYK_PM_CHUNK >> 20));
		return -EINVAL;
	}
	pm = kzalloc(sizeof(*pm), GFP_KERNEL);
	if (!pm)
		return -ENOMEM;
	pm->pool = pool;
	pm->node = node_id;
	pm->nr_chunks = nr;
	pm->meta_chunks = DIV_ROUND_UP(hyk_pm_meta_bytes(nr), HYK_PM_CHUNK);
	hyk_obj_init(pm);
	mutex_init(&pm->op_lock);
	mutex_init(&pm->beat_lock);
	INIT_DELAYED_WORK(&pm->beat, hyk_pm_beat_work);
	ret = hyk_pm_new_allocator(pool);
	if (ret) {
		kfree(pm);
		return ret;
	}
	pool->pm = pm;
	return 0;
}

/**
 * hyk_pm_destroy() - stop the heartbeat and forget the shared pool
 * @pool:	the pool, with no regions left
 *
 * The slot is left as it is: a node unloaded while joined looks crashed
 * to the others, and keeps its chunks until fenced or until it joins
 * again.
 */
void hyk_pm_destroy(struct hyk_pool *pool)
{
	struct hyk_pmeta *pm = pool->pm;

	if (!pm)
		return;
	mutex_lock(&pm->beat_lock);
	pm->beating = false;
	mutex_unlock(&pm->beat_lock);
	cancel_delayed_work_sync(&pm->beat);
	cancel_work_sync(&pm->reap);
	mutex_destroy(&pm->obj_lock);
	mutex_destroy(&pm->op_lock);
	mutex_destroy(&pm->beat_lock);
	kfree(pm);
	pool->pm = NULL;
}
