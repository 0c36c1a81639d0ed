// SPDX-License-Identifier: GPL-2.0
/*
 * What the subcommands share: option parsing, the DEV argument, reading
 * the selected devices, and printing their status.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hyperctl.h"

/*
 * Parses a subcommand's options and counts its operands.  Returns -1 when
 * the command should go on (operands from argv[o->optind]), or the exit
 * status to end with: 0 after --help, HC_EXIT_USAGE on a bad command line.
 */
int hc_parse_opts(int argc, char **argv, const struct hc_cmd_spec *spec,
		  struct hc_opts *o)
{
	static const struct option longopts[] = {
		{ "help",  no_argument,	      NULL, 'h' },
		{ "human", no_argument,	      NULL, 'H' },
		{ "watch", required_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'c' },
		{ "no-online", no_argument,   NULL, 'O' },
		{ "no-movable", no_argument,  NULL, 'M' },
		{ "force", no_argument,	      NULL, 'F' },
		{ "json", no_argument,	      NULL, 'J' },
		{ NULL, 0, NULL, 0 },
	};
	int c, nargs;

	memset(o, 0, sizeof(*o));
	optind = 0;	/* glibc: start afresh */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hHw:c:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(spec->usage, stdout);
			return HC_EXIT_OK;
		case 'H':
			if (!(spec->opts & HC_OPT_HUMAN))
				goto not_here;
			o->human = true;
			break;
		case 'w':
			if (!(spec->opts & HC_OPT_WATCH))
				goto not_here;
			if (hc_parse_seconds(optarg, &o->watch))
				return hc_usage(spec, "--watch '%s': want seconds, 0.01..86400",
						optarg);
			break;
		case 'c':
			if (!(spec->opts & HC_OPT_WATCH))
				goto not_here;
			if (hc_parse_count(optarg, &o->count))
				return hc_usage(spec, "--count '%s': want a positive integer",
						optarg);
			break;
		case 'O':
		case 'M':
			if (!(spec->opts & HC_OPT_ONLINE))
				goto bad_opt;
			if (c == 'O')
				o->no_online = true;
			else
				o->no_movable = true;
			break;
		case 'F':
			if (!(spec->opts & HC_OPT_FORCE))
				goto bad_opt;
			o->force = true;
			break;
		case 'J':
			if (!(spec->opts & HC_OPT_JSON))
				goto bad_opt;
			o->json = true;
			break;
		default:
			goto bad_opt;
		}
	}
	if (o->count && !o->watch)
		return hc_usage(spec, "--count needs --watch");
	o->optind = optind;
	nargs = argc - optind;
	if (nargs < spec->min_args)
		return hc_usage(spec, "missing operand");
	if (spec->max_args >= 0 && nargs > spec->max_args)
		return hc_usage(spec, "unexpected operand '%s'",
				argv[optind + spec->max_args]);
	return -1;

not_here:
	return hc_usage(spec, "-%c does not apply to %s", c, argv[0]);
bad_opt:
	/* optopt is set for a missing argument and for an unknown short one. */
	if (optopt)
		return hc_usage(spec, "bad option or missing argument: -%c", optopt);
	return hc_usage(spec, "bad option '%s'", argv[optind - 1]);
}

