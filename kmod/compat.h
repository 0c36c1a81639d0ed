/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces hyper.ko uses that changed shape between the two
 * kernels Debian 12 ships, 6.1 and 6.12.  Every version test of the
 * module is here, and only here.  They are LINUX_VERSION_CODE tests, not
 * __has_include(): Debian 12's sparse (0.6.4) rejects the latter.
 */
#ifndef _HYK_COMPAT_H
#define _HYK_COMPAT_H

#include <linux/io_uring.h>
#include <linux/memory-tiers.h>
#include <linux/mm.h>
#include <linux/version.h>

#if KERNEL_VERSION(6, 1, 0) > LINUX_VERSION_CODE
#error "hyper.ko needs Linux 6.1 or later (io_uring driver commands, memory tiers)"
#endif

/* 6.7 moved the io_uring driver interface out of <linux/io_uring.h>. */
#if KERNEL_VERSION(6, 7, 0) <= LINUX_VERSION_CODE
#include <linux/io_uring/cmd.h>
#endif

/* 6.6 passes the whole SQE to drivers instead of its cmd area. */
static inline const void *hyk_cmd_payload(const struct io_uring_cmd *cmd)
{
#if KERNEL_VERSION(6, 6, 0) <= LINUX_VERSION_CODE
	return io_uring_sqe_cmd(cmd->sqe);
#else
	return cmd->cmd;
#endif
}

/*
 * A bit of io_uring_cmd->flags for the module: the command answered
 * -EAGAIN and left its copy for io_uring's retry (uring.c).  io_uring sets
 * the flags from the SQE when it prepares a command, refusing every bit
 * but IORING_URING_CMD_FIXED, so a new command never has it; for itself,
 * io_uring uses bit 30 (IORING_URING_CMD_CANCELABLE, 6.7+) and, in 6.1's
 * own code, none.
 */
#define HYK_CMD_PARKED		BIT(29)
static_assert(!(HYK_CMD_PARKED & IORING_URING_CMD_FIXED));
#ifdef IORING_URING_CMD_CANCELABLE
static_assert(!(HYK_CMD_PARKED & IORING_URING_CMD_CANCELABLE));
#endif

/*
 * Whether the SQE @cmd points to is still the command's own, that is a
 * copy io_uring made or a slot of the SQ ring that the submission running
 * now fetched and has not yet given back to the application (published a
 * new SQ head).
 *
 * io_uring of 6.10 to 6.13 copies a command's SQE only when it goes async
 * at submission (IOSQE_ASYNC), and on -EAGAIN (where the retry still gets
 * the slot).  A command it starts after io_uring_enter() returned, one
 * linked behind another or the last of an unterminated link (from io-wq),
 * gets the slot itself, which the application may have rewritten.  6.1
 * copies the SQE of every command it does not start at once; so do 6.14
 * and later, at preparation.
 */
#if KERNEL_VERSION(6, 10, 0) <= LINUX_VERSION_CODE && \
	KERNEL_VERSION(6, 14, 0) > LINUX_VERSION_CODE
/*
 * The SQ head the kernel published: sq.head comes first in struct
 * io_rings.  The structure is reached without naming it, since sparse
 * warns about its last member (an array of structures ending in flexible
 * arrays).
 */
static inline unsigned int hyk_sq_head(struct io_ring_ctx *ctx)
{
	void *rings = (void *)ctx + offsetof(struct io_ring_ctx, rings);

	return READ_ONCE((*(struct io_uring **)rings)->head);
}

