// SPDX-License-Identifier: GPL-2.0
/* hyperctl reset-stats: zero the counters (all but inflight). */
#include <string.h>

#include "hyperctl.h"

static const struct hc_cmd_spec spec = {
	.usage =
	"usage: hyperctl reset-stats [DEV]\n"
	"\n"
	"Set every transfer counter of each device (DEV: hyperN, N or all;\n"
	"default all) to zero, except inflight.  Prints nothing on success.\n"
	"\n"
	"  -h, --help    this text\n",
	.min_args = 0,
	.max_args = 1,
	.need_one = true,
};

int cmd_reset_stats(int argc, char **argv)
{
	struct hc_devlist list;
	struct hc_opts o;
	int ret;

	ret = hc_start(argc, argv, &spec, &o, &list);
	if (ret >= 0)
		return ret;
	ret = HC_EXIT_OK;
	/* Every device is tried, whatever happened to the one before. */
	for (int i = 0; i < list.nr; i++) {
		int err = hc_write_attr(list.ids[i], "reset_stats", "1");
		char name[HC_NAME_LEN];

		if (err) {
			hc_err(hc_devname(list.ids[i], name), "reset_stats: %s",
			       strerror(-err));
			ret = HC_EXIT_FAIL;
		}
	}
	hc_devs_free(&list);
	return ret;
}
