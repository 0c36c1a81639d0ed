/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hyperoffload: the on-pool metadata of a pool shared by several nodes
 * (Documentation/supernode.md).  Every structure here lives in pool
 * memory that other hosts read, possibly without cache coherence: it is
 * little-endian, laid out in 64-byte lines, and each line has one writer.
 * Then this node's view of it, which pool_meta.c, pool_mem.c and
 * pool_lock.c share.
 */
#ifndef _HYK_POOL_META_H
#define _HYK_POOL_META_H

#include <linux/build_bug.h>
#include <linux/crc32.h>
#include <linux/types.h>

#include "hyper.h"

#define HYK_PM_MAGIC		0x4c4f4f5052505948ULL	/* "HYPRPOOL" */
#define HYK_PM_VERSION		2	/* 2: the object table */
#define HYK_PM_LINE		64
#define HYK_PM_CHUNK		SZ_2M

/* Offsets in the pool of the metadata parts. */
#define HYK_PM_SUPER_OFF	0
#define HYK_PM_NODES_OFF	4096
#define HYK_PM_SLOT_SIZE	256
#define HYK_PM_LOG_OFF		(HYK_PM_NODES_OFF + \
				 HYK_POOL_MAX_NODES * HYK_PM_SLOT_SIZE)
#define HYK_PM_TABLE_OFF	(HYK_PM_LOG_OFF + 4096)

/* Chunk owners in the chunk table: 0 free, 1 + node id, objects, metadata. */
#define HYK_PM_OWNER_FREE	0
#define HYK_PM_OWNER_OBJ	0xfffe
#define HYK_PM_OWNER_META	0xffff

/*
 * The object table, after the chunk table at the next 4 KiB: a record
 * per object, then each node's reference counts, one word per object, in
 * lines of that node alone.
 */
#define HYK_PM_OBJS		256
#define HYK_PM_OBJ_SIZE		128
#define HYK_PM_REFS_OFF		(HYK_PM_OBJS * HYK_PM_OBJ_SIZE)
#define HYK_PM_OBJ_BYTES	(HYK_PM_REFS_OFF + \
				 HYK_POOL_MAX_NODES * HYK_PM_OBJS * 8)

/* Where the object table starts in a pool of @nr_chunks chunks. */
static inline u64 hyk_pm_objs_off(u32 nr_chunks)
{
	return ALIGN(HYK_PM_TABLE_OFF + 2ULL * nr_chunks, SZ_4K);
}

/* What a node's own record says of it. */
enum hyk_pm_node_state {
	HYK_PM_SLOT_EMPTY,
	HYK_PM_SLOT_JOINED,
	HYK_PM_SLOT_LEFT,
};

/**
 * struct hyk_pm_super - the superblock, at pool offset 0
 * @magic:	HYK_PM_MAGIC
 * @version:	HYK_PM_VERSION of the module that formatted the pool
 * @max_nodes:	HYK_POOL_MAX_NODES at format time
 * @size:	pool bytes at format time
 * @chunk_size:	bytes of a chunk of the chunk table
 * @nr_chunks:	entries of the chunk table
 * @meta_chunks: leading chunks that hold the metadata
 * @uuid:	random at each format
 * @formats:	how many times the pool was formatted
 * @format_node: the node id that formatted it last
 * @crc:	crc32c of the fields above
 */
struct hyk_pm_super {
	__le64 magic;
	__le32 version;
	__le32 max_nodes;
	__le64 size;
	__le64 chunk_size;
	__le32 nr_chunks;
	__le32 meta_chunks;
	u8 uuid[16];
	__le64 formats;
	__le32 format_node;
	__le32 crc;
};

/**
 * struct hyk_pm_node - a node's own record; only that node writes it
 * @seq:	records written, for readers to see progress
 * @gen:	incarnation: the slot's joins so far
 * @heartbeat:	counts up while the node is joined and alive
 * @state:	enum hyk_pm_node_state
 * @id:		the slot's node id, for a check
 * @crc:	crc32c of the fields above
 */
struct hyk_pm_node {
	__le64 seq;
	__le64 gen;
	__le64 heartbeat;
	__le32 state;
	__le32 id;
	__le32 crc;
} __aligned(HYK_PM_LINE);

/**
 * struct hyk_pm_fence - the record a fencer leaves in a node's slot
 * @seq:	fences of this slot so far
 * @gen:	the incarnation fenced; it is fenced while its @gen is this
 * @by:		the node that fenced it
 * @crc:	crc32c of the fields above
 */
struct hyk_pm_fence {
	__le64 seq;
	__le64 gen;
	__le32 by;
	__le32 crc;
} __aligned(HYK_PM_LINE);

