// SPDX-License-Identifier: GPL-2.0
/*
 * The transfer engine: copies between pool regions and user buffers.
 *
 * The user side is either a registered io_uring buffer, pinned once by
 * io_uring_register_buffers() and imported here as a bvec iterator (the
 * zero-copy path), or a plain address pinned for the life of the request.
 * Either way the CPU (or a DMA_MEMCPY channel) copies straight between the
 * pool and the user's pages: there is no bounce buffer.
 *
 * Small requests are copied by the submitter and complete at once.  The
 * rest are cut into chunks that up to `workers` work items pull from a
 * shared cursor, so one large transfer keeps every worker busy; the last
 * worker out completes the io_uring command.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#include <linux/libnvdimm.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uio.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "hyper.h"
#include "pool_meta.h"
#include "xfer_dma.h"

#define CREATE_TRACE_POINTS
#include "hyper_trace.h"

/**
 * struct hyk_seg - one descriptor, validated and ready to copy
 * @r:		the region, with a reference
 * @pool_off:	pool offset of the first byte
 * @addr:	user address of the first byte
 * @len:	bytes
 * @first_chunk: index of its first chunk within the request
 * @dir:	HYPER_DIR_PREFETCH or HYPER_DIR_STORE
 * @nr_pages:	pages pinned for a plain user address
 * @pages:	those pages; NULL for a registered buffer
 * @bvec:	one whole page each, over @pages
 */
struct hyk_seg {
	struct hyk_region *r;
	u64 pool_off;
	u64 addr;
	u64 len;
	u32 first_chunk;
	u8 dir;
	unsigned int nr_pages;
	struct page **pages;
	struct bio_vec *bvec;
};

struct hyk_xreq;

struct hyk_xworker {
	struct work_struct work;
	struct hyk_xreq *req;
};

/**
 * struct hyk_xreq - a request handed to the workers
 * @hdev:	the device
 * @cmd:	the io_uring command to complete
 * @fixed:	the user side is a registered buffer
 * @nr_segs:	descriptors
 * @nr_chunks:	chunks over all descriptors
 * @chunk_size:	the chunk size when the request was made
 * @bytes:	total bytes of all descriptors
 * @start_ns:	submit time, for the latency histogram
 * @next:	next chunk to claim
 * @workers_left: workers still running; the last one completes
 * @error:	first error a worker met, 0 if none
 * @segs:	the descriptors
 * @one:	storage for @segs when there is one descriptor
 * @nr_workers:	entries in @workers
 * @workers:	the work items
 */
struct hyk_xreq {
	struct hyk_dev *hdev;
	struct io_uring_cmd *cmd;
	bool fixed;
	u32 nr_segs;
	u32 nr_chunks;
	u32 chunk_size;
	u64 bytes;
	u64 start_ns;
	atomic_t next;
	atomic_t workers_left;
	int error;
	struct hyk_seg *segs;
	struct hyk_seg one;
	unsigned int nr_workers;
	struct hyk_xworker workers[];
};

/*
 * What the task-work callback needs, kept in the command's own pdu, and
 * whether io_uring asked for the command to be canceled: the pdu lives as
 * long as the command, so the cancel call can reach it safely while the
 * request it drives may be ending.
 */
struct hyk_cmd_pdu {
	long res;
	u64 done_ns;
	bool canceled;
};

static struct hyk_cmd_pdu *hyk_pdu(struct io_uring_cmd *cmd)
{
	BUILD_BUG_ON(sizeof(struct hyk_cmd_pdu) > sizeof(cmd->pdu));
	return (struct hyk_cmd_pdu *)cmd->pdu;
}

static int hyk_seg_rw(const struct hyk_seg *seg)
{
	return seg->dir == HYPER_DIR_PREFETCH ? ITER_DEST : ITER_SOURCE;
}

/* An iterator over [off, off + len) of the segment's user buffer. */
static int hyk_seg_iter(struct io_uring_cmd *cmd, bool fixed,
			const struct hyk_seg *seg, u64 off, u64 len,
			struct iov_iter *iter)
{
	u64 pos, skip;
	unsigned long idx;

