// SPDX-License-Identifier: GPL-2.0
/*
 * Executor overhead per step: a schedule of operators that use and define
 * resident tensors and move nothing, run with zero compute, through
 * hyper_step_begin()/hyper_step_end() and through hyper_run().  Prints a
 * JSON object with the median over several runs (target: < 2000 ns).
 *
 * usage: bench_step [STEPS [RUNS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <hyper/hyper.h>

#include "hyper_bench.h"

static int nop(struct hyper_ctx *ctx, unsigned int step, void *arg)
{
	return 0;
}

static char *make_schedule(unsigned int steps)
{
	size_t cap = 200 + steps * 80ULL, n;
	char *j = malloc(cap);

	if (!j)
		return NULL;
	n = snprintf(j, cap, "{\"format\":\"hyper-schedule\",\"version\":1,\"tensors\":["
		     "{\"id\":\"a\",\"bytes\":4096,\"kind\":\"activation\",\"home\":\"device\"},"
		     "{\"id\":\"b\",\"bytes\":4096,\"kind\":\"activation\",\"home\":\"device\"}],"
		     "\"steps\":[");
	for (unsigned int i = 0; i < steps; i++)
		n += snprintf(j + n, cap - n, "%s{\"op\":\"s%u\",\"uses\":[\"%c\"],\"defines\":[\"%c\"]}",
			      i ? "," : "", i, i % 2 ? 'a' : 'b', i % 2 ? 'b' : 'a');
	snprintf(j + n, cap - n, "]}");
	return j;
}

int main(int argc, char **argv)
{
	unsigned int steps = argc > 1 ? atoi(argv[1]) : 100000;
	int runs = argc > 2 ? atoi(argv[2]) : 9;
	struct hyper_open_opts o = { .backend = HYPER_BACKEND_SHMEM, .pool_bytes = 1 << 20 };
	double manual[64], cb[64];
	struct hyper_schedule *s;
	struct hyper_ctx *ctx;
	struct iovec iov;
	char err[256], *json = make_schedule(steps);
	void *dev;

	if (runs > 64 || !json)
		return 2;
	if (hyper_schedule_parse(json, strlen(json), &s, err, sizeof(err))) {
		fprintf(stderr, "bench_step: %s\n", err);
		return 1;
	}
	free(json);
	dev = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	iov.iov_base = dev;
	iov.iov_len = 1 << 20;
	if (dev == MAP_FAILED || hyper_open(&ctx, &o) ||
	    hyper_register_buffers(ctx, &iov, 1) || hyper_set_arena(ctx, dev, 1 << 20) ||
	    hyper_attach(ctx, s) || hyper_prepare(ctx)) {
		fprintf(stderr, "bench_step: setup failed\n");
		return 1;
	}
	for (int r = 0; r < runs; r++) {
		uint64_t t0;

		hyper_rewind(ctx);
		t0 = bench_now();
		while (hyper_step_begin(ctx) >= 0)
			hyper_step_end(ctx);
		manual[r] = (double)(bench_now() - t0) / steps;
		hyper_rewind(ctx);
		t0 = bench_now();
		if (hyper_run(ctx, nop, NULL))
			return 1;
		cb[r] = (double)(bench_now() - t0) / steps;
	}
	printf("{\n  \"benchmark\": \"libhyper-step-overhead\",\n"
	       "  \"backend\": \"shmem\",\n  \"steps\": %u,\n  \"runs\": %d,\n"
	       "  \"ns_per_step_begin_end_median\": %.1f,\n"
	       "  \"ns_per_step_run_callback_median\": %.1f,\n"
	       "  \"target_ns\": 2000\n}\n", steps, runs, median(manual, runs),
	       median(cb, runs));
	hyper_close(ctx);
	hyper_schedule_free(s);
	return 0;
}
