// SPDX-License-Identifier: GPL-2.0
/*
 * Two nodes, one window: node 0 ALLOCs 16 MiB and stamps it, then node 1
 * ALLOCs 16 MiB and stamps it, then each reads its own region back.
 *
 * Built twice.  kmod_twonode_standalone (both modules without node_id, each
 * believing it owns the whole window): the test bed's own check that the
 * two guests really share the pool's bytes.  Node 1's ALLOC takes node
 * 0's bytes, and node 0 reads back node 1's stamp, word for word: without
 * this, every test of the node protocol could pass on two private pools.
 *
 * kmod_twonode_joined (node_id set, the pool formatted and both
 * nodes joined): what the pool format fixes.  No byte is claimed twice:
 * each node reads back exactly its own stamp.
 */
#include "kselftest_harness.h"
#include "twonode.h"

#define SHARE_SIZE	(16 * MiB)

FIXTURE(share) {
};

FIXTURE_SETUP(share)
{
}

FIXTURE_TEARDOWN(share)
{
}

TEST_F_TIMEOUT(share, one_window_two_nodes, TN_TEST_SECS)
{
	bool joined = JOINED;
	uint64_t off, first, theirs;
	struct hyper_mbox m;
	uint64_t *p;
	uint32_t h;
	int fd;

	if (joined && !tn_has_node_id())
		SKIP(return, TN_NO_NODE_ID);
	ASSERT_EQ(0, hyper_mbox_open(&m));
	ASSERT_EQ(0, hyper_module_ensure());
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);

	/* Node 0 first, then node 1, each ALLOC after the other's stamp. */
	if (m.node == 1)
		ASSERT_EQ(0, hyper_mbox_barrier(&m, "share-node0-stamped", tn_secs()));
	ASSERT_EQ(0, hyper_alloc(fd, SHARE_SIZE, 0, &h, &off));
	p = mmap(NULL, SHARE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	ASSERT_NE(MAP_FAILED, p);
	tn_fill(p, SHARE_SIZE, m.node, 1);
	if (m.node == 0)
		ASSERT_EQ(0, hyper_mbox_barrier(&m, "share-node0-stamped", tn_secs()));
	ASSERT_EQ(0, hyper_mbox_barrier(&m, "share-node1-stamped", tn_secs()));

	first = tn_check(p, SHARE_SIZE, m.node, 1);
	if (joined || m.node == 1) {
		tn_report(p, SHARE_SIZE, m.node, 1);
		EXPECT_EQ(SHARE_SIZE / 8, first);
	} else {
		/*
		 * Standalone, node 0: node 1 got the same pool offset, zeroed
		 * it and stamped it.  Every word is node 1's: the two guests
		 * share the window, and the bed can see a byte claimed twice.
		 */
		theirs = tn_check(p, SHARE_SIZE, 1, 1);
		EXPECT_EQ(0, first)
			TH_LOG("node 0's region kept its stamp: the two guests do not share the pool window");
		EXPECT_EQ(SHARE_SIZE / 8, theirs)
			TH_LOG("node 0's region is not node 1's stamp from word %llu on",
			       (unsigned long long)theirs);
	}
	/*
	 * Neither touches the region before both have read it.  Then each
	 * zeroes it: the node protocol's tests that follow start from the
	 * zeroed, unformatted pool the runner made.
	 */
	EXPECT_EQ(0, hyper_mbox_barrier(&m, "share-checked", tn_secs()));
	memset(p, 0, SHARE_SIZE);
	munmap(p, SHARE_SIZE);
	EXPECT_EQ(0, hyper_free(fd, h));
	close(fd);
	hyper_mbox_close(&m);
}

TEST_HARNESS_MAIN
