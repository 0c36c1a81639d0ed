// SPDX-License-Identifier: GPL-2.0
/*
 * Shared objects (Documentation/supernode.md, "Shared objects"): named
 * runs of whole chunks of a shared pool that one node creates, writes and
 * publishes, and that every node opens read-only.
 *
 * The object table follows the chunk table: a record per object, written
 * only under the pool's metadata lock, and each node's reference counts,
 * one word per object in lines that only that node writes.  A record's
 * chunks are owned by HYK_PM_OWNER_OBJ in the chunk table.  A record is
 * written before its chunks are taken and cleared before they are given
 * back, so that under the lock every object chunk that no record covers
 * is garbage of a node that died half way, and hyk_obj_sweep() frees it.
 *
 * Publishing writes the object's data back from this CPU's caches, then
 * writes the record that makes it visible, last.  Opening drops the
 * object's stale lines from this CPU's caches before the handle is
 * returned.  A store through the transfer engine writes back what it
 * wrote before it completes (xfer.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/libnvdimm.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait.h>
#include <linux/wait_bit.h>

#include "compat.h"
#include "hyper.h"
#include "pool_meta.h"

static const char *const hyk_obj_states[] = {
	[HYK_PM_OBJ_EMPTY] = "empty",
	[HYK_PM_OBJ_CREATING] = "creating",
	[HYK_PM_OBJ_PUBLISHED] = "published",
	[HYK_PM_OBJ_DELETING] = "deleting",
};

static struct hyk_pm_obj *hyk_obj_rec(struct hyk_pmeta *pm, u32 slot)
{
	return hyk_pm_va(pm->pool, pm->objs_off + (u64)slot * HYK_PM_OBJ_SIZE);
}

static __le64 *hyk_obj_ref(struct hyk_pmeta *pm, unsigned int node, u32 slot)
{
	return hyk_pm_va(pm->pool, pm->objs_off + HYK_PM_REFS_OFF +
			 ((u64)node * HYK_PM_OBJS + slot) * sizeof(__le64));
}

/*
 * Reads record @slot afresh.  Returns its state, or -EBADMSG when it is
 * torn or says what cannot be (a chunk run outside the pool, a bad name).
 */
static int hyk_obj_read(struct hyk_pmeta *pm, u32 slot, struct hyk_pm_obj *o)
{
	u32 state, first, count;
	u64 size;
	int ret;

	ret = hyk_pm_read_rec(hyk_obj_rec(pm, slot), o, sizeof(*o),
			      offsetof(struct hyk_pm_obj, crc));
	if (ret)
		return ret;
	state = le32_to_cpu(o->state);
	if (state == HYK_PM_OBJ_EMPTY)
		return state;
	first = le32_to_cpu(o->first);
	count = le32_to_cpu(o->count);
	size = le64_to_cpu(o->size);
	if (state > HYK_PM_OBJ_DELETING || !count || first < pm->meta_chunks ||
	    first > pm->nr_chunks || count > pm->nr_chunks - first ||
	    le32_to_cpu(o->node) >= HYK_POOL_MAX_NODES || !size ||
	    size > (u64)count * HYK_PM_CHUNK || !o->name[0] ||
	    o->name[HYPER_OBJ_NAME_LEN - 1])
		return -EBADMSG;
	return state;
}

/* Writes record @slot as @o in @state (EMPTY: zeros); under the lock. */
static void hyk_obj_write(struct hyk_pmeta *pm, u32 slot, struct hyk_pm_obj *o,
			  u32 state)
{
	struct hyk_pm_obj *dst = hyk_obj_rec(pm, slot);

	if (state == HYK_PM_OBJ_EMPTY) {
		memset(o, 0, sizeof(*o));
	} else {
		o->seq = cpu_to_le64(le64_to_cpu(o->seq) + 1);
		o->state = cpu_to_le32(state);
		o->crc = cpu_to_le32(hyk_pm_crc(o,
						offsetof(struct hyk_pm_obj, crc)));
	}
	memcpy(dst, o, sizeof(*o));
	hyk_pm_publish(dst, sizeof(*o));
}

/* Every node's references to @slot, read afresh. */
static u64 hyk_obj_refs(struct hyk_pmeta *pm, u32 slot)
{
	unsigned int n;
	u64 sum = 0;

	for (n = 0; n < HYK_POOL_MAX_NODES; n++) {
		__le64 *w = hyk_obj_ref(pm, n, slot);

		hyk_pm_fresh(w, sizeof(*w));
		sum += le64_to_cpu(READ_ONCE(*w));
	}
	return sum;
}

