// SPDX-License-Identifier: GPL-2.0
/*
 * Transfer-engine tunables and statistics in /sys/class/hyper/hyperN/ and
 * its stats/ directory; documented in
 * Documentation/ABI/testing/sysfs-class-hyper.
 *
 * A tunable takes effect for requests submitted after the write.  A value
 * out of range is refused with -EINVAL, the old value stays, and the
 * reason goes to the kernel log.
 */
#include <linux/device.h>
#include <linux/dmaengine.h>
#include <linux/log2.h>
#include <linux/sysfs.h>

#include "hyper.h"

static struct hyk_engine *to_engine(struct device *dev)
{
	struct hyk_dev *hdev = dev_get_drvdata(dev);

	return &hdev->engine;
}

static int hyk_parse_uint(struct device *dev, const char *attr,
			  const char *buf, unsigned int min,
			  unsigned int max, unsigned int *val)
{
	/* Base 10, as other drivers' tunables: "010" is ten, not eight. */
	if (kstrtouint(buf, 10, val) || *val < min || *val > max) {
		dev_warn_ratelimited(dev, "%s: '%.*s' refused: want decimal %u..%u\n",
				     attr, (int)strcspn(buf, "\n"), buf, min,
				     max);
		return -EINVAL;
	}
	return 0;
}

static ssize_t workers_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_engine(dev)->workers));
}

static ssize_t workers_store(struct device *dev, struct device_attribute *attr,
			     const char *buf, size_t len)
{
	unsigned int val;
	int ret;

	ret = hyk_parse_uint(dev, attr->attr.name, buf, HYPER_WORKERS_MIN,
			     HYPER_WORKERS_MAX, &val);
	if (!ret)
		ret = hyk_engine_set_workers(to_engine(dev), val);
	return ret ?: len;
}
static DEVICE_ATTR_RW(workers);

static ssize_t chunk_size_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_engine(dev)->chunk_size));
}

static ssize_t chunk_size_store(struct device *dev,
				struct device_attribute *attr,
				const char *buf, size_t len)
{
	unsigned int val;
	int ret;

	ret = hyk_parse_uint(dev, attr->attr.name, buf, HYPER_CHUNK_SIZE_MIN,
			     HYPER_CHUNK_SIZE_MAX, &val);
	if (!ret && !is_power_of_2(val)) {
		dev_warn_ratelimited(dev, "chunk_size: %u refused: want a power of two\n",
				     val);
		ret = -EINVAL;
	}
	if (ret)
		return ret;
	WRITE_ONCE(to_engine(dev)->chunk_size, val);
	return len;
}
static DEVICE_ATTR_RW(chunk_size);

static ssize_t queue_depth_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_engine(dev)->queue_depth));
}

static ssize_t queue_depth_store(struct device *dev,
				 struct device_attribute *attr,
				 const char *buf, size_t len)
{
	struct hyk_engine *eng = to_engine(dev);
	unsigned int val;
	int ret;

	ret = hyk_parse_uint(dev, attr->attr.name, buf, HYPER_QUEUE_DEPTH_MIN,
			     HYPER_QUEUE_DEPTH_MAX, &val);
	if (ret)
		return ret;
	WRITE_ONCE(eng->queue_depth, val);
	/* A deeper queue may let waiting submitters in. */
	wake_up(&eng->wait);
	return len;
}
static DEVICE_ATTR_RW(queue_depth);

static ssize_t inline_bytes_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_engine(dev)->inline_bytes));
}

static ssize_t inline_bytes_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t len)
{
	unsigned int val;
	int ret;

	ret = hyk_parse_uint(dev, attr->attr.name, buf, HYPER_INLINE_BYTES_MIN,
			     HYPER_INLINE_BYTES_MAX, &val);
	if (ret)
		return ret;
	WRITE_ONCE(to_engine(dev)->inline_bytes, val);
	return len;
}
static DEVICE_ATTR_RW(inline_bytes);

static ssize_t copy_engine_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct dma_chan *chan = to_engine(dev)->dma;

	if (chan)
		return sysfs_emit(buf, "dma:%s\n", dma_chan_name(chan));
	return sysfs_emit(buf, "cpu\n");
}
static DEVICE_ATTR_RO(copy_engine);

static ssize_t reset_stats_store(struct device *dev,
				 struct device_attribute *attr,
				 const char *buf, size_t len)
{
	struct hyk_stats *st = &to_engine(dev)->stats;
	bool yes;
	int i;

	if (kstrtobool(buf, &yes) || !yes)
		return -EINVAL;
	for (i = 0; i < HYK_STAT_DIRS; i++) {
		atomic64_set(&st->bytes[i], 0);
		atomic64_set(&st->ops[i], 0);
	}
	atomic64_set(&st->requests, 0);
	atomic64_set(&st->errors, 0);
	for (i = 0; i < HYK_LAT_BUCKETS; i++)
		atomic64_set(&st->latency[i], 0);
	return len;
}
static DEVICE_ATTR_WO(reset_stats);

static struct attribute *hyk_engine_attrs[] = {
	&dev_attr_workers.attr,
	&dev_attr_chunk_size.attr,
	&dev_attr_queue_depth.attr,
	&dev_attr_inline_bytes.attr,
	&dev_attr_copy_engine.attr,
	&dev_attr_reset_stats.attr,
	NULL,
};

const struct attribute_group hyk_engine_group = {
	.attrs = hyk_engine_attrs,
};

#define HYK_STAT_ATTR(_name, _field)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%lld\n",				\
			  atomic64_read(&to_engine(dev)->stats._field));\
}									\
static DEVICE_ATTR_RO(_name)

HYK_STAT_ATTR(bytes_prefetch, bytes[HYK_STAT_PREFETCH]);
HYK_STAT_ATTR(bytes_store, bytes[HYK_STAT_STORE]);
HYK_STAT_ATTR(ops_prefetch, ops[HYK_STAT_PREFETCH]);
HYK_STAT_ATTR(ops_store, ops[HYK_STAT_STORE]);
HYK_STAT_ATTR(requests, requests);
HYK_STAT_ATTR(errors, errors);

static ssize_t inflight_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&to_engine(dev)->inflight));
}
static DEVICE_ATTR_RO(inflight);

/* One histogram: a line per bucket, "<upper bound in ns> <count>". */
static ssize_t latency_hist_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct hyk_stats *st = &to_engine(dev)->stats;
	int i, len = 0;

	for (i = 0; i < HYK_LAT_BUCKETS; i++)
		len += sysfs_emit_at(buf, len, "%llu %lld\n", 1ULL << i,
				     atomic64_read(&st->latency[i]));
	return len;
}
static DEVICE_ATTR_RO(latency_hist);

static struct attribute *hyk_stats_attrs[] = {
	&dev_attr_bytes_prefetch.attr,
	&dev_attr_bytes_store.attr,
	&dev_attr_ops_prefetch.attr,
	&dev_attr_ops_store.attr,
	&dev_attr_requests.attr,
	&dev_attr_errors.attr,
	&dev_attr_inflight.attr,
	&dev_attr_latency_hist.attr,
	NULL,
};

const struct attribute_group hyk_stats_group = {
	.name = "stats",
	.attrs = hyk_stats_attrs,
};
