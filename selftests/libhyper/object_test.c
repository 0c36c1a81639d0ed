// SPDX-License-Identifier: GPL-2.0
/*
 * Shared objects on the backend given by --backend: two processes stand
 * for two nodes (shmem: each its own context and pool, the objects in
 * one directory).  Create, write, publish, open, read; nothing visible
 * before publish; read-only after; delete while open; a creator that dies
 * before publishing leaves nothing; a schedule's weights from an object
 * (in place) equal a run with private weights; a KV cache copied from an
 * object; and each refusal with its message.
 *
 * usage: object_test [--backend shmem|kmod]
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hyper/graph_id.h>

#include "kselftest_harness.h"
#include "helpers.h"

#define KiB		1024UL
#define DEV_LEN		(4UL << 20)
#define W_BYTES		(64 * KiB + 3)
#define KV_BYTES	4096

static char objdir[64];

/* A private directory of objects for this run (shmem), inherited by children. */
static void objects_dir(void)
{
	if (test_backend != HYPER_BACKEND_SHMEM)
		return;
	strcpy(objdir, "/tmp/hyper-objtest-XXXXXX");
	if (!mkdtemp(objdir))
		abort();
	setenv("HYPER_OBJECTS_DIR", objdir, 1);
}

static int nr_dir_entries(void)
{
	struct dirent *d;
	DIR *dp = opendir(objdir);
	int n = 0;

	if (!dp)
		return -1;
	while ((d = readdir(dp)))
		n += d->d_name[0] != '.';
	closedir(dp);
	return n;
}

/* Pipes between the two "nodes": one byte each way as a signal. */
struct link {
	int to_child[2], to_parent[2];
};

static void sig(int fd)
{
	char c = 1;

	if (write(fd, &c, 1) != 1)
		abort();
}

static void await(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		_exit(90);
}

static int child_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

FIXTURE(obj) {
	struct hyper_ctx *ctx;
};

FIXTURE_SETUP(obj)
{
	ASSERT_EQ(0, open_test_ctx(&self->ctx));
}

FIXTURE_TEARDOWN(obj)
{
	hyper_close(self->ctx);
}

/* Node B: not visible before publish, equal bytes after, never writable. */
static int node_b(struct link *l, const char *name, size_t len)
{
	struct hyper_ctx *ctx;
	struct hyper_region *r;
	unsigned char *p, *buf = malloc(len);

	if (!buf || open_test_ctx(&ctx))
		return 10;
	await(l->to_child[0]);			/* A created and wrote it */
	if (hyper_object_open(ctx, name, &r) != -ENOENT ||
	    !strstr(hyper_last_error(ctx), "not published yet"))
		return 11;
	sig(l->to_parent[1]);
	await(l->to_child[0]);			/* A published it */
	if (hyper_object_open(ctx, name, &r))
		return 12;
	if (hyper_region_size(r) < len)
		return 13;
	if (hyper_region_read(ctx, r, 0, buf, len) || check_pat(buf, len, 7) != -1)
		return 14;
	if (hyper_region_map(ctx, r, (void **)&p) || check_pat(p, len, 7) != -1)
		return 15;
	if (hyper_region_write(ctx, r, 0, buf, 1) != -EACCES ||
	    !strstr(hyper_last_error(ctx), "read-only"))
		return 16;
	/* The mapping is read-only, and cannot be made writable. */
	if (!mprotect(p, 4096, PROT_READ | PROT_WRITE) || errno != EACCES)
		return 17;
	if (hyper_region_free(ctx, r))
		return 18;
	hyper_close(ctx);
	free(buf);
	return 0;
}

