// SPDX-License-Identifier: GPL-2.0
/*
 * hyperctl on the host, against a fake sysfs tree (HYPERCTL_SYSFS): the
 * command line, exit statuses, messages, the JSON read back and compared
 * with the tree, the tables, and what set, mode and reset-stats write.
 */
#include <stdint.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "fake_sysfs.h"
#include "hctl_run.h"

/* hyper0: a window with the mode switch; hyper10: emulated, without it. */
static const struct fake_dev fdevs[] = {
	{
		.id = 0, .mode = "device", .source = "window",
		.origin = "pmem-legacy", .phys_base = 0x80000000,
		.size = 805306368, .used = 2097152, .regions = 1, .node = 1,
		.knob = { 2, 1048576, 256, 65536 },
		.stat = { 1000, 2000, 3, 4, 5, 1, 0 },
	},
	{
		.id = 10, .mode = NULL, .source = "emulated",
		.origin = "emulated", .phys_base = 0,
		.size = 268435456, .used = 0, .regions = 0, .node = 0,
		.knob = { 4, 65536, 32, 0 },
		.stat = { 7, 8, 9, 10, 11, 0, 2 },
	},
};

#define NR_FDEVS	(int)(sizeof(fdevs) / sizeof(fdevs[0]))

FIXTURE(tree) {
	char root[64];
};

FIXTURE_SETUP(tree)
{
	snprintf(self->root, sizeof(self->root), "/tmp/hyperctl-test.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->root));
	/* Made in reverse order: listing must sort hyper10 after hyper0. */
	for (int i = NR_FDEVS - 1; i >= 0; i--)
		ASSERT_EQ(0, fake_dev_add(self->root, &fdevs[i]));
	ASSERT_EQ(0, fake_nodes(self->root));
	ASSERT_EQ(0, setenv("HYPERCTL_SYSFS", self->root, 1));
}

FIXTURE_TEARDOWN(tree)
{
	fake_remove(self->root);
}

static const char *attr(const char *root, int id, const char *name, char *buf)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "class/hyper/hyper%d/%s", id, name);
	return fake_get(root, rel, buf, 256);
}

static void put_attr(const char *root, int id, const char *name, const char *val)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "class/hyper/hyper%d/%s", id, name);
	fake_put(root, rel, "%s", val);
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

TEST_F(tree, usage_errors_exit_2)
{
	static const char *const bad[][5] = {
		{ NULL },
		{ "frobnicate", NULL },
		{ "list", "--bogus", NULL },
		{ "list", "hyper0", "hyper10", NULL },
		{ "list", "-w", "1", NULL },
		{ "status", "-c", "3", NULL },
		{ "reset-stats", "-H", NULL },
		{ "stats", "--count", "3", NULL },
		{ "stats", "--watch", "0", NULL },
		{ "stats", "--watch", "abc", NULL },
		{ "stats", "--watch", NULL },
		{ "stats", "-w", "1", "-c", NULL },
		{ "mode", "hyper0", NULL },
		{ "set", "hyper0", NULL },
	};
	struct hctl r;

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(0, hctl_runv(&r, (char *const *)bad[i]));
		EXPECT_EQ(2, r.status) {
			TH_LOG("case %u (%s %s): %s", i, bad[i][0], bad[i][1], r.err);
		}
		if (!bad[i][0]) {
			/* No command at all: the list of commands is the answer. */
			EXPECT_NE(NULL, strstr(r.err, "usage: hyperctl"));
		} else {
			/* One line saying what is wrong and where the help is. */
			EXPECT_EQ(1, count_lines(r.err)) {
				TH_LOG("case %u: %s", i, r.err);
			}
			EXPECT_NE(NULL, strstr(r.err, "--help)\n")) {
				TH_LOG("case %u: %s", i, r.err);
			}
		}
		EXPECT_STREQ("", r.out);
		hctl_free(&r);
	}
}

TEST_F(tree, help_for_every_command)
{
	static const char *const cmds[] = {
		"list", "status", "stats", "set", "mode", "reset-stats", "pool",
	};
	char want[64];
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "--help", NULL));
	EXPECT_EQ(0, r.status);
	for (unsigned int i = 0; i < 7; i++)
		EXPECT_NE(NULL, strstr(r.out, cmds[i]));
	hctl_free(&r);
	for (unsigned int i = 0; i < 7; i++) {
		snprintf(want, sizeof(want), "usage: hyperctl %s", cmds[i]);
		ASSERT_EQ(0, hctl_run(&r, cmds[i], "--help", NULL));
		EXPECT_EQ(0, r.status);
		EXPECT_EQ(0, strncmp(r.out, want, strlen(want))) {
			TH_LOG("%s --help: %s", cmds[i], r.out);
		}
		hctl_free(&r);
		ASSERT_EQ(0, hctl_run(&r, "help", cmds[i], NULL));
		EXPECT_EQ(0, r.status);
		EXPECT_EQ(0, strncmp(r.out, want, strlen(want)));
		hctl_free(&r);
	}
	ASSERT_EQ(0, hctl_run(&r, "--version", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(0, strncmp(r.out, "hyperctl ", 9));
	hctl_free(&r);
}

static void check_list_entry(struct __test_metadata *_metadata,
			     struct json_object *o, const struct fake_dev *d)
{
	char name[16];

	snprintf(name, sizeof(name), "hyper%d", d->id);
	ASSERT_NE(NULL, o);
	EXPECT_STREQ(name, hctl_str(o, "dev"));
	EXPECT_EQ(d->id, hctl_int(o, "id"));
	EXPECT_STREQ(d->source, hctl_str(o, "source"));
	EXPECT_STREQ(d->origin, hctl_str(o, "origin"));
	EXPECT_EQ(d->size, hctl_int(o, "size"));
	EXPECT_EQ(d->used, hctl_int(o, "used"));
	EXPECT_EQ(d->size - d->used, hctl_int(o, "free"));
	EXPECT_EQ(d->regions, hctl_int(o, "nr_regions"));
	EXPECT_EQ(d->node, hctl_int(o, "numa_node"));
	/* A module without the switch has no mode; none is made up. */
	if (d->mode) {
		EXPECT_STREQ(d->mode, hctl_str(o, "mode"));
	} else {
		EXPECT_FALSE(hctl_has(o, "mode"));
	}
}

TEST_F(tree, list_json_is_the_tree)
{
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "list", NULL));
	ASSERT_EQ(0, r.status);
	ASSERT_NE(NULL, r.json);
	ASSERT_EQ(2, json_object_array_length(r.json));
	/* In device order, not directory order. */
	check_list_entry(_metadata, json_object_array_get_idx(r.json, 0), &fdevs[0]);
	check_list_entry(_metadata, json_object_array_get_idx(r.json, 1), &fdevs[1]);
	hctl_free(&r);
}

