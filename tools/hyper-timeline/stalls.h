/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HYPER_TIMELINE_STALLS_H
#define HYPER_TIMELINE_STALLS_H

#include <stdio.h>

#include <json-c/json.h>

int stall_report(FILE *f, json_object *root);

#endif
