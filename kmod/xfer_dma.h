/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The DMA_MEMCPY path of the transfer engine, used when the platform has
 * a dmaengine channel that can copy memory (IOAT, DSA, a fabric engine).
 */
#ifndef _HYK_XFER_DMA_H
#define _HYK_XFER_DMA_H

#include <linux/types.h>

struct dma_chan;
struct hyk_dev;
struct iov_iter;

struct dma_chan *hyk_dma_request(void);
void hyk_dma_release(struct dma_chan *chan);
int hyk_dma_copy(struct hyk_dev *hdev, u64 pool_off, struct iov_iter *iter,
		 bool to_user);

#endif /* _HYK_XFER_DMA_H */
