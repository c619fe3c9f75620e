/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The word-wait state machine, one implementation for every waiter: the
 * module's port (kmod/word_*.c), the library's userspace port and its
 * wait driver. Given the checks a caller makes of a word (and when), it
 * decides the outcome, when the next check is due, when a blocked reader
 * should wake to spin, and what the point's estimator learns. The callers
 * only differ in how they get to run at those times (an hrtimer and pinned
 * pages, a timerfd and an epoll set, a plain loop).
 *
 *   begin (the check at submission)
 *     done, first submit         -> IMMEDIATE, nothing learned
 *     done, resubmit             -> EXACT: the checks before the resubmit
 *                                   saw it pending; learns now - start
 *     pending, estimator sleep s -> SLEEP until start + s
 *     pending, no sleep          -> PARK
 *   a check in SLEEP
 *     done                       -> LATE, learns late(now - start)
 *     pending                    -> PARK
 *   a check in PARK, every interval (a flag plan's park_ns, else the poll
 *   interval, never below the floor)
 *     done                       -> EXACT, learns now - start
 *   and in either phase, with backstop timeouts (ports): a check at or past
 *   the backstop that finds the work pending -> TIMEOUT. The backstop is
 *   counted from the submission: a flag plan's backstop_ns, or the default
 *   when that is 0 and for poll plans. No check is scheduled past it.
 *
 * start is the submission for a first submit and the original start for a
 * resubmit (a wait that ended TIMEOUT and is submitted again, start given),
 * so a resubmitted wait keeps learning from when the work began, and a
 * sleep that has already run out by the resubmission is skipped.
 *
 * Not thread-safe: the caller serialises a wait's checks (a port lock).
 */
#ifndef GPUAR_CORE_WORD_STATE_H
#define GPUAR_CORE_WORD_STATE_H

#include "estimator.h"
#include "types.h"

enum gpuar_word_phase {
	GPUAR_WORD_SLEEP = 1,	/* in the estimator's sleep: done next is LATE */
	GPUAR_WORD_PARK = 2,	/* checking every interval: done is EXACT */
	GPUAR_WORD_DONE = 3,	/* ended; outcome and complete_ns are set */
};

/* How a caller runs its waits: its defaults, in nanoseconds. */
struct gpuar_word_cfg {
	u64 poll_interval_ns;	/* check interval of poll plans */
	u64 floor_ns;		/* no check interval below this */
	u64 backstop_ns;	/* backstop of poll plans and flag plans with 0 */
	bool backstop_timeout;	/* end with TIMEOUT at the backstop (ports) */
};

struct gpuar_word_state {
	struct gpuar_plan plan;
	u64 start_ns;		/* what the estimator measures from */
	u64 submit_ns;		/* the first check's time */
	u64 sleep_ns;		/* the estimator's sleep, from start_ns; 0: none */
	u64 predicted_at_ns;	/* the sleep's end + the plan's margin; 0: none */
	u64 next_ns;		/* the next check; GPUAR_U64_MAX once done */
	u64 backstop_at_ns;	/* TIMEOUT from here, GPUAR_U64_MAX: never */
	u64 interval_ns;	/* between checks in PARK */
	u64 park_from_ns;	/* when PARK began */
	u64 slept_ns;		/* time spent in SLEEP, from submission */
	u64 complete_ns;	/* the check that ended it */
	u32 checks;		/* checks made, the one at submission included */
	u8 phase;		/* enum gpuar_word_phase */
	u8 outcome;		/* enum gpuar_outcome once DONE */
};

/*
 * True when a word-wait entry is valid on its own, whatever its line:
 * flags and pad zero, a slot of the line, a plan that passes the binary
 * check and is not block (the vendor's blocking wait, which no port runs),
 * and a start_ns not after @now. A port refuses an entry that fails this
 * with EINVAL before it looks its line up (ENOENT), so an entry with both
 * faults is EINVAL on either engine.
 */
bool gpuar_word_entry_valid(const struct gpuar_word_wait *e, u64 now);

/* The interval between checks of a wait under @plan (floor applied). */
u64 gpuar_word_interval_ns(const struct gpuar_plan *plan,
			   const struct gpuar_word_cfg *cfg);

/* The backstop of a wait under @plan, counted from its submission. */
u64 gpuar_word_backstop_ns(const struct gpuar_plan *plan,
			   const struct gpuar_word_cfg *cfg);

/*
 * Begin a wait whose check at submission, at @now, found @done. @resubmit:
 * it resumes a wait that ended TIMEOUT and @start_ns is that wait's start
 * (never after @now); else @start_ns is @now. @est may be NULL (no
 * estimator: never sleeps, learns nothing). Returns true when it ended.
 */
bool gpuar_word_begin(struct gpuar_word_state *ws,
		      const struct gpuar_plan *plan, struct gpuar_est *est,
		      u64 start_ns, bool resubmit, u64 now, bool done,
		      const struct gpuar_word_cfg *cfg);

/* A later check, at @now, found @done. Returns true when the wait ended. */
bool gpuar_word_checked(struct gpuar_word_state *ws, struct gpuar_est *est,
			u64 now, bool done);

/*
 * The check at an imminent raise, at @now, before the sleep ends: done
 * ends it as any check in SLEEP does (LATE: the work finished before the
 * early wake); pending, the wait leaves SLEEP, so whoever sees the store
 * next (a claimer, a busy reader) ends it EXACT at that time instead of
 * halving the estimate as a late wake, while the next timed check stays
 * at the sleep's end. Returns true when the wait ended.
 */
bool gpuar_word_raise_checked(struct gpuar_word_state *ws,
			      struct gpuar_est *est, u64 now, bool done);

/*
 * The early wake of a blocked reader for a wait still in its estimator
 * sleep: the port's wake-up latency @wakelat_ns before the sleep ends, so
 * the reader is spinning by the time the sleep ends rather than starting
 * then; never more than half the sleep early, so a noisy latency cannot
 * turn the sleep into a spin. Counted from the wait's start, like the
 * sleep. 0 for a wait not in SLEEP (nothing to wake early for).
 */
u64 gpuar_word_early_ns(const struct gpuar_word_state *ws, u64 wakelat_ns);

/*
 * Until when a claim at @now leases a wait (the timer leaves it to the
 * claimer meanwhile): @lease_ns past its predicted completion, the end
 * of its estimator sleep plus the plan's margin, or past @now if that is
 * later; never past the backstop. A claim made early, at a raise that
 * allowed for a slow wake-up, still covers the store it was made for.
 */
u64 gpuar_word_claim_until(const struct gpuar_word_state *ws, u64 now,
			   u64 lease_ns);

/*
 * True when a blocked reader may spin on this wait: it slept on the
 * estimator (so its completion is predicted) and has not ended.
 */
bool gpuar_word_busy_candidate(const struct gpuar_word_state *ws);

/*
 * The estimator entry for @plan at @point in @tab: a new point's window is
 * the plan's, or 1 without one, and it only grows, to the largest window
 * of the predicting plans that used it: shrinking drops samples, so plans
 * with different windows at one point would keep discarding each other's.
 * NULL when the point is new and the table is at its limit.
 */
struct gpuar_est_entry *gpuar_word_point(struct gpuar_est_table *tab,
					 u64 point,
					 const struct gpuar_plan *plan);
/*
 * The window rule of gpuar_word_point for an entry found beforehand
 * (gpuar_est_table_find): grow its window to @plan's.
 */
void gpuar_word_point_fit(struct gpuar_est_entry *e,
			  const struct gpuar_plan *plan);

#endif /* GPUAR_CORE_WORD_STATE_H */
