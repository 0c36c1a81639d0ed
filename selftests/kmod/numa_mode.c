// SPDX-License-Identifier: GPL-2.0
/*
 * System-RAM mode: the window hot-added on its CPU-less node, in a memory
 * tier below DRAM, used through numactl and libnuma, and taken back.
 *
 * The suite reserves all of node 1 (memmap=1G!4G), as a CXL expander
 * looks: the node has no memory until the window is added.
 *
 * The kernel's auto-online policy decides whether the blocks the module
 * adds come up online, and where: Debian's 6.1 leaves them offline, its
 * 6.12 onlines them into ZONE_NORMAL.  Most tests here pin it to
 * "offline" and online the blocks themselves, as hyperctl does; the
 * auto_online tests run the module under each policy, and under the one
 * the kernel booted with (HYPER_BOOT_AUTO_ONLINE, which the suite reads
 * before anything changes it).
 */
#include <linux/userfaultfd.h>
#include <numa.h>
#include <numaif.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hyper_uring.h"

#define NODE	1

static long long block_size(void)
{
	char buf[32];
	int ret = hyper_read_file("/sys/devices/system/memory/block_size_bytes",
				  buf, sizeof(buf));

	return ret ? ret : strtoll(buf, NULL, 16);
}

/*
 * Do @what ("online_movable", "online_kernel", "offline") to every memory
 * block of the window, the way hyperctl does after a switch; or, with
 * @what NULL, count the blocks whose state is @state.
 */
static int window_blocks(const char *what, const char *state)
{
	long long bs = block_size(), base = hyper_sysfs_ll(0, "phys_base");
	long long size = hyper_sysfs_ll(0, "size");
	int n = 0;

	for (long long b = base / bs; b < (base + size) / bs; b++) {
		char path[96], cur[32];

		snprintf(path, sizeof(path),
			 "/sys/devices/system/memory/memory%lld/state", b);
		if (what) {
			int ret = hyper_write_file(path, what);

			if (ret)
				return ret;
			n++;
		} else if (!hyper_read_file(path, cur, sizeof(cur)) &&
			   !strcmp(cur, state)) {
			n++;
		}
	}
	return n;
}

/* Blocks of the window that are not on NODE, or -errno. */
static long long window_off_node(long long size)
{
	long long bs = block_size(), base = hyper_sysfs_ll(0, "phys_base");
	long long off = 0;

	for (long long a = base; a < base + size; a += bs) {
		int node = hyper_phys_node(a);

		if (node < 0)
			return node;
		off += node != NODE;
	}
	return off;
}

static int nr_blocks(void)
{
	return hyper_sysfs_ll(0, "size") / block_size();
}

#define AUTO_ONLINE	"/sys/devices/system/memory/auto_online_blocks"

static const char *boot_policy(void)
{
	const char *p = getenv("HYPER_BOOT_AUTO_ONLINE");

	return p && *p ? p : "offline";
}

/* Blocks of the window that are online in @zone ("Movable", "Normal"). */
static int window_zone(const char *zone)
{
	long long bs = block_size(), base = hyper_sysfs_ll(0, "phys_base");
	long long size = hyper_sysfs_ll(0, "size");
	int n = 0;

	for (long long b = base / bs; b < (base + size) / bs; b++) {
		char path[96], cur[64];

		snprintf(path, sizeof(path),
			 "/sys/devices/system/memory/memory%lld/valid_zones", b);
		if (!hyper_read_file(path, cur, sizeof(cur)) &&
		    !strcmp(cur, zone))
			n++;
	}
	return n;
}

static void mode(struct __test_metadata *_metadata, const char *m)
{
	char now[32];

	ASSERT_EQ(0, hyper_sysfs_write(0, "mode", m));
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", now, sizeof(now)));
	ASSERT_STREQ(m, now);
}

/* Switch, then online the blocks as @online, or leave them offline. */
static void to_system_ram(struct __test_metadata *_metadata,
			  const char *online)
{
	mode(_metadata, "system-ram");
	if (!online) {
		ASSERT_EQ(nr_blocks(), window_blocks(NULL, "offline"));
		return;
	}
	ASSERT_EQ(nr_blocks(), window_blocks(online, NULL));
	ASSERT_EQ(nr_blocks(), window_blocks(NULL, "online"));
}

