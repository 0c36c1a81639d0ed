// SPDX-License-Identifier: GPL-2.0
/*
 * Transfers in flight when their owner dies or just exits: nothing leaks
 * (regions, pinned pages, in-flight slots) and the module unloads.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hyper_uring.h"

#define AREA	(64 * MiB)
#define XFER	(4 * MiB)
#define DEPTH	16

static long long vmstat(const char *name)
{
	char line[128];
	long long v = -1;
	size_t n = strlen(name);
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ' ')
			v = strtoll(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

/* Pages pinned and not yet unpinned, system wide. */
static long long pins_held(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);

	/* Fold the per-CPU deltas first, or the two may lag each other. */
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			return -errno;
		close(fd);
	}
	return vmstat("nr_foll_pin_acquired") - vmstat("nr_foll_pin_released");
}

/*
 * The child: keep DEPTH large transfers in flight forever, on registered
 * buffers when @fixed, else on plain addresses pinned per request.  It
 * tells the parent once the first batch is submitted.
 */
static void child(int ready, bool fixed)
{
	struct iovec iov;
	struct io_uring ring;
	uint64_t n = 0;
	uint8_t *buf;
	uint32_t h;
	int fd;

	fd = hyper_dev_open(0);
	buf = mmap(NULL, AREA, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (fd < 0 || buf == MAP_FAILED || hyper_ring_init(&ring, 2 * DEPTH) ||
	    hyper_alloc(fd, AREA, 0, &h, NULL))
		_exit(1);
	iov.iov_base = buf;
	iov.iov_len = AREA;
	if (fixed && io_uring_register_buffers(&ring, &iov, 1))
		_exit(2);
	for (;;) {
		struct io_uring_cqe *cqe;

		while (io_uring_sq_space_left(&ring) && n < DEPTH + 1000000) {
			struct hyper_xfer x = {
				.addr = (uintptr_t)(buf + (n % DEPTH) * XFER),
				.len = XFER, .region_off = (n % DEPTH) * XFER,
				.handle = h,
				.dir = n & 1 ? HYPER_DIR_PREFETCH :
				       HYPER_DIR_STORE,
			};

			hyper_prep_xfer(io_uring_get_sqe(&ring), fd, &x,
					fixed ? 0 : -1);
			n++;
			if (n % DEPTH == 0)
				break;
		}
		io_uring_submit(&ring);
		if (n == DEPTH && write(ready, "r", 1) != 1)
			_exit(3);
		if (!io_uring_wait_cqe(&ring, &cqe))
			io_uring_cqe_seen(&ring, cqe);
	}
}

static void die_in_flight(struct __test_metadata *_metadata, bool fixed,
			  int sig)
{
	long long pins0, used0;
	int p[2], status, busy = 0;
	pid_t pid;
	char c;

	ASSERT_EQ(0, hyper_module_ensure());
	used0 = hyper_sysfs_ll(0, "used");
	pins0 = pins_held();
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(p[0]);
		child(p[1], fixed);
	}
	close(p[1]);
	ASSERT_EQ(1, read(p[0], &c, 1));
	/* Catch it with work queued in the engine. */
	busy = hyper_poll(hyper_stat(0, "inflight") > 0, 60);
	EXPECT_TRUE(busy);
	ASSERT_EQ(0, kill(pid, sig));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(p[0]);

	/* The ring's teardown waits for the engine; give it a moment. */
	hyper_poll(!hyper_stat(0, "inflight") &&
		   hyper_sysfs_ll(0, "used") == used0, 60);
	EXPECT_EQ(0, hyper_stat(0, "inflight"));
	EXPECT_EQ(used0, hyper_sysfs_ll(0, "used"));
	hyper_poll(pins_held() == pins0, 60);
	EXPECT_EQ(pins0, pins_held());
	/* And the module can go: nothing holds it any more. */
	EXPECT_EQ(0, hyper_module_unload());
	EXPECT_EQ(0, hyper_module_load(hyper_modparams()));
}

TEST(killed_with_registered_buffers_in_flight)
{
	die_in_flight(_metadata, true, SIGKILL);
}

TEST(killed_with_pinned_plain_addresses_in_flight)
{
	die_in_flight(_metadata, false, SIGKILL);
}

TEST(terminated_while_transfers_run)
{
	die_in_flight(_metadata, true, SIGTERM);
}

TEST(kill_loop_then_rmmod)
{
	for (int i = 0; i < 5; i++)
		die_in_flight(_metadata, i & 1, SIGKILL);
}

TEST_HARNESS_MAIN
