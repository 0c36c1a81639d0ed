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
	.need_one = true,
};

int cmd_status(int argc, char **argv)
{
	struct hc_devlist list;
	struct hc_opts o;
	int ret;

	ret = hc_start(argc, argv, &spec, &o, &list);
	if (ret < 0)
		ret = hc_print_status(&list, o.human);
	hc_devs_free(&list);
	return ret;
}