FIXTURE(numa) {};

FIXTURE_SETUP(numa)
{
	char now[32];

	ASSERT_EQ(0, hyper_module_ensure());
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", now, sizeof(now)));
	ASSERT_STREQ("device", now);
	ASSERT_EQ(0, hyper_write_file(AUTO_ONLINE, "offline"));
}

FIXTURE_TEARDOWN(numa)
{
	/* Leave the pool a device for the next test, whatever happened. */
	hyper_sysfs_write(0, "mode", "device");
	hyper_write_file(AUTO_ONLINE, boot_policy());
}

TEST_F_TIMEOUT(numa, round_trips, 300)
{
	long long size = hyper_sysfs_ll(0, "size");

	for (int i = 0; i < 5; i++) {
		/* The node has no memory but the window's. */
		EXPECT_GE(0, hyper_node_free(NODE));
		EXPECT_EQ(1, hyper_iomem_count(": hyper"));
		to_system_ram(_metadata, "online_movable");
		EXPECT_EQ(1, hyper_iomem_count("System RAM (hyper)"));
		EXPECT_EQ(0, hyper_iomem_count(": hyper\n"));
		/*
		 * All of it is memory of the node now: every block of the
		 * window is the node's (its free count is the kernel's).
		 */
		EXPECT_EQ(0, window_off_node(size));
		mode(_metadata, "device");
		EXPECT_EQ(0, hyper_iomem_count("System RAM (hyper)"));
		EXPECT_EQ(1, hyper_iomem_count(": hyper"));
		EXPECT_EQ(0, window_blocks(NULL, "online"));
		/* And the pool hands out regions again. */
		int fd = hyper_dev_open(0);
		uint32_t h;

		ASSERT_LE(0, fd);
		EXPECT_EQ(0, hyper_alloc(fd, size, 0, &h, NULL));
		close(fd);
	}
}

TEST_F(numa, same_mode_again_is_a_no_op)
{
	mode(_metadata, "device");
	to_system_ram(_metadata, "online_movable");
	mode(_metadata, "system-ram");
	EXPECT_EQ(nr_blocks(), window_blocks(NULL, "online"));
	mode(_metadata, "device");
}

TEST_F(numa, bad_mode_value)
{
	char now[32];

	EXPECT_EQ(-EINVAL, hyper_sysfs_write(0, "mode", "ram"));
	EXPECT_EQ(-EINVAL, hyper_sysfs_write(0, "mode", "\n"));
	EXPECT_EQ(-EINVAL, hyper_sysfs_write(0, "mode", "system-ram2"));
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", now, sizeof(now)));
	EXPECT_STREQ("device", now);
}

static int tier_of(int node)
{
	char path[128], list[64];

	for (int t = 0; t < 64; t++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/virtual/memory_tiering/memory_tier%d/nodelist",
			 t);
		if (hyper_read_file(path, list, sizeof(list)))
			continue;
		/* nodelist is a range list such as "0" or "0-1". */
		for (char *p = list; *p; ) {
			int a = strtol(p, &p, 10), b = a;

			if (*p == '-')
				b = strtol(p + 1, &p, 10);
			if (node >= a && node <= b)
				return t;
			if (*p == ',')
				p++;
		}
	}
	return -ENOENT;
}

TEST_F(numa, memory_tier_below_dram)
{
	int adist = hyper_sysfs_ll(0, "memory_tier");

	to_system_ram(_metadata, "online_movable");
	EXPECT_LT(0, tier_of(0));
	EXPECT_LT(tier_of(0), tier_of(NODE));
	/* Tier ids are the abstract distance in chunks of 128. */
	EXPECT_EQ(adist / 128, tier_of(NODE));
	mode(_metadata, "device");
	EXPECT_EQ(-ENOENT, tier_of(NODE));
}

/*
 * Under each auto-online policy the blocks come up as the policy says,
 * the node is in its tier below DRAM, and the way back works, whether the
 * blocks were onlined by the kernel or not.
 */
