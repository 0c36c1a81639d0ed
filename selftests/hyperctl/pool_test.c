// SPDX-License-Identifier: GPL-2.0
/*
 * hyperctl pool on the real module, in the VM: the operator's commands
 * exactly as Documentation/admin-guide.md gives them, their JSON read
 * back against sysfs, and each refusal as its one line.
 *
 * The suite (hyperctl.suite) boots with two windows; the module is loaded
 * again as node 1 here, and with the suite's parameters after each test.
 */
#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "hyper_test.h"
#include "hctl_run.h"

FIXTURE(pool) {};

FIXTURE_SETUP(pool)
{
	char params[512];

	if (hyper_module_loaded())
		ASSERT_EQ(0, hyper_module_unload());
	snprintf(params, sizeof(params), "%s node_id=1", hyper_modparams());
	ASSERT_EQ(0, hyper_module_load(params));
}

FIXTURE_TEARDOWN(pool)
{
	if (hyper_module_loaded())
		EXPECT_EQ(0, hyper_module_unload());
	EXPECT_EQ(0, hyper_module_load(hyper_modparams()));
}

/* Runs a command line; its exit status, and stderr must be @err. */
#define RUN(r, status_, err_, ...) do {					\
	ASSERT_EQ(0, hctl_run(r, __VA_ARGS__, NULL));			\
	EXPECT_EQ(status_, (r)->status) {				\
		TH_LOG("stderr: %s", (r)->err);				\
	}								\
	EXPECT_STREQ(err_, (r)->err);					\
} while (0)

