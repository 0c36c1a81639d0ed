// SPDX-License-Identifier: GPL-2.0
/*
 * hyperctl's pieces on their own: size and interval parsing, size
 * formatting, node lists, counter deltas, latency quantiles, tables.
 */
#include <errno.h>

#include "kselftest_harness.h"
#include "hyperctl.h"

TEST(parse_size)
{
	static const struct {
		const char *s;
		int ret;
		uint64_t v;
	} cases[] = {
		{ "0", 0, 0 }, { "65536", 0, 65536 }, { "64K", 0, 65536 },
		{ "64k", 0, 65536 }, { "64KiB", 0, 65536 }, { "2M", 0, 2 << 20 },
		{ "1MiB", 0, 1 << 20 }, { "3G", 0, 3ULL << 30 },
		{ "1T", 0, 1ULL << 40 }, { "007", 0, 7 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "16777216T", -ERANGE, 0 }, { "16777215T", 0, 16777215ULL << 40 },
		{ "", -EINVAL, 0 }, { "K", -EINVAL, 0 }, { "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 }, { " 1", -EINVAL, 0 }, { "1 ", -EINVAL, 0 },
		{ "1.5M", -EINVAL, 0 }, { "0x10", -EINVAL, 0 },
		{ "1KB", -EINVAL, 0 }, { "1Ki", -EINVAL, 0 }, { "1P", -EINVAL, 0 },
		{ "1kib", -EINVAL, 0 },
	};

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int ret = hu_parse_size(cases[i].s, &v);

		EXPECT_EQ(cases[i].ret, ret) {
			TH_LOG("'%s'", cases[i].s);
		}
		EXPECT_EQ(cases[i].ret ? 12345 : cases[i].v, v) {
			TH_LOG("'%s'", cases[i].s);
		}
	}
}

TEST(fmt_size)
{
	static const struct {
		uint64_t v;
		const char *s;
	} cases[] = {
		{ 0, "0" }, { 1023, "1023" }, { 1024, "1K" }, { 1536, "1.5K" },
		{ 65536, "64K" }, { 1048575, "1.0M" }, { 1048576, "1M" },
		{ 805306368, "768M" }, { 3ULL << 30, "3G" },
		{ (3ULL << 30) / 2, "1.5G" }, { 1ULL << 40, "1T" },
		{ 1ULL << 50, "1P" }, { 1ULL << 60, "1E" }, { UINT64_MAX, "16.0E" },
	};
	char buf[24];

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		EXPECT_STREQ(cases[i].s, hu_fmt_size(cases[i].v, buf, sizeof(buf)));
}

TEST(parse_seconds_and_count)
{
	double s = 0;
	long n = 0;

	EXPECT_EQ(0, hc_parse_seconds("1", &s));
	EXPECT_EQ(1.0, s);
	EXPECT_EQ(0, hc_parse_seconds("0.25", &s));
	EXPECT_EQ(0.25, s);
	EXPECT_EQ(0, hc_parse_seconds(".5", &s));
	EXPECT_EQ(0.5, s);
	EXPECT_EQ(-ERANGE, hc_parse_seconds("0", &s));
	EXPECT_EQ(-ERANGE, hc_parse_seconds("0.001", &s));
	EXPECT_EQ(-ERANGE, hc_parse_seconds("86401", &s));
	EXPECT_EQ(-EINVAL, hc_parse_seconds("-1", &s));
	EXPECT_EQ(-EINVAL, hc_parse_seconds("1s", &s));
	EXPECT_EQ(-EINVAL, hc_parse_seconds("", &s));
	EXPECT_EQ(-EINVAL, hc_parse_seconds("nan", &s));
	EXPECT_EQ(-EINVAL, hc_parse_seconds("inf", &s));
	EXPECT_EQ(0.5, s);

	EXPECT_EQ(0, hc_parse_count("3", &n));
	EXPECT_EQ(3, n);
	EXPECT_EQ(0, hc_parse_count("1000000000", &n));
	EXPECT_EQ(-ERANGE, hc_parse_count("1000000001", &n));
	EXPECT_EQ(-ERANGE, hc_parse_count("0", &n));
	EXPECT_EQ(-EINVAL, hc_parse_count("1K", &n));
	EXPECT_EQ(-EINVAL, hc_parse_count("-2", &n));
	EXPECT_EQ(-EINVAL, hc_parse_count("", &n));
	EXPECT_EQ(1000000000, n);
}

TEST(nodelist)
{
	EXPECT_TRUE(hc_nodelist_has("1", 1));
	EXPECT_FALSE(hc_nodelist_has("1", 0));
	EXPECT_FALSE(hc_nodelist_has("", 0));
	EXPECT_TRUE(hc_nodelist_has("0-3", 2));
	EXPECT_TRUE(hc_nodelist_has("0,2-3,7", 7));
	EXPECT_TRUE(hc_nodelist_has("0,2-3,7", 3));
	EXPECT_FALSE(hc_nodelist_has("0,2-3,7", 1));
	EXPECT_FALSE(hc_nodelist_has("0,2-3,7", 8));
	EXPECT_TRUE(hc_nodelist_has("12", 12));
	EXPECT_FALSE(hc_nodelist_has("12", 1));
	EXPECT_FALSE(hc_nodelist_has("3-1", 2));
	EXPECT_FALSE(hc_nodelist_has("x", 0));
}

