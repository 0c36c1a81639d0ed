// SPDX-License-Identifier: GPL-2.0
/*
 * System-RAM mode: a firmware window hot-added as memory of its CPU-less
 * node, in a memory tier below DRAM, the way drivers/dax/kmem.c onlines
 * CXL memory.  Then numactl and libnuma place pages there, and demotion
 * can use it.
 *
 * As with daxctl, the kernel only adds the memory blocks; onlining them
 * (hyperctl does, as online_movable so that they can be taken back) is
 * policy and belongs to userspace or to the auto-online setting.  Going
 * back to device mode offlines and removes the blocks, or fails with
 * nothing changed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ioport.h>
#include <linux/memory.h>
#include <linux/memory-tiers.h>
#include <linux/memory_hotplug.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "compat.h"
#include "hyper.h"

static int adistance = MEMTIER_ADISTANCE_DRAM * 5;
module_param(adistance, int, 0444);
MODULE_PARM_DESC(adistance,
		 "Abstract distance of a window's node in system-ram mode; DRAM is 576, larger is a slower tier (default: 5 x DRAM, as dax/kmem)");

/*
 * The name of the hot-added resource must outlive it.  It is static, so
 * the module stays loaded (a reference is held) while any window is
 * System RAM: unloading would leave /proc/iomem pointing at freed text.
 */
static const char hyk_ram_name[] = "System RAM (hyper)";
static struct memory_dev_type *hyk_memtype;

/*
 * Take the window back for device use.  Should that fail (someone else
 * claimed the range in between), the device stays in device mode but
 * refuses regions (-EIO) until writing "device" again reclaims it.
 */
static void hyk_reclaim(struct hyk_dev *hdev)
{
	int ret = hyk_pool_claim_window(&hdev->pool);

	if (ret)
		dev_err(hdev->dev, "mode: could not reclaim the window (%d); write 'device' to mode to retry\n",
			ret);
	else
		dev_info(hdev->dev, "window is a device\n");
}

static int hyk_to_system_ram(struct hyk_dev *hdev)
{
	struct hyk_pool *pool = &hdev->pool;
	u64 block = memory_block_size_bytes();
	phys_addr_t start = pool->phys_base;
	int inflight = atomic_read(&hdev->engine.inflight);
	int nr = atomic_read(&pool->nr_regions);
	struct resource *res;
	int ret, mgid;

	/*
	 * Transfers first: a request holds its regions until it ends, so
	 * freeing them does not help while it runs.
	 */
	if (inflight) {
		dev_warn(hdev->dev, "mode: %d transfer requests in flight; wait for them to complete\n",
			 inflight);
		return -EBUSY;
	}
	if (nr) {
		dev_warn(hdev->dev, "mode: %d regions still exist (handles, mappings or transfers hold them); free them first\n",
			 nr);
		return -EBUSY;
	}
	if (pool->nid == NUMA_NO_NODE) {
		dev_warn(hdev->dev, "mode: the window has no NUMA node\n");
		return -EINVAL;
	}
	if (!IS_ALIGNED(start, block) || !IS_ALIGNED(pool->size, block)) {
		dev_warn(hdev->dev, "mode: window %pa+%#llx is not aligned to the %llu-byte memory block\n",
			 &start, pool->size, block);
		return -EINVAL;
	}
	/*
	 * Held while the window is System RAM.  try_module_get(), not
	 * __module_get(): an rmmod already under way must win, or it would
	 * free the resource names the hot-added memory still points at.
	 */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	/* The tier is the node's: a node with RAM already keeps DRAM's. */
	if (node_state(pool->nid, N_MEMORY))
		dev_warn(hdev->dev, "mode: node %d already has memory; the window joins its memory tier, not a slower one\n",
			 pool->nid);

	hyk_pool_release_window(pool);
	init_node_memory_type(pool->nid, hyk_memtype);
	mgid = memory_group_register_static(pool->nid, PFN_UP(pool->size));
	if (mgid < 0) {
		ret = mgid;
		goto out_type;
	}
	res = request_mem_region(start, pool->size, dev_name(hdev->dev));
	if (!res) {
		ret = -EBUSY;
		goto out_group;
	}
	/* Not busy, so that the memory's own "System RAM" nests inside. */
	res->flags = IORESOURCE_SYSTEM_RAM;
	ret = add_memory_driver_managed(mgid, start, pool->size,
					hyk_ram_name, MHP_NID_IS_MGID);
	if (ret) {
		remove_resource(res);
		kfree(res);
		goto out_group;
	}
	hdev->ram_res = res;
	hdev->mgid = mgid;
	WRITE_ONCE(hdev->mode, HYK_MODE_SYSTEM_RAM);
	dev_info(hdev->dev, "%llu MiB added as System RAM on node %d\n",
		 pool->size >> 20, pool->nid);
	return 0;

out_group:
	memory_group_unregister(mgid);
out_type:
	clear_node_memory_type(pool->nid, hyk_memtype);
	dev_warn(hdev->dev, "mode: hot-add failed (%d); staying a device\n",
		 ret);
	module_put(THIS_MODULE);
	hyk_reclaim(hdev);
	return ret;
}

