// SPDX-License-Identifier: GPL-2.0
/*
 * Three nodes join one pool (selftests/vm/suites/threenode.suite, run by
 * all three guests of selftests/vm/run-2vm.sh with the module loaded
 * with node_id=HYPER_NODE on a zeroed pool): node 0 formats, all three
 * join, and "hyperctl pool status --json" on each lists the same three
 * live nodes of the same pool: each node checks its own view and
 * publishes it (the joined nodes as a bit mask, the pool's uuid hashed)
 * through the mailbox, and every node compares all three.
 */
#include "kselftest_harness.h"
#include "threenode.h"

#define ERR_LEN		1024
/* Mailbox values: the joined nodes seen, the uuid's hash. */
#define V_JOINED	0
#define V_UUID		1

FIXTURE(pool3) {
	struct hyper_mbox m;
	char err[ERR_LEN];
};

FIXTURE_SETUP(pool3)
{
	memset(&self->m, 0, sizeof(self->m));
	if (tn_has_node_id())
		ASSERT_EQ(0, hyper_mbox_open(&self->m));
}

FIXTURE_TEARDOWN(pool3)
{
	hyper_mbox_close(&self->m);
}

/* FNV-1a of a string: the uuid as one mailbox number. */
static uint64_t hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return h;
}

TEST_F_TIMEOUT(pool3, format_join_status_on_three_nodes, TN_TEST_SECS)
{
	struct json_object *a, *pool, *nodes;
	uint64_t joined = 0, want;
	const char *uuid = "";
	int n;

	if (!tn_has_node_id())
		SKIP(return, TN_NO_NODE_ID);
	ASSERT_EQ(3, self->m.nodes) TH_LOG("run by the three guests of threenode.suite");
	want = (1ULL << self->m.nodes) - 1;

	if (self->m.node == 0)
		EXPECT_EQ(0, tn_hyperctl(self->err, ERR_LEN, "pool", "format", NULL));
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "pool3-formatted", tn_secs()));
	EXPECT_EQ(0, tn_hyperctl(self->err, ERR_LEN, "pool", "join", NULL));
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "pool3-joined", tn_secs()));

	a = tn_hyperctl_json("pool status --json hyper0");
	ASSERT_NE(NULL, a);
	pool = json_object_array_get_idx(a, 0);
	EXPECT_EQ(self->m.node, json_object_get_int(tn_json_get(pool, "node_id")));
	if (tn_json_get(pool, "uuid"))
		uuid = json_object_get_string(tn_json_get(pool, "uuid"));
	EXPECT_NE(0, uuid[0]) TH_LOG("pool status --json gives no uuid");
	nodes = tn_json_get(pool, "nodes");
	ASSERT_NE(NULL, nodes);
	for (size_t i = 0; i < json_object_array_length(nodes); i++) {
		struct json_object *no = json_object_array_get_idx(nodes, i);
		const char *st = json_object_get_string(tn_json_get(no, "state"));

		n = json_object_get_int(tn_json_get(no, "id"));
		ksft_print_msg("node %d sees node %d %s\n", self->m.node, n,
			       st ? st : "(no state)");
		if (st && !strcmp(st, "joined") && n >= 0 && n < 64)
			joined |= 1ULL << n;
	}
	EXPECT_EQ(want, joined) TH_LOG("joined nodes seen by node %d: %#llx",
				       self->m.node, (unsigned long long)joined);
	hyper_mbox_put(&self->m, V_JOINED, joined);
	hyper_mbox_put(&self->m, V_UUID, hash(uuid));
	json_object_put(a);

	/* Every node saw the same three live nodes of the same pool. */
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "pool3-status", tn_secs()));
	for (n = 0; n < self->m.nodes; n++) {
		EXPECT_EQ(want, hyper_mbox_get(&self->m, n, V_JOINED))
			TH_LOG("node %d's view differs", n);
		EXPECT_EQ(hyper_mbox_get(&self->m, self->m.node, V_UUID),
			  hyper_mbox_get(&self->m, n, V_UUID))
			TH_LOG("node %d is in another pool", n);
	}
	EXPECT_EQ(0, hyper_mbox_barrier(&self->m, "pool3-compared", tn_secs()));
}

TEST_HARNESS_MAIN
