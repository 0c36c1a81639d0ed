// SPDX-License-Identifier: GPL-2.0
/* hyperctl status: everything an operator asks about a device. */
#include "hyperctl.h"

static const struct hc_cmd_spec spec = {
	.usage =
	"usage: hyperctl status [-H] [DEV]\n"
	"\n"
	"Show each device (DEV: hyperN, N or all; default all) as a JSON array:\n"
	"what list shows plus phys_base (root only), copy_engine, workers,\n"
	"chunk_size, queue_depth, inline_bytes, inflight, memory_tier, and the\n"
	"NUMA node's memory tier and memory.\n"
	"\n"
	"  -H, --human   a block of text per device instead\n"
	"  -h, --help    this text\n",
	.opts = HC_OPT_HUMAN,
	.min_args = 0,
	.max_args = 1,
};

int cmd_status(int argc, char **argv)
{
	struct hc_devlist list;
	struct hc_opts o;
	int ret;

	ret = hc_parse_opts(argc, argv, &spec, &o);
	if (ret >= 0)
		return ret;
	ret = hc_select_or_fail(argv[o.optind], &list, true);
	if (!ret)
		ret = hc_print_status(&list, o.human);
	hc_devs_free(&list);
	return ret;
}
