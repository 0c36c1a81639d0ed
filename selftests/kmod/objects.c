// SPDX-License-Identifier: GPL-2.0
/*
 * Shared objects on one node (Documentation/supernode.md, "Shared
 * objects"): create, store, map, publish, open read-only, delete while
 * held, the table full and the pool full, a publish stopped half way by
 * debugfs obj_stall, a pipe's pages that outlive the handle, and every
 * refusal by its errno and its one line in the log.  A standalone module answers -ENODEV, bad fields -EINVAL.
 * The two-node side is twonode_objects.c.
 *
 * Needs a window (the module is reloaded with node_id and the pool
 * formatted): run in a suite with one, whose HYPER_MODPARAMS load it
 * standalone.  The suite's module is loaded again after every test.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "hyper_test.h"
#include "obj_test.h"

#define OBJ_SIZE	(4 * MiB)
#define CHUNK		(2 * MiB)

FIXTURE(objects) {
	int fd;
};

FIXTURE_SETUP(objects)
{
	self->fd = -1;
	if (hyper_module_loaded())
		ASSERT_EQ(0, hyper_module_unload());
}

FIXTURE_TEARDOWN(objects)
{
	if (self->fd >= 0)
		close(self->fd);
	if (hyper_module_loaded()) {
		hyper_sysfs_write(0, "pool/leave", "1");
		EXPECT_EQ(0, hyper_module_unload());
	}
	EXPECT_EQ(0, hyper_module_load(hyper_modparams()));
}

/* Loads the module as node 0 of a freshly formatted pool, joined. */
static int join_pool(void)
{
	char params[512];
	int ret;

	snprintf(params, sizeof(params), "%s node_id=0 lease_ms=10000",
		 hyper_modparams());
	ret = hyper_module_load(params);
	if (!ret)
		ret = hyper_sysfs_write(0, "pool/format", "force");
	if (!ret)
		ret = hyper_sysfs_write(0, "pool/join", "1");
	return ret;
}

static long long used(void)
{
	return hyper_sysfs_ll(0, "used");
}

/* An ioctl refused: its errno and one more line in the log saying why. */
#define REFUSED(call, err, why) do {					\
	int before_ = hyper_dmesg_count(why);				\
									\
	EXPECT_EQ(err, call);						\
	EXPECT_EQ(before_ + 1, hyper_dmesg_count(why)) {		\
		TH_LOG("no '%s' in the log", why);			\
	}								\
} while (0)

/* A raw struct hyper_obj ioctl, for fields the helpers keep valid. */
static int raw(int fd, unsigned long cmd, struct hyper_obj *o)
{
	return ioctl(fd, cmd, o) ? -errno : 0;
}

static void bad_fields(struct __test_metadata *_metadata, int fd)
{
	const char *name_why = "refused: an object's name is 1 to 63 characters";
	struct hyper_obj o;

	memset(&o, 0, sizeof(o));
	o.size = CHUNK;
	REFUSED(raw(fd, HYPER_IOC_OBJ_CREATE, &o), -EINVAL, name_why);
	memset(o.name, 'a', sizeof(o.name));
	REFUSED(raw(fd, HYPER_IOC_OBJ_CREATE, &o), -EINVAL, name_why);
	memset(o.name, 0, sizeof(o.name));
	strcpy(o.name, "a/b");
	REFUSED(raw(fd, HYPER_IOC_OBJ_OPEN, &o), -EINVAL, name_why);
	strcpy(o.name, "ab");
	o.name[5] = 'x';	/* not zero-padded */
	REFUSED(raw(fd, HYPER_IOC_OBJ_CREATE, &o), -EINVAL, name_why);
	o.name[5] = 0;
	o.flags = 1;
	REFUSED(raw(fd, HYPER_IOC_OBJ_CREATE, &o), -EINVAL,
		"OBJ_CREATE refused: flags and reserved fields must be zero");
	o.flags = 0;
	o.reserved0 = 1;
	EXPECT_EQ(-EINVAL, raw(fd, HYPER_IOC_OBJ_OPEN, &o));
	o.reserved0 = 0;
	o.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, raw(fd, HYPER_IOC_OBJ_DELETE, &o));
	o.reserved[1] = 0;
	o.size = 0;
	REFUSED(raw(fd, HYPER_IOC_OBJ_CREATE, &o), -EINVAL,
		"OBJ_CREATE refused: size 0 is not a non-zero multiple");
	o.size = 100;
	EXPECT_EQ(-EINVAL, raw(fd, HYPER_IOC_OBJ_CREATE, &o));
	o.size = 1ULL << 50;
	EXPECT_EQ(-EINVAL, raw(fd, HYPER_IOC_OBJ_CREATE, &o));
	o.size = CHUNK;
	REFUSED(raw(fd, HYPER_IOC_OBJ_DELETE, &o), -EINVAL,
		"OBJ_DELETE refused: size must be zero");
	{
		struct hyper_obj_publish p = { .handle = 1, .flags = 1 };

		EXPECT_EQ(-1, ioctl(fd, HYPER_IOC_OBJ_PUBLISH, &p));
		EXPECT_EQ(EINVAL, errno);
		p.flags = 0;
		p.reserved[0] = 1;
		EXPECT_EQ(-1, ioctl(fd, HYPER_IOC_OBJ_PUBLISH, &p));
		EXPECT_EQ(EINVAL, errno);
	}
}

