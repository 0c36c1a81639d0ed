// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The shmem backend's copy worker: threads that memcpy between the mapped
 * pool and the arena, so a transfer costs what memcpy costs and runs on a
 * CPU the caller chose, not on an io-wq thread next to the operator.
 *
 * The executor (one thread per context) stages requests in a ring and
 * publishes them with one lock per batch (hx_cw_kick), like an io_uring
 * submit.  Workers post completions, stamped with the time the copy ended,
 * to a second ring; the executor reads that ring without a lock and sleeps
 * on a condition variable only when it must wait.  Both rings hold as many
 * entries as the executor ever has in flight, so neither can overflow.
 *
 * A worker that dies posts -ECANCELED for the copy it held; the last one
 * to go fails every queued copy the same way, and so does every later
 * kick, so no transfer is ever reported done that was not copied.
 */
#include <errno.h>
#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "copy-worker.h"
#include "internal.h"
#include "util/clock.h"

/*
 * Non-temporal stores are off by default: with 1 MiB they made 1-4 MiB
 * prefetches 0.4-0.6x memcpy (bench-native), since the operator's next
 * read then misses the cache; glibc's memcpy streams very large copies
 * by itself.
 */
#define HX_CW_NT_DEFAULT	UINT64_MAX
/*
 * Waking a sleeping thread on another CPU costs tens of microseconds in
 * a VM (measured: 40 us for a 4 KiB prefetch).  An idle worker spins this
 * long before it sleeps, which covers the gap between one step's
 * transfers and the next, and an idle context costs no CPU.
 */
#define HX_CW_SPIN_DEFAULT	100000ULL
/*
 * An executor waiting for copies a worker has begun spins for up to
 * twice their expected time at the rate copies have run, at most this
 * long: once asleep, a thread on a busy CPU got it back only after
 * milliseconds (make bench-feedback: 15 of a run's 23 ms of stall were
 * after the copy had ended).
 */
#define HX_CW_WAIT_SPIN_MAX	2000000ULL

struct hx_cw_job {
	void *dst;
	const void *src;
	uint64_t len;
	uint64_t ud;
	uint64_t start_ns;	/* when a worker took it: the end of its wait */
};

struct hx_cw_thread {
	struct hx_cw *cw;
	pthread_t tid;
	cpu_set_t cpus;
	bool started;
	bool dead;		/* exited before hx_cw_stop(); see hx_cw_revive() */
};

struct hx_cw {
	pthread_mutex_t lock;
	pthread_cond_t work_cv;		/* workers wait for jobs */
	pthread_cond_t done_cv;		/* the executor waits for completions */
	uint32_t mask;			/* ring entries - 1 */
	struct hx_cw_job *jobs;
	uint32_t head;			/* next job a worker takes (lock) */
	uint32_t tail;			/* jobs published (lock; atomic reads) */
	uint32_t prod;			/* jobs staged (executor only) */
	struct hx_cw_done *done;
	uint32_t dhead;			/* executor only */
	uint32_t dtail;			/* completions posted (lock; atomic reads) */
	uint32_t sleepers;		/* workers in pthread_cond_wait */
	uint32_t waiting;		/* executor in pthread_cond_wait */
	int exec_cpu;			/* where the executor last kicked or waited */
	int copy_cpu;			/* where a worker last took a job */
	uint32_t nr_alive;
	uint32_t nr_threads;
	uint64_t taken;			/* jobs taken, for the test's death */
	uint64_t helped;		/* jobs the executor copied (executor only) */
	uint64_t busy_bytes;		/* of jobs workers are copying (lock) */
	uint64_t ns_per_mib;		/* recent copies' time per MiB (lock) */
	bool stop;
	bool paused;			/* hx_cw_pause(): workers take no job */
	unsigned int flags;
	uint64_t nt_bytes;
	uint64_t spin_ns;
	uint64_t die_after;
	struct hx_cw_thread *thr;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	_mm_pause();
#endif
}

