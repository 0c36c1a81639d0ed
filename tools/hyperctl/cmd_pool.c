// SPDX-License-Identifier: GPL-2.0
/*
 * hyperctl pool: a pool shared by several nodes (Documentation/
 * supernode.md), through class/hyper/hyperN/pool/.  format, join, leave
 * and fence write one attribute each; the module refuses with an errno,
 * which becomes one line here saying why and what to do.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hyperctl.h"

static const struct hc_cmd_spec spec = {
	.usage =
	"usage: hyperctl pool COMMAND [OPTIONS] [DEV]\n"
	"\n"
	"A pool several nodes share (hyper.ko loaded with node_id=N on each):\n"
	"\n"
	"  format [--force] [DEV]     write an empty pool format (superblock,\n"
	"                             node table, chunk table); --force erases\n"
	"                             an existing, corrupt or foreign one, never\n"
	"                             while another node is joined and alive\n"
	"  join [DEV]                 take this node's slot; its regions come\n"
	"                             from chunks it takes\n"
	"  leave [DEV]                give this node's chunks back (no region of\n"
	"                             this node may exist)\n"
	"  status [-H] [--json] [DEV] the pool and every node in it: state,\n"
	"                             lease age, bytes held\n"
	"  fence [--force] NODE [DEV] give a dead node's chunks back; --force\n"
	"                             even within its lease: only for a node that\n"
	"                             is surely down\n"
	"\n"
	"DEV: hyperN, N or all; default all.  status prints JSON unless -H.\n"
	"\n"
	"  -h, --help    this text\n",
	.opts = HC_OPT_HUMAN | HC_OPT_FORCE | HC_OPT_JSON,
	.min_args = 1,
	.max_args = 3,
	.need_one = true,
};

/**
 * hc_pool_why() - the one line that says why the module refused a command
 * @cmd:	"format", "join", "leave" or "fence"
 * @err:	the negative errno the attribute's write returned
 * @node:	the node fenced (fence only)
 *
 * Return: a message, without newline; strerror() for an errno the module
 * does not give @cmd.
 */
const char *hc_pool_why(const char *cmd, int err, int node)
{
	static char buf[192];
	bool fence = !strcmp(cmd, "fence");

	switch (err) {
	case -ENODEV:
		return "hyper.ko was loaded without node_id: the pool is this node's alone (load it with node_id=N to share it)";
	case -ENODATA:
		return "the pool is not formatted: hyperctl pool format";
	case -EPROTO:
		return "the pool was formatted by another format version: hyperctl pool format --force, once no node uses it";
	case -EBADMSG:
		return "the pool's superblock is corrupt: hyperctl pool format --force, once no node uses it";
	case -EMEDIUMTYPE:
		return "the superblock describes another pool size: every node's window must be the same memory";
	case -EEXIST:
		return "the pool is formatted already (--force erases it, and everything in it)";
	case -EADDRINUSE:
		return "this node id is taken by a live node: load hyper.ko with another node_id";
	case -EALREADY:
		return "this node is joined already";
	case -ENOTCONN:
		return "this node has not joined the pool: hyperctl pool join";
	case -ETIMEDOUT:
		return "another node holds the pool's metadata lock and does not let go: if it is dead, fence it (see dmesg)";
	case -EINTR:
		return "interrupted";
	case -EBUSY:
		if (!strcmp(cmd, "format"))
			return "a node is joined: it must leave first (this node: hyperctl pool leave)";
		if (!strcmp(cmd, "join"))
			return "this node was fenced: free its regions, then hyperctl pool leave and join";
		if (!strcmp(cmd, "leave"))
			return "regions of this node still exist: free them first";
		snprintf(buf, sizeof(buf), "node %d's lease is live (its heartbeat moved within lease_ms): --force only if it is surely down",
			 node);
		return buf;
	case -ENOENT:
		if (!fence)
			break;
		snprintf(buf, sizeof(buf), "node %d is not joined and holds nothing", node);
		return buf;
	case -EAGAIN:
		if (!fence)
			break;
		snprintf(buf, sizeof(buf), "node %d's record is being written: try again", node);
		return buf;
	case -EINVAL:
		if (fence)
			return "this node cannot fence itself: hyperctl pool leave";
		break;
	}
	return strerror(-err);
}

/* Writes @val to pool/@cmd of each device; the exit status. */
static int pool_write(const struct hc_devlist *list, const char *cmd,
		      const char *val, int node)
{
	char attr[32], name[HC_NAME_LEN];
	int ret = HC_EXIT_OK;

	snprintf(attr, sizeof(attr), "pool/%s", cmd);
	/* Every device is tried, whatever happened to the one before. */
	for (int i = 0; i < list->nr; i++) {
		int err = hc_write_attr(list->ids[i], attr, val);

		if (err == -ENOENT && !hc_attr_exists(list->ids[i], "pool"))
			err = -EOPNOTSUPP;
		if (err) {
			hc_err(hc_devname(list->ids[i], name), "pool %s: %s", cmd,
			       err == -EOPNOTSUPP ?
			       "this hyper.ko has no shared pools (no pool/ in sysfs)" :
			       hc_pool_why(cmd, err, node));
			ret = HC_EXIT_FAIL;
		}
	}
	return ret;
}

