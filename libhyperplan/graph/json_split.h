/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Splits a graph file's text at its top level so that the two big arrays
 * ("tensors", "ops") are parsed one element at a time: json-c then never
 * holds more than one element's tree, instead of a tree of the whole file
 * (3.7 GB for 1M operators).  The scanner only finds where values end; it
 * accepts a strict subset of what json-c accepts and gives up on anything
 * else, and json-c still parses every byte.
 */
#ifndef HP_JSON_SPLIT_H
#define HP_JSON_SPLIT_H

#include <stddef.h>

struct json_span {
	size_t at, len;
};

struct hyper_plan__json_split {
	const char *text;		/* what the spans are in */
	char *skeleton;			/* the text, both arrays emptied */
	struct json_span *el[2];	/* elements of "tensors", "ops" */
	size_t nel[2];
	int have[2];			/* whether the root has that key */
};

struct hp_mem;

/* 0: @s is filled (hyper_plan__json_split_free() it); -1: not split, parse whole;
 * -ENOMEM. */
int hyper_plan__json_split(const char *text, struct hyper_plan__json_split *s, struct hp_mem *mem);
void hyper_plan__json_split_free(struct hyper_plan__json_split *s);

#endif