TEST_F(obj, two_nodes_publish_open)
{
	const size_t len = 3 * 65536 + 5;
	struct hyper_region *r;
	struct link l;
	void *p;
	pid_t pid;

	ASSERT_EQ(0, pipe(l.to_child));
	ASSERT_EQ(0, pipe(l.to_parent));
	hyper_object_delete(self->ctx, "two.nodes");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(node_b(&l, "two.nodes", len));
	ASSERT_EQ(0, hyper_object_create(self->ctx, "two.nodes", len, &r))
		TH_LOG("%s", hyper_last_error(self->ctx));
	ASSERT_EQ(0, hyper_region_map(self->ctx, r, &p));
	fill_pat(p, len, 7);
	sig(l.to_child[1]);
	await(l.to_parent[0]);			/* B saw nothing */
	ASSERT_EQ(0, hyper_object_publish(self->ctx, r))
		TH_LOG("%s", hyper_last_error(self->ctx));
	sig(l.to_child[1]);
	EXPECT_EQ(0, child_status(pid));
	/* The creator's region is read-only too from now on. */
	EXPECT_EQ(-EACCES, hyper_region_write(self->ctx, r, 0, "x", 1));
	EXPECT_EQ(-EALREADY, hyper_object_publish(self->ctx, r));
	EXPECT_EQ(0, hyper_region_free(self->ctx, r));
	EXPECT_EQ(0, hyper_object_delete(self->ctx, "two.nodes"));
}

TEST_F(obj, delete_while_open)
{
	const size_t len = 8192;
	struct hyper_region *r, *o;
	unsigned char buf[8192];
	struct link l;
	void *p;
	pid_t pid;

	ASSERT_EQ(0, pipe(l.to_child));
	ASSERT_EQ(0, pipe(l.to_parent));
	ASSERT_EQ(0, hyper_object_create(self->ctx, "del", len, &r));
	ASSERT_EQ(0, hyper_region_map(self->ctx, r, &p));
	fill_pat(p, len, 9);
	ASSERT_EQ(0, hyper_object_publish(self->ctx, r));
	ASSERT_EQ(0, hyper_region_free(self->ctx, r));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct hyper_ctx *c;

		if (open_test_ctx(&c) || hyper_object_open(c, "del", &o))
			_exit(10);
		sig(l.to_parent[1]);
		await(l.to_child[0]);		/* the name is gone */
		if (hyper_region_read(c, o, 0, buf, len) || check_pat(buf, len, 9) != -1)
			_exit(11);
		hyper_close(c);
		_exit(0);
	}
	await(l.to_parent[0]);
	ASSERT_EQ(0, hyper_object_delete(self->ctx, "del"));
	EXPECT_EQ(-ENOENT, hyper_object_open(self->ctx, "del", &o));
	EXPECT_EQ(-ENOENT, hyper_object_delete(self->ctx, "del"));
	sig(l.to_child[1]);
	EXPECT_EQ(0, child_status(pid));
	/* The name can be used again. */
	ASSERT_EQ(0, hyper_object_create(self->ctx, "del", len, &r));
	EXPECT_EQ(0, hyper_region_free(self->ctx, r));
}

TEST_F(obj, creator_dies_before_publish)
{
	struct hyper_region *r;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		struct hyper_ctx *c;
		void *p;

		if (open_test_ctx(&c) || hyper_object_create(c, "torn", 1 << 20, &r) ||
		    hyper_region_map(c, r, &p))
			_exit(10);
		memset(p, 0xab, 1 << 19);	/* half written, then killed */
		_exit(0);
	}
	EXPECT_EQ(0, child_status(pid));
	EXPECT_EQ(-ENOENT, hyper_object_open(self->ctx, "torn", &r));
	if (test_backend == HYPER_BACKEND_SHMEM)
		EXPECT_EQ(0, nr_dir_entries());
}

