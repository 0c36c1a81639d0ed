// SPDX-License-Identifier: GPL-2.0
/*
 * hyperctl on the real module, in the VM: its JSON read back and compared
 * with sysfs, every tunable set to good and bad values, counters under
 * traffic, --watch rates, reset-stats, and several devices at once.
 *
 * The suite boots with HYPER_EXPECT_DEVS windows (hyperctl.suite: two).
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "hyper_uring.h"
#include "hctl_run.h"

static const char *const knobs[] = {
	"workers", "chunk_size", "queue_depth", "inline_bytes",
};

static const char *const counters[] = {
	"bytes_prefetch", "bytes_store", "ops_prefetch", "ops_store",
	"requests", "errors", "inflight",
};

/* Device ids in /sys/class/hyper, ascending; returns how many. */
static int dev_ids(int *ids, int max)
{
	DIR *d = opendir(HYPER_SYSFS);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "hyper", 5) && n < max)
			ids[n++] = atoi(e->d_name + 5);
	closedir(d);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			int t = ids[j];

			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	return n;
}

static const char *dev_name(int id, char *buf)
{
	snprintf(buf, 16, "hyper%d", id);
	return buf;
}

static long long node_meminfo(int node, const char *key)
{
	char path[96], line[256];
	long long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, key);

		if (p)
			kb = strtoll(p + strlen(key), NULL, 10);
	}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

FIXTURE(vm) {
	int ids[16];
	int nr;
};

FIXTURE_SETUP(vm)
{
	const char *want = getenv("HYPER_EXPECT_DEVS");

	ASSERT_EQ(0, hyper_module_ensure());
	self->nr = dev_ids(self->ids, 16);
	ASSERT_LE(1, self->nr);
	if (want)
		ASSERT_EQ(atoi(want), self->nr);
}

FIXTURE_TEARDOWN(vm)
{
}

/* The fields list and status share, against sysfs. */
static void check_common(struct __test_metadata *_metadata,
			 struct json_object *o, int id)
{
	static const char *const nums[] = {
		"size", "used", "free", "nr_regions", "numa_node",
	};
	char buf[64];

	ASSERT_NE(NULL, o);
	EXPECT_EQ(id, hctl_int(o, "id"));
	for (unsigned int i = 0; i < 5; i++) {
		EXPECT_EQ(hyper_sysfs_ll(id, nums[i]), hctl_int(o, nums[i])) {
			TH_LOG("hyper%d %s", id, nums[i]);
		}
	}
	ASSERT_EQ(0, hyper_sysfs_read(id, "source", buf, sizeof(buf)));
	EXPECT_STREQ(buf, hctl_str(o, "source"));
	ASSERT_EQ(0, hyper_sysfs_read(id, "origin", buf, sizeof(buf)));
	EXPECT_STREQ(buf, hctl_str(o, "origin"));
	/* mode is reported exactly when the module has it. */
	if (hyper_sysfs_read(id, "mode", buf, sizeof(buf)) == 0) {
		EXPECT_STREQ(buf, hctl_str(o, "mode"));
	} else {
		EXPECT_FALSE(hctl_has(o, "mode"));
	}
}

TEST_F(vm, list_matches_sysfs)
{
	struct hctl r;
	char name[16];

	ASSERT_EQ(0, hctl_run(&r, "list", NULL));
	ASSERT_EQ(0, r.status) {
		TH_LOG("%s", r.err);
	}
	ASSERT_NE(NULL, r.json);
	ASSERT_EQ(self->nr, json_object_array_length(r.json));
	for (int i = 0; i < self->nr; i++) {
		struct json_object *o = json_object_array_get_idx(r.json, i);

		EXPECT_STREQ(dev_name(self->ids[i], name), hctl_str(o, "dev"));
		check_common(_metadata, o, self->ids[i]);
	}
	hctl_free(&r);
}

TEST_F(vm, list_human_has_a_row_per_device)
{
	char name[16], *line;
	struct hctl r;
	int rows = 0;

	ASSERT_EQ(0, hctl_run(&r, "list", "-H", NULL));
	ASSERT_EQ(0, r.status);
	line = strtok(r.out, "\n");
	ASSERT_NE(NULL, line);
	EXPECT_EQ(0, strncmp(line, "DEV ", 4));
	while ((line = strtok(NULL, "\n"))) {
		dev_name(self->ids[rows], name);
		EXPECT_EQ(0, strncmp(line, name, strlen(name)));
		EXPECT_EQ(' ', line[strlen(name)]);
		rows++;
	}
	EXPECT_EQ(self->nr, rows);
	hctl_free(&r);
}