TEST_F(tree, device_selection)
{
	static const struct {
		const char *sel;
		int status, nr;
	} cases[] = {
		{ "0", 0, 1 }, { "hyper0", 0, 1 }, { "10", 0, 1 },
		{ "hyper10", 0, 1 }, { "all", 0, 2 },
		{ "hyper9", 1, 0 }, { "3", 1, 0 },
		{ "hyper", 2, 0 }, { "hyper01", 2, 0 }, { "foo", 2, 0 },
		{ "0x0", 2, 0 }, { "hyper-1", 2, 0 },
	};
	struct hctl r;

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(0, hctl_run(&r, "list", cases[i].sel, NULL));
		EXPECT_EQ(cases[i].status, r.status) {
			TH_LOG("list %s: %s", cases[i].sel, r.err);
		}
		if (!cases[i].status) {
			ASSERT_NE(NULL, r.json);
			EXPECT_EQ(cases[i].nr, json_object_array_length(r.json));
		} else {
			EXPECT_STREQ("", r.out);
		}
		if (cases[i].status == 1) {
			EXPECT_NE(NULL, strstr(r.err, "no such device"));
		}
		hctl_free(&r);
	}
	ASSERT_EQ(0, hctl_run(&r, "status", "hyper9", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "hyperctl: hyper9: no such device"));
	hctl_free(&r);
}

TEST_F(tree, no_devices)
{
	static const char *const need_one[][3] = {
		{ "status", NULL }, { "stats", NULL }, { "reset-stats", NULL },
		{ "set", "all", "workers=2" }, { "mode", "all", "device" },
	};
	struct hctl r;
	char cls[128];

	snprintf(cls, sizeof(cls), "%s/class", self->root);
	ASSERT_EQ(0, fake_remove(cls));
	ASSERT_EQ(0, hctl_run(&r, "list", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("[]\n", r.out);
	hctl_free(&r);
	for (unsigned int i = 0; i < 5; i++) {
		char *args[4] = { (char *)need_one[i][0], (char *)need_one[i][1],
				  (char *)need_one[i][2], NULL };

		ASSERT_EQ(0, hctl_runv(&r, args));
		EXPECT_EQ(1, r.status);
		EXPECT_NE(NULL, strstr(r.err, "hyper.ko is not loaded (load it with modprobe hyper")) {
			TH_LOG("%s: %s", args[0], r.err);
		}
		hctl_free(&r);
	}
}

TEST_F(tree, list_human_table)
{
	struct hctl r;
	char *l1, *l2, *l3;

	ASSERT_EQ(0, hctl_run(&r, "list", "-H", NULL));
	ASSERT_EQ(0, r.status);
	l1 = strtok(r.out, "\n");
	l2 = strtok(NULL, "\n");
	l3 = strtok(NULL, "\n");
	ASSERT_NE(NULL, l3);
	EXPECT_EQ(NULL, strtok(NULL, "\n"));
	EXPECT_STREQ("DEV      MODE    SOURCE    ORIGIN       SIZE  USED  FREE  REGIONS  NODE", l1);
	EXPECT_STREQ("hyper0   device  window    pmem-legacy  768M    2M  766M        1     1", l2);
	EXPECT_STREQ("hyper10  -       emulated  emulated     256M     0  256M        0     0", l3);
	hctl_free(&r);
}

TEST_F(tree, status_json_is_the_tree)
{
	struct json_object *o, *node;
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "status", NULL));
	ASSERT_EQ(0, r.status);
	for (int i = 0; i < NR_FDEVS; i++) {
		const struct fake_dev *d = &fdevs[i];
		char name[16];

		snprintf(name, sizeof(name), "hyper%d", d->id);
		o = hctl_dev(r.json, name);
		check_list_entry(_metadata, o, d);
		for (int k = 0; k < 4; k++)
			EXPECT_EQ(d->knob[k], hctl_int(o, fake_knob_names[k]));
		EXPECT_EQ(d->stat[6], hctl_int(o, "inflight"));
		EXPECT_STREQ("cpu", hctl_str(o, "copy_engine"));
		EXPECT_EQ(1024, hctl_int(o, "memory_tier"));
		ASSERT_TRUE(json_object_object_get_ex(o, "node", &node));
		EXPECT_EQ(d->node, hctl_int(node, "id"));
		EXPECT_EQ(d->node ? 22 : 4, hctl_int(node, "tier"));
		EXPECT_EQ(d->node ? 1LL << 30 : 2LL << 30, hctl_int(node, "mem_total"));
		EXPECT_EQ(d->node ? 256LL << 20 : 1LL << 30, hctl_int(node, "mem_free"));
	}
	EXPECT_STREQ("0x80000000", hctl_str(hctl_dev(r.json, "hyper0"), "phys_base"));
	hctl_free(&r);
}

