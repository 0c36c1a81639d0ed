/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hyperoffload: definitions shared by the files of hyper.ko.
 */
#ifndef _HYK_INTERNAL_H
#define _HYK_INTERNAL_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/cdev.h>
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <uapi/linux/hyper.h>

#define HYK_NAME		"hyper"
#define HYK_MAX_DEVS		16
#define HYK_HUGE_ALIGN		SZ_2M
/* An emulated pool is built from chunks of this size, one allocation each. */
#define HYK_EMU_CHUNK		SZ_2M
/*
 * A window gets struct pages (ZONE_DEVICE) in pieces of this size, aligned
 * to it physically, when a region first uses the piece.  The window must be
 * aligned to HYK_WINDOW_ALIGN, the subsection memremap_pages() works in.
 */
#define HYK_PGMAP_SHIFT		30
#define HYK_WINDOW_ALIGN	SZ_2M

/*
 * A region's mmap offset is its handle shifted by this much, so each region
 * owns a 16 TiB slice of the file's offset space and off_t stays positive.
 */
#define HYK_MMAP_SHIFT		44
/*
 * Largest region, one page short of that slice: genalloc passes a range's
 * page count to its search as an unsigned int, so 2^32 pages (16 TiB)
 * would become 0 and its search would never end.
 */
#define HYK_REGION_MAX_PAGES	((u64)UINT_MAX)
#define HYK_REGION_MAX		(HYK_REGION_MAX_PAGES << PAGE_SHIFT)
static_assert(BIT_ULL(HYK_MMAP_SHIFT) >= HYK_REGION_MAX);
#define HYK_HANDLE_MAX		((1U << (63 - HYK_MMAP_SHIFT)) - 1)

/* Nodes that can share one pool: node_id is below this. */
#define HYK_POOL_MAX_NODES	32

struct dma_chan;
struct gen_pool;
struct hyk_pmeta;
struct io_uring_cmd;
struct page;
struct resource;
struct workqueue_struct;

/* How a firmware window is used; an emulated pool is always a device. */
enum hyk_mode {
	HYK_MODE_DEVICE,
	HYK_MODE_SYSTEM_RAM,
};

/* Latency histogram buckets: bucket b counts requests of < 2^b ns. */
#define HYK_LAT_BUCKETS		40

enum hyk_stat_dir {
	HYK_STAT_PREFETCH,
	HYK_STAT_STORE,
	HYK_STAT_DIRS,
};

/**
 * struct hyk_stats - transfer counters of one device, reset together
 * @bytes:	bytes moved by successful requests, per direction
 * @ops:	descriptors of successful requests, per direction
 * @requests:	requests (SQEs) completed, successful or not
 * @errors:	requests completed with an error
 * @latency:	log2 histogram of submit-to-completion time
 */
struct hyk_stats {
	atomic64_t bytes[HYK_STAT_DIRS];
	atomic64_t ops[HYK_STAT_DIRS];
	atomic64_t requests;
	atomic64_t errors;
	atomic64_t latency[HYK_LAT_BUCKETS];
};

/**
 * struct hyk_engine - the transfer engine of one device
 * @wq:		workers that copy chunks; max_active is @workers
 * @dma:	DMA_MEMCPY channel, NULL when the CPU copies
 * @dma_aborts:	times @dma was terminated after a copy timed out
 * @workers:	most workers one request is split across (tunable)
 * @chunk_size:	bytes a worker copies at a time (tunable)
 * @queue_depth: most requests queued to workers at once (tunable)
 * @inline_bytes: requests this small are copied in the submitter (tunable)
 * @inflight:	requests queued to workers and not yet completed
 * @wait:	where submitters wait for @inflight to fall below the depth
 * @stats:	counters
 */
struct hyk_engine {
	struct workqueue_struct *wq;
	struct dma_chan *dma;
	atomic_t dma_aborts;
	unsigned int workers;
	unsigned int chunk_size;
	unsigned int queue_depth;
	unsigned int inline_bytes;
	atomic_t inflight;
	wait_queue_head_t wait;
	struct hyk_stats stats;
};

