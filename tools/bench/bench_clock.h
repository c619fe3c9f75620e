/* SPDX-License-Identifier: MIT */
/* CLOCK_MONOTONIC in ns: the clock of stores, observations and records. */
#ifndef GPUAR_BENCH_CLOCK_H
#define GPUAR_BENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline struct timespec bench_ts(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ULL),
		.tv_nsec = (long)(ns % 1000000000ULL),
	};

	return ts;
}

/* Sleep until @ns on CLOCK_MONOTONIC (absolute, so no drift), restarting on signals. */
static inline void bench_sleep_until(uint64_t ns)
{
	struct timespec ts = bench_ts(ns);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

static inline void bench_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

#endif /* GPUAR_BENCH_CLOCK_H */
