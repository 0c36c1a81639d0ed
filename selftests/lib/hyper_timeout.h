/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Force-included into every test program (TEST_CFLAGS): the kselftest
 * harness's per-test timeouts, which it arms with alarm(), are multiplied
 * by HYPER_TIMEOUT_SCALE, so that a slow or busy machine (QEMU TCG on a
 * shared host) does not turn into failures.  The VM's init sets it from
 * how long the VM took to boot; on the host it may be set by hand.  The
 * harness's own message on expiry names the test.
 */
#ifndef HYPER_TIMEOUT_H
#define HYPER_TIMEOUT_H

#include <stdlib.h>
#include <unistd.h>

static inline unsigned int hyper_scaled_alarm(unsigned int seconds)
{
	const char *s = getenv("HYPER_TIMEOUT_SCALE");
	unsigned long scale = s ? strtoul(s, NULL, 10) : 1;

	if (scale < 1 || scale > 100)
		scale = 1;
	return alarm(seconds * scale);
}

#define alarm(s)	hyper_scaled_alarm(s)

#endif /* HYPER_TIMEOUT_H */
