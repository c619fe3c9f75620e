/* SPDX-License-Identifier: MIT */
/*
 * CPU accounting of one repetition.
 *
 * A thread's own CPU time comes from its thread clock
 * (CLOCK_THREAD_CPUTIME_ID, or pthread_getcpuclockid for another thread).
 * The whole machine's busy time is CPUs x wall - idle (from /proc/stat):
 * that catches work a strategy moves into interrupts, softirqs and timer
 * callbacks, which Debian's kernels (no IRQ time accounting) charge to
 * nobody's thread. The simulated device's own busy time is subtracted —
 * except the cost of its wake-ups (a futex wake, a fence signal), which is
 * the producer's share of a strategy and counts against it.
 */
#ifndef GPUAR_BENCH_CPU_H
#define GPUAR_BENCH_CPU_H

#include <pthread.h>
#include <stdint.h>

/* The calling thread's CPU time, ns. */
uint64_t bench_thread_cpu_ns(void);

/* Another thread's CPU time, ns; 0 if its clock cannot be read. */
uint64_t bench_other_thread_cpu_ns(pthread_t thread);

struct bench_cpu_sample {
	uint64_t wall_ns;	/* wall time of the repetition */
	unsigned int cpus;	/* CPUs /proc/stat counted */
	uint64_t idle_ticks;	/* idle + iowait delta, USER_HZ ticks */
	long ticks_per_s;	/* USER_HZ */
	uint64_t device_ns;	/* device thread CPU delta */
	uint64_t device_notify_ns;	/* of which its wake-ups (counted) */
};

/*
 * Busy CPU time of the machine during the repetition, minus the device's
 * own work (but not its wake-ups), ns. Clamped at 0: tick granularity
 * can make a nearly idle interval come out slightly negative.
 */
double bench_system_cpu_ns(const struct bench_cpu_sample *s);

#endif /* GPUAR_BENCH_CPU_H */