TEST_F(obj, region_read_write)
{
	const size_t len = 300000;
	unsigned char *a = malloc(len), *b = malloc(len);
	struct hyper_region *r, *pool;

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	fill_pat(a, len, 3);
	ASSERT_EQ(0, hyper_object_create(self->ctx, "rw", len, &r));
	ASSERT_EQ(0, hyper_region_write(self->ctx, r, 0, a, 1000));
	ASSERT_EQ(0, hyper_region_write(self->ctx, r, 1000, a + 1000, len - 1000))
		TH_LOG("%s", hyper_last_error(self->ctx));
	ASSERT_EQ(0, hyper_region_read(self->ctx, r, 0, b, len));
	EXPECT_EQ(0, memcmp(a, b, len));
	EXPECT_EQ(-EINVAL, hyper_region_read(self->ctx, r, len - 10, b, 11));
	EXPECT_STREQ("hyper_region_read: bytes 299990 to 300001 are outside the region of 300000 bytes",
		     hyper_last_error(self->ctx));
	ASSERT_EQ(0, hyper_object_publish(self->ctx, r));
	EXPECT_EQ(-EACCES, hyper_region_write(self->ctx, r, 0, a, 1));
	EXPECT_STREQ("hyper_region_write: shared object \"rw\" is read-only once published: its contents never change; create a new object for new contents",
		     hyper_last_error(self->ctx));
	memset(b, 0, len);
	ASSERT_EQ(0, hyper_region_read(self->ctx, r, 5, b, len - 5));
	EXPECT_EQ(0, memcmp(a + 5, b, len - 5));
	/* Plain pool regions too. */
	ASSERT_EQ(0, hyper_region_alloc(self->ctx, len, 0, &pool));
	ASSERT_EQ(0, hyper_region_write(self->ctx, pool, 0, a, len));
	memset(b, 0, len);
	ASSERT_EQ(0, hyper_region_read(self->ctx, pool, 0, b, len));
	EXPECT_EQ(0, memcmp(a, b, len));
	EXPECT_EQ(0, hyper_region_free(self->ctx, pool));
	EXPECT_EQ(0, hyper_region_free(self->ctx, r));
	EXPECT_EQ(0, hyper_object_delete(self->ctx, "rw"));
	free(a);
	free(b);
}

TEST_F(obj, bad_input)
{
	static const char *const bad[] = {
		"", "a/b", ".", "..", "sp ace", "é",
		"0123456789012345678901234567890123456789012345678901234567890123",
	};
	struct hyper_region *r, *pool;
	const char *msg;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, hyper_object_create(self->ctx, bad[i], 4096, &r));
		msg = hyper_last_error(self->ctx);
		EXPECT_NE(NULL, strstr(msg, "give 1 to 63 characters of A-Z a-z 0-9 . _ -"))
			TH_LOG("%s: %s", bad[i], msg);
		EXPECT_EQ(-EINVAL, hyper_object_open(self->ctx, bad[i], &r));
		EXPECT_EQ(-EINVAL, hyper_object_delete(self->ctx, bad[i]));
	}
	EXPECT_EQ(-EINVAL, hyper_object_create(self->ctx, NULL, 4096, &r));
	EXPECT_EQ(-EINVAL, hyper_object_create(self->ctx, "zero", 0, &r));
	EXPECT_STREQ("shared object \"zero\": size must not be zero",
		     hyper_last_error(self->ctx));
	EXPECT_EQ(-ENOENT, hyper_object_open(self->ctx, "no.such.object", &r));
	EXPECT_NE(NULL, strstr(hyper_last_error(self->ctx), "not published yet, or deleted"));
	/* A name taken, published or not. */
	ASSERT_EQ(0, hyper_object_create(self->ctx, "taken", 4096, &r));
	ASSERT_EQ(0, hyper_object_publish(self->ctx, r));
	EXPECT_EQ(-EEXIST, hyper_object_create(self->ctx, "taken", 4096, &r));
	EXPECT_NE(NULL, strstr(hyper_last_error(self->ctx), "delete it first, or choose another name") ?:
		  strstr(hyper_last_error(self->ctx), "delete it, or choose another name"));
	EXPECT_EQ(0, hyper_object_delete(self->ctx, "taken"));
	/* Only objects publish. */
	ASSERT_EQ(0, hyper_region_alloc(self->ctx, 4096, 0, &pool));
	EXPECT_EQ(-EINVAL, hyper_object_publish(self->ctx, pool));
	EXPECT_STREQ("not a shared object of this context: publish what hyper_object_create() returned",
		     hyper_last_error(self->ctx));
	/* A directory read needs one. */
	{
		struct hyper_object_entry e;

		EXPECT_EQ(-EINVAL, hyper_object_entry(self->ctx, pool, 0, &e));
		ASSERT_EQ(0, hyper_object_create(self->ctx, "nodir", 4096, &r));
		EXPECT_EQ(-EINVAL, hyper_object_entry(self->ctx, r, 0, &e));
		EXPECT_NE(NULL, strstr(hyper_last_error(self->ctx), "is not published yet"));
		ASSERT_EQ(0, hyper_object_publish(self->ctx, r));
		EXPECT_EQ(-EBADMSG, hyper_object_entry(self->ctx, r, 0, &e));
		EXPECT_NE(NULL, strstr(hyper_last_error(self->ctx), "has no tensor directory"));
		EXPECT_EQ(0, hyper_region_free(self->ctx, r));
		EXPECT_EQ(0, hyper_object_delete(self->ctx, "nodir"));
	}
	EXPECT_EQ(0, hyper_region_free(self->ctx, pool));
}

