// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_uapi: a seeded, randomized driver of the whole /dev/hyper0 UAPI,
 * run in the test VM.
 *
 * Worker processes each pick random operations, most of them plausible
 * (real handles, offsets and buffers) and some garbage: every ioctl,
 * single and batch URING_CMDs on SQE128 rings with plain and registered
 * buffers, mmap/munmap, FREE racing transfers from another thread, close
 * with requests in flight, children killed mid-transfer, read-only opens,
 * and sysfs tunable writes with good and bad values.  One more process
 * switches the window between device and system-ram: it asks the workers
 * to let go of everything, switches, uses the memory through libnuma,
 * switches back, and tries switches while the device is busy too.
 *
 * It counts operations and the errno classes they ended with.  It fails
 * (TAP "not ok") on data that does not round-trip through the pool, on a
 * read-only open that changed the pool, on state left behind (regions,
 * bytes, requests in flight, pinned pages), on an rmmod that fails, and
 * on a hyper resource left in /proc/iomem.  The VM test bed fails the run
 * on any BUG/WARNING/Oops in dmesg.
 *
 * On a module joined to a shared pool (node_id >= 0, Documentation/
 * supernode.md) the pool's used counts the metadata and every node's
 * chunks, so the checks read this node's share (node_used): the idle pool
 * of a mode round and the clean end.  Such a pool is never onlined:
 * every switch to system-ram must be refused (EOPNOTSUPP).  The run also
 * holds stamped regions (selftests/kmod/twonode.h) from start to end and
 * checks every word of them: another node fuzzing the same pool at once
 * must not touch them.  At the end it checks the whole pool's accounting
 * (used is the metadata plus the chunks every node holds in pool/nodes),
 * leaves the pool (its chunks go back) and unloads.  With -m it meets the
 * other nodes of the two-node test bed (selftests/vm/run-2vm.sh) at
 * mailbox barriers: before it starts (stamps held) and when every node
 * is idle, so that the whole-pool check sees no node allocating; without
 * -m the other nodes must be idle.
 *
 * usage: fuzz_uapi [-d SECONDS] [-s SEED] [-w WORKERS] [-m]
 * HYPER_FUZZ_DURATION and HYPER_FUZZ_SEED set the same from the
 * environment (make fuzz-kmod DURATION= SEED=).  A seed gives every
 * process the same sequence of operations again; the interleaving of the
 * processes is the scheduler's.
 */
#include <numa.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "hyper_uring.h"
#include "../kmod/twonode.h"

#define PAGE		4096ULL
#define BUF_SIZE	(4 * MiB)
#define MAX_REGIONS	48
#define MAX_MAPS	24
#define MAX_PENDING	32
#define MAX_WORKERS	8
#define VERIFY_SIZE	(256 * 1024)
/* Only a lost request or a wedged kernel waits this long. */
#define SETTLE_SECS	120
/* The shared pool's chunk and metadata (Documentation/supernode.md). */
#define POOL_CHUNK	(2 * MiB)
#define POOL_TABLE_OFF	16384ULL
#define POOL_MAX_NODES	32
#define NR_STAMPS	3

enum op {
	OP_ALLOC, OP_FREE, OP_QUERY, OP_INFO, OP_IOCTL_JUNK, OP_MMAP,
	OP_MUNMAP, OP_XFER, OP_BATCH, OP_CMD_JUNK, OP_VERIFY,
	OP_CLOSE_IN_FLIGHT, OP_FORK_KILL, OP_FREE_RACE, OP_SYSFS,
	OP_READ_ONLY, OP_MODE_IDLE, OP_MODE_BUSY, OP_NODE_ALLOC, NR_OPS
};

static const char *const op_names[NR_OPS] = {
	"alloc", "free", "query", "info", "ioctl-junk", "mmap", "munmap",
	"xfer", "batch", "cmd-junk", "verify", "close-in-flight",
	"fork-kill", "free-race", "sysfs", "read-only", "mode-idle",
	"mode-busy", "node-alloc",
};

static const int err_classes[] = {
	0, EINVAL, ENOENT, EFAULT, ENOMEM, EBADF, EBUSY, EAGAIN, E2BIG,
	EOVERFLOW, ENOTTY, EINTR, ECANCELED, EACCES, ENOSPC, EOPNOTSUPP,
};

#define NR_CLASSES	(sizeof(err_classes) / sizeof(err_classes[0]) + 1)

/* Shared by every process: counters and the quiesce handshake. */
struct shared {
	atomic_ullong count[NR_OPS][NR_CLASSES];
	atomic_int quiesce;		/* workers: let go of everything */
	atomic_int parked;		/* workers holding nothing */
	atomic_int stop;
	atomic_ullong data_errors;
	atomic_ullong rule_errors;
	atomic_ullong ops;
};

static struct shared *sh;
static int nr_workers = 4;
/* This node's id in a shared pool; -1 standalone. */
static int node_id = -1;
/* The two-node bed's mailbox, with -m. */
static struct hyper_mbox mbox;
static bool meet;
/* What the run itself holds throughout (the stamps): regions and bytes. */
static long long kept_regions, kept_bytes;

/* splitmix64: one stream per process, from the run's seed. */
struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static bool chance(struct rng *r, unsigned int pct)
{
	return below(r, 100) < pct;
}

