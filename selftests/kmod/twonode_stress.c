// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrent ALLOC/FREE on every node of one pool (two in twonode.suite,
 * three in threenode.suite): each node runs HYPER_TWONODE_OPS (default
 * 10^4) ALLOCs and FREEs at the same time as the others,
 * holding up to 64 regions of 4 KiB to 64 KiB.  Every region gets its
 * node, its sequence number and each word's index stamped into every
 * word; each FREE first checks the whole region, as do periodic sweeps.
 * A byte claimed twice is overwritten by the later ALLOC's zeroing or
 * stamp, and the earlier holder's check sees it.
 *
 * After every node has finished, each checks every region it still
 * holds, then each publishes where its regions lie in physical memory
 * (debugfs and phys_base) and checks that none overlaps another node's:
 * no byte claimed twice, seen from every side.  Every region is zeroed
 * before its FREE, so the pool is left as zeroed as it was found.
 *
 * Built twice.  kmod_twonode_stress: both nodes joined to one pool (the
 * node protocol; skipped when the module lacks node_id).
 * kmod_twonode_stress_split: each node's module on its own half of the
 * window, set by hand (window_start/window_size), the one safe setup
 * before the pool format, which shows that the test passes where no byte
 * can be claimed twice.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "twonode.h"

#define MAX_HELD	64
#define PAGE		4096ULL

struct held {
	uint32_t handle;
	uint64_t size, seq;
	uint64_t *p;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Checks a held region and says what is wrong; true when intact. */
static bool intact(struct held *r, int node)
{
	if (tn_check(r->p, r->size, node, r->seq) == r->size / 8)
		return true;
	tn_report(r->p, r->size, node, r->seq);
	return false;
}

/*
 * Publishes this node's live regions from debugfs as a count and
 * (offset, size) pairs; -errno on failure.
 */
static int publish_regions(struct hyper_mbox *m)
{
	const char *path = "/sys/kernel/debug/hyper/hyper0/regions";
	uint64_t *t = hyper_mbox_data(m, m->node), n = 0;
	long long base = hyper_sysfs_ll(0, "phys_base");
	unsigned long long off, sz;
	unsigned int hd, flags;
	char line[256];
	FILE *f;
	int o;

	if (base < 0)
		return (int)base;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%d %u %llx %llu %x", &o, &hd, &off, &sz,
			   &flags) == 5 &&
		    2 * n + 2 < HYPER_MBOX_DATA_LEN / 8) {
			t[1 + 2 * n] = (uint64_t)base + off;
			t[2 + 2 * n] = sz;
			n++;
		}
	fclose(f);
	__atomic_store_n(&t[0], n, __ATOMIC_RELEASE);
	return 0;
}

/* Pairs of regions of the two nodes that overlap, each printed. */
static int overlaps(struct hyper_mbox *m, int a, int b)
{
	uint64_t *ta = hyper_mbox_data(m, a), *tb = hyper_mbox_data(m, b);
	int bad = 0;

	for (uint64_t i = 0; i < ta[0]; i++)
		for (uint64_t j = 0; j < tb[0]; j++) {
			uint64_t ao = ta[1 + 2 * i], as = ta[2 + 2 * i];
			uint64_t bo = tb[1 + 2 * j], bs = tb[2 + 2 * j];

			if (ao < bo + bs && bo < ao + as) {
				fprintf(stderr, "# node %d's region %#llx+%llu overlaps node %d's %#llx+%llu\n",
					a, (unsigned long long)ao,
					(unsigned long long)as, b,
					(unsigned long long)bo,
					(unsigned long long)bs);
				bad++;
			}
		}
	return bad;
}

FIXTURE(stress) {
};

FIXTURE_SETUP(stress)
{
}

FIXTURE_TEARDOWN(stress)
{
}