static inline bool hyk_sqe_is_ours(const struct io_uring_cmd *cmd,
				   unsigned int issue_flags)
{
	struct io_kiocb *req = cmd_to_io_kiocb(cmd);
	struct io_ring_ctx *ctx = req->ctx;
	unsigned int mask = ctx->sq_entries - 1;
	unsigned int head, pos, idx, n;
	ptrdiff_t slot;

	if ((const void *)cmd->sqe == req->async_data)
		return true;
	/*
	 * An io-wq worker runs without the ring's lock, beside submissions
	 * that may have fetched the same slot again.  With the lock, the
	 * fetched and unpublished positions are those of the submission
	 * running now, if any.
	 */
	if (issue_flags & IO_URING_F_UNLOCKED)
		return false;
	slot = cmd->sqe - ctx->sq_sqes;
	if (ctx->flags & IORING_SETUP_SQE128)
		slot >>= 1;
	/* What the caller read of the slot is read before the head. */
	smp_rmb();
	head = hyk_sq_head(ctx);
	/* The head is read before the fetch position it was published from. */
	smp_rmb();
	pos = READ_ONCE(ctx->cached_sq_head);
	/*
	 * Newest first: the command being submitted is the last fetched.
	 * The application can write the head too: at most one ring's worth.
	 */
	for (n = 0; pos != head && n < ctx->sq_entries; pos--, n++) {
		idx = (pos - 1) & mask;
		if (!(ctx->flags & IORING_SETUP_NO_SQARRAY))
			idx = READ_ONCE(ctx->sq_array[idx]);
		if (idx == slot)
			return true;
	}
	return false;
}
#else
static inline bool hyk_sqe_is_ours(const struct io_uring_cmd *cmd,
				   unsigned int issue_flags)
{
	return true;
}
#endif

/*
 * Pin user pages without faulting them in, for io_uring's non-blocking
 * issue.  6.3 removed pin_user_pages_fast_only(); FOLL_NOFAULT is the
 * public way to say the same since.
 */
static inline int hyk_pin_nofault(unsigned long start, int nr,
				  unsigned int gup_flags, struct page **pages)
{
#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
	return pin_user_pages_fast(start, nr, gup_flags | FOLL_NOFAULT, pages);
#else
	return pin_user_pages_fast_only(start, nr, gup_flags, pages);
#endif
}

/* 6.3 made vm_flags writable only through helpers that check the lock. */
static inline void hyk_vm_flags_set(struct vm_area_struct *vma,
				    vm_flags_t flags)
{
#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void hyk_vm_flags_clear(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/*
 * A MEMORY_DEVICE_GENERIC page holds one reference while nobody uses it,
 * from memmap_init_zone_device() on, on 6.1 and 6.12 alike (only private
 * and coherent device pages start at 0).  An emulated pool's pages hold
 * the one split_page() gave them.  So, on both kernels, a pool page with
 * more is mapped, pinned (FOLL_PIN adds GUP_PIN_COUNTING_BIAS) or held
 * by get_user_pages() or a pipe.
 */
#define HYK_PAGE_IDLE_REFS	1

/*
 * Page table entries mapping an order-0 page.  6.12 has no
 * page_mapcount(); 6.1's folio_mapcount() is out of line and not exported.
 */
static inline int hyk_page_mapcount(struct page *page)
{
#if KERNEL_VERSION(6, 12, 0) <= LINUX_VERSION_CODE
	return folio_mapcount(page_folio(page));
#else
	return page_mapcount(page);
#endif
}

/* 6.6 renamed destroy_memory_type() (memory types became refcounted). */
static inline void hyk_put_memory_type(struct memory_dev_type *memtype)
{
#if KERNEL_VERSION(6, 6, 0) <= LINUX_VERSION_CODE
	put_memory_type(memtype);
#else
	destroy_memory_type(memtype);
#endif
}

/*
 * 6.7 lets a driver mark a queued command cancelable: io_uring then calls
 * ->uring_cmd again with IO_URING_F_CANCEL when the ring is torn down, so
 * that closing it does not wait for the command to finish.  Before 6.7
 * there is no such call, and the flag is never set.
 */
#if KERNEL_VERSION(6, 7, 0) <= LINUX_VERSION_CODE
#define HYK_HAVE_URING_CANCEL	1
#define HYK_URING_F_CANCEL	IO_URING_F_CANCEL
static inline void hyk_uring_mark_cancelable(struct io_uring_cmd *cmd,
					     unsigned int issue_flags)
{
	io_uring_cmd_mark_cancelable(cmd, issue_flags);
}
#else
#define HYK_HAVE_URING_CANCEL	0
#define HYK_URING_F_CANCEL	0
static inline void hyk_uring_mark_cancelable(struct io_uring_cmd *cmd,
					     unsigned int issue_flags)
{
}
#endif

#endif /* _HYK_COMPAT_H */