/* Large copies bypass the cache: the arena's next reader is another op. */
static void copy_nt(void *dst, const void *src, size_t len)
{
#if defined(__x86_64__)
	char *d = dst;
	const char *s = src;
	size_t head = (64 - ((uintptr_t)d & 63)) & 63;

	if (head > len)
		head = len;
	memcpy(d, s, head);
	d += head;
	s += head;
	len -= head;
	for (; len >= 64; d += 64, s += 64, len -= 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)s);
		__m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(s + 48));

		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), c);
		_mm_stream_si128((__m128i *)(d + 48), e);
	}
	/* Streaming stores are weakly ordered: fence before posting done. */
	_mm_sfence();
	memcpy(d, s, len);
#else
	memcpy(dst, src, len);
#endif
}

void hx_cw_copy(void *dst, const void *src, uint64_t len, uint64_t nt_bytes)
{
	if (len >= nt_bytes)
		copy_nt(dst, src, len);
	else
		memcpy(dst, src, len);
}

/* Called with the lock held. */
static void post(struct hx_cw *cw, const struct hx_cw_job *j, int32_t res)
{
	struct hx_cw_done *d = &cw->done[cw->dtail & cw->mask];

	d->ud = j->ud;
	d->start_ns = j->start_ns;
	d->res = res;
	d->done_ns = hu_now_ns();
	__atomic_store_n(&cw->dtail, cw->dtail + 1, __ATOMIC_RELEASE);
	if (cw->waiting)
		pthread_cond_signal(&cw->done_cv);
}

/* No worker is left: every published job fails.  Lock held. */
static void fail_queued(struct hx_cw *cw)
{
	while (cw->head != cw->tail) {
		post(cw, &cw->jobs[cw->head & cw->mask], -ECANCELED);
		__atomic_store_n(&cw->head, cw->head + 1, __ATOMIC_RELAXED);
	}
}

/* A worker goes: its job (if any) and, if it was the last, the queue fail. */
static void worker_gone(struct hx_cw *cw, const struct hx_cw_job *held)
{
	if (held)
		post(cw, held, -ECANCELED);
	if (--cw->nr_alive == 0)
		fail_queued(cw);
}

/*
 * Spin (lock released) up to @ns while *a == *b, and tell whether the
 * caller must sleep.  *@peer is the CPU of the thread that ends the wait.
 * Lock held on entry and on return.
 */
static bool spin(struct hx_cw *cw, const uint32_t *a, const uint32_t *b,
		 const int *peer, uint64_t ns)
{
	uint64_t t0;
	bool same;

	if (cw->spin_ns == UINT64_MAX)
		return true;
	pthread_mutex_unlock(&cw->lock);
	t0 = hu_now_ns();
	/*
	 * Look after every pause, read the clock every 64: a pause is about
	 * 140 cycles on recent x86, and looking only every 64 of them added
	 * 1.5 us to each transfer (bench-native, 4 KiB).
	 */
	do {
		for (int i = 0; i < 64; i++) {
			same = __atomic_load_n(a, __ATOMIC_ACQUIRE) ==
			       __atomic_load_n(b, __ATOMIC_ACQUIRE) &&
			       !__atomic_load_n(&cw->stop, __ATOMIC_RELAXED);
			if (!same)
				break;
			cpu_relax();
		}
		/*
		 * Unpinned, the executor and a worker often share a CPU: the
		 * one spinning held it from the one it waits for until the
		 * spin ended (4 KiB prefetches took 115 to 210 us).  It
		 * yields then, and only then: on a shared host a yield on a
		 * CPU of its own hands that CPU to another tenant's task.
		 */
		if (same && __atomic_load_n(peer, __ATOMIC_RELAXED) == sched_getcpu())
			sched_yield();
	} while (same && hu_now_ns() - t0 < ns);
	pthread_mutex_lock(&cw->lock);
	/* Again under the lock: a kick or post since the last look must count. */
	return *a == *b && !cw->stop;
}

/* A moving average of how long a MiB took, from copies of 64 KiB on. */
static void rate(struct hx_cw *cw, const struct hx_cw_job *j)
{
	uint64_t ns = hu_now_ns() - j->start_ns, r;

	if (j->len < 65536)
		return;
	r = ns * (1 << 20) / j->len;
	cw->ns_per_mib = cw->ns_per_mib ? (3 * cw->ns_per_mib + r) / 4 : r;
}