TEST_F_TIMEOUT(objects, standalone_refuses_and_fields_are_checked, 300)
{
	struct hyper_obj_publish p = { .handle = 1 };
	uint32_t h;
	int rd;

	ASSERT_EQ(0, hyper_module_load(hyper_modparams()));
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
	REFUSED(obj_create(self->fd, "w", CHUNK, NULL), -ENODEV,
		"OBJ_CREATE refused: the module was loaded without node_id");
	REFUSED(obj_open(self->fd, "w", NULL), -ENODEV,
		"OBJ_OPEN refused: the module was loaded without node_id");
	REFUSED(obj_delete(self->fd, "w"), -ENODEV,
		"OBJ_DELETE refused: the module was loaded without node_id");
	/* A region is not an object. */
	ASSERT_EQ(0, hyper_alloc(self->fd, CHUNK, 0, &h, NULL));
	p.handle = h;
	EXPECT_EQ(-1, ioctl(self->fd, HYPER_IOC_OBJ_PUBLISH, &p));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, obj_query_flags(self->fd, h));
	bad_fields(_metadata, self->fd);
	/* A read-only open may open, not create or delete. */
	rd = open("/dev/hyper0", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, rd);
	EXPECT_EQ(-EBADF, obj_create(rd, "w", CHUNK, NULL));
	EXPECT_EQ(-EBADF, obj_delete(rd, "w"));
	EXPECT_EQ(-ENODEV, obj_open(rd, "w", NULL));
	close(rd);
}

/*
 * Nor does get_user_pages() write through a read-only mapping: neither
 * process_vm_writev() (FOLL_WRITE, as an O_DIRECT read into it) nor
 * /proc/self/mem (FOLL_FORCE too).
 */
static void gup_cannot_write(struct __test_metadata *_metadata, uint8_t *map)
{
	uint8_t junk[64], before[64];
	struct iovec local = { .iov_base = junk, .iov_len = sizeof(junk) };
	struct iovec remote = { .iov_base = map, .iov_len = sizeof(junk) };
	int mem;

	memset(junk, 0x5a, sizeof(junk));
	memcpy(before, map, sizeof(before));
	EXPECT_EQ(-1, process_vm_writev(getpid(), &local, 1, &remote, 1, 0));
	EXPECT_EQ(EFAULT, errno);
	mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, mem);
	EXPECT_EQ(-1, pwrite(mem, junk, sizeof(junk), (uintptr_t)map));
	close(mem);
	EXPECT_EQ(0, memcmp(before, map, sizeof(before)));
}

