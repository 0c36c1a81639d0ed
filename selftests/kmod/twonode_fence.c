// SPDX-License-Identifier: GPL-2.0
/*
 * A node killed while it holds regions, and the survivor fences it.
 *
 * Node 1 leaves a process behind that holds three stamped regions, and
 * publishes the bytes of its regions (sysfs node_used); the suite then
 * has the runner kill node 1's QEMU (HYPER-2VM-KILL), with no leave and
 * no close.  Node 0, which holds regions of its own:
 * - sees in the node table (pool/nodes) that node 1 holds whole 2 MiB
 *   chunks, at least its regions' bytes, and the pool's used (every
 *   node's chunks and the metadata's) at least both nodes' chunks;
 * - cannot fence node 1 while node 1's lease is live, nor fence itself;
 * - once node 1's QEMU is gone, fences it as soon as the lease has
 *   expired (every refusal before that names the lease);
 * - sees exactly node 1's chunks come back: the pool's used drops by
 *   what the node table said node 1 held, node 1 holds nothing and is
 *   fenced, its own chunks and regions are unchanged, its data intact.
 * Shared objects too (Documentation/supernode.md, "Shared objects"):
 * node 1 holds two references to node 0's published object, and is
 * killed in the middle of publishing one of its own (debugfs obj_stall
 * stops it with its record torn).  Node 0 never sees that object, not
 * before the fence and not after; the fence gives its chunks back with
 * node 1's and drops exactly node 1's references, and node 0's delete
 * then frees its object.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "twonode.h"
#include "obj_test.h"

#define ERR_LEN		1024
#define NREG		3
#define REG_SIZE	(4 * MiB)
#define OBJ		"fence.weights"
#define TORN		"fence.torn"
#define OBJ_SIZE	(2 * MiB)
#define OBJ_REFS	2	/* node 1's references to OBJ */

FIXTURE(fence) {
	struct hyper_mbox m;
	char err[ERR_LEN];
};

FIXTURE_SETUP(fence)
{
	/* Each test skips when the module lacks node_id. */
	memset(&self->m, 0, sizeof(self->m));
	if (tn_has_node_id())
		ASSERT_EQ(0, hyper_mbox_open(&self->m));
}

FIXTURE_TEARDOWN(fence)
{
	hyper_mbox_close(&self->m);
}

/*
 * Node 1's child: OBJ_REFS references to node 0's object, then an object
 * of its own whose publish stops half way, which never returns.  Writes
 * 1 to @ready just before the publish.
 */
static void hold_objects(int fd, int ready)
{
	struct hyper_obj o = { 0 };
	uint8_t *buf = malloc(OBJ_SIZE);
	char c = 1;

	for (int i = 0; i < OBJ_REFS; i++)
		if (obj_open(fd, OBJ, &o))
			c = 0;
	if (!buf || hyper_write_file(OBJ_STALL, "1") ||
	    obj_create(fd, TORN, OBJ_SIZE, &o))
		c = 0;
	if (c) {
		hyper_fill(buf, OBJ_SIZE, 5);
		c = !obj_xfer(fd, o.handle, 0, buf, OBJ_SIZE, true);
	}
	if (write(ready, &c, 1) != 1 || !c)
		_exit(1);
	close(ready);
	obj_publish(fd, o.handle);
	_exit(1);
}

/*
 * Node 1: a child holds the regions until the runner kills the guest;
 * the test itself only meets node 0 and ends.
 */
static void victim(struct __test_metadata *_metadata,
		   FIXTURE_DATA(fence) *self)
{
	int ready[2], fd;
	uint64_t *p[NREG];
	long long used;
	char c = 0;
	pid_t pid;

	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "fence-obj", tn_secs()));
	ASSERT_EQ(0, pipe(ready));
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(ready[0]);
		fd = hyper_dev_open(0);
		c = fd >= 0 && !tn_hold(fd, 1, 100, p, NREG, REG_SIZE);
		if (!c) {
			if (write(ready[1], &c, 1) != 1)
				_exit(2);
			_exit(1);
		}
		/* Held until QEMU dies: never closed, never freed. */
		hold_objects(fd, ready[1]);
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_EQ(1, c) TH_LOG("node 1 could not take its regions and objects");
	close(ready[0]);
	ASSERT_TRUE(hyper_poll(obj_stall() == 2, tn_secs()))
		TH_LOG("node 1's publish did not stop half way");
	hyper_mbox_put(&self->m, 2, OBJ_SIZE);
	used = hyper_sysfs_ll(0, "node_used");
	EXPECT_LE((long long)(NREG * REG_SIZE), used);
	hyper_mbox_put(&self->m, 1, used < 0 ? 0 : (uint64_t)used);
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "fence-held", tn_secs()));
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "fence-live-checked", tn_secs()));
}

