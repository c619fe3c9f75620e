/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Outcome names: the one table of the words the module's statistics, the
 * library and gpuar-stat print for enum gpuar_outcome, so the three always
 * agree (gpuar-stat parses what the module prints).
 */
#ifndef GPUAR_CORE_OUTCOME_H
#define GPUAR_CORE_OUTCOME_H

#include "types.h"

/*
 * "immediate", "exact", "late", "fence", "timeout" or "cancelled" for an
 * assigned enum gpuar_outcome; NULL for 0 and numbers >= the count.
 */
const char *gpuar_outcome_str(u32 outcome);

#endif /* GPUAR_CORE_OUTCOME_H */
