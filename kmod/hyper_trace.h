/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the transfer engine:
 *   echo 1 > /sys/kernel/tracing/events/hyper/enable
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM hyper

#if !defined(_HYK_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _HYK_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(hyper_xfer_submit,
	TP_PROTO(int dev, u32 nr, u64 bytes, bool fixed, bool inline_copy),
	TP_ARGS(dev, nr, bytes, fixed, inline_copy),
	TP_STRUCT__entry(
		__field(int, dev)
		__field(u32, nr)
		__field(u64, bytes)
		__field(bool, fixed)
		__field(bool, inline_copy)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->nr = nr;
		__entry->bytes = bytes;
		__entry->fixed = fixed;
		__entry->inline_copy = inline_copy;
	),
	TP_printk("hyper%d descs=%u bytes=%llu fixed=%d inline=%d",
		  __entry->dev, __entry->nr, __entry->bytes, __entry->fixed,
		  __entry->inline_copy)
);

TRACE_EVENT(hyper_xfer_complete,
	TP_PROTO(int dev, u32 nr, long res, u64 ns),
	TP_ARGS(dev, nr, res, ns),
	TP_STRUCT__entry(
		__field(int, dev)
		__field(u32, nr)
		__field(long, res)
		__field(u64, ns)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->nr = nr;
		__entry->res = res;
		__entry->ns = ns;
	),
	TP_printk("hyper%d descs=%u res=%ld ns=%llu", __entry->dev,
		  __entry->nr, __entry->res, __entry->ns)
);

/* Which worker copied which chunk: shows a transfer spread over workers. */
TRACE_EVENT(hyper_xfer_chunk,
	TP_PROTO(int dev, u32 chunk, u64 bytes),
	TP_ARGS(dev, chunk, bytes),
	TP_STRUCT__entry(
		__field(int, dev)
		__field(u32, chunk)
		__field(u64, bytes)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->chunk = chunk;
		__entry->bytes = bytes;
	),
	TP_printk("hyper%d chunk=%u bytes=%llu", __entry->dev, __entry->chunk,
		  __entry->bytes)
);

#endif /* _HYK_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE hyper_trace
#include <trace/define_trace.h>
