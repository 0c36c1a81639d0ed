// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_URING_CMD on /dev/hyperN: decode and check the command, then
 * hand its descriptors to the transfer engine.
 *
 * What a command runs is copied once, when it first arrives: its payload
 * from the SQE, which userspace may still be writing, and a batch's
 * descriptor array from user memory.  Only the copy is checked and used,
 * also when io_uring retries the command from a worker after -EAGAIN, so
 * that what the application writes into the SQ slot or the array after
 * io_uring_submit() returned changes nothing.  A command whose SQE is no
 * longer its own when it first arrives (6.10 to 6.13, see
 * hyk_sqe_is_ours()) is refused.
 */
#include <linux/io_uring.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "hyper.h"

/**
 * struct hyk_cmd_copy - what one command runs
 * @node:	entry in the file's parked list, while parked
 * @cmd:	the command, while parked
 * @start_ns:	when the command first arrived
 * @count:	descriptors in @descs
 * @descs:	@one, or a batch's array (kvmalloc)
 * @one:	the descriptor of HYPER_URING_CMD_XFER
 */
struct hyk_cmd_copy {
	struct list_head node;
	struct io_uring_cmd *cmd;
	u64 start_ns;
	u32 count;
	struct hyper_xfer *descs;
	struct hyper_xfer one;
};

static void hyk_copy_free(struct hyk_cmd_copy *c, bool heap)
{
	if (c->descs != &c->one)
		kvfree(c->descs);
	if (heap)
		kfree(c);
}

/* The command's structure; what follows it in the payload is reserved. */
static int hyk_payload_take(const u8 *payload, void *dst, size_t len)
{
	memcpy(dst, payload, len);
	if (memchr_inv(payload + len, 0, HYPER_URING_CMD_PAYLOAD - len))
		return -EINVAL;
	return 0;
}

