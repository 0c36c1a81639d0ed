// SPDX-License-Identifier: GPL-2.0
/*
 * hyperctl pool: a pool shared by several nodes (Documentation/
 * supernode.md), through class/hyper/hyperN/pool/.  format, join, leave
 * and fence write one attribute each; the module refuses with an errno,
 * which becomes one line here saying why and what to do.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/hyper.h>

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
	"  objects [-H] [--json] [DEV]\n"
	"                             the shared objects: name, state, size, the\n"
	"                             node that created it, references\n"
	"  delete NAME DEV            remove a published shared object's name; its\n"
	"                             memory goes when no node holds it any more\n"
	"\n"
	"DEV: hyperN, N or all; default all.  status and objects print JSON\n"
	"unless -H.\n"
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

/* What status and objects read per device, and how they print it. */
struct pool_view {
	size_t size;			/* one device's record */
	int (*read)(int id, void *rec, const char **bad);
	int (*human)(FILE *f, const void *recs, int nr);
	struct json_object *(*json)(const void *rec);
	const char *none;		/* for -ENOENT: the module lacks it */
};

static int status_read(int id, void *rec, const char **bad)
{
	struct hc_pool *p = rec;
	int ret = hc_pool_read(id, p);

	*bad = p->bad_attr;
	return ret;
}

static int status_human(FILE *f, const void *recs, int nr)
{
	return hc_human_pool(f, recs, nr);
}

static struct json_object *status_json(const void *rec)
{
	return hc_json_pool(rec);
}

static int objects_read(int id, void *rec, const char **bad)
{
	return hc_pool_objects_read(id, rec, bad);
}

static int objects_human(FILE *f, const void *recs, int nr)
{
	return hc_human_pool_objects(f, recs, nr);
}

static struct json_object *objects_json(const void *rec)
{
	return hc_json_pool_objects(rec);
}

static const struct pool_view status_view = {
	.size = sizeof(struct hc_pool),
	.read = status_read,
	.human = status_human,
	.json = status_json,
	.none = "this hyper.ko has no shared pools (no pool/ in sysfs)",
};

static const struct pool_view objects_view = {
	.size = sizeof(struct hc_pool_objects),
	.read = objects_read,
	.human = objects_human,
	.json = objects_json,
	.none = "this hyper.ko has no shared objects (no pool/objects in sysfs)",
};

/* pool status and pool objects: every device read, then printed. */
static int cmd_pool_view(const struct hc_opts *o, struct hc_devlist *list,
			 const struct pool_view *v)
{
	struct json_object *arr;
	char *recs;
	int ret;

	if (o->human && o->json)
		return hc_usage(&spec, "-H and --json exclude each other");
	recs = calloc((size_t)list->nr + 1, v->size);
	if (!recs) {
		hc_err(NULL, "%s", strerror(ENOMEM));
		return HC_EXIT_FAIL;
	}
	for (int i = 0; i < list->nr; i++) {
		const char *bad = "pool";
		char name[HC_NAME_LEN];

		ret = v->read(list->ids[i], recs + i * v->size, &bad);
		if (ret) {
			hc_err(hc_devname(list->ids[i], name), "%s: %s", bad,
			       ret == -ENOENT ? v->none : strerror(-ret));
			free(recs);
			return HC_EXIT_FAIL;
		}
	}
	if (o->human) {
		ret = v->human(stdout, recs, list->nr);
		if (!ret && fflush(stdout))
			ret = -EIO;
	} else {
		arr = json_object_new_array();
		for (int i = 0; i < list->nr; i++)
			json_object_array_add(arr, v->json(recs + i * v->size));
		ret = hc_json_print(arr, true);
	}
	free(recs);
	return hc_output_status(ret);
}

/* 1 to 63 characters of [A-Za-z0-9._-], as the module wants. */
static bool obj_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n >= HC_OBJ_NAME_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
			return false;
	return true;
}

static const char *delete_why(int err, const char *name)
{
	static char buf[160];

	switch (err) {
	case -ENOENT:
		snprintf(buf, sizeof(buf), "no published object %s: hyperctl pool objects lists them",
			 name);
		return buf;
	case -ENODEV:
		return "this node has not joined a shared pool (or was fenced): hyperctl pool status";
	case -ETIMEDOUT:
		return hc_pool_why("delete", err, -1);
	}
	return strerror(-err);
}

static int cmd_delete(const struct hc_opts *o, int argc, char **argv,
		      struct hc_devlist *list)
{
	char path[64], name[HC_NAME_LEN];
	struct hyper_obj obj;
	const char *oname;
	int fd, ret;

	if (argc - o->optind < 3)
		return hc_usage(&spec, "delete needs NAME and DEV");
	if (argc - o->optind > 3)
		return hc_usage(&spec, "unexpected operand '%s'", argv[o->optind + 3]);
	oname = argv[o->optind + 1];
	if (!obj_name_ok(oname))
		return hc_usage(&spec, "NAME '%s': want 1 to %d characters of [A-Za-z0-9._-]",
				oname, HC_OBJ_NAME_LEN - 1);
	ret = hc_select_or_fail(argv[o->optind + 2], list, true);
	if (ret)
		return ret;
	if (list->nr != 1)
		return hc_usage(&spec, "delete takes one device, not %d", list->nr);
	hc_devname(list->ids[0], name);
	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		hc_err(name, "pool delete: %s: %s", path, strerror(errno));
		return HC_EXIT_FAIL;
	}
	memset(&obj, 0, sizeof(obj));
	memcpy(obj.name, oname, strlen(oname));
	ret = ioctl(fd, HYPER_IOC_OBJ_DELETE, &obj) ? -errno : 0;
	close(fd);
	if (ret) {
		hc_err(name, "pool delete: %s", delete_why(ret, oname));
		return HC_EXIT_FAIL;
	}
	return HC_EXIT_OK;
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
	if (strcmp(sub, "fence") && strcmp(sub, "delete") &&
	    argc - o.optind > 2)
		return hc_usage(&spec, "unexpected operand '%s'", argv[o.optind + 2]);
	if (o.force && strcmp(sub, "format") && strcmp(sub, "fence"))
		return hc_usage(&spec, "--force applies to format and fence only");
	if ((o.human || o.json) && strcmp(sub, "status") &&
	    strcmp(sub, "objects"))
		return hc_usage(&spec, "%s applies to status and objects only",
				o.human ? "-H" : "--json");
	if (!strcmp(sub, "delete")) {
		ret = cmd_delete(&o, argc, argv, &list);
		hc_devs_free(&list);
		return ret;
	}
	if (!strcmp(sub, "fence")) {
		ret = cmd_fence(&o, argc, argv, &list);
		hc_devs_free(&list);
		return ret;
	}
	if (strcmp(sub, "format") && strcmp(sub, "join") &&
	    strcmp(sub, "leave") && strcmp(sub, "status") &&
	    strcmp(sub, "objects"))
		return hc_usage(&spec, "unknown pool command '%s'", sub);
	ret = hc_select_or_fail(argv[o.optind + 1], &list, true);
	if (ret)
		return ret;
	if (!strcmp(sub, "status"))
		ret = cmd_pool_view(&o, &list, &status_view);
	else if (!strcmp(sub, "objects"))
		ret = cmd_pool_view(&o, &list, &objects_view);
	else if (!strcmp(sub, "format"))
		ret = pool_write(&list, "format", o.force ? "force" : "1", -1);
	else
		ret = pool_write(&list, sub, "1", -1);
	hc_devs_free(&list);
	return ret;
}