static void auto_online(struct __test_metadata *_metadata, const char *policy)
{
	const char *zone = !strcmp(policy, "online_movable") ? "Movable" :
			   "Normal";
	long long size = hyper_sysfs_ll(0, "size");
	char now[32];

	ASSERT_EQ(0, hyper_write_file(AUTO_ONLINE, policy));
	mode(_metadata, "system-ram");
	if (!strcmp(policy, "offline")) {
		EXPECT_EQ(nr_blocks(), window_blocks(NULL, "offline"));
		/* Online movable by hand, as hyperctl does. */
		EXPECT_EQ(nr_blocks(), window_blocks("online_movable", NULL));
		zone = "Movable";
	}
	EXPECT_EQ(nr_blocks(), window_blocks(NULL, "online")) {
		TH_LOG("policy %s", policy);
	}
	/* "online" lets the kernel choose: ZONE_NORMAL for a new node. */
	EXPECT_EQ(nr_blocks(), window_zone(zone)) {
		TH_LOG("policy %s: not all blocks in zone %s", policy, zone);
	}
	EXPECT_LT(size * 9 / 10, hyper_node_free(NODE));
	EXPECT_LT(0, tier_of(0));
	EXPECT_LT(tier_of(0), tier_of(NODE)) {
		TH_LOG("policy %s: node %d in tier %d, DRAM in %d", policy,
		       NODE, tier_of(NODE), tier_of(0));
	}
	mode(_metadata, "device");
	EXPECT_EQ(0, window_blocks(NULL, "online"));
	EXPECT_EQ(0, hyper_iomem_count("System RAM (hyper)"));
	EXPECT_EQ(-ENOENT, tier_of(NODE));
	/* The module does not touch the policy. */
	ASSERT_EQ(0, hyper_read_file(AUTO_ONLINE, now, sizeof(now)));
	EXPECT_STREQ(policy, now);
	ASSERT_EQ(0, hyper_write_file(AUTO_ONLINE, "offline"));
}

TEST_F(numa, auto_online_each_policy)
{
	static const char *const policies[] = {
		"offline", "online", "online_kernel", "online_movable",
	};

	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		auto_online(_metadata, policies[i]);
}

TEST_F(numa, auto_online_kernel_default)
{
	/* The suite read the boot policy before any test could change it. */
	ASSERT_NE(NULL, getenv("HYPER_BOOT_AUTO_ONLINE"));
	TH_LOG("kernel's auto-online policy: %s", boot_policy());
	auto_online(_metadata, boot_policy());
}

TEST_F(numa, numactl_shows_the_node)
{
	char line[256];
	long long mb = -1;
	FILE *f;

	to_system_ram(_metadata, "online_movable");
	f = popen("numactl -H", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		TH_LOG("%s", line);
		sscanf(line, "node 1 size: %lld MB", &mb);
	}
	pclose(f);
	EXPECT_LT(hyper_sysfs_ll(0, "size") / MiB * 9 / 10, mb);
	/* A program bound there with numactl gets its pages there. */
	EXPECT_EQ(0, system("numactl --membind=1 -- sh -c 'dd if=/dev/zero of=/dev/null bs=16M count=1 2>/dev/null'"));
	mode(_metadata, "device");
}

TEST_F(numa, libnuma_places_and_migrates_pages)
{
	size_t len = 64 * MiB, pages = len / 4096;
	void **addr = calloc(pages, sizeof(*addr));
	int *nodes = calloc(pages, sizeof(int));
	int *status = calloc(pages, sizeof(int));
	uint8_t *p;

	ASSERT_NE(NULL, addr);
	ASSERT_EQ(0, numa_available() < 0);
	to_system_ram(_metadata, "online_movable");
	p = numa_alloc_onnode(len, NODE);
	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < len; i++)
		p[i] = hyper_pattern(11, i);
	for (size_t i = 0; i < pages; i++)
		addr[i] = p + i * 4096;

	/* Every page is on the pool node... */
	ASSERT_EQ(0, move_pages(0, pages, addr, NULL, status, 0));
	for (size_t i = 0; i < pages; i++)
		ASSERT_EQ(NODE, status[i]);
	/* ...moves to DRAM and back, and keeps its bytes. */
	for (int to = 0; to <= NODE; to += NODE) {
		for (size_t i = 0; i < pages; i++)
			nodes[i] = to;
		ASSERT_EQ(0, move_pages(0, pages, addr, nodes, status,
					MPOL_MF_MOVE));
		ASSERT_EQ(0, move_pages(0, pages, addr, NULL, status, 0));
		for (size_t i = 0; i < pages; i++)
			ASSERT_EQ(to, status[i]);
		for (size_t i = 0; i < len; i++)
			ASSERT_EQ(hyper_pattern(11, i), p[i]);
	}
	numa_free(p, len);
	mode(_metadata, "device");
	free(addr);
	free(nodes);
	free(status);
}

