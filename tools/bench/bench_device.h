/* SPDX-License-Identifier: MIT */
/*
 * The simulated device: a thread pinned to its own CPU that stands in for
 * a GPU. For each launched job it sleeps (an absolute hrtimer sleep with 1
 * ns timer slack) until a short lead before the job's due time, spins the
 * rest, stores the sequence number into the stream's line with a release
 * store and records when it stored. It never spins through a whole job:
 * that would take a CPU from the waiter and distort every ratio.
 *
 * Each stream's line is the first 64 bytes of a page of its own, as a
 * device-written line must be. A launch is a doorbell: the launching
 * thread publishes the job and wakes the device only when the device is
 * asleep past the new job's wake time (a real launch costs a few µs too).
 *
 * After a store the device can notify, as a producer that wakes its
 * consumer would: a futex wake (the stand-in for an interrupt-driven
 * blocking sync) or a vgem fence signal. The CPU time of that notification
 * is measured apart, because it counts against the strategy while the rest
 * of the device's time does not.
 */
#ifndef GPUAR_BENCH_DEVICE_H
#define GPUAR_BENCH_DEVICE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define BENCH_MAX_STREAMS 64

struct bench_stream {
	uint64_t *line;			/* 64-byte line at the start of its page */
	_Atomic uint64_t due_ns;	/* when the pending job's store is due */
	_Atomic uint64_t due_seq;	/* the sequence number it stores */
	_Atomic uint64_t stored_seq;	/* last stored; store_ns is its time */
	_Atomic uint64_t store_ns;
	_Atomic uint32_t fence;		/* vgem fence to signal after the store, 0 none */
};

enum bench_notify {
	BENCH_NOTIFY_NONE,
	BENCH_NOTIFY_FUTEX,	/* bump ->event and wake its waiters */
	BENCH_NOTIFY_VGEM,	/* signal the stream's vgem fence */
};

struct bench_device {
	struct bench_stream stream[BENCH_MAX_STREAMS];
	unsigned int streams;
	uint64_t lead_ns;		/* spin this long before each store */
	int cpu;			/* pinned CPU, -1 for none */

	_Atomic enum bench_notify notify;
	int vgem_fd;			/* for BENCH_NOTIFY_VGEM */
	_Atomic uint32_t event;		/* futex word bumped after each store */
	_Atomic uint32_t event_waiters;	/* waiters blocked on ->event */

	_Atomic uint32_t doorbell;	/* futex word bumped by each launch */
	_Atomic uint64_t asleep_until;	/* device's wake time; 0 while awake */
	_Atomic bool stop;
	_Atomic uint64_t notify_cpu_ns;	/* CPU spent notifying */
	_Atomic uint64_t notify_errors;	/* failed fence signals */
	_Atomic uint64_t late_stores;	/* stores after their due time + 50 µs */

	pthread_t thread;
	bool running;
};

/*
 * Map the lines and start the thread on @cpu (-1: unpinned). Returns 0 or
 * a negative errno.
 */
int bench_device_start(struct bench_device *dev, unsigned int streams,
		       uint64_t lead_ns, int cpu);
void bench_device_stop(struct bench_device *dev);

/*
 * Launch a job on @stream: store @seq into its line @duration_ns from now.
 * The stream must be idle (its previous job stored). Returns the due time.
 */
uint64_t bench_device_launch(struct bench_device *dev, unsigned int stream,
			     uint64_t seq, uint64_t duration_ns);

/* The store time of @seq, waiting the few ns between store and record. */
uint64_t bench_device_store_ns(struct bench_stream *s, uint64_t seq);

/* Clear the lines and counters between repetitions (device idle). */
void bench_device_reset(struct bench_device *dev);

#endif /* GPUAR_BENCH_DEVICE_H */