TEST_F(pool, admin_guide_sequence)
{
	struct json_object *o, *nodes, *n;
	struct hyper_obj_publish pub = { 0 };
	struct hyper_obj obj;
	uint32_t handle;
	struct hctl r;
	int fd;

	/* hyperctl pool format hyper0, on exactly one node. */
	RUN(&r, 0, "", "pool", "format", "hyper0");
	hctl_free(&r);
	RUN(&r, 1, "hyperctl: hyper0: pool format: the pool is formatted already (--force erases it, and everything in it)\n",
	    "pool", "format", "hyper0");
	hctl_free(&r);

	/* hyperctl pool join hyper0, on every node. */
	RUN(&r, 0, "", "pool", "join", "hyper0");
	hctl_free(&r);
	RUN(&r, 1, "hyperctl: hyper0: pool join: this node is joined already\n",
	    "pool", "join", "hyper0");
	hctl_free(&r);
	RUN(&r, 1, "hyperctl: hyper1: pool join: the pool is not formatted: hyperctl pool format\n",
	    "pool", "join", "hyper1");
	hctl_free(&r);

	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, hyper_alloc(fd, 4 * MiB, 0, &handle, NULL));

	/* hyperctl pool status hyper0 */
	RUN(&r, 0, "", "pool", "status", "hyper0");
	o = hctl_dev(r.json, "hyper0");
	ASSERT_NE(NULL, o);
	EXPECT_EQ(1, hctl_int(o, "node_id"));
	EXPECT_STREQ("joined", hctl_str(o, "state"));
	EXPECT_EQ(36, strlen(hctl_str(o, "uuid")));
	EXPECT_EQ(hyper_sysfs_ll(0, "size"), hctl_int(o, "size"));
	EXPECT_EQ(hyper_sysfs_ll(0, "used"), hctl_int(o, "used"));
	EXPECT_EQ(6 * MiB, hctl_int(o, "used"));
	EXPECT_EQ(4 * MiB, hctl_int(o, "node_used"));
	EXPECT_EQ(0, hctl_int(o, "node_free"));
	ASSERT_TRUE(json_object_object_get_ex(o, "nodes", &nodes));
	ASSERT_EQ(1, json_object_array_length(nodes));
	n = json_object_array_get_idx(nodes, 0);
	EXPECT_EQ(1, hctl_int(n, "id"));
	EXPECT_STREQ("joined", hctl_str(n, "state"));
	EXPECT_EQ(0, hctl_int(n, "lease_age_ms"));
	EXPECT_EQ(4 * MiB, hctl_int(n, "bytes"));
	hctl_free(&r);
	RUN(&r, 0, "", "pool", "status", "-H", "hyper0");
	EXPECT_NE(NULL, strstr(r.out, "hyper0: node 1, joined, pool "));
	hctl_free(&r);

	/* hyperctl pool objects hyper0: one published object. */
	memset(&obj, 0, sizeof(obj));
	strcpy(obj.name, "admin.weights");
	obj.size = 2 * MiB;
	ASSERT_EQ(0, ioctl(fd, HYPER_IOC_OBJ_CREATE, &obj));
	pub.handle = obj.handle;
	ASSERT_EQ(0, ioctl(fd, HYPER_IOC_OBJ_PUBLISH, &pub));
	RUN(&r, 0, "", "pool", "objects", "hyper0");
	o = hctl_dev(r.json, "hyper0");
	ASSERT_NE(NULL, o);
	ASSERT_TRUE(json_object_object_get_ex(o, "objects", &nodes));
	ASSERT_EQ(1, json_object_array_length(nodes));
	n = json_object_array_get_idx(nodes, 0);
	EXPECT_STREQ("admin.weights", hctl_str(n, "name"));
	EXPECT_STREQ("published", hctl_str(n, "state"));
	EXPECT_EQ(2 * MiB, hctl_int(n, "bytes"));
	EXPECT_EQ(1, hctl_int(n, "node"));
	EXPECT_EQ(1, hctl_int(n, "refs"));
	hctl_free(&r);
	RUN(&r, 0, "", "pool", "objects", "-H", "hyper0");
	EXPECT_NE(NULL, strstr(r.out, "hyper0: 1 shared objects"));
	EXPECT_NE(NULL, strstr(r.out, "admin.weights")) TH_LOG("%s", r.out);
	hctl_free(&r);
	EXPECT_EQ(0, hyper_free(fd, obj.handle));

	/* hyperctl pool delete admin.weights hyper0 */
	RUN(&r, 0, "", "pool", "delete", "admin.weights", "hyper0");
	hctl_free(&r);
	RUN(&r, 1, "hyperctl: hyper0: pool delete: no published object admin.weights: hyperctl pool objects lists them\n",
	    "pool", "delete", "admin.weights", "hyper0");
	hctl_free(&r);
	RUN(&r, 0, "", "pool", "objects", "hyper0");
	o = hctl_dev(r.json, "hyper0");
	ASSERT_NE(NULL, o);
	ASSERT_TRUE(json_object_object_get_ex(o, "objects", &nodes));
	EXPECT_EQ(0, json_object_array_length(nodes));
	hctl_free(&r);

	/* Refusals, one line each. */
	RUN(&r, 1, "hyperctl: hyper0: pool fence: this node cannot fence itself: hyperctl pool leave\n",
	    "pool", "fence", "1", "hyper0");
	hctl_free(&r);
	RUN(&r, 1, "hyperctl: hyper0: pool fence: node 5 is not joined and holds nothing\n",
	    "pool", "fence", "5", "hyper0");
	hctl_free(&r);
	RUN(&r, 1, "hyperctl: hyper0: pool leave: regions of this node still exist: free them first\n",
	    "pool", "leave", "hyper0");
	hctl_free(&r);
	RUN(&r, 1, "hyperctl: hyper0: pool format: a node is joined: it must leave first (this node: hyperctl pool leave)\n",
	    "pool", "format", "--force", "hyper0");
	hctl_free(&r);

	/* hyperctl pool leave hyper0, once the node's regions are gone. */
	EXPECT_EQ(0, hyper_free(fd, handle));
	close(fd);
	RUN(&r, 0, "", "pool", "leave", "hyper0");
	hctl_free(&r);
	RUN(&r, 1, "hyperctl: hyper0: pool leave: this node has not joined the pool: hyperctl pool join\n",
	    "pool", "leave", "hyper0");
	hctl_free(&r);
	RUN(&r, 0, "", "pool", "status", "hyper0");
	o = hctl_dev(r.json, "hyper0");
	EXPECT_STREQ("formatted", hctl_str(o, "state"));
	EXPECT_EQ(2 * MiB, hctl_int(o, "used"));
	hctl_free(&r);
}

TEST_HARNESS_MAIN
