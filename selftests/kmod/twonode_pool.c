// SPDX-License-Identifier: GPL-2.0
/*
 * The pool's node protocol from two nodes, in the order an operator meets
 * it: a fresh pool refuses ALLOC and join until it is formatted; node 0
 * formats, node 1's format is refused; both join; a node id a live node
 * holds is refused.  Each refusal is one line that names the cause.
 * Run by both guests of twonode.suite with the module loaded with
 * node_id=HYPER_NODE on a zeroed pool.
 */
#include "kselftest_harness.h"
#include "twonode.h"

#define ERR_LEN	1024

/* A refusal: non-zero status, one line, naming the cause. */
#define EXPECT_REFUSED(rc, err, word) do {				\
	EXPECT_NE(0, rc);						\
	EXPECT_EQ(1, tn_lines(err)) TH_LOG("a refusal is one line: %s", err); \
	EXPECT_TRUE(tn_says(err, word))					\
		TH_LOG("the refusal does not say '%s': %s", word, err);	\
} while (0)

FIXTURE(pool) {
	struct hyper_mbox m;
	char err[ERR_LEN];
};

FIXTURE_SETUP(pool)
{
	/* Each test skips when the module lacks node_id. */
	memset(&self->m, 0, sizeof(self->m));
	if (tn_has_node_id())
		ASSERT_EQ(0, hyper_mbox_open(&self->m));
}

FIXTURE_TEARDOWN(pool)
{
	hyper_mbox_close(&self->m);
}

TEST_F_TIMEOUT(pool, alloc_and_join_before_format_are_refused, TN_TEST_SECS)
{
	int fd, rc;

	if (!tn_has_node_id())
		SKIP(return, TN_NO_NODE_ID);
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	rc = hyper_alloc(fd, 4096, 0, NULL, NULL);
	EXPECT_NE(0, rc) TH_LOG("ALLOC on a node that has not joined");
	close(fd);
	rc = tn_hyperctl(self->err, ERR_LEN, "pool", "join", NULL);
	EXPECT_REFUSED(rc, self->err, "format");
	/* Node 0 formats only after node 1 saw the fresh pool too. */
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "pool-fresh-checked", tn_secs()));
}

TEST_F_TIMEOUT(pool, format_then_join, TN_TEST_SECS)
{
	int fd, rc;

	if (!tn_has_node_id())
		SKIP(return, TN_NO_NODE_ID);

	if (self->m.node == 0)
		EXPECT_EQ(0, tn_hyperctl(self->err, ERR_LEN, "pool", "format", NULL));
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "pool-formatted", tn_secs()));
	if (self->m.node == 1) {
		rc = tn_hyperctl(self->err, ERR_LEN, "pool", "format", NULL);
		EXPECT_REFUSED(rc, self->err, "formatted");
	}
	EXPECT_EQ(0, tn_hyperctl(self->err, ERR_LEN, "pool", "join", NULL));
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "pool-joined", tn_secs()));
	/* Formatting again is refused while a node is joined, even forced. */
	if (self->m.node == 0) {
		rc = tn_hyperctl(self->err, ERR_LEN, "pool", "format", "--force", NULL);
		EXPECT_REFUSED(rc, self->err, "joined");
	}
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, hyper_alloc(fd, 4096, 0, NULL, NULL));
	close(fd);
	EXPECT_EQ(0, tn_hyperctl(self->err, ERR_LEN, "pool", "status", NULL));
	EXPECT_EQ(0, tn_hyperctl(self->err, ERR_LEN, "pool", "status", "--json", NULL));
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "pool-used", tn_secs()));
}

/* Node 1 leaves, comes back as node 0, is refused, and is node 1 again. */
TEST_F_TIMEOUT(pool, node_id_taken_is_refused, TN_TEST_SECS)
{
	const char *lease = strstr(hyper_modparams(), "lease_ms=");
	char params[96];
	int rc;

	if (!tn_has_node_id())
		SKIP(return, TN_NO_NODE_ID);

	/* The suite's parameters, but for the node id. */
	snprintf(params, sizeof(params), "node_id=0 %.*s", lease ?
		 (int)strcspn(lease, " ") : 0, lease ? lease : "");
	if (self->m.node == 1) {
		EXPECT_EQ(0, tn_hyperctl(self->err, ERR_LEN, "pool", "leave", NULL));
		ASSERT_EQ(0, hyper_module_unload());
		ASSERT_EQ(0, hyper_module_load(params));
		rc = tn_hyperctl(self->err, ERR_LEN, "pool", "join", NULL);
		EXPECT_REFUSED(rc, self->err, "taken");
		ASSERT_EQ(0, hyper_module_unload());
		ASSERT_EQ(0, hyper_module_load(hyper_modparams()));
		EXPECT_EQ(0, tn_hyperctl(self->err, ERR_LEN, "pool", "join", NULL));
	}
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "pool-taken-checked", tn_secs()));
}

TEST_HARNESS_MAIN
