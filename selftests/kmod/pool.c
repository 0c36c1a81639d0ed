// SPDX-License-Identifier: GPL-2.0
/*
 * A pool shared by several nodes, seen from one guest
 * (Documentation/supernode.md): format, join, leave, fence and status
 * through /sys/class/hyper/hyper0/pool/, and each refusal by its errno
 * and its one line in the log.  Another node is played by the module
 * loaded again with another node_id: an unload without leave is what a
 * crash looks like to the others.
 *
 * Needs a window (the module is reloaded and the pool memory must stay):
 * run in a suite with one, whose HYPER_MODPARAMS load it standalone.  The
 * suite's module is loaded again after every test.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "hyper_test.h"

#define POOL		"pool/"
#define SB_SIZE		4096
#define SB_VERSION	8	/* offset of the format version */
#define SB_UUID		40	/* offset of the UUID */

FIXTURE(pool) {};

FIXTURE_SETUP(pool)
{
	if (hyper_module_loaded())
		ASSERT_EQ(0, hyper_module_unload());
}

FIXTURE_TEARDOWN(pool)
{
	if (hyper_module_loaded())
		EXPECT_EQ(0, hyper_module_unload());
	EXPECT_EQ(0, hyper_module_load(hyper_modparams()));
}

static int load_node(int node, unsigned int lease_ms)
{
	char params[512];

	snprintf(params, sizeof(params), "%s node_id=%d lease_ms=%u",
		 hyper_modparams(), node, lease_ms);
	return hyper_module_load(params);
}

static int cmd(const char *attr, const char *val)
{
	char a[64];

	snprintf(a, sizeof(a), POOL "%s", attr);
	return hyper_sysfs_write(0, a, val);
}

static const char *state(void)
{
	static char buf[64];

	if (hyper_sysfs_read(0, POOL "state", buf, sizeof(buf)))
		return "(unreadable)";
	return buf;
}

/* Node @node's line of pool/nodes: its state and bytes; -ENOENT if none. */
static int node_line(int node, char *st, size_t len, long long *age,
		     unsigned long long *held)
{
	char buf[4096], *line, *save = NULL;
	int ret = hyper_sysfs_read(0, POOL "nodes", buf, sizeof(buf));

	if (ret)
		return ret;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char s[32];
		unsigned long long h, gen;
		long long a;
		int id;

		if (sscanf(line, "%d %31s %lld %llu %llu", &id, s, &a, &h,
			   &gen) == 5 && id == node) {
			snprintf(st, len, "%s", s);
			*age = a;
			*held = h;
			return 0;
		}
	}
	return -ENOENT;
}

/* A refused command: its errno and one more line in the log saying why. */
#define REFUSED(attr, val, err, why) do {				\
	int before_ = hyper_dmesg_count(why);				\
									\
	EXPECT_EQ(err, cmd(attr, val)) {				\
		TH_LOG("%s <- '%s'", attr, val);			\
	}								\
	EXPECT_EQ(before_ + 1, hyper_dmesg_count(why)) {		\
		TH_LOG("no '%s' in the log", why);			\
	}								\
} while (0)

static unsigned long long ull(const char *attr)
{
	return (unsigned long long)hyper_sysfs_ll(0, attr);
}

/* Bytes of the leading chunks that hold the metadata: 2 MiB here. */
#define META		(2 * MiB)

TEST_F(pool, standalone_has_no_pool_commands)
{
	char buf[64];

	ASSERT_EQ(0, hyper_module_load(hyper_modparams()));
	EXPECT_STREQ("standalone", state());
	ASSERT_EQ(0, hyper_sysfs_read(0, POOL "node_id", buf, sizeof(buf)));
	EXPECT_STREQ("-1", buf);
	REFUSED("format", "1", -ENODEV, "the module was loaded without node_id");
	EXPECT_EQ(ull("used"), ull("node_used"));
	EXPECT_EQ(ull("free"), ull("node_free"));
}

TEST_F(pool, bad_node_id_and_lease_refuse_the_load)
{
	int before = hyper_dmesg_count("node_id 32 refused");

	EXPECT_EQ(-EINVAL, load_node(32, 10000));
	EXPECT_EQ(before + 1, hyper_dmesg_count("node_id 32 refused"));
	EXPECT_FALSE(hyper_module_loaded());
	EXPECT_EQ(-EINVAL, load_node(1, 5));
	EXPECT_FALSE(hyper_module_loaded());
}

