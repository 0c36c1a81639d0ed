// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Hand-written SVG: no plotting dependency.  Each series is reduced to
 * the maximum of every pixel column, so peaks survive any zoom level.
 */
#include <stdlib.h>

#include "picture/picture.h"

#define W	960
#define H	540
#define ML	70	/* margins */
#define MR	180
#define MT	40
#define MB	50
#define COLS	(W - ML - MR)

static const char *const colour[] = {
	"#d62728", "#7f7f7f", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e",
};

struct recording {
	struct series *sr;
	struct hp_mem *mem;	/* failed: a point was lost */
};

static void mem_hook(void *ctx, double t, uint64_t bytes)
{
	struct recording *rec = ctx;
	struct series *sr = rec->sr;

	if (sr->n >= sr->cap) {
		size_t cap = sr->cap;

		/* both grow to the same capacity; a failure leaves sr->cap */
		if (hyper_plan__grow(rec->mem, &sr->t, &cap, sr->n, sizeof(*sr->t)))
			return;
		cap = sr->cap;
		if (hyper_plan__grow(rec->mem, &sr->bytes, &cap, sr->n,
			    sizeof(*sr->bytes)))
			return;
		sr->cap = cap;
	}
	sr->t[sr->n] = t;
	sr->bytes[sr->n++] = bytes;
}

int series_record(struct series *sr, const char *name, const struct sched *s,
		  const struct profile *p, struct hp_err *e)
{
	struct hp_mem mem = { 0 };
	struct recording rec = { sr, &mem };
	struct sim_hooks h = { .ctx = &rec, .mem = mem_hook };
	struct sim_result r;
	int ret;

	*sr = (struct series){ .name = name };
	ret = hyper_plan__simulate(s, p, &h, &r, &mem, e);
	if (!ret && mem.failed)
		ret = hyper_plan__nomem(e);
	return ret;
}

void series_free(struct series *sr)
{
	free(sr->t);
	free(sr->bytes);
	*sr = (struct series){ 0 };
}

/* Column maxima of the step function, carried across empty columns. */
static void columns(const struct series *sr, double tmax, double *col)
{
	double level = 0;
	size_t i = 0;
	int c;

	for (c = 0; c < COLS; c++) {
		double end = tmax * (c + 1) / COLS;

		col[c] = level;
		for (; i < sr->n && sr->t[i] <= end; i++) {
			level = sr->bytes[i];
			if (level > col[c])
				col[c] = level;
		}
	}
}

static void axes(FILE *f, const char *title, double tmax, double ymax)
{
	/* Small runs (the test VM's) read better in MiB. */
	double unit = ymax < 4 * GIB ? GIB / 1024 : GIB;
	const char *uname = unit == GIB ? "GiB" : "MiB";
	int i;

	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n",
		W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"15\">", ML);
	for (; *title; title++)
		if (*title == '<' || *title == '&')
			fprintf(f, "&#%d;", *title);
		else
			fputc(*title, f);
	fputs("</text>\n", f);
	for (i = 0; i <= 5; i++) {
		double y = MT + (H - MT - MB) * (1 - i / 5.0);
		double x = ML + COLS * i / 5.0;

		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			ML, ML + COLS, y, y);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.1f</text>\n",
			ML - 6, y + 4, ymax * i / 5 / unit);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.1f</text>\n",
			x, H - MB + 18, tmax * i / 5 / 1e6);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time (ms)</text>\n",
		ML + COLS / 2, H - 12);
	fprintf(f, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">device memory (%s)</text>\n",
		(H - MB + MT) / 2, (H - MB + MT) / 2, uname);
}

void plot_svg(FILE *f, const char *title, const struct series *sr,
	      size_t nsr, double bound)
{
	double tmax = 1, ymax = 1, col[COLS];
	size_t i, k;
	int c;

	for (i = 0; i < nsr; i++)
		for (k = 0; k < sr[i].n; k++) {
			tmax = sr[i].t[k] > tmax ? sr[i].t[k] : tmax;
			ymax = sr[i].bytes[k] > ymax ? sr[i].bytes[k] : ymax;
		}
	ymax *= 1.05;
	axes(f, title, tmax, ymax);
	for (i = 0; i < nsr; i++) {
		const char *col_s = colour[i % ARRAY_SIZE(colour)];

		columns(&sr[i], tmax, col);
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
			col_s);
		for (c = 0; c < COLS; c++)
			fprintf(f, "%d,%.1f ", ML + c,
				MT + (H - MT - MB) * (1 - col[c] / ymax));
		fputs("\"/>\n", f);
		fprintf(f, "<rect x=\"%d\" y=\"%zu\" width=\"14\" height=\"3\" fill=\"%s\"/><text x=\"%d\" y=\"%zu\">%s</text>\n",
			W - MR + 16, MT + 20 * i + 6, col_s, W - MR + 36,
			MT + 20 * i + 10, sr[i].name);
	}
	if (bound > 0) {
		double y = MT + (H - MT - MB) * (1 - bound / ymax);

		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"black\" stroke-dasharray=\"5,4\"/>\n",
			ML, ML + COLS, y, y);
		fprintf(f, "<text x=\"%d\" y=\"%zu\">- - lower bound</text>\n",
			W - MR + 16, MT + 20 * nsr + 10);
	}
	fputs("</svg>\n", f);
}
