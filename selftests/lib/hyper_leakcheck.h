/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Force-included into every test program (TEST_CFLAGS).  The kselftest
 * harness runs each test in a child that leaves with _exit(), which skips
 * the exit-time leak check of LeakSanitizer: a leak in a passing test was
 * never reported.  Under AddressSanitizer, a test child that is about to
 * pass checks for leaks first and fails if it finds any (the report goes
 * to standard error, naming where the memory was allocated).
 */
#ifndef HYPER_LEAKCHECK_H
#define HYPER_LEAKCHECK_H

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#include <unistd.h>

static inline void hyper_leakcheck_exit(int code)
{
	if (!code && __lsan_do_recoverable_leak_check())
		code = 1;
	_exit(code);
}

#define _exit(code)	hyper_leakcheck_exit(code)
#endif

#endif /* HYPER_LEAKCHECK_H */
