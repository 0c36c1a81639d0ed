/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared bits of the libhyper tests: schedules written with single quotes
 * (readable in C), the backend a test program runs on, and a main() that
 * takes "--backend shmem|kmod" before handing over to the kselftest
 * harness, so that one program serves natively and in the VM.
 */
#ifndef SELFTESTS_LIBHYPER_HELPERS_H
#define SELFTESTS_LIBHYPER_HELPERS_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <hyper/hyper.h>

#include "pattern.h"

/* "{'a':1}" -> "{\"a\":1}"; the caller frees. */
static inline char *sq(const char *s)
{
	char *d = strdup(s);

	for (char *p = d; p && *p; p++)
		if (*p == '\'')
			*p = '"';
	return d;
}

static inline int parse_sq(const char *s, struct hyper_schedule **sp,
			   char *err, size_t errlen)
{
	char *j = sq(s);
	int ret = hyper_schedule_parse(j, strlen(j), sp, err, errlen);

	free(j);
	return ret;
}

#define HDR	"'format':'hyper-schedule','version':1,"

static int test_backend = HYPER_BACKEND_SHMEM;

static inline void test_opts(struct hyper_open_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = test_backend;
	/* Small enough for the VM's pool window. */
	o->pool_bytes = 256ULL << 20;
}

static inline int open_test_ctx(struct hyper_ctx **ctx)
{
	struct hyper_open_opts o;

	test_opts(&o);
	return hyper_open(ctx, &o);
}

/* Device memory for tests: page-aligned, registered as one buffer. */
static inline void *dev_mem(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static inline int parse_backend_args(int argc, char **argv)
{
	const char *env = getenv("HYPER_TEST_BACKEND");
	const char *b = env;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--backend") && i + 1 < argc)
			b = argv[++i];
	if (!b || !strcmp(b, "shmem"))
		test_backend = HYPER_BACKEND_SHMEM;
	else if (!strcmp(b, "kmod"))
		test_backend = HYPER_BACKEND_KMOD;
	else {
		fprintf(stderr, "usage: %s [--backend shmem|kmod]\n", argv[0]);
		return -1;
	}
	printf("# backend: %s\n", test_backend == HYPER_BACKEND_KMOD ? "kmod" : "shmem");
	return 0;
}

#define HYPER_TEST_MAIN							\
	int main(int argc, char **argv)					\
	{								\
		if (parse_backend_args(argc, argv))			\
			return KSFT_FAIL;				\
		return test_harness_run(argc, argv);			\
	}

#endif /* SELFTESTS_LIBHYPER_HELPERS_H */