/* Publishes this node's count of @slot; under @obj_lock. */
static void hyk_obj_put_ref(struct hyk_pmeta *pm, u32 slot)
{
	__le64 *w = hyk_obj_ref(pm, pm->node, slot);

	/* The fencer zeroed this node's counts; the slot may be another's. */
	if (READ_ONCE(pm->fenced))
		return;
	WRITE_ONCE(*w, cpu_to_le64(pm->refs[slot]));
	hyk_pm_publish(w, sizeof(*w));
}

/* Writes back (@wb) or drops an object's cache lines, 2 MiB at a time. */
static void hyk_obj_cache(struct hyk_pool *pool, u64 off, u64 len, bool wb)
{
	while (len) {
		u64 n = min_t(u64, len, HYK_PM_CHUNK);

		hyk_pm_range(pool, off, n, wb);
		off += n;
		len -= n;
		cond_resched();
	}
}

/* A chunk bitmap for hyk_obj_sweep(); NULL when out of memory. */
static unsigned long *hyk_obj_bitmap(struct hyk_pmeta *pm)
{
	return kvcalloc(BITS_TO_LONGS(pm->nr_chunks), sizeof(long),
			GFP_KERNEL);
}

/*
 * Under the lock: clears the records nobody needs (torn ones, whose
 * writer died holding the lock, and creating or deleting ones without a
 * reference), then gives back every object chunk that no record covers.
 * Fills @covered with the chunks the records left cover.  Returns the
 * last chunk table change made; adds the bytes given back to @freed.
 */
static u64 hyk_obj_sweep(struct hyk_pmeta *pm, u64 applied,
			 unsigned long *covered, u64 *freed)
{
	struct hyk_pool *pool = pm->pool;
	struct hyk_pm_obj o;
	u32 slot, i, start;
	int st;

	bitmap_zero(covered, pm->nr_chunks);
	for (slot = 0; slot < HYK_PM_OBJS; slot++) {
		st = hyk_obj_read(pm, slot, &o);
		if (st == HYK_PM_OBJ_EMPTY)
			continue;
		if (st < 0) {
			pr_info("node %u cleared the torn record %u of the object table (its writer died)\n",
				pm->node, slot);
			hyk_obj_write(pm, slot, &o, HYK_PM_OBJ_EMPTY);
			continue;
		}
		if (st != HYK_PM_OBJ_PUBLISHED && !hyk_obj_refs(pm, slot)) {
			hyk_obj_write(pm, slot, &o, HYK_PM_OBJ_EMPTY);
			continue;
		}
		bitmap_set(covered, le32_to_cpu(o.first),
			   le32_to_cpu(o.count));
	}
	for (i = pm->meta_chunks; i < pm->nr_chunks; ) {
		if (hyk_pm_owner(pool, i) != HYK_PM_OWNER_OBJ ||
		    test_bit(i, covered)) {
			i++;
			continue;
		}
		start = i;
		while (i < pm->nr_chunks &&
		       hyk_pm_owner(pool, i) == HYK_PM_OWNER_OBJ &&
		       !test_bit(i, covered))
			i++;
		applied = hyk_pm_change(pm, applied, HYK_PM_OWNER_OBJ,
					HYK_PM_OWNER_FREE, start, i - start);
		*freed += (u64)(i - start) * HYK_PM_CHUNK;
	}
	return applied;
}

static int hyk_obj_standalone(const char *cmd)
{
	pr_info_ratelimited("%s refused: the module was loaded without node_id, the pool is this node's alone: shared objects need a joined pool (node_id, hyperctl pool join)\n",
			    cmd);
	return -ENODEV;
}

/*
 * Takes @op_lock and the metadata lock of a joined node, and finishes a
 * dead node's change of the chunk table.  Returns 0, -ENODEV, -EINTR,
 * -ETIMEDOUT.
 */
static int hyk_obj_begin(struct hyk_pmeta *pm, const char *cmd, u64 *applied)
{
	int ret;

	if (mutex_lock_killable(&pm->op_lock))
		return -EINTR;
	if (!pm->joined || READ_ONCE(pm->fenced)) {
		pr_info_ratelimited("%s refused: node %u %s\n", cmd, pm->node,
				    pm->joined ? "was fenced: hyperctl pool leave, then join" :
				    "has not joined the pool: hyperctl pool join");
		ret = -ENODEV;
		goto out_unlock;
	}
	ret = hyk_pm_lock(pm);
	if (ret)
		goto out_unlock;
	*applied = hyk_pm_replay(pm);
	return 0;

out_unlock:
	mutex_unlock(&pm->op_lock);
	return ret;
}

