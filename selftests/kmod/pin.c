// SPDX-License-Identifier: GPL-2.0
/*
 * Mappings of regions are pages that the kernel's DMA users can take:
 * O_DIRECT reads and writes, io_uring reads and fixed buffers,
 * vmsplice() and process_vm_readv() (get_user_pages() and
 * pin_user_pages(), FOLL_LONGTERM for fixed buffers), with the module's
 * pin counter (debugfs "pins") back at zero after; and a region freed
 * while something still holds its pages is not reused, nor is the module
 * unloaded, until that lets go.  With PFN mappings (remap_pfn_range) every
 * one of these failed with EFAULT.
 *
 * The O_DIRECT file is a brd RAM disk (/dev/ram0): the VM has no other
 * block device, and its tmpfs either refuses O_DIRECT (6.1) or copies
 * without pinning anything (6.6 and later).
 */
#include <fcntl.h>
#include <liburing.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"
#include "hyper_test.h"
#include "hyper_uring.h"

#define REGION		(1 * MiB)
#define PAGES		(REGION / 4096)
#define RAMDISK		"/dev/ram0"
#define BRD_KO		"/lib/modules/brd.ko"
#define PINS		"/sys/kernel/debug/hyper/hyper0/pins"

/* The debugfs counters of device 0: pinned pages and held bytes. */
static int pins(long long *pinned, long long *held)
{
	char buf[128];
	int ret = hyper_read_file(PINS, buf, sizeof(buf));

	if (ret)
		return ret;
	if (sscanf(buf, "pinned_pages %lld held_bytes %lld", pinned,
		   held) != 2)
		return -EINVAL;
	return 0;
}

static long long pinned_pages(void)
{
	long long p, h;

	return pins(&p, &h) ? -1 : p;
}

/* Pins some paths drop from a work item after the syscall returned. */
static long long pinned_pages_settled(void)
{
	long long n = pinned_pages();

	for (int i = 0; n > 0 && i < 200; i++) {
		usleep(100 * 1000);
		n = pinned_pages();
	}
	return n;
}

static long long held_bytes(void)
{
	long long p, h;

	return pins(&p, &h) ? -1 : h;
}

/*
 * Before 6.5, io_uring pins a fixed buffer (FOLL_LONGTERM) and then
 * refuses it with -EOPNOTSUPP if a page is in a file mapping other than
 * shmem or hugetlbfs; 6.5 left that to GUP, which takes device files.
 * A PFN mapping failed the pin itself, with -EFAULT.
 */
static bool uring_takes_file_buffers(void)
{
	struct utsname u;
	int major, minor;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 5);
}

/*
 * Whether this VM can have the RAM disk: `make vm-suite` and `make check`
 * always put brd.ko in the initramfs; only a kernel built without brd
 * (the debug kernel of `make check-debug-kernel`) has none.
 */
#define NEED_RAMDISK()							\
	do {								\
		if (access(RAMDISK, F_OK) && access(BRD_KO, F_OK))	\
			SKIP(return, "no %s in this VM's initramfs", BRD_KO); \
	} while (0)