/**
 * struct hyk_pm_word - a word alone in its line, written by one node
 * @val:	the value
 */
struct hyk_pm_word {
	__le64 val;
} __aligned(HYK_PM_LINE);

/**
 * struct hyk_pm_slot - one node's slot of the node table
 * @node:	written by the node
 * @choosing:	bakery lock: the node is taking a ticket (by the node)
 * @ticket:	bakery lock: the node's ticket, 0 when not waiting or holding
 * @fence:	written by a fencer, under the lock
 */
struct hyk_pm_slot {
	struct hyk_pm_node node;
	struct hyk_pm_word choosing;
	struct hyk_pm_word ticket;
	struct hyk_pm_fence fence;
};

/**
 * struct hyk_pm_intent - a chunk table change, written before it is made
 * @seq:	the change's number; it is made once @applied reaches it
 * @match:	only entries owned by this owner change ...
 * @owner:	... to this owner
 * @first:	first chunk of the range
 * @count:	chunks of the range
 * @by:		the node that wrote it
 * @crc:	crc32c of the fields above
 */
struct hyk_pm_intent {
	__le64 seq;
	__le32 match;
	__le32 owner;
	__le32 first;
	__le32 count;
	__le32 by;
	__le32 crc;
} __aligned(HYK_PM_LINE);

/**
 * struct hyk_pm_log - the chunk table's redo record and how far it got
 * @intent:	the last change begun
 * @applied:	the last change finished
 */
struct hyk_pm_log {
	struct hyk_pm_intent intent;
	struct hyk_pm_word applied;
};

/* What an object's record says of it. */
enum hyk_pm_obj_state {
	HYK_PM_OBJ_EMPTY,
	HYK_PM_OBJ_CREATING,
	HYK_PM_OBJ_PUBLISHED,
	HYK_PM_OBJ_DELETING,
};

/**
 * struct hyk_pm_obj - an object's record, written under the metadata lock
 * @name:	NUL-padded name
 * @size:	bytes, as created
 * @seq:	writes of this record, for readers to see progress
 * @first:	first chunk of its contiguous run
 * @count:	chunks of the run, owned by HYK_PM_OWNER_OBJ
 * @node:	the node that created it
 * @state:	enum hyk_pm_obj_state
 * @crc:	crc32c of the fields above
 */
struct hyk_pm_obj {
	char name[HYPER_OBJ_NAME_LEN];
	__le64 size;
	__le64 seq;
	__le32 first;
	__le32 count;
	__le32 node;
	__le32 state;
	__le32 crc;
} __aligned(HYK_PM_LINE);

static_assert(sizeof(struct hyk_pm_obj) == HYK_PM_OBJ_SIZE);
static_assert(HYK_PM_OBJS * 8 % HYK_PM_LINE == 0);
static_assert(sizeof(struct hyk_pm_super) <= HYK_PM_NODES_OFF);
static_assert(sizeof(struct hyk_pm_slot) == HYK_PM_SLOT_SIZE);
static_assert(sizeof(struct hyk_pm_log) <= 4096);

#define HYK_PM_BEAT_MS		200
#define HYK_PM_LEASE_MIN	1000
#define HYK_PM_LEASE_MAX	3600000

/* What this node saw last of another node's heartbeat, and when. */
struct hyk_pm_seen {
	u64 gen;
	u64 heartbeat;
	unsigned long at;
	bool valid;
};

/**
 * enum hyk_obj_stall - the obj_stall knob's states
 * @HYK_STALL_OFF:	PUBLISH runs through
 * @HYK_STALL_ARMED:	the next PUBLISH stops half way
 * @HYK_STALL_WAITS:	a PUBLISH waits, its torn record written
 * @HYK_STALL_TEARING:	a PUBLISH writes its torn record (read as armed)
 */
enum hyk_obj_stall {
	HYK_STALL_OFF,
	HYK_STALL_ARMED,
	HYK_STALL_WAITS,
	HYK_STALL_TEARING,
};

