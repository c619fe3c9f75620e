// SPDX-License-Identifier: GPL-2.0-only OR MIT
#include "outcome.h"

static const char *const gpuar_outcome_names[GPUAR_OUTCOME_COUNT] = {
	[GPUAR_OUTCOME_IMMEDIATE] = "immediate",
	[GPUAR_OUTCOME_EXACT] = "exact",
	[GPUAR_OUTCOME_LATE] = "late",
	[GPUAR_OUTCOME_FENCE] = "fence",
	[GPUAR_OUTCOME_TIMEOUT] = "timeout",
	[GPUAR_OUTCOME_CANCELLED] = "cancelled",
};

const char *gpuar_outcome_str(u32 outcome)
{
	return outcome < GPUAR_OUTCOME_COUNT ? gpuar_outcome_names[outcome] :
	       NULL;
}