static int hyk_to_device(struct hyk_dev *hdev)
{
	struct hyk_pool *pool = &hdev->pool;
	int ret;

	/* Offlines every block, or puts back what it offlined and fails. */
	ret = offline_and_remove_memory(pool->phys_base, pool->size);
	if (ret) {
		dev_warn(hdev->dev, "mode: window memory cannot be offlined (%d); still System RAM\n",
			 ret);
		return ret;
	}
	/* Our claim was made non-busy for add_memory: remove it by hand. */
	remove_resource(hdev->ram_res);
	kfree(hdev->ram_res);
	hdev->ram_res = NULL;
	memory_group_unregister(hdev->mgid);
	clear_node_memory_type(pool->nid, hyk_memtype);
	WRITE_ONCE(hdev->mode, HYK_MODE_DEVICE);
	module_put(THIS_MODULE);
	/* The switch is done; a failed reclaim is reported, and retried. */
	hyk_reclaim(hdev);
	return 0;
}

/**
 * hyk_mode_set() - switch a window between device and system-ram mode
 * @hdev:	the device
 * @mode:	the mode wanted
 *
 * Return: 0 (also when already in @mode), -EOPNOTSUPP for an emulated
 * pool or one shared with other nodes, -EBUSY while regions exist, while
 * the memory cannot be offlined,
 * or when the window went back to device mode but could not be reclaimed
 * (the mode did change then; writing "device" again retries), -EINVAL for
 * a window with no node or not block aligned, -ENODEV while the module
 * is being unloaded, -EINTR when the caller was killed while it waited
 * for a region being made, or what memory hotplug returned; otherwise, on
 * error the mode is unchanged.
 */
int hyk_mode_set(struct hyk_dev *hdev, enum hyk_mode mode)
{
	int ret = 0;

	if (hdev->pool.source != HYPER_SOURCE_WINDOW)
		return -EOPNOTSUPP;
	/* Onlining a pool other nodes share would hand their memory out. */
	if (hdev->pool.pm) {
		dev_warn(hdev->dev, "mode refused: the pool is shared with other nodes (node_id is set)\n");
		return -EOPNOTSUPP;
	}
	/* An ALLOC zeroing a large region holds the read side for long. */
	if (down_write_killable(&hdev->mode_sem))
		return -EINTR;
	if (mode != hdev->mode)
		ret = mode == HYK_MODE_SYSTEM_RAM ?
		      hyk_to_system_ram(hdev) : hyk_to_device(hdev);
	else if (mode == HYK_MODE_DEVICE && !hyk_pool_usable(&hdev->pool))
		hyk_reclaim(hdev);
	if (!ret && mode == HYK_MODE_DEVICE && !hyk_pool_usable(&hdev->pool))
		ret = -EBUSY;
	up_write(&hdev->mode_sem);
	return ret;
}

/**
 * hyk_numa_adistance() - the abstract distance windows are given
 *
 * Return: the adistance module parameter.
 */
int hyk_numa_adistance(void)
{
	return adistance;
}

/**
 * hyk_numa_init() - make the memory type of hot-added windows
 *
 * Return: 0, or -EINVAL for a bad adistance, or -ENOMEM.
 */
int hyk_numa_init(void)
{
	if (adistance <= 0) {
		pr_err("adistance %d must be positive\n", adistance);
		return -EINVAL;
	}
	hyk_memtype = alloc_memory_type(adistance);
	return PTR_ERR_OR_ZERO(hyk_memtype);
}

/**
 * hyk_numa_exit() - drop the memory type; no window is System RAM
 */
void hyk_numa_exit(void)
{
	hyk_put_memory_type(hyk_memtype);
}
