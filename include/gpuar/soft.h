/* SPDX-License-Identifier: MIT */
/*
 * The soft backend: a CPU producer that stores values into words (line
 * slots) at given CLOCK_MONOTONIC times, from its own thread. It stands in
 * for a GPU stream in tests and demos, and is a real producer for CPU-side
 * stages. Like a device, it sleeps until just before each store, spins the
 * last stretch, and stores with release semantics. Include through
 * <gpuar/gpuar.h>.
 *
 * Experimental: every function here is at the symbol version
 * GPUAR_EXPERIMENTAL_0, outside the frozen ABI; a release may change it
 * (docs/stability.md).
 */
#ifndef GPUAR_SOFT_H
#define GPUAR_SOFT_H

#include <stdint.h>
#include <gpuar/source.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpuar_soft_producer;

/* Start a producer thread. Errors: -ENOMEM, pthread_create's errno. */
int gpuar_soft_producer_new(struct gpuar_soft_producer **producer);

/*
 * Stop the thread; stores not yet made are dropped. NULL is ignored. No
 * other call on @producer may run concurrently or follow.
 */
void gpuar_soft_producer_free(struct gpuar_soft_producer *producer);

/*
 * Store @value into *@word at @at_ns (stores due together land in the
 * order given). Errors: -ENOMEM. Thread-safe.
 */
int gpuar_soft_store_at(struct gpuar_soft_producer *producer, uint64_t *word,
			uint64_t value, uint64_t at_ns);

/* gpuar_soft_store_at(producer, word, value, now + @delay_ns). Thread-safe. */
int gpuar_soft_store_after(struct gpuar_soft_producer *producer,
			   uint64_t *word, uint64_t value, uint64_t delay_ns);

/*
 * Make the producer's status query fail with @error (a negative errno)
 * from @at_ns on, as a device fault would. Thread-safe.
 */
void gpuar_soft_fail_at(struct gpuar_soft_producer *producer, int error,
			uint64_t at_ns);

/* Stores made so far. Thread-safe. */
uint64_t gpuar_soft_stores(struct gpuar_soft_producer *producer);

/*
 * The time the store of @value into @word was made (read just before the
 * store, so whoever saw the value saw it at or after this time), or 0 if
 * it was not (yet), or is not among the last 4096 stores made (the
 * producer keeps a bounded history). Thread-safe.
 */
uint64_t gpuar_soft_stored_at(struct gpuar_soft_producer *producer,
			      const uint64_t *word, uint64_t value);

/*
 * A source over a producer's word: check loads the word, status is the
 * producer's fault (gpuar_soft_fail_at), block waits for the store (a
 * condition variable the producer signals), park uses the clock's word
 * wait. Keep the struct alive while the source is in use.
 */
struct gpuar_soft_source {
	struct gpuar_src source;
	struct gpuar_soft_producer *producer;
	const uint64_t *word;
	uint64_t target;
};

const struct gpuar_src *gpuar_soft_source_init(struct gpuar_soft_source *ss,
						  struct gpuar_soft_producer *producer,
						  const uint64_t *word,
						  uint64_t target);

#ifdef __cplusplus
}
#endif

#endif /* GPUAR_SOFT_H */
