// SPDX-License-Identifier: GPL-2.0
/*
 * hyper-timeline --stalls: where a run's stall time went.  Each stall
 * waits for one tensor; the last transfer of that tensor that overlaps
 * it splits the stall into time the transfer sat in the copy queue
 * (issued, not yet taken by a copy worker), time it was being copied,
 * and time after the copy ended (the executor not yet seeing it done).
 * A stall with no transfer of its tensor waited for arena space or for
 * another tensor's store.  Without copy_ns (kmod, io_uring engines) the
 * queue and the copy cannot be told apart and count as copying.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "stalls.h"

struct xf {
	const char *tensor;
	int64_t issue, copy, end;
	bool has_copy;
};

static int64_t i64(json_object *o, const char *key, bool *has)
{
	json_object *v;
	bool ok = json_object_object_get_ex(o, key, &v);

	if (has)
		*has = ok;
	return ok ? json_object_get_int64(v) : 0;
}

static const char *str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ?
	       json_object_get_string(v) : "";
}

static int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static double pct(int64_t part, int64_t whole)
{
	return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

/* Queue wait of every transfer: with a worker copying another, or idle. */
static void queue_split(const struct xf *x, size_t n, int64_t *busy,
			int64_t *idle)
{
	*busy = *idle = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t w = x[i].copy - x[i].issue, b = 0;

		if (!x[i].has_copy || w <= 0)
			continue;
		for (size_t j = 0; j < n; j++)
			if (j != i && x[j].has_copy)
				b += overlap(x[i].issue, x[i].copy, x[j].copy,
					     x[j].end);
		if (b > w)
			b = w;	/* several workers: the queue still waited */
		*busy += b;
		*idle += w - b;
	}
}

/**
 * stall_report() - print where one run's stall time went
 * @f:		where to print
 * @root:	a loaded hyper-timeline
 *
 * Return: 0.
 */
int stall_report(FILE *f, json_object *root)
{
	json_object *ops = NULL, *xfa = NULL, *sta = NULL;
	int64_t queued = 0, copying = 0, after = 0, other = 0, total = 0;
	int64_t wall = 0, first = -1, qbusy, qidle;
	size_t nx, ns, nops, i, with_copy = 0;
	struct xf *x;

	json_object_object_get_ex(root, "ops", &ops);
	json_object_object_get_ex(root, "transfers", &xfa);
	json_object_object_get_ex(root, "stalls", &sta);
	nops = json_object_array_length(ops);
	nx = json_object_array_length(xfa);
	ns = json_object_array_length(sta);
	for (i = 0; i < nops; i++) {
		json_object *o = json_object_array_get_idx(ops, i);
		int64_t s = i64(o, "start_ns", NULL), e = i64(o, "end_ns", NULL);

		if (first < 0 || s < first)
			first = s;
		if (e > wall)
			wall = e;
	}
	wall -= first > 0 ? first : 0;
	x = calloc(nx + 1, sizeof(*x));
	if (!x)
		return -1;
	for (i = 0; i < nx; i++) {
		json_object *o = json_object_array_get_idx(xfa, i);

		x[i].tensor = str(o, "tensor");
		x[i].issue = i64(o, "start_ns", NULL);
		x[i].end = i64(o, "end_ns", NULL);
		x[i].copy = i64(o, "copy_ns", &x[i].has_copy);
		if (!x[i].has_copy)
			x[i].copy = x[i].issue;
		with_copy += x[i].has_copy;
	}
	for (i = 0; i < ns; i++) {
		json_object *o = json_object_array_get_idx(sta, i);
		const char *t = str(o, "tensor");
		int64_t s0 = i64(o, "start_ns", NULL), s1 = i64(o, "end_ns", NULL);
		const struct xf *m = NULL;

		total += s1 - s0;
		for (size_t j = 0; j < nx; j++)
			if (!strcmp(x[j].tensor, t) && x[j].issue <= s1 &&
			    x[j].end >= s0)
				m = &x[j];
		if (!m) {
			other += s1 - s0;
			continue;
		}
		queued += overlap(s0, s1, m->issue, m->copy);
		copying += overlap(s0, s1, m->copy, m->end);
		after += overlap(s0, s1, m->end > s0 ? m->end : s0, s1);
		/* A stall that began before its tensor was even issued. */
		other += overlap(s0, s1, s0, m->issue);
	}
	queue_split(x, nx, &qbusy, &qidle);
	fprintf(f, "# %s: %zu stalls, %.2f ms of a %.2f ms run (%.2f%%)\n",
		str(root, "name"), ns, ms(total), ms(wall), pct(total, wall));
	fprintf(f, "  queued (issued, no worker copying it yet) %9.2f ms %6.2f%%\n",
		ms(queued), pct(queued, total));
	fprintf(f, "  copying                                   %9.2f ms %6.2f%%\n",
		ms(copying), pct(copying, total));
	fprintf(f, "  after the copy ended (executor wake-up)   %9.2f ms %6.2f%%\n",
		ms(after), pct(after, total));
	fprintf(f, "  other (arena space, a store, not issued)  %9.2f ms %6.2f%%\n",
		ms(other), pct(other, total));
	if (with_copy)
		fprintf(f, "  all %zu transfers' queue wait: %.2f ms with a worker copying another, %.2f ms with none\n",
			nx, ms(qbusy), ms(qidle));
	else
		fprintf(f, "  no copy_ns in this timeline: the queue is counted as copying\n");
	free(x);
	return 0;
}
