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
