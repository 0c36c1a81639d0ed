// SPDX-License-Identifier: GPL-2.0
/*
 * Pool regions on the backend given by --backend: allocation, mapping,
 * zero-fill on reuse, ownership checks and (shmem) NUMA binding.
 *
 * usage: region_test [--backend shmem|kmod]
 */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "helpers.h"

FIXTURE(region) {
	struct hyper_ctx *ctx;
};

FIXTURE_SETUP(region)
{
	ASSERT_EQ(0, open_test_ctx(&self->ctx));
}

FIXTURE_TEARDOWN(region)
{
	hyper_close(self->ctx);
}

TEST_F(region, alloc_map_free)
{
	struct hyper_region *r;
	void *p, *q;

	ASSERT_EQ(0, hyper_region_alloc(self->ctx, 3 << 20, 0, &r))
		TH_LOG("%s", hyper_last_error(self->ctx));
	EXPECT_EQ(3 << 20, hyper_region_size(r));
	ASSERT_EQ(0, hyper_region_map(self->ctx, r, &p));
	ASSERT_EQ(0, hyper_region_map(self->ctx, r, &q));
	EXPECT_EQ(p, q);
	fill_pat(p, 3 << 20, 3);
	EXPECT_EQ(-1, check_pat(p, 3 << 20, 3));
	ASSERT_EQ(0, hyper_region_free(self->ctx, r));
}

TEST_F(region, reused_space_is_zeroed)
{
	struct hyper_region *r;
	unsigned char *p;

	for (int round = 0; round < 2; round++) {
		ASSERT_EQ(0, hyper_region_alloc(self->ctx, 1 << 20, 0, &r));
		ASSERT_EQ(0, hyper_region_map(self->ctx, r, (void **)&p));
		for (size_t i = 0; i < 1 << 20; i++) {
			ASSERT_EQ(0, p[i]) TH_LOG("round %d byte %zu", round, i);
		}
		memset(p, 0xee, 1 << 20);
		ASSERT_EQ(0, hyper_region_free(self->ctx, r));
	}
}

TEST_F(region, huge_align)
{
	struct hyper_region *a, *b;
	void *p;

	ASSERT_EQ(0, hyper_region_alloc(self->ctx, 4096, 0, &a));
	ASSERT_EQ(0, hyper_region_alloc(self->ctx, 4 << 20, HYPER_REGION_HUGE_ALIGN, &b));
	ASSERT_EQ(0, hyper_region_map(self->ctx, b, &p));
	memset(p, 1, 4 << 20);
	EXPECT_EQ(0, hyper_region_free(self->ctx, a));
	EXPECT_EQ(0, hyper_region_free(self->ctx, b));
}

TEST_F(region, refused)
{
	struct hyper_ctx *other;
	struct hyper_region *r, *theirs;

	EXPECT_EQ(-EINVAL, hyper_region_alloc(self->ctx, 0, 0, &r));
	EXPECT_EQ(-EINVAL, hyper_region_alloc(self->ctx, 4096, 1U << 5, &r));
	EXPECT_EQ(-ENOMEM, hyper_region_alloc(self->ctx, 1ULL << 40, 0, &r));
	/* A region of another context is not ours to free. */
	ASSERT_EQ(0, open_test_ctx(&other));
	ASSERT_EQ(0, hyper_region_alloc(other, 4096, 0, &theirs));
	EXPECT_EQ(-ENOENT, hyper_region_free(self->ctx, theirs));
	EXPECT_STREQ("not a region of this context", hyper_last_error(self->ctx));
	hyper_close(other);
	EXPECT_EQ(-EINVAL, hyper_region_free(self->ctx, NULL));
}

TEST_F(region, numa_node)
{
	struct hyper_open_opts o;
	struct hyper_region *r;
	struct hyper_ctx *c;
	int node = -1;
	void *p;

	ASSERT_LE(0, numa_available());
	test_opts(&o);
	o.flags = HYPER_OPEN_NUMA;
	o.numa_node = numa_max_node();
	if (test_backend == HYPER_BACKEND_KMOD) {
		/* The window's node is the module's: asking for one is an error. */
		EXPECT_EQ(-EINVAL, hyper_open(&c, &o));
		return;
	}
	ASSERT_EQ(0, hyper_open(&c, &o)) TH_LOG("%d", o.numa_node);
	ASSERT_EQ(0, hyper_region_alloc(c, 1 << 20, 0, &r)) TH_LOG("%s", hyper_last_error(c));
	ASSERT_EQ(0, hyper_region_map(c, r, &p));
	memset(p, 1, 1 << 20);
	ASSERT_EQ(0, get_mempolicy(&node, NULL, 0, p, MPOL_F_NODE | MPOL_F_ADDR));
	EXPECT_EQ(o.numa_node, node);
	hyper_close(c);

	o.numa_node = numa_max_node() + 1;
	EXPECT_EQ(-EINVAL, hyper_open(&c, &o));
}

/*
 * A user without CAP_IPC_LOCK under Debian's default 8 MiB RLIMIT_MEMLOCK
 * registers 64 MiB: the error names the limit, the bytes and the fix.
 */
TEST(memlock_limit_is_named)
{
	struct rlimit rl = { 8 << 20, 8 << 20 };
	struct hyper_ctx *ctx;
	struct iovec iov;
	char want[512];
	void *buf;

	if (test_backend != HYPER_BACKEND_SHMEM)
		SKIP(return, "drops root, which /dev/hyper0 needs");
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	/* This test runs in a child of its own: root goes for good. */
	if (geteuid() == 0) {
		ASSERT_EQ(0, setresgid(65534, 65534, 65534));
		ASSERT_EQ(0, setresuid(65534, 65534, 65534));
	}
	ASSERT_EQ(0, open_test_ctx(&ctx));
	buf = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	iov.iov_base = buf;
	iov.iov_len = 64 << 20;
	EXPECT_EQ(-ENOMEM, hyper_register_buffers(ctx, &iov, 1));
	snprintf(want, sizeof(want),
		 "io_uring_register_buffers: Cannot allocate memory: pinning 67108864 bytes of buffers needs RLIMIT_MEMLOCK of at least that, and it is 8388608 bytes; raise it with ulimit -l 65536 (KiB) or ulimit -l unlimited in the shell that starts the program, or a memlock line in /etc/security/limits.conf (see libhyper(7))");
	EXPECT_STREQ(want, hyper_last_error(ctx));
	munmap(buf, 64 << 20);
	hyper_close(ctx);
}

HYPER_TEST_MAIN
