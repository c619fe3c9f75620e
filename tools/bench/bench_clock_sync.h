/* SPDX-License-Identifier: MIT */
/*
 * Mapping a device timer onto CLOCK_MONOTONIC from ping-pong samples: the
 * host takes T0, writes a flag, the device reads its timer (G) as soon as
 * it sees the flag and replies, the host sees the reply at T1. G was read
 * between T0 and T1, so offset = G - (T0 + T1) / 2 is right to within
 * half the round trip. Of many tries the shortest round trip wins (the
 * others were delayed by a preemption, a bus transaction, a late reply).
 * Pure: unit-tested without a device.
 */
#ifndef GPUAR_BENCH_CLOCK_SYNC_H
#define GPUAR_BENCH_CLOCK_SYNC_H

#include <stdbool.h>
#include <stdint.h>

struct bench_clock_sync {
	int64_t offset_ns;	/* device timer - CLOCK_MONOTONIC */
	uint64_t half_rtt_ns;	/* the uncertainty: half the best round trip */
	unsigned int samples;	/* samples offered */
	bool valid;		/* at least one sample was usable */
};

void bench_clock_sync_init(struct bench_clock_sync *cs);

/* Offer one sample (@t0 <= @t1, host clock; @g, device clock). */
void bench_clock_sync_add(struct bench_clock_sync *cs, uint64_t t0, uint64_t g,
			  uint64_t t1);

/* @device_ns (device timer) on CLOCK_MONOTONIC, by the chosen offset. */
uint64_t bench_clock_sync_host_ns(const struct bench_clock_sync *cs,
				  uint64_t device_ns);

#endif /* GPUAR_BENCH_CLOCK_SYNC_H */