TEST_F(pool, format_join_alloc_leave)
{
	unsigned long long size, held;
	struct hyper_pool_info info;
	uint32_t h1, h2;
	char st[32], uuid[64];
	long long age;
	int fd;

	ASSERT_EQ(0, load_node(1, 10000));
	size = ull("size");
	/* Unformatted: nothing but format. */
	EXPECT_STREQ("unformatted", state());
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENODEV, hyper_alloc(fd, 2 * MiB, 0, &h1, NULL));
	REFUSED("join", "1", -ENODATA, "join refused: the pool is not formatted");
	REFUSED("leave", "1", -ENOTCONN, "leave refused: node 1 has not joined");
	REFUSED("fence", "2", -ENOTCONN, "fence refused: node 1 has not joined");
	EXPECT_EQ(-EINVAL, cmd("format", "yes"));
	EXPECT_EQ(-EINVAL, cmd("join", "2"));
	EXPECT_EQ(-EINVAL, cmd("leave", "0"));

	ASSERT_EQ(0, cmd("format", "1"));
	EXPECT_STREQ("formatted", state());
	ASSERT_EQ(0, hyper_sysfs_read(0, POOL "uuid", uuid, sizeof(uuid)));
	EXPECT_EQ(36, strlen(uuid));
	EXPECT_EQ(META, ull("used"));
	EXPECT_EQ(size - META, ull("free"));
	REFUSED("format", "1", -EEXIST, "format refused: the pool is formatted already");
	EXPECT_EQ(-ENODEV, hyper_alloc(fd, 2 * MiB, 0, &h1, NULL));

	ASSERT_EQ(0, cmd("join", "1"));
	EXPECT_STREQ("joined", state());
	REFUSED("join", "1", -EALREADY, "join refused: node 1 is joined already");
	REFUSED("format", "1", -EBUSY, "format refused: this node (1) is joined");
	REFUSED("fence", "1", -EINVAL, "fence refused: node 1 cannot fence itself");
	REFUSED("fence", "7", -ENOENT, "fence refused: node 7 is not joined and holds nothing");
	EXPECT_EQ(-EINVAL, cmd("fence", "32"));
	EXPECT_EQ(-EINVAL, cmd("fence", "1 now"));
	EXPECT_EQ(-EOPNOTSUPP, hyper_sysfs_write(0, "mode", "system-ram"));

	/* Regions come from this node's chunks, never the metadata's. */
	ASSERT_EQ(0, hyper_alloc(fd, 3 * MiB, 0, &h1, NULL));
	ASSERT_EQ(0, hyper_alloc(fd, 1 * MiB, 0, &h2, NULL));
	EXPECT_EQ(4 * MiB, ull("node_used"));
	EXPECT_EQ(META + 4 * MiB, ull("used"));
	EXPECT_EQ(0, ull("node_free"));
	ASSERT_EQ(0, hyper_info(fd, &info));
	EXPECT_EQ(size - META - 4 * MiB, info.free);
	ASSERT_EQ(0, node_line(1, st, sizeof(st), &age, &held));
	EXPECT_STREQ("joined", st);
	EXPECT_EQ(0, age);
	EXPECT_EQ(4 * MiB, held);
	REFUSED("leave", "1", -EBUSY, "leave refused: 2 regions of node 1 still exist");

	/* Freed regions' chunks stay this node's until it leaves. */
	EXPECT_EQ(0, hyper_free(fd, h1));
	EXPECT_EQ(0, hyper_free(fd, h2));
	EXPECT_EQ(0, ull("node_used"));
	EXPECT_EQ(4 * MiB, ull("node_free"));
	EXPECT_EQ(META + 4 * MiB, ull("used"));
	ASSERT_EQ(0, cmd("leave", "1"));
	EXPECT_STREQ("formatted", state());
	EXPECT_EQ(META, ull("used"));
	ASSERT_EQ(0, node_line(1, st, sizeof(st), &age, &held));
	EXPECT_STREQ("left", st);
	EXPECT_EQ(0, held);
	EXPECT_EQ(-ENODEV, hyper_alloc(fd, 2 * MiB, 0, &h1, NULL));

	/* And back, to the same pool. */
	ASSERT_EQ(0, cmd("join", "1"));
	ASSERT_EQ(0, hyper_alloc(fd, 2 * MiB, HYPER_ALLOC_HUGE_ALIGN, &h1,
				 NULL));
	EXPECT_EQ(0, hyper_free(fd, h1));
	ASSERT_EQ(0, cmd("leave", "1"));
	close(fd);
}

/*
 * Many regions of mixed sizes, from several threads' worth of handles:
 * every one lies in chunks past the metadata, none overlaps another, the
 * node holds whole chunks covering them, and leave gives them all back.
 */
