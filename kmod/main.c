// SPDX-License-Identifier: GPL-2.0
/*
 * hyperoffload: a supernode's pooled memory as device memory.
 *
 * At load the module finds its pools: the window named by window_start and
 * window_size, or an emulated pool of emulate_size bytes, or else every
 * soft-reserved and legacy-pmem window firmware left for drivers.  Each
 * pool becomes /dev/hyperN.  Anything it cannot use fails the load with a
 * message that says why.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/idr.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/numa.h>
#include <linux/slab.h>

#include "hyper.h"

static unsigned long window_start;
module_param(window_start, ulong, 0444);
MODULE_PARM_DESC(window_start,
		 "Physical start of the pool window (with window_size; default: discover soft-reserved and legacy-pmem windows)");

static unsigned long window_size;
module_param(window_size, ulong, 0444);
MODULE_PARM_DESC(window_size, "Bytes of the pool window at window_start");

static unsigned long emulate_size;
module_param(emulate_size, ulong, 0444);
MODULE_PARM_DESC(emulate_size,
		 "Bytes of an emulated pool taken from RAM, a multiple of 2 MiB (0: use a firmware window)");

static int emulate_node = NUMA_NO_NODE;
module_param(emulate_node, int, 0444);
MODULE_PARM_DESC(emulate_node,
		 "NUMA node the emulated pool's pages come from (-1: local node)");

static LIST_HEAD(hyk_devs);
static DEFINE_IDA(hyk_ida);

static void hyk_dev_destroy(struct hyk_dev *hdev)
{
	list_del(&hdev->list);
	hyk_debugfs_del(hdev);
	hyk_chardev_del(hdev);
	hyk_engine_exit(hdev);
	hyk_pool_destroy(&hdev->pool);
	ida_free(&hyk_ida, hdev->id);
	kfree(hdev);
}

static int hyk_dev_create(phys_addr_t start, u64 size, const char *origin)
{
	struct hyk_dev *hdev;
	int ret;

	hdev = kzalloc(sizeof(*hdev), GFP_KERNEL);
	if (!hdev)
		return -ENOMEM;
	ret = ida_alloc_max(&hyk_ida, HYK_MAX_DEVS - 1, GFP_KERNEL);
	if (ret < 0) {
		pr_err("more than %d pools; %s window at %pa left alone\n",
		       HYK_MAX_DEVS, origin, &start);
		goto out_free;
	}
	hdev->id = ret;
	init_rwsem(&hdev->mode_sem);
	hdev->mode = HYK_MODE_DEVICE;

	if (emulate_size)
		ret = hyk_pool_init_emulated(&hdev->pool, size, emulate_node);
	else
		ret = hyk_pool_init_window(&hdev->pool, start, size, origin);
	if (ret)
		goto out_ida;
	ret = hyk_pm_init(hdev);
	if (ret)
		goto out_pool;
	ret = hyk_engine_init(hdev);
	if (ret)
		goto out_pool;
	ret = hyk_chardev_add(hdev);
	if (ret)
		goto out_engine;
	hyk_debugfs_add(hdev);
	list_add_tail(&hdev->list, &hyk_devs);
	pr_info("hyper%d: %llu MiB %s pool on node %d\n", hdev->id,
		hdev->pool.size >> 20, hdev->pool.origin, hdev->pool.nid);
	return 0;

out_engine:
	hyk_engine_exit(hdev);
out_pool:
	hyk_pool_destroy(&hdev->pool);
out_ida:
	ida_free(&hyk_ida, hdev->id);
out_free:
	kfree(hdev);
	return ret;
}

static int hyk_create_pools(void)
{
	int ret;

	if (emulate_size && (window_start || window_size)) {
		pr_err("emulate_size and window_start/window_size exclude each other\n");
		return -EINVAL;
	}
	if (emulate_size)
		return hyk_dev_create(0, emulate_size, "emulated");
	if (window_start || window_size)
		return hyk_dev_create(window_start, window_size, "parameter");

	ret = hyk_pool_find_windows(hyk_dev_create);
	if (ret)
		return ret;
	if (list_empty(&hyk_devs)) {
		pr_err("no soft-reserved or legacy-pmem window found; reserve one (memmap=) or set window_start/window_size or emulate_size\n");
		return -ENODEV;
	}
	return 0;
}

static void hyk_destroy_pools(void)
{
	struct hyk_dev *hdev, *next;

	list_for_each_entry_safe_reverse(hdev, next, &hyk_devs, list)
		hyk_dev_destroy(hdev);
}

static int __init hyk_init(void)
{
	int ret;

	ret = hyk_numa_init();
	if (ret)
		return ret;
	ret = hyk_chardev_init();
	if (ret)
		goto out_numa;
	hyk_debugfs_init();
	ret = hyk_create_pools();
	if (ret)
		goto out_pools;
	return 0;

out_pools:
	hyk_destroy_pools();
	hyk_debugfs_exit();
	hyk_chardev_exit();
out_numa:
	hyk_numa_exit();
	return ret;
}

static void __exit hyk_exit(void)
{
	hyk_destroy_pools();
	hyk_debugfs_exit();
	hyk_chardev_exit();
	hyk_numa_exit();
}

module_init(hyk_init);
module_exit(hyk_exit);

MODULE_DESCRIPTION("hyperoffload: supernode pool memory as device memory, with an io_uring transfer engine");
MODULE_AUTHOR("hyperoffload developers");
MODULE_LICENSE("GPL");
