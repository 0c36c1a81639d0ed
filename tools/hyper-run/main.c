// SPDX-License-Identifier: GPL-2.0
/*
 * hyper-run: execute a transfer schedule through libhyper with synthetic
 * compute, check the contents of every tensor at every use, and report
 * stall time, bytes moved and peak residency as JSON.
 *
 * Every definition of a tensor writes a new generation of a deterministic
 * pattern; the runner follows the schedule's cache ops to know which
 * generation each copy must hold, so a transfer that is late, missing or
 * from the wrong place fails the run with the step, tensor and byte.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "hyper-run.h"
#include "pattern.h"

#define EXIT_RUN	1	/* the run failed: data or runtime error */
#define EXIT_USAGE	2	/* bad arguments or schedule */

struct runner {
	const struct run_opts *o;
	struct hyper_schedule *s;	/* what runs: the whole, or a part */
	struct hyper_schedule *whole;	/* as loaded */
	struct part part;		/* --until, --from; else the whole */
	bool *from_object;		/* pool copy from an object: not filled */
	struct hyper_region *weights, *kv;
	bool publishing;		/* --publish-weights' first pass */
	struct hyper_schedule_info info;
	struct hyper_ctx *ctx;
	struct tensor_model *m;
	void *dev;
	void **bufs;		/* an operator's inputs, for "touch" */
	uint64_t *lens;
	struct gemm_ws gemm;
	struct timeline *tl;
	uint64_t t0;		/* start of the run */
	struct run_result r;
};

static uint64_t seed_of(uint32_t t, uint32_t gen)
{
	return (uint64_t)(t + 1) << 32 | gen;
}

static const char *tensor_id(const struct runner *rn, uint32_t t)
{
	struct hyper_tensor_info ti;

	return hyper_schedule_tensor(rn->s, t, &ti) ? "?" : ti.id;
}

static uint64_t tensor_bytes(const struct runner *rn, uint32_t t)
{
	struct hyper_tensor_info ti;

	return hyper_schedule_tensor(rn->s, t, &ti) ? 0 : ti.bytes;
}

static int fail(struct runner *rn, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct runner *rn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rn->r.error, sizeof(rn->r.error), fmt, ap);
	va_end(ap);
	rn->r.ok = false;
	return -1;
}

static int lib_fail(struct runner *rn, const char *what, int err)
{
	return fail(rn, "%s: %s: %s", what, hyper_strerror(err),
		    hyper_last_error(rn->ctx));
}

/*
 * The model at the start: each tensor's first generation is 1; a pool
 * copy at home holds generation 0.  The second part of a split schedule
 * starts where the steps before it left the model, its pool copies at
 * home holding what they held at the split.
 */
static void model_start(struct runner *rn)
{
	struct hyper_tensor_info ti;

	for (uint32_t t = 0; t < rn->info.nr_tensors; t++) {
		struct tensor_model *m = &rn->m[t];

		if (!rn->part.first) {
			m->next_gen = 1;
			m->pool_gen = m->dev_gen = 0;
			continue;
		}
		*m = rn->part.model[t];
		hyper_schedule_tensor(rn->s, t, &ti);
		if (ti.home == HYPER_HOME_POOL)
			m->pool_gen = part_pool_gen(&rn->part, t);
	}
}

/*
 * Home contents: pool copies keep what stores left there across
 * iterations; one that an object gave is not written.
 */
static int fill_homes(struct runner *rn, bool first)
{
	struct hyper_tensor_info ti;

	if (first)
		model_start(rn);
	for (uint32_t t = 0; t < rn->info.nr_tensors; t++) {
		struct tensor_model *m = &rn->m[t];

		hyper_schedule_tensor(rn->s, t, &ti);
		if (ti.home == HYPER_HOME_POOL && first) {
			if (!rn->from_object[t])
				fill_pat_stride(hyper_tensor_pool_ptr(rn->ctx, t),
						ti.bytes, seed_of(t, m->pool_gen),
						rn->o->verify_stride);
		} else if (ti.home == HYPER_HOME_DEVICE) {
			model_define(m);
			fill_pat_stride(hyper_tensor_ptr(rn->ctx, t), ti.bytes,
					seed_of(t, m->dev_gen), rn->o->verify_stride);
		}
	}
	if (first && rn->o->corrupt) {
		int t = hyper_schedule_find(rn->s, rn->o->corrupt);
		unsigned char *p;

		if (t >= 0 && rn->weights && rn->from_object[t]) {
			/* --publish-weights flipped it before publishing. */
			if (rn->o->publish_weights)
				return 0;
			return fail(rn, "--inject corrupt:%s: that tensor's pool copy is the object %s, which is read-only",
				    rn->o->corrupt, rn->o->weights_object);
		}
		if (t < 0 || !(p = hyper_tensor_pool_ptr(rn->ctx, t)))
			return fail(rn, "--inject corrupt:%s: no pool copy of that tensor",
				    rn->o->corrupt);
		p[tensor_bytes(rn, t) / 2 & ~7ULL] ^= 0x40;
	}
	return 0;
}