/**
 * struct hyk_pool - the memory behind one /dev/hyperN
 * @source:	HYPER_SOURCE_WINDOW or HYPER_SOURCE_EMULATED
 * @origin:	how the memory was found, for sysfs and logs
 * @phys_base:	first physical address of a window, 0 if emulated
 * @size:	bytes
 * @nid:	NUMA node of the memory, NUMA_NO_NODE if unknown
 * @res:	the claimed window in iomem_resource
 * @vaddr:	kernel mapping of a window
 * @chunks:	pages of an emulated pool, HYK_EMU_CHUNK bytes each
 * @nr_chunks:	entries in @chunks
 * @gp:		allocator of regions; addresses are @gp_base + pool offset
 * @gp_base:	allocator address of pool offset 0
 * @used:	bytes handed out to regions that still exist
 * @nr_regions:	regions that still exist, all openers, counting freed ones
 *		whose pages are still pinned (on @held)
 * @lock:	protects @regions
 * @regions:	every region that still exists, for debugfs
 * @pgmaps:	of a window: granule (physical address >> HYK_PGMAP_SHIFT) ->
 *		its struct dev_pagemap, for the granules regions have used
 * @pgmap_lock:	serializes adding to and tearing down @pgmaps
 * @held_lock:	protects @held
 * @held:	ranges of freed regions whose pages something outside the
 *		module still references (a pin, get_user_pages(), a pipe):
 *		they are not reused until it lets go
 * @sweep:	retries @held every second while it is not empty
 * @pm:		of a pool shared with other nodes (node_id set), its
 *		metadata and this node's place in it; NULL when standalone
 */
struct hyk_pool {
	enum hyper_pool_source source;
	const char *origin;
	phys_addr_t phys_base;
	u64 size;
	int nid;
	struct resource *res;
	void *vaddr;
	struct page **chunks;
	unsigned int nr_chunks;
	struct gen_pool *gp;
	unsigned long gp_base;
	atomic64_t used;
	atomic_t nr_regions;
	spinlock_t lock;		/* protects @regions */
	struct list_head regions;
	struct xarray pgmaps;
	struct mutex pgmap_lock;	/* serializes changes to @pgmaps */
	struct mutex held_lock;		/* protects @held */
	struct list_head held;
	struct delayed_work sweep;
	struct hyk_pmeta *pm;
};

/**
 * struct hyk_dev - one pool device
 * @list:	entry in the module's device list
 * @id:		N of /dev/hyperN
 * @dev:	the class device; its drvdata is this structure
 * @cdev:	the character device
 * @debugfs:	its directory under /sys/kernel/debug/hyper/
 * @superblock:	its debugfs superblock file, of a shared pool
 * @mode_sem:	held for writing while @mode changes, for reading while
 *		regions are made (which only device mode allows)
 * @mode:	device or system-ram
 * @ram_res:	in system-ram mode, our claim on the window
 * @mgid:	in system-ram mode, the memory group of the window
 * @pool:	the memory
 * @engine:	the transfer engine
 */
struct hyk_dev {
	struct list_head list;
	int id;
	struct device *dev;
	struct cdev cdev;
	struct dentry *debugfs;
	struct debugfs_blob_wrapper superblock;
	struct rw_semaphore mode_sem;
	enum hyk_mode mode;
	struct resource *ram_res;
	int mgid;
	struct hyk_pool pool;
	struct hyk_engine engine;
};

/**
 * struct hyk_region - a piece of pool memory owned by one open file
 * @ref:	held by the handle table, by every VMA and by every transfer
 * @rcu:	lets lookups run under rcu_read_lock()
 * @node:	entry in the pool's @regions
 * @owner:	thread group that allocated it, for debugfs
 * @hdev:	the device the memory belongs to
 * @off:	pool offset of the first byte
 * @size:	bytes
 * @flags:	HYPER_ALLOC_* flags it was made with
 * @handle:	its handle in the owner's table
 * @obj:	of a shared object's handle, the object; NULL for a region
 *		that owns its memory
 */
struct hyk_region {
	struct kref ref;
	struct rcu_head rcu;
	struct list_head node;
	pid_t owner;
	struct hyk_dev *hdev;
	u64 off;
	u64 size;
	u32 flags;
	u32 handle;
	struct hyk_obj *obj;
};