/* shmem: a directory others may write, or a link to one, is refused. */
TEST(objects_dir_checked)
{
	char dir[64] = "/tmp/hyper-objdir-XXXXXX", link[80];
	struct hyper_open_opts o;
	struct hyper_region *r;
	struct hyper_ctx *ctx;
	int ret;

	if (test_backend != HYPER_BACKEND_SHMEM)
		SKIP(return, "objects_dir is the shmem backend's");
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(link, sizeof(link), "%s.link", dir);
	ASSERT_EQ(0, symlink(dir, link));
	test_opts(&o);
	o.objects_dir = link;
	ASSERT_EQ(0, hyper_open(&ctx, &o));
	ret = hyper_object_create(ctx, "w", 4096, &r);
	EXPECT_TRUE(ret == -ENOTDIR || ret == -ELOOP)
		TH_LOG("%d", ret);
	EXPECT_EQ(NULL, r);
	EXPECT_NE(NULL, strstr(hyper_last_error(ctx), "a symbolic link, which is refused"))
		TH_LOG("%s", hyper_last_error(ctx));
	hyper_close(ctx);

	ASSERT_EQ(0, chmod(dir, 0777));
	o.objects_dir = dir;
	ASSERT_EQ(0, hyper_open(&ctx, &o));
	EXPECT_EQ(-EPERM, hyper_object_open(ctx, "w", &r));
	EXPECT_NE(NULL, strstr(hyper_last_error(ctx), "others may write it"))
		TH_LOG("%s", hyper_last_error(ctx));
	hyper_close(ctx);
	EXPECT_EQ(0, unlink(link));
	EXPECT_EQ(0, rmdir(dir));
}

TEST_F(obj, pack_and_entries)
{
	unsigned char a[100], b[7000];
	struct hyper_object_entry in[2] = {
		{ .id = "layer.0.k", .desc = "float32[25]", .bytes = sizeof(a),
		  .kind = HYPER_KIND_KV },
		{ .id = "layer.0.v", .bytes = sizeof(b), .kind = HYPER_KIND_KV },
	}, e;
	const void *data[2] = { a, b };
	struct hyper_region *r, *o;
	unsigned char *p;

	fill_pat(a, sizeof(a), 1);
	fill_pat(b, sizeof(b), 2);
	ASSERT_EQ(0, hyper_object_pack(self->ctx, "packed", in, data, 2, &r))
		TH_LOG("%s", hyper_last_error(self->ctx));
	EXPECT_EQ(0, hyper_region_free(self->ctx, r));
	ASSERT_EQ(0, hyper_object_open(self->ctx, "packed", &o));
	ASSERT_EQ(0, hyper_region_map(self->ctx, o, (void **)&p));
	ASSERT_EQ(0, hyper_object_entry(self->ctx, o, 0, &e));
	EXPECT_STREQ("layer.0.k", e.id);
	EXPECT_STREQ("float32[25]", e.desc);
	EXPECT_EQ(sizeof(a), e.bytes);
	EXPECT_EQ(HYPER_KIND_KV, e.kind);
	EXPECT_EQ(0, e.offset % 64);
	EXPECT_EQ(-1, check_pat(p + e.offset, sizeof(a), 1));
	ASSERT_EQ(0, hyper_object_entry(self->ctx, o, 1, &e));
	EXPECT_STREQ("layer.0.v", e.id);
	EXPECT_STREQ("", e.desc);
	EXPECT_EQ(-1, check_pat(p + e.offset, sizeof(b), 2));
	EXPECT_EQ(-ENOENT, hyper_object_entry(self->ctx, o, 2, &e));
	EXPECT_EQ(0, hyper_region_free(self->ctx, o));
	/* Refusals. */
	in[1].id = "layer.0.k";
	EXPECT_EQ(-EINVAL, hyper_object_pack(self->ctx, "dup", in, data, 2, NULL));
	EXPECT_STREQ("tensor \"layer.0.k\" is given twice", hyper_last_error(self->ctx));
	in[1].id = "";
	EXPECT_EQ(-EINVAL, hyper_object_pack(self->ctx, "noid", in, data, 2, NULL));
	in[1].id = "v";
	in[1].bytes = 0;
	EXPECT_EQ(-EINVAL, hyper_object_pack(self->ctx, "nobytes", in, data, 2, NULL));
	EXPECT_EQ(-EINVAL, hyper_object_pack(self->ctx, "none", in, data, 0, NULL));
	EXPECT_EQ(-ENOENT, hyper_object_open(self->ctx, "dup", &o));
	EXPECT_EQ(0, hyper_object_delete(self->ctx, "packed"));
}

