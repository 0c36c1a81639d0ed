// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters: bad pool sources fail the load with a clear message
 * and leave nothing behind; good ones give the pool they describe.
 *
 * Built twice: with WITH_WINDOW=1 for suites that boot with a firmware
 * window, which HYPER_WINDOW="start:size" names, and with WITH_WINDOW=0
 * for suites that have none.  The module is reloaded with HYPER_MODPARAMS
 * after every test.
 */
#include <dirent.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "hyper_test.h"

#if WITH_WINDOW
static int window(uint64_t *start, uint64_t *size)
{
	const char *w = getenv("HYPER_WINDOW");
	char *end;

	if (!w)
		return -ENOENT;
	*start = strtoull(w, &end, 0);
	*size = strtoull(end + 1, NULL, 0);
	return 0;
}
#endif

FIXTURE(mod) {};

FIXTURE_SETUP(mod)
{
	if (hyper_module_loaded())
		ASSERT_EQ(0, hyper_module_unload());
}

FIXTURE_TEARDOWN(mod)
{
	if (hyper_module_loaded())
		EXPECT_EQ(0, hyper_module_unload());
	EXPECT_EQ(0, hyper_module_load(hyper_modparams()));
}

/* A refused load: errno, one new log line saying why, no residue. */
static void refused(struct __test_metadata *_metadata, const char *params,
		    int err, const char *why)
{
	int before = hyper_dmesg_count(why);

	EXPECT_EQ(err, hyper_module_load(params)) {
		TH_LOG("params '%s'", params);
	}
	EXPECT_EQ(before + 1, hyper_dmesg_count(why)) {
		TH_LOG("no '%s' in dmesg for '%s'", why, params);
	}
	EXPECT_FALSE(hyper_module_loaded());
	EXPECT_EQ(-1, access("/dev/hyper0", F_OK));
	EXPECT_EQ(0, hyper_class_entries());
	EXPECT_EQ(0, hyper_iomem_count("hyper"));
}

TEST_F(mod, window_overlapping_system_ram)
{
	refused(_metadata, "window_start=0x100000 window_size=0x100000",
		-EINVAL, "overlaps System RAM");
}

TEST_F(mod, window_absent)
{
	refused(_metadata, "window_start=0x4000000000 window_size=0x40000000",
		-EINVAL, "not wholly inside");
}

TEST_F(mod, window_unaligned)
{
	refused(_metadata, "window_start=0x80000800 window_size=0x100000",
		-EINVAL, "must be page aligned");
	refused(_metadata, "window_start=0x80000000 window_size=0x1800",
		-EINVAL, "must be page aligned");
}

TEST_F(mod, window_and_emulation_together)
{
	refused(_metadata,
		"window_start=0x80000000 window_size=0x100000 emulate_size=0x4000000",
		-EINVAL, "exclude each other");
}

TEST_F(mod, emulated_bad_size_and_node)
{
	refused(_metadata, "emulate_size=0x300000", -EINVAL,
		"must be a non-zero multiple");
	refused(_metadata, "emulate_size=0x4000000 emulate_node=9", -EINVAL,
		"is not a node with memory");
	refused(_metadata, "emulate_size=0x1000000000 emulate_node=1", -ENOMEM,
		"emulated pool: node 1 gave");
}

#if WITH_WINDOW
TEST_F(mod, window_straddling_reserved_range_and_ram)
{
	uint64_t start, size;
	char p[128];

	/* The window's neighbours are RAM: half in, half out is refused. */
	ASSERT_EQ(0, window(&start, &size));
	snprintf(p, sizeof(p), "window_start=%#llx window_size=%#llx",
		 (unsigned long long)(start + size - MiB),
		 (unsigned long long)(2 * MiB));
	refused(_metadata, p, -EINVAL, "overlaps System RAM");
	snprintf(p, sizeof(p), "window_start=%#llx window_size=%#llx",
		 (unsigned long long)(start - MiB),
		 (unsigned long long)(2 * MiB));
	refused(_metadata, p, -EINVAL, "overlaps System RAM");
}

TEST_F(mod, named_subwindow)
{
	uint64_t start, size;
	char p[128], buf[64];

	ASSERT_EQ(0, window(&start, &size));
	snprintf(p, sizeof(p), "window_start=%#llx window_size=%#llx",
		 (unsigned long long)(start + 256 * MiB),
		 (unsigned long long)(256 * MiB));
	ASSERT_EQ(0, hyper_module_load(p));
	ASSERT_EQ(0, hyper_sysfs_read(0, "origin", buf, sizeof(buf)));
	EXPECT_STREQ("parameter", buf);
	EXPECT_EQ(256 * MiB, hyper_sysfs_ll(0, "size"));
	EXPECT_EQ((long long)(start + 256 * MiB),
		  hyper_sysfs_ll(0, "phys_base"));
	EXPECT_EQ(1, hyper_iomem_count(": hyper"));
	ASSERT_EQ(0, hyper_module_unload());
	EXPECT_EQ(0, hyper_iomem_count("hyper"));
}

#else
TEST_F(mod, no_window_and_no_parameters)
{
	refused(_metadata, "", -ENODEV, "no soft-reserved or legacy-pmem window found");
}
#endif

TEST_F(mod, emulated_pool_on_node_1)
{
	uint64_t off;
	char buf[64];
	uint8_t *p;
	int fd;

	/*
	 * The module's own accounting, not the node's free memory, which
	 * the rest of the machine moves as well: the pool says where its
	 * pages came from (taken with __GFP_THISNODE, so never elsewhere),
	 * how big it is and how much of it is handed out.
	 */
	ASSERT_EQ(0, hyper_module_load("emulate_size=0x4000000 emulate_node=1"));
	ASSERT_EQ(0, hyper_sysfs_read(0, "source", buf, sizeof(buf)));
	EXPECT_STREQ("emulated", buf);
	EXPECT_EQ(1, hyper_sysfs_ll(0, "numa_node"));
	EXPECT_EQ(64 * MiB, hyper_sysfs_ll(0, "size"));
	EXPECT_EQ(0, hyper_sysfs_ll(0, "phys_base"));
	EXPECT_EQ(0, hyper_sysfs_ll(0, "used"));
	/* Ordinary RAM already: there is nothing to hot-add. */
	EXPECT_EQ(-EOPNOTSUPP, hyper_sysfs_write(0, "mode", "system-ram"));
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", buf, sizeof(buf)));
	EXPECT_STREQ("device", buf);
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hyper_alloc(fd, 8 * MiB, 0, NULL, &off));
	EXPECT_EQ(8 * MiB, hyper_sysfs_ll(0, "used"));
	p = mmap(NULL, 8 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0xee, 8 * MiB);
	EXPECT_EQ(0xee, p[8 * MiB - 1]);
	munmap(p, 8 * MiB);
	close(fd);
	EXPECT_EQ(0, hyper_sysfs_ll(0, "used"));
	ASSERT_EQ(0, hyper_module_unload());
	EXPECT_EQ(0, hyper_iomem_count("hyper"));
}

TEST_HARNESS_MAIN
