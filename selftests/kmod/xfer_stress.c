// SPDX-License-Identifier: GPL-2.0
/*
 * Data integrity under concurrency: several threads, each with its own
 * ring, registered buffer and region, keep several transfers of random
 * size (1 byte to 16 MiB) and offset in flight at once.  Every thread
 * keeps a shadow of what its region must hold and checks every byte a
 * prefetch brings back, and the region itself through mmap.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include "kselftest_harness.h"
#include "hyper_uring.h"

#define THREADS		4
#define SLOTS		8
#define SLOT		(2 * MiB)
#define AREA		(SLOTS * SLOT)
#define BIG		(16 * MiB)

struct worker {
	int fd;
	int id;
	unsigned int seed;
	double seconds;
	uint32_t h;
	uint8_t *pool;		/* the region, mapped: AREA + BIG */
	uint8_t *shadow;	/* what the region must hold */
	uint8_t *buf;		/* registered: AREA + BIG */
	uint8_t *plain;		/* not registered: AREA */
	long ops;
	char err[160];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rnd(unsigned int *seed, uint64_t n)
{
	return ((uint64_t)rand_r(seed) << 31 ^ rand_r(seed)) % n;
}

/* Lengths spread over 1 byte .. max on a log scale. */
static uint64_t rnd_len(unsigned int *seed, uint64_t max)
{
	uint64_t len = 1ULL << rnd(seed, 64 - __builtin_clzll(max));

	return 1 + rnd(seed, len < max ? len : max);
}

struct op {
	uint8_t dir;
	bool fixed;
	uint64_t roff, boff, len;
	uint8_t *mem;
};

static int fail(struct worker *w, const char *what, uint64_t a, uint64_t b)
{
	snprintf(w->err, sizeof(w->err), "thread %d: %s (%llu, %llu)", w->id,
		 what, (unsigned long long)a, (unsigned long long)b);
	return -1;
}

static int complete(struct worker *w, struct op *o, int res)
{
	if (res != (int)o->len)
		return fail(w, "bad CQE res", res, o->len);
	if (o->dir == HYPER_DIR_PREFETCH &&
	    memcmp(o->mem + o->boff, w->shadow + o->roff, o->len))
		return fail(w, "prefetched bytes differ", o->roff, o->len);
	return 0;
}

/* A round: one transfer per slot, all in flight together. */
static int round_of_slots(struct worker *w, struct io_uring *ring)
{
	struct op ops[SLOTS];
	int i;

	for (i = 0; i < SLOTS; i++) {
		struct op *o = &ops[i];
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		struct hyper_xfer x;

		o->dir = rand_r(&w->seed) & 1 ? HYPER_DIR_STORE :
			 HYPER_DIR_PREFETCH;
		o->fixed = rand_r(&w->seed) % 4;
		o->mem = o->fixed ? w->buf : w->plain;
		o->len = rnd_len(&w->seed, SLOT);
		o->roff = i * SLOT + rnd(&w->seed, SLOT - o->len + 1);
		o->boff = i * SLOT + rnd(&w->seed, SLOT - o->len + 1);
		if (o->dir == HYPER_DIR_STORE) {
			for (uint64_t b = 0; b < o->len; b += 61)
				o->mem[o->boff + b] = rand_r(&w->seed);
			/* The shadow changes now: nothing else touches it. */
			memcpy(w->shadow + o->roff, o->mem + o->boff, o->len);
		}
		x = (struct hyper_xfer) {
			.addr = (uintptr_t)(o->mem + o->boff), .len = o->len,
			.region_off = o->roff, .handle = w->h, .dir = o->dir,
		};
		hyper_prep_xfer(sqe, w->fd, &x, o->fixed ? 0 : -1);
		sqe->user_data = i;
	}
	if (io_uring_submit(ring) != SLOTS)
		return fail(w, "submit", SLOTS, 0);
	for (i = 0; i < SLOTS; i++) {
		struct io_uring_cqe *cqe;
		int ret;

		if (io_uring_wait_cqe(ring, &cqe))
			return fail(w, "wait_cqe", i, 0);
		ret = complete(w, &ops[cqe->user_data], cqe->res);
		io_uring_cqe_seen(ring, cqe);
		if (ret)
			return ret;
	}
	w->ops += SLOTS;
	return 0;
}