/* How long the executor spins for the copies workers hold.  Lock held. */
static uint64_t wait_spin(const struct hx_cw *cw)
{
	uint64_t ns = 2 * (cw->busy_bytes >> 10) * cw->ns_per_mib >> 10;

	if (ns > HX_CW_WAIT_SPIN_MAX)
		ns = HX_CW_WAIT_SPIN_MAX;
	return ns > cw->spin_ns ? ns : cw->spin_ns;
}

static void *worker(void *arg)
{
	struct hx_cw_thread *self = arg;
	struct hx_cw *cw = self->cw;
	bool poll = cw->flags & HYPER_COPY_POLL;
	struct hx_cw_job job;
	uint64_t n;

	pthread_mutex_lock(&cw->lock);
	for (;;) {
		while ((cw->head == cw->tail || cw->paused) && !cw->stop) {
			if (cw->paused) {
				cw->sleepers++;
				pthread_cond_wait(&cw->work_cv, &cw->lock);
				cw->sleepers--;
				continue;
			}
			if (poll) {
				pthread_mutex_unlock(&cw->lock);
				while (__atomic_load_n(&cw->tail, __ATOMIC_ACQUIRE) ==
				       __atomic_load_n(&cw->head, __ATOMIC_RELAXED) &&
				       !__atomic_load_n(&cw->stop, __ATOMIC_RELAXED))
					cpu_relax();
				pthread_mutex_lock(&cw->lock);
				continue;
			}
			if (spin(cw, &cw->tail, &cw->head, &cw->exec_cpu,
				 cw->spin_ns)) {
				cw->sleepers++;
				pthread_cond_wait(&cw->work_cv, &cw->lock);
				cw->sleepers--;
			}
		}
		if (cw->stop)
			break;
		job = cw->jobs[cw->head & cw->mask];
		__atomic_store_n(&cw->head, cw->head + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&cw->copy_cpu, sched_getcpu(), __ATOMIC_RELAXED);
		n = cw->taken++;
		cw->busy_bytes += job.len;
		pthread_mutex_unlock(&cw->lock);
		job.start_ns = hu_now_ns();

		if ((cw->flags & HYPER_COPY_TEST_DIE) && n == cw->die_after) {
			/* Half the bytes land, then the thread is gone. */
			hx_cw_copy(job.dst, job.src, job.len / 2, cw->nt_bytes);
			pthread_mutex_lock(&cw->lock);
			cw->busy_bytes -= job.len;
			self->dead = true;
			worker_gone(cw, &job);
			pthread_mutex_unlock(&cw->lock);
			pthread_exit(NULL);
		}
		hx_cw_copy(job.dst, job.src, job.len, cw->nt_bytes);

		pthread_mutex_lock(&cw->lock);
		cw->busy_bytes -= job.len;
		rate(cw, &job);
		post(cw, &job, (int32_t)job.len);
	}
	worker_gone(cw, NULL);
	pthread_mutex_unlock(&cw->lock);
	return NULL;
}

/* Where worker @i runs: the caller's CPU, the pool's node, or anywhere. */
static void worker_cpus(const struct hyper_copy_opts *o, int numa_node,
			uint32_t i, cpu_set_t *set)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	struct bitmask *bm;

	CPU_ZERO(set);
	if (o->nr_cpus) {
		CPU_SET(o->cpus[i % o->nr_cpus], set);
		return;
	}
	/* Copies run best next to the pool's memory, if that node has CPUs. */
	if (numa_node >= 0 && numa_available() >= 0) {
		bm = numa_allocate_cpumask();
		if (bm && !numa_node_to_cpus(numa_node, bm))
			for (long c = 0; c < n && c < CPU_SETSIZE; c++)
				if (numa_bitmask_isbitset(bm, c))
					CPU_SET(c, set);
		if (bm)
			numa_free_cpumask(bm);
		if (CPU_COUNT(set))
			return;
	}
	/* Not the caller's pinning, which threads would otherwise inherit. */
	for (long c = 0; c < n && c < CPU_SETSIZE; c++)
		CPU_SET(c, set);
}