TEST_F_TIMEOUT(objects, create_publish_open_delete, 300)
{
	uint8_t *buf, *w, *r;
	struct hyper_obj c = { 0 }, o = { 0 }, o2 = { 0 };
	long long used0, refs = -1;
	char st[32] = "";
	int fd2, node = -1;

	ASSERT_EQ(0, join_pool());
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
	fd2 = hyper_dev_open(0);
	ASSERT_LE(0, fd2);
	buf = malloc(OBJ_SIZE);
	ASSERT_NE(NULL, buf);
	bad_fields(_metadata, self->fd);
	used0 = used();

	/* Created: its chunks are taken, it is zeroed, nobody sees it. */
	ASSERT_EQ(0, obj_create(self->fd, "weights.0", OBJ_SIZE, &c));
	EXPECT_EQ(OBJ_SIZE, c.size);
	EXPECT_EQ(0, c.node);
	EXPECT_NE(0, c.handle);
	EXPECT_EQ((unsigned long long)c.handle << 44, c.mmap_offset);
	EXPECT_EQ(used0 + OBJ_SIZE, used());
	EXPECT_EQ(HYPER_REGION_OBJECT, obj_query_flags(self->fd, c.handle));
	ASSERT_EQ(0, obj_line("weights.0", st, sizeof(st), NULL, &node, &refs));
	EXPECT_STREQ("creating", st);
	EXPECT_EQ(1, refs);
	REFUSED(obj_open(fd2, "weights.0", NULL), -ENOENT,
		"OBJ_OPEN refused: no published object weights.0");
	REFUSED(obj_delete(fd2, "weights.0"), -ENOENT,
		"OBJ_DELETE refused: weights.0 is not published yet");
	REFUSED(obj_create(fd2, "weights.0", CHUNK, NULL), -EEXIST,
		"OBJ_CREATE refused: the name weights.0 is taken (creating by node 0)");
	w = mmap(NULL, OBJ_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 c.mmap_offset);
	ASSERT_NE(MAP_FAILED, w);
	EXPECT_EQ(OBJ_SIZE, hyper_first_nonzero(w, OBJ_SIZE));

	/* Written: the first half by STORE, the second through the map. */
	hyper_fill(buf, OBJ_SIZE, 23);
	EXPECT_EQ(0, obj_xfer(self->fd, c.handle, 0, buf, OBJ_SIZE / 2, true));
	memcpy(w + OBJ_SIZE / 2, buf + OBJ_SIZE / 2, OBJ_SIZE / 2);
	REFUSED(obj_publish(self->fd, c.handle), -EBUSY,
		"OBJ_PUBLISH refused: 1 writable mappings of handle");
	EXPECT_EQ(0, munmap(w, OBJ_SIZE));
	ASSERT_EQ(0, obj_publish(self->fd, c.handle));
	REFUSED(obj_publish(self->fd, c.handle), -EALREADY,
		"is published already");
	/* The creator's handle is read-only now. */
	EXPECT_EQ(HYPER_REGION_OBJECT | HYPER_REGION_RDONLY,
		  obj_query_flags(self->fd, c.handle));
	REFUSED(obj_xfer(self->fd, c.handle, 0, buf, 4096, true), -EACCES,
		"STORE refused: handle");
	EXPECT_EQ(MAP_FAILED, mmap(NULL, OBJ_SIZE, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->fd, c.mmap_offset));
	EXPECT_EQ(EACCES, errno);

	/* Opened: read-only, by map and by PREFETCH. */
	ASSERT_EQ(0, obj_open(fd2, "weights.0", &o));
	EXPECT_EQ(OBJ_SIZE, o.size);
	EXPECT_EQ(0, o.node);
	EXPECT_EQ(HYPER_REGION_OBJECT | HYPER_REGION_RDONLY,
		  obj_query_flags(fd2, o.handle));
	r = mmap(NULL, OBJ_SIZE, PROT_READ, MAP_SHARED, fd2, o.mmap_offset);
	ASSERT_NE(MAP_FAILED, r);
	EXPECT_EQ(OBJ_SIZE, hyper_check(r, OBJ_SIZE, 23));
	EXPECT_EQ(-1, mprotect(r, OBJ_SIZE, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	gup_cannot_write(_metadata, r);
	REFUSED(mmap(NULL, OBJ_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd2,
		     o.mmap_offset) == MAP_FAILED ? -errno : 0, -EACCES,
		"mmap refused: handle");
	memset(buf, 0, OBJ_SIZE);
	EXPECT_EQ(0, obj_xfer(fd2, o.handle, 0, buf, OBJ_SIZE, false));
	EXPECT_EQ(OBJ_SIZE, hyper_check(buf, OBJ_SIZE, 23));
	EXPECT_EQ(-EACCES, obj_xfer(fd2, o.handle, 0, buf, 4096, true));
	REFUSED(obj_publish(fd2, o.handle), -EINVAL,
		"OBJ_PUBLISH refused: handle");
	ASSERT_EQ(0, obj_open(fd2, "weights.0", &o2));
	ASSERT_EQ(0, obj_line("weights.0", st, sizeof(st), NULL, NULL, &refs));
	EXPECT_STREQ("published", st);
	EXPECT_EQ(3, refs);
	EXPECT_EQ(0, hyper_free(fd2, o2.handle));
	ASSERT_EQ(0, obj_line("weights.0", st, sizeof(st), NULL, NULL, &refs));
	EXPECT_EQ(2, refs);

	/* Deleted while held: the name goes now, the memory stays. */
	ASSERT_EQ(0, obj_delete(self->fd, "weights.0"));
	EXPECT_EQ(-ENOENT, obj_open(fd2, "weights.0", NULL));
	EXPECT_EQ(-ENOENT, obj_delete(fd2, "weights.0"));
	ASSERT_EQ(0, obj_line("weights.0", st, sizeof(st), NULL, NULL, &refs));
	EXPECT_STREQ("deleting", st);
	EXPECT_EQ(used0 + OBJ_SIZE, used());
	/* The name is free again; this one is dropped unpublished. */
	ASSERT_EQ(0, obj_create(self->fd, "weights.0", CHUNK, &o2));
	EXPECT_EQ(used0 + OBJ_SIZE + CHUNK, used());
	EXPECT_EQ(0, hyper_free(self->fd, o2.handle));
	EXPECT_TRUE(hyper_poll(used() == used0 + OBJ_SIZE, 60));
	EXPECT_EQ(0, hyper_free(self->fd, c.handle));
	EXPECT_EQ(OBJ_SIZE, hyper_check(r, OBJ_SIZE, 23));
	EXPECT_EQ(0, hyper_free(fd2, o.handle));
	/* The map holds the last reference. */
	usleep(100000);
	EXPECT_EQ(used0 + OBJ_SIZE, used());
	EXPECT_EQ(OBJ_SIZE, hyper_check(r, OBJ_SIZE, 23));
	EXPECT_EQ(0, munmap(r, OBJ_SIZE));
	EXPECT_TRUE(hyper_poll(used() == used0, 60))
		TH_LOG("used %lld, %lld before the object", used(), used0);
	EXPECT_EQ(-ENOENT, obj_line("weights.0", NULL, 0, NULL, NULL, NULL));
	/* Leave waits for no object. */
	close(fd2);
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, hyper_sysfs_write(0, "pool/leave", "1"));
	free(buf);
}

TEST_F_TIMEOUT(objects, table_full_and_pool_full, 300)
{
	long long used0, size;
	struct hyper_obj c = { 0 };
	char name[32];
	int i;

	ASSERT_EQ(0, join_pool());
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
	used0 = used();
	size = hyper_sysfs_ll(0, "size");
	REFUSED(obj_create(self->fd, "big", size, NULL), -ENOSPC,
		"OBJ_CREATE refused: the pool has no");
	/* One chunk each, whatever the size: 256 fit a 768 MiB pool. */
	for (i = 0; i < 256; i++) {
		snprintf(name, sizeof(name), "o%d", i);
		ASSERT_EQ(0, obj_create(self->fd, name, 4096, &c))
			TH_LOG("object %d", i);
	}
	EXPECT_EQ(used0 + 256 * CHUNK, used());
	REFUSED(obj_create(self->fd, "one-more", 4096, NULL), -ENFILE,
		"OBJ_CREATE refused: the pool's object table is full");
	/* Closing drops them all, none published. */
	close(self->fd);
	self->fd = -1;
	EXPECT_TRUE(hyper_poll(used() == used0, 60))
		TH_LOG("used %lld, %lld before", used(), used0);
	EXPECT_EQ(-ENOENT, obj_line("o0", NULL, 0, NULL, NULL, NULL));
}

/* A child creates, stores and publishes; reports 0 or -errno by exit. */
static pid_t publisher(const char *name)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (!pid) {
		uint8_t *buf = malloc(CHUNK);
		struct hyper_obj c = { 0 };
		int fd = hyper_dev_open(0);

		if (fd < 0 || !buf || obj_create(fd, name, CHUNK, &c))
			_exit(1);
		hyper_fill(buf, CHUNK, 7);
		if (obj_xfer(fd, c.handle, 0, buf, CHUNK, true))
			_exit(2);
		_exit(obj_publish(fd, c.handle) ? 3 : 0);
	}
	return pid;
}