TEST_F(vm, status_matches_sysfs)
{
	struct json_object *o, *node;
	char buf[64], name[16];
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "status", NULL));
	ASSERT_EQ(0, r.status);
	for (int i = 0; i < self->nr; i++) {
		int id = self->ids[i];
		long long nid = hyper_sysfs_ll(id, "numa_node");

		o = hctl_dev(r.json, dev_name(id, name));
		check_common(_metadata, o, id);
		for (int k = 0; k < 4; k++)
			EXPECT_EQ(hyper_sysfs_ll(id, knobs[k]), hctl_int(o, knobs[k]));
		EXPECT_EQ(hyper_sysfs_ll(id, "stats/inflight"), hctl_int(o, "inflight"));
		ASSERT_EQ(0, hyper_sysfs_read(id, "copy_engine", buf, sizeof(buf)));
		EXPECT_STREQ(buf, hctl_str(o, "copy_engine"));
		/* We are root: the physical base is shown, as sysfs has it. */
		ASSERT_EQ(0, hyper_sysfs_read(id, "phys_base", buf, sizeof(buf)));
		EXPECT_STREQ(buf, hctl_str(o, "phys_base"));
		ASSERT_TRUE(json_object_object_get_ex(o, "node", &node));
		EXPECT_EQ(nid, hctl_int(node, "id"));
		EXPECT_EQ(node_meminfo((int)nid, "MemTotal:"), hctl_int(node, "mem_total"));
	}
	hctl_free(&r);
}

/* The current values of a device's tunables. */
static void knobs_get(int id, long long *v)
{
	for (int k = 0; k < 4; k++)
		v[k] = hyper_sysfs_ll(id, knobs[k]);
}

static void knobs_restore(struct __test_metadata *_metadata, int id,
			  const long long *v)
{
	char dev[16], a[4][48];
	struct hctl r;

	for (int k = 0; k < 4; k++)
		snprintf(a[k], sizeof(a[k]), "%s=%lld", knobs[k], v[k]);
	ASSERT_EQ(0, hctl_run(&r, "set", dev_name(id, dev), a[0], a[1], a[2],
			      a[3], NULL));
	EXPECT_EQ(0, r.status);
	hctl_free(&r);
	for (int k = 0; k < 4; k++)
		EXPECT_EQ(v[k], hyper_sysfs_ll(id, knobs[k]));
}

TEST_F(vm, set_every_tunable_to_good_values)
{
	static const struct {
		int knob;
		const char *val;
		long long want;
	} good[] = {
		{ 0, "1", 1 }, { 0, "64", 64 }, { 0, "3", 3 },
		{ 1, "64K", 65536 }, { 1, "64M", 67108864 }, { 1, "2MiB", 2097152 },
		{ 2, "1", 1 }, { 2, "4K", 4096 }, { 2, "100", 100 },
		{ 3, "0", 0 }, { 3, "1M", 1048576 }, { 3, "4096", 4096 },
	};
	long long orig[4], other[4];
	int id = self->ids[0];
	struct hctl r;
	char dev[16], arg[64];

	knobs_get(id, orig);
	if (self->nr > 1)
		knobs_get(self->ids[1], other);
	for (unsigned int i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const char *k = knobs[good[i].knob];

		snprintf(arg, sizeof(arg), "%s=%s", k, good[i].val);
		ASSERT_EQ(0, hctl_run(&r, "set", dev_name(id, dev), arg, NULL));
		EXPECT_EQ(0, r.status) {
			TH_LOG("%s: %s", arg, r.err);
		}
		EXPECT_STREQ("", r.err);
		EXPECT_EQ(good[i].want, hyper_sysfs_ll(id, k)) {
			TH_LOG("%s", arg);
		}
		/* The status printed after shows what sysfs now says. */
		EXPECT_EQ(good[i].want, hctl_int(hctl_dev(r.json, dev), k));
		hctl_free(&r);
	}
	/* Only the named device changed. */
	if (self->nr > 1)
		for (int k = 0; k < 4; k++)
			EXPECT_EQ(other[k], hyper_sysfs_ll(self->ids[1], knobs[k]));
	knobs_restore(_metadata, id, orig);
}

