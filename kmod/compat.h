/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel interfaces hyper.ko uses that changed shape after 6.1,
 * the kernel Debian 12 ships.  Each wrapper is the 6.1 form, with the
 * newer one where it is known.
 */
#ifndef _HYPER_COMPAT_H
#define _HYPER_COMPAT_H

#include <linux/io_uring.h>
#include <linux/version.h>

/* 6.6 passes the whole SQE to drivers instead of its cmd area. */
static inline const void *hyper_cmd_payload(const struct io_uring_cmd *cmd)
{
#if KERNEL_VERSION(6, 6, 0) <= LINUX_VERSION_CODE
	return io_uring_sqe_cmd(cmd->sqe);
#else
	return cmd->cmd;
#endif
}

#endif /* _HYPER_COMPAT_H */
