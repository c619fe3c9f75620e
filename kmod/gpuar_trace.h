/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Tracepoints: a wait submitted, a word checked, a wait completed, a
 * cancel answered (with how many waits it compared to find its user
 * data's, which the index by user data keeps to the tree's height plus
 * the waits of that user data).
 * Only fixed-size fields (no strings): __assign_str() changed its
 * arguments in 6.12, and nothing here needs one.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM gpuar

#if !defined(GPUAR_KMOD_GPUAR_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define GPUAR_KMOD_GPUAR_TRACE_H

#include <linux/tracepoint.h>

#include "port.h"

TRACE_EVENT(gpuar_submit,
	    TP_PROTO(const struct gpuar_port *port, const struct gpuar_wait *w),
	    TP_ARGS(port, w),
	    TP_STRUCT__entry(__field(const void *, port)
			     __field(u64, user_data)
			     __field(u64, point)
			     __field(u64, target)
			     __field(u8, source)),
	    TP_fast_assign(__entry->port = port;
			   __entry->user_data = w->user_data;
			   __entry->point = w->rec.point;
			   __entry->target = w->target;
			   __entry->source = w->source;),
	    TP_printk("port=%p user_data=0x%llx source=%u point=0x%llx target=%llu",
		      __entry->port, __entry->user_data, __entry->source,
		      __entry->point, __entry->target)
);

TRACE_EVENT(gpuar_check,
	    TP_PROTO(const struct gpuar_port *port, const struct gpuar_wait *w,
		     u64 word, u64 now),
	    TP_ARGS(port, w, word, now),
	    TP_STRUCT__entry(__field(const void *, port)
			     __field(u64, user_data)
			     __field(u64, word)
			     __field(u64, target)
			     __field(u64, since_ns)
			     __field(u32, checks)),
	    TP_fast_assign(__entry->port = port;
			   __entry->user_data = w->user_data;
			   __entry->word = word;
			   __entry->target = w->target;
			   __entry->since_ns = now - w->start_ns;
			   __entry->checks = w->ws.checks;),
	    TP_printk("port=%p user_data=0x%llx word=%llu target=%llu since_ns=%llu checks=%u",
		      __entry->port, __entry->user_data, __entry->word,
		      __entry->target, __entry->since_ns, __entry->checks)
);

TRACE_EVENT(gpuar_complete,
	    TP_PROTO(const struct gpuar_port *port, const struct gpuar_record *r),
	    TP_ARGS(port, r),
	    TP_STRUCT__entry(__field(const void *, port)
			     __field(u64, user_data)
			     __field(u64, wait_ns)
			     __field(u64, slept_ns)
			     __field(s32, status)
			     __field(u32, checks)
			     __field(u8, source)
			     __field(u8, outcome)),
	    TP_fast_assign(__entry->port = port;
			   __entry->user_data = r->user_data;
			   /* A fence may have signalled before its submit. */
			   __entry->wait_ns = r->complete_ns > r->start_ns ?
					      r->complete_ns - r->start_ns : 0;
			   __entry->slept_ns = r->slept_ns;
			   __entry->status = r->status;
			   __entry->checks = r->checks;
			   __entry->source = r->source;
			   __entry->outcome = r->outcome;),
	    TP_printk("port=%p user_data=0x%llx source=%u outcome=%u status=%d wait_ns=%llu slept_ns=%llu checks=%u",
		      __entry->port, __entry->user_data, __entry->source,
		      __entry->outcome, __entry->status, __entry->wait_ns,
		      __entry->slept_ns, __entry->checks)
);

TRACE_EVENT(gpuar_cancel,
	    TP_PROTO(const struct gpuar_port *port, u64 user_data,
		     unsigned int looked, long ret),
	    TP_ARGS(port, user_data, looked, ret),
	    TP_STRUCT__entry(__field(const void *, port)
			     __field(u64, user_data)
			     __field(long, ret)
			     __field(unsigned int, looked)),
	    TP_fast_assign(__entry->port = port;
			   __entry->user_data = user_data;
			   __entry->ret = ret;
			   __entry->looked = looked;),
	    TP_printk("port=%p user_data=0x%llx looked=%u ret=%ld",
		      __entry->port, __entry->user_data, __entry->looked,
		      __entry->ret)
);

#endif /* GPUAR_KMOD_GPUAR_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE gpuar_trace
#include <trace/define_trace.h>