TEST_F(numa, refused_while_regions_exist)
{
	int fd = hyper_dev_open(0);
	char now[32];
	uint32_t h;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hyper_alloc(fd, MiB, 0, &h, NULL));
	EXPECT_EQ(-EBUSY, hyper_sysfs_write(0, "mode", "system-ram"));
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", now, sizeof(now)));
	EXPECT_STREQ("device", now);
	EXPECT_EQ(0, hyper_iomem_count("System RAM (hyper)"));
	/* The region still works... */
	EXPECT_EQ(0, hyper_alloc(fd, MiB, 0, NULL, NULL));
	close(fd);
	/* ...and once every region is gone the switch goes through. */
	to_system_ram(_metadata, "online_movable");
	mode(_metadata, "device");
}

TEST_F(numa, refused_while_transfers_in_flight)
{
	int p[2], status;
	char c, now[32];
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct io_uring ring;
		uint8_t *buf = malloc(8 * MiB);
		uint32_t h;
		int fd = hyper_dev_open(0);
		bool told = false;

		memset(buf, 1, 8 * MiB);
		if (fd < 0 || hyper_ring_init(&ring, 8) ||
		    hyper_alloc(fd, 8 * MiB, 0, &h, NULL))
			_exit(1);
		for (;;) {
			struct hyper_xfer x = {
				.addr = (uintptr_t)buf, .len = 8 * MiB,
				.handle = h, .dir = HYPER_DIR_STORE,
			};

			hyper_prep_xfer(io_uring_get_sqe(&ring), fd, &x, -1);
			io_uring_submit(&ring);
			if (!told && write(p[1], "r", 1) == 1)
				told = true;
			hyper_submit_wait(&ring, NULL);
		}
	}
	ASSERT_EQ(1, read(p[0], &c, 1));
	EXPECT_EQ(-EBUSY, hyper_sysfs_write(0, "mode", "system-ram"));
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", now, sizeof(now)));
	EXPECT_STREQ("device", now);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(p[0]);
	close(p[1]);
	EXPECT_TRUE(hyper_poll(!hyper_sysfs_ll(0, "nr_regions"), 60));
	to_system_ram(_metadata, "online_movable");
	mode(_metadata, "device");
}

struct stalled {
	int uffd;
	uint8_t *buf;
};

/*
 * A store whose source pages are missing behind a userfaultfd: the
 * module has taken its queue slot and its region, and waits in the pin
 * until the test fills the pages.  Returns once the fault is pending.
 */
static int stall_store(struct io_uring *ring, int fd, uint32_t h,
		       struct stalled *st)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct hyper_xfer x = { .len = MiB, .handle = h,
				.dir = HYPER_DIR_STORE };
	struct pollfd pfd;

	st->buf = mmap(NULL, MiB, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* Without O_NONBLOCK, poll() on a userfaultfd is POLLERR at once. */
	st->uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (st->buf == MAP_FAILED || st->uffd < 0 ||
	    ioctl(st->uffd, UFFDIO_API, &api))
		return -errno;
	reg.range.start = (uintptr_t)st->buf;
	reg.range.len = MiB;
	if (ioctl(st->uffd, UFFDIO_REGISTER, &reg))
		return -errno;
	x.addr = (uintptr_t)st->buf;
	hyper_prep_xfer(io_uring_get_sqe(ring), fd, &x, -1);
	if (io_uring_submit(ring) != 1)
		return -EIO;
	pfd.fd = st->uffd;
	pfd.events = POLLIN;
	/* Only a lost request waits this long; the fault comes at once. */
	if (poll(&pfd, 1, 60000) != 1)
		return -ETIMEDOUT;
	return pfd.revents & POLLIN ? 0 : -EIO;
}