/* The RAM disk, made at first use; 16 MiB. */
static int ramdisk_open(int flags)
{
	int fd;

	if (access(RAMDISK, F_OK)) {
		fd = open(BRD_KO, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (syscall(SYS_finit_module, fd, "rd_nr=1 rd_size=16384", 0) &&
		    errno != EEXIST) {
			close(fd);
			return -errno;
		}
		close(fd);
	}
	fd = open(RAMDISK, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Fill the RAM disk's [off, off + len) with hyper_pattern(seed). */
static int ramdisk_fill(uint64_t off, uint64_t len, uint64_t seed)
{
	uint8_t *buf = malloc(len);
	int fd = ramdisk_open(O_RDWR), ret = 0;

	if (fd < 0 || !buf) {
		free(buf);
		return fd < 0 ? fd : -ENOMEM;
	}
	hyper_fill(buf, len, seed);
	if (pwrite(fd, buf, len, off) != (ssize_t)len || fsync(fd))
		ret = -EIO;
	close(fd);
	free(buf);
	return ret;
}

FIXTURE(pin) {
	int fd;
	uint32_t handle;
	uint8_t *map;
	long long used0;
	long long regions0;
};

FIXTURE_SETUP(pin)
{
	uint64_t off;

	ASSERT_EQ(0, hyper_module_ensure());
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pinned_pages());
	ASSERT_EQ(0, held_bytes());
	self->used0 = hyper_sysfs_ll(0, "used");
	self->regions0 = hyper_sysfs_ll(0, "nr_regions");
	ASSERT_EQ(0, hyper_alloc(self->fd, REGION, 0, &self->handle, &off));
	self->map = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->fd, off);
	ASSERT_NE(MAP_FAILED, self->map);
}

FIXTURE_TEARDOWN(pin)
{
	if (self->map)
		munmap(self->map, REGION);
	if (self->handle)
		hyper_free(self->fd, self->handle);
	if (self->fd >= 0)
		close(self->fd);
	/* Whatever a test pinned is back, and its region is gone. */
	EXPECT_EQ(0, pinned_pages_settled());
	EXPECT_EQ(0, held_bytes());
	EXPECT_EQ(self->used0, hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(self->regions0, hyper_sysfs_ll(0, "nr_regions"));
}

TEST_F(pin, odirect_read_into_and_write_from_a_mapping)
{
	uint8_t *buf;
	int fd;

	NEED_RAMDISK();
	buf = malloc(REGION);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, ramdisk_fill(0, REGION, 11));
	fd = ramdisk_open(O_RDWR | O_DIRECT);
	ASSERT_LE(0, fd) TH_LOG("%s: %s (is brd.ko in the initramfs?)",
				RAMDISK, strerror(-fd));
	ASSERT_EQ(REGION, pread(fd, self->map, REGION, 0))
		TH_LOG("O_DIRECT pread into the mapping: %s", strerror(errno));
	EXPECT_EQ(REGION, hyper_check(self->map, REGION, 11));

	/* And the other way: the device reads the pool pages. */
	hyper_fill(self->map, REGION, 12);
	ASSERT_EQ(REGION, pwrite(fd, self->map, REGION, REGION))
		TH_LOG("O_DIRECT pwrite from the mapping: %s", strerror(errno));
	ASSERT_EQ(REGION, pread(fd, self->map, REGION, 0));
	EXPECT_EQ(REGION, hyper_check(self->map, REGION, 11));
	close(fd);
	fd = ramdisk_open(O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(REGION, pread(fd, buf, REGION, REGION));
	EXPECT_EQ(REGION, hyper_check(buf, REGION, 12));
	close(fd);
	free(buf);
}

TEST_F(pin, uring_odirect_read_into_a_mapping)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int fd;

	NEED_RAMDISK();
	ASSERT_EQ(0, ramdisk_fill(0, REGION, 21));
	fd = ramdisk_open(O_RDONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, fd, self->map, REGION, 0);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(REGION, cqe->res) TH_LOG("READ: %s", strerror(-cqe->res));
	io_uring_cqe_seen(&ring, cqe);
	EXPECT_EQ(REGION, hyper_check(self->map, REGION, 21));
	io_uring_queue_exit(&ring);
	close(fd);
}

TEST_F(pin, uring_fixed_buffer_pins_and_unpins)
{
	struct iovec iov = { .iov_base = self->map, .iov_len = REGION };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int fd, ret;

	if (uring_takes_file_buffers())
		NEED_RAMDISK();
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	ret = io_uring_register_buffers(&ring, &iov, 1);
	if (!uring_takes_file_buffers()) {
		/* The long-term pin worked; io_uring then refused the file. */
		EXPECT_EQ(-EOPNOTSUPP, ret);
		EXPECT_EQ(0, pinned_pages_settled());
		io_uring_queue_exit(&ring);
		return;
	}
	ASSERT_EQ(0, ret) TH_LOG("register: %s", strerror(-ret));
	EXPECT_EQ((long long)PAGES, pinned_pages());

	ASSERT_EQ(0, ramdisk_fill(0, REGION, 31));
	fd = ramdisk_open(O_RDONLY | O_DIRECT);
	ASSERT_LE(0, fd);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read_fixed(sqe, fd, self->map, REGION, 0, 0);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
	EXPECT_EQ(REGION, cqe->res) TH_LOG("READ_FIXED: %s",
					   strerror(-cqe->res));
	io_uring_cqe_seen(&ring, cqe);
	EXPECT_EQ(REGION, hyper_check(self->map, REGION, 31));
	close(fd);

	ASSERT_EQ(0, io_uring_unregister_buffers(&ring));
	EXPECT_EQ(0, pinned_pages_settled());
	io_uring_queue_exit(&ring);
}

TEST_F(pin, process_vm_readv_and_writev)
{
	uint8_t *buf = malloc(REGION);
	struct iovec local = { .iov_base = buf, .iov_len = REGION };
	struct iovec remote = { .iov_base = self->map, .iov_len = REGION };

	ASSERT_NE(NULL, buf);
	hyper_fill(self->map, REGION, 41);
	ASSERT_EQ(REGION, process_vm_readv(getpid(), &local, 1, &remote, 1, 0))
		TH_LOG("process_vm_readv: %s", strerror(errno));
	EXPECT_EQ(REGION, hyper_check(buf, REGION, 41));
	hyper_fill(buf, REGION, 42);
	ASSERT_EQ(REGION, process_vm_writev(getpid(), &local, 1, &remote, 1,
					    0));
	EXPECT_EQ(REGION, hyper_check(self->map, REGION, 42));
	free(buf);
}

/* Reads @len bytes of a pipe; whether they are the pattern of @seed. */
static bool drain_check(int fd, uint64_t len, uint64_t seed)
{
	uint8_t *buf = malloc(len);
	uint64_t got = 0;
	bool ok;

	while (buf && got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n <= 0)
			break;
		got += n;
	}
	ok = got == len && hyper_check(buf, len, seed) == len;
	free(buf);
	return ok;
}

