// SPDX-License-Identifier: GPL-2.0
/*
 * hyperctl mode on the real module, in the VM: round trips between device
 * and system-ram with what the rest of the kernel then shows (/proc/iomem,
 * the node's memory, its memory tier), refusals with their messages, and
 * the state left unchanged by each refusal.
 *
 * Suite hyperctl-mode: all of CPU-less node 1 is a legacy-pmem window, as
 * a CXL expander looks (the node has no memory until the switch).  The
 * module must have the mode attribute; these tests do not skip without
 * it, they fail.
 *
 * The kernel's auto-online policy differs between Debian's kernels
 * ("offline" on 6.1, "online" on 6.12): hyperctl must put the blocks
 * where it is asked under any of them.  The suite passes the boot policy
 * in HYPER_BOOT_AUTO_ONLINE; each test starts and ends with it.
 */
#include <dirent.h>
#include <sys/mount.h>

#include "kselftest_harness.h"
#include "hyper_test.h"
#include "hctl_run.h"

#define DEV	"hyper0"

/* Whether /sys/devices/virtual/memory_tiering/memory_tierN lists nid. */
static int tier_lists(long long tier, long long nid)
{
	char path[128], list[128], *p = list;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/devices/virtual/memory_tiering/memory_tier%lld/nodelist", tier);
	f = fopen(path, "r");
	if (!f || !fgets(list, sizeof(list), f)) {
		if (f)
			fclose(f);
		return 0;
	}
	fclose(f);
	while (*p && *p != '\n') {
		long lo = strtol(p, &p, 10), hi = lo;

		if (*p == '-')
			hi = strtol(p + 1, &p, 10);
		if (nid >= lo && nid <= hi)
			return 1;
		if (*p == ',')
			p++;
		else
			break;
	}
	return 0;
}

/* The N of the memory_tierN that lists nid; -1 if none does. */
static long long tier_of(long long nid)
{
	DIR *d = opendir("/sys/devices/virtual/memory_tiering");
	struct dirent *e;
	long long tier = -1;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "memory_tier", 11) &&
		    tier_lists(atoll(e->d_name + 11), nid))
			tier = atoll(e->d_name + 11);
	closedir(d);
	return tier;
}

#define HOLD	"/sys/kernel/debug/hyper/hyper0/hold_pages"

static long long block_size(void)
{
	FILE *f = fopen("/sys/devices/system/memory/block_size_bytes", "r");
	long long bs = -1;

	if (f) {
		if (fscanf(f, "%llx", &bs) != 1)
			bs = -1;
		fclose(f);
	}
	return bs;
}

static int write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fputs(val, f) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/* hyperctl mode [OPTION] DEV want, which must succeed. */
static void mode_opt(struct __test_metadata *_metadata, const char *opt,
		     const char *want, struct hctl *r)
{
	char buf[32];

	if (opt) {
		ASSERT_EQ(0, hctl_run(r, "mode", opt, DEV, want, NULL));
	} else {
		ASSERT_EQ(0, hctl_run(r, "mode", DEV, want, NULL));
	}
	ASSERT_EQ(0, r->status) {
		TH_LOG("mode %s: %s", want, r->err);
	}
	EXPECT_STREQ("", r->err);
	EXPECT_STREQ(want, hctl_str(hctl_dev(r->json, DEV), "mode"));
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", buf, sizeof(buf)));
	EXPECT_STREQ(want, buf);
}

static void mode_ok(struct __test_metadata *_metadata, const char *want,
		    struct hctl *r)
{
	mode_opt(_metadata, NULL, want, r);
}

/* The node's MemTotal as hyperctl shows it; a node not online has none. */
static long long node_total(struct json_object *status)
{
	struct json_object *node;

	if (!json_object_object_get_ex(hctl_dev(status, DEV), "node", &node))
		return 0;
	return hctl_int(node, "mem_total");
}

#define AUTO_ONLINE	"/sys/devices/system/memory/auto_online_blocks"

static const char *boot_policy(void)
{
	const char *p = getenv("HYPER_BOOT_AUTO_ONLINE");

	return p && *p ? p : "offline";
}

static void policy_is(struct __test_metadata *_metadata, const char *want)
{
	char now[32];

	ASSERT_EQ(0, hyper_read_file(AUTO_ONLINE, now, sizeof(now)));
	EXPECT_STREQ(want, now);
}

FIXTURE(mode) {
	long long size, nid, block;
};

