// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Validation of the binary wait plan. The module runs every plan it is
 * given through gpuar_plan_check(); the text parser produces only plans
 * that pass it, so a plan is valid in the same sense on both sides.
 */
#include "plan.h"

static bool park_known(u32 park)
{
	return park == GPUAR_PARK_BLOCK || park == GPUAR_PARK_POLL ||
	       park == GPUAR_PARK_FLAG;
}

/*
 * Faults are reported in a fixed order (kind, flags, park fields, predict
 * fields, pad) so one plan always gets the same answer.
 */
enum gpuar_plan_fault gpuar_plan_check(const struct gpuar_plan *plan)
{
	bool predicts = plan->flags & GPUAR_PLAN_PREDICT;

	if (!park_known(plan->park))
		return GPUAR_PLAN_BAD_PARK;
	if (plan->flags & ~(u32)GPUAR_PLAN_FLAGS_ALL)
		return GPUAR_PLAN_BAD_FLAGS;
	if (plan->park == GPUAR_PARK_BLOCK && predicts)
		return GPUAR_PLAN_BLOCK_PREDICT;
	if (plan->park == GPUAR_PARK_FLAG) {
		if (plan->park_ns > GPUAR_PLAN_PARK_NS_MAX)
			return GPUAR_PLAN_PARK_RANGE;
		if (plan->backstop_ns > GPUAR_PLAN_BACKSTOP_NS_MAX)
			return GPUAR_PLAN_BACKSTOP_RANGE;
	} else if (plan->park_ns || plan->backstop_ns) {
		return GPUAR_PLAN_UNUSED_NONZERO;
	}
	if (predicts) {
		if (plan->window < GPUAR_PLAN_WINDOW_MIN ||
		    plan->window > GPUAR_PLAN_WINDOW_MAX)
			return GPUAR_PLAN_WINDOW_RANGE;
		/*
		 * Bounded as the backstop is: nothing sleeps longer than
		 * the backstop anyway, and a bound keeps the sums on them
		 * far from overflow.
		 */
		if (plan->margin_ns > GPUAR_PLAN_SLEEP_NS_MAX ||
		    plan->min_sleep_ns > GPUAR_PLAN_SLEEP_NS_MAX ||
		    plan->max_sleep_ns > GPUAR_PLAN_SLEEP_NS_MAX)
			return GPUAR_PLAN_SLEEP_RANGE;
	} else if (plan->margin_ns || plan->min_sleep_ns ||
		   plan->max_sleep_ns || plan->window) {
		return GPUAR_PLAN_UNUSED_NONZERO;
	}
	if (plan->pad)
		return GPUAR_PLAN_PAD_NONZERO;
	return GPUAR_PLAN_OK;
}

const char *gpuar_plan_fault_str(enum gpuar_plan_fault fault)
{
	switch (fault) {
	case GPUAR_PLAN_OK:
		return "valid";
	case GPUAR_PLAN_BAD_PARK:
		return "park is not block, poll or flag";
	case GPUAR_PLAN_BAD_FLAGS:
		return "unknown flag bits";
	case GPUAR_PLAN_BLOCK_PREDICT:
		return "block takes no prediction";
	case GPUAR_PLAN_PARK_RANGE:
		return "park_ns out of range (max 10 ms)";
	case GPUAR_PLAN_BACKSTOP_RANGE:
		return "backstop_ns out of range (max 1 s)";
	case GPUAR_PLAN_WINDOW_RANGE:
		return "window out of range 1..16";
	case GPUAR_PLAN_SLEEP_RANGE:
		return "margin, min_sleep or max_sleep out of range (max 1 s)";
	case GPUAR_PLAN_UNUSED_NONZERO:
		return "a field the plan's kind does not use is set";
	case GPUAR_PLAN_PAD_NONZERO:
		return "pad is not zero";
	case GPUAR_PLAN_FAULT_COUNT:
		break;
	}
	return "unknown plan fault";
}
