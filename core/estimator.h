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
 * A fixed-size table of points in caller-provided memory: up to @limit
 * entries, which never move once placed (a wait holds its entry by
 * pointer), and a separate index of @cap u32 slots (a power of two, at
 * least twice @limit from gpuar_est_table_cap) mapping a point to its
 * entry: open addressing, Fibonacci hashing (the top bits of
 * point * 2^64 / phi), linear probing. A deletion shifts the rest of its
 * run back into the hole (Knuth's algorithm R), so the index keeps no
 * tombstones: at most half full, a probe for any point, known or not,
 * ends after a few slots however many points came and went.
 *
 * Once @limit points are used, a new point is refused, or, in a table
 * that evicts (gpuar_est_table_evict_idle), takes the entry of the point
 * idle longest: entries no wait holds (gpuar_est_entry_hold) sit on an
 * LRU list in the order they became idle, so eviction takes its head in
 * O(1). An evicted point's samples and statistics are forgotten.
 *
 * Concurrency is the caller's. Which points exist (the index, each
 * entry's point, slot and used) changes only in gpuar_est_table_get; the
 * holds and the LRU list change in hold, release and get. A caller that
 * serialises get with one lock, and hold, release and get with another,
 * may look points up (find) holding only the first: the module does so
 * with port->mutex, taking port->lock only to hold, release or add.
 */
struct gpuar_est_table;

struct gpuar_est_entry {
	u64 point;
	/* Waits ended, by outcome: the statistics' fixed array, copied whole. */
	u64 outcomes[GPUAR_OUTCOME_SLOTS];
	struct gpuar_est est;
	struct gpuar_est_table *tab;	/* release finds the LRU list */
	/* On the table's idle list (oldest first) while used and unheld. */
	struct gpuar_est_entry *idle_prev, *idle_next;
	u32 holds;		/* waits holding the entry */
	u32 slot;		/* its index slot, while used */
	bool used;
};

/* An empty index slot; any other value is an entry's number plus one. */
#define GPUAR_EST_SLOT_EMPTY 0U

struct gpuar_est_table {
	struct gpuar_est_entry *entries;	/* limit of them */
	u32 *index;		/* cap slots */
	u32 cap;		/* power of two */
	u32 bits;		/* log2(cap) */
	u32 limit;		/* <= cap */
	u32 used;		/* entries[0..used) have been placed */
	bool evict_idle;
	struct gpuar_est_entry *idle_head, *idle_tail;
	/*
	 * Index slots read by lookups, insertions and deletions, ever: what
	 * the table's cost is made of, counted for tests and fdinfo.
	 */
	u64 visits;
};

/*
 * The index slot count for a table that holds at most @limit points: the
 * power of two at least twice @limit (the index stays at most half full,
 * so a probe ends quickly), at most 2^30.
 */
u32 gpuar_est_table_cap(u32 limit);

/*
 * @entries holds min(@limit, @cap) entries, @index @cap slots; a cap that
 * is not a power of two, or NULL memory, gives a table that holds
 * nothing.
 */
void gpuar_est_table_init(struct gpuar_est_table *tab,
			  struct gpuar_est_entry *entries, u32 *index,
			  u32 cap, u32 limit);
/*
 * @point's entry; NULL when it has none. Reads only what get changes (and
 * counts visits).
 */
struct gpuar_est_entry *gpuar_est_table_find(struct gpuar_est_table *tab,
					     u64 point);
/*
 * Find @point or add it with @window (a new entry is idle); NULL when the
 * table is at its limit (and, if it evicts, every point is held).
 */
struct gpuar_est_entry *gpuar_est_table_get(struct gpuar_est_table *tab,
					    u64 point, u32 window);

/* From now on a full table evicts the point idle longest. */
void gpuar_est_table_evict_idle(struct gpuar_est_table *tab);

/* A wait holds @e (it cannot be evicted) until it releases it. */
void gpuar_est_entry_hold(struct gpuar_est_table *tab,
			  struct gpuar_est_entry *e);
void gpuar_est_entry_release(struct gpuar_est_entry *e);

#endif /* GPUAR_CORE_ESTIMATOR_H */