/**
 * struct hyk_pmeta - this node's view of a shared pool
 * @pool:	the pool
 * @node:	this node's id
 * @nr_chunks:	chunks of the pool
 * @meta_chunks: leading chunks that hold the metadata
 * @op_lock:	serializes format, join, leave, fence and chunk takes; also
 *		protects @pool->gp's chunks, and the writes of @joined,
 *		@held and @pool_free, which hyk_pm_free_bytes() reads
 *		without it
 * @joined:	this node has a slot
 * @held:	bytes of chunks this node took, all in @pool->gp
 * @pool_free:	free chunk bytes at the last look at the chunk table
 * @beat_lock:	protects the fields below, this node's record
 * @beating:	the heartbeat runs
 * @fenced:	another node fenced this one
 * @gen:	this node's incarnation in its slot
 * @heartbeat:	this node's heartbeat count
 * @seq:	records this node wrote in its slot
 * @beat:	writes the heartbeat every HYK_PM_BEAT_MS
 * @seen:	other nodes' heartbeats, for their lease ages
 * @uuid:	the pool's UUID when this node joined
 * @objs_off:	pool offset of the object table
 * @obj_lock:	protects @refs and the writes of this node's reference words
 * @refs:	this node's references to each object of the table, its handles
 * @reap:	frees objects whose last reference this node dropped
 * @stall_wait:	where a PUBLISH stopped by the obj_stall knob waits
 * @stall:	the obj_stall knob (debugfs), one of enum hyk_obj_stall
 */
struct hyk_pmeta {
	struct hyk_pool *pool;
	unsigned int node;
	u32 nr_chunks;
	u32 meta_chunks;
	struct mutex op_lock;		/* see above */
	bool joined;
	u64 held;
	u64 pool_free;
	struct mutex beat_lock;		/* see above */
	bool beating;
	bool fenced;
	u64 gen;
	u64 heartbeat;
	u64 seq;
	struct delayed_work beat;
	struct hyk_pm_seen seen[HYK_POOL_MAX_NODES];
	u8 uuid[16];
	u64 objs_off;
	struct mutex obj_lock;		/* see above */
	u32 refs[HYK_PM_OBJS];
	struct work_struct reap;
	wait_queue_head_t stall_wait;
	atomic_t stall;
};

static inline u32 hyk_pm_crc(const void *p, size_t len)
{
	return __crc32c_le(~0U, p, len);
}

static inline void *hyk_pm_va(struct hyk_pool *pool, u64 off)
{
	phys_addr_t phys;
	void *va;

	hyk_pool_span(pool, off, &va, &phys);
	return va;
}

static inline struct hyk_pm_slot *hyk_pm_slot(struct hyk_pool *pool,
					      unsigned int n)
{
	return hyk_pm_va(pool, HYK_PM_NODES_OFF + n * HYK_PM_SLOT_SIZE);
}

static inline __le16 *hyk_pm_entry(struct hyk_pool *pool, u32 i)
{
	return hyk_pm_va(pool, HYK_PM_TABLE_OFF + 2ULL * i);
}

static inline u16 hyk_pm_owner(struct hyk_pool *pool, u32 i)
{
	return le16_to_cpu(READ_ONCE(*hyk_pm_entry(pool, i)));
}

/* Whether a node's record and the fence record in its slot say fenced. */
static inline bool hyk_pm_is_fenced(const struct hyk_pm_node *rec,
				    const struct hyk_pm_fence *f)
{
	return rec->gen && f->gen == rec->gen;
}

/* pool_mem.c: metadata memory, without coherence or atomics */
void hyk_pm_publish(void *p, size_t len);
void hyk_pm_fresh(void *p, size_t len);
void hyk_pm_range(struct hyk_pool *pool, u64 off, u64 len, bool wb);
u64 hyk_pm_word(struct hyk_pm_word *w);
void hyk_pm_set_word(struct hyk_pm_word *w, u64 v);
int hyk_pm_read_super(struct hyk_pmeta *pm, struct hyk_pm_super *sb);
int hyk_pm_read_rec(void *src, void *dst, size_t len, size_t crc_off);
int hyk_pm_read_node(struct hyk_pool *pool, unsigned int n,
		     struct hyk_pm_node *rec);
int hyk_pm_read_slot(struct hyk_pool *pool, unsigned int n,
		     struct hyk_pm_node *rec, struct hyk_pm_fence *f);

/* pool_lock.c: the metadata lock and the chunk table */
int hyk_pm_lock(struct hyk_pmeta *pm);
void hyk_pm_unlock(struct hyk_pmeta *pm);
u64 hyk_pm_replay(struct hyk_pmeta *pm);
u64 hyk_pm_change(struct hyk_pmeta *pm, u64 applied, u16 match, u16 owner,
		  u32 first, u32 count);
void hyk_pm_count(struct hyk_pmeta *pm, u64 *free_bytes,
		  u64 held[HYK_POOL_MAX_NODES]);
u64 hyk_pm_release_all(struct hyk_pmeta *pm, u64 applied, unsigned int node);

/* pool_obj.c: the object table */
void hyk_obj_init(struct hyk_pmeta *pm);
void hyk_obj_format(struct hyk_pmeta *pm);
u64 hyk_obj_forget(struct hyk_pmeta *pm, u64 applied, unsigned int node,
		   u64 *refs);

#endif /* _HYK_POOL_META_H */