TEST_F_TIMEOUT(objects, publish_stopped_half_way, 300)
{
	long long used0;
	char st[32] = "";
	int status;
	pid_t pid;

	ASSERT_EQ(0, join_pool());
	used0 = used();
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);

	/* Killed half way: the torn record is never listed, the memory back. */
	ASSERT_EQ(0, hyper_write_file(OBJ_STALL, "1"));
	pid = publisher("torn");
	ASSERT_LE(0, pid);
	ASSERT_TRUE(hyper_poll(obj_stall() == 2, 60));
	EXPECT_EQ(-ENOENT, obj_line("torn", NULL, 0, NULL, NULL, NULL));
	EXPECT_EQ(used0 + CHUNK, used());
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(0, obj_stall());
	EXPECT_TRUE(hyper_poll(used() == used0, 60));
	EXPECT_EQ(-ENOENT, obj_line("torn", NULL, 0, NULL, NULL, NULL));
	EXPECT_EQ(-ENOENT, obj_open(self->fd, "torn", NULL));

	/* Let go half way: it finishes. */
	ASSERT_EQ(0, hyper_write_file(OBJ_STALL, "1"));
	pid = publisher("late");
	ASSERT_LE(0, pid);
	ASSERT_TRUE(hyper_poll(obj_stall() == 2, 60));
	EXPECT_EQ(-ENOENT, obj_line("late", NULL, 0, NULL, NULL, NULL));
	ASSERT_EQ(0, hyper_write_file(OBJ_STALL, "0"));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("publisher status %#x", status);
	ASSERT_EQ(0, obj_line("late", st, sizeof(st), NULL, NULL, NULL));
	EXPECT_STREQ("published", st);
	EXPECT_EQ(0, obj_delete(self->fd, "late"));
	EXPECT_TRUE(hyper_poll(used() == used0, 60));
}