/**
 * struct hyk_obj - what a handle of a shared object knows of it
 * @slot:	its entry in the pool's object table
 * @node:	the node that created it
 * @opened:	the handle came from HYPER_IOC_OBJ_OPEN, not CREATE
 * @lock:	protects the fields below (held briefly: mmap() takes it)
 * @rdonly:	opened, or published: no store, no writable mapping
 * @publishing:	a PUBLISH of it runs; @rdonly is set meanwhile
 * @wmaps:	mappings that may write (VM_MAYWRITE)
 * @wmapped:	it was ever mapped writable: PUBLISH flushes it all
 * @stores:	stores into it in flight, which PUBLISH waits for
 *
 * A handle holds one of its node's references to the object, which the
 * region's release drops; its memory belongs to the object, not to the
 * region.
 */
struct hyk_obj {
	u32 slot;
	u32 node;
	bool opened;
	struct mutex lock;		/* see above */
	bool rdonly;
	bool publishing;
	unsigned int wmaps;
	bool wmapped;
	atomic_t stores;
};

/**
 * struct hyk_file - per-open state of /dev/hyperN
 * @hdev:	the device opened
 * @regions:	handle -> struct hyk_region, owned by this file
 * @nr_regions:	entries in @regions
 * @next_handle: where the cyclic search for a free handle starts
 * @parked_lock: protects @parked
 * @parked:	copies of commands that answered -EAGAIN, for their retry
 *		(struct hyk_cmd_copy, uring.c); a command io_uring canceled
 *		before its retry leaves its copy here until the file goes
 */
struct hyk_file {
	struct hyk_dev *hdev;
	struct xarray regions;
	atomic_t nr_regions;
	u32 next_handle;
	spinlock_t parked_lock;		/* protects @parked */
	struct list_head parked;
};

/* pool.c */
int hyk_pool_init_window(struct hyk_pool *pool, phys_addr_t start,
			 u64 size, const char *origin);
int hyk_pool_init_emulated(struct hyk_pool *pool, u64 size, int nid);
int hyk_pool_claim_window(struct hyk_pool *pool);
void hyk_pool_release_window(struct hyk_pool *pool);
bool hyk_pool_usable(const struct hyk_pool *pool);
void hyk_pool_destroy(struct hyk_pool *pool);
int hyk_pool_find_windows(int (*found)(phys_addr_t start, u64 size,
				       const char *origin));
u64 hyk_pool_span(const struct hyk_pool *pool, u64 off, void **vaddr,
		  phys_addr_t *phys);
int hyk_pool_alloc(struct hyk_pool *pool, u64 size, u64 align, u64 *off);
void hyk_pool_free(struct hyk_pool *pool, u64 off, u64 size);
u64 hyk_pool_free_bytes(struct hyk_pool *pool);
struct page *hyk_pool_page(const struct hyk_pool *pool, u64 off);
void hyk_pool_sweep(struct hyk_pool *pool);
bool hyk_pool_referenced(struct hyk_pool *pool, u64 off, u64 size,
			 bool skip_maps);
void hyk_pool_hold(struct hyk_pool *pool, u64 off, u64 size,
		   struct hyk_obj *obj);
int hyk_pool_add_pages(struct hyk_pool *pool, u64 off, u64 size);
void hyk_pool_pin_stats(struct hyk_pool *pool, u64 *pinned_pages,
			u64 *held_bytes);

/* pool_meta.c */
int hyk_pm_init(struct hyk_dev *hdev);
void hyk_pm_destroy(struct hyk_pool *pool);
int hyk_pm_alloc(struct hyk_pool *pool, u64 size, u64 align,
		 unsigned long *addr);
u64 hyk_pm_free_bytes(struct hyk_pool *pool);
int hyk_pm_format(struct hyk_pool *pool, bool force);
int hyk_pm_join(struct hyk_pool *pool);
int hyk_pm_leave(struct hyk_pool *pool);
int hyk_pm_fence(struct hyk_pool *pool, unsigned int victim, bool force);

/**
 * struct hyk_pm_report - a node's place in the pool, for sysfs
 * @state:	NULL for a slot never used, else "joined", "left",
 *		"dead", "fenced" or "torn"
 * @lease_age_ms: since its heartbeat was last seen to move, -1 unknown
 * @held:	bytes of chunks it owns
 * @gen:	its incarnation
 */
