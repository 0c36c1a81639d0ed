// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/hyper/hyperN/: not an ABI.
 *
 * regions	every live region of the pool, with its owner and place in
 *		the pool, for administrators chasing who holds the memory.
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

#define HYPER_HOLD_MAX	1024

static struct dentry *hyper_debugfs_root;

/* Pages taken by hold_pages; one set for the whole module is enough. */
static DEFINE_MUTEX(hyper_hold_lock);
static struct page *hyper_held[HYPER_HOLD_MAX];
static unsigned int hyper_nr_held;
static struct hyper_dev *hyper_hold_dev;

static void hyper_hold_release(void)
{
	while (hyper_nr_held)
		__free_page(hyper_held[--hyper_nr_held]);
	hyper_hold_dev = NULL;
}

static int hold_pages_get(void *data, u64 *val)
{
	mutex_lock(&hyper_hold_lock);
	*val = hyper_hold_dev == data ? hyper_nr_held : 0;
	mutex_unlock(&hyper_hold_lock);
	return 0;
}

static int hold_pages_set(void *data, u64 val)
{
	struct hyper_dev *hdev = data;
	int ret = 0;

	if (val > HYPER_HOLD_MAX)
		return -EINVAL;
	mutex_lock(&hyper_hold_lock);
	hyper_hold_release();
	while (hyper_nr_held < val) {
		struct page *page = alloc_pages_node(hdev->pool.nid,
						     GFP_KERNEL | __GFP_THISNODE |
						     __GFP_NOWARN, 0);

		if (!page) {
			hyper_hold_release();
			ret = -ENOMEM;
			break;
		}
		hyper_held[hyper_nr_held++] = page;
		hyper_hold_dev = hdev;
	}
	mutex_unlock(&hyper_hold_lock);
	return ret;
}
DEFINE_DEBUGFS_ATTRIBUTE(hold_pages_fops, hold_pages_get, hold_pages_set,
			 "%llu\n");

static int regions_show(struct seq_file *m, void *v)
{
	struct hyper_dev *hdev = m->private;
	struct hyper_pool *pool = &hdev->pool;
	struct hyper_region *r;

	seq_puts(m, "owner handle pool_offset size flags\n");
	spin_lock(&pool->lock);
	list_for_each_entry(r, &pool->regions, node)
		seq_printf(m, "%d %u %#llx %llu %#x\n", r->owner, r->handle,
			   r->off, r->size, r->flags);
	spin_unlock(&pool->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(regions);

/**
 * hyper_debugfs_add() - create the device's debugfs directory
 * @hdev:	the device
 *
 * debugfs failures are not errors: the device works without it.
 */
void hyper_debugfs_add(struct hyper_dev *hdev)
{
	hdev->debugfs = debugfs_create_dir(dev_name(hdev->dev),
					   hyper_debugfs_root);
	debugfs_create_file("regions", 0400, hdev->debugfs, hdev,
			    &regions_fops);
	debugfs_create_file_unsafe("hold_pages", 0600, hdev->debugfs, hdev,
				   &hold_pages_fops);
}

/**
 * hyper_debugfs_del() - remove the device's debugfs directory
 * @hdev:	the device
 */
void hyper_debugfs_del(struct hyper_dev *hdev)
{
	debugfs_remove_recursive(hdev->debugfs);
	hdev->debugfs = NULL;
	mutex_lock(&hyper_hold_lock);
	if (hyper_hold_dev == hdev)
		hyper_hold_release();
	mutex_unlock(&hyper_hold_lock);
}

/**
 * hyper_debugfs_init() - create /sys/kernel/debug/hyper
 */
void hyper_debugfs_init(void)
{
	hyper_debugfs_root = debugfs_create_dir(HYPER_NAME, NULL);
}

/**
 * hyper_debugfs_exit() - remove /sys/kernel/debug/hyper
 */
void hyper_debugfs_exit(void)
{
	debugfs_remove_recursive(hyper_debugfs_root);
	hyper_debugfs_root = NULL;
}