TEST_F(tree, status_leaves_out_what_is_missing)
{
	char path[256];
	struct hctl r;
	struct json_object *o;

	/* phys_base unreadable (non-root), memory_tier absent (old module). */
	snprintf(path, sizeof(path), "%s/class/hyper/hyper0/phys_base", self->root);
	ASSERT_EQ(0, unlink(path));
	snprintf(path, sizeof(path), "%s/class/hyper/hyper0/memory_tier", self->root);
	ASSERT_EQ(0, unlink(path));
	snprintf(path, sizeof(path), "%s/devices/virtual", self->root);
	ASSERT_EQ(0, fake_remove(path));
	ASSERT_EQ(0, hctl_run(&r, "status", "0", NULL));
	ASSERT_EQ(0, r.status);
	o = hctl_dev(r.json, "hyper0");
	ASSERT_NE(NULL, o);
	EXPECT_FALSE(hctl_has(o, "phys_base"));
	EXPECT_FALSE(hctl_has(o, "memory_tier"));
	EXPECT_TRUE(hctl_has(o, "node"));
	EXPECT_FALSE(hctl_has(json_object_object_get(o, "node"), "tier"));
	hctl_free(&r);

	/* A required attribute missing is a failure that names it. */
	snprintf(path, sizeof(path), "%s/class/hyper/hyper0/used", self->root);
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, hctl_run(&r, "status", "0", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper0: used: No such file or directory\n", r.err);
	EXPECT_STREQ("", r.out);
	hctl_free(&r);
}

TEST_F(tree, status_human)
{
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "status", "-H", NULL));
	ASSERT_EQ(0, r.status);
	EXPECT_EQ(0, strncmp(r.out, "hyper0\n", 7));
	EXPECT_NE(NULL, strstr(r.out, "\nhyper10\n"));
	EXPECT_NE(NULL, strstr(r.out, "  mode:          device\n"));
	EXPECT_NE(NULL, strstr(r.out, "  mode:          (no mode switch in this module)\n"));
	EXPECT_NE(NULL, strstr(r.out, "  source:        window, pmem-legacy, at 0x80000000\n"));
	EXPECT_NE(NULL, strstr(r.out, "  size:          768M, used 2M, free 766M\n"));
	EXPECT_NE(NULL, strstr(r.out, "  numa node:     1 (memory_tier22)\n"));
	EXPECT_NE(NULL, strstr(r.out, "  chunk_size:    1M (1048576)\n"));
	EXPECT_NE(NULL, strstr(r.out, "  inline_bytes:  0\n"));
	EXPECT_NE(NULL, strstr(r.out, "  inflight:      2\n"));
	hctl_free(&r);
}

TEST_F(tree, stats_json_and_latency)
{
	struct json_object *o, *hist, *b;
	struct hctl r;

	/* 99 fast commands and one slow: p50 and p99 are the fast bucket. */
	ASSERT_EQ(0, fake_latency(self->root, 0, 99, 1));
	ASSERT_EQ(0, hctl_run(&r, "stats", "hyper0", NULL));
	ASSERT_EQ(0, r.status);
	o = hctl_dev(r.json, "hyper0");
	ASSERT_NE(NULL, o);
	for (int i = 0; i < 7; i++)
		EXPECT_EQ(fdevs[0].stat[i], hctl_int(o, fake_stat_names[i]));
	EXPECT_EQ(4096, hctl_int(o, "latency_p50_lt_ns"));
	EXPECT_EQ(4096, hctl_int(o, "latency_p99_lt_ns"));
	ASSERT_TRUE(json_object_object_get_ex(o, "latency_hist", &hist));
	ASSERT_EQ(2, json_object_array_length(hist));
	b = json_object_array_get_idx(hist, 1);
	EXPECT_EQ(1048576, hctl_int(b, "lt_ns"));
	EXPECT_EQ(1, hctl_int(b, "count"));
	hctl_free(&r);

	/* Two slow in a hundred: p99 moves to the slow bucket. */
	ASSERT_EQ(0, fake_latency(self->root, 0, 98, 2));
	ASSERT_EQ(0, hctl_run(&r, "stats", "hyper0", NULL));
	EXPECT_EQ(1048576, hctl_int(hctl_dev(r.json, "hyper0"), "latency_p99_lt_ns"));
	hctl_free(&r);

	/* No command yet: no percentile at all. */
	ASSERT_EQ(0, hctl_run(&r, "stats", "hyper10", NULL));
	o = hctl_dev(r.json, "hyper10");
	EXPECT_FALSE(hctl_has(o, "latency_p50_lt_ns"));
	ASSERT_TRUE(json_object_object_get_ex(o, "latency_hist", &hist));
	EXPECT_EQ(0, json_object_array_length(hist));
	hctl_free(&r);

	/* A histogram line that is not "<bound> <count>" is an error. */
	put_attr(self->root, 0, "stats/latency_hist", "1 2\nbogus\n");
	ASSERT_EQ(0, hctl_run(&r, "stats", "hyper0", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper0: stats/latency_hist: Invalid argument\n", r.err);
	hctl_free(&r);
}

TEST_F(tree, stats_human)
{
	struct hctl r;

	ASSERT_EQ(0, fake_latency(self->root, 0, 3, 1));
	ASSERT_EQ(0, hctl_run(&r, "stats", "-H", NULL));
	ASSERT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out,
		"DEV      PREFETCH  STORE  OPS_PF  OPS_ST  REQUESTS  ERRORS  INFLIGHT     P50     P99\n"
		"hyper0       1000   2.0K       3       4         5       1         0  <4.1us  <1.0ms\n"
		"hyper10         7      8       9      10        11       0         2       -       -\n")) {
		TH_LOG("%s", r.out);
	}
	hctl_free(&r);
}

