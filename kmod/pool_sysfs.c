// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/class/hyper/hyperN/pool/: a pool shared with other nodes, as
 * hyperctl pool sees and drives it (Documentation/supernode.md,
 * Documentation/ABI/testing/sysfs-class-hyper).
 */
#include <linux/device.h>
#include <linux/kstrtox.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "hyper.h"

static struct hyk_pool *to_pool(struct device *dev)
{
	struct hyk_dev *hdev = dev_get_drvdata(dev);

	return &hdev->pool;
}

/* Commands need a node: say so once per write to a standalone pool. */
static int hyk_pm_need(struct device *dev, const char *cmd)
{
	if (to_pool(dev)->pm)
		return 0;
	dev_warn_ratelimited(dev, "pool %s refused: the module was loaded without node_id, the pool is this node's alone\n",
			     cmd);
	return -ENODEV;
}

static ssize_t node_id_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", to_pool(dev)->pm ? hyk_pm_node_id() : -1);
}
static DEVICE_ATTR_RO(node_id);

static ssize_t lease_ms_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%u\n", hyk_pm_lease_ms());
}
static DEVICE_ATTR_RO(lease_ms);

static ssize_t state_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n", hyk_pm_state(to_pool(dev)));
}
static DEVICE_ATTR_RO(state);

static ssize_t uuid_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	u8 uuid[16];

	if (hyk_pm_uuid(to_pool(dev), uuid))
		return sysfs_emit(buf, "\n");
	return sysfs_emit(buf, "%pUb\n", uuid);
}
static DEVICE_ATTR_RO(uuid);

static ssize_t nodes_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct hyk_pool *pool = to_pool(dev);
	struct hyk_pm_report *rep;
	u8 uuid[16];
	ssize_t len = 0;
	unsigned int n;

	if (hyk_pm_uuid(pool, uuid))
		return 0;
	rep = kcalloc(HYK_POOL_MAX_NODES, sizeof(*rep), GFP_KERNEL);
	if (!rep)
		return -ENOMEM;
	hyk_pm_reports(pool, rep);
	for (n = 0; n < HYK_POOL_MAX_NODES; n++)
		if (rep[n].state)
			len += sysfs_emit_at(buf, len, "%u %s %lld %llu %llu\n",
					     n, rep[n].state,
					     rep[n].lease_age_ms, rep[n].held,
					     rep[n].gen);
	kfree(rep);
	return len;
}
static DEVICE_ATTR_RO(nodes);

/*
 * objects: one line per object, "NAME STATE SIZE NODE REFS".  Binary, as
 * a full table is more than a page; each read formats it afresh.
 */
static ssize_t objects_read(struct file *file, struct kobject *kobj,
			    struct bin_attribute *attr, char *buf, loff_t off,
			    size_t count)
{
	struct device *dev = kobj_to_dev(kobj);
	size_t size = HYK_OBJ_LIST_MAX;
	ssize_t len;
	char *text;

	text = kvmalloc(size, GFP_KERNEL);
	if (!text)
		return -ENOMEM;
	len = hyk_obj_list(to_pool(dev), text, size);
	if (off >= len) {
		len = 0;
	} else {
		len = min_t(size_t, count, len - off);
		memcpy(buf, text + off, len);
	}
	kvfree(text);
	return len;
}
static BIN_ATTR_RO(objects, 0);

static struct bin_attribute *hyk_pm_bin_attrs[] = {
	&bin_attr_objects,
	NULL,
};

static ssize_t format_store(struct device *dev, struct device_attribute *attr,
			    const char *buf, size_t len)
{
	bool force = sysfs_streq(buf, "force");
	int ret = hyk_pm_need(dev, "format");

	if (ret)
		return ret;
	if (!force && !sysfs_streq(buf, "1")) {
		dev_warn_ratelimited(dev, "pool/format: write 1, or force to erase a format\n");
		return -EINVAL;
	}
	ret = hyk_pm_format(to_pool(dev), force);
	return ret ?: len;
}
static DEVICE_ATTR_WO(format);

/* join and leave: "1" runs @fn on the pool. */
static ssize_t hyk_pm_run(struct device *dev, const char *buf, size_t len,
			  const char *cmd, int (*fn)(struct hyk_pool *pool))
{
	int ret = hyk_pm_need(dev, cmd);

	if (ret)
		return ret;
	if (!sysfs_streq(buf, "1")) {
		dev_warn_ratelimited(dev, "pool/%s: write 1\n", cmd);
		return -EINVAL;
	}
	ret = fn(to_pool(dev));
	return ret ?: len;
}

static ssize_t join_store(struct device *dev, struct device_attribute *attr,
			  const char *buf, size_t len)
{
	return hyk_pm_run(dev, buf, len, "join", hyk_pm_join);
}
static DEVICE_ATTR_WO(join);

static ssize_t leave_store(struct device *dev, struct device_attribute *attr,
			   const char *buf, size_t len)
{
	return hyk_pm_run(dev, buf, len, "leave", hyk_pm_leave);
}
static DEVICE_ATTR_WO(leave);

/* "N" or "N force". */
static ssize_t fence_store(struct device *dev, struct device_attribute *attr,
			   const char *buf, size_t len)
{
	char word[16];
	unsigned int victim;
	bool force = false;
	size_t n = strcspn(buf, "\n ");
	int ret = hyk_pm_need(dev, "fence");

	if (ret)
		return ret;
	if (n && n < sizeof(word)) {
		memcpy(word, buf, n);
		word[n] = '\0';
		ret = kstrtouint(word, 10, &victim);
		if (buf[n] == ' ') {
			force = sysfs_streq(buf + n + 1, "force");
			if (!force)
				ret = -EINVAL;
		}
	} else {
		ret = -EINVAL;
	}
	if (ret || victim >= HYK_POOL_MAX_NODES) {
		dev_warn_ratelimited(dev, "pool/fence: write a node id from 0 to %d, then optionally ' force'\n",
				     HYK_POOL_MAX_NODES - 1);
		return -EINVAL;
	}
	ret = hyk_pm_fence(to_pool(dev), victim, force);
	return ret ?: len;
}
static DEVICE_ATTR_WO(fence);

static struct attribute *hyk_pm_attrs[] = {
	&dev_attr_node_id.attr,
	&dev_attr_lease_ms.attr,
	&dev_attr_state.attr,
	&dev_attr_uuid.attr,
	&dev_attr_nodes.attr,
	&dev_attr_format.attr,
	&dev_attr_join.attr,
	&dev_attr_leave.attr,
	&dev_attr_fence.attr,
	NULL,
};

const struct attribute_group hyk_pm_group = {
	.name = "pool",
	.attrs = hyk_pm_attrs,
	.bin_attrs = hyk_pm_bin_attrs,
};
