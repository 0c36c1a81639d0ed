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

#include "hyper-run.h"
#include "pattern.h"

#define EXIT_RUN	1	/* the run failed: data or runtime error */
#define EXIT_USAGE	2	/* bad arguments or schedule */

struct runner {
	const struct run_opts *o;
	struct hyper_schedule *s;
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

/* Follow cache ops: a prefetch brings the pool's generation, a store takes the device's. */
static void model_ops(struct runner *rn, const struct hyper_cop *ops, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct tensor_model *m = &rn->m[ops[i].tensor];

		if (ops[i].op == HYPER_OP_PREFETCH)
			m->dev_gen = m->pool_gen;
		else if (ops[i].op == HYPER_OP_STORE)
			m->pool_gen = m->dev_gen;
	}
}

/* Home contents: pool copies keep what stores left there across iterations. */
static int fill_homes(struct runner *rn, bool first)
{
	struct hyper_tensor_info ti;

	for (uint32_t t = 0; t < rn->info.nr_tensors; t++) {
		struct tensor_model *m = &rn->m[t];

		hyper_schedule_tensor(rn->s, t, &ti);
		if (first) {
			m->next_gen = 1;
			m->pool_gen = m->dev_gen = 0;
		}
		if (ti.home == HYPER_HOME_POOL && first) {
			fill_pat_stride(hyper_tensor_pool_ptr(rn->ctx, t), ti.bytes,
					seed_of(t, 0), rn->o->verify_stride);
		} else if (ti.home == HYPER_HOME_DEVICE) {
			m->dev_gen = m->next_gen++;
			fill_pat_stride(hyper_tensor_ptr(rn->ctx, t), ti.bytes,
					seed_of(t, m->dev_gen), rn->o->verify_stride);
		}
	}
	if (first && rn->o->corrupt) {
		int t = hyper_schedule_find(rn->s, rn->o->corrupt);
		unsigned char *p;

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
	model_ops(rn, si.before, si.nr_before);

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

		m->dev_gen = m->next_gen++;
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
	model_ops(rn, si.after, si.nr_after);
	rn->r.steps++;
	return 0;
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
	if (o->timeline) {
		rn->tl = timeline_new(rn->s);
		if (!rn->tl)
			return fail(rn, "out of memory");
		hyper_set_event_fn(rn->ctx, timeline_event, rn->tl);
	}
	if (o->compute == COMPUTE_GEMM)
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
"exit status: 0 ok, 1 the run failed (data or runtime error), 2 usage or schedule error\n");
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
	/* The library wants a count; the tool's default is one worker. */
	if (o->copy.engine == HYPER_COPY_WORKER && !o->copy.nr_workers)
		o->copy.nr_workers = 1;
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
	ret = hyper_schedule_load(o.schedule, &rn.s, err, sizeof(err));
	if (ret) {
		/* libhyper's message names the file already. */
		fprintf(stderr, "hyper-run: %s\n", err);
		return EXIT_USAGE;
	}
	hyper_schedule_info(rn.s, &rn.info);
	if (o.graph_of && !same_graph(&o, &rn.info)) {
		hyper_schedule_free(rn.s);
		return EXIT_USAGE;
	}
	if (o.validate) {
		printf("%s: valid: %u tensors, %u steps, peak %llu bytes, arena %llu bytes, graph %s\n",
		       o.schedule, rn.info.nr_tensors, rn.info.nr_steps,
		       (unsigned long long)rn.info.peak_device_bytes,
		       (unsigned long long)rn.info.arena_bytes,
		       rn.info.graph_hash ? rn.info.graph_hash : "not named");
		hyper_schedule_free(rn.s);
		return 0;
	}

	status = setup(&rn) || run(&rn) ? EXIT_RUN : 0;
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

	hyper_close(rn.ctx);
	hyper_schedule_free(rn.s);
	if (rn.dev)
		munmap(rn.dev, rn.r.device_bytes);
	free(rn.m);
	free(rn.bufs);
	free(rn.lens);
	gemm_fini(&rn.gemm);
	timeline_free(rn.tl);
	return status;
}