static void count(enum op op, int ret)
{
	unsigned int c = NR_CLASSES - 1;

	if (ret >= 0) {
		c = 0;
	} else {
		for (unsigned int i = 1; i < NR_CLASSES - 1; i++)
			if (-ret == err_classes[i])
				c = i;
	}
	atomic_fetch_add(&sh->count[op][c], 1);
	atomic_fetch_add(&sh->ops, 1);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * This node's bytes in use: the pool's used standalone, its node_used
 * (its regions) in a shared pool, whose used counts every node's chunks.
 */
static const char *used_attr(void)
{
	return node_id >= 0 ? "node_used" : "used";
}

/*
 * Waits (bounded) until the module's accounting of device 0 is idle: no
 * region, byte or request but what the run keeps throughout.
 */
static bool settled(void)
{
	for (int i = 0; i < SETTLE_SECS * 10; i++) {
		if (hyper_sysfs_ll(0, "nr_regions") == kept_regions &&
		    hyper_sysfs_ll(0, used_attr()) == kept_bytes &&
		    !hyper_sysfs_ll(0, "stats/inflight"))
			return true;
		sleep_ms(100);
	}
	return false;
}

struct region {
	uint32_t handle;
	uint64_t size;
};

struct map {
	uint8_t *addr;
	uint64_t len;
};

struct worker {
	struct rng r;
	int fd;
	struct io_uring ring;
	uint8_t *buf;		/* plain buffer */
	uint8_t *reg;		/* registered as buffer 0 */
	struct region regions[MAX_REGIONS];
	int nr_regions;
	struct map maps[MAX_MAPS];
	int nr_maps;
	int pending;
	/* Data checks use their own open, which no random op touches. */
	int vfd;
	uint32_t vh;
	uint8_t *vbuf;
	uint64_t vround;
};

static int reap(struct worker *w, bool all)
{
	struct io_uring_cqe *cqe;
	int n = 0;

	while (w->pending) {
		int ret = all ? io_uring_wait_cqe(&w->ring, &cqe) :
				io_uring_peek_cqe(&w->ring, &cqe);

		if (ret)
			break;
		count(cqe->user_data == 2 ? OP_BATCH :
		      cqe->user_data == 3 ? OP_CMD_JUNK : OP_XFER, cqe->res);
		io_uring_cqe_seen(&w->ring, cqe);
		w->pending--;
		n++;
	}
	return n;
}

static int worker_open(struct worker *w)
{
	struct iovec iov = { w->reg, BUF_SIZE };

	w->ring.ring_fd = -1;
	w->vfd = -1;
	w->fd = hyper_dev_open(0);
	if (w->fd < 0)
		return w->fd;
	if (hyper_ring_init_all(&w->ring, 64) ||
	    io_uring_register_buffers(&w->ring, &iov, 1))
		return -EIO;
	w->vfd = hyper_dev_open(0);
	if (w->vfd < 0)
		return w->vfd;
	return hyper_alloc(w->vfd, VERIFY_SIZE, 0, &w->vh, NULL);
}

/* Let go of every region, mapping, request and file. */
static void worker_close(struct worker *w, bool wait)
{
	if (wait)
		reap(w, true);
	w->pending = 0;
	/* Not waited for: the requests still in flight go with the ring. */
	if (w->ring.ring_fd > 0)
		io_uring_queue_exit(&w->ring);
	w->ring.ring_fd = -1;
	while (w->nr_maps) {
		w->nr_maps--;
		munmap(w->maps[w->nr_maps].addr, w->maps[w->nr_maps].len);
	}
	if (w->fd >= 0)
		close(w->fd);
	if (w->vfd >= 0)
		close(w->vfd);
	w->fd = -1;
	w->vfd = -1;
	w->nr_regions = 0;
}

static struct region *pick_region(struct worker *w)
{
	return w->nr_regions ? &w->regions[below(&w->r, w->nr_regions)] : NULL;
}

static uint32_t pick_handle(struct worker *w)
{
	struct region *rg = pick_region(w);

	if (!rg || chance(&w->r, 5))
		return chance(&w->r, 50) ? below(&w->r, 200) : (uint32_t)rnd(&w->r);
	return rg->handle;
}

static void op_alloc(struct worker *w)
{
	struct hyper_alloc a = { 0 };
	int ret;

	a.size = (1 + below(&w->r, chance(&w->r, 90) ? 64 : 4096)) * PAGE;
	a.flags = chance(&w->r, 30) ? HYPER_ALLOC_HUGE_ALIGN : 0;
	if (chance(&w->r, 10)) {
		switch (below(&w->r, 6)) {
		case 0: a.size = rnd(&w->r); break;
		case 1: a.size = 1ULL << (30 + below(&w->r, 34)); break;
		case 2: a.flags = rnd(&w->r); break;
		case 3: a.reserved[below(&w->r, 2)] = rnd(&w->r) | 1; break;
		case 4: a.handle = rnd(&w->r) | 1; break;
		default: a.size += 1 + below(&w->r, PAGE - 1); break;
		}
	}
	ret = hyper_ioctl(w->fd, HYPER_IOC_ALLOC, &a);
	count(OP_ALLOC, ret);
	if (ret)
		return;
	if (w->nr_regions == MAX_REGIONS) {
		count(OP_FREE, hyper_free(w->fd, a.handle));
		return;
	}
	w->regions[w->nr_regions].handle = a.handle;
	w->regions[w->nr_regions++].size = a.size;
}

static void forget_region(struct worker *w, uint32_t handle)
{
	for (int i = 0; i < w->nr_regions; i++)
		if (w->regions[i].handle == handle) {
			w->regions[i] = w->regions[--w->nr_regions];
			return;
		}
}

static void op_free(struct worker *w)
{
	uint32_t h = pick_handle(w);
	int ret = hyper_free(w->fd, h);

	count(OP_FREE, ret);
	if (!ret)
		forget_region(w, h);
}

static void op_query(struct worker *w)
{
	struct hyper_region_info q = { .handle = pick_handle(w) };
	struct region *rg;
	int ret;

	if (chance(&w->r, 5))
		q.reserved[below(&w->r, 2)] = 1;
	ret = hyper_ioctl(w->fd, HYPER_IOC_QUERY, &q);
	count(OP_QUERY, ret);
	/* A region this process knows must be described as it was made. */
	rg = NULL;
	for (int i = 0; !ret && i < w->nr_regions; i++)
		if (w->regions[i].handle == q.handle)
			rg = &w->regions[i];
	if (rg && q.size != rg->size)
		atomic_fetch_add(&sh->rule_errors, 1);
}

static void op_info(struct worker *w)
{
	struct hyper_pool_info info;
	int ret = hyper_info(w->fd, &info);

	count(OP_INFO, ret);
}

static void op_ioctl_junk(struct worker *w)
{
	/* The ioctls, the shared objects' (0x84-0x87) too, and one past. */
	static const unsigned long nr[] = {
		0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x90,
	};
	uint8_t arg[256];
	unsigned long cmd;
	void *p = arg;

	for (unsigned int i = 0; i < sizeof(arg); i++)
		arg[i] = rnd(&w->r);
	/* Small sizes only: a random ALLOC must not take the whole pool. */
	((struct hyper_alloc *)arg)->size &= 0xffffff000ULL;
	cmd = _IOC(below(&w->r, 4), chance(&w->r, 80) ? 'h' : below(&w->r, 256),
		   nr[below(&w->r, sizeof(nr) / sizeof(nr[0]))],
		   chance(&w->r, 50) ? 8 * (1 + below(&w->r, 6)) : below(&w->r, 256));
	if (chance(&w->r, 10))
		p = chance(&w->r, 50) ? NULL : (void *)(uintptr_t)rnd(&w->r);
	count(OP_IOCTL_JUNK, hyper_ioctl(w->fd, cmd, p));
}

static void op_mmap(struct worker *w)
{
	struct region *rg = pick_region(w);
	uint64_t off, len, pgs;
	int prot = chance(&w->r, 70) ? PROT_READ | PROT_WRITE : PROT_READ;
	uint8_t *p;

	if (!rg || w->nr_maps == MAX_MAPS)
		return;
	pgs = rg->size / PAGE;
	off = below(&w->r, pgs);
	len = (1 + below(&w->r, pgs - off)) * PAGE;
	if (chance(&w->r, 10))
		len += PAGE * (1 + below(&w->r, 4));
	p = mmap(NULL, len, prot, chance(&w->r, 5) ? MAP_PRIVATE : MAP_SHARED,
		 w->fd, ((uint64_t)(chance(&w->r, 95) ? rg->handle :
				    pick_handle(w)) << 44) + off * PAGE);
	count(OP_MMAP, p == MAP_FAILED ? -errno : 0);
	if (p == MAP_FAILED)
		return;
	/* Touch it: the pool's pages are really there. */
	if (prot & PROT_WRITE)
		p[below(&w->r, len)] = rnd(&w->r);
	else
		(void)*(volatile uint8_t *)&p[below(&w->r, len)];
	w->maps[w->nr_maps].addr = p;
	w->maps[w->nr_maps++].len = len;
}

static void op_munmap(struct worker *w)
{
	int i;

	if (!w->nr_maps)
		return;
	i = below(&w->r, w->nr_maps);
	count(OP_MUNMAP, munmap(w->maps[i].addr, w->maps[i].len) ? -errno : 0);
	w->maps[i] = w->maps[--w->nr_maps];
}

/* A plausible descriptor, now and then with one field wrong. */
static void make_desc(struct worker *w, struct hyper_xfer *x, bool fixed)
{
	struct region *rg = pick_region(w);
	uint64_t size = rg ? rg->size : 64 * PAGE;
	uint64_t len = 1 + below(&w->r, chance(&w->r, 60) ? 64 * 1024 :
				 size < BUF_SIZE ? size : BUF_SIZE);
	uint8_t *base = fixed ? w->reg : w->buf;

	memset(x, 0, sizeof(*x));
	if (len > size)
		len = size;
	x->region_off = below(&w->r, size - len + 1);
	x->len = len;
	x->addr = (uintptr_t)(base + below(&w->r, BUF_SIZE - len + 1));
	x->handle = rg ? rg->handle : pick_handle(w);
	x->dir = chance(&w->r, 50) ? HYPER_DIR_PREFETCH : HYPER_DIR_STORE;
	/*
	 * A mapping of a region as the user side: the bytes must lie inside
	 * it, as for the plain buffers.  Past its end is whatever the process
	 * mapped next (its io_uring rings, say), which a prefetch would
	 * overwrite as asked.
	 */
	if (w->nr_maps && chance(&w->r, 3)) {
		struct map *m = &w->maps[below(&w->r, w->nr_maps)];

		if (x->len > m->len)
			x->len = 1 + below(&w->r, m->len);
		x->addr = (uintptr_t)(m->addr +
				      below(&w->r, m->len - x->len + 1));
	}
	if (!chance(&w->r, 8))
		return;
	switch (below(&w->r, 8)) {
	case 0: x->len = rnd(&w->r); break;
	case 1: x->region_off = rnd(&w->r); break;
	case 2: x->addr = rnd(&w->r); break;
	case 3: x->dir = rnd(&w->r); break;
	case 4: x->flags = rnd(&w->r) | 1; break;
	case 5: x->reserved0 = 1; break;
	case 6: x->handle = pick_handle(w); break;
	default: x->len = (1ULL << 30) + 1; break;
	}
}

static void submit(struct worker *w)
{
	io_uring_submit(&w->ring);
	w->pending++;
	if (w->pending >= MAX_PENDING || chance(&w->r, 50))
		reap(w, chance(&w->r, 50));
}

static void op_xfer(struct worker *w)
{
	bool fixed = chance(&w->r, 50);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
	struct hyper_xfer x;

	if (!sqe) {
		reap(w, true);
		return;
	}
	make_desc(w, &x, fixed);
	hyper_prep_xfer(sqe, w->fd, &x, fixed ? 0 : -1);
	sqe->user_data = 1;
	submit(w);
}

static void op_batch(struct worker *w)
{
	static __thread struct hyper_xfer descs[64];
	bool fixed = chance(&w->r, 50);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
	uint32_t n = 1 + below(&w->r, chance(&w->r, 80) ? 8 : 64);

	if (!sqe) {
		reap(w, true);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		make_desc(w, &descs[i], fixed);
	/* The descriptors are copied at submission: they may be reused. */
	hyper_prep_batch(sqe, w->fd, descs,
			 chance(&w->r, 5) ? (uint32_t)rnd(&w->r) % 2048 : n,
			 fixed ? 0 : -1);
	sqe->user_data = 2;
	io_uring_submit(&w->ring);
	w->pending++;
	/* Batch descriptors live in this array: wait before reusing it. */
	reap(w, true);
}

static void op_cmd_junk(struct worker *w)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
	uint8_t payload[HYPER_URING_CMD_PAYLOAD];
	uint32_t op;

	if (!sqe) {
		reap(w, true);
		return;
	}
	for (unsigned int i = 0; i < sizeof(payload); i++)
		payload[i] = chance(&w->r, 70) ? 0 : rnd(&w->r);
	op = chance(&w->r, 70) ? (chance(&w->r, 50) ? HYPER_URING_CMD_XFER :
				  HYPER_URING_CMD_BATCH) : (uint32_t)rnd(&w->r);
	/* Prefetch destinations only inside our own scratch buffer. */
	((struct hyper_xfer *)payload)->addr = chance(&w->r, 50) ?
		(uintptr_t)w->buf : rnd(&w->r) | (1ULL << 63);
	hyper_prep_cmd(sqe, w->fd, op, payload, sizeof(payload), -1);
	sqe->user_data = 3;
	submit(w);
}

/* Data must round-trip: store a pattern, read it back, compare. */
static void op_verify(struct worker *w)
{
	uint64_t len = 1 + below(&w->r, VERIFY_SIZE);
	uint64_t off = below(&w->r, VERIFY_SIZE - len + 1);
	int ret;

	/* The synchronous helpers take the next CQE: none may be pending. */
	reap(w, true);
	w->vround++;
	hyper_fill(w->vbuf, len, w->r.s ^ w->vround);
	ret = hyper_xfer_sync(&w->ring, w->vfd, w->vh, HYPER_DIR_STORE,
			      w->vbuf, len, off, -1);
	count(OP_VERIFY, ret);
	memset(w->vbuf, 0, len);
	/*
	 * Read back into vbuf, not the registered buffer: requests that
	 * op_close_in_flight() left with a closed ring may still be writing
	 * there (the kernel finishes or cancels them after the close).
	 */
	if (ret == (int)len)
		ret = hyper_xfer_sync(&w->ring, w->vfd, w->vh,
				      HYPER_DIR_PREFETCH, w->vbuf, len, off, -1);
	count(OP_VERIFY, ret);
	if (ret != (int)len ||
	    hyper_check(w->vbuf, len, w->r.s ^ w->vround) != len) {
		printf("# verify failed: pid %d round %llu off %llu len %llu res %d\n",
		       getpid(), (unsigned long long)w->vround,
		       (unsigned long long)off, (unsigned long long)len, ret);
		atomic_fetch_add(&sh->data_errors, 1);
	}
}

static void op_close_in_flight(struct worker *w)
{
	for (int i = 0; i < 8; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
		struct hyper_xfer x;

		if (!sqe)
			break;
		make_desc(w, &x, i & 1);
		hyper_prep_xfer(sqe, w->fd, &x, i & 1 ? 0 : -1);
	}
	io_uring_submit(&w->ring);
	worker_close(w, false);
	count(OP_CLOSE_IN_FLIGHT, worker_open(w));
}

/* A child that transfers without end, killed at a random moment. */
static void op_fork_kill(struct worker *w)
{
	pid_t pid;
	int status;

	pid = fork();
	if (pid == 0) {
		struct worker c = { .r = { rnd(&w->r) }, .buf = w->buf,
				    .reg = w->reg };

		if (worker_open(&c))
			_exit(1);
		for (int i = 0; i < 4; i++)
			op_alloc(&c);
		for (;;) {
			if (chance(&c.r, 50))
				op_batch(&c);
			else
				op_xfer(&c);
			if (chance(&c.r, 5))
				op_free(&c);
		}
	}
	if (pid < 0) {
		count(OP_FORK_KILL, -errno);
		return;
	}
	sleep_ms(below(&w->r, 30));
	kill(pid, SIGKILL);
	count(OP_FORK_KILL, waitpid(pid, &status, 0) == pid ? 0 : -errno);
}

struct race {
	int fd;
	uint32_t handles[MAX_REGIONS];
	int n;
	int freed;
};

static void *race_free(void *arg)
{
	struct race *rc = arg;

	for (int i = 0; i < rc->n; i++)
		rc->freed += !hyper_free(rc->fd, rc->handles[i]);
	return NULL;
}

/* Another thread frees every region while transfers on them go out. */
static void op_free_race(struct worker *w)
{
	struct race rc = { .fd = w->fd, .n = w->nr_regions };
	pthread_t th;

	for (int i = 0; i < rc.n; i++)
		rc.handles[i] = w->regions[i].handle;
	if (pthread_create(&th, NULL, race_free, &rc))
		return;
	for (int i = 0; i < 8; i++) {
		if (chance(&w->r, 50))
			op_xfer(w);
		else
			op_batch(w);
	}
	pthread_join(th, NULL);
	reap(w, true);
	count(OP_FREE_RACE, rc.freed == rc.n ? 0 : -EINVAL);
	w->nr_regions = 0;
}

static void op_sysfs(struct rng *r)
{
	static const char *const attrs[] = {
		"workers", "chunk_size", "queue_depth", "inline_bytes",
		"reset_stats",
	};
	static const char *const good[][4] = {
		{ "1", "2", "4", "64" },
		{ "65536", "262144", "1048576", "67108864" },
		{ "1", "4", "64", "256" },
		{ "0", "4096", "65536", "1048576" },
		{ "1", "y", "yes", "on" },
	};
	static const char *const bad[] = {
		"", "-1", "0x10", "010x", "4294967296", "1e3", "two", "\n",
		" 5", "99999999999999999999",
	};
	unsigned int a = below(r, 5);
	const char *v = chance(r, 70) ? good[a][below(r, 4)] :
			bad[below(r, sizeof(bad) / sizeof(bad[0]))];

	count(OP_SYSFS, hyper_sysfs_write(0, attrs[a], v));
}

/* A read-only open may look, never change the pool. */
static void op_read_only(struct worker *w)
{
	int ro = open("/dev/hyper0", O_RDONLY | O_CLOEXEC);
	struct hyper_pool_info info;
	uint32_t h;
	int ret;

	if (ro < 0) {
		count(OP_READ_ONLY, -errno);
		return;
	}
	reap(w, true);
	ret = hyper_alloc(ro, PAGE, 0, &h, NULL);
	count(OP_READ_ONLY, ret);
	if (ret != -EBADF) {
		printf("# read-only ALLOC returned %d\n", ret);
		atomic_fetch_add(&sh->rule_errors, 1);
	}
	ret = hyper_xfer_sync(&w->ring, ro, 1, HYPER_DIR_STORE, w->buf, PAGE,
			      0, -1);
	count(OP_READ_ONLY, ret);
	if (ret != -EBADF)
		atomic_fetch_add(&sh->rule_errors, 1);
	count(OP_READ_ONLY, hyper_info(ro, &info));
	close(ro);
}

static void park(struct worker *w)
{
	worker_close(w, true);
	atomic_fetch_add(&sh->parked, 1);
	while (atomic_load(&sh->quiesce) && !atomic_load(&sh->stop))
		sleep_ms(20);
	atomic_fetch_sub(&sh->parked, 1);
}

static int worker_main(uint64_t seed)
{
	struct worker w = { .r = { seed } };

	w.buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w.reg = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w.vbuf = malloc(VERIFY_SIZE);
	if (w.buf == MAP_FAILED || w.reg == MAP_FAILED || !w.vbuf)
		return 1;
	memset(w.buf, 1, BUF_SIZE);
	memset(w.reg, 2, BUF_SIZE);
	if (worker_open(&w)) {
		printf("# worker %d: open failed\n", getpid());
		return 1;
	}
	while (!atomic_load(&sh->stop)) {
		unsigned int p = below(&w.r, 1000);

		if (atomic_load(&sh->quiesce)) {
			park(&w);
			if (atomic_load(&sh->stop))
				return 0;
			if (worker_open(&w)) {
				printf("# worker %d: reopen failed\n", getpid());
				worker_close(&w, true);
				return 1;
			}
			continue;
		}
		if (p < 150)
			op_alloc(&w);
		else if (p < 230)
			op_free(&w);
		else if (p < 260)
			op_query(&w);
		else if (p < 270)
			op_info(&w);
		else if (p < 310)
			op_ioctl_junk(&w);
		else if (p < 380)
			op_mmap(&w);
		else if (p < 430)
			op_munmap(&w);
		else if (p < 650)
			op_xfer(&w);
		else if (p < 780)
			op_batch(&w);
		else if (p < 820)
			op_cmd_junk(&w);
		else if (p < 900)
			op_verify(&w);
		else if (p < 910)
			op_close_in_flight(&w);
		else if (p < 918)
			op_fork_kill(&w);
		else if (p < 935)
			op_free_race(&w);
		else if (p < 985)
			op_sysfs(&w.r);
		else
			op_read_only(&w);
	}
	worker_close(&w, true);
	return 0;
}

static int write_blocks(const char *what)
{
	char path[96], bsz[32];
	long long bs, base, size;
	int ret = 0;

	if (hyper_read_file("/sys/devices/system/memory/block_size_bytes",
			    bsz, sizeof(bsz)))
		return -ENOENT;
	bs = strtoll(bsz, NULL, 16);
	base = hyper_sysfs_ll(0, "phys_base");
	size = hyper_sysfs_ll(0, "size");
	for (long long b = base / bs; b < (base + size) / bs; b++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/memory/memory%lld/state", b);
		ret = hyper_write_file(path, what) ?: ret;
	}
	return ret;
}

/* Back to device; offlining may need a few tries while pages migrate. */
static int to_device(void)
{
	int ret = 0;

	for (int i = 0; i < 50; i++) {
		ret = hyper_sysfs_write(0, "mode", "device");
		if (!ret)
			return 0;
		sleep_ms(100);
	}
	return ret;
}

/*
 * A shared pool is never onlined, idle or busy: System RAM of this node
 * would hand out the other nodes' memory.  Goes back if it went through.
 */
static void shared_mode_refused(enum op op, int ret)
{
	if (ret == -EOPNOTSUPP)
		return;
	printf("# mode system-ram on a shared pool returned %d, not -EOPNOTSUPP\n",
	       ret);
	atomic_fetch_add(&sh->rule_errors, 1);
	if (!ret)
		count(op, to_device());
}

/* One round trip with the workers idle, using the memory in between. */
static void mode_round(struct rng *r)
{
	int node = hyper_sysfs_ll(0, "numa_node"), ret;

	atomic_store(&sh->quiesce, 1);
	for (int i = 0; i < SETTLE_SECS * 50 &&
	     atomic_load(&sh->parked) < nr_workers; i++)
		sleep_ms(20);
	if (!settled()) {
		printf("# mode round: the pool did not become idle\n");
		count(OP_MODE_IDLE, -ETIMEDOUT);
		atomic_store(&sh->quiesce, 0);
		return;
	}
	ret = hyper_sysfs_write(0, "mode", "system-ram");
	count(OP_MODE_IDLE, ret);
	if (node_id >= 0) {
		shared_mode_refused(OP_MODE_IDLE, ret);
	} else if (!ret) {
		if (chance(r, 80) && !write_blocks("online_movable") &&
		    numa_available() >= 0) {
			size_t len = (1 + below(r, 64)) * MiB;
			uint8_t *p = numa_alloc_onnode(len, node);

			if (p) {
				memset(p, 0x5a, len);
				numa_free(p, len);
			}
			count(OP_NODE_ALLOC, p ? 0 : -ENOMEM);
		}
		/* A device call in system-ram mode is refused. */
		{
			int fd = hyper_dev_open(0);

			count(OP_MODE_IDLE, hyper_alloc(fd, PAGE, 0, NULL, NULL));
			close(fd);
		}
		ret = to_device();
		count(OP_MODE_IDLE, ret);
		if (ret)
			printf("# could not go back to device mode: %d\n", ret);
	}
	atomic_store(&sh->quiesce, 0);
}

static int mode_main(uint64_t seed)
{
	struct rng r = { seed };

	while (!atomic_load(&sh->stop)) {
		sleep_ms(500 + below(&r, 3000));
		if (atomic_load(&sh->stop))
			break;
		if (chance(&r, 40)) {
			mode_round(&r);
		} else {
			/* Busy: normally refused; if it went through, go back. */
			int ret = hyper_sysfs_write(0, "mode", "system-ram");

			count(OP_MODE_BUSY, ret);
			if (node_id >= 0)
				shared_mode_refused(OP_MODE_BUSY, ret);
			else if (!ret)
				count(OP_MODE_BUSY, to_device());
		}
		op_sysfs(&r);
	}
	/* A shared pool's mode never changed: every switch was refused. */
	return node_id < 0 && to_device() ? 1 : 0;
}

static unsigned long long vmstat(const char *name)
{
	char line[128];
	unsigned long long v = 0;
	size_t n = strlen(name);
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ' ')
			v = strtoull(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

static bool pins_balanced(void)
{
	for (int i = 0; i < SETTLE_SECS * 10; i++) {
		if (vmstat("nr_foll_pin_acquired") ==
		    vmstat("nr_foll_pin_released"))
			return true;
		sleep_ms(100);
	}
	printf("# pins: acquired %llu released %llu\n",
	       vmstat("nr_foll_pin_acquired"), vmstat("nr_foll_pin_released"));
	return false;
}

static bool rmmod_works(void)
{
	int ret = 0;

	for (int i = 0; i < SETTLE_SECS * 10; i++) {
		ret = hyper_module_unload();
		if (!ret)
			return true;
		sleep_ms(100);
	}
	printf("# rmmod: %s\n", strerror(-ret));
	return false;
}

static void print_counts(void)
{
	printf("# %-16s %10s", "operation", "total");
	for (unsigned int c = 0; c < NR_CLASSES; c++)
		printf(" %9s", c == 0 ? "ok" : c == NR_CLASSES - 1 ? "other" :
		       strerrorname_np(err_classes[c]));
	printf("\n");
	for (int op = 0; op < NR_OPS; op++) {
		unsigned long long t = 0;

		for (unsigned int c = 0; c < NR_CLASSES; c++)
			t += sh->count[op][c];
		printf("# %-16s %10llu", op_names[op], t);
		for (unsigned int c = 0; c < NR_CLASSES; c++)
			printf(" %9llu", (unsigned long long)sh->count[op][c]);
		printf("\n");
	}
	printf("# %llu operations\n", (unsigned long long)sh->ops);
}

static int tap(int n, bool ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", n, what);
	return !ok;
}

/*
 * The module's node id in a shared pool, or -1 when it is standalone or
 * has no pool format; -EPERM (with the cause) when it has an id but has
 * not joined, where every ALLOC is refused.
 */
static int pool_node(void)
{
	char buf[32];
	int id;

	if (hyper_read_file(TN_NODE_ID_PARAM, buf, sizeof(buf)))
		return -1;
	id = atoi(buf);
	if (id < 0)
		return -1;
	buf[0] = 0;
	if (hyper_sysfs_read(0, "pool/state", buf, sizeof(buf)) ||
	    strcmp(buf, "joined")) {
		printf("Bail out! node_id is %d but the pool is not joined (pool/state %s): hyperctl pool join\n",
		       id, buf);
		return -EPERM;
	}
	return id;
}

/* Meets the other nodes at barrier @name (with -m); false if it failed. */
static bool barrier(const char *name)
{
	if (!meet)
		return true;
	if (!hyper_mbox_barrier(&mbox, name, tn_secs()))
		return true;
	printf("# barrier %s: the other nodes did not come\n", name);
	return false;
}

struct stamp {
	uint64_t *p;
	uint64_t size;
	uint32_t handle;
};

/* Regions of a few sizes, each word stamped with the node (twonode.h). */
static int stamps_take(int fd, struct stamp *st)
{
	static const uint64_t sizes[NR_STAMPS] = {
		4 * MiB, POOL_CHUNK + PAGE, 16 * PAGE,
	};
	uint64_t off;
	int ret;

	for (int i = 0; i < NR_STAMPS; i++) {
		st[i].size = sizes[i];
		ret = hyper_alloc(fd, sizes[i], 0, &st[i].handle, &off);
		if (ret)
			return ret;
		st[i].p = mmap(NULL, sizes[i], PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd, off);
		if (st[i].p == MAP_FAILED) {
			st[i].p = NULL;
			return -errno;
		}
		tn_fill(st[i].p, sizes[i], node_id, i);
		kept_regions++;
		kept_bytes += sizes[i];
	}
	return 0;
}

/* Checks every word of the stamps, then lets go of them. */
static bool stamps_intact(int fd, struct stamp *st)
{
	bool ok = true;

	for (int i = 0; i < NR_STAMPS; i++) {
		if (!st[i].p) {
			ok = false;
			continue;
		}
		if (tn_check(st[i].p, st[i].size, node_id, i) != st[i].size / 8) {
			tn_report(st[i].p, st[i].size, node_id, i);
			ok = false;
		}
		munmap(st[i].p, st[i].size);
		if (hyper_free(fd, st[i].handle))
			ok = false;
	}
	close(fd);
	kept_regions = 0;
	kept_bytes = 0;
	return ok;
}

/*
 * The whole pool, every node idle: used is exactly the metadata chunks
 * (ceil((16384 + 2 x chunks) / 2 MiB), supernode.md) plus the chunks
 * each node holds in the node table, whole chunks each; this node's
 * regions (none now) fit in its chunks.
 */
static bool pool_accounted(long long *mine)
{
	long long size = hyper_sysfs_ll(0, "size");
	long long used = hyper_sysfs_ll(0, "used");
	long long chunks = size / POOL_CHUNK, meta, held = 0, b = 0;
	bool whole = true;
	char st[32];

	meta = (POOL_TABLE_OFF + 2 * chunks + POOL_CHUNK - 1) / POOL_CHUNK *
	       POOL_CHUNK;
	*mine = -1;
	for (int id = 0; id < POOL_MAX_NODES; id++) {
		if (tn_pool_node(id, st, sizeof(st), &b))
			continue;
		printf("# node %d: %s, %lld bytes of chunks\n", id, st, b);
		whole &= b >= 0 && b % POOL_CHUNK == 0;
		held += b;
		if (id == node_id)
			*mine = b;
	}
	if (used != meta + held || !whole || *mine < 0 ||
	    hyper_sysfs_ll(0, "node_used") > *mine)
		printf("# pool: used %lld, metadata %lld, nodes hold %lld, this node %lld\n",
		       used, meta, held, *mine);
	return used == meta + held && whole && *mine >= 0 &&
	       hyper_sysfs_ll(0, "node_used") <= *mine;
}

/* Leaves the pool: its line says left and holds nothing; used drops. */
static bool pool_leave(long long mine)
{
	long long used = hyper_sysfs_ll(0, "used"), b = -1;
	char st[32] = "";
	int ret = hyper_write_file(HYPER_SYSFS "/hyper0/pool/leave", "1");

	if (!ret)
		ret = tn_pool_node(node_id, st, sizeof(st), &b);
	if (ret || strcmp(st, "left") || b ||
	    hyper_sysfs_ll(0, "used") > used - mine) {
		printf("# leave: %d, node %d %s holding %lld; used %lld, was %lld with %lld of this node's\n",
		       ret, node_id, st, b, hyper_sysfs_ll(0, "used"), used,
		       mine);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	const char *env_d = getenv("HYPER_FUZZ_DURATION");
	const char *env_s = getenv("HYPER_FUZZ_SEED");
	unsigned long duration = env_d && *env_d ? strtoul(env_d, NULL, 10) : 60;
	uint64_t seed = env_s && *env_s ? strtoull(env_s, NULL, 0) : 0;
	pid_t pids[MAX_WORKERS + 1];
	int opt, n = 0, fails = 0, bad_exit = 0, sfd = -1;
	struct stamp stamps[NR_STAMPS] = { 0 };
	long long mine = 0;
	bool clean, ok, met = true;

	while ((opt = getopt(argc, argv, "d:s:w:m")) != -1) {
		switch (opt) {
		case 'd': duration = strtoul(optarg, NULL, 10); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'w': nr_workers = atoi(optarg); break;
		case 'm': meet = true; break;
		default:
			fprintf(stderr, "usage: %s [-d SECONDS] [-s SEED] [-w WORKERS] [-m]\n",
				argv[0]);
			return 2;
		}
	}
	if (nr_workers < 1 || nr_workers > MAX_WORKERS)
		nr_workers = 4;
	if (!seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000000007ULL ^ ts.tv_nsec ^ getpid();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	if (hyper_module_ensure()) {
		printf("Bail out! cannot load the module\n");
		return 1;
	}
	node_id = pool_node();
	if (node_id < -1)
		return 1;
	if (meet && hyper_mbox_open(&mbox)) {
		printf("Bail out! -m: no two-node mailbox (run by selftests/vm/run-2vm.sh)\n");
		return 1;
	}
	printf("1..%d\n", node_id >= 0 ? 9 : 6);
	printf("# seed %llu (HYPER_FUZZ_SEED=%llu or make fuzz-kmod SEED=%llu repeats it), %lu s, %d workers\n",
	       (unsigned long long)seed, (unsigned long long)seed,
	       (unsigned long long)seed, duration, nr_workers);
	if (node_id >= 0)
		printf("# node %d of a shared pool: this node's share is node_used; mode switches must be refused\n",
		       node_id);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	memset(sh, 0, sizeof(*sh));
	signal(SIGPIPE, SIG_IGN);
	if (node_id >= 0) {
		int ret;

		sfd = hyper_dev_open(0);
		ret = sfd < 0 ? sfd : stamps_take(sfd, stamps);
		if (ret)
			printf("# stamped regions: %s\n", strerror(-ret));
		/* Every node holds its stamps before any node fuzzes. */
		met = barrier("fuzz-stamped");
	}

	for (int i = 0; i <= nr_workers; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(i < nr_workers ? worker_main(seed + i + 1) :
			      mode_main(seed));
	}
	sleep(duration);
	atomic_store(&sh->stop, 1);
	for (int i = 0; i <= nr_workers; i++) {
		int status;

		if (pids[i] < 0 || waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			printf("# process %d (%s) did not end well\n", i,
			       i < nr_workers ? "worker" : "mode");
			bad_exit++;
		}
	}
	print_counts();
	fails += tap(++n, met && !bad_exit && sh->ops,
		     "every fuzzing process ran and ended");
	fails += tap(++n, !sh->data_errors && !sh->rule_errors,
		     node_id >= 0 ?
		     "data round-trips; read-only opens changed nothing; mode switches refused" :
		     "data round-trips; read-only opens changed nothing");
	if (node_id >= 0)
		fails += tap(++n, sfd >= 0 && stamps_intact(sfd, stamps),
			     "this node's stamped regions kept every word while the pool was fuzzed");
	clean = settled();
	if (!clean)
		printf("# left: %lld regions, %lld bytes (%s), %lld in flight\n",
		       hyper_sysfs_ll(0, "nr_regions"), hyper_sysfs_ll(0, used_attr()),
		       used_attr(), hyper_sysfs_ll(0, "stats/inflight"));
	fails += tap(++n, clean, "no region, byte or request left behind");
	fails += tap(++n, pins_balanced(), "pinned pages balanced");
	if (node_id >= 0) {
		/* No node allocates from here to the check's end. */
		ok = barrier("fuzz-idle");
		fails += tap(++n, ok && pool_accounted(&mine),
			     "the pool's used is its metadata plus every node's chunks");
		ok = barrier("fuzz-accounted");
		fails += tap(++n, ok && pool_leave(mine),
			     "this node leaves the pool and its chunks go back");
	}
	fails += tap(++n, rmmod_works(), "rmmod works afterwards");
	fails += tap(++n, hyper_iomem_count("hyper") == 0,
		     "no hyper resource left in /proc/iomem");
	if (meet)
		hyper_mbox_close(&mbox);
	/* The module goes back for whatever the suite runs next (not joined). */
	hyper_module_load(hyper_modparams());
	return fails ? 1 : 0;
}