/* A big store and prefetch pair over the area past the slots. */
static int big_pair(struct worker *w, struct io_uring *ring)
{
	uint64_t len = BIG / 2 + rnd(&w->seed, BIG / 2);
	uint64_t roff = AREA + rnd(&w->seed, BIG - len + 1);
	int res;

	for (uint64_t b = 0; b < len; b += 4093)
		w->buf[AREA + b] = rand_r(&w->seed);
	memcpy(w->shadow + roff, w->buf + AREA, len);
	res = hyper_xfer_sync(ring, w->fd, w->h, HYPER_DIR_STORE,
			      w->buf + AREA, len, roff, 0);
	if (res != (int)len)
		return fail(w, "big store", res, len);
	memset(w->buf + AREA, 0, len);
	res = hyper_xfer_sync(ring, w->fd, w->h, HYPER_DIR_PREFETCH,
			      w->buf + AREA, len, roff, 0);
	if (res != (int)len || memcmp(w->buf + AREA, w->shadow + roff, len))
		return fail(w, "big prefetch", res, len);
	w->ops += 2;
	return 0;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct io_uring ring;
	struct iovec iov = { .iov_base = w->buf, .iov_len = AREA + BIG };
	double end = now() + w->seconds;
	int rounds = 0;

	if (hyper_ring_init(&ring, 2 * SLOTS) ||
	    io_uring_register_buffers(&ring, &iov, 1)) {
		fail(w, "ring setup", 0, 0);
		return NULL;
	}
	while (now() < end || rounds < 5) {
		if (round_of_slots(w, &ring) ||
		    (rounds % 4 == 3 && big_pair(w, &ring)))
			break;
		rounds++;
	}
	/* Finally the region itself, through mmap, against the shadow. */
	if (!w->err[0] && memcmp(w->pool, w->shadow, AREA + BIG))
		fail(w, "region differs from shadow", 0, 0);
	io_uring_queue_exit(&ring);
	return NULL;
}

static void *anon(size_t len)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static void stress(struct __test_metadata *_metadata, double seconds,
		   const char *workers, const char *chunk)
{
	struct worker w[THREADS];
	pthread_t th[THREADS];
	int fd, i;
	long ops = 0;

	ASSERT_EQ(0, hyper_module_ensure());
	ASSERT_EQ(0, hyper_sysfs_write(0, "workers", workers));
	ASSERT_EQ(0, hyper_sysfs_write(0, "chunk_size", chunk));
	fd = hyper_dev_open(0);
	ASSERT_LE(0, fd);
	for (i = 0; i < THREADS; i++) {
		uint64_t off;

		memset(&w[i], 0, sizeof(w[i]));
		w[i].fd = fd;
		w[i].id = i;
		w[i].seed = 1234 + i;
		w[i].seconds = seconds;
		ASSERT_EQ(0, hyper_alloc(fd, AREA + BIG, 0, &w[i].h, &off));
		w[i].pool = mmap(NULL, AREA + BIG, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, off);
		w[i].shadow = anon(AREA + BIG);
		w[i].buf = anon(AREA + BIG);
		w[i].plain = anon(AREA);
		ASSERT_NE(MAP_FAILED, w[i].pool);
		ASSERT_NE(MAP_FAILED, w[i].shadow);
		ASSERT_NE(MAP_FAILED, w[i].buf);
		ASSERT_NE(MAP_FAILED, w[i].plain);
	}
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, run, &w[i]));
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		EXPECT_STREQ("", w[i].err);
		ops += w[i].ops;
	}
	TH_LOG("%d threads, %ld transfers verified", THREADS, ops);
	EXPECT_EQ(0, hyper_stat(0, "inflight"));
	ASSERT_EQ(0, hyper_sysfs_write(0, "chunk_size", "1048576"));
	close(fd);
}

FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

TEST_F_TIMEOUT(slow, four_threads_default_tunables, 300)
{
	stress(_metadata, 20, "2", "1048576");
}

/* Small chunks and more workers than CPUs: many chunks per transfer. */
TEST_F_TIMEOUT(slow, four_threads_small_chunks_many_workers, 300)
{
	stress(_metadata, 15, "8", "65536");
}

TEST_HARNESS_MAIN
