// SPDX-License-Identifier: GPL-2.0
/*
 * Pool regions that work: allocation, zeroing, mmap and data, accounting,
 * ownership by the open file.  Runs in the VM with the module loaded.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hyper_test.h"

FIXTURE(dev) {
	int fd;
	long long used0;
	long long regions0;
};

FIXTURE_SETUP(dev)
{
	ASSERT_EQ(0, hyper_module_ensure());
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
	self->used0 = hyper_sysfs_ll(0, "used");
	self->regions0 = hyper_sysfs_ll(0, "nr_regions");
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST_F(dev, info_matches_sysfs)
{
	struct hyper_pool_info info;
	const char *node = getenv("HYPER_EXPECT_NODE");

	ASSERT_EQ(0, hyper_info(self->fd, &info));
	EXPECT_EQ(HYPER_ABI_VERSION, info.abi_version);
	EXPECT_EQ(hyper_sysfs_ll(0, "size"), (long long)info.size);
	EXPECT_EQ(hyper_sysfs_ll(0, "free"), (long long)info.free);
	EXPECT_EQ(hyper_sysfs_ll(0, "numa_node"), info.numa_node);
	EXPECT_EQ(4096, info.page_size);
	EXPECT_EQ(2 * MiB, info.huge_align);
	EXPECT_EQ(HYPER_BATCH_MAX, info.max_batch);
	EXPECT_EQ(0, info.nr_regions);
	EXPECT_EQ(0, info.reserved0);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(0, info.reserved[i]);
	if (node)
		EXPECT_EQ(atoi(node), info.numa_node);
}

TEST_F(dev, sysfs_source_and_origin)
{
	const char *origin = getenv("HYPER_EXPECT_ORIGIN");
	char buf[64];

	ASSERT_EQ(0, hyper_sysfs_read(0, "origin", buf, sizeof(buf)));
	if (origin)
		EXPECT_STREQ(origin, buf);
	ASSERT_EQ(0, hyper_sysfs_read(0, "source", buf, sizeof(buf)));
	if (origin)
		EXPECT_STREQ(strcmp(origin, "emulated") ? "window" : "emulated",
			     buf);
	/* phys_base is for root only, like /proc/iomem. */
	ASSERT_EQ(0, hyper_sysfs_read(0, "phys_base", buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, "0x", 2));
}

TEST_F(dev, alloc_query_free_accounting)
{
	struct hyper_region_info q = { 0 };
	struct hyper_pool_info info;
	uint64_t off;
	uint32_t h;

	ASSERT_EQ(0, hyper_alloc(self->fd, 3 * MiB, 0, &h, &off));
	EXPECT_NE(0, h);
	EXPECT_EQ((uint64_t)h << 44, off);
	EXPECT_EQ(self->used0 + 3 * MiB, hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(self->regions0 + 1, hyper_sysfs_ll(0, "nr_regions"));
	EXPECT_EQ(hyper_sysfs_ll(0, "size") - hyper_sysfs_ll(0, "used"),
		  hyper_sysfs_ll(0, "free"));
	ASSERT_EQ(0, hyper_info(self->fd, &info));
	EXPECT_EQ(1, info.nr_regions);

	q.handle = h;
	ASSERT_EQ(0, hyper_ioctl(self->fd, HYPER_IOC_QUERY, &q));
	EXPECT_EQ(3 * MiB, q.size);
	EXPECT_EQ(off, q.mmap_offset);
	EXPECT_EQ(0, q.flags);

	ASSERT_EQ(0, hyper_free(self->fd, h));
	EXPECT_EQ(self->used0, hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(self->regions0, hyper_sysfs_ll(0, "nr_regions"));
}

TEST_F(dev, mmap_write_read_patterns)
{
	static const uint64_t sizes[] = { 4096, 65536, 2 * MiB + 4096,
					  32 * MiB };
	uint8_t *map[4];
	uint32_t h[4];
	uint64_t off[4];
	int i;

	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, hyper_alloc(self->fd, sizes[i], 0, &h[i], &off[i]));
		map[i] = mmap(NULL, sizes[i], PROT_READ | PROT_WRITE,
			      MAP_SHARED, self->fd, off[i]);
		ASSERT_NE(MAP_FAILED, map[i]);
		hyper_fill(map[i], sizes[i], 100 + i);
	}
	/* Each region keeps its own bytes: no aliasing between regions. */
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(sizes[i], hyper_check(map[i], sizes[i], 100 + i));
		munmap(map[i], sizes[i]);
	}
	/* A fresh mapping sees the same memory. */
	for (i = 0; i < 4; i++) {
		uint8_t *p = mmap(NULL, sizes[i], PROT_READ, MAP_SHARED,
				  self->fd, off[i]);

		ASSERT_NE(MAP_FAILED, p);
		EXPECT_EQ(sizes[i], hyper_check(p, sizes[i], 100 + i));
		munmap(p, sizes[i]);
		EXPECT_EQ(0, hyper_free(self->fd, h[i]));
	}
}

