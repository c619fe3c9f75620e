/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A CPU thread that plays the GPU: after a delay it stores a sequence
 * number into a line's word with release semantics, as a device's write
 * behind its work would, and records when it stored.
 */
#ifndef GPUAR_SELFTEST_DEVICE_THREAD_H
#define GPUAR_SELFTEST_DEVICE_THREAD_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <linux/types.h>

#include "port_fixture.h"

struct device_store {
	__u64 *word;
	__u64 value;
	unsigned int delay_ms;
	__u64 stored_ns;	/* CLOCK_MONOTONIC time of the store */
	pthread_t thread;
	int started;
};

static inline void *device_store_run(void *arg)
{
	struct device_store *d = arg;

	sleep_ms(d->delay_ms);
	d->stored_ns = mono_ns();
	__atomic_store_n(d->word, d->value, __ATOMIC_RELEASE);
	return NULL;
}

/* Store @value into @word after @delay_ms, from another thread. */
static inline int device_store_start(struct device_store *d, __u64 *word,
				     __u64 value, unsigned int delay_ms)
{
	d->word = word;
	d->value = value;
	d->delay_ms = delay_ms;
	d->stored_ns = 0;
	d->started = pthread_create(&d->thread, NULL, device_store_run, d) == 0;
	return d->started ? 0 : -1;
}

/* Wait for the store; returns its time. */
static inline __u64 device_store_join(struct device_store *d)
{
	if (d->started)
		pthread_join(d->thread, NULL);
	d->started = 0;
	return d->stored_ns;
}

#endif /* GPUAR_SELFTEST_DEVICE_THREAD_H */
