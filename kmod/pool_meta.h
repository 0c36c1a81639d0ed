/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hyperoffload: the on-pool metadata of a pool shared by several nodes
 * (Documentation/supernode.md).  Every structure here lives in pool
 * memory that other hosts read, possibly without cache coherence: it is
 * little-endian, laid out in 64-byte lines, and each line has one writer.
 */
#ifndef _HYK_POOL_META_H
#define _HYK_POOL_META_H

#include <linux/build_bug.h>
#include <linux/types.h>

#define HYK_PM_MAGIC		0x4c4f4f5052505948ULL	/* "HYPRPOOL" */
#define HYK_PM_VERSION		1
#define HYK_PM_LINE		64
#define HYK_PM_CHUNK		SZ_2M

/* Offsets in the pool of the metadata parts. */
#define HYK_PM_SUPER_OFF	0
#define HYK_PM_NODES_OFF	4096
#define HYK_PM_SLOT_SIZE	256
#define HYK_PM_LOG_OFF		(HYK_PM_NODES_OFF + \
				 HYK_POOL_MAX_NODES * HYK_PM_SLOT_SIZE)
#define HYK_PM_TABLE_OFF	(HYK_PM_LOG_OFF + 4096)

/* Chunk owners in the chunk table: 0 free, 1 + node id, or metadata. */
#define HYK_PM_OWNER_FREE	0
#define HYK_PM_OWNER_META	0xffff

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

static_assert(sizeof(struct hyk_pm_super) <= HYK_PM_NODES_OFF);
static_assert(sizeof(struct hyk_pm_slot) == HYK_PM_SLOT_SIZE);
static_assert(sizeof(struct hyk_pm_log) <= 4096);

#endif /* _HYK_POOL_META_H */
