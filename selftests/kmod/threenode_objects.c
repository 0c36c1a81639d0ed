// SPDX-License-Identifier: GPL-2.0
/*
 * A shared object among three nodes, and a killed reader fenced by
 * another reader (Documentation/supernode.md, "Shared objects"):
 * - node 0 publishes the object and lets go of its own handle; nodes 1
 *   and 2 open it at the same time and each finds the pattern (PREFETCH
 *   and a read-only map); REFS is 2 in pool/objects and in "hyperctl
 *   pool objects --json";
 * - every node holds stamped regions of its own; node 2 (a child process
 *   that never lets go) holds its regions and its reference when the
 *   runner kills its QEMU (HYPER-2VM-KILL);
 * - node 1 cannot fence node 2 while its lease is live; once node 2's
 *   QEMU is gone it fences it as soon as the lease has expired: REFS
 *   drops by exactly one, the pool's used by exactly the chunks the node
 *   table said node 2 held, node 2 is fenced with nothing, and node 0's
 *   and node 1's regions, chunks and node 1's view of the object are
 *   intact;
 * - node 0 deletes the object while node 1 holds it: its chunks come
 *   back exactly when node 1 lets go.
 */
#include "kselftest_harness.h"
#include "threenode.h"
#include "obj_test.h"

#define ERR_LEN		1024
#define NAME		"tn3.weights"
#define OBJ_SIZE	(2 * MiB)
#define SEED		43
#define NREG		2
#define REG_SIZE	(2 * MiB)
/* Mailbox values. */
#define V_NODE_USED	0	/* node 2: its regions' bytes (node_used) */
#define V_USED		1	/* node 0: the pool's used after its delete */

FIXTURE(obj3) {
	struct hyper_mbox m;
	char err[ERR_LEN];
	uint8_t *buf;
	uint64_t *p[NREG];
	int fd;
};

FIXTURE_SETUP(obj3)
{
	memset(&self->m, 0, sizeof(self->m));
	self->fd = -1;
	self->buf = NULL;
	if (!tn_has_node_id())
		return;
	ASSERT_EQ(0, hyper_mbox_open(&self->m));
	self->buf = malloc(OBJ_SIZE);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(obj3)
{
	free(self->buf);
	if (self->fd >= 0)
		close(self->fd);
	hyper_mbox_close(&self->m);
}

/* REFS of the object in sysfs and in hyperctl's JSON, both @want. */
#define EXPECT_REFS(want) do {						\
	long long r_ = -1;						\
	EXPECT_EQ(0, obj_line(NAME, NULL, 0, NULL, NULL, &r_));		\
	EXPECT_EQ(want, r_) TH_LOG("pool/objects says REFS %lld", r_);	\
	EXPECT_EQ(want, tn_json_obj_refs(NAME));			\
} while (0)

/* Opens the object and checks the pattern by PREFETCH and by a map. */
static int open_and_check(int fd, uint8_t *buf, struct hyper_obj *o,
			  uint8_t **map)
{
	int ret = obj_open(fd, NAME, o);

	if (ret)
		return ret;
	memset(buf, 0, OBJ_SIZE);
	ret = obj_xfer(fd, o->handle, 0, buf, OBJ_SIZE, false);
	if (ret)
		return ret;
	if (hyper_check(buf, OBJ_SIZE, SEED) != OBJ_SIZE)
		return -EIO;
	*map = mmap(NULL, OBJ_SIZE, PROT_READ, MAP_SHARED, fd, o->mmap_offset);
	if (*map == MAP_FAILED)
		return -errno;
	return hyper_check(*map, OBJ_SIZE, SEED) == OBJ_SIZE ? 0 : -EIO;
}

/* Checks and lets go of this node's regions. */
static void regions_done(struct __test_metadata *_metadata,
			 FIXTURE_DATA(obj3) *self, bool release)
{
	for (int i = 0; i < NREG; i++) {
		uint64_t seq = 100 * (self->m.node + 1) + i;

		EXPECT_EQ(REG_SIZE / 8, tn_check(self->p[i], REG_SIZE,
						 self->m.node, seq));
		tn_report(self->p[i], REG_SIZE, self->m.node, seq);
		if (release) {
			memset(self->p[i], 0, REG_SIZE);
			munmap(self->p[i], REG_SIZE);
		}
	}
}

