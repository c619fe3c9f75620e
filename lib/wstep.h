/* SPDX-License-Identifier: MIT */
/*
 * The word-wait state machine shared by the user engine's port, the wait
 * driver and nothing else: given the checks a caller makes (and when), it
 * decides the outcome, the next check time and what the estimator learns,
 * so both give the same outcomes as the module for the same device.
 *
 *   first check: done -> IMMEDIATE (a resubmit, whose earlier checks saw
 *   the work pending: EXACT, estimator learns the time since its original
 *   start, as the module). Else, with a predicted sleep: SLEEP
 *   until start + sleep; the check then: done -> LATE (estimator learns
 *   late), else PARK. In PARK a check every interval (park_ns for flag,
 *   the poll interval for poll): done -> EXACT (estimator learns the
 *   residual). With backstop timeouts (the port, as the module): every wait
 *   has a backstop counted from its submission (a flag plan's backstop_ns,
 *   else the port's default), no check is scheduled past it, and a check at
 *   or after it that finds the work pending ends the wait with TIMEOUT
 *   (status -ETIME), in either phase.
 */
#ifndef GPUAR_LIB_WSTEP_H
#define GPUAR_LIB_WSTEP_H

#include "internal.h"

enum gpuar_wstep_phase {
	GPUAR_WSTEP_SLEEP = 1,
	GPUAR_WSTEP_PARK = 2,
	GPUAR_WSTEP_DONE = 3,
};

/* How a caller runs its waits. */
struct gpuar_wstep_cfg {
	u64 poll_interval_ns;	/* check interval of poll plans */
	u64 floor_ns;		/* no check interval below this */
	u64 backstop_ns;	/* default backstop (poll, flag with 0) */
	bool backstop_timeout;	/* end with TIMEOUT at the backstop (port) */
};

struct gpuar_wstep {
	struct gpuar_plan plan;
	u64 start_ns;
	u64 next_ns;		/* when the next check is due */
	u64 sleep_from_ns;	/* when the estimator sleep began */
	u64 park_from_ns;	/* when parking began */
	u64 backstop_at_ns;	/* TIMEOUT from here (port), UINT64_MAX: never */
	u64 slept_ns;
	u64 interval_ns;
	u64 complete_ns;
	u32 checks;
	u8 phase;
	u8 outcome;		/* enum gpuar_outcome once DONE */
};

/*
 * Begin a wait whose first check, at @now, found @done. @resubmit: the
 * wait resumes one that ended TIMEOUT (the ABI's start_ns given), and
 * @start_ns is its original start. @est may be NULL (no estimator: never
 * sleeps, learns nothing). Returns true when done.
 */
bool gpuar_wstep_begin(struct gpuar_wstep *ws, const struct gpuar_plan *plan,
		       struct gpuar_est *est, u64 start_ns, bool resubmit,
		       u64 now, bool done, const struct gpuar_wstep_cfg *cfg);

/* A later check, at @now, found @done. Returns true when the wait ended. */
bool gpuar_wstep_checked(struct gpuar_wstep *ws, struct gpuar_est *est,
			 u64 now, bool done);

/*
 * The estimator entry for @plan at @point: a new point's window is the
 * plan's (or 1); a predicting plan with a larger window grows it.
 */
struct gpuar_est_entry *gpuar_wstep_point(struct gpuar_est_table *tab,
					  u64 point,
					  const struct gpuar_plan *plan);

/* Fill a record of a word wait that ended. */
void gpuar_wstep_record(const struct gpuar_wstep *ws, struct gpuar_record *rec,
			u64 user_data, u64 point, u64 value);

#endif /* GPUAR_LIB_WSTEP_H */
