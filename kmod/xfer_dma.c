// SPDX-License-Identifier: GPL-2.0
/*
 * Copies through a dmaengine DMA_MEMCPY channel.  Each page-sized piece is
 * mapped for the channel's device, copied and waited for before the next;
 * the workers give the parallelism.  The pool side is a window without
 * struct pages (mapped with dma_map_resource) or emulated pool pages.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/uio.h>

#include "hyper.h"
#include "xfer_dma.h"

static bool use_dma = true;
module_param(use_dma, bool, 0444);
MODULE_PARM_DESC(use_dma,
		 "Copy with a dmaengine DMA_MEMCPY channel when one exists (default: yes)");

/**
 * hyk_dma_request() - find a DMA_MEMCPY channel
 *
 * Return: the channel, or NULL when there is none (or use_dma=0) and the
 * CPU copies.
 */
struct dma_chan *hyk_dma_request(void)
{
	struct dma_chan *chan;
	dma_cap_mask_t mask;

	if (!use_dma)
		return NULL;
	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	chan = dma_request_chan_by_mask(&mask);
	if (IS_ERR(chan))
		return NULL;
	pr_info("copying with DMA channel %s\n", dma_chan_name(chan));
	return chan;
}

/**
 * hyk_dma_release() - give the channel back
 * @chan:	channel from hyk_dma_request(), or NULL
 */
void hyk_dma_release(struct dma_chan *chan)
{
	if (chan)
		dma_release_channel(chan);
}

static dma_addr_t hyk_dma_map_pool(struct hyk_pool *pool,
				   struct device *dev, phys_addr_t phys,
				   size_t n, enum dma_data_direction dir)
{
	if (pool->source == HYPER_SOURCE_WINDOW)
		return dma_map_resource(dev, phys, n, dir, 0);
	return dma_map_page(dev, pfn_to_page(PHYS_PFN(phys)),
			    offset_in_page(phys), n, dir);
}

static void hyk_dma_unmap_pool(struct hyk_pool *pool, struct device *dev,
			       dma_addr_t addr, size_t n,
			       enum dma_data_direction dir)
{
	if (pool->source == HYPER_SOURCE_WINDOW)
		dma_unmap_resource(dev, addr, n, dir, 0);
	else
		dma_unmap_page(dev, addr, n, dir);
}

static int hyk_dma_one(struct hyk_dev *hdev, struct page *page,
		       size_t off, phys_addr_t phys, size_t n, bool to_user)
{
	struct hyk_pool *pool = &hdev->pool;
	struct dma_chan *chan = hdev->engine.dma;
	atomic_t *aborts = &hdev->engine.dma_aborts;
	enum dma_data_direction udir = to_user ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	enum dma_data_direction pdir = to_user ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
	struct device *dev = chan->device->dev;
	struct dma_async_tx_descriptor *tx;
	dma_addr_t uaddr, paddr;
	dma_cookie_t cookie;
	int ret = 0, gen;

	uaddr = dma_map_page(dev, page, off, n, udir);
	if (dma_mapping_error(dev, uaddr))
		return -EIO;
	paddr = hyk_dma_map_pool(pool, dev, phys, n, pdir);
	if (dma_mapping_error(dev, paddr)) {
		ret = -EIO;
		goto out_unmap_user;
	}
	tx = dmaengine_prep_dma_memcpy(chan, to_user ? uaddr : paddr,
				       to_user ? paddr : uaddr, n,
				       DMA_CTRL_ACK);
	if (!tx) {
		ret = -EIO;
		goto out_unmap_pool;
	}
	gen = atomic_read(aborts);
	cookie = dmaengine_submit(tx);
	dma_async_issue_pending(chan);
	if (dma_sync_wait(chan, cookie) != DMA_COMPLETE) {
		/*
		 * A copy that timed out (or failed) may still be running, and
		 * the pages cannot go back while the engine can write them.
		 * dmaengine has no way to abort one descriptor: terminate acts
		 * on the whole channel, and a channel completes in order, so
		 * the other workers' descriptors queued behind this one would
		 * wait on it and time out too.  Waiting for ever instead would
		 * hang the worker, and with it rmmod, on a wedged engine.  So
		 * the channel is terminated, and every copy in flight on it
		 * fails with -EIO below: a timeout costs the transfers that
		 * shared the channel at that moment, never data.
		 */
		atomic_inc(aborts);
		dmaengine_terminate_sync(chan);
		ret = -EIO;
	} else if (atomic_read(aborts) != gen) {
		/*
		 * Another copy's timeout terminated the channel meanwhile.
		 * What a driver reports for a terminated descriptor varies
		 * (some mark every cookie complete), so this copy may never
		 * have run: fail it rather than report bytes not moved.
		 */
		ret = -EIO;
	}

out_unmap_pool:
	hyk_dma_unmap_pool(pool, dev, paddr, n, pdir);
out_unmap_user:
	dma_unmap_page(dev, uaddr, n, udir);
	return ret;
}

/**
 * hyk_dma_copy() - copy between the pool and user pages with DMA
 * @hdev:	device whose engine has a channel
 * @pool_off:	pool offset of the first byte
 * @iter:	the user side, a bvec iterator over pinned pages
 * @to_user:	true for a prefetch
 *
 * Return: 0, -EFAULT for a short iterator, -EIO if the channel failed.
 */
int hyk_dma_copy(struct hyk_dev *hdev, u64 pool_off, struct iov_iter *iter,
		 bool to_user)
{
	struct hyk_pool *pool = &hdev->pool;
	int ret = 0;

	while (iov_iter_count(iter) && !ret) {
		struct page *page;
		size_t start, done;
		ssize_t got;

		got = iov_iter_get_pages2(iter, &page, PAGE_SIZE, 1, &start);
		if (got <= 0)
			return got ? got : -EFAULT;
		for (done = 0; done < got && !ret; ) {
			phys_addr_t phys;
			void *va;
			u64 n = hyk_pool_span(pool, pool_off, &va, &phys);

			n = min_t(u64, n, got - done);
			ret = hyk_dma_one(hdev, page, start + done, phys, n,
					  to_user);
			pool_off += n;
			done += n;
		}
		put_page(page);
	}
	return ret;
}
