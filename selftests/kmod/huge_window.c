// SPDX-License-Identifier: GPL-2.0
/*
 * A pool larger than the largest region: a 17 TiB legacy-pmem window, so
 * that region sizes at the 16 TiB limit get past the pool-size check and
 * reach the allocator.  genalloc counts a range's pages in an unsigned
 * int, so 2^32 pages (16 TiB) once became 0 and the search looped forever
 * under mode_sem.  The window is not backed by RAM: only the refused
 * sizes and small regions are tried, since every region is zero-filled.
 *
 * An ALLOC that never returns cannot be killed, so each one runs in a
 * child that the test gives up on (and reports) rather than hang the VM.
 */
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "hyper_test.h"

#define TiB		(1024 * 1024 * MiB)
#define PAGE		4096ULL
/* Only a hang trips this: the refused ALLOC returns in microseconds. */
#define HANG_SECS	60
/* The harness's own per-test limit, above HANG_SECS. */
#define TEST_SECS	(3 * HANG_SECS)
/*
 * Left by an ALLOC that hung: the CPU it spins on is lost for good, so
 * the later tests skip instead of wedging the other one too.
 */
#define HUNG_MARK	"/tmp/hyper-huge-alloc-hung"

FIXTURE(huge) {
	int fd;
};

/* First thing in each test: a hung ALLOC holds a CPU and regions. */
#define SKIP_AFTER_HANG() do {						\
	if (!access(HUNG_MARK, F_OK))					\
		SKIP(return, "an earlier 16 TiB ALLOC never returned");	\
} while (0)

