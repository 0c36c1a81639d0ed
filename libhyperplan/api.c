// SPDX-License-Identifier: GPL-2.0
const char *hyper_plan_version(void);
const char *hyper_plan_version(void) { return "1"; }
