// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph/json_split.h"
#include "lib/util.h"

static size_t skip_ws(const char *p, size_t i)
{
	while (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n')
		i++;
	return i;
}

/* End of the string starting at p[i] == '"', or 0. */
static size_t string_end(const char *p, size_t i)
{
	for (i++; p[i] && p[i] != '"'; i++)
		if (p[i] == '\\' && !p[++i])
			return 0;
	return p[i] ? i + 1 : 0;
}

/*
 * End of the value starting at p[i]: strings and brackets are matched,
 * anything else runs to the next delimiter.  0 on a surprise.
 */
static size_t value_end(const char *p, size_t i)
{
	size_t depth = 0;

	if (p[i] != '{' && p[i] != '[') {
		if (p[i] == '"')
			return string_end(p, i);
		while (p[i] && !strchr(",}] \t\r\n/", p[i]))
			i++;
		return p[i] && p[i] != '/' ? i : 0;
	}
	for (;;) {
		switch (p[i]) {
		case 0:
		case '/':		/* a comment: json-c's own business */
			return 0;
		case '"':
			i = string_end(p, i);
			if (!i)
				return 0;
			continue;
		case '{':
		case '[':
			depth++;
			break;
		case '}':
		case ']':
			if (!--depth)
				return i + 1;
			break;
		}
		i++;
	}
}

/* Elements of the array at p[i] == '['; returns its end, or 0. */
static size_t elements(const char *p, size_t i, struct json_span **el,
		       size_t *n, struct hp_mem *mem)
{
	size_t cap = 0, end;

	i = skip_ws(p, i + 1);
	if (p[i] == ']')
		return i + 1;
	for (;;) {
		end = value_end(p, i);
		if (!end)
			return 0;
		if (hyper_plan__grow(mem, el, &cap, *n, sizeof(**el)))
			return 0;	/* hyper_plan__json_split() sees mem failed */
		(*el)[(*n)++] = (struct json_span){ i, end - i };
		i = skip_ws(p, end);
		if (p[i] == ']')
			return i + 1;
		if (p[i] != ',')
			return 0;
		i = skip_ws(p, i + 1);
	}
}

static void cut(struct hyper_plan__json_split *s, const char *text, size_t *from,
		size_t lo, size_t hi, size_t *len)
{
	memcpy(s->skeleton + *len, text + *from, lo - *from);
	*len += lo - *from;
	memcpy(s->skeleton + *len, "[]", 2);
	*len += 2;
	*from = hi;
}

int hyper_plan__json_split(const char *text, struct hyper_plan__json_split *s, struct hp_mem *mem)
{
	static const char *const key[2] = { "\"tensors\"", "\"ops\"" };
	size_t i = skip_ws(text, 0), k, end, from = 0, len = 0, lo[2], hi[2];
	int w, order[2] = { 0, 1 };

	memset(s, 0, sizeof(*s));
	if (text[i] != '{')
		return -1;
	i = skip_ws(text, i + 1);
	while (text[i] != '}') {
		end = text[i] == '"' ? string_end(text, i) : 0;
		if (!end)
			goto out_whole;
		k = skip_ws(text, end);
		if (text[k] != ':')
			goto out_whole;
		k = skip_ws(text, k + 1);
		for (w = 0; w < 2; w++)
			if (end - i == strlen(key[w]) &&
			    !memcmp(text + i, key[w], end - i))
				break;
		if (w < 2 && (s->have[w] || text[k] != '['))
			goto out_whole;	/* twice, or not an array */
		if (w < 2) {
			s->have[w] = 1;
			lo[w] = k;
			end = elements(text, k, &s->el[w], &s->nel[w], mem);
			hi[w] = end;
		} else {
			end = value_end(text, k);
		}
		if (!end)
			goto out_whole;
		i = skip_ws(text, end);
		if (text[i] == ',')
			i = skip_ws(text, i + 1);
		else if (text[i] != '}')
			goto out_whole;
	}
	if (text[skip_ws(text, i + 1)])
		goto out_whole;		/* trailing data: json-c says so */
	if (!s->have[0] || !s->have[1])
		goto out_whole;
	if (lo[1] < lo[0]) {
		order[0] = 1;
		order[1] = 0;
	}
	s->skeleton = hyper_plan__malloc(mem, strlen(text) - (hi[0] - lo[0]) -
				(hi[1] - lo[1]) + 5);
	if (!s->skeleton)
		goto out_whole;
	for (w = 0; w < 2; w++)
		cut(s, text, &from, lo[order[w]], hi[order[w]], &len);
	k = strlen(text + from);
	memcpy(s->skeleton + len, text + from, k + 1);
	return 0;
out_whole:
	hyper_plan__json_split_free(s);
	return mem->failed ? -ENOMEM : -1;
}

void hyper_plan__json_split_free(struct hyper_plan__json_split *s)
{
	free(s->skeleton);
	free(s->el[0]);
	free(s->el[1]);
	memset(s, 0, sizeof(*s));
}
