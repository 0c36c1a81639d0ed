// SPDX-License-Identifier: GPL-2.0
/* hyperctl list: the pool devices present; none is an empty list. */
#include "hyperctl.h"

static const struct hc_cmd_spec spec = {
	.usage =
	"usage: hyperctl list [-H] [DEV]\n"
	"\n"
	"List the pool devices (DEV: hyperN, N or all; default all) as a JSON\n"
	"array: dev, id, mode, source, origin, size, used, free, nr_regions,\n"
	"numa_node.  No device is an empty array.\n"
	"\n"
	"  -H, --human   a table instead\n"
	"  -h, --help    this text\n",
	.opts = HC_OPT_HUMAN,
	.min_args = 0,
	.max_args = 1,
	.need_one = false,
};

int cmd_list(int argc, char **argv)
{
	struct hc_devlist list;
	struct hc_opts o;
	int ret;

	ret = hc_start(argc, argv, &spec, &o, &list);
	if (ret < 0)
		ret = hc_print_devs(&list, o.human, hc_json_list, hc_human_list);
	hc_devs_free(&list);
	return ret;
}
