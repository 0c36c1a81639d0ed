// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "report.h"

void report_header(FILE *f, const struct job *j)
{
	const struct life *lf = &j->lf;
	char peak[32], ws[32];

	hyper_plan__fmt_bytes(peak, sizeof(peak), lf->peak0);
	hyper_plan__fmt_bytes(ws, sizeof(ws), lf->max_ws);
	fprintf(f, "graph \"%s\": %zu ops, %zu tensors; profile %s%s\n",
		j->g.name, j->g.nop, j->g.nt, j->p.name,
		j->has_ref ? "; order refined" : "");
	fprintf(f, "no offload: peak %s, compute %.3f ms; largest working set %s (op \"%s\")\n",
		peak, lf->t0[lf->n] / 1e6, ws,
		j->g.op[lf->order[lf->max_ws_step]].id);
	fprintf(f, "%-9s %12s %9s %9s %11s %10s %10s %9s  %s\n", "policy",
		"timed peak", "reduction", "slowdown", "stall ms", "in GiB", "out GiB",
		"search ms", "chosen");
}

void report_row(FILE *f, const struct result *r, uint64_t peak0)
{
	char peak[32];

	if (!r->ok) {
		fprintf(f, "%-9s %12s   (no schedule meets the goal)\n",
			r->policy, "-");
		return;
	}
	hyper_plan__fmt_bytes(peak, sizeof(peak), r->sim.peak);
	fprintf(f, "%-9s %12s %8.2f%% %8.2f%% %11.3f %10.2f %10.2f %9.1f  %s\n",
		r->policy, peak, 100.0 * (1 - (double)r->sim.peak / peak0),
		100 * slowdown(&r->sim), r->sim.stall_ns / 1e6,
		r->sim.h2d_bytes / GIB, r->sim.d2h_bytes / GIB, r->ms,
		r->params);
}

/*
 * The three peaks, each in words: the rows' timed peak (the simulator's,
 * the schedule's predicted peak_device_bytes) also counts a detached
 * tensor until its store ends, as if the next prefetch took fresh bytes;
 * the peak residency counts prefetch or define to detach; the arena is
 * what libhyper allocates, and it defers a prefetch whose place a store
 * still reads, so a run never holds more than the arena.
 */
static void report_peaks(FILE *f, const struct result *r, const char *res,
			 const char *arena)
{
	char t[32];

	hyper_plan__fmt_bytes(t, sizeof(t), r->sim.peak);
	fprintf(f, "peaks     timed %s (the policy rows and the schedule's predicted peak: a detached tensor counts until its store ends); residency %s (prefetch or define to detach); arena %s (what the device holds: a prefetch waits for a place a store still reads)\n",
		t, res, arena);
}

/*
 * What the device really holds: the planned arena, the peak residency
 * plus what placement loses to holes and alignment.
 */
void report_arena(FILE *f, const struct result *r)
{
	const struct sched *s = &r->s;
	char a[32], p[32], b[32];

	hyper_plan__fmt_bytes(p, sizeof(p), s->res_peak);
	if (s->res_off) {
		hyper_plan__fmt_bytes(a, sizeof(a), s->arena);
		fprintf(f, "arena     %12s for a peak residency of %s: arena ÷ peak %.3f (offsets in the schedule)",
			a, p, s->res_peak ? (double)s->arena / s->res_peak : 0.0);
		if (s->planned_under) {
			hyper_plan__fmt_bytes(b, sizeof(b), s->planned_under);
			fprintf(f, "; planned under %s of residency so that the arena fits the budget", b);
		}
		fputc('\n', f);
		report_peaks(f, r, p, a);
		return;
	}
	if (!s->arena_over)
		return;		/* nothing resident */
	hyper_plan__fmt_bytes(a, sizeof(a), s->arena_over);
	hyper_plan__fmt_bytes(b, sizeof(b), s->budget);
	fprintf(f, "arena     %12s for a peak residency of %s: arena ÷ peak %.3f exceeds the budget %s, and no lower residency budget made it fit: the schedule carries no offsets (libhyper lays it out itself, in more than the budget)\n",
		a, p, s->res_peak ? (double)s->arena_over / s->res_peak : 0.0, b);
	report_peaks(f, r, p, a);
}

void report_bound(FILE *f, uint64_t bound, uint64_t peak0, double max_slow)
{
	char b[32];

	hyper_plan__fmt_bytes(b, sizeof(b), bound);
	fprintf(f, "%-9s %12s %8.2f%%  (no schedule of either order does better at <= %.2f%% slowdown)\n",
		"bound", b, 100.0 * (1 - (double)bound / peak0), 100 * max_slow);
}