TEST_F_TIMEOUT(stress, concurrent_alloc_free, TN_TEST_SECS)
{
	const char *s = getenv("HYPER_TWONODE_OPS");
	uint64_t ops = s ? strtoull(s, NULL, 0) : 10000;
	uint64_t done = 0, allocs = 0, frees = 0, seq = 0, bad = 0, st;
	struct held held[MAX_HELD];
	struct hyper_mbox m;
	int fd, nheld = 0, ret;

	if (!SPLIT && !tn_has_node_id())
		SKIP(return, TN_NO_NODE_ID);
	ASSERT_EQ(0, hyper_mbox_open(&m));
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	st = 0x9e3779b97f4a7c15ULL * (m.node + 1);
	ASSERT_EQ(0, hyper_mbox_barrier(&m, "stress-start", tn_secs()));

	while (done < ops && !bad) {
		struct held *r;
		uint64_t off, nz;
		int j;

		if (nheld == MAX_HELD || (nheld && rnd(&st) % 2)) {
			j = (int)(rnd(&st) % nheld);
			r = &held[j];
			bad += !intact(r, m.node);
			memset(r->p, 0, r->size);
			munmap(r->p, r->size);
			ret = hyper_free(fd, r->handle);
			EXPECT_EQ(0, ret);
			bad += ret != 0;
			held[j] = held[--nheld];
			frees++;
		} else {
			r = &held[nheld];
			r->size = (1 + rnd(&st) % 16) * PAGE;
			r->seq = ++seq;
			ret = hyper_alloc(fd, r->size, 0, &r->handle, &off);
			EXPECT_EQ(0, ret) TH_LOG("ALLOC %llu bytes, op %llu",
						 (unsigned long long)r->size,
						 (unsigned long long)done);
			if (ret) {
				bad++;
				break;
			}
			r->p = mmap(NULL, r->size, PROT_READ | PROT_WRITE,
				    MAP_SHARED, fd, off);
			ASSERT_NE(MAP_FAILED, r->p);
			/* Zero-filled when handed out: no one else wrote it. */
			nz = hyper_first_nonzero((uint8_t *)r->p, r->size);
			EXPECT_EQ(r->size, nz);
			bad += nz != r->size;
			tn_fill(r->p, r->size, m.node, r->seq);
			nheld++;
			allocs++;
		}
		done++;
		if (done % 1000 == 0)
			for (j = 0; j < nheld; j++)
				bad += !intact(&held[j], m.node);
	}
	/* Hold a few at the end, outside the count, to compare them. */
	while (!bad && nheld < 8) {
		struct held *r = &held[nheld];
		uint64_t off;

		r->size = 16 * PAGE;
		r->seq = ++seq;
		ASSERT_EQ(0, hyper_alloc(fd, r->size, 0, &r->handle, &off));
		r->p = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    fd, off);
		ASSERT_NE(MAP_FAILED, r->p);
		tn_fill(r->p, r->size, m.node, r->seq);
		nheld++;
	}
	hyper_mbox_put(&m, 0, done);
	ksft_print_msg("node %d: %llu operations (%llu ALLOC, %llu FREE), %d regions held\n",
		       m.node, (unsigned long long)done,
		       (unsigned long long)allocs, (unsigned long long)frees,
		       nheld);
	EXPECT_EQ(ops, done);
	EXPECT_EQ(0, bad);

	/* Every node is done: what each still holds is only its own. */
	EXPECT_EQ(0, hyper_mbox_barrier(&m, "stress-done", tn_secs()));
	for (int j = 0; j < nheld; j++)
		EXPECT_TRUE(intact(&held[j], m.node));
	EXPECT_EQ(0, publish_regions(&m));
	EXPECT_EQ(0, hyper_mbox_barrier(&m, "stress-published", tn_secs()));
	EXPECT_EQ(nheld, hyper_mbox_data(&m, m.node)[0])
		TH_LOG("debugfs does not list exactly the regions this node holds");
	for (int n = 0; n < m.nodes; n++) {
		if (n == m.node)
			continue;
		EXPECT_EQ(ops, hyper_mbox_get(&m, n, 0))
			TH_LOG("node %d ran fewer operations", n);
		EXPECT_EQ(0, overlaps(&m, m.node, n));
	}
	EXPECT_EQ(0, hyper_mbox_barrier(&m, "stress-compared", tn_secs()));

	for (int j = 0; j < nheld; j++) {
		memset(held[j].p, 0, held[j].size);
		munmap(held[j].p, held[j].size);
		EXPECT_EQ(0, hyper_free(fd, held[j].handle));
	}
	close(fd);
	hyper_mbox_close(&m);
}

TEST_HARNESS_MAIN
