// SPDX-License-Identifier: GPL-2.0
/*
 * A FAKE CUDA runtime, for tests only: libfake_cudart.so exports the few
 * libcudart functions libhyper's CUDA device and cuda_test use, with the
 * same names and ABI, so that the CUDA transport runs end to end on a
 * machine without a GPU (HYPER_CUDART=path/to/libfake_cudart.so).  It is
 * a test double, never a runtime: "device memory" is host memory.
 *
 *  - cudaMalloc: aligned host memory, remembered as device memory;
 *  - streams: a thread each, running their operations in order (copies,
 *    event records, event waits, host functions);
 *  - events: a count of records queued and of records done;
 *  - cudaHostRegister: remembers pinned ranges and counts calls; a call
 *    of 512 GiB or more fails, as on current drivers;
 *  - cudaMemcpyAsync checks what the real one would fail on here: the
 *    device side inside one cudaMalloc allocation, the host side inside
 *    pinned memory (an unpinned pool is a libhyper bug worth catching).
 *
 * Knobs, read at each call: FAKE_CUDART_DEVICES (default 1),
 * FAKE_CUDART_REGISTER_FAIL=1, FAKE_CUDART_NB_DELAY_US (copies on
 * non-blocking streams, libhyper's, sleep that long first: an ordering
 * that is missing then shows as stale bytes, every time).
 * fake_cudart_stats() reports the registration counters.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int cudaError_t;
typedef void (*cudaHostFn_t)(void *);

#define OK		0
#define EINVALID	1	/* cudaErrorInvalidValue */
#define EMEM		2	/* cudaErrorMemoryAllocation */
#define EDEVICE		101	/* cudaErrorInvalidDevice */
#define ENODEVICE	100	/* cudaErrorNoDevice */
#define ENOTREADY	600	/* cudaErrorNotReady */
#define ENOTSUPP	801	/* cudaErrorNotSupported */
#define ERESHANDLE	400	/* cudaErrorInvalidResourceHandle */

#define GiB		(1ULL << 30)

struct span {
	struct span *next;
	uintptr_t start, end;
};

struct event {
	uint64_t rec, done;
};

enum op_kind { OP_COPY, OP_RECORD, OP_WAIT, OP_HOST };

struct op {
	struct op *next;
	enum op_kind kind;
	void *dst;
	const void *src;
	size_t len;
	struct event *ev;
	uint64_t seq;
	cudaHostFn_t fn;
	void *arg;
};