#define SPLICED		(64 * 1024)	/* what a default pipe holds */

TEST_F(pin, vmsplice_holds_the_pages)
{
	struct iovec iov = { .iov_base = self->map, .iov_len = SPLICED };
	int p[2];

	hyper_fill(self->map, SPLICED, 51);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(SPLICED, vmsplice(p[1], &iov, 1, 0))
		TH_LOG("vmsplice: %s", strerror(errno));
	EXPECT_EQ((long long)(SPLICED / 4096), pinned_pages());
	EXPECT_TRUE(drain_check(p[0], SPLICED, 51));
	EXPECT_EQ(0, pinned_pages());
	close(p[0]);
	close(p[1]);
}

/*
 * Pages a pipe still holds after the region is unmapped and freed: the
 * range stays out of use (and counted), the pipe reads the old data
 * whatever is allocated meanwhile, and the module does not unload until
 * the pipe lets go.
 */
TEST_F(pin, region_freed_while_held_is_not_reused)
{
	struct iovec iov = { .iov_base = self->map, .iov_len = SPLICED };
	uint32_t h[4];
	int p[2], i;

	hyper_fill(self->map, REGION, 61);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(SPLICED, vmsplice(p[1], &iov, 1, 0));
	ASSERT_EQ(0, munmap(self->map, REGION));
	self->map = NULL;
	ASSERT_EQ(0, hyper_free(self->fd, self->handle));
	self->handle = 0;

	EXPECT_EQ(REGION, held_bytes());
	EXPECT_EQ(self->used0 + (long long)REGION, hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(self->regions0 + 1, hyper_sysfs_ll(0, "nr_regions"));
	/* New regions, zeroed, come from elsewhere. */
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, hyper_alloc(self->fd, REGION, 0, &h[i], NULL));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, hyper_free(self->fd, h[i]));
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(-EAGAIN, hyper_module_unload());

	EXPECT_TRUE(drain_check(p[0], SPLICED, 61));
	close(p[0]);
	close(p[1]);
	/* Reading the counters gives the range back. */
	EXPECT_EQ(0, held_bytes());
	EXPECT_EQ(self->used0, hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(self->regions0, hyper_sysfs_ll(0, "nr_regions"));
	ASSERT_EQ(0, hyper_module_unload());
	ASSERT_EQ(0, hyper_module_load(hyper_modparams()));
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
}

/*
 * A mapping of a region is process memory like any other as a transfer's
 * user side: a pool to pool copy through it is exact, writes no byte
 * outside the range it names, and leaves nothing pinned.
 */
TEST_F(pin, transfer_takes_a_mapping_as_user_buffer)
{
	const uint64_t at = 3 * 4096 + 100, len = 2 * 4096 + 5;
	uint8_t *src = malloc(REGION), *back = malloc(len);
	struct io_uring ring;
	uint32_t h;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, back);
	hyper_fill(src, REGION, 5);
	hyper_fill(self->map, REGION, 9);
	ASSERT_EQ(0, hyper_alloc(self->fd, REGION, 0, &h, NULL));
	ASSERT_EQ(0, hyper_ring_init(&ring, 4));
	ASSERT_EQ(REGION, hyper_xfer_sync(&ring, self->fd, h,
					  HYPER_DIR_STORE, src, REGION, 0, -1));

	/* Region h's [4096, 4096 + len) into the mapping, at an odd offset. */
	EXPECT_EQ(len, hyper_xfer_sync(&ring, self->fd, h, HYPER_DIR_PREFETCH,
				       self->map + at, len, 4096, -1));
	EXPECT_EQ(0, memcmp(self->map + at, src + 4096, len));
	EXPECT_EQ(at, hyper_check(self->map, at, 9));
	for (uint64_t i = at + len; i < REGION; i++)
		if (self->map[i] != hyper_pattern(9, i)) {
			EXPECT_EQ(at + len, i);
			break;
		}

	/* And from the mapping back into region h, read back elsewhere. */
	EXPECT_EQ(len, hyper_xfer_sync(&ring, self->fd, h, HYPER_DIR_STORE,
				       self->map + 5000, len, 8192, -1));
	EXPECT_EQ(len, hyper_xfer_sync(&ring, self->fd, h, HYPER_DIR_PREFETCH,
				       back, len, 8192, -1));
	EXPECT_EQ(0, memcmp(back, self->map + 5000, len));
	EXPECT_EQ(0, pinned_pages_settled());

	io_uring_queue_exit(&ring);
	EXPECT_EQ(0, hyper_free(self->fd, h));
	free(src);
	free(back);
}

TEST_F(pin, unmapped_pages_fault_back)
{
	hyper_fill(self->map, REGION, 71);
	ASSERT_EQ(0, madvise(self->map, REGION, MADV_DONTNEED));
	EXPECT_EQ(REGION, hyper_check(self->map, REGION, 71));
}

TEST_HARNESS_MAIN
