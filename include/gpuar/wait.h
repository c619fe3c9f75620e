/* SPDX-License-Identifier: MIT */
/*
 * The wait driver: one wait on one source under one plan, in the calling
 * thread, with a per-point deadline estimator (the shared core's, the same
 * code the module runs). Include through <gpuar/gpuar.h>.
 *
 *   block    the source's blocking wait only.
 *   else     one check; done -> IMMEDIATE.
 *   flag     arm the source.
 *   predict  if the estimator gives a sleep: sleep to start + sleep,
 *            check; done -> LATE.
 *   poll     check every poll interval until done -> EXACT.
 *   flag     park on the source for at most park_ns at a time, with a
 *            status query at least every backstop_ns (the error
 *            authority; 0: the default backstop, 1 s, as a port's),
 *            checking after each park, until done -> EXACT.
 *
 * Done is never reported before a check saw it; a source error (check or
 * status query) ends the wait with that error.
 */
#ifndef GPUAR_WAIT_H
#define GPUAR_WAIT_H

#include <stdint.h>
#include <linux/gpuar.h>
#include <gpuar/source.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpuar_error;

#ifndef GPUAR_DEPRECATED_FOR	/* <gpuar/gpuar.h>'s, which warns */
#define GPUAR_DEPRECATED_FOR(f)
#endif

/* Sized and reserved as struct gpuar_port_options (<gpuar/gpuar.h>). */
struct gpuar_waiter_options {
	uint32_t size;				/* 0 or sizeof(struct gpuar_waiter_options) */
	uint32_t max_points;			/* 0: 1024; full, the least recently
						 * used idle point gives way */
	const struct gpuar_clock *clock;	/* NULL: gpuar_clock_monotonic() */
	uint64_t poll_interval_ns;		/* "poll" plans; 0: 50 us (floor 1 us) */
	uint32_t reserved[12];			/* must be zero */
};

/*
 * Counters of one waiter, over all its waits. outcomes has the kernel
 * statistics' fixed GPUAR_OUTCOME_SLOTS; counters added later take
 * reserved space, which reads zero until then.
 */
struct gpuar_waiter_stats {
	uint64_t waits;
	uint64_t checks;
	uint64_t sleeps;
	uint64_t parks;
	uint64_t status_queries;
	uint64_t errors;
	uint64_t outcomes[GPUAR_OUTCOME_SLOTS];	/* by enum gpuar_outcome */
	uint64_t reserved[8];
};

struct gpuar_waiter;

/*
 * @opts may be NULL (defaults). Errors: -ENOMEM, -EINVAL/-E2BIG (options,
 * with GPUAR_E_INVALID_ARGUMENT in *@diag). Thread-safe.
 */
int gpuar_waiter_new(struct gpuar_waiter **waiter,
		     const struct gpuar_waiter_options *opts,
		     struct gpuar_error *diag);
void gpuar_waiter_free(struct gpuar_waiter *waiter);

/*
 * Block the calling thread until @src is done (the blocking path: no port,
 * no fd; for an event loop, submit to a port and gpuar_port_reap), under
 * @plan (NULL: the default plan, GPUAR_PLAN_DEFAULT_TEXT in
 * <gpuar/gpuar.h>) at estimator point @point; on success fill
 * *@rec (source WORD, or FENCE when the source has an fd and no word;
 * outcome IMMEDIATE, LATE or EXACT; a block plan gives EXACT with
 * checks 0) and return 0.
 *
 * Errors: -EINVAL + GPUAR_E_INVALID_PLAN (plan fails validation),
 * -EOPNOTSUPP (block plan on a source without a blocking wait), -ENOSPC
 * (a new point, every point of the full table in a wait), or the
 * source's negative error with GPUAR_E_BACKEND; then rec->status holds
 * the error and rec->outcome is 0.
 *
 * Thread-safe: several threads may wait through one waiter at once (the
 * estimator table has a lock; waits at one point then share it).
 */
int gpuar_wait_blocking(struct gpuar_waiter *waiter,
			const struct gpuar_src *src,
			const struct gpuar_plan *plan, uint64_t point,
			uint64_t user_data, struct gpuar_record *rec,
			struct gpuar_error *diag);
/* gpuar_wait_blocking's 1.0 name, until 1.0. */
int gpuar_wait(struct gpuar_waiter *waiter, const struct gpuar_src *src,
	       const struct gpuar_plan *plan, uint64_t point,
	       uint64_t user_data, struct gpuar_record *rec,
	       struct gpuar_error *diag)
	GPUAR_DEPRECATED_FOR(gpuar_wait_blocking);

struct gpuar_interrupt;	/* <gpuar/gpuar.h> */

/*
 * Make gpuar_wait() through @waiter return -EINTR (GPUAR_E_SYSTEM in
 * *diag, no record) while @intr (<gpuar/gpuar.h>; NULL: none) is set:
 * looked at before every sleep and park, and an estimator sleep on the
 * monotonic clock waits on the interrupt's fd too (a park lasts one
 * check interval; a block plan's vendor wait cannot be interrupted).
 * Keep @intr alive while set. Thread-safe.
 */
void gpuar_waiter_set_interrupt(struct gpuar_waiter *waiter,
				const struct gpuar_interrupt *intr);

/* Snapshot of the counters. Thread-safe. */
void gpuar_waiter_stats(struct gpuar_waiter *waiter,
			struct gpuar_waiter_stats *stats);

/*
 * The point's prediction in *@ns (0 if none; @ns NULL: only whether the
 * point is known); -ENOENT for an unknown point, -EINVAL for a NULL waiter.
 * Thread-safe.
 */
int gpuar_waiter_prediction(struct gpuar_waiter *waiter, uint64_t point,
			    uint64_t *ns);

#ifdef __cplusplus
}
#endif

#endif /* GPUAR_WAIT_H */
