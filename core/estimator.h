/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The deadline estimator, one per readback point (a caller-chosen u64 key),
 * and the port's wake-up latency estimate. Same code in the module and the
 * library.
 *
 * A point keeps a ring of its last `window` samples; the prediction is
 * their minimum, and there is none before the first sample (so the first
 * wait at a point never sleeps). An exact outcome records the residual
 * (completion - wait start). A late outcome (the first check after a sleep
 * found the work done, `woke` ns after start) records
 * min(woke, prediction) / 2: late wakes lower the prediction geometrically
 * and never raise it. Early costs CPU, late costs latency.
 *
 * sleep = prediction - margin (saturating); none if that is below
 * min_sleep; capped at max_sleep.
 *
 * Not thread-safe: callers serialise access to a point (the port lock).
 */
#ifndef GPUAR_CORE_ESTIMATOR_H
#define GPUAR_CORE_ESTIMATOR_H

#include "types.h"

struct gpuar_est {
	u64 ring[GPUAR_PLAN_WINDOW_MAX];
	u64 samples;		/* samples ever recorded */
	u8 window;		/* 1..GPUAR_PLAN_WINDOW_MAX */
	u8 len;			/* valid entries in ring, <= window */
	u8 head;		/* index the next sample is written to */
	u8 pad[5];
};

/* Empty estimator keeping @window samples (clamped to 1..16). */
void gpuar_est_init(struct gpuar_est *est, u32 window);

/*
 * Change the window, keeping the newest min(len, window) samples, so a
 * plan with another window at the same point takes effect at once.
 */
void gpuar_est_set_window(struct gpuar_est *est, u32 window);

/* The prediction (min of the ring) in *@ns; false when there is none. */
bool gpuar_est_predict(const struct gpuar_est *est, u64 *ns);

/* Record an exact outcome: the work completed @residual_ns after start. */
void gpuar_est_exact(struct gpuar_est *est, u64 residual_ns);

/*
 * Record a late outcome: the first check after the sleep, @woke_ns after
 * start, found the work already done. Records min(woke, prediction) / 2
 * (just woke / 2 when there is no prediction).
 */
void gpuar_est_late(struct gpuar_est *est, u64 woke_ns);

/*
 * The sleep, in ns after the wait's start, that @plan's predict rule gives
 * for this point; 0 means do not sleep (no prediction, the plan does not
 * predict, or the sleep is below min_sleep).
 */
u64 gpuar_est_sleep_ns(const struct gpuar_est *est,
		       const struct gpuar_plan *plan);

/*
 * The port's wake-up latency: the time from a timer firing to the woken
 * reader running. Kept as a high quantile of recent samples (not the
 * minimum: a wake that comes late costs the full latency of the wait, one
 * that comes early only a little spinning).
 */
#define GPUAR_WAKELAT_SAMPLES 32
#define GPUAR_WAKELAT_QUANTILE_PCT 90

struct gpuar_wakelat {
	u64 ring[GPUAR_WAKELAT_SAMPLES];
	u32 len;
	u32 head;
};

void gpuar_wakelat_init(struct gpuar_wakelat *wl);
void gpuar_wakelat_record(struct gpuar_wakelat *wl, u64 ns);
/* The GPUAR_WAKELAT_QUANTILE_PCT quantile (nearest rank); 0 if empty. */
u64 gpuar_wakelat_quantile(const struct gpuar_wakelat *wl);

/*
 * When a blocked reader should be woken, in ns after the wait's start:
 * sleep_ns minus the wake-up latency (saturating at 0). @sleep_ns is
 * gpuar_est_sleep_ns(), which already stands the margin before the
 * predicted completion; the reader then checks the word itself.
 */
u64 gpuar_est_early_wake_ns(u64 sleep_ns, u64 wakelat_ns);

/*
 * A fixed-capacity table of points, open addressing in caller-provided
 * memory. @cap must be a power of two (any other cap, or NULL @slots,
 * gives a table that holds nothing); once @limit (at most @cap) points are
 * used, a new point is refused, or, in a table that evicts
 * (gpuar_est_table_evict_idle), takes the place of the least recently
 * taken point no wait holds (gpuar_est_entry_hold), whose samples and
 * statistics are forgotten. An entry never moves: a held entry's address
 * stays valid until it is released. init marks every slot free.
 */
struct gpuar_est_entry {
	u64 point;
	/* Waits ended, by outcome: the statistics' fixed array, copied whole. */
	u64 outcomes[GPUAR_OUTCOME_SLOTS];
	struct gpuar_est est;
	u64 taken;		/* table tick of the last hold */
	u32 holds;		/* waits holding the entry */
	bool used;
	bool gone;		/* evicted: a free slot that does not end a probe */
};

struct gpuar_est_table {
	struct gpuar_est_entry *slots;
	u32 cap;		/* power of two */
	u32 limit;		/* <= cap */
	u32 used;
	bool evict_idle;
	u64 tick;
};

/*
 * The slot count for a table that holds at most @limit points: the power
 * of two at least twice @limit (open addressing stays at most half full,
 * so a probe ends quickly), at most 2^30.
 */
u32 gpuar_est_table_cap(u32 limit);

void gpuar_est_table_init(struct gpuar_est_table *tab,
			  struct gpuar_est_entry *slots, u32 cap, u32 limit);
struct gpuar_est_entry *gpuar_est_table_find(const struct gpuar_est_table *tab,
					     u64 point);
/*
 * Find @point or add it with @window; NULL when the table is at its limit
 * (and, if it evicts, every point is held).
 */
struct gpuar_est_entry *gpuar_est_table_get(struct gpuar_est_table *tab,
					    u64 point, u32 window);

/* From now on a full table evicts its least recently held idle point. */
void gpuar_est_table_evict_idle(struct gpuar_est_table *tab);

/* A wait holds @e (it cannot be evicted) until it releases it. */
void gpuar_est_entry_hold(struct gpuar_est_table *tab,
			  struct gpuar_est_entry *e);
void gpuar_est_entry_release(struct gpuar_est_entry *e);

#endif /* GPUAR_CORE_ESTIMATOR_H */