void hc_err(const char *dev, const char *fmt, ...)
{
	va_list ap;

	fputs("hyperctl: ", stderr);
	if (dev)
		fprintf(stderr, "%s: ", dev);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * A usage error: one line saying what is wrong and where the help is, not
 * the whole help text, which would bury that line.
 */
int hc_usage(const struct hc_cmd_spec *spec, const char *fmt, ...)
{
	static const char pre[] = "usage: hyperctl ";
	const char *cmd = spec->usage;
	size_t len = 0;
	va_list ap;

	if (!strncmp(cmd, pre, strlen(pre))) {
		cmd += strlen(pre);
		len = strcspn(cmd, " \n");
	}
	fputs("hyperctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see hyperctl %.*s%s--help)\n", (int)len, cmd,
		len ? " " : "");
	return HC_EXIT_USAGE;
}

/*
 * DEV is not there: when no device is, the module is not loaded, and
 * that is what to say, whatever the command was about to do.
 */
static void no_such_device(const char *sel)
{
	struct hc_devlist all;

	if (!hc_devs_select(NULL, &all) && all.nr) {
		hc_err(sel, "no such device");
		hc_devs_free(&all);
		return;
	}
	hc_err(sel, "no such device: hyper.ko is not loaded (load it with modprobe hyper, see hyperctl(8))");
}

/*
 * Resolves DEV (NULL: all).  Returns 0, or the exit status after saying
 * what is wrong.  need_one: no device at all is a failure.
 */
int hc_select_or_fail(const char *sel, struct hc_devlist *list, bool need_one)
{
	int ret = hc_devs_select(sel, list);

	switch (ret) {
	case 0:
		break;
	case -EINVAL:
		hc_err(NULL, "'%s' is not a device: want hyperN, N or all", sel);
		return HC_EXIT_USAGE;
	case -ENODEV:
		no_such_device(sel);
		return HC_EXIT_FAIL;
	default:
		hc_err(NULL, "%s/class/hyper: %s", hc_sysfs_root(), strerror(-ret));
		return HC_EXIT_FAIL;
	}
	if (need_one && !list->nr) {
		hc_err(NULL, "no hyper devices in %s/class/hyper: hyper.ko is not loaded (load it with modprobe hyper, see hyperctl(8))",
		       hc_sysfs_root());
		return HC_EXIT_FAIL;
	}
	return 0;
}

/* Reads every listed device into a new array; 0 or the exit status. */
int hc_read_all(const struct hc_devlist *list, struct hc_dev **devs)
{
	struct hc_dev *d = calloc((size_t)list->nr + 1, sizeof(*d));
	int ret;

	*devs = NULL;
	if (!d) {
		hc_err(NULL, "%s", strerror(ENOMEM));
		return HC_EXIT_FAIL;
	}
	for (int i = 0; i < list->nr; i++) {
		ret = hc_dev_read(list->ids[i], &d[i]);
		if (ret) {
			hc_err(d[i].name, "%s: %s", d[i].bad_attr, strerror(-ret));
			free(d);
			return HC_EXIT_FAIL;
		}
	}
	*devs = d;
	return 0;
}

/*
 * Reads every listed device and prints it: a JSON array of json(dev), or
 * human(devs) with -H.  Returns the exit status.
 */
int hc_print_devs(const struct hc_devlist *list, bool human,
		  struct json_object *(*json)(const struct hc_dev *dev),
		  int (*human_fn)(FILE *f, const struct hc_dev *devs, int nr))
{
	struct json_object *arr;
	struct hc_dev *devs;
	int ret;

	ret = hc_read_all(list, &devs);
	if (ret)
		return ret;
	if (human) {
		ret = human_fn(stdout, devs, list->nr);
		if (!ret && fflush(stdout))
			ret = -EIO;
	} else {
		arr = json_object_new_array();
		for (int i = 0; i < list->nr; i++)
			json_object_array_add(arr, json(&devs[i]));
		ret = hc_json_print(arr, true);
	}
	free(devs);
	return hc_output_status(ret);
}

/* The status of every listed device, as `hyperctl status` prints it. */
int hc_print_status(const struct hc_devlist *list, bool human)
{
	return hc_print_devs(list, human, hc_json_status, hc_human_status);
}

/*
 * The start of a subcommand whose only operand is an optional DEV:
 * options, then the devices.  Returns -1 to go on (list filled in), or
 * the exit status to end with.
 */
int hc_start(int argc, char **argv, const struct hc_cmd_spec *spec,
	     struct hc_opts *o, struct hc_devlist *list)
{
	int ret = hc_parse_opts(argc, argv, spec, o);

	list->nr = 0;
	list->ids = NULL;
	if (ret >= 0)
		return ret;
	ret = hc_select_or_fail(argv[o->optind], list, spec->need_one);
	return ret ? ret : -1;
}

/* After printing: ret is 0 or the -errno of standard output failing. */
int hc_output_status(int ret)
{
	if (!ret)
		return HC_EXIT_OK;
	hc_err(NULL, "standard output: %s", strerror(-ret));
	return HC_EXIT_FAIL;
}