#define SPLICED		(64 * 1024)	/* what a default pipe holds */

/*
 * Pages spliced into a pipe through a writable mapping: PUBLISH refuses
 * (such a reference could write on), and freeing the handle leaves the
 * object and its chunks held until the pipe lets go.
 */
TEST_F_TIMEOUT(objects, pipe_pages_hold_the_object, 300)
{
	struct iovec iov = { .iov_len = SPLICED };
	long long used0, refs = -1;
	struct hyper_obj c = { 0 };
	char st[32] = "";
	uint8_t *w;
	int p[2];

	ASSERT_EQ(0, join_pool());
	self->fd = hyper_dev_open(0);
	ASSERT_LE(0, self->fd);
	used0 = used();
	ASSERT_EQ(0, obj_create(self->fd, "spliced", CHUNK, &c));
	w = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 c.mmap_offset);
	ASSERT_NE(MAP_FAILED, w);
	hyper_fill(w, CHUNK, 31);
	ASSERT_EQ(0, pipe(p));
	iov.iov_base = w;
	ASSERT_EQ(SPLICED, vmsplice(p[1], &iov, 1, 0))
		TH_LOG("vmsplice: %s", strerror(errno));
	EXPECT_EQ(0, munmap(w, CHUNK));
	REFUSED(obj_publish(self->fd, c.handle), -EBUSY,
		"OBJ_PUBLISH refused: pages of handle");
	EXPECT_EQ(HYPER_REGION_OBJECT, obj_query_flags(self->fd, c.handle));

	/* Freed: the pipe keeps the chunk and the reference. */
	EXPECT_EQ(0, hyper_free(self->fd, c.handle));
	usleep(300000);
	EXPECT_EQ(used0 + CHUNK, used());
	ASSERT_EQ(0, obj_line("spliced", st, sizeof(st), NULL, NULL, &refs));
	EXPECT_STREQ("creating", st);
	EXPECT_EQ(1, refs);
	EXPECT_EQ(-EBUSY, hyper_sysfs_write(0, "pool/leave", "1"));

	/* The pipe lets go: the object goes. */
	close(p[0]);
	close(p[1]);
	EXPECT_TRUE(hyper_poll(used() == used0, 60))
		TH_LOG("used %lld, %lld before", used(), used0);
	EXPECT_EQ(-ENOENT, obj_line("spliced", NULL, 0, NULL, NULL, NULL));
}

TEST_HARNESS_MAIN