static void hyk_obj_end(struct hyk_pmeta *pm)
{
	hyk_pm_count(pm, &pm->pool_free, NULL);
	hyk_pm_unlock(pm);
	mutex_unlock(&pm->op_lock);
}

/* The slot of a record named @name in one of @states (bits), or -ENOENT. */
static int hyk_obj_find(struct hyk_pmeta *pm, const char *name, u32 states,
			struct hyk_pm_obj *o)
{
	u32 slot;
	int st;

	for (slot = 0; slot < HYK_PM_OBJS; slot++) {
		st = hyk_obj_read(pm, slot, o);
		if (st > 0 && BIT(st) & states &&
		    !memcmp(o->name, name, HYPER_OBJ_NAME_LEN))
			return slot;
	}
	return -ENOENT;
}

static struct hyk_obj *hyk_obj_alloc(bool opened)
{
	struct hyk_obj *obj = kzalloc(sizeof(*obj), GFP_KERNEL);

	if (!obj)
		return NULL;
	mutex_init(&obj->lock);
	obj->opened = opened;
	obj->rdonly = opened;
	return obj;
}

static void hyk_obj_free(struct hyk_obj *obj)
{
	mutex_destroy(&obj->lock);
	kfree(obj);
}

/* Takes one of this node's references to @slot. */
static void hyk_obj_getref(struct hyk_pmeta *pm, u32 slot)
{
	mutex_lock(&pm->obj_lock);
	pm->refs[slot]++;
	hyk_obj_put_ref(pm, slot);
	mutex_unlock(&pm->obj_lock);
}

/* Drops one; the last one of an object not published has it freed. */
static void hyk_obj_unref(struct hyk_pmeta *pm, u32 slot)
{
	struct hyk_pm_obj o;
	bool last;

	mutex_lock(&pm->obj_lock);
	if (!WARN_ON_ONCE(!pm->refs[slot]))
		pm->refs[slot]--;
	last = !pm->refs[slot];
	hyk_obj_put_ref(pm, slot);
	mutex_unlock(&pm->obj_lock);
	if (last && hyk_obj_read(pm, slot, &o) != HYK_PM_OBJ_PUBLISHED)
		schedule_work(&pm->reap);
}

/* Frees what the last references left behind, under the lock. */
static void hyk_obj_reap_work(struct work_struct *work)
{
	struct hyk_pmeta *pm = container_of(work, struct hyk_pmeta, reap);
	unsigned long *covered = hyk_obj_bitmap(pm);
	u64 applied, freed = 0;

	if (!covered)
		return;
	mutex_lock(&pm->op_lock);
	if (pm->joined && !READ_ONCE(pm->fenced) && !hyk_pm_lock(pm)) {
		applied = hyk_pm_replay(pm);
		hyk_obj_sweep(pm, applied, covered, &freed);
		hyk_pm_count(pm, &pm->pool_free, NULL);
		hyk_pm_unlock(pm);
	}
	mutex_unlock(&pm->op_lock);
	kvfree(covered);
}

/**
 * hyk_obj_create() - a new object, not yet visible, and a writable handle
 * @hdev:	the device
 * @name:	a valid name, NUL-padded to HYPER_OBJ_NAME_LEN
 * @size:	bytes, page aligned and non-zero
 * @rp:		the region of the handle
 *
 * Return: 0, -ENODEV when the node has not joined a pool, -EEXIST,
 * -ENFILE, -ENOSPC, -ENOMEM, -EINTR, -ETIMEDOUT.
 */
int hyk_obj_create(struct hyk_dev *hdev, const char *name, u64 size,
		   struct hyk_region **rp)
{
	struct hyk_pool *pool = &hdev->pool;
	struct hyk_pmeta *pm = pool->pm;
	u32 need, slot, free_slot = U32_MAX, first = 0, run = 0, i;
	unsigned long *covered;
	struct hyk_region *r;
	struct hyk_pm_obj o;
	struct hyk_obj *obj;
	u64 applied, freed = 0, off;
	int ret, st;