static int spawn(struct hx_cw *cw, struct hx_cw_thread *t)
{
	pthread_attr_t attr;
	int ret;

	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(t->cpus), &t->cpus);
	pthread_mutex_lock(&cw->lock);
	ret = -pthread_create(&t->tid, &attr, worker, t);
	if (!ret) {
		t->started = true;
		t->dead = false;
		cw->nr_alive++;
	}
	pthread_mutex_unlock(&cw->lock);
	pthread_attr_destroy(&attr);
	return ret;
}

/* Workers that died are replaced (the fault injection is spent). */
int hx_cw_revive(struct hx_cw *cw)
{
	int ret;

	for (uint32_t i = 0; i < cw->nr_threads; i++) {
		struct hx_cw_thread *t = &cw->thr[i];

		if (!t->dead)
			continue;
		pthread_join(t->tid, NULL);
		t->started = false;
		cw->flags &= ~HYPER_COPY_TEST_DIE;
		ret = spawn(cw, t);
		if (ret)
			return ret;
	}
	return 0;
}

int hx_cw_start(const struct hyper_copy_opts *o, int numa_node, uint32_t depth,
		struct hx_cw **cwp)
{
	struct hx_cw *cw;
	uint32_t cap = 1;
	int ret = 0;

	while (cap < depth)
		cap <<= 1;
	cw = calloc(1, sizeof(*cw));
	if (!cw)
		return -ENOMEM;
	cw->mask = cap - 1;
	cw->exec_cpu = -1;
	cw->copy_cpu = -1;
	cw->flags = o->flags;
	cw->nt_bytes = o->nt_bytes ? o->nt_bytes : HX_CW_NT_DEFAULT;
	cw->spin_ns = o->spin_ns ? o->spin_ns : HX_CW_SPIN_DEFAULT;
	cw->die_after = o->test_die_after;
	cw->nr_threads = o->nr_workers;
	cw->jobs = calloc(cap, sizeof(*cw->jobs));
	cw->done = calloc(cap, sizeof(*cw->done));
	cw->thr = calloc(o->nr_workers, sizeof(*cw->thr));
	if (!cw->jobs || !cw->done || !cw->thr) {
		ret = -ENOMEM;
		goto out_free;
	}
	pthread_mutex_init(&cw->lock, NULL);
	pthread_cond_init(&cw->work_cv, NULL);
	pthread_cond_init(&cw->done_cv, NULL);
	for (uint32_t i = 0; i < o->nr_workers; i++) {
		struct hx_cw_thread *t = &cw->thr[i];

		t->cw = cw;
		worker_cpus(o, numa_node, i, &t->cpus);
		ret = spawn(cw, t);
		if (ret) {
			hx_cw_stop(cw);
			return ret;
		}
	}
	*cwp = cw;
	return 0;
out_free:
	free(cw->thr);
	free(cw->done);
	free(cw->jobs);
	free(cw);
	return ret;
}

void hx_cw_stop(struct hx_cw *cw)
{
	if (!cw)
		return;
	pthread_mutex_lock(&cw->lock);
	__atomic_store_n(&cw->stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&cw->work_cv);
	pthread_mutex_unlock(&cw->lock);
	for (uint32_t i = 0; i < cw->nr_threads; i++)
		if (cw->thr[i].started)
			pthread_join(cw->thr[i].tid, NULL);
	pthread_cond_destroy(&cw->done_cv);
	pthread_cond_destroy(&cw->work_cv);
	pthread_mutex_destroy(&cw->lock);
	free(cw->thr);
	free(cw->done);
	free(cw->jobs);
	free(cw);
}

void hx_cw_queue(struct hx_cw *cw, void *dst, const void *src, uint64_t len,
		 uint64_t ud)
{
	struct hx_cw_job *j = &cw->jobs[cw->prod & cw->mask];

	j->dst = dst;
	j->src = src;
	j->len = len;
	j->ud = ud;
	j->start_ns = 0;
	cw->prod++;
}