/* @img with its directory's checksum made right again. */
static void rehash(unsigned char *img)
{
	uint64_t dir_bytes, h;

	memcpy(&dir_bytes, img + 16, sizeof(dir_bytes));
	memset(img + 24, 0, sizeof(h));
	h = hyper_fnv1a(HYPER_FNV_OFFSET, img, dir_bytes);
	memcpy(img + 24, &h, sizeof(h));
}

/*
 * Objects whose directories were edited after packing: a wrong checksum,
 * and (with the checksum made right) a tensor past the end, an id without
 * its NUL, a count past the directory, and one id twice: each refused.
 */
TEST_F(obj, corrupt_directory)
{
	unsigned char a[100], b[7000], *p, *img, *w;
	struct hyper_object_entry in[2] = {
		{ .id = "layer.0.k", .desc = "float32[25]", .bytes = sizeof(a) },
		{ .id = "layer.0.v", .bytes = sizeof(b) },
	}, e;
	const void *data[2] = { a, b };
	struct hyper_region *r, *c, *o;
	uint64_t size, v64;
	uint32_t v32;

	fill_pat(a, sizeof(a), 3);
	fill_pat(b, sizeof(b), 4);
	ASSERT_EQ(0, hyper_object_pack(self->ctx, "good", in, data, 2, &r));
	ASSERT_EQ(0, hyper_region_map(self->ctx, r, (void **)&p));
	size = hyper_region_size(r);
	img = malloc(size);
	ASSERT_NE(NULL, img);
	for (int i = 0; i < 5; i++) {
		memcpy(img, p, size);
		switch (i) {
		case 0:		/* the checksum */
			img[24] ^= 1;
			break;
		case 1:		/* entry 1's bytes wrap around */
			v64 = ~0ULL;
			memcpy(img + 64 + 40 + 8, &v64, sizeof(v64));
			break;
		case 2:		/* entry 0's id runs into its description */
			memcpy(&v32, img + 64 + 24, sizeof(v32));
			v32++;
			memcpy(img + 64 + 24, &v32, sizeof(v32));
			break;
		case 3:		/* more entries than the directory holds */
			v32 = 1U << 20;
			memcpy(img + 12, &v32, sizeof(v32));
			break;
		case 4:		/* entry 1 names entry 0's tensor */
			memcpy(img + 64 + 40 + 20, img + 64 + 20, 8);
			break;
		}
		if (i)
			rehash(img);
		ASSERT_EQ(0, hyper_object_create(self->ctx, "edited", size, &c));
		ASSERT_EQ(0, hyper_region_map(self->ctx, c, (void **)&w));
		memcpy(w, img, size);
		ASSERT_EQ(0, hyper_object_publish(self->ctx, c));
		ASSERT_EQ(0, hyper_object_open(self->ctx, "edited", &o));
		EXPECT_EQ(-EBADMSG, hyper_object_entry(self->ctx, o, 0, &e))
			TH_LOG("case %d", i);
		EXPECT_NE(NULL, strstr(hyper_last_error(self->ctx),
				       "its tensor directory is corrupt"))
			TH_LOG("case %d: %s", i, hyper_last_error(self->ctx));
		EXPECT_EQ(0, hyper_region_free(self->ctx, o));
		EXPECT_EQ(0, hyper_region_free(self->ctx, c));
		EXPECT_EQ(0, hyper_object_delete(self->ctx, "edited"));
	}
	/* The unedited one reads. */
	EXPECT_EQ(0, hyper_object_entry(self->ctx, r, 1, &e));
	EXPECT_STREQ("layer.0.v", e.id);
	free(img);
	EXPECT_EQ(0, hyper_region_free(self->ctx, r));
	EXPECT_EQ(0, hyper_object_delete(self->ctx, "good"));
}