/* The step's fp32 weight of the GEMM's k x n shape, or NULL for scratch. */
static const float *gemm_weight(struct runner *rn, const struct hyper_step_info *si)
{
	for (uint32_t j = 0; j < si->nr_uses; j++) {
		struct hyper_tensor_info ti;

		if (!hyper_schedule_tensor(rn->s, si->uses[j], &ti) &&
		    ti.kind == HYPER_KIND_WEIGHT &&
		    ti.bytes == si->gemm_k * si->gemm_n * sizeof(float))
			return rn->bufs[j];
	}
	return NULL;
}

static int run_step(struct runner *rn)
{
	struct hyper_step_info si;
	uint64_t t0, deadline, now;
	int step, ret;

	step = hyper_step_begin(rn->ctx);
	if (step < 0)
		return step == -ENODATA ? 1 : lib_fail(rn, "hyper_step_begin", step);
	t0 = hu_now_ns();
	hyper_schedule_step(rn->s, step, &si);
	model_cops(rn->m, si.before, si.nr_before);
	step += rn->part.first;	/* in messages: the whole schedule's index */

	for (uint32_t j = 0; j < si.nr_uses; j++) {
		uint32_t t = si.uses[j];
		uint64_t bytes = tensor_bytes(rn, t);
		void *p = hyper_tensor_ptr(rn->ctx, t);
		long bad;

		if (!p)
			return fail(rn, "step %d (%s): tensor \"%s\" is not resident",
				    step, si.op, tensor_id(rn, t));
		bad = check_pat_stride(p, bytes, seed_of(t, rn->m[t].dev_gen),
				       rn->o->verify_stride);
		if (bad >= 0)
			return fail(rn, "step %d (%s): tensor \"%s\" byte %ld is not generation %u: late or wrong transfer",
				    step, si.op, tensor_id(rn, t), bad, rn->m[t].dev_gen);
		rn->r.checks++;
		rn->r.bytes_checked += bytes;
		rn->bufs[j] = p;
		rn->lens[j] = bytes;
	}
	for (uint32_t j = 0; j < si.nr_defines; j++) {
		uint32_t t = si.defines[j];
		struct tensor_model *m = &rn->m[t];

		model_define(m);
		fill_pat_stride(hyper_tensor_ptr(rn->ctx, t), tensor_bytes(rn, t),
				seed_of(t, m->dev_gen), rn->o->verify_stride);
	}

	deadline = t0 + (uint64_t)(si.compute_ns * rn->o->compute_scale);
	rn->r.compute_ns += deadline - t0;
	now = hu_now_ns();
	if (rn->o->compute == COMPUTE_GEMM && si.flags & HYPER_STEP_GEMM) {
		if (gemm_run(&rn->gemm, si.gemm_m, si.gemm_n, si.gemm_k,
			     gemm_weight(rn, &si)))
			return fail(rn, "step %d (%s): out of memory for a %llux%llux%llu GEMM",
				    step, si.op, (unsigned long long)si.gemm_m,
				    (unsigned long long)si.gemm_n,
				    (unsigned long long)si.gemm_k);
	} else if (now > deadline && rn->o->compute != COMPUTE_NONE) {
		rn->r.overrun_ns += now - deadline;
	} else {
		compute(rn->o->compute, deadline, rn->bufs, rn->lens, si.nr_uses);
	}
	if (rn->tl)
		timeline_op(rn->tl, step, t0, hu_now_ns());

	ret = hyper_step_end(rn->ctx);
	if (ret)
		return lib_fail(rn, "hyper_step_end", ret);
	model_cops(rn->m, si.after, si.nr_after);
	rn->r.steps++;
	return 0;
}

/*
 * After hyper_attach(), before hyper_prepare(): the weights' pool copies
 * from their object, read-only; the KV handed over, copied from its.
 */
static int bind_objects(struct runner *rn)
{
	const struct run_opts *o = rn->o;
	char err[sizeof(rn->r.error)];

	rn->from_object = calloc(rn->info.nr_tensors ?: 1, sizeof(*rn->from_object));
	if (!rn->from_object)
		return fail(rn, "out of memory");
	if (o->weights_object && !rn->publishing &&
	    objects_bind_weights(rn->ctx, rn->s, o->weights_object,
				 rn->from_object, &rn->weights, &rn->r.weights,
				 err, sizeof(err)))
		return fail(rn, "--weights-object: %s", err);
	if (o->kv_object && !rn->publishing &&
	    objects_bind_kv(rn->ctx, rn->s, o->kv_object, rn->part.handed,
			    rn->from_object, &rn->kv, &rn->r.kv, err, sizeof(err)))
		return fail(rn, "--kv-object: %s", err);
	return 0;
}

