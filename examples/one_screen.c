// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libhyper in one screen: run a schedule on device memory sized from it,
 * with every tensor's first data put where the schedule says it starts,
 * and each operator checking what it reads.
 * usage: one_screen SCHEDULE.json [kmod|shmem]     (cc ... -lhyper)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <hyper/hyper.h>

static int fail(struct hyper_ctx *ctx, const char *what, int err)
{
	fprintf(stderr, "one_screen: %s: %s: %s\n", what, hyper_strerror(err),
		ctx ? hyper_last_error(ctx) : "");
	return 1;
}

int main(int argc, char **argv)
{
	struct hyper_open_opts opts = { .backend = HYPER_BACKEND_SHMEM };
	struct hyper_schedule_info info;
	struct hyper_schedule *s;
	struct hyper_ctx *ctx;
	struct hyper_stats st;
	struct iovec dev;
	char err[512];
	int step, ret;

	if (argc < 2)
		return fprintf(stderr, "usage: one_screen SCHEDULE.json [kmod|shmem]\n"), 2;
	if (argc > 2 && !strcmp(argv[2], "kmod"))
		opts.backend = HYPER_BACKEND_KMOD;
	if (hyper_schedule_load(argv[1], &s, err, sizeof(err)))
		return fprintf(stderr, "one_screen: %s\n", err), 2;
	hyper_schedule_info(s, &info);
	/* Device memory: the arena libhyper's layout of this schedule needs. */
	dev.iov_len = (info.arena_bytes + 4095) & ~4095ULL;
	dev.iov_base = mmap(NULL, dev.iov_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!info.arena_bytes || dev.iov_base == MAP_FAILED)
		return fprintf(stderr, "one_screen: no device memory\n"), 1;
	if ((ret = hyper_open(&ctx, &opts)))
		return fail(NULL, "hyper_open", ret);
	if ((ret = hyper_register_buffers(ctx, &dev, 1)) ||   /* pinned once */
	    (ret = hyper_set_arena(ctx, dev.iov_base, dev.iov_len)) ||
	    (ret = hyper_attach(ctx, s)) || (ret = hyper_prepare(ctx)))
		return fail(ctx, "setting up", ret);
	/* First data where each tensor starts: home "pool" or "device". */
	for (unsigned int t = 0; t < info.nr_tensors; t++) {
		struct hyper_tensor_info ti;
		void *p;

		hyper_schedule_tensor(s, t, &ti);
		p = ti.home == HYPER_HOME_POOL ? hyper_tensor_pool_ptr(ctx, t) :
		    ti.home == HYPER_HOME_DEVICE ? hyper_tensor_ptr(ctx, t) : NULL;
		if (p)
			memset(p, t + 1, ti.bytes);	/* the weights, say */
	}
	while ((step = hyper_step_begin(ctx)) >= 0) {
		struct hyper_step_info si;

		hyper_schedule_step(s, step, &si);
		for (unsigned int i = 0; i < si.nr_uses; i++) {	/* the operator */
			unsigned char *p = hyper_tensor_ptr(ctx, si.uses[i]);

			if (!p || *p != (unsigned char)(si.uses[i] + 1))
				return fprintf(stderr, "one_screen: step %d: bad input\n", step), 1;
		}
		for (unsigned int i = 0; i < si.nr_defines; i++) {
			struct hyper_tensor_info ti;

			hyper_schedule_tensor(s, si.defines[i], &ti);
			memset(hyper_tensor_ptr(ctx, si.defines[i]), si.defines[i] + 1, ti.bytes);
		}
		if ((ret = hyper_step_end(ctx)))
			return fail(ctx, "hyper_step_end", ret);
	}
	if (step != -ENODATA)
		return fail(ctx, "hyper_step_begin", step);
	if ((ret = hyper_drain(ctx)))		/* the last stores land */
		return fail(ctx, "hyper_drain", ret);
	hyper_get_stats(ctx, &st);
	printf("%llu steps, %llu bytes prefetched, %llu stored, stall %llu ns, peak %llu of %zu bytes\n",
	       (unsigned long long)st.steps, (unsigned long long)st.bytes_prefetched,
	       (unsigned long long)st.bytes_stored, (unsigned long long)st.stall_ns,
	       (unsigned long long)st.peak_arena_bytes, dev.iov_len);
	hyper_close(ctx);
	hyper_schedule_free(s);
	return 0;
}