TEST_F(pool, regions_carve_this_nodes_chunks)
{
	enum { NR = 60 };
	uint64_t off[NR], size[NR];
	uint32_t h[NR];
	unsigned long long sum = 0, held;
	char st[32];
	long long age;
	int fd, i, j;

	ASSERT_EQ(0, load_node(5, 10000));
	ASSERT_EQ(0, cmd("format", "force"));
	ASSERT_EQ(0, cmd("join", "1"));
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	for (i = 0; i < NR; i++) {
		uint64_t sz = (uint64_t)(1 + (i * 7) % 23) * 256 * 1024;

		ASSERT_EQ(0, hyper_alloc(fd, sz, i % 5 ? 0 : HYPER_ALLOC_HUGE_ALIGN,
					 &h[i], NULL));
		ASSERT_EQ(0, hyper_debugfs_region(0, getpid(), h[i], &off[i],
						  &size[i]));
		EXPECT_LE(META, off[i]);
		sum += sz;
		/* Free some as we go, so that later ones reuse the space. */
		if (i % 3 == 2) {
			EXPECT_EQ(0, hyper_free(fd, h[i - 1]));
			sum -= size[i - 1];
			size[i - 1] = 0;
		}
	}
	for (i = 0; i < NR; i++)
		for (j = i + 1; j < NR; j++)
			if (size[i] && size[j])
				EXPECT_TRUE(off[i] + size[i] <= off[j] ||
					    off[j] + size[j] <= off[i]) {
					TH_LOG("regions %d and %d overlap", i, j);
				}
	EXPECT_EQ(sum, ull("node_used"));
	ASSERT_EQ(0, node_line(5, st, sizeof(st), &age, &held));
	EXPECT_EQ(0, held % (2 * MiB));
	EXPECT_LE(sum, held);
	EXPECT_EQ(held - sum, ull("node_free"));
	EXPECT_EQ(META + held, ull("used"));
	close(fd);
	ASSERT_EQ(0, cmd("leave", "1"));
	EXPECT_EQ(META, ull("used"));
}

/*
 * Node 1 crashes (is unloaded without leaving) holding chunks; node 2
 * sees it joined, refuses to fence it within its lease, sees it dead
 * after it, and fences it: exactly its chunks come back.  Node 2 then
 * crashes too, and node 1 fences it with --force.
 */
TEST_F(pool, crashed_node_is_fenced)
{
	unsigned long long held;
	char st[32];
	uint32_t h;
	long long age;
	int fd;

	ASSERT_EQ(0, load_node(1, 600000));
	ASSERT_EQ(0, cmd("format", "force"));
	ASSERT_EQ(0, cmd("join", "1"));
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hyper_alloc(fd, 6 * MiB, 0, &h, NULL));
	close(fd);
	ASSERT_EQ(0, hyper_module_unload());

	ASSERT_EQ(0, load_node(2, 600000));
	EXPECT_STREQ("formatted", state());
	EXPECT_EQ(META + 6 * MiB, ull("used"));
	ASSERT_EQ(0, cmd("join", "1"));
	ASSERT_EQ(0, node_line(1, st, sizeof(st), &age, &held));
	EXPECT_STREQ("joined", st);
	EXPECT_EQ(6 * MiB, held);
	REFUSED("fence", "1", -EBUSY, "fence refused: node 1's heartbeat moved");

	/* A lease of a second: node 1's heartbeat has stood still longer. */
	ASSERT_EQ(0, hyper_write_file("/sys/module/hyper/parameters/lease_ms",
				      "1000"));
	EXPECT_EQ(-EINVAL,
		  hyper_write_file("/sys/module/hyper/parameters/lease_ms",
				   "999"));
	usleep(1200 * 1000);
	ASSERT_EQ(0, node_line(1, st, sizeof(st), &age, &held));
	EXPECT_STREQ("dead", st);
	EXPECT_LE(1000, age);
	ASSERT_EQ(0, cmd("fence", "1"));
	ASSERT_EQ(0, node_line(1, st, sizeof(st), &age, &held));
	EXPECT_STREQ("fenced", st);
	EXPECT_EQ(0, held);
	EXPECT_EQ(META, ull("used"));
	REFUSED("fence", "1", -ENOENT, "fence refused: node 1 is not joined and holds nothing");

	/* Node 2 takes chunks, then crashes too. */
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hyper_alloc(fd, 4 * MiB, 0, &h, NULL));
	close(fd);
	ASSERT_EQ(0, hyper_module_unload());

	/* Node 1 comes back: its fenced slot is free to take at once. */
	ASSERT_EQ(0, load_node(1, 600000));
	ASSERT_EQ(0, cmd("join", "1"));
	EXPECT_EQ(META + 4 * MiB, ull("used"));
	REFUSED("fence", "2", -EBUSY, "fence refused: node 2's heartbeat moved");
	ASSERT_EQ(0, cmd("fence", "2 force"));
	ASSERT_EQ(0, node_line(2, st, sizeof(st), &age, &held));
	EXPECT_STREQ("fenced", st);
	EXPECT_EQ(META, ull("used"));
	ASSERT_EQ(0, cmd("leave", "1"));
}

