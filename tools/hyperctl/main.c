// SPDX-License-Identifier: GPL-2.0
/*
 * hyperctl: list, inspect, tune and switch the hyper pool devices, in the
 * manner of ndctl's daxctl and cxl.  Everything goes through sysfs
 * (class/hyper/hyperN/ below $HYPERCTL_SYSFS, default /sys); output is
 * JSON unless -H asks for the human form.
 */
#include <stdio.h>
#include <string.h>

#include "hyperctl.h"

#ifndef HYPERCTL_VERSION
#define HYPERCTL_VERSION "unknown"
#endif

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "list",	 cmd_list,	  "the pool devices, as JSON (-H: a table)" },
	{ "status",	 cmd_status,	  "mode, sizes, node, copy engine, tunables, inflight" },
	{ "stats",	 cmd_stats,	  "transfer counters; --watch for rates" },
	{ "set",	 cmd_set,	  "write tunables: workers, chunk_size, queue_depth, inline_bytes" },
	{ "mode",	 cmd_mode,	  "switch a window between device and system-ram" },
	{ "reset-stats", cmd_reset_stats, "zero the transfer counters" },
	{ "pool",	 cmd_pool,	  "a pool shared by nodes: format, join, leave, status, fence" },
};

#define NR_COMMANDS	(int)(sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fputs("usage: hyperctl [--version] [--help] COMMAND [ARGS]\n\n"
	      "commands:\n", f);
	for (int i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fputs("\nDEV is hyperN, N or all.  `hyperctl COMMAND --help` says more;\n"
	      "exit status: 0 done, 1 an operation failed, 2 bad usage.\n", f);
}

static int find_command(const char *name)
{
	for (int i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return i;
	return -1;
}

int main(int argc, char **argv)
{
	char help[] = "--help";
	const char *name;
	int c;

	if (argc < 2) {
		usage(stderr);
		return HC_EXIT_USAGE;
	}
	name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") ||
	    (!strcmp(name, "help") && argc == 2)) {
		usage(stdout);
		return HC_EXIT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "-v")) {
		printf("hyperctl %s\n", HYPERCTL_VERSION);
		return HC_EXIT_OK;
	}
	/* "hyperctl help COMMAND" is "hyperctl COMMAND --help". */
	if (!strcmp(name, "help")) {
		name = argv[2];
		c = find_command(name);
		if (c >= 0)
			return commands[c].run(2, (char *[]){ argv[2], help, NULL });
	} else {
		c = find_command(name);
		if (c >= 0)
			return commands[c].run(argc - 1, argv + 1);
	}
	hc_err(NULL, "unknown command '%s' (see hyperctl --help)", name ? name : "");
	return HC_EXIT_USAGE;
}