static int parse_node(const char *s, int *node)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v >= HC_POOL_MAX_NODES)
		return -EINVAL;
	*node = (int)v;
	return 0;
}

static int cmd_fence(const struct hc_opts *o, int argc, char **argv,
		     struct hc_devlist *list)
{
	char val[32], name[HC_NAME_LEN];
	int node, ret;

	if (argc - o->optind < 2)
		return hc_usage(&spec, "fence needs NODE");
	if (argc - o->optind > 3)
		return hc_usage(&spec, "unexpected operand '%s'", argv[o->optind + 3]);
	if (parse_node(argv[o->optind + 1], &node))
		return hc_usage(&spec, "NODE '%s': want a node id from 0 to %d",
				argv[o->optind + 1], HC_POOL_MAX_NODES - 1);
	ret = hc_select_or_fail(argv[o->optind + 2], list, true);
	if (ret)
		return ret;
	/* Said here, before the module would refuse it. */
	for (int i = 0; i < list->nr; i++) {
		int64_t self;

		if (!hc_read_attr_s64(list->ids[i], "pool/node_id", &self) &&
		    self == node) {
			hc_err(hc_devname(list->ids[i], name), "pool fence: %s",
			       hc_pool_why("fence", -EINVAL, node));
			return HC_EXIT_FAIL;
		}
	}
	snprintf(val, sizeof(val), "%d%s", node, o->force ? " force" : "");
	return pool_write(list, "fence", val, node);
}

static int cmd_pool_status(const struct hc_opts *o, struct hc_devlist *list)
{
	struct json_object *arr;
	struct hc_pool *p;
	int ret;

	if (o->human && o->json)
		return hc_usage(&spec, "-H and --json exclude each other");
	p = calloc((size_t)list->nr + 1, sizeof(*p));
	if (!p) {
		hc_err(NULL, "%s", strerror(ENOMEM));
		return HC_EXIT_FAIL;
	}
	for (int i = 0; i < list->nr; i++) {
		ret = hc_pool_read(list->ids[i], &p[i]);
		if (ret) {
			hc_err(p[i].name, "%s: %s", p[i].bad_attr,
			       ret == -ENOENT ?
			       "this hyper.ko has no shared pools (no pool/ in sysfs)" :
			       strerror(-ret));
			free(p);
			return HC_EXIT_FAIL;
		}
	}
	if (o->human) {
		ret = hc_human_pool(stdout, p, list->nr);
		if (!ret && fflush(stdout))
			ret = -EIO;
	} else {
		arr = json_object_new_array();
		for (int i = 0; i < list->nr; i++)
			json_object_array_add(arr, hc_json_pool(&p[i]));
		ret = hc_json_print(arr, true);
	}
	free(p);
	return hc_output_status(ret);
}

int cmd_pool(int argc, char **argv)
{
	struct hc_devlist list = { 0 };
	const char *sub;
	struct hc_opts o;
	int ret;

	ret = hc_parse_opts(argc, argv, &spec, &o);
	if (ret >= 0)
		return ret;
	sub = argv[o.optind];
	if (strcmp(sub, "fence") && argc - o.optind > 2)
		return hc_usage(&spec, "unexpected operand '%s'", argv[o.optind + 2]);
	if (o.force && strcmp(sub, "format") && strcmp(sub, "fence"))
		return hc_usage(&spec, "--force applies to format and fence only");
	if ((o.human || o.json) && strcmp(sub, "status"))
		return hc_usage(&spec, "%s applies to status only",
				o.human ? "-H" : "--json");
	if (!strcmp(sub, "fence")) {
		ret = cmd_fence(&o, argc, argv, &list);
		hc_devs_free(&list);
		return ret;
	}
	if (strcmp(sub, "format") && strcmp(sub, "join") &&
	    strcmp(sub, "leave") && strcmp(sub, "status"))
		return hc_usage(&spec, "unknown pool command '%s'", sub);
	ret = hc_select_or_fail(argv[o.optind + 1], &list, true);
	if (ret)
		return ret;
	if (!strcmp(sub, "status"))
		ret = cmd_pool_status(&o, &list);
	else if (!strcmp(sub, "format"))
		ret = pool_write(&list, "format", o.force ? "force" : "1", -1);
	else
		ret = pool_write(&list, sub, "1", -1);
	hc_devs_free(&list);
	return ret;
}