	if (!pm)
		return hyk_obj_standalone("OBJ_CREATE");
	need = DIV_ROUND_UP_ULL(size, HYK_PM_CHUNK);
	obj = hyk_obj_alloc(false);
	covered = hyk_obj_bitmap(pm);
	ret = -ENOMEM;
	if (!obj || !covered)
		goto out_free;
	ret = hyk_obj_begin(pm, "OBJ_CREATE", &applied);
	if (ret)
		goto out_free;
	applied = hyk_obj_sweep(pm, applied, covered, &freed);
	for (slot = 0; slot < HYK_PM_OBJS; slot++) {
		st = hyk_obj_read(pm, slot, &o);
		if (st == HYK_PM_OBJ_EMPTY && free_slot == U32_MAX)
			free_slot = slot;
		if (st <= 0 || st == HYK_PM_OBJ_DELETING ||
		    memcmp(o.name, name, HYPER_OBJ_NAME_LEN))
			continue;
		pr_info_ratelimited("OBJ_CREATE refused: the name %s is taken (%s by node %u): open it, delete it first, or choose another name\n",
				    name, hyk_obj_states[st],
				    le32_to_cpu(o.node));
		ret = -EEXIST;
		goto out_end;
	}
	if (free_slot == U32_MAX) {
		pr_info_ratelimited("OBJ_CREATE refused: the pool's object table is full (%d objects): delete objects first\n",
				    HYK_PM_OBJS);
		ret = -ENFILE;
		goto out_end;
	}
	for (i = pm->meta_chunks; i < pm->nr_chunks && run < need; i++) {
		if (hyk_pm_owner(pool, i) != HYK_PM_OWNER_FREE ||
		    test_bit(i, covered)) {
			run = 0;
			continue;
		}
		if (!run++)
			first = i;
	}
	if (run < need) {
		pr_info_ratelimited("OBJ_CREATE refused: the pool has no %u free contiguous 2 MiB chunks for %llu bytes: delete objects or free regions\n",
				    need, size);
		ret = -ENOSPC;
		goto out_end;
	}
	/* The record first: a chunk of no record is garbage to a sweep. */
	memset(&o, 0, sizeof(o));
	memcpy(o.name, name, HYPER_OBJ_NAME_LEN);
	o.size = cpu_to_le64(size);
	o.first = cpu_to_le32(first);
	o.count = cpu_to_le32(need);
	o.node = cpu_to_le32(pm->node);
	hyk_obj_write(pm, free_slot, &o, HYK_PM_OBJ_CREATING);
	hyk_obj_getref(pm, free_slot);
	hyk_pm_change(pm, applied, HYK_PM_OWNER_FREE, HYK_PM_OWNER_OBJ, first,
		      need);
	hyk_obj_end(pm);
	kvfree(covered);
	covered = NULL;

	obj->slot = free_slot;
	obj->node = pm->node;
	off = (u64)first * HYK_PM_CHUNK;
	r = hyk_region_wrap(hdev, off, size, obj, true);
	if (IS_ERR(r)) {
		ret = PTR_ERR(r);
		hyk_obj_unref(pm, free_slot);
		goto out_free;
	}
	/* The zeros reach the memory: a reader must never see what was there. */
	hyk_obj_cache(pool, off, size, true);
	*rp = r;
	return 0;

out_end:
	hyk_obj_end(pm);
out_free:
	kvfree(covered);
	if (obj)
		hyk_obj_free(obj);
	return ret;
}

/**
 * hyk_obj_publish() - make an object this node created visible to all
 * @r:		the creator's handle
 *
 * Waits for the stores in flight, writes back what mappings wrote, then
 * writes the record, last.  With the obj_stall knob armed, the record is
 * written torn and the call waits until the knob is cleared.
 *
 * Return: 0, -EINVAL for a handle that OBJ_OPEN gave, -EALREADY, -EBUSY
 * while a writable mapping exists, pages are still pinned through one,
 * or another PUBLISH of it runs, -ENODEV
 * when the node was fenced or its record is gone, -EINTR, -ETIMEDOUT.
 */