	if (fixed)
		return io_uring_cmd_import_fixed(seg->addr + off, len,
						 hyk_seg_rw(seg), iter, cmd);
	/* Whole-page bvecs: find the page directly, never walk to it. */
	pos = offset_in_page(seg->addr) + off;
	idx = pos >> PAGE_SHIFT;
	skip = pos & ~PAGE_MASK;
	iov_iter_bvec(iter, hyk_seg_rw(seg), seg->bvec + idx,
		      seg->nr_pages - idx, skip + len);
	iov_iter_advance(iter, skip);
	return 0;
}

static int hyk_copy_range(struct hyk_dev *hdev, struct io_uring_cmd *cmd,
			  bool fixed, const struct hyk_seg *seg, u64 off,
			  u64 len)
{
	struct hyk_pool *pool = &hdev->pool;
	struct iov_iter iter;
	u64 done, n;
	int ret;

	ret = hyk_seg_iter(cmd, fixed, seg, off, len, &iter);
	if (ret)
		return ret;
	if (hdev->engine.dma) {
		ret = hyk_dma_copy(hdev, seg->pool_off + off, &iter,
				   seg->dir == HYPER_DIR_PREFETCH);
		/* An engine may leave what it wrote in a cache too (DSA, DDIO). */
		if (seg->r->obj && seg->dir == HYPER_DIR_STORE)
			hyk_pm_range(pool, seg->pool_off + off, len, true);
		return ret;
	}

	for (done = 0; done < len; done += n) {
		phys_addr_t phys;
		size_t copied;
		void *va;

		n = hyk_pool_span(pool, seg->pool_off + off + done, &va,
				  &phys);
		n = min(n, len - done);
		if (seg->dir == HYPER_DIR_PREFETCH)
			copied = copy_to_iter(va, n, &iter);
		else
			copied = copy_from_iter(va, n, &iter);
		/* A store into a shared object is final: it leaves the cache. */
		if (seg->r->obj && seg->dir == HYPER_DIR_STORE)
			arch_wb_cache_pmem(va, copied);
		if (copied != n)
			return -EFAULT;
	}
	if (seg->r->obj && seg->dir == HYPER_DIR_STORE)
		/* The write-backs complete before the store does. */
		wmb();
	return 0;
}

static int hyk_seg_pin(struct hyk_seg *seg, bool nonblock)
{
	u64 nr = DIV_ROUND_UP(offset_in_page(seg->addr) + seg->len, PAGE_SIZE);
	unsigned int gup = seg->dir == HYPER_DIR_PREFETCH ? FOLL_WRITE : 0;
	unsigned long start = seg->addr & PAGE_MASK;
	int pinned, i, ret = -ENOMEM;

	seg->pages = kvmalloc_array(nr, sizeof(*seg->pages), GFP_KERNEL);
	seg->bvec = kvmalloc_array(nr, sizeof(*seg->bvec), GFP_KERNEL);
	if (!seg->pages || !seg->bvec)
		goto out_free;
	/*
	 * In io_uring's non-blocking attempt only pages already mapped are
	 * taken; -EAGAIN makes io_uring retry from a worker that may fault.
	 */
	if (nonblock)
		pinned = hyk_pin_nofault(start, nr, gup, seg->pages);
	else
		pinned = pin_user_pages_fast(start, nr, gup, seg->pages);
	if (pinned != nr) {
		if (pinned > 0)
			unpin_user_pages(seg->pages, pinned);
		ret = nonblock ? -EAGAIN : -EFAULT;
		goto out_free;
	}
	seg->nr_pages = nr;
	for (i = 0; i < nr; i++)
		bvec_set_page(&seg->bvec[i], seg->pages[i], PAGE_SIZE, 0);
	return 0;

out_free:
	kvfree(seg->pages);
	kvfree(seg->bvec);
	seg->pages = NULL;
	seg->bvec = NULL;
	return ret;
}

static void hyk_seg_release(struct hyk_seg *seg)
{
	if (seg->pages) {
		/*
		 * Pages a prefetch may have written into must reach their
		 * backing store, even when the request failed half-way.
		 */
		unpin_user_pages_dirty_lock(seg->pages, seg->nr_pages,
					    seg->dir == HYPER_DIR_PREFETCH);
		kvfree(seg->pages);
		kvfree(seg->bvec);
		seg->pages = NULL;
	}
	if (seg->r) {
		if (seg->r->obj && seg->dir == HYPER_DIR_STORE)
			hyk_obj_store_end(seg->r);
		hyk_region_put(seg->r);
	}
	seg->r = NULL;
}