FIXTURE_SETUP(mode)
{
	char buf[32];

	ASSERT_EQ(0, hyper_module_ensure());
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", buf, sizeof(buf)));
	if (strcmp(buf, "device"))
		ASSERT_EQ(0, hyper_sysfs_write(0, "mode", "device"));
	self->size = hyper_sysfs_ll(0, "size");
	self->nid = hyper_sysfs_ll(0, "numa_node");
	self->block = block_size();
	ASSERT_LT(0, self->block);
	ASSERT_LT(0, self->size);
	ASSERT_LE(0, self->nid);
	ASSERT_NE(NULL, getenv("HYPER_BOOT_AUTO_ONLINE"));
	ASSERT_EQ(0, write_file(AUTO_ONLINE, boot_policy()));
}

FIXTURE_TEARDOWN(mode)
{
	char buf[32];

	if (!hyper_sysfs_read(0, "mode", buf, sizeof(buf)) &&
	    strcmp(buf, "device"))
		EXPECT_EQ(0, hyper_sysfs_write(0, "mode", "device"));
	umount2(AUTO_ONLINE, MNT_DETACH);
	write_file(AUTO_ONLINE, boot_policy());
}

/*
 * Movable by default, whatever the kernel's policy; hyperctl turns the
 * policy off for its switch only, and the node is in its tier below
 * DRAM each time.
 */
TEST_F(mode, movable_under_every_auto_online_policy)
{
	static const char *const policies[] = {
		"offline", "online", "online_kernel", "online_movable",
	};
	long long blocks = self->size / self->block;
	struct json_object *o, *node;
	struct hctl r;

	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++) {
		ASSERT_EQ(0, write_file(AUTO_ONLINE, policies[i]));
		mode_ok(_metadata, "system-ram", &r);
		o = hctl_dev(r.json, DEV);
		EXPECT_EQ(blocks, hctl_int(o, "memory_blocks_online"));
		EXPECT_EQ(blocks, hctl_int(o, "memory_blocks_movable")) {
			TH_LOG("policy %s", policies[i]);
		}
		ASSERT_TRUE(json_object_object_get_ex(o, "node", &node));
		EXPECT_LT(tier_of(0), hctl_int(node, "tier")) {
			TH_LOG("policy %s", policies[i]);
		}
		hctl_free(&r);
		policy_is(_metadata, policies[i]);
		mode_ok(_metadata, "device", &r);
		EXPECT_EQ(0, hyper_iomem_count("System RAM (hyper)"));
		hctl_free(&r);
	}
}

/* --no-movable and --no-online hold under a policy that differs. */
TEST_F(mode, options_under_auto_online)
{
	long long blocks = self->size / self->block;
	struct hctl r;

	ASSERT_EQ(0, write_file(AUTO_ONLINE, "online_movable"));
	mode_opt(_metadata, "--no-movable", "system-ram", &r);
	EXPECT_EQ(blocks, hctl_int(hctl_dev(r.json, DEV), "memory_blocks_online"));
	EXPECT_EQ(0, hctl_int(hctl_dev(r.json, DEV), "memory_blocks_movable"));
	hctl_free(&r);
	mode_ok(_metadata, "device", &r);
	hctl_free(&r);
	ASSERT_EQ(0, write_file(AUTO_ONLINE, "online"));
	mode_opt(_metadata, "--no-online", "system-ram", &r);
	EXPECT_EQ(0, hctl_int(hctl_dev(r.json, DEV), "memory_blocks_online"));
	hctl_free(&r);
	policy_is(_metadata, "online");
	mode_ok(_metadata, "device", &r);
	hctl_free(&r);
}

/*
 * Blocks the kernel onlined itself (the sysfs mode written by hand under
 * 6.12's policy) are reported, moved to ZONE_MOVABLE when hyperctl is
 * asked for system-ram, and the way back works from either state.
 */
TEST_F(mode, blocks_already_online_are_reported_and_moved)
{
	long long blocks = self->size / self->block;
	char want[160];
	struct hctl r;

	for (int move = 0; move < 2; move++) {
		ASSERT_EQ(0, write_file(AUTO_ONLINE, "online"));
		ASSERT_EQ(0, hyper_sysfs_write(0, "mode", "system-ram"));
		ASSERT_EQ(0, hctl_run(&r, "status", DEV, NULL));
		EXPECT_EQ(blocks, hctl_int(hctl_dev(r.json, DEV), "memory_blocks_online"));
		EXPECT_EQ(0, hctl_int(hctl_dev(r.json, DEV), "memory_blocks_movable"));
		hctl_free(&r);
		if (move) {
			ASSERT_EQ(0, hctl_run(&r, "mode", DEV, "system-ram", NULL));
			EXPECT_EQ(0, r.status);
			snprintf(want, sizeof(want),
				 "hyperctl: hyper0: %lld memory blocks were online in the other kind of zone; moved them (online_movable)\n",
				 blocks);
			EXPECT_STREQ(want, r.err);
			EXPECT_EQ(blocks, hctl_int(hctl_dev(r.json, DEV), "memory_blocks_movable"));
			hctl_free(&r);
		}
		mode_ok(_metadata, "device", &r);
		EXPECT_EQ(0, hyper_iomem_count("System RAM (hyper)"));
		hctl_free(&r);
	}
}