/* What setup() made, in reverse; the report's figures stay. */
static void teardown(struct runner *rn)
{
	/* A bound object's region goes with the context (hyper_bind_object(3)). */
	if (rn->ctx) {
		hyper_drain(rn->ctx);
		hyper_close(rn->ctx);
	}
	rn->ctx = NULL;
	rn->weights = rn->kv = NULL;
	if (rn->dev)
		munmap(rn->dev, rn->r.device_bytes);
	rn->dev = NULL;
	free(rn->m);
	free(rn->bufs);
	free(rn->lens);
	free(rn->from_object);
	rn->m = NULL;
	rn->bufs = NULL;
	rn->lens = NULL;
	rn->from_object = NULL;
}

static int setup(struct runner *rn)
{
	const struct run_opts *o = rn->o;
	uint32_t max_uses = 1;
	struct iovec iov;
	int ret;

	if (o->compute_cpu >= 0) {
		cpu_set_t set;

		/* Before libhyper starts threads, which must not inherit it. */
		CPU_ZERO(&set);
		CPU_SET(o->compute_cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			return fail(rn, "--compute-cpu %d: %s", o->compute_cpu,
				    strerror(errno));
	}
	ret = hyper_open(&rn->ctx, &o->open);
	if (ret == -ENOENT && o->open.backend != HYPER_BACKEND_SHMEM)
		return fail(rn, "hyper_open: %s: %s: the hyper.ko module is not loaded; load it with \"modprobe hyper\" (after make install) or \"insmod kmod/hyper.ko\" (see Documentation/admin-guide.md), or run with -b shmem",
			    o->open.device ? o->open.device : "/dev/hyper0",
			    hyper_strerror(ret));
	if (ret)
		return fail(rn, "hyper_open: %s", hyper_strerror(ret));
	if (o->copy_set) {
		ret = hyper_set_copy_engine(rn->ctx, &o->copy);
		if (ret)
			return lib_fail(rn, "hyper_set_copy_engine", ret);
	}
	rn->r.device_bytes = o->device_bytes;
	/* Exactly what libhyper's layout of the schedule needs, if it has one. */
	if (!rn->r.device_bytes)
		rn->r.device_bytes = rn->info.arena_bytes;
	if (!rn->r.device_bytes)
		/* Room for alignment and for space held by in-flight stores. */
		rn->r.device_bytes = rn->info.peak_device_bytes +
				     rn->info.peak_device_bytes / 8 +
				     64ULL * rn->info.nr_tensors + 4096;
	rn->r.device_bytes = (rn->r.device_bytes + 4095) & ~4095ULL;
	rn->dev = mmap(NULL, rn->r.device_bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (rn->dev == MAP_FAILED) {
		rn->dev = NULL;
		return fail(rn, "device memory of %llu bytes: %s",
			    (unsigned long long)rn->r.device_bytes, strerror(errno));
	}
	/*
	 * Touch every page from user space before timing anything: on
	 * shadow-paging hypervisors the first user access of a page costs
	 * an exit, which MAP_POPULATE alone does not pay.
	 */
	memset(rn->dev, 0, rn->r.device_bytes);
	iov.iov_base = rn->dev;
	iov.iov_len = rn->r.device_bytes;
	if ((ret = hyper_register_buffers(rn->ctx, &iov, 1)))
		return lib_fail(rn, "hyper_register_buffers", ret);
	if ((ret = hyper_set_arena(rn->ctx, rn->dev, rn->r.device_bytes)))
		return lib_fail(rn, "hyper_set_arena", ret);
	if ((ret = hyper_attach(rn->ctx, rn->s)))
		return lib_fail(rn, "hyper_attach", ret);
	if (bind_objects(rn))
		return -1;
	if (o->timeline && !rn->publishing) {
		rn->tl = timeline_new(rn->s);
		if (!rn->tl)
			return fail(rn, "out of memory");
		hyper_set_event_fn(rn->ctx, timeline_event, rn->tl);
	}
	if (o->compute == COMPUTE_GEMM && !rn->publishing)
		gemm_init(&rn->gemm);
	if ((ret = hyper_prepare(rn->ctx)))
		return lib_fail(rn, "hyper_prepare", ret);

	for (uint32_t i = 0; i < rn->info.nr_steps; i++) {
		struct hyper_step_info si;

		hyper_schedule_step(rn->s, i, &si);
		if (si.nr_uses > max_uses)
			max_uses = si.nr_uses;
	}
	rn->m = calloc(rn->info.nr_tensors ?: 1, sizeof(*rn->m));
	rn->bufs = calloc(max_uses, sizeof(*rn->bufs));
	rn->lens = calloc(max_uses, sizeof(*rn->lens));
	if (!rn->m || !rn->bufs || !rn->lens)
		return fail(rn, "out of memory");
	return fill_homes(rn, true);
}

static int run(struct runner *rn)
{
	uint64_t t0;
	int ret = 0;

	t0 = rn->t0 = hu_now_ns();
	for (unsigned int it = 0; it < rn->o->iterations && !ret; it++) {
		if (it) {
			ret = hyper_rewind(rn->ctx);
			if (ret)
				return lib_fail(rn, "hyper_rewind", ret);
			if (fill_homes(rn, false))
				return -1;
		}
		while (!(ret = run_step(rn)))
			;
		if (ret < 0)
			return ret;
		ret = hyper_drain(rn->ctx);
		if (ret)
			return lib_fail(rn, "hyper_drain", ret);
	}
	rn->r.wall_ns = hu_now_ns() - t0;
	return 0;
}

static int try_help(void)
{
	fputs("Try 'hyper-run --help'.\n", stderr);
	return -1;
}

/*
 * A bad option value: one line naming the option, the value (optarg) and
 * what is accepted, then the pointer to --help.
 */
static int bad_value(const char *opt, const char *what, const char *use)
{
	fprintf(stderr, "hyper-run: %s: \"%s\" is not %s%s%s%s\n", opt, optarg,
		what, use ? " (" : "", use ? use : "", use ? ")" : "");
	return try_help();
}

/* A decimal (or 0x) integer in 0..@max, no sign, nothing after it. */
static int uint_arg(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 0);
	return errno || *end || *v > max ? -1 : 0;
}

/* --copy-cpus: "1" or "0,1", at most 64 CPUs. */
static int cpu_list(const char *s, struct run_opts *o)
{
	unsigned long v;
	char buf[16];
	size_t n;

	o->copy.nr_cpus = 0;
	while (*s) {
		n = strcspn(s, ",");
		if (!n || n >= sizeof(buf) || o->copy.nr_cpus == 64)
			return -1;
		memcpy(buf, s, n);
		buf[n] = 0;
		if (uint_arg(buf, INT_MAX, &v))
			return -1;
		o->copy_cpus[o->copy.nr_cpus++] = (int)v;
		s += n;
		if (*s && !*++s)
			return -1;
	}
	o->copy.cpus = o->copy_cpus;
	return o->copy.nr_cpus ? 0 : -1;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: hyper-run [options] SCHEDULE.json\n"
"  -b, --backend kmod|shmem|default  libhyper backend (default: kmod if /dev/hyper0 exists)\n"
"      --device PATH                 kmod device (default /dev/hyper0)\n"
"      --numa-node N                 shmem: bind the pool to NUMA node N\n"
"      --pool-bytes SIZE             shmem: pool capacity (default 64G, sparse)\n"
"  -d, --device-bytes SIZE           device arena (default: what libhyper's layout of\n"
"                                    the schedule needs, else validated peak + 1/8)\n"
"  -c, --compute spin|touch|gemm|none\n"
"                                    compute per operator (default spin); gemm runs\n"
"                                    an OpenBLAS SGEMM of each x-gemm shape on one\n"
"                                    thread, on the step's fp32 weight, and spins\n"
"                                    for the other operators\n"
"  -s, --compute-scale F             multiply every compute_ns by F (default 1)\n"
"  -n, --iterations N                run the schedule N times (default 1)\n"
"      --verify full|sample          check every word, or one per 4 KiB (default full)\n"
"      --chunk-bytes SIZE            largest transfer request\n"
"      --queue-depth N               io_uring entries\n"
"      --copy default|uring|sqpoll|worker\n"
"                                    copy engine (hyper_set_copy_engine(3); default:\n"
"                                    worker on shmem, uring on kmod)\n"
"      --copy-workers N              worker: copy threads (default 1)\n"
"      --copy-cpus LIST              worker/sqpoll: CPUs of the copy threads, e.g. 1 or 0,1\n"
"      --copy-nt SIZE                worker: non-temporal stores from SIZE (default never)\n"
"      --copy-poll                   copy threads and waits spin instead of sleeping\n"
"      --copy-no-help                worker: a wait never copies on the executor's thread\n"
"      --early-prefetch              after a late prefetch, issue later ones ahead of their\n"
"                                    step, within the budget (HYPER_OPEN_EARLY_PREFETCH)\n"
"      --compute-cpu N               pin the compute (the executor's thread) to CPU N\n"
"      --inject corrupt:TENSOR       flip a byte of TENSOR's pool copy (tests the checks)\n"
"      --inject nowait               do not wait for prefetches (tests the checks)\n"
"  -o, --output FILE                 JSON report (default stdout)\n"
"      --timeline FILE               write the run's timeline (hyper-plan --timeline draws it)\n"
"      --name NAME                   the run's name in the report and timeline\n"
"      --validate                    only load and validate the schedule, and say so\n"
"      --graph-of OTHER.json         refuse the schedule unless it was planned for the\n"
"                                    same graph as OTHER.json; warn if either cannot say\n"
"  -q, --quiet                       no summary on stderr\n"
"      --until STEP                  run only the steps before STEP (an index or an op,\n"
"                                    e.g. d1.embed), ending with every KV tensor that the\n"
"                                    steps from STEP on read stored to its pool copy\n"
"      --from STEP                   run only STEP and the steps after it, starting\n"
"                                    where the steps before left every copy\n"
"      --export-kv NAME              with --until: after the run, publish those KV\n"
"                                    tensors as the shared object NAME\n"
"      --kv-object NAME              with --from: the KV handed over, copied from the\n"
"                                    shared object NAME, not written by hyper-run\n"
"      --publish-weights NAME        publish the weights' pool copies as the shared\n"
"                                    object NAME, then run from it\n"
"      --weights-object NAME         the weights' pool copies are the shared object\n"
"                                    NAME, read-only\n"
"      --at-end CMD                  after the run, before anything is freed, run CMD\n"
"                                    with sh -c; its failure fails the run\n"
"exit status: 0 ok, 1 the run failed (data or runtime error), 2 usage or schedule error\n");
}