/* A node unloaded while joined takes its own slot back after a lease. */
TEST_F(pool, rejoin_after_crash_reclaims_own_chunks)
{
	uint32_t h;
	int fd;

	ASSERT_EQ(0, load_node(3, 1000));
	ASSERT_EQ(0, cmd("format", "force"));
	ASSERT_EQ(0, cmd("join", "1"));
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hyper_alloc(fd, 2 * MiB, 0, &h, NULL));
	close(fd);
	ASSERT_EQ(0, hyper_module_unload());
	ASSERT_EQ(0, load_node(3, 1000));
	EXPECT_EQ(META + 2 * MiB, ull("used"));
	ASSERT_EQ(0, cmd("join", "1"));
	EXPECT_EQ(META, ull("used"));
	ASSERT_EQ(0, cmd("leave", "1"));
}

/* Put @sb at pool offset 0 through a region of a standalone load. */
static int write_pool_start(const uint8_t *sb)
{
	uint64_t off, moff, size;
	uint32_t h;
	void *p;
	int fd, ret;

	ret = hyper_module_load(hyper_modparams());
	if (ret)
		return ret;
	fd = hyper_dev_open(0);
	if (fd < 0)
		return fd;
	ret = hyper_alloc(fd, 2 * MiB, 0, &h, &moff);
	if (!ret)
		ret = hyper_debugfs_region(0, getpid(), h, &off, &size);
	if (!ret && off)
		ret = -ERANGE;
	if (!ret) {
		p = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 moff);
		if (p == MAP_FAILED) {
			ret = -errno;
		} else {
			memcpy(p, sb, SB_SIZE);
			msync(p, SB_SIZE, MS_SYNC);
			munmap(p, 2 * MiB);
		}
	}
	close(fd);
	return ret ?: hyper_module_unload();
}

TEST_F(pool, corrupt_foreign_and_garbage_superblocks)
{
	uint8_t sb[SB_SIZE], bad[SB_SIZE];
	FILE *f;
	int i;

	ASSERT_EQ(0, load_node(1, 10000));
	ASSERT_EQ(0, cmd("format", "force"));
	f = fopen("/sys/kernel/debug/hyper/hyper0/superblock", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(SB_SIZE, fread(sb, 1, SB_SIZE, f));
	fclose(f);
	ASSERT_EQ(0, memcmp(sb, "HYPRPOOL", 8));
	ASSERT_EQ(0, hyper_module_unload());

	/* One bit of the UUID flipped: the checksum no longer matches. */
	memcpy(bad, sb, SB_SIZE);
	bad[SB_UUID] ^= 1;
	ASSERT_EQ(0, write_pool_start(bad));
	ASSERT_EQ(0, load_node(1, 10000));
	EXPECT_STREQ("corrupt", state());
	REFUSED("join", "1", -EBADMSG, "join refused: the pool's superblock is corrupt");
	REFUSED("format", "1", -EEXIST, "format refused: the pool is formatted already");
	ASSERT_EQ(0, hyper_module_unload());

	/* Another format version. */
	memcpy(bad, sb, SB_SIZE);
	bad[SB_VERSION]++;
	ASSERT_EQ(0, write_pool_start(bad));
	ASSERT_EQ(0, load_node(1, 10000));
	EXPECT_STREQ("other-version", state());
	REFUSED("join", "1", -EPROTO, "join refused: the pool was formatted by another format version");
	ASSERT_EQ(0, hyper_module_unload());

	/* Garbage: no format at all. */
	for (i = 0; i < SB_SIZE; i++)
		bad[i] = (uint8_t)(i * 131 + 7);
	ASSERT_EQ(0, write_pool_start(bad));
	ASSERT_EQ(0, load_node(1, 10000));
	EXPECT_STREQ("unformatted", state());
	REFUSED("join", "1", -ENODATA, "join refused: the pool is not formatted");

	/* The real one back: it is valid, and force formats over it. */
	ASSERT_EQ(0, hyper_module_unload());
	ASSERT_EQ(0, write_pool_start(sb));
	ASSERT_EQ(0, load_node(1, 10000));
	EXPECT_STREQ("formatted", state());
	ASSERT_EQ(0, cmd("format", "force"));
	ASSERT_EQ(0, cmd("join", "1"));
	ASSERT_EQ(0, cmd("leave", "1"));
}

TEST_HARNESS_MAIN