/*
 * A policy that would put the blocks elsewhere and that hyperctl cannot
 * change (here a read-only file bound over it): refused, nothing changed.
 */
TEST_F(mode, refused_when_the_policy_cannot_be_changed)
{
	const char *fake = "/tmp/auto_online_blocks";
	char buf[32];
	struct hctl r;

	ASSERT_EQ(0, write_file(fake, "online\n"));
	ASSERT_EQ(0, mount(fake, AUTO_ONLINE, NULL, MS_BIND, NULL));
	ASSERT_EQ(0, mount(NULL, AUTO_ONLINE, NULL,
			   MS_REMOUNT | MS_BIND | MS_RDONLY, NULL));
	ASSERT_EQ(0, hctl_run(&r, "mode", DEV, "system-ram", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper0: the kernel onlines hot-added memory itself (auto_online_blocks is 'online'), which is not what was asked, and hyperctl cannot turn that off (Read-only file system); nothing changed. Write offline to /sys/devices/system/memory/auto_online_blocks or boot with memhp_default_state=offline\n",
		     r.err);
	EXPECT_STREQ("device", hctl_str(hctl_dev(r.json, DEV), "mode"));
	hctl_free(&r);
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", buf, sizeof(buf)));
	EXPECT_STREQ("device", buf);
	EXPECT_EQ(0, hyper_iomem_count("System RAM (hyper)"));
	ASSERT_EQ(0, umount2(AUTO_ONLINE, MNT_DETACH));
}

TEST_F(mode, round_trips)
{
	const char *env = getenv("HYPER_MODE_ROUNDS");
	int rounds = env ? atoi(env) : 5;
	long long total0, total, blocks = self->size / self->block;
	struct json_object *o, *node;
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "status", DEV, NULL));
	ASSERT_EQ(0, r.status);
	EXPECT_STREQ("device", hctl_str(hctl_dev(r.json, DEV), "mode"));
	EXPECT_FALSE(hctl_has(hctl_dev(r.json, DEV), "memory_blocks"));
	total0 = node_total(r.json);
	hctl_free(&r);
	for (int i = 0; i < rounds; i++) {
		mode_ok(_metadata, "system-ram", &r);
		EXPECT_EQ(1, hyper_iomem_count("System RAM (hyper)"));
		o = hctl_dev(r.json, DEV);
		/* hyperctl onlined every block of the window... */
		EXPECT_EQ(blocks, hctl_int(o, "memory_blocks"));
		EXPECT_EQ(blocks, hctl_int(o, "memory_blocks_online"));
		/* ...so the node grew by (nearly all of) it... */
		total = node_total(r.json);
		EXPECT_LE(total0 + self->size / 2, total) {
			TH_LOG("round %d: node %lld MemTotal %lld -> %lld", i,
			       self->nid, total0, total);
		}
		/* ...in a memory tier below DRAM's, which hyperctl names. */
		ASSERT_TRUE(json_object_object_get_ex(o, "node", &node));
		EXPECT_EQ(1, tier_lists(hctl_int(node, "tier"), self->nid));
		EXPECT_LT(tier_of(0), hctl_int(node, "tier"));
		EXPECT_LT(576, hctl_int(o, "memory_tier"));
		hctl_free(&r);

		mode_ok(_metadata, "device", &r);
		EXPECT_EQ(0, hyper_iomem_count("System RAM (hyper)"));
		EXPECT_FALSE(hctl_has(hctl_dev(r.json, DEV), "memory_blocks"));
		EXPECT_EQ(total0, node_total(r.json)) {
			TH_LOG("round %d: node memory not given back", i);
		}
		hctl_free(&r);
	}
}

TEST_F(mode, no_online_leaves_the_blocks_offline)
{
	long long blocks = self->size / self->block, total0;
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "status", DEV, NULL));
	total0 = node_total(r.json);
	hctl_free(&r);
	mode_opt(_metadata, "--no-online", "system-ram", &r);
	EXPECT_EQ(blocks, hctl_int(hctl_dev(r.json, DEV), "memory_blocks"));
	EXPECT_EQ(0, hctl_int(hctl_dev(r.json, DEV), "memory_blocks_online"));
	EXPECT_EQ(total0, node_total(r.json));
	hctl_free(&r);
	/* Asking again onlines them. */
	mode_ok(_metadata, "system-ram", &r);
	EXPECT_EQ(blocks, hctl_int(hctl_dev(r.json, DEV), "memory_blocks_online"));
	hctl_free(&r);
	mode_ok(_metadata, "device", &r);
	hctl_free(&r);
}