/* ---- schedules ------------------------------------------------------- */

#define TW(id, bytes, kind, home) \
	"{'id':'" id "','bytes':" #bytes ",'kind':'" kind "','home':'" home "'}"

/* s0 reads w and kv, defines x (from both) and kv (kv + 1), stores both. */
#define SCHED(wbytes, wstore)						\
	"{" HDR "'tensors':[" TW("w", wbytes, "weight", "pool") ","	\
	TW("kv", 4096, "kv", "pool") "," TW("x", 65539, "activation", "none") \
	"],'steps':[{'op':'s0','before':[{'op':'prefetch','tensor':'w'},"	\
	"{'op':'prefetch','tensor':'kv'}],'uses':['w','kv'],"		\
	"'defines':['x','kv'],'after':[{'op':'store','tensor':'x'},"	\
	"{'op':'store','tensor':'kv'}" wstore ",{'op':'detach','tensor':'w'},"	\
	"{'op':'detach','tensor':'kv'}]},{'op':'s1','after':[{'op':'detach','tensor':'x'}]}]}"

struct run {
	struct hyper_ctx *ctx;
	struct hyper_schedule *s;
	void *dev;
};

static int op(struct hyper_ctx *ctx, unsigned int step, void *arg)
{
	unsigned char *w, *kv, *x;

	if (step)
		return 0;
	w = hyper_tensor_ptr(ctx, 0);
	kv = hyper_tensor_ptr(ctx, 1);
	x = hyper_tensor_ptr(ctx, 2);
	if (!w || !kv || !x)
		return -EFAULT;
	for (size_t i = 0; i < W_BYTES; i++)
		x[i] = (unsigned char)((w[i] ^ 0x5a) + kv[i % KV_BYTES]);
	for (size_t i = 0; i < KV_BYTES; i++)
		kv[i]++;
	return 0;
}

/* The copy engine of run_open()'s contexts: 0 for the backend's default. */
static uint32_t engine;

static int run_open(struct run *r, const char *json)
{
	struct hyper_copy_opts co = { .engine = engine };
	char err[512];
	struct iovec iov;
	int ret;

	memset(r, 0, sizeof(*r));
	r->dev = dev_mem(DEV_LEN);
	if (!r->dev || open_test_ctx(&r->ctx))
		return -ENOMEM;
	if (engine && hyper_set_copy_engine(r->ctx, &co))
		return -EINVAL;
	iov.iov_base = r->dev;
	iov.iov_len = DEV_LEN;
	ret = parse_sq(json, &r->s, err, sizeof(err));
	if (!ret)
		ret = hyper_register_buffers(r->ctx, &iov, 1);
	if (!ret)
		ret = hyper_attach(r->ctx, r->s);
	if (!ret)
		ret = hyper_set_arena(r->ctx, r->dev, DEV_LEN);
	return ret;
}

static void run_close(struct run *r)
{
	hyper_close(r->ctx);
	hyper_schedule_free(r->s);
	munmap(r->dev, DEV_LEN);
}

