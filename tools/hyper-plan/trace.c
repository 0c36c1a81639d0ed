// SPDX-License-Identifier: GPL-2.0
/*
 * Chrome trace events: one complete ("X") event per operator on the
 * compute thread and per transfer on its link's thread, and a counter
 * ("C") of device memory.  Timestamps are in microseconds.
 */
#include "output.h"

struct trace {
	FILE *f;
	const struct sched *s;
};

static void event(struct trace *tr, const char *what, const char *id,
		  int tid, double start, double end, double bytes)
{
	fprintf(tr->f, ",\n{\"name\":\"%s", what);
	for (; *id; id++)
		if (*id == '"' || *id == '\\')
			fprintf(tr->f, "\\%c", *id);
		else if ((unsigned char)*id >= 0x20)
			fputc(*id, tr->f);
	fprintf(tr->f, "\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f",
		tid, start / 1e3, (end - start) / 1e3);
	if (bytes > 0)
		fprintf(tr->f, ",\"args\":{\"bytes\":%.0f}", bytes);
	fputs("}", tr->f);
}

static void on_compute(void *ctx, uint32_t k, double start, double end)
{
	struct trace *tr = ctx;

	event(tr, "", tr->s->g->op[tr->s->order[k]].id, 1, start, end, 0);
}

static void on_xfer(void *ctx, uint32_t t, int store, double start,
		    double end)
{
	struct trace *tr = ctx;

	event(tr, store ? "store " : "prefetch ", tr->s->g->t[t].id,
	      store ? 3 : 2, start, end, tr->s->g->t[t].bytes);
}

static void on_mem(void *ctx, double t, uint64_t bytes)
{
	struct trace *tr = ctx;

	fprintf(tr->f, ",\n{\"name\":\"device memory\",\"ph\":\"C\",\"pid\":1,\"ts\":%.3f,\"args\":{\"GiB\":%.4f}}",
		t / 1e3, bytes / GIB);
}

int trace_json(FILE *f, const struct sched *s, const struct profile *p,
	       struct hp_err *e)
{
	static const char *const thread[] = { "compute", "pool to device",
					      "device to pool" };
	struct trace tr = { f, s };
	struct sim_hooks h = { &tr, on_compute, on_xfer, on_mem };
	struct sim_result r;
	int i, ret;

	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
	fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"hyper-plan simulation\"}}",
	      f);
	for (i = 0; i < 3; i++)
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
			i + 1, thread[i]);
	ret = simulate(s, p, &h, &r, e);
	fputs("\n]}\n", f);
	return ret;
}