/*
 * Kernel pages on the window (onlined for the kernel, then taken with the
 * module's debugfs hold_pages) make the way back impossible: hyperctl
 * says so, and the window stays System RAM until they are given back.
 */
TEST_F_TIMEOUT(mode, offline_failure_is_reported, 120)
{
	struct hctl r;

	mode_opt(_metadata, "--no-movable", "system-ram", &r);
	hctl_free(&r);
	ASSERT_EQ(0, write_file(HOLD, "16"));
	ASSERT_EQ(0, hctl_run(&r, "mode", DEV, "device", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper0: cannot go back to device mode: pages of the window are in use and could not be offlined; nothing changed (Device or resource busy)\n",
		     r.err);
	EXPECT_STREQ("system-ram", hctl_str(hctl_dev(r.json, DEV), "mode"));
	EXPECT_EQ(1, hyper_iomem_count("System RAM (hyper)"));
	hctl_free(&r);
	ASSERT_EQ(0, write_file(HOLD, "0"));
	mode_ok(_metadata, "device", &r);
	hctl_free(&r);
}

TEST_F(mode, asking_for_the_current_mode_succeeds)
{
	struct hctl r;

	mode_ok(_metadata, "device", &r);
	hctl_free(&r);
	mode_ok(_metadata, "system-ram", &r);
	hctl_free(&r);
	mode_ok(_metadata, "system-ram", &r);
	hctl_free(&r);
	mode_ok(_metadata, "device", &r);
	hctl_free(&r);
}

TEST_F(mode, refused_while_a_region_exists)
{
	char buf[32];
	struct hctl r;
	uint32_t h;
	int fd;

	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hyper_alloc(fd, 2 * MiB, 0, &h, NULL));
	ASSERT_EQ(0, hctl_run(&r, "mode", DEV, "system-ram", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err,
		"hyperctl: hyper0: cannot switch to system-ram while the pool is in use (1 regions")) {
		TH_LOG("%s", r.err);
	}
	EXPECT_NE(NULL, strstr(r.err, "Device or resource busy"));
	/* Nothing changed, and the status printed says so. */
	EXPECT_STREQ("device", hctl_str(hctl_dev(r.json, DEV), "mode"));
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", buf, sizeof(buf)));
	EXPECT_STREQ("device", buf);
	EXPECT_EQ(0, hyper_iomem_count("System RAM (hyper)"));
	hctl_free(&r);

	/* Once the region is gone, the switch goes through. */
	EXPECT_EQ(0, hyper_free(fd, h));
	close(fd);
	mode_ok(_metadata, "system-ram", &r);
	hctl_free(&r);
	mode_ok(_metadata, "device", &r);
	hctl_free(&r);
}

TEST_F(mode, unknown_mode_is_a_usage_error)
{
	char buf[32];
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "mode", DEV, "ram", NULL));
	EXPECT_EQ(2, r.status);
	EXPECT_STREQ("", r.out);
	hctl_free(&r);
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", buf, sizeof(buf)));
	EXPECT_STREQ("device", buf);
}

TEST_F(mode, human_status_shows_the_mode)
{
	struct hctl r;

	ASSERT_EQ(0, hctl_run(&r, "mode", "-H", DEV, "system-ram", NULL));
	ASSERT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "  mode:          system-ram\n"));
	hctl_free(&r);
	ASSERT_EQ(0, hctl_run(&r, "list", "-H", NULL));
	EXPECT_NE(NULL, strstr(r.out, "hyper0  system-ram  window"));
	hctl_free(&r);
}

TEST_F(mode, emulated_pool_is_refused)
{
	char buf[32];
	struct hctl r;

	ASSERT_EQ(0, hyper_module_unload());
	/* Node 1 is all window: the pages come from node 0. */
	ASSERT_EQ(0, hyper_module_load("emulate_size=0x4000000 emulate_node=0"));
	ASSERT_EQ(0, hctl_run(&r, "mode", DEV, "system-ram", NULL));
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("hyperctl: hyper0: only a firmware window can become System RAM; an emulated pool is RAM already (Operation not supported)\n",
		     r.err);
	EXPECT_STREQ("emulated", hctl_str(hctl_dev(r.json, DEV), "source"));
	EXPECT_STREQ("device", hctl_str(hctl_dev(r.json, DEV), "mode"));
	hctl_free(&r);
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", buf, sizeof(buf)));
	EXPECT_STREQ("device", buf);
	ASSERT_EQ(0, hyper_module_unload());
	ASSERT_EQ(0, hyper_module_load(hyper_modparams()));
}

TEST_HARNESS_MAIN