/*
 * Runs `stats --watch` and changes a counter once the first interval's
 * line is out: the later lines' deltas must add up to the change.
 */
static long long watch_delta(struct __test_metadata *_metadata,
			     const char *root, const char *counter,
			     const char *newval, double *rate_x_secs)
{
	char cmd[512], line[4096], rel[128];
	long long sum = 0;
	int lines = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "HYPERCTL_SYSFS=%s %s stats hyper0 --watch 0.3 --count 3", root,
		 HYPERCTL);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	*rate_x_secs = 0;
	while (fgets(line, sizeof(line), p)) {
		struct json_object *arr = json_tokener_parse(line), *o, *d, *ps;
		double secs;

		if (!arr) {
			TH_LOG("not JSON: %s", line);
			break;
		}
		o = hctl_dev(arr, "hyper0");
		EXPECT_EQ(1, json_object_array_length(arr));
		secs = json_object_get_double(json_object_object_get(o, "interval_s"));
		EXPECT_LT(0.2, secs);
		d = json_object_object_get(o, "delta");
		ps = json_object_object_get(o, "per_s");
		if (lines++ == 0) {
			EXPECT_EQ(0, hctl_int(d, counter));
			snprintf(rel, sizeof(rel), "class/hyper/hyper0/stats/%s", counter);
			fake_put(root, rel, "%s\n", newval);
		} else {
			sum += hctl_int(d, counter);
			*rate_x_secs += (double)hctl_int(ps, counter) * secs;
		}
		json_object_put(arr);
	}
	EXPECT_EQ(0, pclose(p));
	EXPECT_EQ(3, lines);
	return sum;
}

TEST_F(tree, stats_watch_deltas_and_rates)
{
	double rs;

	/* bytes_store 2000 -> 3000 */
	EXPECT_EQ(1000, watch_delta(_metadata, self->root, "bytes_store", "3000", &rs));
	EXPECT_LT(990, rs);
	EXPECT_GT(1010, rs);
	/* requests 5 -> 3: reset in between; 3 counted since. */
	EXPECT_EQ(3, watch_delta(_metadata, self->root, "requests", "3", &rs));
}

TEST_F(tree, stats_watch_human)
{
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "stats", "-H", "-w", "0.05", "-c", "2", "hyper10", NULL));
	ASSERT_EQ(0, r.status);
	EXPECT_STREQ("\nDEV      PREFETCH/s  STORE/s  OPS_PF/s  OPS_ST/s  REQUESTS/s  ERRORS  INFLIGHT\n"
		     "hyper10           0        0         0         0           0       0         2\n"
		     "\nDEV      PREFETCH/s  STORE/s  OPS_PF/s  OPS_ST/s  REQUESTS/s  ERRORS  INFLIGHT\n"
		     "hyper10           0        0         0         0           0       0         2\n",
		     r.out);
	hctl_free(&r);
}

TEST_F(tree, set_writes_values_with_suffixes)
{
	char buf[256];
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "set", "hyper0", "workers=8", "chunk_size=2M",
			      "queue_depth=1K", "inline_bytes=0", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	EXPECT_STREQ("8", attr(self->root, 0, "workers", buf));
	EXPECT_STREQ("2097152", attr(self->root, 0, "chunk_size", buf));
	EXPECT_STREQ("1024", attr(self->root, 0, "queue_depth", buf));
	EXPECT_STREQ("0", attr(self->root, 0, "inline_bytes", buf));
	/* It prints the status after, which shows the new values. */
	EXPECT_EQ(2097152, hctl_int(hctl_dev(r.json, "hyper0"), "chunk_size"));
	EXPECT_EQ(NULL, hctl_dev(r.json, "hyper10"));
	/* The other device is untouched. */
	EXPECT_STREQ("4\n", attr(self->root, 10, "workers", buf));
	hctl_free(&r);

	ASSERT_EQ(0, hctl_run(&r, "set", "all", "inline_bytes=512KiB", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("524288", attr(self->root, 0, "inline_bytes", buf));
	EXPECT_STREQ("524288", attr(self->root, 10, "inline_bytes", buf));
	EXPECT_EQ(2, json_object_array_length(r.json));
	hctl_free(&r);
}

TEST_F(tree, set_usage_errors_change_nothing)
{
	static const char *const bad[] = {
		"bogus=1", "workers", "=4", "workers=", "workers=12Q",
		"workers=-1", "chunk_size=1.5M", "workers=0x10", "workers= 4",
		"chunk_size=99999999999999999999", "chunk_size=17179869184T",
		"copy_engine=dma", "reset_stats=1",
	};
	char buf[256];
	struct hctl r;

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* A good setting before the bad one is not written either. */
		ASSERT_EQ(0, hctl_run(&r, "set", "hyper0", "queue_depth=7",
				      bad[i], NULL));
		EXPECT_EQ(2, r.status) {
			TH_LOG("%s", bad[i]);
		}
		EXPECT_NE(NULL, strstr(r.err, bad[i]));
		EXPECT_STREQ("", r.out);
		hctl_free(&r);
	}
	EXPECT_STREQ("256\n", attr(self->root, 0, "queue_depth", buf));
	EXPECT_STREQ("2\n", attr(self->root, 0, "workers", buf));
}

TEST_F(tree, set_bad_value_is_one_line)
{
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "set", "hyper0", "workers=abc", NULL));
	EXPECT_EQ(2, r.status);
	EXPECT_STREQ("hyperctl: 'workers=abc': want a number with an optional K, M, G or T suffix (see hyperctl set --help)\n",
		     r.err);
	EXPECT_STREQ("", r.out);
	hctl_free(&r);
}

