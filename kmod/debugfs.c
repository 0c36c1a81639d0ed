// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/hyper/hyperN/regions: every live region of a pool,
 * with its owner and place in the pool.  For administrators chasing who
 * holds the memory; not an ABI.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "hyper.h"

static struct dentry *hyper_debugfs_root;

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
}

/**
 * hyper_debugfs_del() - remove the device's debugfs directory
 * @hdev:	the device
 */
void hyper_debugfs_del(struct hyper_dev *hdev)
{
	debugfs_remove_recursive(hdev->debugfs);
	hdev->debugfs = NULL;
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
