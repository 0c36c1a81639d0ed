// SPDX-License-Identifier: GPL-2.0
/*
 * Module lifecycle: unload refused while a file or a mapping is alive,
 * repeated load/unload with users coming and going.  The module is loaded
 * with the suite's HYPER_MODPARAMS and left loaded at the end.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hyper_test.h"

static int use_device(uint64_t seed)
{
	uint64_t size = 4 * MiB, off;
	int fd = hyper_dev_open(0);
	uint8_t *p;
	uint32_t h;
	int ret = 0;

	if (fd < 0)
		return fd;
	ret = hyper_alloc(fd, size, 0, &h, &off);
	if (ret)
		goto out;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	for (uint64_t i = 0; i < size; i += 512)
		p[i] = hyper_pattern(seed, i);
	for (uint64_t i = 0; i < size; i += 512)
		if (p[i] != hyper_pattern(seed, i))
			ret = -EIO;
	munmap(p, size);
	/* Half the time leave the region for close() to free. */
	if (seed & 1)
		ret = ret ?: hyper_free(fd, h);
out:
	close(fd);
	return ret;
}

TEST(rmmod_while_open_is_refused)
{
	int fd, ret;

	ASSERT_EQ(0, hyper_module_ensure());
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	ret = hyper_module_unload();
	EXPECT_TRUE(ret == -EAGAIN || ret == -EBUSY);
	EXPECT_TRUE(hyper_module_loaded());
	/* The open file still works after the refused unload. */
	EXPECT_EQ(0, hyper_alloc(fd, 4096, 0, NULL, NULL));
	close(fd);
	EXPECT_EQ(0, hyper_module_unload());
	EXPECT_FALSE(hyper_module_loaded());
	EXPECT_EQ(0, hyper_module_load(hyper_modparams()));
}

TEST(rmmod_while_mapped_is_refused)
{
	uint64_t off;
	uint8_t *p;
	int fd, ret;

	ASSERT_EQ(0, hyper_module_ensure());
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hyper_alloc(fd, MiB, 0, NULL, &off));
	p = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	ASSERT_NE(MAP_FAILED, p);
	close(fd);
	/* Only the mapping holds the file now; that is enough. */
	ret = hyper_module_unload();
	EXPECT_TRUE(ret == -EAGAIN || ret == -EBUSY);
	memset(p, 0x11, MiB);
	EXPECT_EQ(0x11, p[MiB - 1]);
	munmap(p, MiB);
	EXPECT_EQ(0, hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(0, hyper_module_unload());
	EXPECT_EQ(0, hyper_module_load(hyper_modparams()));
}

TEST(rmmod_after_child_killed_holding_regions)
{
	int status, pipefd[2];
	char c;
	pid_t pid;

	ASSERT_EQ(0, hyper_module_ensure());
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = hyper_dev_open(0);
		uint64_t off = 0;

		hyper_alloc(fd, 2 * MiB, 0, NULL, &off);
		mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
		write(pipefd[1], "x", 1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	EXPECT_EQ(2 * MiB, hyper_sysfs_ll(0, "used"));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(0, hyper_module_unload());
	EXPECT_EQ(0, hyper_module_load(hyper_modparams()));
	close(pipefd[0]);
	close(pipefd[1]);
}

/* The harness gives plain TESTs 30 s; cycling under TCG needs more. */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

TEST_F_TIMEOUT(slow, load_unload_50_cycles, 900)
{
	int i;

	if (hyper_module_loaded())
		ASSERT_EQ(0, hyper_module_unload());
	for (i = 0; i < 50; i++) {
		ASSERT_EQ(0, hyper_module_load(hyper_modparams())) {
			TH_LOG("load %d failed", i);
		}
		ASSERT_EQ(0, use_device(i)) {
			TH_LOG("cycle %d: device use failed", i);
		}
		ASSERT_EQ(0, hyper_module_unload()) {
			TH_LOG("unload %d failed", i);
		}
		ASSERT_EQ(-1, access("/dev/hyper0", F_OK));
	}
	EXPECT_EQ(0, hyper_module_load(hyper_modparams()));
}

TEST_HARNESS_MAIN