/* Long options without a short one. */
enum {
	OPT_UNTIL = 256, OPT_FROM, OPT_PUBLISH_WEIGHTS, OPT_WEIGHTS_OBJECT,
	OPT_EXPORT_KV, OPT_KV_OBJECT, OPT_AT_END,
};

/* Options that need or exclude each other: one line saying which. */
static int check_combination(const struct run_opts *o)
{
	const char *why = NULL;

	if (o->until && o->from)
		why = "--until and --from: give one; a node runs one part of a split schedule";
	else if (o->export_kv && !o->until)
		why = "--export-kv needs --until STEP: the KV is handed over at the end of the first part";
	else if (o->kv_object && !o->from)
		why = "--kv-object needs --from STEP: the KV handed over starts the second part";
	else if (o->publish_weights && o->weights_object)
		why = "--publish-weights and --weights-object: give one; --publish-weights runs from the object it publishes";
	else if ((o->until || o->from) && o->iterations != 1)
		why = "--iterations with --until or --from: a part of a schedule runs once";
	if (!why)
		return 0;
	fprintf(stderr, "hyper-run: %s\n", why);
	return try_help();
}

static int parse_args(int argc, char **argv, struct run_opts *o)
{
	static const struct option lo[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "device", required_argument, NULL, 'D' },
		{ "numa-node", required_argument, NULL, 'N' },
		{ "pool-bytes", required_argument, NULL, 'P' },
		{ "device-bytes", required_argument, NULL, 'd' },
		{ "compute", required_argument, NULL, 'c' },
		{ "compute-scale", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "verify", required_argument, NULL, 'V' },
		{ "chunk-bytes", required_argument, NULL, 'C' },
		{ "queue-depth", required_argument, NULL, 'Q' },
		{ "copy", required_argument, NULL, 'E' },
		{ "copy-workers", required_argument, NULL, 'W' },
		{ "copy-cpus", required_argument, NULL, 'U' },
		{ "copy-nt", required_argument, NULL, 'S' },
		{ "copy-poll", no_argument, NULL, 'L' },
		{ "copy-no-help", no_argument, NULL, 'H' },
		{ "early-prefetch", no_argument, NULL, 'Y' },
		{ "compute-cpu", required_argument, NULL, 'K' },
		{ "inject", required_argument, NULL, 'I' },
		{ "output", required_argument, NULL, 'o' },
		{ "timeline", required_argument, NULL, 'T' },
		{ "name", required_argument, NULL, 'M' },
		{ "validate", no_argument, NULL, 'A' },
		{ "graph-of", required_argument, NULL, 'G' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "publish-weights", required_argument, NULL, OPT_PUBLISH_WEIGHTS },
		{ "weights-object", required_argument, NULL, OPT_WEIGHTS_OBJECT },
		{ "export-kv", required_argument, NULL, OPT_EXPORT_KV },
		{ "kv-object", required_argument, NULL, OPT_KV_OBJECT },
		{ "at-end", required_argument, NULL, OPT_AT_END },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->compute_scale = 1.0;
	o->iterations = 1;
	o->verify_stride = 1;
	o->compute_cpu = -1;
	/* getopt_long() names an unknown option or a missing value itself. */
	while ((c = getopt_long(argc, argv, "b:d:c:s:n:o:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'b':
			if (!strcmp(optarg, "kmod"))
				o->open.backend = HYPER_BACKEND_KMOD;
			else if (!strcmp(optarg, "shmem"))
				o->open.backend = HYPER_BACKEND_SHMEM;
			else if (!strcmp(optarg, "default"))
				o->open.backend = HYPER_BACKEND_DEFAULT;
			else
				return bad_value("--backend", "a backend",
						 "use kmod, shmem or default");
			break;
		case 'D':
			o->open.device = optarg;
			break;
		case 'N':
			if (uint_arg(optarg, INT_MAX, &v))
				return bad_value("--numa-node", "a NUMA node",
						 "use e.g. 1");
			o->open.flags |= HYPER_OPEN_NUMA;
			o->open.numa_node = (int)v;
			break;
		case 'P':
			if (hu_parse_size(optarg, &o->open.pool_bytes))
				return bad_value("--pool-bytes", "a size",
						 "use e.g. 64GiB");
			break;
		case 'd':
			if (hu_parse_size(optarg, &o->device_bytes))
				return bad_value("--device-bytes", "a size",
						 "use e.g. 2GiB");
			break;
		case 'c':
			if (!strcmp(optarg, "spin"))
				o->compute = COMPUTE_SPIN;
			else if (!strcmp(optarg, "touch"))
				o->compute = COMPUTE_TOUCH;
			else if (!strcmp(optarg, "none"))
				o->compute = COMPUTE_NONE;
			else if (!strcmp(optarg, "gemm"))
				o->compute = COMPUTE_GEMM;
			else
				return bad_value("--compute", "a compute mode",
						 "use spin, touch, gemm or none");
			break;
		case 's':
			o->compute_scale = strtod(optarg, &end);
			if (end == optarg || *end || !(o->compute_scale >= 0))
				return bad_value("--compute-scale",
						 "a number of at least 0",
						 "use e.g. 0.5");
			break;
		case 'n':
			if (uint_arg(optarg, UINT_MAX, &v) || !v)
				return bad_value("--iterations",
						 "an integer in 1..4294967295",
						 NULL);
			o->iterations = (unsigned int)v;
			break;
		case 'V':
			if (!strcmp(optarg, "full"))
				o->verify_stride = 1;
			else if (!strcmp(optarg, "sample"))
				o->verify_stride = 512;
			else
				return bad_value("--verify", "a check",
						 "use full or sample");
			break;
		case 'C':
			if (hu_parse_size(optarg, &o->open.chunk_bytes))
				return bad_value("--chunk-bytes", "a size",
						 "use e.g. 1MiB");
			break;
		case 'Q':
			if (uint_arg(optarg, UINT_MAX, &v))
				return bad_value("--queue-depth",
						 "an integer in 0..4294967295",
						 NULL);
			o->open.queue_depth = (unsigned int)v;
			break;
		case 'E':
			o->copy_set = true;
			if (!strcmp(optarg, "default"))
				o->copy.engine = HYPER_COPY_DEFAULT;
			else if (!strcmp(optarg, "uring"))
				o->copy.engine = HYPER_COPY_URING;
			else if (!strcmp(optarg, "sqpoll"))
				o->copy.engine = HYPER_COPY_SQPOLL;
			else if (!strcmp(optarg, "worker"))
				o->copy.engine = HYPER_COPY_WORKER;
			else
				return bad_value("--copy", "a copy engine",
						 "use default, uring, sqpoll or worker");
			break;
		case 'W':
			o->copy_set = true;
			if (uint_arg(optarg, UINT_MAX, &v))
				return bad_value("--copy-workers",
						 "an integer in 0..4294967295",
						 NULL);
			o->copy.nr_workers = (unsigned int)v;
			break;
		case 'U':
			o->copy_set = true;
			if (cpu_list(optarg, o))
				return bad_value("--copy-cpus", "a list of CPUs",
						 "use e.g. 1 or 0,1; at most 64");
			break;
		case 'S':
			o->copy_set = true;
			if (hu_parse_size(optarg, &o->copy.nt_bytes))
				return bad_value("--copy-nt", "a size",
						 "use e.g. 256KiB");
			break;
		case 'L':
			o->copy_set = true;
			o->copy.flags |= HYPER_COPY_POLL;
			break;
		case 'H':
			o->copy_set = true;
			o->copy.flags |= HYPER_COPY_NO_HELP;
			break;
		case 'Y':
			o->open.flags |= HYPER_OPEN_EARLY_PREFETCH;
			break;
		case 'K':
			if (uint_arg(optarg, CPU_SETSIZE - 1, &v))
				return bad_value("--compute-cpu",
						 "a CPU in 0..1023", NULL);
			o->compute_cpu = (int)v;
			break;
		case 'I':
			if (!strcmp(optarg, "nowait"))
				o->open.flags |= HYPER_OPEN_TEST_NO_WAIT;
			else if (!strncmp(optarg, "corrupt:", 8) && optarg[8])
				o->corrupt = optarg + 8;
			else
				return bad_value("--inject", "an injection",
						 "use corrupt:TENSOR or nowait");
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'T':
			o->timeline = optarg;
			break;
		case 'M':
			o->name = optarg;
			break;
		case 'A':
			o->validate = true;
			break;
		case 'G':
			o->graph_of = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case OPT_UNTIL:
			o->until = optarg;
			break;
		case OPT_FROM:
			o->from = optarg;
			break;
		case OPT_PUBLISH_WEIGHTS:
			o->publish_weights = optarg;
			break;
		case OPT_WEIGHTS_OBJECT:
			o->weights_object = optarg;
			break;
		case OPT_EXPORT_KV:
			o->export_kv = optarg;
			break;
		case OPT_KV_OBJECT:
			o->kv_object = optarg;
			break;
		case OPT_AT_END:
			o->at_end = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return try_help();
		}
	}
	if (optind == argc) {
		fprintf(stderr, "hyper-run: no SCHEDULE.json given\n");
		return try_help();
	}
	if (optind < argc - 1) {
		fprintf(stderr, "hyper-run: unexpected argument \"%s\"\n",
			argv[optind + 1]);
		return try_help();
	}
	o->schedule = argv[optind];
	if (check_combination(o))
		return -1;
	/* The library wants a count; the tool's default is one worker. */
	if (o->copy.engine == HYPER_COPY_WORKER && !o->copy.nr_workers)
		o->copy.nr_workers = 1;
	return 0;
}

/*
 * --until STEP: the steps before it; --from STEP: it and the rest.  The
 * part is a schedule of its own (split.c); without either, the whole.
 */
static int split(struct runner *rn)
{
	const struct run_opts *o = rn->o;
	const char *opt = o->until ? "--until" : "--from";
	char err[sizeof(rn->r.error)];
	uint32_t at;

	if (!o->until && !o->from) {
		rn->s = hyper_schedule_get(rn->whole);
		return 0;
	}
	if (part_step(rn->whole, opt, o->until ? o->until : o->from, &at, err,
		      sizeof(err)) ||
	    part_init(&rn->part, rn->whole, at, err, sizeof(err)))
		return fail(rn, "%s", err);
	rn->part.first = o->until ? 0 : at;
	rn->part.end = o->until ? at : rn->info.nr_steps;
	if (part_schedule(&rn->part, rn->whole, &rn->s, err, sizeof(err)))
		return fail(rn, "%s %s: %s", opt, o->until ? o->until : o->from,
			    err);
	rn->r.first_step = rn->part.first;
	rn->r.end_step = rn->part.end;
	rn->r.handed = rn->part.nr_handed;
	hyper_schedule_info(rn->s, &rn->info);
	return 0;
}

/*
 * --publish-weights: a first pass that fills the pool copies of the
 * weights (as a run would), exports them as the object and lets go of
 * everything; the run then binds them, as any other node would.
 */
static int publish(struct runner *rn)
{
	char err[sizeof(rn->r.error)];
	int ret = setup(rn);

	if (!ret && objects_export(rn->ctx, rn->s, rn->o->publish_weights,
				   HYPER_KIND_WEIGHT, NULL, &rn->r.weights,
				   err, sizeof(err)))
		ret = fail(rn, "--publish-weights: %s", err);
	teardown(rn);
	return ret;
}

/*
 * After the run, while everything is still held: --export-kv, then
 * --at-end's command (which may look at what the run holds).
 */
static int finish(struct runner *rn)
{
	const struct run_opts *o = rn->o;
	char err[sizeof(rn->r.error)];
	int ret;

	if (o->export_kv &&
	    objects_export(rn->ctx, rn->s, o->export_kv, HYPER_KIND_KV,
			   rn->part.handed, &rn->r.kv, err, sizeof(err)))
		return fail(rn, "--export-kv: %s", err);
	if (!o->at_end)
		return 0;
	fflush(NULL);
	ret = system(o->at_end);
	if (ret == -1)
		return fail(rn, "--at-end: cannot run a shell: %s", strerror(errno));
	if (!WIFEXITED(ret) || WEXITSTATUS(ret))
		return fail(rn, "--at-end: \"%s\" failed (%s %d)", o->at_end,
			    WIFEXITED(ret) ? "exit status" : "signal",
			    WIFEXITED(ret) ? WEXITSTATUS(ret) : WTERMSIG(ret));
	return 0;
}

/*
 * --graph-of: was this schedule planned for OTHER's graph?  Refused when
 * both name their graph and the hashes differ; a warning when either does
 * not name it, since then nothing can tell.
 */
static bool same_graph(const struct run_opts *o,
		       const struct hyper_schedule_info *mine)
{
	struct hyper_schedule_info theirs;
	struct hyper_schedule *other;
	char err[512];
	bool same = true;

	if (hyper_schedule_load(o->graph_of, &other, err, sizeof(err))) {
		fprintf(stderr, "hyper-run: --graph-of %s\n", err);
		return false;
	}
	hyper_schedule_info(other, &theirs);
	if (!mine->graph_hash || !theirs.graph_hash) {
		fprintf(stderr, "hyper-run: warning: %s does not say which graph it was planned for (no \"graph\": {\"hash\": ...}); cannot check that it is for the graph of %s\n",
			mine->graph_hash ? o->graph_of : o->schedule,
			mine->graph_hash ? o->schedule : o->graph_of);
	} else if (strcmp(mine->graph_hash, theirs.graph_hash)) {
		fprintf(stderr, "hyper-run: %s was planned for another graph: \"%s\" (%s), not \"%s\" (%s) of %s\n",
			o->schedule, mine->graph_name ? mine->graph_name : "",
			mine->graph_hash, theirs.graph_name ? theirs.graph_name : "",
			theirs.graph_hash, o->graph_of);
		same = false;
	}
	hyper_schedule_free(other);
	return same;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "default", "kmod", "shmem" };
	struct runner rn = { 0 };
	struct run_opts o;
	char err[512];
	int ret, status;

	if (parse_args(argc, argv, &o))
		return EXIT_USAGE;
	rn.o = &o;
	rn.r.ok = true;
	ret = hyper_schedule_load(o.schedule, &rn.whole, err, sizeof(err));
	if (ret) {
		/* libhyper's message names the file already. */
		fprintf(stderr, "hyper-run: %s\n", err);
		return EXIT_USAGE;
	}
	hyper_schedule_info(rn.whole, &rn.info);
	rn.r.nr_steps = rn.r.end_step = rn.info.nr_steps;
	if (o.graph_of && !same_graph(&o, &rn.info)) {
		hyper_schedule_free(rn.whole);
		return EXIT_USAGE;
	}
	if (split(&rn)) {
		fprintf(stderr, "hyper-run: %s\n", rn.r.error);
		part_fini(&rn.part);
		hyper_schedule_free(rn.whole);
		return EXIT_USAGE;
	}
	if (o.validate) {
		printf("%s: valid: %u tensors, %u steps, peak %llu bytes, arena %llu bytes, graph %s\n",
		       o.schedule, rn.info.nr_tensors, rn.info.nr_steps,
		       (unsigned long long)rn.info.peak_device_bytes,
		       (unsigned long long)rn.info.arena_bytes,
		       rn.info.graph_hash ? rn.info.graph_hash : "not named");
		if (o.until || o.from)
			printf("%s: steps %u..%u of %u, %u KV tensors handed over at step %u\n",
			       o.schedule, rn.part.first, rn.part.end - 1,
			       rn.r.nr_steps, rn.part.nr_handed,
			       o.until ? rn.part.end : rn.part.first);
		part_fini(&rn.part);
		hyper_schedule_free(rn.s);
		hyper_schedule_free(rn.whole);
		return 0;
	}

	status = 0;
	if (o.publish_weights) {
		rn.publishing = true;
		status = publish(&rn);
		rn.publishing = false;
		o.weights_object = o.publish_weights;
	}
	if (!status)
		status = setup(&rn) || run(&rn) || finish(&rn) ? EXIT_RUN : 0;
	else
		status = EXIT_RUN;
	if (rn.ctx)
		hyper_get_stats(rn.ctx, &rn.r.st);
	rn.r.gemms = rn.gemm.gemms;
	rn.r.weight_gemms = rn.gemm.weight_gemms;
	rn.r.gemm_flops = rn.gemm.flops;
	if (rn.tl && !status &&
	    timeline_write(rn.tl, o.timeline, o.name ? o.name : o.schedule, rn.t0)) {
		fail(&rn, "%s: cannot write the timeline", o.timeline);
		status = EXIT_RUN;
	}
	if (write_report(&o, rn.s, rn.ctx ? names[hyper_backend(rn.ctx)] : "none", &rn.r))
		status = EXIT_RUN;
	if (status)
		fprintf(stderr, "hyper-run: %s\n", rn.r.error);
	else if (!o.quiet)
		fprintf(stderr, "hyper-run: %llu steps, stall %.3f ms, %.1f MiB in, %.1f MiB out, peak resident %.1f MiB, wall %.3f ms\n",
			(unsigned long long)rn.r.steps, rn.r.st.stall_ns / 1e6,
			rn.r.st.bytes_prefetched / 1048576.0,
			rn.r.st.bytes_stored / 1048576.0,
			rn.r.st.peak_resident_bytes / 1048576.0, rn.r.wall_ns / 1e6);

	teardown(&rn);
	part_fini(&rn.part);
	hyper_schedule_free(rn.s);
	hyper_schedule_free(rn.whole);
	gemm_fini(&rn.gemm);
	timeline_free(rn.tl);
	return status;
}