static void owner(struct __test_metadata *_metadata, FIXTURE_DATA(obj3) *self)
{
	struct hyper_obj c = { 0 };
	long long b0, used;
	char st[32] = "";

	b0 = tn_node_bytes(_metadata, 0, st, sizeof(st));
	ASSERT_EQ(0, obj_create(self->fd, NAME, OBJ_SIZE, &c));
	hyper_fill(self->buf, OBJ_SIZE, SEED);
	ASSERT_EQ(0, obj_xfer(self->fd, c.handle, 0, self->buf, OBJ_SIZE, true));
	ASSERT_EQ(0, obj_publish(self->fd, c.handle));
	EXPECT_EQ(0, hyper_free(self->fd, c.handle));
	EXPECT_REFS(0);
	TN_MEET("obj3-published");
	TN_MEET("obj3-opened");
	EXPECT_REFS(2);
	TN_MEET("obj3-held");
	TN_MEET("obj3-live-checked");
	/* Node 2 is killed; node 1 fences it. */
	TN_MEET("obj3-fenced");
	EXPECT_REFS(1);
	EXPECT_EQ(b0, tn_node_bytes(_metadata, 0, st, sizeof(st)));
	EXPECT_STREQ("joined", st);
	regions_done(_metadata, self, false);

	used = hyper_sysfs_ll(0, "used");
	EXPECT_EQ(0, obj_delete(self->fd, NAME));
	EXPECT_EQ(-ENOENT, obj_open(self->fd, NAME, NULL));
	ASSERT_EQ(0, obj_line(NAME, st, sizeof(st), NULL, NULL, NULL));
	EXPECT_STREQ("deleting", st);
	EXPECT_REFS(1);
	EXPECT_EQ(used, hyper_sysfs_ll(0, "used"))
		TH_LOG("the object's chunks went while node 1 held it");
	hyper_mbox_put(&self->m, V_USED, (uint64_t)used);
	TN_MEET("obj3-deleted");
	TN_MEET("obj3-released");
	EXPECT_TRUE(hyper_poll(hyper_sysfs_ll(0, "used") == used - OBJ_SIZE,
			       tn_secs()))
		TH_LOG("used %lld, %lld before node 1 let go",
		       hyper_sysfs_ll(0, "used"), used);
	EXPECT_EQ(-ENOENT, obj_line(NAME, NULL, 0, NULL, NULL, NULL));
	TN_MEET("obj3-done");
	regions_done(_metadata, self, true);
}