int hyk_obj_publish(struct hyk_region *r)
{
	struct hyk_pool *pool = &r->hdev->pool;
	struct hyk_pm_obj o, *rec;
	struct hyk_pmeta *pm = pool->pm;
	struct hyk_obj *obj = r->obj;
	u64 applied;
	int ret, st;

	if (mutex_lock_killable(&obj->lock))
		return -EINTR;
	ret = -EINVAL;
	if (obj->opened) {
		pr_info_ratelimited("OBJ_PUBLISH refused: handle %u was opened, not created, by this file: only the creator publishes\n",
				    r->handle);
		goto out_unlock;
	}
	ret = -EBUSY;
	if (obj->publishing) {
		pr_info_ratelimited("OBJ_PUBLISH refused: handle %u is being published by another call\n",
				    r->handle);
		goto out_unlock;
	}
	ret = -EALREADY;
	if (obj->rdonly) {
		pr_info_ratelimited("OBJ_PUBLISH refused: handle %u is published already\n",
				    r->handle);
		goto out_unlock;
	}
	ret = -EBUSY;
	if (obj->wmaps) {
		pr_info_ratelimited("OBJ_PUBLISH refused: %u writable mappings of handle %u exist: munmap them first\n",
				    obj->wmaps, r->handle);
		goto out_unlock;
	}
	/* No store and no writable mapping starts from now on. */
	WRITE_ONCE(obj->rdonly, true);
	obj->publishing = true;
	/*
	 * Not held further: a store under way may wait for the mmap lock
	 * that an mmap() waiting for @lock holds.
	 */
	mutex_unlock(&obj->lock);
	/* Pairs with hyk_obj_store_begin(): it sees @rdonly or we its count. */
	smp_mb();
	wait_var_event(&obj->stores, !atomic_read(&obj->stores));
	/* A pin taken through a writable mapping could write on. */
	if (obj->wmapped && hyk_pool_referenced(pool, r->off, r->size, true)) {
		pr_info_ratelimited("OBJ_PUBLISH refused: pages of handle %u are still pinned or spliced through a writable mapping (O_DIRECT, io_uring fixed buffers, vmsplice): release them first\n",
				    r->handle);
		ret = -EBUSY;
		goto out_writable;
	}
	/* Stores wrote theirs back; mappings did not. */
	if (obj->wmapped)
		hyk_obj_cache(pool, r->off, r->size, true);

	ret = hyk_obj_begin(pm, "OBJ_PUBLISH", &applied);
	if (ret)
		goto out_writable;
	st = hyk_obj_read(pm, obj->slot, &o);
	if (st != HYK_PM_OBJ_CREATING || le32_to_cpu(o.node) != pm->node) {
		pr_err("OBJ_PUBLISH refused: the record of handle %u is gone (the pool was formatted or this node fenced): free the handle\n",
		       r->handle);
		ret = -ENODEV;
		goto out_end;
	}
	rec = hyk_obj_rec(pm, obj->slot);
	if (atomic_cmpxchg(&pm->stall, HYK_STALL_ARMED,
			   HYK_STALL_TEARING) == HYK_STALL_ARMED) {
		struct hyk_pm_obj half = o;

		/* Published, with the old crc: torn, as a crash leaves it. */
		half.state = cpu_to_le32(HYK_PM_OBJ_PUBLISHED);
		half.seq = cpu_to_le64(le64_to_cpu(o.seq) + 1);
		memcpy(rec, &half, sizeof(half));
		hyk_pm_publish(rec, sizeof(half));
	}
	/*
	 * The knob reads "waits" only once the torn record is out; cleared
	 * meanwhile, the write below mends the record.
	 */
	if (atomic_cmpxchg(&pm->stall, HYK_STALL_TEARING,
			   HYK_STALL_WAITS) == HYK_STALL_TEARING) {
		pr_info("OBJ_PUBLISH of %s stopped half way (debugfs obj_stall): its record is torn until obj_stall is 0\n",
			o.name);
		ret = wait_event_killable(pm->stall_wait,
					  atomic_read(&pm->stall) != HYK_STALL_WAITS);
		if (ret) {
			memcpy(rec, &o, sizeof(o));
			hyk_pm_publish(rec, sizeof(o));
			atomic_set(&pm->stall, HYK_STALL_OFF);
			goto out_end;
		}
	}
	hyk_obj_write(pm, obj->slot, &o, HYK_PM_OBJ_PUBLISHED);
	hyk_obj_end(pm);
	mutex_lock(&obj->lock);
	obj->publishing = false;
	mutex_unlock(&obj->lock);
	return 0;

out_end:
	hyk_obj_end(pm);
out_writable:
	mutex_lock(&obj->lock);
	obj->publishing = false;
	WRITE_ONCE(obj->rdonly, false);
out_unlock:
	mutex_unlock(&obj->lock);
	return ret;
}

