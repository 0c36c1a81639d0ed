// SPDX-License-Identifier: GPL-2.0
/* hyperctl list: the pool devices present; none is an empty list. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
};

int cmd_list(int argc, char **argv)
{
	struct hc_devlist list;
	struct json_object *arr;
	struct hc_dev *devs;
	struct hc_opts o;
	int ret;

	ret = hc_parse_opts(argc, argv, &spec, &o);
	if (ret >= 0)
		return ret;
	ret = hc_select_or_fail(argv[o.optind], &list, false);
	if (ret)
		return ret;
	ret = hc_read_all(&list, &devs);
	if (ret)
		goto out;
	if (o.human) {
		ret = hc_human_list(stdout, devs, list.nr);
		if (!ret && fflush(stdout))
			ret = -EIO;
	} else {
		arr = json_object_new_array();
		for (int i = 0; i < list.nr; i++)
			json_object_array_add(arr, hc_json_list(&devs[i]));
		ret = hc_json_print(arr, true);
	}
	free(devs);
	ret = hc_output_status(ret);
out:
	hc_devs_free(&list);
	return ret;
}