static void fencer(struct __test_metadata *_metadata, FIXTURE_DATA(obj3) *self)
{
	long long used0, used1, b1, b2, regions2;
	struct hyper_obj o = { 0 };
	uint8_t *r = MAP_FAILED;
	char st[32] = "";
	int rc;

	TN_MEET("obj3-published");
	ASSERT_EQ(0, open_and_check(self->fd, self->buf, &o, &r))
		TH_LOG("node 1 does not read the published pattern");
	TN_MEET("obj3-opened");
	TN_MEET("obj3-held");

	used0 = hyper_sysfs_ll(0, "used");
	b1 = tn_node_bytes(_metadata, 1, st, sizeof(st));
	b2 = tn_node_bytes(_metadata, 2, st, sizeof(st));
	EXPECT_STREQ("joined", st);
	regions2 = (long long)hyper_mbox_get(&self->m, 2, V_NODE_USED);
	EXPECT_LE((long long)(NREG * REG_SIZE), regions2);
	EXPECT_LE(regions2, b2) TH_LOG("node 2's chunks hold less than its regions");
	EXPECT_EQ(0, b2 % (2 * MiB));
	EXPECT_REFS(2);
	rc = tn_hyperctl(self->err, ERR_LEN, "pool", "fence", "2", NULL);
	EXPECT_NE(0, rc) TH_LOG("fenced node 2 while its lease was live");
	EXPECT_TRUE(tn_says(self->err, "lease")) TH_LOG("%s", self->err);
	TN_MEET("obj3-live-checked");

	/* The runner kills node 2's QEMU now. */
	ASSERT_EQ(0, hyper_mbox_wait_gone(&self->m, 2, tn_secs()));
	EXPECT_EQ(used0, hyper_sysfs_ll(0, "used"))
		TH_LOG("a dead node's space came back before it was fenced");
	rc = tn_fence_after_lease(2, self->err, ERR_LEN);
	ASSERT_LE(0, rc);
	ksft_print_msg("node 2 fenced by node 1 after %d refusals for its live lease; it held %lld bytes of chunks\n",
		       rc, b2);
	used1 = hyper_sysfs_ll(0, "used");
	EXPECT_EQ(used0 - b2, used1)
		TH_LOG("the fence gave back %lld bytes; node 2 held %lld",
		       used0 - used1, b2);
	EXPECT_EQ(0, tn_node_bytes(_metadata, 2, st, sizeof(st)));
	EXPECT_STREQ("fenced", st);
	EXPECT_EQ(b1, tn_node_bytes(_metadata, 1, st, sizeof(st)));
	EXPECT_STREQ("joined", st);
	EXPECT_REFS(1);
	EXPECT_EQ(OBJ_SIZE, hyper_check(r, OBJ_SIZE, SEED));
	regions_done(_metadata, self, false);
	TN_MEET("obj3-fenced");

	TN_MEET("obj3-deleted");
	EXPECT_EQ(-ENOENT, obj_open(self->fd, NAME, NULL));
	EXPECT_EQ(OBJ_SIZE, hyper_check(r, OBJ_SIZE, SEED));
	EXPECT_EQ((long long)hyper_mbox_get(&self->m, 0, V_USED),
		  hyper_sysfs_ll(0, "used"));
	EXPECT_EQ(0, munmap(r, OBJ_SIZE));
	EXPECT_EQ(0, hyper_free(self->fd, o.handle));
	TN_MEET("obj3-released");
	TN_MEET("obj3-done");
	regions_done(_metadata, self, true);
}

/*
 * Node 2: a child opens the object with node 1, checks it, takes its
 * regions and holds everything until the runner kills the guest.
 */
static void victim(struct __test_metadata *_metadata, FIXTURE_DATA(obj3) *self)
{
	int ready[2];
	long long used;
	char c = 0;
	pid_t pid;

	/* The child has a file of its own; the fixture's is not needed. */
	close(self->fd);
	self->fd = -1;
	TN_MEET("obj3-published");
	ASSERT_EQ(0, pipe(ready));
	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct hyper_obj o = { 0 };
		uint8_t *r;
		int fd = hyper_dev_open(0);

		close(ready[0]);
		c = fd >= 0 && !open_and_check(fd, self->buf, &o, &r) &&
		    !tn_hold(fd, 2, 300, self->p, NREG, REG_SIZE);
		if (write(ready[1], &c, 1) != 1 || !c)
			_exit(1);
		/* Held until QEMU dies: never closed, never freed. */
		for (;;)
			pause();
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	ASSERT_EQ(1, c) TH_LOG("node 2 could not read the object or take its regions");
	TN_MEET("obj3-opened");
	used = hyper_sysfs_ll(0, "node_used");
	EXPECT_LE((long long)(NREG * REG_SIZE), used);
	hyper_mbox_put(&self->m, V_NODE_USED, used < 0 ? 0 : (uint64_t)used);
	TN_MEET("obj3-held");
	TN_MEET("obj3-live-checked");
	/* No one waits for this node now; the suite has it killed. */
	hyper_mbox_leave(&self->m);
}

TEST_F_TIMEOUT(obj3, killed_reader_fenced_by_another_reader, TN_TEST_SECS)
{
	if (!tn_has_node_id())
		SKIP(return, TN_NO_NODE_ID);
	ASSERT_EQ(3, self->m.nodes) TH_LOG("run by the three guests of threenode.suite");
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
	if (self->m.node < 2)
		ASSERT_EQ(0, tn_hold(self->fd, self->m.node,
				     100 * (self->m.node + 1), self->p, NREG,
				     REG_SIZE));
	if (self->m.node == 0)
		owner(_metadata, self);
	else if (self->m.node == 1)
		fencer(_metadata, self);
	else
		victim(_metadata, self);
}

TEST_HARNESS_MAIN