/**
 * hyk_obj_open() - a read-only handle of a published object
 * @hdev:	the device
 * @name:	a valid name, NUL-padded to HYPER_OBJ_NAME_LEN
 * @rp:		the region of the handle
 *
 * Return: 0, -ENODEV when the node has not joined a pool, -ENOENT,
 * -ENOMEM, -EINTR, -ETIMEDOUT.
 */
int hyk_obj_open(struct hyk_dev *hdev, const char *name,
		 struct hyk_region **rp)
{
	struct hyk_pool *pool = &hdev->pool;
	struct hyk_pmeta *pm = pool->pm;
	struct hyk_region *r;
	struct hyk_pm_obj o;
	struct hyk_obj *obj;
	u64 applied, off, size;
	int ret, slot;

	if (!pm)
		return hyk_obj_standalone("OBJ_OPEN");
	obj = hyk_obj_alloc(true);
	if (!obj)
		return -ENOMEM;
	ret = hyk_obj_begin(pm, "OBJ_OPEN", &applied);
	if (ret)
		goto out_free;
	slot = hyk_obj_find(pm, name, BIT(HYK_PM_OBJ_PUBLISHED), &o);
	if (slot < 0) {
		pr_info_ratelimited("OBJ_OPEN refused: no published object %s in the pool: check the name (hyperctl pool objects), or wait for its publish\n",
				    name);
		hyk_obj_end(pm);
		ret = -ENOENT;
		goto out_free;
	}
	hyk_obj_getref(pm, slot);
	hyk_obj_end(pm);

	obj->slot = slot;
	obj->node = le32_to_cpu(o.node);
	off = (u64)le32_to_cpu(o.first) * HYK_PM_CHUNK;
	size = le64_to_cpu(o.size);
	/* What this CPU cached of the memory before is stale. */
	hyk_obj_cache(pool, off, size, false);
	r = hyk_region_wrap(hdev, off, size, obj, false);
	if (IS_ERR(r)) {
		ret = PTR_ERR(r);
		hyk_obj_unref(pm, slot);
		goto out_free;
	}
	*rp = r;
	return 0;

out_free:
	hyk_obj_free(obj);
	return ret;
}

/**
 * hyk_obj_delete() - remove a published object's name
 * @hdev:	the device
 * @name:	a valid name, NUL-padded to HYPER_OBJ_NAME_LEN
 *
 * The memory goes back to the pool now if no node holds a reference,
 * else when the last one is dropped.
 *
 * Return: 0, -ENODEV when the node has not joined a pool, -ENOENT,
 * -ENOMEM, -EINTR, -ETIMEDOUT.
 */
int hyk_obj_delete(struct hyk_dev *hdev, const char *name)
{
	struct hyk_pmeta *pm = hdev->pool.pm;
	unsigned long *covered;
	struct hyk_pm_obj o;
	u64 applied, freed = 0;
	int ret, slot;

	if (!pm)
		return hyk_obj_standalone("OBJ_DELETE");
	covered = hyk_obj_bitmap(pm);
	if (!covered)
		return -ENOMEM;
	ret = hyk_obj_begin(pm, "OBJ_DELETE", &applied);
	if (ret)
		goto out_free;
	slot = hyk_obj_find(pm, name, BIT(HYK_PM_OBJ_PUBLISHED), &o);
	if (slot < 0) {
		ret = -ENOENT;
		if (hyk_obj_find(pm, name, BIT(HYK_PM_OBJ_CREATING), &o) >= 0)
			pr_info_ratelimited("OBJ_DELETE refused: %s is not published yet: its creator (node %u) frees its handle to drop it\n",
					    name, le32_to_cpu(o.node));
		else
			pr_info_ratelimited("OBJ_DELETE refused: no published object %s in the pool: check the name (hyperctl pool objects)\n",
					    name);
		goto out_end;
	}
	hyk_obj_write(pm, slot, &o, HYK_PM_OBJ_DELETING);
	hyk_obj_sweep(pm, applied, covered, &freed);
	ret = 0;
out_end:
	hyk_obj_end(pm);
out_free:
	kvfree(covered);
	return ret;
}

/**
 * hyk_obj_drop() - a handle's region is released: drop its reference
 * @r:		the region, whose @obj is freed here, or held (hyk_pool_hold())
 *		while its pages are still referenced
 */
