// SPDX-License-Identifier: GPL-2.0
/*
 * The shared pool's metadata lock and chunk table (Documentation/
 * supernode.md).  The lock is Lamport's bakery over per-slot words each
 * node alone writes; the chunk table changes only under it, each change
 * through a redo record written first, which the next lock holder
 * finishes if its writer died half way.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "hyper.h"
#include "pool_meta.h"

/* Whether slot @n holds a fenced incarnation, which the lock skips. */
static bool hyk_pm_skip(struct hyk_pool *pool, unsigned int n)
{
	struct hyk_pm_fence f;
	struct hyk_pm_node rec;

	return !hyk_pm_read_slot(pool, n, &rec, &f) &&
	       hyk_pm_is_fenced(&rec, &f);
}

/**
 * hyk_pm_lock() - take the pool's metadata lock
 * @pm:		this node's view of the pool
 *
 * Lamport's bakery over the slots' choosing and ticket words, which needs
 * nothing but flushed writes and fresh reads.  Slots of fenced nodes are
 * skipped.  Gives up after two leases, naming the node in the way.
 *
 * Return: 0, -EINTR when killed, -ETIMEDOUT.
 */
int hyk_pm_lock(struct hyk_pmeta *pm)
{
	struct hyk_pool *pool = pm->pool;
	struct hyk_pm_slot *me = hyk_pm_slot(pool, pm->node);
	unsigned long deadline;
	u64 mine = 0;
	unsigned int n;
	int ret;

	hyk_pm_set_word(&me->choosing, 1);
	for (n = 0; n < HYK_POOL_MAX_NODES; n++)
		mine = max(mine, hyk_pm_word(&hyk_pm_slot(pool, n)->ticket));
	hyk_pm_set_word(&me->ticket, ++mine);
	hyk_pm_set_word(&me->choosing, 0);

	deadline = jiffies + msecs_to_jiffies(2 * hyk_pm_lease_ms());
	for (n = 0; n < HYK_POOL_MAX_NODES; n++) {
		struct hyk_pm_slot *s = hyk_pm_slot(pool, n);

		while (n != pm->node) {
			u64 t;

			if (!hyk_pm_word(&s->choosing)) {
				t = hyk_pm_word(&s->ticket);
				if (!t || t > mine || (t == mine && n > pm->node))
					break;
			}
			if (hyk_pm_skip(pool, n))
				break;
			if (fatal_signal_pending(current)) {
				ret = -EINTR;
				goto out_release;
			}
			if (time_after(jiffies, deadline)) {
				pr_warn("node %u holds the pool's metadata lock: if it is dead, fence it (hyperctl pool fence %u)\n",
					n, n);
				ret = -ETIMEDOUT;
				goto out_release;
			}
			usleep_range(50, 200);
		}
	}
	return 0;

out_release:
	hyk_pm_set_word(&me->ticket, 0);
	return ret;
}

/**
 * hyk_pm_unlock() - let go of the pool's metadata lock
 * @pm:		this node's view of the pool
 */
void hyk_pm_unlock(struct hyk_pmeta *pm)
{
	hyk_pm_set_word(&hyk_pm_slot(pm->pool, pm->node)->ticket, 0);
}

static struct hyk_pm_log *hyk_pm_log(struct hyk_pool *pool)
{
	return hyk_pm_va(pool, HYK_PM_LOG_OFF);
}

/* Make the change @in describes; it may be made twice. */
static void hyk_pm_apply(struct hyk_pool *pool, const struct hyk_pm_intent *in)
{
	u32 first = le32_to_cpu(in->first), count = le32_to_cpu(in->count);
	u16 match = le32_to_cpu(in->match), owner = le32_to_cpu(in->owner);
	u32 i;

	for (i = first; i < first + count; i++) {
		__le16 *e = hyk_pm_entry(pool, i);

		if (le16_to_cpu(READ_ONCE(*e)) == match)
			WRITE_ONCE(*e, cpu_to_le16(owner));
	}
	hyk_pm_range(pool, HYK_PM_TABLE_OFF + 2ULL * first, 2ULL * count,
		     true);
}

static bool hyk_pm_owner_ok(u32 owner)
{
	return owner <= HYK_POOL_MAX_NODES || owner == HYK_PM_OWNER_OBJ ||
	       owner == HYK_PM_OWNER_META;
}