static void hyk_segs_release(struct hyk_seg *segs, u32 n)
{
	while (n--)
		hyk_seg_release(&segs[n]);
}

/*
 * Check one descriptor and take what it needs: the region, and the user
 * pages unless they are in a registered buffer.  Nothing is copied until
 * every descriptor of the request passed, so a bad one costs no data.
 */
static int hyk_seg_prepare(struct hyk_file *hf, struct io_uring_cmd *cmd,
			   bool fixed, bool nonblock,
			   const struct hyper_xfer *x, struct hyk_seg *seg)
{
	struct iov_iter iter;
	int ret;

	memset(seg, 0, sizeof(*seg));
	if (x->dir != HYPER_DIR_PREFETCH && x->dir != HYPER_DIR_STORE)
		return -EINVAL;
	if (x->reserved0 || x->flags & ~HYPER_XFER_FLAGS_MASK || !x->len)
		return -EINVAL;
	/* As read(2) and write(2): a store writes the pool, a prefetch reads. */
	if (!(cmd->file->f_mode & (x->dir == HYPER_DIR_STORE ? FMODE_WRITE :
				   FMODE_READ)))
		return -EBADF;
	if (x->addr + x->len < x->addr)
		return -EFAULT;
	seg->r = hyk_region_lookup(hf, x->handle);
	if (!seg->r)
		return -ENOENT;
	if (x->region_off > seg->r->size ||
	    x->len > seg->r->size - x->region_off) {
		ret = -EINVAL;
		goto out_put;
	}
	/* Published or opened shared objects are read-only. */
	if (seg->r->obj && x->dir == HYPER_DIR_STORE) {
		ret = hyk_obj_store_begin(seg->r);
		if (ret)
			goto out_put;
	}
	seg->pool_off = seg->r->off + x->region_off;
	seg->addr = x->addr;
	seg->len = x->len;
	seg->dir = x->dir;

	/* io_uring checks the range against the registered buffer. */
	if (fixed)
		ret = io_uring_cmd_import_fixed(seg->addr, seg->len,
						hyk_seg_rw(seg), &iter, cmd);
	else
		ret = hyk_seg_pin(seg, nonblock);
	if (ret)
		goto out_end;
	return 0;

out_end:
	if (seg->r->obj && seg->dir == HYPER_DIR_STORE)
		hyk_obj_store_end(seg->r);
out_put:
	hyk_region_put(seg->r);
	seg->r = NULL;
	return ret;
}

static void hyk_account(struct hyk_engine *eng, const struct hyk_seg *segs,
			u32 n, long res, u64 start_ns, u64 end_ns)
{
	struct hyk_stats *st = &eng->stats;
	u64 ns = end_ns - start_ns;
	u32 i;

	atomic64_inc(&st->requests);
	atomic64_inc(&st->latency[min_t(int, fls64(ns), HYK_LAT_BUCKETS - 1)]);
	if (res < 0) {
		atomic64_inc(&st->errors);
		return;
	}
	for (i = 0; i < n; i++) {
		int d = segs[i].dir == HYPER_DIR_PREFETCH ? HYK_STAT_PREFETCH :
			HYK_STAT_STORE;

		atomic64_add(segs[i].len, &st->bytes[d]);
		atomic64_inc(&st->ops[d]);
	}
}

/**
 * hyk_xfer_refused() - count a command that failed before moving data
 * @eng:	the engine
 * @ret:	its -errno; -EAGAIN is a retry, not a completion, and is not
 *		counted
 * @start_ns:	when it arrived
 */
void hyk_xfer_refused(struct hyk_engine *eng, int ret, u64 start_ns)
{
	if (ret != -EAGAIN)
		hyk_account(eng, NULL, 0, ret, start_ns, ktime_get_ns());
}

static int hyk_xfer_refuse(struct hyk_engine *eng, int ret, u64 start_ns)
{
	hyk_xfer_refused(eng, ret, start_ns);
	return ret;
}