TEST_F(vm, set_every_tunable_to_bad_values)
{
	static const struct {
		int knob;
		const char *val;
	} bad[] = {
		{ 0, "0" }, { 0, "65" }, { 0, "4G" },
		{ 1, "3M" }, { 1, "32K" }, { 1, "128M" }, { 1, "100000" },
		{ 2, "0" }, { 2, "4097" },
		{ 3, "2M" }, { 3, "1048577" },
	};
	/* Non-default values, so that a reset to a default would show. */
	static const char *const before[] = {
		"workers=3", "chunk_size=256K", "queue_depth=77", "inline_bytes=8K",
	};
	static const long long before_v[] = { 3, 262144, 77, 8192 };
	int id = self->ids[0], logged;
	char dev[16], arg[64], want[128];
	long long orig[4];
	struct hctl r;

	knobs_get(id, orig);
	ASSERT_EQ(0, hctl_run(&r, "set", dev_name(id, dev), before[0], before[1],
			      before[2], before[3], NULL));
	ASSERT_EQ(0, r.status);
	hctl_free(&r);
	logged = hyper_dmesg_count("refused");
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int k = bad[i].knob;

		snprintf(arg, sizeof(arg), "%s=%s", knobs[k], bad[i].val);
		ASSERT_EQ(0, hctl_run(&r, "set", dev, arg, NULL));
		EXPECT_EQ(1, r.status) {
			TH_LOG("%s accepted", arg);
		}
		snprintf(want, sizeof(want), "hyperctl: %s: %s: Invalid argument",
			 dev, arg);
		EXPECT_EQ(0, strncmp(r.err, want, strlen(want))) {
			TH_LOG("%s: stderr '%s'", arg, r.err);
		}
		/* The old value stays, in sysfs and in what hyperctl shows. */
		EXPECT_EQ(before_v[k], hyper_sysfs_ll(id, knobs[k])) {
			TH_LOG("%s", arg);
		}
		EXPECT_EQ(before_v[k], hctl_int(hctl_dev(r.json, dev), knobs[k]));
		hctl_free(&r);
	}
	/* The module said why (rate-limited, so at least once). */
	EXPECT_LT(logged, hyper_dmesg_count("refused"));
	knobs_restore(_metadata, id, orig);
}