/* The log says what blocks the switch: here transfers, not regions. */
TEST_F(numa, in_flight_refusal_names_transfers)
{
	struct stalled st;
	struct uffdio_zeropage zp;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int fd = hyper_dev_open(0);
	int said_xfer, said_regions;
	uint32_t h;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hyper_ring_init(&ring, 4));
	ASSERT_EQ(0, hyper_alloc(fd, MiB, 0, &h, NULL));
	said_xfer = hyper_dmesg_count("transfer requests in flight");
	said_regions = hyper_dmesg_count("regions still exist");
	ASSERT_EQ(0, stall_store(&ring, fd, h, &st));
	/* Even with its handle gone, the request holds the region. */
	EXPECT_EQ(0, hyper_free(fd, h));
	EXPECT_EQ(1, hyper_stat(0, "inflight"));
	EXPECT_EQ(-EBUSY, hyper_sysfs_write(0, "mode", "system-ram"));
	EXPECT_EQ(said_xfer + 1,
		  hyper_dmesg_count("1 transfer requests in flight"));
	EXPECT_EQ(said_regions, hyper_dmesg_count("regions still exist"));

	zp.range.start = (uintptr_t)st.buf;
	zp.range.len = MiB;
	zp.mode = 0;
	ASSERT_EQ(0, ioctl(st.uffd, UFFDIO_ZEROPAGE, &zp));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(MiB, cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	close(st.uffd);
	munmap(st.buf, MiB);
	close(fd);
	/* Nothing blocks it now. */
	to_system_ram(_metadata, NULL);
	mode(_metadata, "device");
}

TEST_F(numa, device_calls_refused_in_system_ram_mode)
{
	struct hyper_pool_info info;
	int fd;

	to_system_ram(_metadata, "online_movable");
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBUSY, hyper_alloc(fd, MiB, 0, NULL, NULL));
	/* Asking about the pool is still fine. */
	EXPECT_EQ(0, hyper_info(fd, &info));
	close(fd);
	mode(_metadata, "device");
}

/*
 * Kernel pages in the window make offlining impossible.  With the window
 * onlined for the kernel (ZONE_NORMAL), the module's debugfs hold_pages
 * takes some there.  Going back must fail with -EBUSY and change nothing;
 * once the pages are given back, it must succeed.
 */
#define HOLD	"/sys/kernel/debug/hyper/hyper0/hold_pages"

TEST_F_TIMEOUT(numa, offline_failure_leaves_system_ram, 120)
{
	char now[32];

	to_system_ram(_metadata, "online_kernel");
	ASSERT_EQ(0, hyper_write_file(HOLD, "16"));
	EXPECT_EQ(-EBUSY, hyper_sysfs_write(0, "mode", "device"));
	ASSERT_EQ(0, hyper_sysfs_read(0, "mode", now, sizeof(now)));
	EXPECT_STREQ("system-ram", now);
	EXPECT_EQ(1, hyper_iomem_count("System RAM (hyper)"));
	EXPECT_EQ(nr_blocks(), window_blocks(NULL, "online"));
	ASSERT_EQ(0, hyper_write_file(HOLD, "0"));
	mode(_metadata, "device");
	EXPECT_EQ(0, hyper_iomem_count("System RAM (hyper)"));
}

TEST_F(numa, rmmod_refused_while_system_ram)
{
	int ret;

	to_system_ram(_metadata, "online_movable");
	ret = hyper_module_unload();
	EXPECT_TRUE(ret == -EAGAIN || ret == -EBUSY);
	EXPECT_TRUE(hyper_module_loaded());
	mode(_metadata, "device");
	EXPECT_EQ(0, hyper_module_unload());
	EXPECT_EQ(0, hyper_module_load(hyper_modparams()));
}

TEST_F_TIMEOUT(numa, load_system_ram_device_unload_20_cycles, 900)
{
	if (hyper_module_loaded())
		ASSERT_EQ(0, hyper_module_unload());
	for (int i = 0; i < 20; i++) {
		ASSERT_EQ(0, hyper_module_load(hyper_modparams())) {
			TH_LOG("cycle %d: load", i);
		}
		to_system_ram(_metadata, i & 1 ? "online_movable" : NULL);
		mode(_metadata, "device");
		ASSERT_EQ(0, hyper_module_unload()) {
			TH_LOG("cycle %d: unload", i);
		}
		ASSERT_EQ(0, hyper_iomem_count("hyper"));
	}
	EXPECT_EQ(0, hyper_module_load(hyper_modparams()));
}

TEST_HARNESS_MAIN
