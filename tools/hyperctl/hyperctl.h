/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hyperctl: the operator's view of the hyper pool devices, through sysfs
 * only.  Every function that can fail returns a negative errno; the
 * subcommands turn that into a message on stderr and an exit status.
 */
#ifndef HYPERCTL_H
#define HYPERCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "util/units.h"

/* Exit statuses, the same for every subcommand. */
#define HC_EXIT_OK	0	/* done */
#define HC_EXIT_FAIL	1	/* an operation failed; stderr says which and why */
#define HC_EXIT_USAGE	2	/* bad command line; nothing was changed */

/* sysfs.c: attribute access below $HYPERCTL_SYSFS (default /sys) */
const char *hc_sysfs_root(void);
int hc_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int hc_read_file(const char *path, char *buf, size_t len);
int hc_read_attr(int id, const char *attr, char *buf, size_t len);
int hc_read_attr_s64(int id, const char *attr, int64_t *val);
int hc_write_file(const char *path, const char *val);
int hc_write_attr(int id, const char *attr, const char *val);
bool hc_attr_exists(int id, const char *attr);

/* devices.c: which pool devices exist, and which one a DEV argument names */
struct hc_devlist {
	int nr;
	int *ids;		/* ascending */
};

int hc_devs_scan(struct hc_devlist *list);
int hc_devs_select(const char *sel, struct hc_devlist *list);
void hc_devs_free(struct hc_devlist *list);

#define HC_NAME_LEN	24
const char *hc_devname(int id, char *buf);

/* units.c: numbers on the command line; sizes are util/units.h's */
int hc_parse_seconds(const char *s, double *secs);
int hc_parse_count(const char *s, long *count);

/* knobs.c: the writable tunables `hyperctl set` knows */
struct hc_knob {
	const char *name;
	const char *range;	/* as documented, for help and error messages */
	bool bytes;		/* a size: printed with a suffix */
};

extern const struct hc_knob hc_knobs[];
#define HC_NR_KNOBS	4
const struct hc_knob *hc_knob_find(const char *name, size_t len);

/* node.c: the NUMA node behind a pool, as the memory subsystem sees it */
struct hc_node {
	int id;
	int tier;			/* N of memory_tierN; -1 if in none */
	int64_t mem_total;		/* bytes; -1 if unknown */
	int64_t mem_free;
};

int hc_node_read(int nid, struct hc_node *node);
bool hc_nodelist_has(const char *list, int nid);

/* memblock.c: the memory blocks of a window in system-ram mode */
struct hc_blocks {
	int64_t total, online;
	int64_t movable;	/* online blocks in ZONE_MOVABLE */
	int64_t moved;		/* found online in the other zone, moved */
	uint64_t at;		/* the block a failure happened at */
	char zone[16];		/* the zone of the last online block seen */
	bool stuck;		/* block at is online elsewhere, won't offline */
	bool wrong_zone;	/* the kernel put block at in another zone */
};

int hc_blocks(uint64_t start, uint64_t size, const char *how,
	      struct hc_blocks *b);
int hc_auto_online_get(char *buf, size_t len);
int hc_auto_online_set(const char *policy);

/* devinfo.c: one consistent-enough snapshot of a device's attributes */
enum hc_counter {
	HC_BYTES_PREFETCH,
	HC_BYTES_STORE,
	HC_OPS_PREFETCH,
	HC_OPS_STORE,
	HC_REQUESTS,
	HC_ERRORS,
	HC_NR_COUNTERS
};

extern const char *const hc_counter_names[HC_NR_COUNTERS];

#define HC_LAT_BUCKETS	64

struct hc_stats {
	uint64_t c[HC_NR_COUNTERS];
	int64_t inflight;
	int nr_lat;			/* lines of latency_hist read */
	uint64_t lat_bound[HC_LAT_BUCKETS];
	uint64_t lat_count[HC_LAT_BUCKETS];
};

struct hc_dev {
	int id;
	char name[HC_NAME_LEN];		/* "hyper0" */
	const char *bad_attr;		/* the attribute a read failed on */
	char source[16];
	char origin[32];
	char mode[24];			/* "" when the module has no mode switch */
	char copy_engine[64];
	bool has_phys_base;		/* root only */
	bool has_memory_tier;
	uint64_t phys_base;
	uint64_t size, used, free;
	int64_t nr_regions;
	int64_t numa_node;
	int64_t memory_tier;
	uint64_t knob[HC_NR_KNOBS];	/* in hc_knobs[] order */
	struct hc_stats st;
	bool has_node;			/* numa_node >= 0 and sysfs has it */
	struct hc_node node;
	bool has_blocks;		/* system-ram mode, phys_base readable */
	struct hc_blocks blocks;
};

int hc_dev_read(int id, struct hc_dev *dev);
int hc_attr_text(int id, const char *attr, char *buf, size_t len,
		 const char **bad);
int hc_attr_s64(int id, const char *attr, int64_t *val, const char **bad);
int hc_attr_u64(int id, const char *attr, uint64_t *val, const char **bad);
int hc_stats_read(int id, struct hc_stats *st, const char **bad_attr);
int hc_stats_latency_bound(const struct hc_stats *st, double q, uint64_t *ns);
uint64_t hc_counter_delta(uint64_t prev, uint64_t cur);
uint64_t hc_rate(uint64_t prev, uint64_t cur, double secs);

