// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/class/hyper/hyperN/: one value per file, documented in
 * Documentation/ABI/testing/sysfs-class-hyper.
 */
#include <linux/device.h>
#include <linux/sysfs.h>

#include "hyper.h"

static struct hyk_pool *to_pool(struct device *dev)
{
	struct hyk_dev *hdev = dev_get_drvdata(dev);

	return &hdev->pool;
}

static ssize_t source_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  to_pool(dev)->source == HYPER_SOURCE_WINDOW ?
			  "window" : "emulated");
}
static DEVICE_ATTR_RO(source);

static ssize_t origin_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", to_pool(dev)->origin);
}
static DEVICE_ATTR_RO(origin);

/* Physical addresses are for the administrator only, as in /proc/iomem. */
static ssize_t phys_base_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%#llx\n", (u64)to_pool(dev)->phys_base);
}
static DEVICE_ATTR_ADMIN_RO(phys_base);

static ssize_t size_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%llu\n", to_pool(dev)->size);
}
static DEVICE_ATTR_RO(size);

/*
 * The whole pool's bytes in use and this node's: the same when the pool is
 * this node's alone; when shared, the pool's count whole chunks any node
 * (or the metadata) holds, this node's count its regions and its chunks.
 */
static void hyk_usage(struct hyk_pool *pool, u64 *used, u64 *node_used,
		      u64 *node_held)
{
	*node_used = atomic64_read(&pool->used);
	if (!pool->pm) {
		*used = *node_used;
		*node_held = pool->size;
		return;
	}
	hyk_pm_usage(pool, used, node_held);
}

static ssize_t used_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	u64 used, node_used, node_held;

	hyk_usage(to_pool(dev), &used, &node_used, &node_held);
	return sysfs_emit(buf, "%llu\n", used);
}
static DEVICE_ATTR_RO(used);

static ssize_t free_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	u64 used, node_used, node_held;

	hyk_usage(to_pool(dev), &used, &node_used, &node_held);
	return sysfs_emit(buf, "%llu\n", to_pool(dev)->size - used);
}
static DEVICE_ATTR_RO(free);

static ssize_t node_used_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&to_pool(dev)->used));
}
static DEVICE_ATTR_RO(node_used);

static ssize_t node_free_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	u64 used, node_used, node_held;

	hyk_usage(to_pool(dev), &used, &node_used, &node_held);
	return sysfs_emit(buf, "%llu\n",
			  node_held > node_used ? node_held - node_used : 0);
}
static DEVICE_ATTR_RO(node_free);

static ssize_t nr_regions_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&to_pool(dev)->nr_regions));
}
static DEVICE_ATTR_RO(nr_regions);

static ssize_t numa_node_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", to_pool(dev)->nid);
}
static DEVICE_ATTR_RO(numa_node);

static const char * const hyk_mode_names[] = {
	[HYK_MODE_DEVICE] = "device",
	[HYK_MODE_SYSTEM_RAM] = "system-ram",
};

static ssize_t mode_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	struct hyk_dev *hdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n", hyk_mode_names[READ_ONCE(hdev->mode)]);
}

static ssize_t mode_store(struct device *dev, struct device_attribute *attr,
			  const char *buf, size_t len)
{
	int mode = sysfs_match_string(hyk_mode_names, buf);
	int ret;

	if (mode < 0) {
		dev_warn_ratelimited(dev, "mode: '%.*s' refused: want device or system-ram\n",
				     (int)strcspn(buf, "\n"), buf);
		return -EINVAL;
	}
	ret = hyk_mode_set(dev_get_drvdata(dev), mode);
	return ret ?: len;
}
static DEVICE_ATTR_RW(mode);

static ssize_t memory_tier_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", hyk_numa_adistance());
}
static DEVICE_ATTR_RO(memory_tier);

static struct attribute *hyk_pool_attrs[] = {
	&dev_attr_source.attr,
	&dev_attr_origin.attr,
	&dev_attr_phys_base.attr,
	&dev_attr_size.attr,
	&dev_attr_used.attr,
	&dev_attr_free.attr,
	&dev_attr_node_used.attr,
	&dev_attr_node_free.attr,
	&dev_attr_nr_regions.attr,
	&dev_attr_numa_node.attr,
	&dev_attr_mode.attr,
	&dev_attr_memory_tier.attr,
	NULL,
};

static const struct attribute_group hyk_pool_group = {
	.attrs = hyk_pool_attrs,
};

const struct attribute_group *hyk_dev_groups[] = {
	&hyk_pool_group,
	&hyk_engine_group,
	&hyk_stats_group,
	&hyk_pm_group,
	NULL,
};