TEST(counter_delta_and_rate)
{
	EXPECT_EQ(5, hc_counter_delta(10, 15));
	EXPECT_EQ(0, hc_counter_delta(10, 10));
	/* Reset in between: what was counted since. */
	EXPECT_EQ(3, hc_counter_delta(10, 3));
	EXPECT_EQ(1000, hc_rate(0, 500, 0.5));
	EXPECT_EQ(3, hc_rate(0, 10, 3.0));
	EXPECT_EQ(4, hc_rate(0, 11, 3.0));
}

TEST(latency_quantiles)
{
	struct hc_stats st = { .nr_lat = 4 };
	uint64_t ns = 0;

	for (int i = 0; i < 4; i++)
		st.lat_bound[i] = 1ULL << (10 + i);
	EXPECT_EQ(-ENODATA, hc_stats_latency_bound(&st, 0.5, &ns));
	st.lat_count[1] = 50;
	st.lat_count[3] = 50;
	EXPECT_EQ(0, hc_stats_latency_bound(&st, 0.5, &ns));
	EXPECT_EQ(2048, ns);
	EXPECT_EQ(0, hc_stats_latency_bound(&st, 0.51, &ns));
	EXPECT_EQ(8192, ns);
	EXPECT_EQ(0, hc_stats_latency_bound(&st, 0.99, &ns));
	EXPECT_EQ(8192, ns);
	EXPECT_EQ(0, hc_stats_latency_bound(&st, 0.0, &ns));
	EXPECT_EQ(2048, ns);
}

TEST(table)
{
	static const char *const hdr[] = { "NAME", ">N", "LAST" };
	static const char *const r1[] = { "a", "1", "x" };
	static const char *const r2[] = { "longer", "12345", NULL };
	struct hc_table *t = hc_table_new(3, hdr);
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, hc_table_add(t, r1));
	ASSERT_EQ(0, hc_table_add(t, r2));
	f = open_memstream(&text, &len);
	ASSERT_NE(NULL, f);
	hc_table_print(t, f);
	fclose(f);
	EXPECT_STREQ("NAME        N  LAST\n"
		     "a           1  x\n"
		     "longer  12345  -\n", text);
	free(text);
	hc_table_free(t);
}

TEST(knobs)
{
	EXPECT_STREQ("workers", hc_knob_find("workers=3", 7)->name);
	EXPECT_STREQ("inline_bytes", hc_knob_find("inline_bytes", 12)->name);
	EXPECT_EQ(NULL, hc_knob_find("worker", 6));
	EXPECT_EQ(NULL, hc_knob_find("workers", 8));
	EXPECT_EQ(NULL, hc_knob_find("copy_engine", 11));
	EXPECT_TRUE(hc_knob_find("chunk_size", 10)->bytes);
	EXPECT_FALSE(hc_knob_find("queue_depth", 11)->bytes);
}

/* Each refusal of a pool command is its own line, naming what to do. */
TEST(pool_refusals)
{
	static const struct {
		const char *cmd;
		int err;
		const char *want;
	} cases[] = {
		{ "format", -ENODEV, "loaded without node_id" },
		{ "format", -EEXIST, "formatted already (--force" },
		{ "format", -EBUSY, "a node is joined: it must leave first" },
		{ "join", -ENODATA, "not formatted: hyperctl pool format" },
		{ "join", -EPROTO, "another format version" },
		{ "join", -EBADMSG, "superblock is corrupt" },
		{ "join", -EMEDIUMTYPE, "another pool size" },
		{ "join", -EADDRINUSE, "taken by a live node" },
		{ "join", -EALREADY, "joined already" },
		{ "join", -EBUSY, "was fenced" },
		{ "join", -ETIMEDOUT, "metadata lock" },
		{ "leave", -ENOTCONN, "has not joined the pool: hyperctl pool join" },
		{ "leave", -EBUSY, "regions of this node still exist" },
		{ "fence", -EBUSY, "node 4's lease is live" },
		{ "fence", -ENOENT, "node 4 is not joined and holds nothing" },
		{ "fence", -EAGAIN, "node 4's record is being written" },
		{ "fence", -EINVAL, "cannot fence itself" },
		{ "leave", -EIO, "Input/output error" },
	};

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = hc_pool_why(cases[i].cmd, cases[i].err, 4);

		EXPECT_NE(NULL, strstr(why, cases[i].want)) {
			TH_LOG("%s %d: %s", cases[i].cmd, cases[i].err, why);
		}
		EXPECT_EQ(NULL, strchr(why, '\n'));
	}
}

TEST_HARNESS_MAIN
