/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one clock every tool measures with: CLOCK_MONOTONIC, the clock
 * libhyper's events (struct hyper_event.time_ns) are stamped with, so
 * that a tool's times and the library's can be compared.
 */
#ifndef HYPER_UTIL_CLOCK_H
#define HYPER_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t hu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
