// SPDX-License-Identifier: GPL-2.0
/*
 * hyperctl stats: the transfer counters; with --watch, what they did per
 * interval (deltas and per-second rates), one JSON array per line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hyperctl.h"
#include "util/clock.h"

static const struct hc_cmd_spec spec = {
	.usage =
	"usage: hyperctl stats [-H] [-w SECONDS [-c N]] [DEV]\n"
	"\n"
	"Show the transfer counters of each device (DEV: hyperN, N or all;\n"
	"default all) as a JSON array: bytes_prefetch, bytes_store,\n"
	"ops_prefetch, ops_store, requests, errors, inflight, the latency\n"
	"histogram's non-empty buckets and the bounds of its 50th and 99th\n"
	"percentiles.\n"
	"\n"
	"  -w, --watch SECONDS  every SECONDS (fractions allowed), print one line:\n"
	"                       a JSON array with each device's counter deltas,\n"
	"                       per-second rates and inflight\n"
	"  -c, --count N        stop after N intervals (default: until killed)\n"
	"  -H, --human          tables instead\n"
	"  -h, --help           this text\n",
	.opts = HC_OPT_HUMAN | HC_OPT_WATCH,
	.min_args = 0,
	.max_args = 1,
	.need_one = true,
};

static double now(void)
{
	return (double)hu_now_ns() / 1e9;
}

/* Sleeps until an absolute CLOCK_MONOTONIC time in seconds. */
static void sleep_until(double t)
{
	struct timespec ts = {
		.tv_sec = (time_t)t,
		.tv_nsec = (long)((t - (double)(time_t)t) * 1e9),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int print_rates(const struct hc_dev *devs, const struct hc_stats *prev,
		       int nr, double secs, bool human)
{
	struct json_object *arr;

	if (human) {
		putchar('\n');
		return hc_human_rates(stdout, devs, prev, nr, secs) ?:
		       (fflush(stdout) ? -EIO : 0);
	}
	arr = json_object_new_array();
	for (int i = 0; i < nr; i++)
		json_object_array_add(arr, hc_json_rates(&devs[i], &prev[i], secs));
	return hc_json_print(arr, false);
}

/*
 * Samples on a fixed grid (start + k * interval), so that late wake-ups do
 * not drift; each line's rates use the time that really passed.  A wake-up
 * so late (a busy machine) that the next grid point is less than 0.9 of an
 * interval away skips that point, so that no line's interval is almost
 * nothing.
 */
static int watch(struct hc_dev *devs, int nr, const struct hc_opts *o)
{
	struct hc_stats *prev = calloc((size_t)nr + 1, sizeof(*prev));
	double start = now(), last = start, t;
	long k = 0;
	int ret = 0;

	if (!prev) {
		hc_err(NULL, "%s", strerror(ENOMEM));
		return HC_EXIT_FAIL;
	}
	for (long n = 1; !o->count || n <= o->count; n++) {
		for (int i = 0; i < nr; i++)
			prev[i] = devs[i].st;
		do
			k++;
		while (start + (double)k * o->watch - last < 0.9 * o->watch);
		sleep_until(start + (double)k * o->watch);
		t = now();
		for (int i = 0; i < nr; i++) {
			const char *bad = NULL;

			ret = hc_stats_read(devs[i].id, &devs[i].st, &bad);
			if (ret) {
				hc_err(devs[i].name, "%s: %s", bad, strerror(-ret));
				goto out;
			}
		}
		ret = print_rates(devs, prev, nr, t - last, o->human);
		if (ret) {
			ret = hc_output_status(ret);
			goto out;
		}
		last = t;
	}
out:
	free(prev);
	return ret ? HC_EXIT_FAIL : HC_EXIT_OK;
}

int cmd_stats(int argc, char **argv)
{
	struct hc_devlist list;
	struct hc_dev *devs;
	struct hc_opts o;
	int ret;

	ret = hc_start(argc, argv, &spec, &o, &list);
	if (ret >= 0)
		return ret;
	if (!o.watch) {
		ret = hc_print_devs(&list, o.human, hc_json_stats, hc_human_stats);
	} else {
		ret = hc_read_all(&list, &devs);
		if (!ret) {
			ret = watch(devs, list.nr, &o);
			free(devs);
		}
	}
	hc_devs_free(&list);
	return ret;
}
