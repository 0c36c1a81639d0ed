// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input to /dev/hyperN: every case gets a clear errno and leaves the
 * pool as it was (same used bytes, other regions intact).
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hyper_test.h"

FIXTURE(dev) {
	int fd;
	uint32_t h;		/* a live region that must survive every case */
	uint64_t off;
	uint8_t *map;
	long long used0;
};

#define LIVE_SIZE	(64 * 1024)

FIXTURE_SETUP(dev)
{
	ASSERT_EQ(0, hyper_module_ensure());
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, hyper_alloc(self->fd, LIVE_SIZE, 0, &self->h, &self->off));
	self->map = mmap(NULL, LIVE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->fd, self->off);
	ASSERT_NE(MAP_FAILED, self->map);
	memset(self->map, 0x3c, LIVE_SIZE);
	self->used0 = hyper_sysfs_ll(0, "used");
}

/* Nothing lost: the live region and the accounting are untouched. */
FIXTURE_TEARDOWN(dev)
{
	struct hyper_region_info q = { .handle = self->h };

	EXPECT_EQ(self->used0, hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(0, hyper_ioctl(self->fd, HYPER_IOC_QUERY, &q));
	EXPECT_EQ(LIVE_SIZE, q.size);
	for (int i = 0; i < LIVE_SIZE; i++)
		if (self->map[i] != 0x3c) {
			TH_LOG("live region corrupted at %d", i);
			EXPECT_EQ(0x3c, self->map[i]);
			break;
		}
	munmap(self->map, LIVE_SIZE);
	EXPECT_EQ(0, hyper_free(self->fd, self->h));
	close(self->fd);
}

TEST_F(dev, unknown_ioctl)
{
	struct hyper_alloc a = { .size = 4096 };

	EXPECT_EQ(-ENOTTY, hyper_ioctl(self->fd, _IOWR('h', 0x8f, struct hyper_alloc), &a));
	EXPECT_EQ(-ENOTTY, hyper_ioctl(self->fd, _IOWR('x', 0x81, struct hyper_alloc), &a));
	/* Right number, wrong size encoded: a different command. */
	EXPECT_EQ(-ENOTTY, hyper_ioctl(self->fd, _IOWR('h', 0x81, __u64), &a));
	EXPECT_EQ(-ENOTTY, hyper_ioctl(self->fd, 0, &a));
}

TEST_F(dev, alloc_reserved_fields_nonzero)
{
	struct hyper_alloc a = { .size = 4096 };

	a.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, hyper_ioctl(self->fd, HYPER_IOC_ALLOC, &a));
	a.reserved[0] = 0;
	a.reserved[1] = 1ULL << 63;
	EXPECT_EQ(-EINVAL, hyper_ioctl(self->fd, HYPER_IOC_ALLOC, &a));
	a.reserved[1] = 0;
	/* Output fields are not inputs: junk in them is refused too. */
	a.handle = 5;
	EXPECT_EQ(-EINVAL, hyper_ioctl(self->fd, HYPER_IOC_ALLOC, &a));
	a.handle = 0;
	a.mmap_offset = 4096;
	EXPECT_EQ(-EINVAL, hyper_ioctl(self->fd, HYPER_IOC_ALLOC, &a));
}

TEST_F(dev, alloc_unknown_flags)
{
	EXPECT_EQ(-EINVAL, hyper_alloc(self->fd, 4096, 1U << 1, NULL, NULL));
	EXPECT_EQ(-EINVAL, hyper_alloc(self->fd, 4096, 1U << 31, NULL, NULL));
	EXPECT_EQ(-EINVAL, hyper_alloc(self->fd, 4096,
				       HYPER_ALLOC_HUGE_ALIGN | 4, NULL, NULL));
}