/* A run with private weights (pattern 5) and KV (pattern 6); x and kv out. */
static int reference(unsigned char *x, unsigned char *kv, bool export)
{
	struct run r;
	int ret = run_open(&r, SCHED(65539, ""));

	if (!ret)
		ret = hyper_prepare(r.ctx);
	if (ret)
		return ret;
	fill_pat(hyper_tensor_pool_ptr(r.ctx, 0), W_BYTES, 5);
	fill_pat(hyper_tensor_pool_ptr(r.ctx, 1), KV_BYTES, 6);
	/* The weights as they are before any run: a publisher's. */
	if (export && (ret = hyper_object_export(r.ctx, "weights", 1U << HYPER_KIND_WEIGHT, NULL)))
		return ret;
	ret = hyper_run(r.ctx, op, NULL);
	if (!ret)
		ret = hyper_drain(r.ctx);
	if (ret)
		return ret;
	memcpy(x, hyper_tensor_pool_ptr(r.ctx, 2), W_BYTES);
	memcpy(kv, hyper_tensor_pool_ptr(r.ctx, 1), KV_BYTES);
	/* The KV cache after the run: a handover. */
	if (export)
		ret = hyper_object_export(r.ctx, "kv", 1U << HYPER_KIND_KV, NULL);
	run_close(&r);
	return ret;
}