struct hyk_pm_report {
	const char *state;
	s64 lease_age_ms;
	u64 held;
	u64 gen;
};

const char *hyk_pm_state(struct hyk_pool *pool);
int hyk_pm_node_id(void);
unsigned int hyk_pm_lease_ms(void);
int hyk_pm_uuid(struct hyk_pool *pool, u8 uuid[16]);
void hyk_pm_reports(struct hyk_pool *pool,
		    struct hyk_pm_report rep[HYK_POOL_MAX_NODES]);
void hyk_pm_usage(struct hyk_pool *pool, u64 *pool_used, u64 *node_held);
void *hyk_pm_superblock(struct hyk_pool *pool);

/* pool_obj.c; hyk_obj_list() writes at most this much */
#define HYK_OBJ_LIST_MAX	(256 * 160)
int hyk_obj_create(struct hyk_dev *hdev, const char *name, u64 size,
		   struct hyk_region **rp);
int hyk_obj_publish(struct hyk_region *r);
int hyk_obj_open(struct hyk_dev *hdev, const char *name,
		 struct hyk_region **rp);
int hyk_obj_delete(struct hyk_dev *hdev, const char *name);
void hyk_obj_drop(struct hyk_region *r);
void hyk_obj_put(struct hyk_pmeta *pm, struct hyk_obj *obj);
int hyk_obj_mmap(struct hyk_region *r, struct vm_area_struct *vma);
void hyk_obj_vma_open(struct hyk_region *r, struct vm_area_struct *vma);
void hyk_obj_vma_close(struct hyk_region *r, struct vm_area_struct *vma);
int hyk_obj_store_begin(struct hyk_region *r);
void hyk_obj_store_end(struct hyk_region *r);
ssize_t hyk_obj_list(struct hyk_pool *pool, char *buf, size_t len);
int hyk_obj_stall_get(struct hyk_pool *pool);
int hyk_obj_stall_set(struct hyk_pool *pool, int val);

/* pool_sysfs.c */
extern const struct attribute_group hyk_pm_group;

/* region.c */
struct hyk_region *hyk_region_create(struct hyk_dev *hdev, u64 size,
				     u32 flags);
struct hyk_region *hyk_region_lookup(struct hyk_file *hf, u32 handle);
void hyk_region_put(struct hyk_region *r);
void hyk_region_get(struct hyk_region *r);
void hyk_region_flush(struct hyk_region *r, u64 off, u64 len);
struct hyk_region *hyk_region_wrap(struct hyk_dev *hdev, u64 off, u64 size,
				   struct hyk_obj *obj, bool zero);

/* chardev.c */
int hyk_chardev_init(void);
void hyk_chardev_exit(void);
int hyk_chardev_add(struct hyk_dev *hdev);
void hyk_chardev_del(struct hyk_dev *hdev);

/* xfer.c */
int hyk_engine_init(struct hyk_dev *hdev);
void hyk_engine_exit(struct hyk_dev *hdev);
int hyk_engine_set_workers(struct hyk_engine *eng, unsigned int workers);
int hyk_xfer_submit(struct hyk_file *hf, struct io_uring_cmd *cmd,
		    const struct hyper_xfer *descs, u32 n,
		    unsigned int issue_flags, u64 start_ns);
void hyk_xfer_refused(struct hyk_engine *eng, int ret, u64 start_ns);

/* uring.c */
int hyk_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);
void hyk_uring_file_init(struct hyk_file *hf);
void hyk_uring_file_release(struct hyk_file *hf);
void hyk_xfer_cancel(struct io_uring_cmd *cmd);

/* numa.c */
int hyk_numa_init(void);
void hyk_numa_exit(void);
int hyk_mode_set(struct hyk_dev *hdev, enum hyk_mode mode);
int hyk_numa_adistance(void);

/* debugfs.c */
void hyk_debugfs_init(void);
void hyk_debugfs_exit(void);
void hyk_debugfs_add(struct hyk_dev *hdev);
void hyk_debugfs_del(struct hyk_dev *hdev);

/* sysfs.c, engine_sysfs.c */
extern const struct attribute_group *hyk_dev_groups[];
extern const struct attribute_group hyk_engine_group;
extern const struct attribute_group hyk_stats_group;

#endif /* _HYK_INTERNAL_H */
