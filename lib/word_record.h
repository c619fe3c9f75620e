/* SPDX-License-Identifier: MIT */
/*
 * The record of a word wait that ended (core/word_state.h), as both the
 * user engine and the wait driver hand it out.
 */
#ifndef GPUAR_LIB_WORD_RECORD_H
#define GPUAR_LIB_WORD_RECORD_H

#include "internal.h"
#include "word_state.h"

#include <errno.h>

/*
 * Fill @rec for the ended wait @ws; @value is what its last check read.
 * The status is the outcome's errno, as the module's: -ETIME for TIMEOUT,
 * -ECANCELED for CANCELLED, else 0.
 */
static inline void gpuar_word_record(const struct gpuar_word_state *ws,
				     struct gpuar_record *rec, u64 user_data,
				     u64 point, u64 value)
{
	*rec = (struct gpuar_record){
		.user_data = user_data,
		.start_ns = ws->start_ns,
		.complete_ns = ws->complete_ns,
		.slept_ns = ws->slept_ns,
		.point = point,
		.value = value,
		.checks = ws->checks,
		.version = GPUAR_RECORD_VERSION_1,
		.source = GPUAR_SOURCE_WORD,
		.outcome = ws->outcome,
	};
	if (ws->outcome == GPUAR_OUTCOME_TIMEOUT)
		rec->status = -ETIME;
	else if (ws->outcome == GPUAR_OUTCOME_CANCELLED)
		rec->status = -ECANCELED;
}

#endif /* GPUAR_LIB_WORD_RECORD_H */