/*
 * The open mode is the rule, as for read(2) and write(2): taking and giving
 * back pool memory needs a writable open, mapping needs a readable one.
 */
TEST_F(dev, read_only_open_may_only_look)
{
	int ro = open("/dev/hyper0", O_RDONLY | O_CLOEXEC);
	struct hyper_region_info q = { .handle = 1 };
	long long used = hyper_sysfs_ll(0, "used");
	struct hyper_pool_info info;

	ASSERT_LE(0, ro);
	EXPECT_EQ(-EBADF, hyper_alloc(ro, MiB, 0, NULL, NULL));
	EXPECT_EQ(-EBADF, hyper_alloc(ro, MiB, HYPER_ALLOC_HUGE_ALIGN, NULL,
				      NULL));
	EXPECT_EQ(-EBADF, hyper_free(ro, 1));
	EXPECT_EQ(used, hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(0, hyper_info(ro, &info));
	EXPECT_EQ(0, info.nr_regions);
	EXPECT_EQ(-ENOENT, hyper_ioctl(ro, HYPER_IOC_QUERY, &q));
	close(ro);
}

TEST_F(dev, write_only_open_allocates_but_cannot_map)
{
	int wo = open("/dev/hyper0", O_WRONLY | O_CLOEXEC);
	uint64_t off;
	uint32_t h;

	ASSERT_LE(0, wo);
	ASSERT_EQ(0, hyper_alloc(wo, MiB, 0, &h, &off));
	/* mmap needs a readable file, whatever the protection asked. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, MiB, PROT_READ, MAP_SHARED, wo, off));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, MiB, PROT_WRITE, MAP_SHARED, wo,
				   off));
	EXPECT_EQ(0, hyper_free(wo, h));
	close(wo);
}

TEST_F(dev, mmap_inner_range_and_two_views)
{
	uint64_t size = 8 * MiB, off;
	uint8_t *whole, *part;
	uint32_t h;

	ASSERT_EQ(0, hyper_alloc(self->fd, size, 0, &h, &off));
	whole = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
		     self->fd, off);
	ASSERT_NE(MAP_FAILED, whole);
	/* A window starting 3 pages in, 1 MiB long, sees the same bytes. */
	part = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		    off + 3 * 4096);
	ASSERT_NE(MAP_FAILED, part);
	hyper_fill(whole, size, 7);
	EXPECT_EQ(0, memcmp(part, whole + 3 * 4096, MiB));
	memset(part, 0x5a, 4096);
	EXPECT_EQ(0x5a, whole[3 * 4096 + 17]);
	munmap(part, MiB);
	munmap(whole, size);
	EXPECT_EQ(0, hyper_free(self->fd, h));
}

/*
 * msync(MS_SYNC) on a region mapping reaches the file's ->fsync, which
 * writes a persistent window's cache lines back and has nothing to do for
 * other pools: it succeeds on every kind, for the whole mapping and for a
 * part of it, as fsync(2) of the file does, and the data is still there.
 */
