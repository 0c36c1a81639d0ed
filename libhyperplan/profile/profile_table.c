// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The reference profiles, fixed by issue 5 and never tuned: change a
 * figure here only if the hardware it describes is measured again.
 * Units: bytes, bytes/s, FLOP/s, ns.  Documented in profiles.md.
 */
#include "profile/profile.h"

const struct profile hyper_plan__profile_table[] = {
	{
		.name = "supernode-npu",
		.desc = "one die of a CloudMatrix384-class NPU, UB pool link",
		.device_bytes = 64 * GIB,
		.mem_bps = 1.6e12,
		.flops = 376e12,
		.h2d_bps = 196e9,
		.d2h_bps = 196e9,
		.latency_ns = 2000,
	},
	{
		.name = "h100-pcie",
		.desc = "H100 PCIe, measured PCIe Gen5 x16",
		.device_bytes = 80 * GIB,
		.mem_bps = 2.0e12,
		.flops = 756e12,
		.h2d_bps = 55e9,
		.d2h_bps = 55e9,
		.latency_ns = 5000,
	},
	{
		.name = "gh200",
		.desc = "GH200, measured NVLink-C2C",
		.device_bytes = 96 * GIB,
		.mem_bps = 4.0e12,
		.flops = 989e12,
		.h2d_bps = 375e9,
		.d2h_bps = 297e9,
		.latency_ns = 2000,
	},
};

const unsigned int hyper_plan__profile_table_len = ARRAY_SIZE(hyper_plan__profile_table);
