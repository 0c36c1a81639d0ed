// SPDX-License-Identifier: GPL-2.0
/*
 * A shared object between two nodes (Documentation/supernode.md,
 * "Shared objects"), both joined to one pool:
 * - node 0 creates it and writes a pattern, half by STORE, half through
 *   a writable map; node 1 cannot open it (-ENOENT) nor take its name
 *   (-EEXIST) before node 0 publishes it;
 * - after the publish node 1 opens it, PREFETCHes it and maps it, and
 *   finds the pattern; its STORE and its writable mmap are -EACCES and
 *   mprotect cannot make its map writable;
 * - node 0 deletes it while node 1 holds it: the name is gone on both
 *   nodes at once, node 1 still reads the pattern, and the pool's used
 *   drops by exactly the object's chunks only once node 1 lets go.
 * The killed node's references and a publish torn by a crash are in
 * twonode_fence.c.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "twonode.h"
#include "obj_test.h"

#define NAME		"tn.weights"
#define OBJ_SIZE	(4 * MiB)
#define SEED		41

FIXTURE(objects) {
	struct hyper_mbox m;
	uint8_t *buf;
	int fd;
};

FIXTURE_SETUP(objects)
{
	memset(&self->m, 0, sizeof(self->m));
	self->fd = -1;
	self->buf = NULL;
	if (!tn_has_node_id())
		return;
	ASSERT_EQ(0, hyper_mbox_open(&self->m));
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
	self->buf = malloc(OBJ_SIZE);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(objects)
{
	free(self->buf);
	if (self->fd >= 0)
		close(self->fd);
	hyper_mbox_close(&self->m);
}

static void creator(struct __test_metadata *_metadata,
		    FIXTURE_DATA(objects) *self)
{
	struct hyper_obj c = { 0 };
	long long used0, refs = -1;
	char st[32] = "";
	uint8_t *w;

	used0 = hyper_sysfs_ll(0, "used");
	ASSERT_EQ(0, obj_create(self->fd, NAME, OBJ_SIZE, &c));
	EXPECT_EQ(0, c.node);
	EXPECT_EQ(used0 + OBJ_SIZE, hyper_sysfs_ll(0, "used"));
	hyper_fill(self->buf, OBJ_SIZE, SEED);
	EXPECT_EQ(0, obj_xfer(self->fd, c.handle, 0, self->buf, OBJ_SIZE / 2,
			      true));
	w = mmap(NULL, OBJ_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 c.mmap_offset);
	ASSERT_NE(MAP_FAILED, w);
	memcpy(w + OBJ_SIZE / 2, self->buf + OBJ_SIZE / 2, OBJ_SIZE / 2);
	EXPECT_EQ(0, munmap(w, OBJ_SIZE));
	TN_MEET("obj-created");
	TN_MEET("obj-unpublished-checked");
	ASSERT_EQ(0, obj_publish(self->fd, c.handle));
	TN_MEET("obj-published");
	TN_MEET("obj-opened");

	ASSERT_EQ(0, obj_line(NAME, st, sizeof(st), NULL, NULL, &refs));
	EXPECT_STREQ("published", st);
	EXPECT_EQ(2, refs) TH_LOG("node 0's handle and node 1's");
	used0 = hyper_sysfs_ll(0, "used");
	EXPECT_EQ(0, obj_delete(self->fd, NAME));
	EXPECT_EQ(-ENOENT, obj_open(self->fd, NAME, NULL));
	EXPECT_EQ(0, hyper_free(self->fd, c.handle));
	ASSERT_EQ(0, obj_line(NAME, st, sizeof(st), NULL, NULL, &refs));
	EXPECT_STREQ("deleting", st);
	EXPECT_EQ(1, refs);
	EXPECT_EQ(used0, hyper_sysfs_ll(0, "used"));
	hyper_mbox_put(&self->m, 0, (uint64_t)used0);
	TN_MEET("obj-deleted");
	TN_MEET("obj-released");
	EXPECT_TRUE(hyper_poll(hyper_sysfs_ll(0, "used") == used0 - OBJ_SIZE,
			       tn_secs()))
		TH_LOG("used %lld, %lld before the last reference went",
		       hyper_sysfs_ll(0, "used"), used0);
	EXPECT_EQ(-ENOENT, obj_line(NAME, NULL, 0, NULL, NULL, NULL));
	TN_MEET("obj-done");
}

static void reader(struct __test_metadata *_metadata,
		   FIXTURE_DATA(objects) *self)
{
	struct hyper_obj o = { 0 };
	char st[32] = "";
	long long used0;
	int node = -1;
	uint8_t *r;

	TN_MEET("obj-created");
	EXPECT_EQ(-ENOENT, obj_open(self->fd, NAME, NULL))
		TH_LOG("opened before the publish");
	EXPECT_EQ(-EEXIST, obj_create(self->fd, NAME, 2 * MiB, NULL));
	ASSERT_EQ(0, obj_line(NAME, st, sizeof(st), NULL, &node, NULL));
	EXPECT_STREQ("creating", st);
	EXPECT_EQ(0, node);
	TN_MEET("obj-unpublished-checked");
	TN_MEET("obj-published");

	ASSERT_EQ(0, obj_open(self->fd, NAME, &o));
	EXPECT_EQ(OBJ_SIZE, o.size);
	EXPECT_EQ(0, o.node);
	EXPECT_EQ(HYPER_REGION_OBJECT | HYPER_REGION_RDONLY,
		  obj_query_flags(self->fd, o.handle));
	memset(self->buf, 0, OBJ_SIZE);
	EXPECT_EQ(0, obj_xfer(self->fd, o.handle, 0, self->buf, OBJ_SIZE,
			      false));
	EXPECT_EQ(OBJ_SIZE, hyper_check(self->buf, OBJ_SIZE, SEED));
	r = mmap(NULL, OBJ_SIZE, PROT_READ, MAP_SHARED, self->fd,
		 o.mmap_offset);
	ASSERT_NE(MAP_FAILED, r);
	EXPECT_EQ(OBJ_SIZE, hyper_check(r, OBJ_SIZE, SEED));
	EXPECT_EQ(-EACCES, obj_xfer(self->fd, o.handle, 0, self->buf, 4096,
				    true));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, OBJ_SIZE, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->fd, o.mmap_offset));
	EXPECT_EQ(EACCES, errno);
	EXPECT_NE(0, mprotect(r, OBJ_SIZE, PROT_READ | PROT_WRITE));
	EXPECT_EQ(-EEXIST, obj_create(self->fd, NAME, 2 * MiB, NULL));
	TN_MEET("obj-opened");

	TN_MEET("obj-deleted");
	used0 = (long long)hyper_mbox_get(&self->m, 0, 0);
	EXPECT_EQ(-ENOENT, obj_open(self->fd, NAME, NULL));
	EXPECT_EQ(OBJ_SIZE, hyper_check(r, OBJ_SIZE, SEED));
	EXPECT_EQ(used0, hyper_sysfs_ll(0, "used"))
		TH_LOG("the memory went while node 1 held it");
	EXPECT_EQ(0, hyper_free(self->fd, o.handle));
	EXPECT_EQ(0, munmap(r, OBJ_SIZE));
	TN_MEET("obj-released");
	TN_MEET("obj-done");
}

TEST_F_TIMEOUT(objects, publish_open_delete_across_nodes, TN_TEST_SECS)
{
	if (!tn_has_node_id())
		SKIP(return, TN_NO_NODE_ID);

	if (self->m.node == 0)
		creator(_metadata, self);
	else
		reader(_metadata, self);
}

TEST_HARNESS_MAIN
