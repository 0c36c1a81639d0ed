// SPDX-License-Identifier: GPL-2.0
/*
 * A text table: columns as wide as their widest cell, two spaces apart.
 * A header that starts with '>' is printed without it, right-aligned
 * (for numbers).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hyperctl.h"

struct hc_table {
	int ncols, nrows, cap;
	const char *const *headers;
	char **cells;			/* nrows * ncols, row-major */
};

struct hc_table *hc_table_new(int ncols, const char *const *headers)
{
	struct hc_table *t = calloc(1, sizeof(*t));

	if (t) {
		t->ncols = ncols;
		t->headers = headers;
	}
	return t;
}

int hc_table_add(struct hc_table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		int cap = t->cap ? t->cap * 2 : 8;
		char **c = realloc(t->cells, sizeof(*c) * (size_t)(cap * t->ncols));

		if (!c)
			return -ENOMEM;
		t->cells = c;
		t->cap = cap;
	}
	for (int i = 0; i < t->ncols; i++) {
		char *s = strdup(cells[i] ? cells[i] : "-");

		if (!s) {
			while (i--)
				free(t->cells[t->nrows * t->ncols + i]);
			return -ENOMEM;
		}
		t->cells[t->nrows * t->ncols + i] = s;
	}
	t->nrows++;
	return 0;
}

static const char *header(const struct hc_table *t, int col, bool *right)
{
	const char *h = t->headers[col];

	*right = h[0] == '>';
	return *right ? h + 1 : h;
}

static void print_row(const struct hc_table *t, FILE *f, const int *w,
		      const char *const *row, bool is_header)
{
	for (int i = 0; i < t->ncols; i++) {
		bool right, last = i == t->ncols - 1;
		const char *h = header(t, i, &right);
		const char *s = is_header ? h : row[i];

		if (right)
			fprintf(f, "%*s", w[i], s);
		else if (last)
			fputs(s, f);
		else
			fprintf(f, "%-*s", w[i], s);
		fputs(last ? "\n" : "  ", f);
	}
}

void hc_table_print(const struct hc_table *t, FILE *f)
{
	int *w = calloc((size_t)t->ncols, sizeof(*w));

	if (!w)
		return;
	for (int i = 0; i < t->ncols; i++) {
		bool right;

		w[i] = (int)strlen(header(t, i, &right));
		for (int r = 0; r < t->nrows; r++) {
			int n = (int)strlen(t->cells[r * t->ncols + i]);

			if (n > w[i])
				w[i] = n;
		}
	}
	print_row(t, f, w, NULL, true);
	for (int r = 0; r < t->nrows; r++)
		print_row(t, f, w, (const char *const *)&t->cells[r * t->ncols],
			  false);
	free(w);
}

void hc_table_free(struct hc_table *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}