TEST_F(dev, msync_of_a_region_mapping_succeeds)
{
	uint64_t size = 4 * MiB, off;
	uint8_t *p;
	uint32_t h;

	ASSERT_EQ(0, hyper_alloc(self->fd, size, 0, &h, &off));
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, off);
	ASSERT_NE(MAP_FAILED, p);
	hyper_fill(p, size, 21);
	EXPECT_EQ(0, msync(p, size, MS_SYNC)) {
		TH_LOG("msync(MS_SYNC): %s", strerror(errno));
	}
	EXPECT_EQ(0, msync(p + MiB, 2 * 4096, MS_SYNC));
	EXPECT_EQ(0, msync(p, size, MS_ASYNC));
	/* fsync(2) writes back every region of the file. */
	EXPECT_EQ(0, fsync(self->fd));
	EXPECT_EQ(size, hyper_check(p, size, 21));
	munmap(p, size);
	EXPECT_EQ(0, hyper_free(self->fd, h));
}

/*
 * A freed handle is not given out again at once: a transfer still naming
 * it must find nothing rather than a new, smaller region.
 */
TEST_F(dev, freed_handles_are_not_reused_at_once)
{
	uint32_t h1, h2, h3;

	ASSERT_EQ(0, hyper_alloc(self->fd, MiB, 0, &h1, NULL));
	ASSERT_EQ(0, hyper_free(self->fd, h1));
	ASSERT_EQ(0, hyper_alloc(self->fd, 4096, 0, &h2, NULL));
	EXPECT_NE(h1, h2);
	ASSERT_EQ(0, hyper_free(self->fd, h2));
	ASSERT_EQ(0, hyper_alloc(self->fd, 4096, 0, &h3, NULL));
	EXPECT_NE(h1, h3);
	EXPECT_NE(h2, h3);
	EXPECT_EQ(0, hyper_free(self->fd, h3));
}

TEST_F(dev, regions_are_zeroed_on_allocation)
{
	uint64_t size = 16 * MiB, off;
	uint8_t *p;
	uint32_t h;
	int round;

	/* First fit hands the same memory back: it must come back zeroed. */
	for (round = 0; round < 3; round++) {
		ASSERT_EQ(0, hyper_alloc(self->fd, size, 0, &h, &off));
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->fd, off);
		ASSERT_NE(MAP_FAILED, p);
		EXPECT_EQ(size, hyper_first_nonzero(p, size));
		memset(p, 0xa5 + round, size);
		munmap(p, size);
		ASSERT_EQ(0, hyper_free(self->fd, h));
	}
}

TEST_F(dev, huge_align_flag)
{
	uint64_t off, poff = 0, plain_off = 0, size = 0;
	uint32_t h, small, plain;
	uint8_t *p;

	/* Push the allocator off a 2 MiB boundary first. */
	ASSERT_EQ(0, hyper_alloc(self->fd, 4096, 0, &small, NULL));
	ASSERT_EQ(0, hyper_alloc(self->fd, 4 * MiB, HYPER_ALLOC_HUGE_ALIGN,
				 &h, &off));
	ASSERT_EQ(0, hyper_debugfs_region(0, getpid(), h, &poff, &size));
	EXPECT_EQ(4 * MiB, size);
	EXPECT_EQ(0, poff % (2 * MiB));
	EXPECT_EQ(0, (hyper_sysfs_ll(0, "phys_base") + poff) % (2 * MiB));
	/* Without the flag the next region fills the gap below it. */
	ASSERT_EQ(0, hyper_alloc(self->fd, 8192, 0, &plain, NULL));
	ASSERT_EQ(0, hyper_debugfs_region(0, getpid(), plain, &plain_off,
					  &size));
	EXPECT_LT(plain_off, poff);
	EXPECT_NE(0, plain_off % (2 * MiB));

	struct hyper_region_info q = { .handle = h };

	ASSERT_EQ(0, hyper_ioctl(self->fd, HYPER_IOC_QUERY, &q));
	EXPECT_EQ(HYPER_ALLOC_HUGE_ALIGN, q.flags);
	p = mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 off);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0x77, 4 * MiB);
	munmap(p, 4 * MiB);
	EXPECT_EQ(0, hyper_free(self->fd, h));
	EXPECT_EQ(0, hyper_free(self->fd, plain));
	EXPECT_EQ(0, hyper_free(self->fd, small));
}

