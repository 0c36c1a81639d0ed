// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Chrome trace events: one complete ("X") event per operator on the
 * compute thread and per transfer on its link's thread, and a counter
 * ("C") of device memory.  Timestamps are in microseconds.
 */
#include "picture/picture.h"

struct trace {
	FILE *f;
	const struct sched *s;
};

static void put_str(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
}

void trace_begin(FILE *f)
{
	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
	/* Events follow with a leading comma: open with a harmless one. */
	fputs("{\"name\":\"hyperoffload\",\"ph\":\"M\",\"pid\":0,\"args\":{}}", f);
}

void trace_process(FILE *f, int pid, const char *name)
{
	static const char *const thread[] = { "compute", "pool to device",
					      "device to pool", "stalls" };
	int i;

	fprintf(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{\"name\":\"",
		pid);
	put_str(f, name);
	fputs("\"}}", f);
	for (i = 0; i < 4; i++)
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
			pid, i + 1, thread[i]);
}

void trace_span(FILE *f, int pid, int tid, const char *what, const char *id,
		double start, double end, double bytes)
{
	fprintf(f, ",\n{\"name\":\"%s", what);
	put_str(f, id);
	fprintf(f, "\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f",
		pid, tid, start / 1e3, (end - start) / 1e3);
	if (bytes > 0)
		fprintf(f, ",\"args\":{\"bytes\":%.0f}", bytes);
	fputs("}", f);
}

void trace_memory(FILE *f, int pid, double t, double bytes)
{
	fprintf(f, ",\n{\"name\":\"device memory\",\"ph\":\"C\",\"pid\":%d,\"ts\":%.3f,\"args\":{\"GiB\":%.4f}}",
		pid, t / 1e3, bytes / GIB);
}

void trace_end(FILE *f)
{
	fputs("\n]}\n", f);
}

static void event(struct trace *tr, const char *what, const char *id,
		  int tid, double start, double end, double bytes)
{
	trace_span(tr->f, 1, tid, what, id, start, end, bytes);
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

	trace_memory(tr->f, 1, t, bytes);
}

int trace_json(FILE *f, const struct sched *s, const struct profile *p,
	       struct hp_err *e)
{
	struct trace tr = { f, s };
	struct sim_hooks h = { .ctx = &tr, .compute = on_compute, .xfer = on_xfer,
				.mem = on_mem };
	struct hp_mem mem = { 0 };
	struct sim_result r;
	int ret;

	trace_begin(f);
	trace_process(f, 1, "hyper-plan simulation");
	ret = hyper_plan__simulate(s, p, &h, &r, &mem, e);
	trace_end(f);
	return ret;
}