static void survivor(struct __test_metadata *_metadata,
		     FIXTURE_DATA(fence) *self)
{
	long long used0, used1, regions0, regions1, b0, b1, torn, refs = -1;
	struct hyper_obj w = { 0 };
	uint64_t *p[NREG];
	int fd, rc, refusals;
	char st[32];

	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, tn_hold(fd, 0, 100, p, NREG, REG_SIZE));
	ASSERT_EQ(0, obj_create(fd, OBJ, OBJ_SIZE, &w));
	ASSERT_EQ(0, obj_publish(fd, w.handle));
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "fence-obj", tn_secs()));
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "fence-held", tn_secs()));

	regions1 = (long long)hyper_mbox_get(&self->m, 1, 1);
	torn = (long long)hyper_mbox_get(&self->m, 1, 2);
	EXPECT_EQ(OBJ_SIZE, torn);
	ASSERT_EQ(0, obj_line(OBJ, NULL, 0, NULL, NULL, &refs));
	EXPECT_EQ(1 + OBJ_REFS, refs);
	/* Half published: not listed (its record is torn), not openable. */
	EXPECT_EQ(-ENOENT, obj_line(TORN, NULL, 0, NULL, NULL, NULL));
	used0 = hyper_sysfs_ll(0, "used");
	regions0 = hyper_sysfs_ll(0, "node_used");
	b0 = tn_node_bytes(_metadata, 0, st, sizeof(st));
	EXPECT_STREQ("joined", st);
	b1 = tn_node_bytes(_metadata, 1, st, sizeof(st));
	EXPECT_STREQ("joined", st);
	EXPECT_LE((long long)(NREG * REG_SIZE), regions0);
	EXPECT_LE((long long)(NREG * REG_SIZE), regions1);
	EXPECT_LE(regions0, b0);
	EXPECT_LE(regions1, b1) TH_LOG("node 1's chunks hold less than its regions");
	EXPECT_EQ(0, b1 % (2 * MiB));
	EXPECT_LE(b0 + b1, used0)
		TH_LOG("pool used %lld, node 0 holds %lld, node 1 %lld",
		       used0, b0, b1);
	rc = tn_hyperctl(self->err, ERR_LEN, "pool", "fence", "1", NULL);
	EXPECT_NE(0, rc) TH_LOG("fenced node 1 while its lease was live");
	EXPECT_EQ(1, tn_lines(self->err));
	EXPECT_TRUE(tn_says(self->err, "lease")) TH_LOG("%s", self->err);
	rc = tn_hyperctl(self->err, ERR_LEN, "pool", "fence", "0", NULL);
	EXPECT_NE(0, rc) TH_LOG("node 0 fenced itself");
	EXPECT_EQ(1, tn_lines(self->err));
	EXPECT_TRUE(tn_says(self->err, "itself") ||
		    tn_says(self->err, "yourself")) TH_LOG("%s", self->err);
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "fence-live-checked", tn_secs()));

	/* The runner kills node 1's QEMU now. */
	ASSERT_EQ(0, hyper_mbox_wait_gone(&self->m, 1, tn_secs()));
	EXPECT_EQ(used0, hyper_sysfs_ll(0, "used"))
		TH_LOG("a dead node's space came back before it was fenced");
	refusals = tn_fence_after_lease(1, self->err, ERR_LEN);
	ASSERT_LE(0, refusals) TH_LOG("node 1 was not fenced once its lease expired");
	ksft_print_msg("node 1 fenced after %d refusals for its live lease; it held %lld bytes of chunks\n",
		       refusals, b1);

	used1 = hyper_sysfs_ll(0, "used");
	EXPECT_EQ(used0 - b1 - torn, used1)
		TH_LOG("fence gave back %lld bytes; node 1 held %lld and its torn object %lld",
		       used0 - used1, b1, torn);
	EXPECT_EQ(-ENOENT, obj_line(TORN, NULL, 0, NULL, NULL, NULL));
	EXPECT_EQ(-ENOENT, obj_open(fd, TORN, NULL));
	EXPECT_EQ(0, obj_line(OBJ, NULL, 0, NULL, NULL, &refs));
	EXPECT_EQ(1, refs) TH_LOG("the fence dropped %lld references, node 1 held %d",
				  1 + OBJ_REFS - refs, OBJ_REFS);
	EXPECT_EQ(0, tn_node_bytes(_metadata, 1, st, sizeof(st)));
	EXPECT_STREQ("fenced", st);
	EXPECT_EQ(b0, tn_node_bytes(_metadata, 0, st, sizeof(st)));
	EXPECT_STREQ("joined", st);
	EXPECT_EQ(regions0, hyper_sysfs_ll(0, "node_used"));
	for (int i = 0; i < NREG; i++) {
		EXPECT_EQ(REG_SIZE / 8, tn_check(p[i], REG_SIZE, 0, 100 + i));
		tn_report(p[i], REG_SIZE, 0, 100 + i);
	}
	/* Fencing it again, done or refused, gives back nothing more. */
	tn_hyperctl(self->err, ERR_LEN, "pool", "fence", "1", NULL);
	EXPECT_EQ(used1, hyper_sysfs_ll(0, "used"));
	/* Node 0's object goes with its last reference, node 0's. */
	EXPECT_EQ(0, obj_delete(fd, OBJ));
	EXPECT_EQ(used1, hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(0, hyper_free(fd, w.handle));
	EXPECT_TRUE(hyper_poll(hyper_sysfs_ll(0, "used") == used1 - OBJ_SIZE,
			       tn_secs()));
	used1 -= OBJ_SIZE;
	EXPECT_EQ(0, tn_hyperctl(self->err, ERR_LEN, "pool", "status", NULL));
	for (int i = 0; i < NREG; i++) {
		memset(p[i], 0, REG_SIZE);
		munmap(p[i], REG_SIZE);
	}
	close(fd);
}

TEST_F_TIMEOUT(fence, killed_node_is_fenced, TN_TEST_SECS)
{
	if (!tn_has_node_id())
		SKIP(return, TN_NO_NODE_ID);

	if (self->m.node == 1)
		victim(_metadata, self);
	else
		survivor(_metadata, self);
}

TEST_HARNESS_MAIN
