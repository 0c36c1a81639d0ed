// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_URING_CMD on /dev/hyperN: decode and check the command, then
 * hand its descriptors to the transfer engine.
 *
 * The payload lives in the SQE, which userspace may still be writing: it
 * is copied once and only the copy is checked and used.
 */
#include <linux/io_uring.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "hyper.h"

static int hyk_cmd_copy(struct io_uring_cmd *cmd, void *dst, size_t len)
{
	const u8 *p = hyk_cmd_payload(cmd);

	memcpy(dst, p, len);
	/* What follows the command's structure is reserved. */
	if (memchr_inv(p + len, 0, HYPER_URING_CMD_PAYLOAD - len))
		return -EINVAL;
	return 0;
}

static int hyk_cmd_xfer(struct hyk_file *hf, struct io_uring_cmd *cmd,
			unsigned int issue_flags, u64 start_ns)
{
	struct hyper_xfer x;

	if (hyk_cmd_copy(cmd, &x, sizeof(x))) {
		hyk_xfer_refused(&hf->hdev->engine, -EINVAL, start_ns);
		return -EINVAL;
	}
	return hyk_xfer_submit(hf, cmd, &x, 1, issue_flags, start_ns);
}

static int hyk_cmd_batch(struct hyk_file *hf, struct io_uring_cmd *cmd,
			 unsigned int issue_flags, u64 start_ns)
{
	struct hyk_engine *eng = &hf->hdev->engine;
	struct hyper_xfer_batch b;
	struct hyper_xfer *descs;
	int ret;

	if (hyk_cmd_copy(cmd, &b, sizeof(b)) ||
	    b.flags & ~HYPER_BATCH_FLAGS_MASK || b.reserved[0] ||
	    b.reserved[1] || !b.count || b.count > HYPER_BATCH_MAX) {
		ret = -EINVAL;
		goto out_refused;
	}
	descs = kvmalloc_array(b.count, sizeof(*descs), GFP_KERNEL);
	if (!descs) {
		ret = -ENOMEM;
		goto out_refused;
	}
	if (copy_from_user(descs, u64_to_user_ptr(b.descs),
			   array_size(b.count, sizeof(*descs)))) {
		ret = -EFAULT;
		goto out_free;
	}
	/* What the engine keeps of the descriptors, it copies. */
	ret = hyk_xfer_submit(hf, cmd, descs, b.count, issue_flags,
			      start_ns);
	kvfree(descs);
	return ret;

out_free:
	kvfree(descs);
out_refused:
	hyk_xfer_refused(eng, ret, start_ns);
	return ret;
}

static int hyk_cmd_dispatch(struct hyk_file *hf, struct io_uring_cmd *cmd,
			    unsigned int issue_flags, u64 start_ns)
{
	int ret;

	/* A transfer does not fit the 16-byte payload of a plain SQE. */
	if (!(issue_flags & IO_URING_F_SQE128)) {
		ret = -EINVAL;
	} else {
		switch (cmd->cmd_op) {
		case HYPER_URING_CMD_XFER:
			return hyk_cmd_xfer(hf, cmd, issue_flags, start_ns);
		case HYPER_URING_CMD_BATCH:
			return hyk_cmd_batch(hf, cmd, issue_flags, start_ns);
		default:
			/* Other types and unknown numbers alike. */
			ret = -ENOTTY;
		}
	}
	hyk_xfer_refused(&hf->hdev->engine, ret, start_ns);
	return ret;
}

/**
 * hyk_uring_cmd() - the file's ->uring_cmd
 * @cmd:	the command
 * @issue_flags: io_uring's issue flags
 *
 * Every outcome is posted with io_uring_cmd_done(), at once or by the
 * workers later, with the completion time as res2 (big_cqe[0] on CQE32
 * rings).  Returning a result directly is not safe on 6.1: a
 * positive one from io-wq is dropped without a CQE, and from the
 * submitter it marks the request failed, which breaks IOSQE_IO_LINK
 * chains.
 *
 * With IO_URING_F_CANCEL (6.7+) @cmd is not new but one the engine
 * queued and marked cancelable, whose ring is being torn down.
 *
 * Return: -EIOCBQUEUED, or -EAGAIN for io_uring to retry from a worker;
 * 0 for a cancel.
 */
int hyk_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct hyk_file *hf = cmd->file->private_data;
	int ret;

	BUILD_BUG_ON(sizeof(struct hyper_xfer) > HYPER_URING_CMD_PAYLOAD);
	BUILD_BUG_ON(sizeof(struct hyper_xfer_batch) > HYPER_URING_CMD_PAYLOAD);

	/* Not a new command: a queued one whose ring goes away (6.7+). */
	if (issue_flags & HYK_URING_F_CANCEL) {
		hyk_xfer_cancel(cmd);
		return 0;
	}

	ret = hyk_cmd_dispatch(hf, cmd, issue_flags, ktime_get_ns());
	if (ret == -EAGAIN || ret == -EIOCBQUEUED)
		return ret;
	io_uring_cmd_done(cmd, ret, ktime_get_ns(), issue_flags);
	return -EIOCBQUEUED;
}