TEST_F(dev, alloc_size_zero)
{
	EXPECT_EQ(-EINVAL, hyper_alloc(self->fd, 0, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, hyper_alloc(self->fd, 0, HYPER_ALLOC_HUGE_ALIGN,
				       NULL, NULL));
}

TEST_F(dev, alloc_size_overflow)
{
	EXPECT_EQ(-EOVERFLOW, hyper_alloc(self->fd, ~0ULL & ~4095ULL, 0,
					  NULL, NULL));
	EXPECT_EQ(-EOVERFLOW, hyper_alloc(self->fd, (1ULL << 44) + 4096, 0,
					  NULL, NULL));
	/*
	 * Exactly 16 TiB is 2^32 pages, which genalloc's unsigned int page
	 * count made 0 (kmod-huge reproduces the hang it caused).
	 */
	EXPECT_EQ(-EOVERFLOW, hyper_alloc(self->fd, 1ULL << 44, 0, NULL, NULL));
	EXPECT_EQ(-EOVERFLOW, hyper_alloc(self->fd, 1ULL << 44,
					  HYPER_ALLOC_HUGE_ALIGN, NULL, NULL));
	EXPECT_EQ(-EOVERFLOW, hyper_alloc(self->fd, 1ULL << 63,
					  HYPER_ALLOC_HUGE_ALIGN, NULL, NULL));
	/* ~0 is not page aligned, which is found first. */
	EXPECT_EQ(-EINVAL, hyper_alloc(self->fd, ~0ULL, 0, NULL, NULL));
}

TEST_F(dev, alloc_unaligned_size)
{
	EXPECT_EQ(-EINVAL, hyper_alloc(self->fd, 1, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, hyper_alloc(self->fd, 4095, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, hyper_alloc(self->fd, 4097, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, hyper_alloc(self->fd, MiB + 512, 0, NULL, NULL));
}

TEST_F(dev, alloc_larger_than_free)
{
	long long size = hyper_sysfs_ll(0, "size");
	uint32_t h;

	EXPECT_EQ(-ENOMEM, hyper_alloc(self->fd, size, 0, NULL, NULL));
	EXPECT_EQ(-ENOMEM, hyper_alloc(self->fd, size + 4096, 0, NULL, NULL));
	/* ... and a normal allocation still works afterwards. */
	ASSERT_EQ(0, hyper_alloc(self->fd, MiB, 0, &h, NULL));
	EXPECT_EQ(0, hyper_free(self->fd, h));
}

TEST_F(dev, double_free)
{
	uint32_t h;

	ASSERT_EQ(0, hyper_alloc(self->fd, 4096, 0, &h, NULL));
	EXPECT_EQ(0, hyper_free(self->fd, h));
	EXPECT_EQ(-ENOENT, hyper_free(self->fd, h));
}

TEST_F(dev, bogus_handles)
{
	struct hyper_region_info q = { 0 };

	EXPECT_EQ(-ENOENT, hyper_free(self->fd, 0));
	EXPECT_EQ(-ENOENT, hyper_free(self->fd, self->h + 1000));
	EXPECT_EQ(-ENOENT, hyper_free(self->fd, 0xffffffff));
	q.handle = 0xdeadbeef;
	EXPECT_EQ(-ENOENT, hyper_ioctl(self->fd, HYPER_IOC_QUERY, &q));
}

TEST_F(dev, free_and_query_reserved_nonzero)
{
	struct hyper_free f = { .handle = self->h, .flags = 1 };
	struct hyper_region_info q = { .handle = self->h };

	EXPECT_EQ(-EINVAL, hyper_ioctl(self->fd, HYPER_IOC_FREE, &f));
	f.flags = 0;
	f.reserved[0] = 2;
	EXPECT_EQ(-EINVAL, hyper_ioctl(self->fd, HYPER_IOC_FREE, &f));
	q.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, hyper_ioctl(self->fd, HYPER_IOC_QUERY, &q));
	q.reserved[1] = 0;
	q.flags = 1;
	EXPECT_EQ(-EINVAL, hyper_ioctl(self->fd, HYPER_IOC_QUERY, &q));
}

TEST_F(dev, bad_user_pointers)
{
	EXPECT_EQ(-EFAULT, hyper_ioctl(self->fd, HYPER_IOC_ALLOC, NULL));
	EXPECT_EQ(-EFAULT, hyper_ioctl(self->fd, HYPER_IOC_INFO, (void *)8));
	EXPECT_EQ(-EFAULT, hyper_ioctl(self->fd, HYPER_IOC_FREE, NULL));
	EXPECT_EQ(-EFAULT, hyper_ioctl(self->fd, HYPER_IOC_QUERY, NULL));
}

static int map_errno(int fd, size_t len, off_t off, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

TEST_F(dev, mmap_beyond_region)
{
	EXPECT_EQ(-EINVAL, map_errno(self->fd, 2 * LIVE_SIZE, self->off,
				     MAP_SHARED));
	EXPECT_EQ(-EINVAL, map_errno(self->fd, 4096, self->off + LIVE_SIZE,
				     MAP_SHARED));
	EXPECT_EQ(-EINVAL, map_errno(self->fd, 8192,
				     self->off + LIVE_SIZE - 4096, MAP_SHARED));
	EXPECT_EQ(0, map_errno(self->fd, 4096, self->off + LIVE_SIZE - 4096,
			       MAP_SHARED));
}

TEST_F(dev, mmap_wrong_offset)
{
	/* Offset 0 is no region; nor is a handle that was never made. */
	EXPECT_EQ(-EINVAL, map_errno(self->fd, 4096, 0, MAP_SHARED));
	EXPECT_EQ(-EINVAL, map_errno(self->fd, 4096,
				     (off_t)(self->h + 77) << 44, MAP_SHARED));
	/* Unaligned offsets never reach the driver. */
	EXPECT_EQ(-EINVAL, map_errno(self->fd, 4096, self->off + 100,
				     MAP_SHARED));
}

TEST_F(dev, mmap_private_refused)
{
	EXPECT_EQ(-EINVAL, map_errno(self->fd, 4096, self->off, MAP_PRIVATE));
}

TEST_F(dev, mmap_freed_region)
{
	uint64_t off;
	uint32_t h;

	ASSERT_EQ(0, hyper_alloc(self->fd, 4096, 0, &h, &off));
	ASSERT_EQ(0, hyper_free(self->fd, h));
	EXPECT_EQ(-EINVAL, map_errno(self->fd, 4096, off, MAP_SHARED));
}

TEST_F(dev, another_process_handle)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Its own open: the parent's handle means nothing here. */
		struct hyper_region_info q = { .handle = self->h };
		int fd = hyper_dev_open(0);
		int bad = 0;

		if (fd < 0)
			_exit(10);
		bad |= (hyper_ioctl(fd, HYPER_IOC_QUERY, &q) != -ENOENT) << 0;
		bad |= (hyper_free(fd, self->h) != -ENOENT) << 1;
		bad |= (map_errno(fd, 4096, self->off, MAP_SHARED) != -EINVAL) << 2;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(dev, second_open_in_same_process_is_separate)
{
	int fd2 = hyper_dev_open(0);
	struct hyper_region_info q = { .handle = self->h };

	ASSERT_LE(0, fd2);
	EXPECT_EQ(-ENOENT, hyper_ioctl(fd2, HYPER_IOC_QUERY, &q));
	EXPECT_EQ(-ENOENT, hyper_free(fd2, self->h));
	close(fd2);
}

/*
 * HYPER_IOC_ALLOC whose copy back to the caller faults, while another
 * thread frees the new handle and allocates again (getting another number:
 * handles are not reused at once): the failed ALLOC must take back only
 * its own region, which is gone already.  A write-protected userfaultfd
 * page holds the copy until the other thread is done.
 */
struct race {
	int fd, uffd;
	char *page;
	int free_ret, alloc_ret;
	uint32_t handle;
};

static void *race_free_and_realloc(void *arg)
{
	struct race *r = arg;
	struct pollfd pfd = { .fd = r->uffd, .events = POLLIN };
	struct uffdio_range range = { (unsigned long)r->page, 4096 };
	struct uffd_msg msg;

	if (poll(&pfd, 1, 10000) != 1 ||
	    read(r->uffd, &msg, sizeof(msg)) != sizeof(msg))
		return NULL;
	r->free_ret = hyper_free(r->fd, 1);
	r->alloc_ret = hyper_alloc(r->fd, 8192, 0, &r->handle, NULL);
	/* Let the faulting copy fail rather than wait on. */
	mprotect(r->page, 4096, PROT_READ);
	ioctl(r->uffd, UFFDIO_WAKE, &range);
	return NULL;
}

TEST(alloc_copy_out_fault_racing_free_and_realloc)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_writeprotect wp = { .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	struct hyper_region_info q = { 0 };
	struct race r = { .free_ret = 1, .alloc_ret = 1 };
	long long used0;
	pthread_t th;

	ASSERT_EQ(0, hyper_module_ensure());
	used0 = hyper_sysfs_ll(0, "used");
	r.fd = hyper_dev_open(0);
	ASSERT_LE(0, r.fd);
	r.page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r.page);
	memset(r.page, 0, 4096);
	((struct hyper_alloc *)r.page)->size = 4096;
	r.uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	ASSERT_LE(0, r.uffd);
	ASSERT_EQ(0, ioctl(r.uffd, UFFDIO_API, &api));
	reg.range.start = (unsigned long)r.page;
	reg.range.len = 4096;
	ASSERT_EQ(0, ioctl(r.uffd, UFFDIO_REGISTER, &reg));
	wp.range = reg.range;
	ASSERT_EQ(0, ioctl(r.uffd, UFFDIO_WRITEPROTECT, &wp));

	ASSERT_EQ(0, pthread_create(&th, NULL, race_free_and_realloc, &r));
	EXPECT_EQ(-EFAULT, hyper_ioctl(r.fd, HYPER_IOC_ALLOC, r.page));
	pthread_join(th, NULL);
	EXPECT_EQ(0, r.free_ret);
	EXPECT_EQ(0, r.alloc_ret);
	EXPECT_NE(1, r.handle);
	/* The other thread's region survived the failed ALLOC... */
	q.handle = r.handle;
	EXPECT_EQ(0, hyper_ioctl(r.fd, HYPER_IOC_QUERY, &q));
	EXPECT_EQ(8192, q.size);
	EXPECT_EQ(used0 + 8192, hyper_sysfs_ll(0, "used"));
	/* ...and nothing is left once the file is closed. */
	close(r.fd);
	EXPECT_EQ(used0, hyper_sysfs_ll(0, "used"));
	close(r.uffd);
	munmap(r.page, 4096);
}

TEST_HARNESS_MAIN