FIXTURE_SETUP(huge)
{
	ASSERT_EQ(0, hyper_module_ensure());
	ASSERT_LT(16 * TiB, hyper_sysfs_ll(0, "size"));
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(huge)
{
	if (!access(HUNG_MARK, F_OK))
		return;
	close(self->fd);
	EXPECT_EQ(0, hyper_sysfs_ll(0, "used"));
}

/*
 * The reproducer: two small regions, the first freed so that the search
 * finds a one-page hole first, then ALLOC of @size.  Returns its -errno,
 * or 1 if it did not return in HANG_SECS (the child is left behind: the
 * task is stuck in the kernel and cannot be killed), or 5 after an
 * earlier hang.
 */
static int alloc_after_hole(int fd, uint64_t size, uint32_t flags)
{
	int pfd[2], ret = 1, status;
	uint32_t h1, h2;
	pid_t pid;

	if (!access(HUNG_MARK, F_OK))
		return 5;
	if (hyper_alloc(fd, PAGE, 0, &h1, NULL) ||
	    hyper_alloc(fd, PAGE, 0, &h2, NULL) || hyper_free(fd, h1))
		return 2;
	if (pipe(pfd))
		return 3;
	pid = fork();
	if (pid == 0) {
		int r = hyper_alloc(fd, size, flags, NULL, NULL);

		_exit(r < 0 ? -r : 100);
	}
	close(pfd[1]);
	if (pid < 0)
		return 4;
	/* The pipe's write end dies with the child: POLLHUP when it exits. */
	{
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };

		if (poll(&p, 1, HANG_SECS * 1000) == 1 &&
		    waitpid(pid, &status, 0) == pid && WIFEXITED(status))
			ret = WEXITSTATUS(status) == 100 ? 0 :
			      -WEXITSTATUS(status);
	}
	close(pfd[0]);
	if (ret == 1)
		close(open(HUNG_MARK, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	else
		hyper_free(fd, h2);
	return ret;
}

TEST_F_TIMEOUT(huge, alloc_16tib_is_refused_not_looped, TEST_SECS)
{
	SKIP_AFTER_HANG();
	EXPECT_EQ(-EOVERFLOW, alloc_after_hole(self->fd, 16 * TiB, 0));
}

TEST_F_TIMEOUT(huge, alloc_16tib_huge_align_is_refused_not_looped, TEST_SECS)
{
	SKIP_AFTER_HANG();
	EXPECT_EQ(-EOVERFLOW, alloc_after_hole(self->fd, 16 * TiB,
					       HYPER_ALLOC_HUGE_ALIGN));
}

TEST_F_TIMEOUT(huge, sizes_past_the_limit_are_refused, TEST_SECS)
{
	SKIP_AFTER_HANG();
	EXPECT_EQ(-EOVERFLOW, alloc_after_hole(self->fd, 16 * TiB + PAGE, 0));
	EXPECT_EQ(-EOVERFLOW, alloc_after_hole(self->fd, 17 * TiB, 0));
	EXPECT_EQ(-EOVERFLOW, alloc_after_hole(self->fd, 32 * TiB,
					       HYPER_ALLOC_HUGE_ALIGN));
}

/* A killed task must be gone this soon, however slow the VM. */
#define KILL_SECS	30

/* Whether @pid is still running (not yet a zombie), or -errno. */
static int running(pid_t pid)
{
	char path[64], st[256], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (hyper_read_file(path, st, sizeof(st)))
		return -ENOENT;
	p = strrchr(st, ')');
	return p && p[1] == ' ' && p[2] != 'Z';
}

/* SIGKILL @pid and reap it: its seconds, or -1 after KILL_SECS. */
static int kill_and_reap(pid_t pid)
{
	struct timespec t0, t;
	int status;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	t = t0;
	kill(pid, SIGKILL);
	do {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return (int)(t.tv_sec - t0.tv_sec);
		usleep(100000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < KILL_SECS);
	return -1;
}

/*
 * Zeroing a 64 GiB region takes minutes here (the window has no RAM
 * behind it, and takes as long on a real multi-TiB pool), all under
 * mode_sem.  A SIGKILL ends it within seconds, and the region is given
 * back; a mode writer waiting for mode_sem meanwhile can be killed too.
 */
TEST_F_TIMEOUT(huge, a_large_alloc_dies_at_sigkill, TEST_SECS)
{
	struct hyper_pool_info info;
	pid_t alloc, writer;
	int secs;

	SKIP_AFTER_HANG();
	alloc = fork();
	ASSERT_LE(0, alloc);
	if (alloc == 0)
		_exit(-hyper_alloc(self->fd, 64 * 1024 * MiB, 0, NULL, NULL));
	sleep(2);
	ASSERT_EQ(1, running(alloc)) {
		TH_LOG("64 GiB were zeroed in under 2 s: nothing to kill");
	}
	writer = fork();
	ASSERT_LE(0, writer);
	if (writer == 0)
		_exit(hyper_sysfs_write(0, "mode", "device") ? 1 : 0);
	sleep(1);
	/* It waits for the ALLOC's mode_sem. */
	EXPECT_EQ(1, running(writer));
	secs = kill_and_reap(writer);
	EXPECT_LE(0, secs) {
		TH_LOG("the mode writer did not die in %d s", KILL_SECS);
	}
	secs = kill_and_reap(alloc);
	EXPECT_LE(0, secs) {
		TH_LOG("the ALLOC did not die in %d s", KILL_SECS);
		close(open(HUNG_MARK, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
		return;
	}
	TH_LOG("ALLOC gone %d s after SIGKILL", secs);
	/* Nothing kept: the pool is whole and the mode can change again. */
	ASSERT_EQ(0, hyper_info(self->fd, &info));
	EXPECT_EQ(0, info.nr_regions);
	EXPECT_EQ(info.size, info.free);
	EXPECT_EQ(0, hyper_sysfs_write(0, "mode", "device"));
}

/* Small regions of the big pool still work, and the pool is whole after. */
TEST_F(huge, small_regions_still_work)
{
	struct hyper_pool_info info;
	uint32_t h[4];

	SKIP_AFTER_HANG();
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, hyper_alloc(self->fd, (i + 1) * PAGE,
					 i & 1 ? HYPER_ALLOC_HUGE_ALIGN : 0,
					 &h[i], NULL));
	ASSERT_EQ(0, hyper_info(self->fd, &info));
	EXPECT_EQ(info.size - 10 * PAGE, info.free);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(0, hyper_free(self->fd, h[i]));
	ASSERT_EQ(0, hyper_info(self->fd, &info));
	EXPECT_EQ(info.size, info.free);
}

TEST_HARNESS_MAIN