struct stream {
	pthread_t tid;
	struct op *head, *tail;
	int busy;
	int stop;
	unsigned int flags;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct span *dev_mem, *pinned;
static struct stream *default_stream;
static __thread int cur_dev;
static uint64_t nr_register, nr_unregister, max_register, pinned_bytes;

struct fake_cudart_stats {
	uint64_t nr_register;
	uint64_t nr_unregister;
	uint64_t max_register;
	uint64_t pinned_bytes;
};

void fake_cudart_stats(struct fake_cudart_stats *s);
void fake_cudart_stats(struct fake_cudart_stats *s)
{
	pthread_mutex_lock(&lock);
	s->nr_register = nr_register;
	s->nr_unregister = nr_unregister;
	s->max_register = max_register;
	s->pinned_bytes = pinned_bytes;
	pthread_mutex_unlock(&lock);
}

static long knob(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : def;
}

static struct span *find(struct span *l, uintptr_t a, size_t len)
{
	for (; l; l = l->next)
		if (a >= l->start && a + len <= l->end && a + len >= a)
			return l;
	return NULL;
}

static void *worker(void *arg)
{
	struct stream *s = arg;
	struct op *o;
	long delay;

	pthread_mutex_lock(&lock);
	for (;;) {
		while (!s->head && !s->stop)
			pthread_cond_wait(&cv, &lock);
		if (!s->head)
			break;
		o = s->head;
		s->busy = 1;
		switch (o->kind) {
		case OP_WAIT:
			while (o->ev->done < o->seq)
				pthread_cond_wait(&cv, &lock);
			break;
		case OP_RECORD:
			if (o->ev->done < o->seq)
				o->ev->done = o->seq;
			break;
		case OP_COPY:
			delay = s->flags & 1 ? knob("FAKE_CUDART_NB_DELAY_US", 0) : 0;
			pthread_mutex_unlock(&lock);
			if (delay > 0)
				usleep((useconds_t)delay);
			memcpy(o->dst, o->src, o->len);
			pthread_mutex_lock(&lock);
			break;
		case OP_HOST:
			pthread_mutex_unlock(&lock);
			o->fn(o->arg);
			pthread_mutex_lock(&lock);
			break;
		}
		s->head = o->next;
		if (!s->head)
			s->tail = NULL;
		s->busy = 0;
		free(o);
		pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static struct stream *stream_new(unsigned int flags)
{
	struct stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->flags = flags;
	if (pthread_create(&s->tid, NULL, worker, s)) {
		free(s);
		return NULL;
	}
	return s;
}

/* Lock held.  NULL, cudaStreamLegacy (1), cudaStreamPerThread (2): one stream. */
static struct stream *get_stream(void *h)
{
	if ((uintptr_t)h > 2)
		return h;
	if (!default_stream)
		default_stream = stream_new(0);
	return default_stream;
}

static cudaError_t push(void *h, struct op *o)
{
	struct stream *s;

	pthread_mutex_lock(&lock);
	s = get_stream(h);
	if (!s) {
		pthread_mutex_unlock(&lock);
		free(o);
		return EMEM;
	}
	if (s->tail)
		s->tail->next = o;
	else
		s->head = o;
	s->tail = o;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&lock);
	return OK;
}

static struct op *op_new(enum op_kind kind)
{
	struct op *o = calloc(1, sizeof(*o));

	if (o)
		o->kind = kind;
	return o;
}

cudaError_t cudaGetDeviceCount(int *n)
{
	*n = (int)knob("FAKE_CUDART_DEVICES", 1);
	return *n > 0 ? OK : ENODEVICE;
}

cudaError_t cudaGetDevice(int *d)
{
	*d = cur_dev;
	return OK;
}

cudaError_t cudaSetDevice(int d)
{
	if (d < 0 || d >= knob("FAKE_CUDART_DEVICES", 1))
		return EDEVICE;
	cur_dev = d;
	return OK;
}

const char *cudaGetErrorString(cudaError_t e)
{
	switch (e) {
	case OK: return "no error";
	case EINVALID: return "invalid argument";
	case EMEM: return "out of memory";
	case ENODEVICE: return "no CUDA-capable device is detected";
	case EDEVICE: return "invalid device ordinal";
	case ENOTREADY: return "device not ready";
	case ENOTSUPP: return "operation not supported";
	case ERESHANDLE: return "invalid resource handle";
	}
	return "unrecognized error code";
}

static cudaError_t add_span(struct span **l, void *p, size_t len)
{
	struct span *s = malloc(sizeof(*s));

	if (!s)
		return EMEM;
	s->start = (uintptr_t)p;
	s->end = (uintptr_t)p + len;
	pthread_mutex_lock(&lock);
	s->next = *l;
	*l = s;
	pthread_mutex_unlock(&lock);
	return OK;
}

static cudaError_t del_span(struct span **l, void *p, uint64_t *len)
{
	struct span **pp, *s;

	pthread_mutex_lock(&lock);
	for (pp = l; (s = *pp) && s->start != (uintptr_t)p; pp = &s->next)
		;
	if (s)
		*pp = s->next;
	pthread_mutex_unlock(&lock);
	if (!s)
		return EINVALID;
	if (len)
		*len = s->end - s->start;
	free(s);
	return OK;
}

cudaError_t cudaMalloc(void **p, size_t len)
{
	if (!p || !len)
		return EINVALID;
	*p = aligned_alloc(256, (len + 255) & ~(size_t)255);
	if (!*p)
		return EMEM;
	if (add_span(&dev_mem, *p, len)) {
		free(*p);
		return EMEM;
	}
	return OK;
}

cudaError_t cudaFree(void *p)
{
	if (!p)
		return OK;
	if (del_span(&dev_mem, p, NULL))
		return EINVALID;
	free(p);
	return OK;
}

cudaError_t cudaHostRegister(void *p, size_t len, unsigned int flags)
{
	cudaError_t e;

	if (!p || !len || len >= 512 * GiB || knob("FAKE_CUDART_REGISTER_FAIL", 0))
		return knob("FAKE_CUDART_REGISTER_FAIL", 0) ? ENOTSUPP : EINVALID;
	pthread_mutex_lock(&lock);
	for (struct span *s = pinned; s; s = s->next)
		if ((uintptr_t)p < s->end && (uintptr_t)p + len > s->start) {
			pthread_mutex_unlock(&lock);
			return EINVALID;	/* already registered */
		}
	pthread_mutex_unlock(&lock);
	e = add_span(&pinned, p, len);
	if (e)
		return e;
	pthread_mutex_lock(&lock);
	nr_register++;
	pinned_bytes += len;
	if (len > max_register)
		max_register = len;
	pthread_mutex_unlock(&lock);
	return OK;
}

cudaError_t cudaHostUnregister(void *p)
{
	uint64_t len;

	if (del_span(&pinned, p, &len))
		return EINVALID;
	pthread_mutex_lock(&lock);
	nr_unregister++;
	pinned_bytes -= len;
	pthread_mutex_unlock(&lock);
	return OK;
}

cudaError_t cudaMallocHost(void **p, size_t len)
{
	cudaError_t e;

	*p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!*p)
		return EMEM;
	e = cudaHostRegister(*p, len, 0);
	if (e)
		free(*p);
	return e;
}

cudaError_t cudaFreeHost(void *p)
{
	cudaError_t e = cudaHostUnregister(p);

	if (!e)
		free(p);
	return e;
}

/* struct cudaPointerAttributes of CUDA 12 and 13. */
struct attrs {
	int type;
	int device;
	void *devicePointer;
	void *hostPointer;
	long reserved[8];
};

cudaError_t cudaPointerGetAttributes(struct attrs *a, const void *p)
{
	memset(a, 0, sizeof(*a));
	pthread_mutex_lock(&lock);
	if (find(dev_mem, (uintptr_t)p, 1)) {
		a->type = 2;
		a->devicePointer = (void *)p;
	} else if (find(pinned, (uintptr_t)p, 1)) {
		a->type = 1;
		a->hostPointer = (void *)p;
	}
	pthread_mutex_unlock(&lock);
	return OK;
}

cudaError_t cudaStreamCreateWithFlags(void **h, unsigned int flags)
{
	*h = stream_new(flags);
	return *h ? OK : EMEM;
}

cudaError_t cudaStreamCreate(void **h)
{
	return cudaStreamCreateWithFlags(h, 0);
}

/* Waits for its work (the real one returns at once and lets it finish). */
cudaError_t cudaStreamDestroy(void *h)
{
	struct stream *s = h;

	if ((uintptr_t)h <= 2)
		return ERESHANDLE;
	pthread_mutex_lock(&lock);
	s->stop = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&lock);
	pthread_join(s->tid, NULL);
	free(s);
	return OK;
}

