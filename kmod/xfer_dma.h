/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The DMA_MEMCPY path of the transfer engine, used when the platform has
 * a dmaengine channel that can copy memory (IOAT, DSA, a fabric engine).
 */
#ifndef _HYPER_XFER_DMA_H
#define _HYPER_XFER_DMA_H

#include <linux/types.h>

struct dma_chan;
struct hyper_dev;
struct iov_iter;

struct dma_chan *hyper_dma_request(void);
void hyper_dma_release(struct dma_chan *chan);
int hyper_dma_copy(struct hyper_dev *hdev, u64 pool_off, struct iov_iter *iter,
		   bool to_user);

#endif /* _HYPER_XFER_DMA_H */
