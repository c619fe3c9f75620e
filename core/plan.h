/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Wait plans: the binary form (struct gpuar_plan, in the ABI) and its
 * validation. The kernel validates every plan it is given with
 * gpuar_plan_check(); the library's text parser (plan_text.h) produces only
 * plans that pass it.
 */
#ifndef GPUAR_CORE_PLAN_H
#define GPUAR_CORE_PLAN_H

#include "types.h"

/* What is wrong with a binary plan; GPUAR_PLAN_OK (0) when nothing is. */
enum gpuar_plan_fault {
	GPUAR_PLAN_OK = 0,
	GPUAR_PLAN_BAD_PARK,		/* park is not an enum gpuar_park */
	GPUAR_PLAN_BAD_FLAGS,		/* unknown flag bits */
	GPUAR_PLAN_BLOCK_PREDICT,	/* block takes no prediction */
	GPUAR_PLAN_PARK_RANGE,		/* park_ns > GPUAR_PLAN_PARK_NS_MAX */
	GPUAR_PLAN_BACKSTOP_RANGE,	/* backstop_ns > GPUAR_PLAN_BACKSTOP_NS_MAX */
	GPUAR_PLAN_WINDOW_RANGE,	/* predict with window outside 1..16 */
	GPUAR_PLAN_SLEEP_RANGE,		/* margin/min/max sleep > GPUAR_PLAN_SLEEP_NS_MAX */
	GPUAR_PLAN_UNUSED_NONZERO,	/* a field the plan's kind does not use is set */
	GPUAR_PLAN_PAD_NONZERO,		/* pad is not zero */
	GPUAR_PLAN_FAULT_COUNT
};

enum gpuar_plan_fault gpuar_plan_check(const struct gpuar_plan *plan);

/* A short lower-case phrase for @fault ("window out of range 1..16"). */
const char *gpuar_plan_fault_str(enum gpuar_plan_fault fault);

static inline bool gpuar_plan_predicts(const struct gpuar_plan *plan)
{
	return plan->flags & GPUAR_PLAN_PREDICT;
}

#endif /* GPUAR_CORE_PLAN_H */
