// SPDX-License-Identifier: GPL-2.0
/*
 * hyperctl set DEV KNOB=VALUE...: write tunables.  The whole command line
 * is checked before anything is written; the module then judges each
 * value, and a refused one leaves the old value in place.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hyperctl.h"

static const struct hc_cmd_spec spec = {
	.usage =
	"usage: hyperctl set [-H] DEV KNOB=VALUE...\n"
	"\n"
	"Write tunables of DEV (hyperN, N or all), in the order given, then\n"
	"print the status of DEV as `hyperctl status` does.  VALUE is a decimal\n"
	"number with an optional K, M, G or T suffix (binary: 64K = 65536).\n"
	"\n"
	"  workers=N          1..64: workers one request is spread over\n"
	"  chunk_size=BYTES   a power of two, 64K..64M: bytes a worker copies at once\n"
	"  queue_depth=N      1..4096: requests with the workers at once\n"
	"  inline_bytes=BYTES 0..1M: requests this small are copied by the submitter\n"
	"\n"
	"The module checks every value; a refused one (exit status 1) keeps the\n"
	"old value and the kernel log says why.\n"
	"\n"
	"  -H, --human   the status as text\n"
	"  -h, --help    this text\n",
	.opts = HC_OPT_HUMAN,
	.min_args = 2,
	.max_args = -1,
	.need_one = true,
};

struct setting {
	const struct hc_knob *knob;
	const char *arg;	/* as given, for messages */
	char val[24];		/* decimal, as written */
};

/* KNOB=VALUE; 0 or HC_EXIT_USAGE after saying what is wrong. */
static int parse_setting(const char *arg, struct setting *s)
{
	const char *eq = strchr(arg, '=');
	uint64_t v;
	int ret;

	s->arg = arg;
	s->knob = eq ? hc_knob_find(arg, (size_t)(eq - arg)) : NULL;
	if (!s->knob)
		return hc_usage(&spec, "'%s': want KNOB=VALUE, KNOB one of workers, chunk_size, queue_depth, inline_bytes",
				arg);
	ret = hu_parse_size(eq + 1, &v);
	if (ret)
		return hc_usage(&spec, "'%s': %s", arg, ret == -ERANGE ?
				"too large" : "want a number with an optional K, M, G or T suffix");
	snprintf(s->val, sizeof(s->val), "%" PRIu64, v);
	return 0;
}

static int apply(int id, const struct setting *s)
{
	char name[HC_NAME_LEN];
	int ret = hc_write_attr(id, s->knob->name, s->val);

	if (!ret)
		return 0;
	if (ret == -EINVAL)
		hc_err(hc_devname(id, name), "%s: %s (want %s; the kernel log says why)",
		       s->arg, strerror(-ret), s->knob->range);
	else
		hc_err(hc_devname(id, name), "%s: %s", s->arg, strerror(-ret));
	return HC_EXIT_FAIL;
}

int cmd_set(int argc, char **argv)
{
	struct setting *set;
	struct hc_devlist list;
	struct hc_opts o;
	int ret, n, failed = 0;

	ret = hc_parse_opts(argc, argv, &spec, &o);
	if (ret >= 0)
		return ret;
	n = argc - o.optind - 1;
	set = calloc((size_t)n, sizeof(*set));
	if (!set) {
		hc_err(NULL, "%s", strerror(ENOMEM));
		return HC_EXIT_FAIL;
	}
	for (int i = 0; i < n; i++) {
		ret = parse_setting(argv[o.optind + 1 + i], &set[i]);
		if (ret)
			goto out_free;
	}
	ret = hc_select_or_fail(argv[o.optind], &list, spec.need_one);
	if (ret)
		goto out_free;
	/* Every write is tried; each refusal is reported. */
	for (int d = 0; d < list.nr; d++)
		for (int i = 0; i < n; i++)
			failed |= apply(list.ids[d], &set[i]);
	ret = hc_print_status(&list, o.human);
	if (failed)
		ret = HC_EXIT_FAIL;
	hc_devs_free(&list);
out_free:
	free(set);
	return ret;
}