/* pool.c: a pool shared by several nodes, from class/hyper/hyperN/pool/ */
#define HC_POOL_MAX_NODES	32

struct hc_pool_node {
	int id;
	char state[16];		/* joined, dead, left, fenced, torn */
	int64_t lease_age_ms;	/* -1: unknown */
	uint64_t bytes;		/* of chunks it holds */
	uint64_t gen;		/* its incarnation in the slot */
};

struct hc_pool {
	int id;
	char name[HC_NAME_LEN];
	const char *bad_attr;		/* the attribute a read failed on */
	int64_t node_id;		/* -1: standalone */
	char state[24];
	char uuid[40];			/* "" when not formatted */
	int64_t lease_ms;
	uint64_t size, used, free, node_used, node_free;
	int nr_nodes;
	struct hc_pool_node nodes[HC_POOL_MAX_NODES];
};

int hc_pool_read(int id, struct hc_pool *p);
const char *hc_pool_why(const char *cmd, int err, int node);

/* A shared object, a line of pool/objects: "NAME STATE SIZE NODE REFS". */
#define HC_POOL_MAX_OBJECTS	256
#define HC_OBJ_NAME_LEN		64	/* with the NUL */

struct hc_pool_object {
	char name[HC_OBJ_NAME_LEN];
	char state[16];			/* creating, published, deleting */
	uint64_t bytes;
	int node;			/* the node that created it */
	uint64_t refs;			/* references, every node's */
};

struct hc_pool_objects {
	char name[HC_NAME_LEN];
	int nr;
	struct hc_pool_object obj[HC_POOL_MAX_OBJECTS];
};

int hc_pool_objects_read(int id, struct hc_pool_objects *p, const char **bad);

/* json.c: the JSON every subcommand prints */
struct json_object *hc_json_list(const struct hc_dev *dev);
struct json_object *hc_json_status(const struct hc_dev *dev);
struct json_object *hc_json_stats(const struct hc_dev *dev);
struct json_object *hc_json_rates(const struct hc_dev *dev,
				  const struct hc_stats *prev, double secs);
struct json_object *hc_json_pool(const struct hc_pool *p);
struct json_object *hc_json_pool_objects(const struct hc_pool_objects *p);
int hc_json_print(struct json_object *obj, bool pretty);

/* table.c: a plain text table; a header starting with '>' is right-aligned */
struct hc_table;

struct hc_table *hc_table_new(int ncols, const char *const *headers);
int hc_table_add(struct hc_table *t, const char *const *cells);
void hc_table_print(const struct hc_table *t, FILE *f);
void hc_table_free(struct hc_table *t);

/* human.c: the human forms */
int hc_human_status(FILE *f, const struct hc_dev *devs, int nr);
int hc_human_list(FILE *f, const struct hc_dev *devs, int nr);
int hc_human_stats(FILE *f, const struct hc_dev *devs, int nr);
int hc_human_pool(FILE *f, const struct hc_pool *p, int nr);
int hc_human_pool_objects(FILE *f, const struct hc_pool_objects *p, int nr);
int hc_human_rates(FILE *f, const struct hc_dev *devs,
		   const struct hc_stats *prev, int nr, double secs);

/* cmd_*.c: one subcommand each; argv[0] is the subcommand's name */
int cmd_list(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_mode(int argc, char **argv);
int cmd_reset_stats(int argc, char **argv);
int cmd_pool(int argc, char **argv);

/* common.c: what several subcommands share */
#define HC_OPT_HUMAN	1	/* -H, --human */
#define HC_OPT_WATCH	2	/* -w, --watch SECONDS; -c, --count N */
#define HC_OPT_ONLINE	4	/* --no-online, --no-movable */
#define HC_OPT_FORCE	8	/* --force */
#define HC_OPT_JSON	16	/* --json (the default output, said outright) */

struct hc_cmd_spec {
	const char *usage;	/* the --help text */
	unsigned int opts;	/* HC_OPT_* the command takes besides --help */
	int min_args, max_args;	/* operands; max -1: no limit */
	bool need_one;		/* no device present is a failure */
};

struct hc_opts {
	bool human;
	double watch;		/* seconds; 0: no --watch */
	long count;		/* 0: until interrupted */
	bool no_online;		/* leave hot-added memory blocks offline */
	bool no_movable;	/* online them for the kernel, not movable */
	bool force;		/* --force */
	bool json;		/* --json */
	int optind;		/* the first operand */
};

int hc_parse_opts(int argc, char **argv, const struct hc_cmd_spec *spec,
		  struct hc_opts *o);
int hc_usage(const struct hc_cmd_spec *spec, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void hc_err(const char *dev, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int hc_select_or_fail(const char *sel, struct hc_devlist *list, bool need_one);
int hc_read_all(const struct hc_devlist *list, struct hc_dev **devs);
int hc_print_devs(const struct hc_devlist *list, bool human,
		  struct json_object *(*json)(const struct hc_dev *dev),
		  int (*human_fn)(FILE *f, const struct hc_dev *devs, int nr));
int hc_print_status(const struct hc_devlist *list, bool human);
int hc_start(int argc, char **argv, const struct hc_cmd_spec *spec,
	     struct hc_opts *o, struct hc_devlist *list);
int hc_output_status(int ret);

#endif /* HYPERCTL_H */
