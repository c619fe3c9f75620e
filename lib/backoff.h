/* SPDX-License-Identifier: MIT */
/*
 * Back-off of a wait far past its prediction (lib/backoff.c): what the
 * library does where it drives a wait's checks (the user engine, the
 * wait driver) and its resubmissions (the vendor awaits, on either
 * engine). The module's own checks are its own (kmod/ is untouched).
 */
#ifndef GPUAR_LIB_BACKOFF_H
#define GPUAR_LIB_BACKOFF_H

#include "internal.h"
#include "word_state.h"

/*
 * A wait this long past its start (the original start of a resubmission)
 * is far past any prediction: one default backstop, 1 s. Before it the
 * plan's interval holds, as the plan promises.
 */
#define GPUAR_BACKOFF_AFTER_NS 1000000000ULL
/*
 * The longest interval a backed-off check waits (as a flag plan's longest
 * park, GPUAR_PLAN_PARK_NS_MAX): the worst a store that finally lands
 * waits to be seen, beyond a timer's wake-up.
 */
#define GPUAR_BACKOFF_CAP_NS 10000000ULL

/* True when a wait started at @start_ns has backed off by @now. */
static inline bool gpuar_backoff_due(u64 start_ns, u64 now)
{
	return now > start_ns && now - start_ns >= GPUAR_BACKOFF_AFTER_NS;
}

/*
 * The estimator a check of @ws at @now may teach: @est, or NULL once the
 * wait has backed off (a wait that long overdue is not a sample of its
 * work's duration: a lost store, a stalled device).
 */
struct gpuar_est *gpuar_backoff_est(const struct gpuar_word_state *ws,
				    struct gpuar_est *est, u64 now);

/*
 * A check of @ws at @now found the work pending and scheduled the next:
 * once backed off, the parked wait's interval doubles (from its plan's)
 * up to GPUAR_BACKOFF_CAP_NS, and its next check moves out to match
 * (never past its backstop). Returns true when it backed off.
 */
bool gpuar_backoff_step(struct gpuar_word_state *ws, u64 now);

/*
 * The park interval of the @k-th resubmission (k >= 1) of a flag wait
 * under a plan parking @park_ns: doubled per resubmission, up to
 * GPUAR_BACKOFF_CAP_NS (a longer plan interval stays as it is), so an
 * engine that does not back off itself (the module) checks a wait that
 * never completes less and less often. 0 (the check floor) counts as
 * the floor's default.
 */
u64 gpuar_backoff_park_ns(u64 park_ns, u32 k);

#endif /* GPUAR_LIB_BACKOFF_H */