/*
 * A request is over: give back what it held, count it and trace it, the
 * same way inline and from the workers.  Returns when it ended.
 */
static u64 hyk_xfer_end(struct hyk_dev *hdev, struct hyk_seg *segs,
			u32 n, long res, u64 start_ns)
{
	u64 now;

	hyk_segs_release(segs, n);
	now = ktime_get_ns();
	hyk_account(&hdev->engine, segs, n, res, start_ns, now);
	trace_hyper_xfer_complete(hdev->id, n, res, now - start_ns);
	return now;
}

static long hyk_xfer_inline(struct hyk_file *hf, struct io_uring_cmd *cmd,
			    bool fixed, struct hyk_seg *segs, u32 n,
			    u64 bytes, u64 start_ns)
{
	struct hyk_dev *hdev = hf->hdev;
	long res = bytes;
	u32 i;

	for (i = 0; i < n && res >= 0; i++) {
		int ret = hyk_copy_range(hdev, cmd, fixed, &segs[i], 0,
					 segs[i].len);

		if (ret)
			res = ret;
	}
	hyk_xfer_end(hdev, segs, n, res, start_ns);
	return res;
}

static void hyk_engine_unreserve(struct hyk_engine *eng)
{
	atomic_dec(&eng->inflight);
	wake_up(&eng->wait);
}

static void hyk_xfer_tw(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct hyk_cmd_pdu *pdu = hyk_pdu(cmd);

	io_uring_cmd_done(cmd, pdu->res, pdu->done_ns, issue_flags);
}

static void hyk_xreq_free(struct hyk_xreq *req)
{
	if (req->segs != &req->one)
		kvfree(req->segs);
	kfree(req);
}

static void hyk_xreq_finish(struct hyk_xreq *req)
{
	struct hyk_engine *eng = &req->hdev->engine;
	struct io_uring_cmd *cmd = req->cmd;
	long res = req->error ?: (long)req->bytes;
	u64 end_ns;

	end_ns = hyk_xfer_end(req->hdev, req->segs, req->nr_segs, res,
			      req->start_ns);
	hyk_xreq_free(req);
	hyk_engine_unreserve(eng);
	hyk_pdu(cmd)->res = res;
	/* CQE32 rings get the real completion time in big_cqe[0]. */
	hyk_pdu(cmd)->done_ns = end_ns;
	io_uring_cmd_complete_in_task(cmd, hyk_xfer_tw);
}

/* The segment that holds chunk @c: the last one starting at or before it. */
static struct hyk_seg *hyk_chunk_seg(struct hyk_xreq *req, u32 c)
{
	u32 lo = 0, hi = req->nr_segs - 1;

	while (lo < hi) {
		u32 mid = lo + (hi - lo + 1) / 2;

		if (req->segs[mid].first_chunk <= c)
			lo = mid;
		else
			hi = mid - 1;
	}
	return &req->segs[lo];
}

static void hyk_xfer_work(struct work_struct *work)
{
	struct hyk_xworker *w = container_of(work, struct hyk_xworker,
					     work);
	struct hyk_xreq *req = w->req;
	u32 c;

	while ((c = atomic_inc_return(&req->next) - 1) < req->nr_chunks) {
		struct hyk_seg *seg = hyk_chunk_seg(req, c);
		u64 off = (u64)(c - seg->first_chunk) * req->chunk_size;
		u64 len = min_t(u64, req->chunk_size, seg->len - off);
		int ret;

		/* The ring is going away: stop at this chunk. */
		if (READ_ONCE(hyk_pdu(req->cmd)->canceled))
			cmpxchg(&req->error, 0, -ECANCELED);
		/* After an error the rest is skipped: the request failed. */
		if (READ_ONCE(req->error))
			break;
		trace_hyper_xfer_chunk(req->hdev->id, c, len);
		ret = hyk_copy_range(req->hdev, req->cmd, req->fixed, seg,
				     off, len);
		if (ret)
			cmpxchg(&req->error, 0, ret);
		cond_resched();
	}
	if (atomic_dec_and_test(&req->workers_left))
		hyk_xreq_finish(req);
}