cudaError_t cudaStreamSynchronize(void *h)
{
	struct stream *s;

	pthread_mutex_lock(&lock);
	s = get_stream(h);
	while (s && (s->head || s->busy))
		pthread_cond_wait(&cv, &lock);
	pthread_mutex_unlock(&lock);
	return OK;
}

cudaError_t cudaEventCreateWithFlags(struct event **e, unsigned int flags)
{
	*e = calloc(1, sizeof(**e));
	return *e ? OK : EMEM;
}

cudaError_t cudaEventDestroy(struct event *e)
{
	free(e);
	return OK;
}

cudaError_t cudaEventRecord(struct event *e, void *h)
{
	struct op *o = op_new(OP_RECORD);

	if (!o)
		return EMEM;
	pthread_mutex_lock(&lock);
	o->ev = e;
	o->seq = ++e->rec;
	pthread_mutex_unlock(&lock);
	return push(h, o);
}

cudaError_t cudaEventQuery(struct event *e)
{
	cudaError_t r;

	pthread_mutex_lock(&lock);
	r = e->done >= e->rec ? OK : ENOTREADY;
	pthread_mutex_unlock(&lock);
	return r;
}

cudaError_t cudaEventSynchronize(struct event *e)
{
	pthread_mutex_lock(&lock);
	while (e->done < e->rec)
		pthread_cond_wait(&cv, &lock);
	pthread_mutex_unlock(&lock);
	return OK;
}

/* The stream waits for the event's latest record at the time of the call. */
cudaError_t cudaStreamWaitEvent(void *h, struct event *e, unsigned int flags)
{
	struct op *o = op_new(OP_WAIT);

	if (!o)
		return EMEM;
	pthread_mutex_lock(&lock);
	o->ev = e;
	o->seq = e->rec;
	pthread_mutex_unlock(&lock);
	return push(h, o);
}

cudaError_t cudaLaunchHostFunc(void *h, cudaHostFn_t fn, void *arg)
{
	struct op *o = op_new(OP_HOST);

	if (!o)
		return EMEM;
	o->fn = fn;
	o->arg = arg;
	return push(h, o);
}

/* kind: 1 host to device, 2 device to host, 3 device to device. */
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t len, int kind,
			    void *h)
{
	struct span *ds = kind == 1 ? dev_mem : kind == 2 ? pinned : dev_mem;
	struct span *ss = kind == 1 ? pinned : kind == 2 ? dev_mem : dev_mem;
	struct op *o;
	int ok;

	if (kind < 1 || kind > 3)
		return EINVALID;
	pthread_mutex_lock(&lock);
	ok = find(ds, (uintptr_t)dst, len) && find(ss, (uintptr_t)src, len);
	pthread_mutex_unlock(&lock);
	if (!ok)
		return EINVALID;
	o = op_new(OP_COPY);
	if (!o)
		return EMEM;
	o->dst = dst;
	o->src = src;
	o->len = len;
	return push(h, o);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t len, int kind)
{
	cudaError_t e = cudaMemcpyAsync(dst, src, len, kind, NULL);

	return e ? e : cudaStreamSynchronize(NULL);
}
