/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Device and link profiles (Documentation/profiles.md).  Compute times
 * are a roofline over the device; a transfer costs a fixed latency plus
 * bytes over the link bandwidth of its direction.
 */
#ifndef HP_PROFILE_H
#define HP_PROFILE_H

#include <stdint.h>

#include <hyper/plan.h>

#include "lib/util.h"

struct profile {
	char name[32];
	char desc[96];
	double device_bytes;	/* memory of one device */
	double mem_bps;		/* device memory bandwidth, bytes/s */
	double flops;		/* dense bf16 FLOP/s */
	double h2d_bps;		/* pool → device, bytes/s */
	double d2h_bps;		/* device → pool, bytes/s */
	double latency_ns;	/* per transfer */
	/*
	 * Measured profiles only, 0 otherwise: the link with nothing else
	 * running (the figures above are with compute running).  Saved as
	 * x- keys, which the planner does not read.
	 */
	double h2d_alone_bps;
	double d2h_alone_bps;
	double latency_alone_ns;
};

#define THIS_MACHINE	"this-machine"

extern const struct profile hyper_plan__profile_table[];
extern const unsigned int hyper_plan__profile_table_len;

/*
 * Finds @name in the table; "this-machine" is read from
 * $HYPER_PLAN_PROFILE or ~/.config/hyper-plan/this-machine.json, and
 * measured on the spot when neither exists.
 */
int hyper_plan__profile_get(const char *name, struct profile *p, struct hp_err *e);
int hyper_plan__profile_load(const char *path, struct profile *p, struct hp_err *e);
int hyper_plan__profile_save(const struct profile *p, const char *path, struct hp_err *e);
const char *hyper_plan__profile_default_path(char *buf, size_t len);

/*
 * Measures this machine (profile_measure.c), in a second or so natively:
 * the link through libhyper's copy engine, with compute running.  @opts
 * NULL for defaults; @engine gets the engine measured.  0 or -errno with
 * a message in @e.
 */
int hyper_plan__profile_measure(const struct hyper_plan_measure_opts *opts,
		    struct profile *p, uint32_t *engine, struct hp_err *e);

static inline double roofline_ns(const struct profile *p, double flops,
				 double bytes)
{
	double c = flops / p->flops, m = bytes / p->mem_bps;

	return (c > m ? c : m) * 1e9;
}

static inline double h2d_ns(const struct profile *p, double bytes)
{
	return p->latency_ns + bytes / p->h2d_bps * 1e9;
}

static inline double d2h_ns(const struct profile *p, double bytes)
{
	return p->latency_ns + bytes / p->d2h_bps * 1e9;
}

#endif