TEST_F(dev, debugfs_lists_regions_with_owner)
{
	uint64_t a_off = 0, b_off = 0, a_size = 0, b_size = 0;
	long long pool = hyper_sysfs_ll(0, "size");
	uint32_t a, b;

	ASSERT_EQ(0, hyper_alloc(self->fd, MiB, 0, &a, NULL));
	ASSERT_EQ(0, hyper_alloc(self->fd, 3 * MiB, 0, &b, NULL));
	ASSERT_EQ(0, hyper_debugfs_region(0, getpid(), a, &a_off, &a_size));
	ASSERT_EQ(0, hyper_debugfs_region(0, getpid(), b, &b_off, &b_size));
	EXPECT_EQ(MiB, a_size);
	EXPECT_EQ(3 * MiB, b_size);
	EXPECT_TRUE(a_off + a_size <= b_off || b_off + b_size <= a_off);
	EXPECT_LE(b_off + b_size, (uint64_t)pool);
	ASSERT_EQ(0, hyper_free(self->fd, a));
	EXPECT_EQ(-ENOENT, hyper_debugfs_region(0, getpid(), a, &a_off,
						&a_size));
	ASSERT_EQ(0, hyper_free(self->fd, b));
}

TEST_F(dev, mapping_outlives_free_and_close)
{
	uint64_t size = 2 * MiB, off;
	int fd2 = hyper_dev_open(0);
	uint8_t *p;
	uint32_t h;

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, hyper_alloc(fd2, size, 0, &h, &off));
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, off);
	ASSERT_NE(MAP_FAILED, p);
	hyper_fill(p, size, 42);
	ASSERT_EQ(0, hyper_free(fd2, h));
	close(fd2);
	/* The handle is gone but the mapping still owns the memory. */
	EXPECT_EQ(self->used0 + (long long)size, hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(size, hyper_check(p, size, 42));
	munmap(p, size);
	EXPECT_EQ(self->used0, hyper_sysfs_ll(0, "used"));
}

TEST_F(dev, exit_without_free_returns_memory)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = hyper_dev_open(0);

		for (int i = 0; i < 5; i++)
			if (hyper_alloc(fd, MiB, 0, NULL, NULL))
				_exit(1);
		_exit(hyper_sysfs_ll(0, "used") == self->used0 + 5 * MiB ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(self->used0, hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(self->regions0, hyper_sysfs_ll(0, "nr_regions"));
}

TEST_F(dev, enomem_then_allocations_still_work)
{
	uint64_t chunk = 64 * MiB;
	uint32_t h[64];
	int n = 0, ret;

	ASSERT_EQ(-ENOMEM, hyper_alloc(self->fd,
				       hyper_sysfs_ll(0, "free") + 4096, 0,
				       NULL, NULL));
	/* Exhaust the pool, then give one piece back and take it again. */
	while (n < 64 && !(ret = hyper_alloc(self->fd, chunk, 0, &h[n], NULL)))
		n++;
	ASSERT_EQ(-ENOMEM, ret);
	ASSERT_LT(0, n);
	ASSERT_EQ(0, hyper_free(self->fd, h[n - 1]));
	EXPECT_EQ(0, hyper_alloc(self->fd, chunk, 0, &h[n - 1], NULL));
	while (n--)
		EXPECT_EQ(0, hyper_free(self->fd, h[n]));
	EXPECT_EQ(self->used0, hyper_sysfs_ll(0, "used"));
}

TEST_F(dev, inherited_descriptor_shares_regions)
{
	uint64_t off;
	uint32_t h;
	int status;
	pid_t pid;

	/* Passing the descriptor on is the explicit way to share. */
	ASSERT_EQ(0, hyper_alloc(self->fd, MiB, 0, &h, &off));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint8_t *p = mmap(NULL, MiB, PROT_READ | PROT_WRITE,
				  MAP_SHARED, self->fd, off);

		if (p == MAP_FAILED)
			_exit(1);
		hyper_fill(p, MiB, 9);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	uint8_t *p = mmap(NULL, MiB, PROT_READ, MAP_SHARED, self->fd, off);

	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(MiB, hyper_check(p, MiB, 9));
	munmap(p, MiB);
	EXPECT_EQ(0, hyper_free(self->fd, h));
}

TEST_HARNESS_MAIN