/**
 * hyk_pm_replay() - start a change of the chunk table, under the lock
 * @pm:		this node's view of the pool
 *
 * Reads the chunk table afresh and finishes the change a node that died
 * holding the lock had begun.
 *
 * Return: the last change made, for hyk_pm_change().
 */
u64 hyk_pm_replay(struct hyk_pmeta *pm)
{
	struct hyk_pool *pool = pm->pool;
	struct hyk_pm_log *log = hyk_pm_log(pool);
	struct hyk_pm_intent in;
	u64 applied;

	hyk_pm_range(pool, HYK_PM_TABLE_OFF, 2ULL * pm->nr_chunks, false);
	applied = hyk_pm_word(&log->applied);
	if (hyk_pm_read_rec(&log->intent, &in, sizeof(in),
			    offsetof(struct hyk_pm_intent, crc)) ||
	    le64_to_cpu(in.seq) != applied + 1)
		return applied;
	/* Written whole, never made whole: its writer died. */
	if (le32_to_cpu(in.first) > pm->nr_chunks ||
	    le32_to_cpu(in.count) > pm->nr_chunks - le32_to_cpu(in.first) ||
	    !hyk_pm_owner_ok(le32_to_cpu(in.match)) ||
	    !hyk_pm_owner_ok(le32_to_cpu(in.owner)))
		return applied;
	hyk_pm_apply(pool, &in);
	hyk_pm_set_word(&log->applied, ++applied);
	pr_info("node %u finished the chunk table change %llu of node %u\n",
		pm->node, applied, le32_to_cpu(in.by));
	return applied;
}

/**
 * hyk_pm_change() - change owners in the chunk table, under the lock
 * @pm:		this node's view of the pool
 * @applied:	the last change made (hyk_pm_replay())
 * @match:	only chunks of this owner change ...
 * @owner:	... to this owner
 * @first:	first chunk of the range
 * @count:	chunks of the range
 *
 * The intent is published first, so that a crash half way leaves a
 * change the next lock holder finishes.
 *
 * Return: this change's number.
 */
u64 hyk_pm_change(struct hyk_pmeta *pm, u64 applied, u16 match, u16 owner,
		  u32 first, u32 count)
{
	struct hyk_pm_log *log = hyk_pm_log(pm->pool);
	struct hyk_pm_intent in;

	memset(&in, 0, sizeof(in));
	in.seq = cpu_to_le64(applied + 1);
	in.match = cpu_to_le32(match);
	in.owner = cpu_to_le32(owner);
	in.first = cpu_to_le32(first);
	in.count = cpu_to_le32(count);
	in.by = cpu_to_le32(pm->node);
	in.crc = cpu_to_le32(hyk_pm_crc(&in,
					offsetof(struct hyk_pm_intent, crc)));
	memcpy(&log->intent, &in, sizeof(in));
	hyk_pm_publish(&log->intent, sizeof(in));
	hyk_pm_apply(pm->pool, &in);
	hyk_pm_set_word(&log->applied, applied + 1);
	return applied + 1;
}

/**
 * hyk_pm_count() - bytes of chunks free and held, from the table as read
 * @pm:		this node's view of the pool
 * @free_bytes:	free chunk bytes (written once, for lockless readers)
 * @held:	bytes each node holds, or NULL
 */
void hyk_pm_count(struct hyk_pmeta *pm, u64 *free_bytes,
		  u64 held[HYK_POOL_MAX_NODES])
{
	u64 free_now = 0;
	u32 i;

	if (held)
		memset(held, 0, HYK_POOL_MAX_NODES * sizeof(*held));
	for (i = 0; i < pm->nr_chunks; i++) {
		u16 o = hyk_pm_owner(pm->pool, i);

		if (o == HYK_PM_OWNER_FREE)
			free_now += HYK_PM_CHUNK;
		else if (held && o <= HYK_POOL_MAX_NODES)
			held[o - 1] += HYK_PM_CHUNK;
	}
	/* @pm->pool_free is read without a lock. */
	WRITE_ONCE(*free_bytes, free_now);
}

/**
 * hyk_pm_release_all() - give every chunk of a node back, under the lock
 * @pm:		this node's view of the pool
 * @applied:	the last change made
 * @node:	the node
 *
 * Return: this change's number.
 */
u64 hyk_pm_release_all(struct hyk_pmeta *pm, u64 applied, unsigned int node)
{
	return hyk_pm_change(pm, applied, node + 1, HYK_PM_OWNER_FREE,
			     pm->meta_chunks, pm->nr_chunks - pm->meta_chunks);
}