TEST_F(vm, set_all_devices)
{
	long long orig[16][4];
	struct hctl r;

	for (int i = 0; i < self->nr; i++)
		knobs_get(self->ids[i], orig[i]);
	ASSERT_EQ(0, hctl_run(&r, "set", "all", "workers=5", "queue_depth=99", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(self->nr, json_object_array_length(r.json));
	hctl_free(&r);
	for (int i = 0; i < self->nr; i++) {
		EXPECT_EQ(5, hyper_sysfs_ll(self->ids[i], "workers"));
		EXPECT_EQ(99, hyper_sysfs_ll(self->ids[i], "queue_depth"));
		knobs_restore(_metadata, self->ids[i], orig[i]);
	}
}

/* Stores `rounds` MiB into a region of device id; 0 or -errno. */
static int traffic(int id, int rounds)
{
	struct io_uring ring;
	uint32_t h;
	void *buf;
	int fd, ret = 0;

	fd = hyper_dev_open(id);
	if (fd < 0)
		return fd;
	buf = mmap(NULL, MiB, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || hyper_ring_init(&ring, 8)) {
		close(fd);
		return -ENOMEM;
	}
	memset(buf, 0x5a, MiB);
	ret = hyper_alloc(fd, 4 * MiB, 0, &h, NULL);
	for (int i = 0; !ret && i < rounds; i++) {
		int res = hyper_xfer_sync(&ring, fd, h, i % 3 ? HYPER_DIR_STORE :
					  HYPER_DIR_PREFETCH, buf, MiB,
					  (uint64_t)(i % 4) * MiB, -1);

		ret = res == (int)MiB ? 0 : res < 0 ? res : -EIO;
	}
	io_uring_queue_exit(&ring);
	munmap(buf, MiB);
	close(fd);
	return ret;
}

static void check_stats(struct __test_metadata *_metadata,
			struct json_object *o, int id)
{
	long long total = 0;
	struct json_object *hist;

	ASSERT_NE(NULL, o);
	for (int c = 0; c < 7; c++) {
		EXPECT_EQ(hyper_stat(id, counters[c]), hctl_int(o, counters[c])) {
			TH_LOG("hyper%d %s", id, counters[c]);
		}
	}
	/* The histogram's buckets add up to the requests. */
	ASSERT_TRUE(json_object_object_get_ex(o, "latency_hist", &hist));
	for (size_t i = 0; i < json_object_array_length(hist); i++)
		total += hctl_int(json_object_array_get_idx(hist, i), "count");
	EXPECT_EQ(hyper_stat(id, "requests"), total);
}

TEST_F(vm, stats_and_reset_stats)
{
	char name[16];
	struct hctl r;

	for (int i = 0; i < self->nr; i++) {
		ASSERT_EQ(0, hyper_sysfs_write(self->ids[i], "reset_stats", "1"));
		ASSERT_EQ(0, traffic(self->ids[i], 3 + 3 * i));
	}
	ASSERT_EQ(0, hctl_run(&r, "stats", NULL));
	ASSERT_EQ(0, r.status);
	ASSERT_EQ(self->nr, json_object_array_length(r.json));
	for (int i = 0; i < self->nr; i++) {
		struct json_object *o = hctl_dev(r.json, dev_name(self->ids[i], name));

		check_stats(_metadata, o, self->ids[i]);
		EXPECT_EQ((2 + 2 * i) * (long long)MiB, hctl_int(o, "bytes_store"));
		EXPECT_EQ((1 + i) * (long long)MiB, hctl_int(o, "bytes_prefetch"));
		EXPECT_LT(0, hctl_int(o, "latency_p50_lt_ns"));
	}
	hctl_free(&r);

	/* One device: only its counters go to zero. */
	ASSERT_EQ(0, hctl_run(&r, "reset-stats", dev_name(self->ids[0], name), NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.out);
	hctl_free(&r);
	for (int c = 0; c < 6; c++)
		EXPECT_EQ(0, hyper_stat(self->ids[0], counters[c]));
	if (self->nr > 1)
		EXPECT_EQ(4 * (long long)MiB, hyper_stat(self->ids[1], "bytes_store"));
	ASSERT_EQ(0, hctl_run(&r, "stats", name, NULL));
	check_stats(_metadata, hctl_dev(r.json, name), self->ids[0]);
	EXPECT_FALSE(hctl_has(hctl_dev(r.json, name), "latency_p50_lt_ns"));
	hctl_free(&r);

	/* All of them. */
	ASSERT_EQ(0, hctl_run(&r, "reset-stats", NULL));
	EXPECT_EQ(0, r.status);
	hctl_free(&r);
	for (int i = 0; i < self->nr; i++)
		for (int c = 0; c < 6; c++)
			EXPECT_EQ(0, hyper_stat(self->ids[i], counters[c]));
}

struct pump {
	int id;
	volatile int stop;
	int ret;
};

static void *pump_run(void *arg)
{
	struct pump *p = arg;

	while (!p->stop && !p->ret)
		p->ret = traffic(p->id, 8);
	return NULL;
}

TEST_F(vm, stats_watch_sees_traffic)
{
	struct pump p = { .id = self->ids[0] };
	long long before, after, sum = 0;
	char cmd[128], line[8192], name[16];
	pthread_t th;
	int lines = 0;
	FILE *f;

	ASSERT_EQ(0, pthread_create(&th, NULL, pump_run, &p));
	while (hyper_stat(p.id, "ops_store") == 0 && !p.ret)
		usleep(1000);
	before = hyper_stat(p.id, "bytes_store");
	snprintf(cmd, sizeof(cmd), "%s stats %s --watch 0.5 --count 4",
		 HYPERCTL, dev_name(p.id, name));
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		struct json_object *arr = json_tokener_parse(line), *o, *d, *ps;
		double secs;
		long long delta;

		ASSERT_NE(NULL, arr);
		EXPECT_EQ(1, json_object_array_length(arr));
		o = hctl_dev(arr, name);
		ASSERT_NE(NULL, o);
		secs = json_object_get_double(json_object_object_get(o, "interval_s"));
		EXPECT_LT(0.4, secs);
		d = json_object_object_get(o, "delta");
		ps = json_object_object_get(o, "per_s");
		delta = hctl_int(d, "bytes_store");
		/*
		 * The pump never stops, but a busy machine may not run it in
		 * one interval: counters only grow, and the sum is checked
		 * below...
		 */
		EXPECT_LE(0, delta);
		EXPECT_LE(0, hctl_int(d, "ops_store"));
		EXPECT_EQ(0, hctl_int(d, "errors"));
		/* ...and the rate is that over the interval's length. */
		EXPECT_GE(1.0 + (double)delta * 0.002,
			  fabs((double)hctl_int(ps, "bytes_store") - (double)delta / secs));
		sum += delta;
		lines++;
		json_object_put(arr);
	}
	EXPECT_EQ(0, pclose(f));
	after = hyper_stat(p.id, "bytes_store");
	p.stop = 1;
	pthread_join(th, NULL);
	EXPECT_EQ(0, p.ret);
	EXPECT_EQ(4, lines);
	/* What the lines add up to happened between the two reads. */
	EXPECT_LE(sum, after - before);
	EXPECT_LT(0, sum);
}

TEST_F(vm, errors_name_the_device)
{
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "status", "hyper99", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper99: no such device\n", r.err);
	hctl_free(&r);
	ASSERT_EQ(0, hctl_run(&r, "stats", "bogus", NULL));
	EXPECT_EQ(2, r.status);
	hctl_free(&r);
	ASSERT_EQ(0, hctl_run(&r, "set", "hyper0", "workers=lots", NULL));
	EXPECT_EQ(2, r.status);
	hctl_free(&r);
}

TEST_HARNESS_MAIN