void hyk_obj_drop(struct hyk_region *r)
{
	struct hyk_pool *pool = &r->hdev->pool;

	/*
	 * A pin that outlived the handle's mappings (O_DIRECT, vmsplice, a
	 * fixed buffer) keeps the reference, so that the chunks are not
	 * reused while its owner may still read or write them.  Page tables
	 * do not count: other handles of the object may map it.
	 */
	if (hyk_pool_referenced(pool, r->off, r->size, true))
		hyk_pool_hold(pool, r->off, r->size, r->obj);
	else
		hyk_obj_put(pool->pm, r->obj);
	r->obj = NULL;
}

/**
 * hyk_obj_put() - drop the reference of a handle that is gone
 * @pm:		this node's view of the pool
 * @obj:	the handle's object, freed here
 */
void hyk_obj_put(struct hyk_pmeta *pm, struct hyk_obj *obj)
{
	hyk_obj_unref(pm, obj->slot);
	hyk_obj_free(obj);
}

/**
 * hyk_obj_mmap() - check a new mapping of an object's handle
 * @r:		the region
 * @vma:	the mapping, before its pages are inserted
 *
 * A read-only handle maps only PROT_READ, and no mapping that is not
 * writable now may become so (VM_MAYWRITE goes).  Writable mappings of an
 * unpublished object are counted: PUBLISH waits for none.  If the pages
 * cannot be inserted, hyk_obj_vma_close() undoes the count.
 *
 * Return: 0 or -EACCES.
 */
int hyk_obj_mmap(struct hyk_region *r, struct vm_area_struct *vma)
{
	struct hyk_obj *obj = r->obj;
	int ret = 0;

	mutex_lock(&obj->lock);
	if (!(vma->vm_flags & VM_WRITE)) {
		hyk_vm_flags_clear(vma, VM_MAYWRITE);
	} else if (obj->rdonly) {
		pr_info_ratelimited("mmap refused: handle %u is a %s object, read-only: map it PROT_READ\n",
				    r->handle, obj->opened ? "shared" : "published");
		ret = -EACCES;
	} else {
		obj->wmaps++;
		obj->wmapped = true;
	}
	mutex_unlock(&obj->lock);
	return ret;
}

/**
 * hyk_obj_vma_open() - a mapping of an object was copied or split
 * @r:		the region
 * @vma:	the new mapping
 */
void hyk_obj_vma_open(struct hyk_region *r, struct vm_area_struct *vma)
{
	if (!(vma->vm_flags & VM_MAYWRITE))
		return;
	mutex_lock(&r->obj->lock);
	r->obj->wmaps++;
	mutex_unlock(&r->obj->lock);
}

/**
 * hyk_obj_vma_close() - a mapping of an object goes
 * @r:		the region
 * @vma:	the mapping
 */
void hyk_obj_vma_close(struct hyk_region *r, struct vm_area_struct *vma)
{
	if (!(vma->vm_flags & VM_MAYWRITE))
		return;
	mutex_lock(&r->obj->lock);
	r->obj->wmaps--;
	mutex_unlock(&r->obj->lock);
}

/**
 * hyk_obj_store_begin() - a store into an object's handle starts
 * @r:		the region
 *
 * Return: 0, or -EACCES when the object is read-only here.
 */
int hyk_obj_store_begin(struct hyk_region *r)
{
	atomic_inc(&r->obj->stores);
	/* Against PUBLISH: it sets rdonly, then waits for @stores. */
	smp_mb__after_atomic();
	if (!READ_ONCE(r->obj->rdonly))
		return 0;
	hyk_obj_store_end(r);
	pr_info_ratelimited("STORE refused: handle %u is a %s object, read-only: create a new object to write\n",
			    r->handle, r->obj->opened ? "shared" : "published");
	return -EACCES;
}

/**
 * hyk_obj_store_end() - a store that hyk_obj_store_begin() let in is over
 * @r:		the region
 */
void hyk_obj_store_end(struct hyk_region *r)
{
	if (atomic_dec_and_test(&r->obj->stores))
		wake_up_var(&r->obj->stores);
}

/**
 * hyk_obj_list() - the object table, one line per object, for sysfs
 * @pool:	the pool
 * @buf:	where to write "NAME STATE SIZE NODE REFS" lines
 * @len:	its size
 *
 * Records being written (torn) are left out.
 *
 * Return: bytes written.
 */
