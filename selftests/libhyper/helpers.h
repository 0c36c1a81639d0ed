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

/* Deterministic contents: word i of a buffer seeded s. */
static inline uint64_t pat_word(uint64_t seed, uint64_t i)
{
	uint64_t z = seed * 0x9e3779b97f4a7c15ULL + i + 1;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void fill_pat(void *p, size_t len, uint64_t seed)
{
	uint64_t *w = p;

	for (size_t i = 0; i < len / 8; i++)
		w[i] = pat_word(seed, i);
	for (size_t i = len & ~7UL; i < len; i++)
		((unsigned char *)p)[i] = (unsigned char)pat_word(seed, i);
}

/* Offset of the first wrong byte, or -1. */
static inline long check_pat(const void *p, size_t len, uint64_t seed)
{
	const uint64_t *w = p;

	for (size_t i = 0; i < len / 8; i++)
		if (w[i] != pat_word(seed, i))
			return (long)i * 8;
	for (size_t i = len & ~7UL; i < len; i++)
		if (((const unsigned char *)p)[i] != (unsigned char)pat_word(seed, i))
			return (long)i;
	return -1;
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
