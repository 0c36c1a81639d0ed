// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/hyper/hyperN/: not an ABI.
 *
 * regions	every live region of the pool, with its owner and place in
 *		the pool, for administrators chasing who holds the memory.
 * pins		"pinned_pages N" (pool pages referenced beyond the pool and
 *		its mappings: pins, get_user_pages(), pipe buffers) and
 *		"held_bytes N" (freed regions kept out of use until those
 *		references go); reading gives back what is no longer held.
 * superblock	of a pool shared with other nodes (node_id set): the first
 *		4 KiB of the pool as they are in this CPU's cache, for tests
 *		that build a corrupt or foreign superblock from a real one.
 * obj_stall	fault injection, of a pool shared with other nodes: writing
 *		1 makes the next HYPER_IOC_OBJ_PUBLISH stop half way, its
 *		data written back and its record written torn (a bad crc),
 *		and wait until 0 is written or its caller is killed; reads
 *		2 while a PUBLISH waits, its torn record already written.
 *		Tests kill a node there.
 * hold_pages	fault injection: writing N takes N kernel pages on the
 *		pool's node and holds them (0 gives them back).  With the
 *		window onlined for the kernel in system-ram mode, those pages
 *		make it impossible to offline, which is how the tests show
 *		that a failed switch back changes nothing.
 */
#include <linux/debugfs.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "hyper.h"

#define HYK_HOLD_MAX	1024

static struct dentry *hyk_debugfs_root;

/* Pages taken by hold_pages; one set for the whole module is enough. */
static DEFINE_MUTEX(hyk_hold_lock);
static struct page *hyk_held[HYK_HOLD_MAX];
static unsigned int hyk_nr_held;
static struct hyk_dev *hyk_hold_dev;

static void hyk_hold_release(void)
{
	while (hyk_nr_held)
		__free_page(hyk_held[--hyk_nr_held]);
	hyk_hold_dev = NULL;
}

static int hold_pages_get(void *data, u64 *val)
{
	mutex_lock(&hyk_hold_lock);
	*val = hyk_hold_dev == data ? hyk_nr_held : 0;
	mutex_unlock(&hyk_hold_lock);
	return 0;
}

static int hold_pages_set(void *data, u64 val)
{
	struct hyk_dev *hdev = data;
	int ret = 0;

	if (val > HYK_HOLD_MAX)
		return -EINVAL;
	mutex_lock(&hyk_hold_lock);
	hyk_hold_release();
	while (hyk_nr_held < val) {
		struct page *page = alloc_pages_node(hdev->pool.nid,
						     GFP_KERNEL | __GFP_THISNODE |
						     __GFP_NOWARN, 0);

		if (!page) {
			hyk_hold_release();
			ret = -ENOMEM;
			break;
		}
		hyk_held[hyk_nr_held++] = page;
		hyk_hold_dev = hdev;
	}
	mutex_unlock(&hyk_hold_lock);
	return ret;
}
DEFINE_DEBUGFS_ATTRIBUTE(hold_pages_fops, hold_pages_get, hold_pages_set,
			 "%llu\n");

static int obj_stall_get(void *data, u64 *val)
{
	struct hyk_dev *hdev = data;

	*val = hyk_obj_stall_get(&hdev->pool);
	return 0;
}

static int obj_stall_set(void *data, u64 val)
{
	struct hyk_dev *hdev = data;

	return hyk_obj_stall_set(&hdev->pool, val > 1 ? -1 : (int)val);
}
DEFINE_DEBUGFS_ATTRIBUTE(obj_stall_fops, obj_stall_get, obj_stall_set,
			 "%llu\n");

static int regions_show(struct seq_file *m, void *v)
{
	struct hyk_dev *hdev = m->private;
	struct hyk_pool *pool = &hdev->pool;
	struct hyk_region *r;

	seq_puts(m, "owner handle pool_offset size flags\n");
	spin_lock(&pool->lock);
	list_for_each_entry(r, &pool->regions, node)
		seq_printf(m, "%d %u %#llx %llu %#x\n", r->owner, r->handle,
			   r->off, r->size, r->flags);
	spin_unlock(&pool->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(regions);

static int pins_show(struct seq_file *m, void *v)
{
	struct hyk_dev *hdev = m->private;
	u64 pinned, held;

	hyk_pool_pin_stats(&hdev->pool, &pinned, &held);
	seq_printf(m, "pinned_pages %llu\nheld_bytes %llu\n", pinned, held);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pins);

/**
 * hyk_debugfs_add() - create the device's debugfs directory
 * @hdev:	the device
 *
 * debugfs failures are not errors: the device works without it.
 */
void hyk_debugfs_add(struct hyk_dev *hdev)
{
	hdev->debugfs = debugfs_create_dir(dev_name(hdev->dev),
					   hyk_debugfs_root);
	debugfs_create_file("regions", 0400, hdev->debugfs, hdev,
			    &regions_fops);
	debugfs_create_file("pins", 0400, hdev->debugfs, hdev, &pins_fops);
	if (hdev->pool.pm) {
		hdev->superblock.data = hyk_pm_superblock(&hdev->pool);
		hdev->superblock.size = SZ_4K;
		debugfs_create_blob("superblock", 0400, hdev->debugfs,
				    &hdev->superblock);
		debugfs_create_file_unsafe("obj_stall", 0600, hdev->debugfs,
					   hdev, &obj_stall_fops);
	}
	debugfs_create_file_unsafe("hold_pages", 0600, hdev->debugfs, hdev,
				   &hold_pages_fops);
}

/**
 * hyk_debugfs_del() - remove the device's debugfs directory
 * @hdev:	the device
 */
void hyk_debugfs_del(struct hyk_dev *hdev)
{
	debugfs_remove_recursive(hdev->debugfs);
	hdev->debugfs = NULL;
	mutex_lock(&hyk_hold_lock);
	if (hyk_hold_dev == hdev)
		hyk_hold_release();
	mutex_unlock(&hyk_hold_lock);
}

/**
 * hyk_debugfs_init() - create /sys/kernel/debug/hyper
 */
void hyk_debugfs_init(void)
{
	hyk_debugfs_root = debugfs_create_dir(HYK_NAME, NULL);
}

/**
 * hyk_debugfs_exit() - remove /sys/kernel/debug/hyper
 */
void hyk_debugfs_exit(void)
{
	debugfs_remove_recursive(hyk_debugfs_root);
	hyk_debugfs_root = NULL;
}