ssize_t hyk_obj_list(struct hyk_pool *pool, char *buf, size_t len)
{
	struct hyk_pmeta *pm = pool->pm;
	struct hyk_pm_super sb;
	struct hyk_pm_obj o;
	size_t n = 0;
	u32 slot;
	int st;

	if (!pm || hyk_pm_read_super(pm, &sb))
		return 0;
	for (slot = 0; slot < HYK_PM_OBJS; slot++) {
		st = hyk_obj_read(pm, slot, &o);
		if (st <= 0)
			continue;
		n += scnprintf(buf + n, len - n, "%s %s %llu %u %llu\n",
			       o.name, hyk_obj_states[st],
			       le64_to_cpu(o.size), le32_to_cpu(o.node),
			       hyk_obj_refs(pm, slot));
	}
	return n;
}

/**
 * hyk_obj_stall_get() - the obj_stall knob, for debugfs
 * @pool:	the pool
 *
 * Return: 0 off, 1 armed (or a PUBLISH writing its torn record), 2 a
 * PUBLISH waits half way, its record torn.
 */
int hyk_obj_stall_get(struct hyk_pool *pool)
{
	int st = pool->pm ? atomic_read(&pool->pm->stall) : HYK_STALL_OFF;

	return st == HYK_STALL_TEARING ? HYK_STALL_ARMED : st;
}

/**
 * hyk_obj_stall_set() - arm the obj_stall knob, or release a PUBLISH
 * @pool:	the pool
 * @val:	1 stops the next PUBLISH half way, 0 lets it go on
 *
 * Return: 0, -EINVAL, -ENODEV when standalone, -EBUSY arming while a
 * PUBLISH stops half way.
 */
int hyk_obj_stall_set(struct hyk_pool *pool, int val)
{
	struct hyk_pmeta *pm = pool->pm;

	if (!pm)
		return -ENODEV;
	if (val == 0) {
		atomic_set(&pm->stall, HYK_STALL_OFF);
		wake_up_all(&pm->stall_wait);
		return 0;
	}
	if (val != 1)
		return -EINVAL;
	switch (atomic_cmpxchg(&pm->stall, HYK_STALL_OFF, HYK_STALL_ARMED)) {
	case HYK_STALL_OFF:
	case HYK_STALL_ARMED:
		return 0;
	default:
		return -EBUSY;
	}
}

/**
 * hyk_obj_forget() - drop a node's references, under the lock
 * @pm:		this node's view of the pool
 * @applied:	the last chunk table change made
 * @node:	a fenced node, or this one joining again
 * @refs:	references dropped
 *
 * Its counts become 0; then the objects it created and never published,
 * and the deleted ones nobody holds now, are freed.
 *
 * Return: the last chunk table change made.
 */
u64 hyk_obj_forget(struct hyk_pmeta *pm, u64 applied, unsigned int node,
		   u64 *refs)
{
	unsigned long *covered = hyk_obj_bitmap(pm);
	u64 freed = 0;
	u32 slot;

	*refs = 0;
	for (slot = 0; slot < HYK_PM_OBJS; slot++) {
		__le64 *w = hyk_obj_ref(pm, node, slot);
		u64 v;

		hyk_pm_fresh(w, sizeof(*w));
		v = le64_to_cpu(READ_ONCE(*w));
		if (!v)
			continue;
		*refs += v;
		WRITE_ONCE(*w, 0);
		hyk_pm_publish(w, sizeof(*w));
	}
	if (node == pm->node) {
		mutex_lock(&pm->obj_lock);
		memset(pm->refs, 0, sizeof(pm->refs));
		mutex_unlock(&pm->obj_lock);
	}
	/* Without memory, the next object command sweeps. */
	if (covered)
		applied = hyk_obj_sweep(pm, applied, covered, &freed);
	kvfree(covered);
	return applied;
}

/**
 * hyk_obj_format() - an empty object table, for a new format
 * @pm:		this node's view of the pool
 */
void hyk_obj_format(struct hyk_pmeta *pm)
{
	void *va = hyk_pm_va(pm->pool, pm->objs_off);

	memset(va, 0, HYK_PM_OBJ_BYTES);
	hyk_pm_publish(va, HYK_PM_OBJ_BYTES);
}

/**
 * hyk_obj_init() - set up this node's object state
 * @pm:		this node's view of the pool, its @nr_chunks set
 */
void hyk_obj_init(struct hyk_pmeta *pm)
{
	pm->objs_off = hyk_pm_objs_off(pm->nr_chunks);
	mutex_init(&pm->obj_lock);
	INIT_WORK(&pm->reap, hyk_obj_reap_work);
	init_waitqueue_head(&pm->stall_wait);
	atomic_set(&pm->stall, HYK_STALL_OFF);
}