/* No module: whatever the command, the message says so, with the fix. */
TEST_F(tree, without_the_module_every_device_error_says_so)
{
	static const char *const cmds[][4] = {
		{ "set", "hyper0", "workers=99999", NULL },
		{ "status", "hyper0", NULL },
		{ "stats", "hyper0", NULL },
		{ "mode", "hyper0", "device", NULL },
	};
	char cls[128];
	struct hctl r;

	snprintf(cls, sizeof(cls), "%s/class", self->root);
	ASSERT_EQ(0, fake_remove(cls));
	for (unsigned int i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		ASSERT_EQ(0, hctl_runv(&r, (char *const *)cmds[i]));
		EXPECT_EQ(1, r.status);
		EXPECT_STREQ("hyperctl: hyper0: no such device: hyper.ko is not loaded (load it with modprobe hyper, see hyperctl(8))\n",
			     r.err) {
			TH_LOG("%s", cmds[i][0]);
		}
		hctl_free(&r);
	}
}

TEST_F(tree, set_refused_write_is_reported)
{
	char path[256], buf[256];
	struct hctl r;

	/*
	 * A write the "kernel" refuses: the attribute is a directory (which
	 * the status printed afterwards cannot read either).
	 */
	snprintf(path, sizeof(path), "%s/class/hyper/hyper0/queue_depth", self->root);
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, mkdir(path, 0755));
	ASSERT_EQ(0, hctl_run(&r, "set", "hyper0", "queue_depth=8", "workers=3", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper0: queue_depth=8: Is a directory\n"
		     "hyperctl: hyper0: queue_depth: Is a directory\n", r.err);
	/* The other setting was still made. */
	EXPECT_STREQ("3", attr(self->root, 0, "workers", buf));
	hctl_free(&r);
}

/* The state of memory block nr in the fake tree. */
static const char *block(const char *root, int nr, char *buf)
{
	char rel[96];

	snprintf(rel, sizeof(rel), "devices/system/memory/memory%d/state", nr);
	return fake_get(root, rel, buf, 256);
}

/* hyper0's window: 768 MiB at 2 GiB, 128 MiB blocks 16..21. */
#define BS		(128ULL << 20)
#define FIRST_BLOCK	16
#define LAST_BLOCK	21