bool hx_cw_staged(const struct hx_cw *cw)
{
	return cw->prod != cw->tail;
}

void hx_cw_kick(struct hx_cw *cw)
{
	uint32_t n;

	if (cw->prod == cw->tail)
		return;
	__atomic_store_n(&cw->exec_cpu, sched_getcpu(), __ATOMIC_RELAXED);
	pthread_mutex_lock(&cw->lock);
	n = cw->prod - cw->tail;
	__atomic_store_n(&cw->tail, cw->prod, __ATOMIC_RELEASE);
	if (!cw->nr_alive)
		fail_queued(cw);
	else if (cw->sleepers)
		n > 1 ? pthread_cond_broadcast(&cw->work_cv) :
			pthread_cond_signal(&cw->work_cv);
	pthread_mutex_unlock(&cw->lock);
}

bool hx_cw_ready(const struct hx_cw *cw)
{
	return __atomic_load_n(&cw->dtail, __ATOMIC_ACQUIRE) != cw->dhead;
}

unsigned int hx_cw_reap(struct hx_cw *cw, struct hx_cw_done *out,
			unsigned int max)
{
	uint32_t tail = __atomic_load_n(&cw->dtail, __ATOMIC_ACQUIRE);
	unsigned int n = 0;

	while (cw->dhead != tail && n < max)
		out[n++] = cw->done[cw->dhead++ & cw->mask];
	return n;
}

/*
 * The executor must wait: rather than sleep until a worker gets a CPU,
 * it copies the oldest queued job itself (its own thread is idle until
 * then).  Measured on a shared host, most of a stall was a queued copy
 * no worker had started, and the copy itself a few percent of it.  Not
 * with fault injection, whose worker must be the one to take the job.
 * Lock held on entry and on return; tells whether it copied one.
 */
static bool help(struct hx_cw *cw)
{
	struct hx_cw_job job;

	if (cw->flags & (HYPER_COPY_NO_HELP | HYPER_COPY_TEST_DIE) ||
	    cw->head == cw->tail || !cw->nr_alive)
		return false;
	job = cw->jobs[cw->head & cw->mask];
	__atomic_store_n(&cw->head, cw->head + 1, __ATOMIC_RELAXED);
	cw->helped++;
	pthread_mutex_unlock(&cw->lock);
	job.start_ns = hu_now_ns();
	hx_cw_copy(job.dst, job.src, job.len, cw->nt_bytes);
	pthread_mutex_lock(&cw->lock);
	post(cw, &job, (int32_t)job.len);
	return true;
}

uint64_t hx_cw_take_helped(struct hx_cw *cw)
{
	uint64_t n = cw->helped;

	cw->helped = 0;
	return n;
}

void hx_cw_pause(struct hx_cw *cw, bool paused)
{
	pthread_mutex_lock(&cw->lock);
	cw->paused = paused;
	if (!paused)
		pthread_cond_broadcast(&cw->work_cv);
	pthread_mutex_unlock(&cw->lock);
}

void hx_cw_wait(struct hx_cw *cw)
{
	if (cw->flags & HYPER_COPY_POLL) {
		while (!hx_cw_ready(cw)) {
			/* tail is ours; head moves under the lock. */
			if (__atomic_load_n(&cw->head, __ATOMIC_RELAXED) != cw->tail &&
			    !(cw->flags & HYPER_COPY_NO_HELP)) {
				pthread_mutex_lock(&cw->lock);
				help(cw);
				pthread_mutex_unlock(&cw->lock);
				continue;
			}
			cpu_relax();
		}
		return;
	}
	pthread_mutex_lock(&cw->lock);
	while (!hx_cw_ready(cw)) {
		if (help(cw))
			continue;
		__atomic_store_n(&cw->exec_cpu, sched_getcpu(), __ATOMIC_RELAXED);
		if (!spin(cw, &cw->dtail, &cw->dhead, &cw->copy_cpu,
			  wait_spin(cw)))
			continue;
		cw->waiting++;
		pthread_cond_wait(&cw->done_cv, &cw->lock);
		cw->waiting--;
	}
	pthread_mutex_unlock(&cw->lock);
}
