// SPDX-License-Identifier: LGPL-2.1-or-later
/* hyper_plan_profile_measure(): this machine's profile, for a front end. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <hyper/plan.h>

#include "api/api.h"
#include "profile/profile.h"

int hyper_plan_profile_measure(const struct hyper_plan_measure_opts *opts,
			       struct hyper_plan_profile *prof, char *err,
			       size_t errlen)
{
	struct hp_err e = { "" };
	struct profile p;
	uint32_t engine;
	int ret;

	if (!prof)
		return hyper_plan__null_arg(err, errlen, "hyper_plan_profile_measure",
					    "prof", "a struct hyper_plan_profile to fill");
	ret = hyper_plan__profile_measure(opts, &p, &engine, &e);
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "%s", e.msg);
		return ret;
	}
	memset(prof, 0, sizeof(*prof));
	snprintf(prof->name, sizeof(prof->name), "%s", p.name);
	snprintf(prof->desc, sizeof(prof->desc), "%s", p.desc);
	prof->device_bytes = p.device_bytes;
	prof->mem_bytes_per_s = p.mem_bps;
	prof->flops = p.flops;
	prof->h2d_bytes_per_s = p.h2d_bps;
	prof->d2h_bytes_per_s = p.d2h_bps;
	prof->latency_ns = p.latency_ns;
	prof->h2d_alone_bytes_per_s = p.h2d_alone_bps;
	prof->d2h_alone_bytes_per_s = p.d2h_alone_bps;
	prof->latency_alone_ns = p.latency_alone_ns;
	prof->engine = engine;
	return 0;
}