TEST_F(tree, mode_switch_onlines_the_blocks)
{
	struct json_object *o;
	char buf[256];
	struct hctl r;

	ASSERT_EQ(0, fake_memblocks(self->root, 0x70000000, 0x50000000, BS));
	/* One block is online already (auto-online): left alone. */
	ASSERT_EQ(0, fake_put(self->root, "devices/system/memory/memory17/state",
			      "online\n"));
	ASSERT_EQ(0, hctl_run(&r, "mode", "hyper0", "system-ram", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	EXPECT_STREQ("system-ram", attr(self->root, 0, "mode", buf));
	o = hctl_dev(r.json, "hyper0");
	EXPECT_STREQ("system-ram", hctl_str(o, "mode"));
	EXPECT_EQ(6, hctl_int(o, "memory_blocks"));
	/* The fake state reads back what was written: only 17 says online. */
	EXPECT_EQ(1, hctl_int(o, "memory_blocks_online"));
	hctl_free(&r);
	for (int b = FIRST_BLOCK; b <= LAST_BLOCK; b++)
		EXPECT_STREQ(b == 17 ? "online\n" : "online_movable", block(self->root, b, buf));
	/* Blocks outside the window are not the window's. */
	EXPECT_STREQ("offline\n", block(self->root, FIRST_BLOCK - 1, buf));
	EXPECT_STREQ("offline\n", block(self->root, LAST_BLOCK + 1, buf));
}

TEST_F(tree, mode_online_options)
{
	char buf[256];
	struct hctl r;

	ASSERT_EQ(0, fake_memblocks(self->root, 0x80000000, 0x30000000, BS));
	ASSERT_EQ(0, hctl_run(&r, "mode", "--no-online", "hyper0", "system-ram", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(0, hctl_int(hctl_dev(r.json, "hyper0"), "memory_blocks_online"));
	hctl_free(&r);
	for (int b = FIRST_BLOCK; b <= LAST_BLOCK; b++)
		EXPECT_STREQ("offline\n", block(self->root, b, buf));
	/* Already system-ram: asking again onlines what is offline. */
	ASSERT_EQ(0, hctl_run(&r, "mode", "--no-movable", "0", "system-ram", NULL));
	EXPECT_EQ(0, r.status);
	hctl_free(&r);
	for (int b = FIRST_BLOCK; b <= LAST_BLOCK; b++)
		EXPECT_STREQ("online_kernel", block(self->root, b, buf));
	ASSERT_EQ(0, hctl_run(&r, "mode", "--no-online", "--no-movable", "0",
			      "system-ram", NULL));
	EXPECT_EQ(2, r.status);
	hctl_free(&r);
	ASSERT_EQ(0, hctl_run(&r, "list", "--no-online", NULL));
	EXPECT_EQ(2, r.status);
	hctl_free(&r);
}

TEST_F(tree, mode_online_failure_switches_back)
{
	char buf[256], path[256];
	struct hctl r;

	ASSERT_EQ(0, fake_memblocks(self->root, 0x80000000, 0x30000000, BS));
	snprintf(path, sizeof(path), "%s/devices/system/memory/memory19/state",
		 self->root);
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, mkdir(path, 0755));
	ASSERT_EQ(0, hctl_run(&r, "mode", "hyper0", "system-ram", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper0: memory block 19: online_movable: Is a directory; switched back to device mode\n",
		     r.err);
	EXPECT_STREQ("device", attr(self->root, 0, "mode", buf));
	EXPECT_STREQ("device", hctl_str(hctl_dev(r.json, "hyper0"), "mode"));
	hctl_free(&r);
}

/*
 * The kernel says where a block went in valid_zones.  A block it put in
 * another zone than asked fails the switch, which is undone; under an
 * auto-online policy hyperctl turns it off for the switch and back.
 */
TEST_F(tree, mode_wrong_zone_switches_back)
{
	char buf[256];
	struct hctl r;

	ASSERT_EQ(0, fake_memblocks(self->root, 0x80000000, 0x30000000, BS));
	ASSERT_EQ(0, fake_put(self->root, "devices/system/memory/memory18/valid_zones",
			      "Normal\n"));
	ASSERT_EQ(0, fake_put(self->root, "devices/system/memory/auto_online_blocks",
			      "online\n"));
	ASSERT_EQ(0, hctl_run(&r, "mode", "hyper0", "system-ram", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper0: memory block 18: the kernel onlined it in zone Normal, not Movable; its memory hotplug policy (memory_hotplug.online_policy, movable_node, kernelcore=) does not allow that zone here; switched back to device mode\n",
		     r.err);
	EXPECT_STREQ("device", attr(self->root, 0, "mode", buf));
	hctl_free(&r);
	/* The policy was set back (the fake keeps what was written last). */
	EXPECT_STREQ("online", fake_get(self->root,
		     "devices/system/memory/auto_online_blocks", buf, sizeof(buf)));
	/* --no-movable wants a kernel zone: Normal is right. */
	ASSERT_EQ(0, hctl_run(&r, "mode", "--no-movable", "hyper0", "system-ram", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	EXPECT_EQ(0, hctl_int(hctl_dev(r.json, "hyper0"), "memory_blocks_movable"));
	hctl_free(&r);
}

TEST_F(tree, mode_switch_and_refusals)
{
	char buf[256];
	struct hctl r;

	/* Asking for the current mode writes nothing (the "\n" stays). */
	ASSERT_EQ(0, hctl_run(&r, "mode", "0", "device", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("device\n", attr(self->root, 0, "mode", buf));
	EXPECT_STREQ("device", hctl_str(hctl_dev(r.json, "hyper0"), "mode"));
	hctl_free(&r);

	/* Only the two modes are accepted, before anything is written. */
	ASSERT_EQ(0, hctl_run(&r, "mode", "hyper0", "devdax", NULL));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.err, "unknown mode 'devdax'"));
	EXPECT_STREQ("device\n", attr(self->root, 0, "mode", buf));
	hctl_free(&r);

	/* A module without the switch: a clear failure, status still shown. */
	ASSERT_EQ(0, hctl_run(&r, "mode", "hyper10", "system-ram", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper10: the loaded hyper module has no mode switch (no sysfs attribute 'mode')\n",
		     r.err);
	EXPECT_NE(NULL, hctl_dev(r.json, "hyper10"));
	hctl_free(&r);

	/* all: hyper0 switches (onlining nothing), hyper10 cannot; exit 1. */
	ASSERT_EQ(0, hctl_run(&r, "mode", "--no-online", "all", "system-ram", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("system-ram", attr(self->root, 0, "mode", buf));
	EXPECT_NE(NULL, strstr(r.err, "hyper10"));
	EXPECT_EQ(NULL, strstr(r.err, "hyper0:"));
	hctl_free(&r);
}

TEST_F(tree, reset_stats_writes_every_device)
{
	char buf[256], path[256];
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "reset-stats", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.out);
	EXPECT_STREQ("1", attr(self->root, 0, "reset_stats", buf));
	EXPECT_STREQ("1", attr(self->root, 10, "reset_stats", buf));
	hctl_free(&r);

	/* One device failing does not stop the other. */
	put_attr(self->root, 10, "reset_stats", "");
	snprintf(path, sizeof(path), "%s/class/hyper/hyper0/reset_stats", self->root);
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, mkdir(path, 0755));
	ASSERT_EQ(0, hctl_run(&r, "reset-stats", "all", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper0: reset_stats: Is a directory\n", r.err);
	EXPECT_STREQ("1", attr(self->root, 10, "reset_stats", buf));
	hctl_free(&r);
}

/* hyper0 as node 1 of a shared pool, with node 4 dead and node 2 fenced. */
static void fake_pool(const char *root)
{
	put_attr(root, 0, "pool/node_id", "1\n");
	put_attr(root, 0, "pool/state", "joined\n");
	put_attr(root, 0, "pool/uuid", "27f72164-ba2a-4060-a108-19f1b6525d6e\n");
	put_attr(root, 0, "pool/lease_ms", "10000\n");
	put_attr(root, 0, "pool/nodes",
		 "1 joined 0 4194304 2\n2 fenced -1 0 1\n4 dead 12500 6291456 1\n");
	put_attr(root, 0, "node_used", "2097152\n");
	put_attr(root, 0, "node_free", "2097152\n");
	put_attr(root, 0, "used", "12582912\n");
	put_attr(root, 0, "free", "792723456\n");
	for (const char *const *c = (const char *const[]){ "format", "join", "leave", "fence", NULL };
	     *c; c++) {
		char a[32];

		snprintf(a, sizeof(a), "pool/%s", *c);
		put_attr(root, 0, a, "");
	}
}

TEST_F(tree, pool_status_json_is_the_tree)
{
	struct json_object *o, *nodes, *n;
	struct hctl r;

	fake_pool(self->root);
	ASSERT_EQ(0, hctl_run(&r, "pool", "status", "--json", "hyper0", NULL));
	EXPECT_EQ(0, r.status);
	ASSERT_NE(NULL, r.json);
	o = hctl_dev(r.json, "hyper0");
	ASSERT_NE(NULL, o);
	EXPECT_EQ(1, hctl_int(o, "node_id"));
	EXPECT_STREQ("joined", hctl_str(o, "state"));
	EXPECT_STREQ("27f72164-ba2a-4060-a108-19f1b6525d6e", hctl_str(o, "uuid"));
	EXPECT_EQ(10000, hctl_int(o, "lease_ms"));
	EXPECT_EQ(805306368, hctl_int(o, "size"));
	EXPECT_EQ(12582912, hctl_int(o, "used"));
	EXPECT_EQ(792723456, hctl_int(o, "free"));
	EXPECT_EQ(2097152, hctl_int(o, "node_used"));
	EXPECT_EQ(2097152, hctl_int(o, "node_free"));
	ASSERT_TRUE(json_object_object_get_ex(o, "nodes", &nodes));
	ASSERT_EQ(3, json_object_array_length(nodes));
	n = json_object_array_get_idx(nodes, 2);
	EXPECT_EQ(4, hctl_int(n, "id"));
	EXPECT_STREQ("dead", hctl_str(n, "state"));
	EXPECT_EQ(12500, hctl_int(n, "lease_age_ms"));
	EXPECT_EQ(6291456, hctl_int(n, "bytes"));
	/* An unknown lease age is left out, not invented. */
	n = json_object_array_get_idx(nodes, 1);
	EXPECT_STREQ("fenced", hctl_str(n, "state"));
	EXPECT_FALSE(hctl_has(n, "lease_age_ms"));
	hctl_free(&r);

	ASSERT_EQ(0, hctl_run(&r, "pool", "status", "-H", "0", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "hyper0: node 1, joined, pool 27f72164"));
	EXPECT_NE(NULL, strstr(r.out, "12500 ms"));
	EXPECT_NE(NULL, strstr(r.out, "fenced"));
	hctl_free(&r);

	/* A bad line of pool/nodes is an error, not a guess. */
	put_attr(self->root, 0, "pool/nodes", "1 joined zero 0 1\n");
	ASSERT_EQ(0, hctl_run(&r, "pool", "status", "hyper0", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper0: pool/nodes: Invalid argument\n", r.err);
	hctl_free(&r);

	/* A module without shared pools says so. */
	ASSERT_EQ(0, hctl_run(&r, "pool", "status", "hyper10", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "no shared pools"));
	hctl_free(&r);
}

TEST_F(tree, pool_objects_json_is_the_tree)
{
	struct json_object *o, *objs, *n;
	struct hctl r;

	fake_pool(self->root);
	put_attr(self->root, 0, "pool/objects",
		 "llama.weights published 134217728 1 3\nkv.7 creating 4194304 4 1\n");
	ASSERT_EQ(0, hctl_run(&r, "pool", "objects", "hyper0", NULL));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	ASSERT_NE(NULL, r.json);
	o = hctl_dev(r.json, "hyper0");
	ASSERT_NE(NULL, o);
	ASSERT_TRUE(json_object_object_get_ex(o, "objects", &objs));
	ASSERT_EQ(2, json_object_array_length(objs));
	n = json_object_array_get_idx(objs, 0);
	EXPECT_STREQ("llama.weights", hctl_str(n, "name"));
	EXPECT_STREQ("published", hctl_str(n, "state"));
	EXPECT_EQ(134217728, hctl_int(n, "bytes"));
	EXPECT_EQ(1, hctl_int(n, "node"));
	EXPECT_EQ(3, hctl_int(n, "refs"));
	n = json_object_array_get_idx(objs, 1);
	EXPECT_STREQ("creating", hctl_str(n, "state"));
	EXPECT_EQ(4, hctl_int(n, "node"));
	hctl_free(&r);

	ASSERT_EQ(0, hctl_run(&r, "pool", "objects", "-H", "0", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "hyper0: 2 shared objects"));
	EXPECT_NE(NULL, strstr(r.out, "llama.weights"));
	EXPECT_NE(NULL, strstr(r.out, "creating"));
	hctl_free(&r);

	/* None: an empty list, not an error. */
	put_attr(self->root, 0, "pool/objects", "");
	ASSERT_EQ(0, hctl_run(&r, "pool", "objects", "hyper0", NULL));
	EXPECT_EQ(0, r.status);
	o = hctl_dev(r.json, "hyper0");
	ASSERT_NE(NULL, o);
	ASSERT_TRUE(json_object_object_get_ex(o, "objects", &objs));
	EXPECT_EQ(0, json_object_array_length(objs));
	hctl_free(&r);

	/* A bad line is an error, not a guess. */
	put_attr(self->root, 0, "pool/objects", "w published big 1 3\n");
	ASSERT_EQ(0, hctl_run(&r, "pool", "objects", "hyper0", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper0: pool/objects: Invalid argument\n", r.err);
	hctl_free(&r);

	/* A module without shared objects says so. */
	ASSERT_EQ(0, hctl_run(&r, "pool", "objects", "hyper10", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "no shared objects"));
	hctl_free(&r);
	ASSERT_EQ(0, hctl_run(&r, "pool", "join", "-H", "hyper0", NULL));
	EXPECT_EQ(2, r.status);
	hctl_free(&r);
	/* delete: a valid name and exactly one device, said before any ioctl. */
	ASSERT_EQ(0, hctl_run(&r, "pool", "delete", "a/b", "hyper0", NULL));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.err, "NAME 'a/b': want 1 to 63 characters"));
	hctl_free(&r);
	ASSERT_EQ(0, hctl_run(&r, "pool", "delete", "w", NULL));
	EXPECT_EQ(2, r.status);
	EXPECT_NE(NULL, strstr(r.err, "delete needs NAME and DEV"));
	hctl_free(&r);
	ASSERT_EQ(0, hctl_run(&r, "pool", "delete", "--force", "w", "hyper0", NULL));
	EXPECT_EQ(2, r.status);
	hctl_free(&r);
}

TEST_F(tree, pool_commands_write_their_attribute)
{
	char buf[256];
	struct hctl r;

	fake_pool(self->root);
	ASSERT_EQ(0, hctl_run(&r, "pool", "format", "hyper0", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("1", attr(self->root, 0, "pool/format", buf));
	hctl_free(&r);
	ASSERT_EQ(0, hctl_run(&r, "pool", "format", "--force", "hyper0", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("force", attr(self->root, 0, "pool/format", buf));
	hctl_free(&r);
	ASSERT_EQ(0, hctl_run(&r, "pool", "join", "0", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("1", attr(self->root, 0, "pool/join", buf));
	hctl_free(&r);
	ASSERT_EQ(0, hctl_run(&r, "pool", "leave", "hyper0", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("1", attr(self->root, 0, "pool/leave", buf));
	hctl_free(&r);
	ASSERT_EQ(0, hctl_run(&r, "pool", "fence", "4", "hyper0", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("4", attr(self->root, 0, "pool/fence", buf));
	hctl_free(&r);
	ASSERT_EQ(0, hctl_run(&r, "pool", "fence", "--force", "4", "hyper0", NULL));
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("4 force", attr(self->root, 0, "pool/fence", buf));
	hctl_free(&r);

	/* Fencing this node itself is refused before anything is written. */
	put_attr(self->root, 0, "pool/fence", "");
	ASSERT_EQ(0, hctl_run(&r, "pool", "fence", "1", "hyper0", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper0: pool fence: this node cannot fence itself: hyperctl pool leave\n",
		     r.err);
	EXPECT_STREQ("", attr(self->root, 0, "pool/fence", buf));
	hctl_free(&r);

	/* A device without pool/: one line, and the other is not written. */
	ASSERT_EQ(0, hctl_run(&r, "pool", "join", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper10: pool join: this hyper.ko has no shared pools (no pool/ in sysfs)\n",
		     r.err);
	hctl_free(&r);
}

TEST_F(tree, pool_usage_errors_exit_2)
{
	static const char *const bad[][5] = {
		{ "pool", NULL },
		{ "pool", "grow", NULL },
		{ "pool", "leave", "--force", NULL },
		{ "pool", "join", "-H", NULL },
		{ "pool", "status", "-H", "--json", NULL },
		{ "pool", "fence", NULL },
		{ "pool", "fence", "32", NULL },
		{ "pool", "fence", "-1", NULL },
		{ "pool", "fence", "two", NULL },
		{ "pool", "join", "hyper0", "extra", NULL },
	};
	char buf[256];
	struct hctl r;

	fake_pool(self->root);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(0, hctl_runv(&r, (char *const *)bad[i]));
		EXPECT_EQ(2, r.status) {
			TH_LOG("case %u: %s", i, r.err);
		}
		EXPECT_EQ(1, count_lines(r.err));
		EXPECT_STREQ("", r.out);
		hctl_free(&r);
	}
	EXPECT_STREQ("", attr(self->root, 0, "pool/join", buf));
	EXPECT_STREQ("", attr(self->root, 0, "pool/fence", buf));
}

TEST_HARNESS_MAIN