TEST(weights_in_place_and_kv_copied)
{
	static unsigned char x0[W_BYTES], kv0[KV_BYTES], x1[W_BYTES], kv1[KV_BYTES];
	struct hyper_region *wo, *ko;
	struct hyper_object_entry e;
	struct run r;
	pid_t pid;

	{
		struct hyper_ctx *c;

		ASSERT_EQ(0, open_test_ctx(&c));
		hyper_object_delete(c, "weights");
		hyper_object_delete(c, "kv");
		hyper_close(c);
	}
	/* Node A: a run with private weights, exporting them and its KV cache. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(reference(x0, kv0, true) ? 10 : 0);
	ASSERT_EQ(0, child_status(pid));
	ASSERT_EQ(0, reference(x0, kv0, false));

	/* Node B: weights read-only in place, the KV cache copied (it is stored). */
	/* Both engines: the worker copies from the mapping, io_uring reads the file. */
	for (engine = 0; engine <= HYPER_COPY_URING; engine++) {
		ASSERT_EQ(0, run_open(&r, SCHED(65539, "")));
		ASSERT_EQ(0, hyper_object_open(r.ctx, "weights", &wo))
			TH_LOG("%s", hyper_last_error(r.ctx));
		ASSERT_EQ(0, hyper_object_entry(r.ctx, wo, 0, &e));
		EXPECT_STREQ("w", e.id);
		EXPECT_EQ(HYPER_KIND_WEIGHT, e.kind);
		ASSERT_EQ(0, hyper_object_open(r.ctx, "kv", &ko));
		EXPECT_EQ(1, hyper_bind_object(r.ctx, wo, 0)) TH_LOG("%s", hyper_last_error(r.ctx));
		EXPECT_EQ(1, hyper_bind_object(r.ctx, ko, HYPER_BIND_OBJECT_COPY));
		EXPECT_EQ(-EBUSY, hyper_bind_object(r.ctx, wo, 0));
		EXPECT_STREQ("tensor \"w\" already has its pool copy bound", hyper_last_error(r.ctx));
		ASSERT_EQ(0, hyper_prepare(r.ctx)) TH_LOG("%s", hyper_last_error(r.ctx));
		{
			void *wm;

			ASSERT_EQ(0, hyper_region_map(r.ctx, wo, &wm));
			EXPECT_EQ((char *)wm + e.offset, hyper_tensor_pool_ptr(r.ctx, 0));
		}
		EXPECT_EQ(-EBUSY, hyper_bind_object(r.ctx, wo, 0));
		EXPECT_STREQ("hyper_bind_object: bindings are fixed by hyper_prepare(): bind before it",
			     hyper_last_error(r.ctx));
		/* kv's pool copy is the handed-over cache (kv0, after one run). */
		EXPECT_EQ(0, memcmp(kv0, hyper_tensor_pool_ptr(r.ctx, 1), KV_BYTES));
		ASSERT_EQ(0, hyper_run(r.ctx, op, NULL)) TH_LOG("%s", hyper_last_error(r.ctx));
		ASSERT_EQ(0, hyper_drain(r.ctx));
		memcpy(x1, hyper_tensor_pool_ptr(r.ctx, 2), W_BYTES);
		memcpy(kv1, hyper_tensor_pool_ptr(r.ctx, 1), KV_BYTES);
		/* x from the shared weights and the handed-over cache: as A's second step. */
		for (size_t i = 0; i < KV_BYTES; i++)
			kv0[i]++;
		for (size_t i = 0; i < W_BYTES; i++)
			x0[i]++;
		EXPECT_EQ(0, memcmp(kv0, kv1, KV_BYTES));
		EXPECT_EQ(0, memcmp(x0, x1, W_BYTES));
		for (size_t i = 0; i < KV_BYTES; i++)
			kv0[i]--;
		for (size_t i = 0; i < W_BYTES; i++)
			x0[i]--;
		/* The object did not change. */
		{
			unsigned char kvo[KV_BYTES];

			ASSERT_EQ(0, hyper_object_entry(r.ctx, ko, 0, &e));
			ASSERT_EQ(0, hyper_region_read(r.ctx, ko, e.offset, kvo, KV_BYTES));
			EXPECT_EQ(0, memcmp(kv0, kvo, KV_BYTES));
		}
		run_close(&r);
	}
	engine = 0;

	/* A schedule that stores the weight: refused read-only, fine copied. */
	ASSERT_EQ(0, run_open(&r, SCHED(65539, ",{'op':'store','tensor':'w'}")));
	ASSERT_EQ(0, hyper_object_open(r.ctx, "weights", &wo));
	EXPECT_EQ(1, hyper_bind_object(r.ctx, wo, 0));
	EXPECT_EQ(-EACCES, hyper_prepare(r.ctx));
	EXPECT_STREQ("tensor \"w\" is bound read-only to shared object \"weights\" and step 0 (s0) stores it: bind the object with HYPER_BIND_OBJECT_COPY for a private copy",
		     hyper_last_error(r.ctx));
	run_close(&r);
	ASSERT_EQ(0, run_open(&r, SCHED(65539, ",{'op':'store','tensor':'w'}")));
	ASSERT_EQ(0, hyper_object_open(r.ctx, "weights", &wo));
	EXPECT_EQ(1, hyper_bind_object(r.ctx, wo, HYPER_BIND_OBJECT_COPY));
	ASSERT_EQ(0, hyper_prepare(r.ctx)) TH_LOG("%s", hyper_last_error(r.ctx));
	EXPECT_EQ(-1, check_pat(hyper_tensor_pool_ptr(r.ctx, 0), W_BYTES, 5));
	run_close(&r);

	/* Bytes that differ: not the same tensor. */
	ASSERT_EQ(0, run_open(&r, SCHED(65540, "")));
	ASSERT_EQ(0, hyper_object_open(r.ctx, "weights", &wo));
	EXPECT_EQ(-EINVAL, hyper_bind_object(r.ctx, wo, 0));
	EXPECT_STREQ("tensor \"w\": 65540 bytes in the schedule, 65539 in shared object \"weights\": not the same tensor",
		     hyper_last_error(r.ctx));
	EXPECT_EQ(-EINVAL, hyper_bind_object(r.ctx, wo, 2));
	EXPECT_STREQ("hyper_bind_object: unknown flags 0x2", hyper_last_error(r.ctx));
	run_close(&r);

	ASSERT_EQ(0, open_test_ctx(&r.ctx));
	EXPECT_EQ(0, hyper_object_delete(r.ctx, "weights"));
	EXPECT_EQ(0, hyper_object_delete(r.ctx, "kv"));
	hyper_close(r.ctx);
}

/* One directory for every test (each runs in a child of its own). */
int main(int argc, char **argv)
{
	int ret;

	if (parse_backend_args(argc, argv))
		return KSFT_FAIL;
	objects_dir();
	ret = test_harness_run(argc, argv);
	if (objdir[0] && (nr_dir_entries() || rmdir(objdir))) {
		printf("# objects left in %s\n", objdir);
		return KSFT_FAIL;
	}
	return ret;
}