/* Copy and check what a new command runs; on error nothing is held. */
static int hyk_cmd_read(struct hyk_file *hf, struct io_uring_cmd *cmd,
			unsigned int issue_flags, struct hyk_cmd_copy *c)
{
	u8 payload[HYPER_URING_CMD_PAYLOAD];
	struct hyper_xfer_batch b;
	struct hyper_xfer *descs;

	c->descs = &c->one;
	c->count = 1;
	/* A transfer does not fit the 16-byte payload of a plain SQE. */
	if (!(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;
	/* Other types and unknown numbers alike. */
	if (cmd->cmd_op != HYPER_URING_CMD_XFER &&
	    cmd->cmd_op != HYPER_URING_CMD_BATCH)
		return -ENOTTY;

	memcpy(payload, hyk_cmd_payload(cmd), sizeof(payload));
	if (!hyk_sqe_is_ours(cmd, issue_flags)) {
		dev_warn_ratelimited(hf->hdev->dev,
				     "command refused: io_uring started it after its SQE went back to the application (linked, or at the end of an unterminated link); on this kernel set IOSQE_ASYNC on such SQEs\n");
		return -EOPNOTSUPP;
	}
	if (cmd->cmd_op == HYPER_URING_CMD_XFER)
		return hyk_payload_take(payload, &c->one, sizeof(c->one));

	if (hyk_payload_take(payload, &b, sizeof(b)) ||
	    b.flags & ~HYPER_BATCH_FLAGS_MASK || b.reserved[0] ||
	    b.reserved[1] || !b.count || b.count > HYPER_BATCH_MAX)
		return -EINVAL;
	descs = kvmalloc_array(b.count, sizeof(*descs), GFP_KERNEL);
	if (!descs)
		return -ENOMEM;
	if (copy_from_user(descs, u64_to_user_ptr(b.descs),
			   array_size(b.count, sizeof(*descs)))) {
		kvfree(descs);
		return -EFAULT;
	}
	c->descs = descs;
	c->count = b.count;
	return 0;
}

/*
 * Keep @c for io_uring's retry of @cmd.  A copy already parked for @cmd's
 * address belongs to an earlier command that io_uring canceled before its
 * retry: that one is gone, since the new one at its address never parked.
 */
static int hyk_cmd_park(struct hyk_file *hf, struct io_uring_cmd *cmd,
			struct hyk_cmd_copy *c, bool heap)
{
	struct hyk_cmd_copy *p = c, *old, *tmp;
	LIST_HEAD(stale);

	if (!heap) {
		p = kmemdup(c, sizeof(*c), GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		if (c->descs == &c->one)
			p->descs = &p->one;
	}
	p->cmd = cmd;
	spin_lock(&hf->parked_lock);
	list_for_each_entry_safe(old, tmp, &hf->parked, node)
		if (old->cmd == cmd)
			list_move(&old->node, &stale);
	list_add(&p->node, &hf->parked);
	spin_unlock(&hf->parked_lock);
	cmd->flags |= HYK_CMD_PARKED;
	list_for_each_entry_safe(old, tmp, &stale, node)
		hyk_copy_free(old, true);
	return 0;
}

static struct hyk_cmd_copy *hyk_cmd_unpark(struct hyk_file *hf,
					   struct io_uring_cmd *cmd)
{
	struct hyk_cmd_copy *p, *found = NULL;

	cmd->flags &= ~HYK_CMD_PARKED;
	spin_lock(&hf->parked_lock);
	list_for_each_entry(p, &hf->parked, node) {
		if (p->cmd == cmd) {
			list_del(&p->node);
			found = p;
			break;
		}
	}
	spin_unlock(&hf->parked_lock);
	return found;
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
 * Return: -EIOCBQUEUED, or -EAGAIN for io_uring to retry from a worker
 * (with the copy parked); 0 for a cancel.
 */
int hyk_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct hyk_file *hf = cmd->file->private_data;
	struct hyk_engine *eng = &hf->hdev->engine;
	struct hyk_cmd_copy first, *c = &first;
	int ret;

	BUILD_BUG_ON(sizeof(struct hyper_xfer) > HYPER_URING_CMD_PAYLOAD);
	BUILD_BUG_ON(sizeof(struct hyper_xfer_batch) > HYPER_URING_CMD_PAYLOAD);

	/* Not a new command: a queued one whose ring goes away (6.7+). */
	if (issue_flags & HYK_URING_F_CANCEL) {
		hyk_xfer_cancel(cmd);
		return 0;
	}

	if (cmd->flags & HYK_CMD_PARKED) {
		/* io_uring's retry: the SQE and the array are not read again. */
		c = hyk_cmd_unpark(hf, cmd);
		if (WARN_ON_ONCE(!c)) {
			ret = -EINVAL;
			hyk_xfer_refused(eng, ret, ktime_get_ns());
			goto out_done;
		}
	} else {
		first.start_ns = ktime_get_ns();
		ret = hyk_cmd_read(hf, cmd, issue_flags, &first);
		if (ret) {
			hyk_xfer_refused(eng, ret, first.start_ns);
			goto out_done;
		}
	}

	ret = hyk_xfer_submit(hf, cmd, c->descs, c->count, issue_flags,
			      c->start_ns);
	if (ret == -EAGAIN) {
		ret = hyk_cmd_park(hf, cmd, c, c != &first);
		if (!ret)
			return -EAGAIN;
		hyk_xfer_refused(eng, ret, c->start_ns);
	}
	/* What the engine keeps of the descriptors, it copied. */
	hyk_copy_free(c, c != &first);
	if (ret == -EIOCBQUEUED)
		return ret;
out_done:
	io_uring_cmd_done(cmd, ret, ktime_get_ns(), issue_flags);
	return -EIOCBQUEUED;
}

/**
 * hyk_uring_file_init() - set up a new open file's command state
 * @hf:	the file
 */
void hyk_uring_file_init(struct hyk_file *hf)
{
	spin_lock_init(&hf->parked_lock);
	INIT_LIST_HEAD(&hf->parked);
}

/**
 * hyk_uring_file_release() - free what canceled commands left parked
 * @hf:	the file, with no command left (each holds the file)
 */
void hyk_uring_file_release(struct hyk_file *hf)
{
	struct hyk_cmd_copy *p, *tmp;

	list_for_each_entry_safe(p, tmp, &hf->parked, node) {
		list_del(&p->node);
		hyk_copy_free(p, true);
	}
}