/* Take a slot below queue_depth, or say why not. */
static int hyk_engine_reserve(struct hyk_engine *eng, bool nonblock)
{
	for (;;) {
		unsigned int depth = READ_ONCE(eng->queue_depth);

		if (atomic_inc_return(&eng->inflight) <= depth)
			return 0;
		atomic_dec(&eng->inflight);
		if (nonblock)
			return -EAGAIN;
		if (wait_event_interruptible(eng->wait,
					     atomic_read(&eng->inflight) <
					     READ_ONCE(eng->queue_depth)))
			return -EINTR;
	}
}

static int hyk_xfer_queue(struct hyk_file *hf, struct io_uring_cmd *cmd,
			  bool fixed, struct hyk_seg *segs, u32 n,
			  u64 bytes, unsigned int issue_flags, u64 start_ns)
{
	struct hyk_engine *eng = &hf->hdev->engine;
	u32 chunk = READ_ONCE(eng->chunk_size);
	unsigned int nr_workers, i;
	struct hyk_xreq *req;
	u32 nr_chunks = 0;

	for (i = 0; i < n; i++) {
		segs[i].first_chunk = nr_chunks;
		nr_chunks += DIV_ROUND_UP_ULL(segs[i].len, chunk);
	}
	nr_workers = min(nr_chunks, READ_ONCE(eng->workers));

	/* The caller holds a queue slot; a failure here gives it back. */
	req = kzalloc(struct_size(req, workers, nr_workers), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	req->hdev = hf->hdev;
	req->cmd = cmd;
	req->fixed = fixed;
	req->nr_segs = n;
	req->nr_chunks = nr_chunks;
	req->chunk_size = chunk;
	req->bytes = bytes;
	req->start_ns = start_ns;
	if (n == 1) {
		req->one = segs[0];
		req->segs = &req->one;
	} else {
		req->segs = segs;
	}
	atomic_set(&req->next, 0);
	atomic_set(&req->workers_left, nr_workers);
	req->nr_workers = nr_workers;
	/*
	 * Before any worker runs, so that the command is on io_uring's
	 * cancelable list before it can complete (6.7+; nothing before).
	 */
	hyk_pdu(cmd)->canceled = false;
	hyk_uring_mark_cancelable(cmd, issue_flags);
	for (i = 0; i < nr_workers; i++) {
		req->workers[i].req = req;
		INIT_WORK(&req->workers[i].work, hyk_xfer_work);
		queue_work(eng->wq, &req->workers[i].work);
	}
	return -EIOCBQUEUED;
}

/**
 * hyk_xfer_submit() - validate and start the transfers of one command
 * @hf:		the open file, whose regions the descriptors name
 * @cmd:	the io_uring command
 * @descs:	descriptors, already copied out of user memory
 * @n:		how many, 1..HYPER_BATCH_MAX
 * @issue_flags: io_uring's issue flags
 * @start_ns:	when the command arrived, for the latency histogram
 *
 * Every outcome but -EAGAIN (io_uring retries) and -EIOCBQUEUED (the
 * workers account for it) is counted in the statistics here.
 *
 * Return: bytes moved when the copy was done at once, -EIOCBQUEUED when
 * the workers will complete @cmd, or -errno with nothing moved.
 */
int hyk_xfer_submit(struct hyk_file *hf, struct io_uring_cmd *cmd,
		    const struct hyper_xfer *descs, u32 n,
		    unsigned int issue_flags, u64 start_ns)
{
	bool nonblock = issue_flags & IO_URING_F_NONBLOCK;
	bool fixed = cmd->flags & IORING_URING_CMD_FIXED;
	struct hyk_engine *eng = &hf->hdev->engine;
	struct hyk_seg one, *segs;
	bool queued;
	u64 bytes = 0;
	u32 i = 0;
	int ret;

	/* Lengths first: each is checked again, with the rest, below. */
	for (i = 0; i < n; i++) {
		if (descs[i].len > HYPER_XFER_MAX_BYTES)
			return hyk_xfer_refuse(eng, -E2BIG, start_ns);
		bytes += descs[i].len;
	}
	if (bytes > HYPER_XFER_MAX_BYTES)
		return hyk_xfer_refuse(eng, -E2BIG, start_ns);
	/*
	 * A request for the workers takes its queue slot before it pins
	 * anything, so that submitters waiting for room hold no pages.
	 */
	queued = bytes > READ_ONCE(eng->inline_bytes);
	if (queued) {
		ret = hyk_engine_reserve(eng, nonblock);
		if (ret)
			return hyk_xfer_refuse(eng, ret, start_ns);
	}
	segs = n == 1 ? &one : kvcalloc(n, sizeof(*segs), GFP_KERNEL);
	if (!segs) {
		ret = -ENOMEM;
		goto out_slot;
	}
	for (i = 0; i < n; i++) {
		ret = hyk_seg_prepare(hf, cmd, fixed, nonblock, &descs[i],
				      &segs[i]);
		if (ret)
			goto out_release;
	}
	trace_hyper_xfer_submit(hf->hdev->id, n, bytes, fixed, !queued);

	if (!queued) {
		ret = hyk_xfer_inline(hf, cmd, fixed, segs, n, bytes,
				      start_ns);
		goto out_free;
	}
	ret = hyk_xfer_queue(hf, cmd, fixed, segs, n, bytes, issue_flags,
			     start_ns);
	if (ret == -EIOCBQUEUED)
		return ret;	/* the request owns @segs and the slot now */

out_release:
	hyk_segs_release(segs, i);
	if (segs != &one)
		kvfree(segs);
out_slot:
	if (queued)
		hyk_engine_unreserve(eng);
	return hyk_xfer_refuse(eng, ret, start_ns);
out_free:
	if (segs != &one)
		kvfree(segs);
	return ret;
}

/**
 * hyk_xfer_cancel() - io_uring is tearing down a ring with @cmd queued
 * @cmd:	a command hyk_xfer_submit() queued and marked cancelable
 *
 * Called from ->uring_cmd with IO_URING_F_CANCEL (6.7+).  The workers
 * stop at their next chunk and the request completes with -ECANCELED,
 * counted as an error; what was copied stays copied.
 */
void hyk_xfer_cancel(struct io_uring_cmd *cmd)
{
	WRITE_ONCE(hyk_pdu(cmd)->canceled, true);
}

/**
 * hyk_engine_set_workers() - change how many workers copy at once
 * @eng:	the engine
 * @workers:	HYPER_WORKERS_MIN..HYPER_WORKERS_MAX
 *
 * Return: 0, or -EINVAL out of range.
 */
int hyk_engine_set_workers(struct hyk_engine *eng, unsigned int workers)
{
	if (workers < HYPER_WORKERS_MIN || workers > HYPER_WORKERS_MAX)
		return -EINVAL;
	workqueue_set_max_active(eng->wq, workers);
	WRITE_ONCE(eng->workers, workers);
	return 0;
}

/**
 * hyk_engine_init() - set up a device's transfer engine
 * @hdev:	the device
 *
 * Return: 0 or -ENOMEM.
 */
int hyk_engine_init(struct hyk_dev *hdev)
{
	struct hyk_engine *eng = &hdev->engine;

	eng->workers = clamp_t(unsigned int, num_online_cpus(),
			       HYPER_WORKERS_MIN, HYPER_WORKERS_MAX);
	eng->chunk_size = SZ_1M;
	eng->queue_depth = 256;
	eng->inline_bytes = SZ_64K;
	atomic_set(&eng->inflight, 0);
	atomic_set(&eng->dma_aborts, 0);
	init_waitqueue_head(&eng->wait);
	eng->wq = alloc_workqueue("hyper%d_xfer", WQ_UNBOUND,
				  eng->workers, hdev->id);
	if (!eng->wq)
		return -ENOMEM;
	eng->dma = hyk_dma_request();
	return 0;
}

/**
 * hyk_engine_exit() - tear down a device's transfer engine
 * @hdev:	the device; no request can be in flight (each holds the file)
 */
void hyk_engine_exit(struct hyk_dev *hdev)
{
	struct hyk_engine *eng = &hdev->engine;

	destroy_workqueue(eng->wq);
	eng->wq = NULL;
	hyk_dma_release(eng->dma);
	eng->dma = NULL;
}
