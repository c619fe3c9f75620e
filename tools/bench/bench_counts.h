/* SPDX-License-Identifier: MIT */
/*
 * Machine-independent counts of one repetition, which explain its CPU
 * and latency figures without depending on how fast the machine is: the
 * port's timer firings (its stats' timer_fires), the waiter thread's
 * context switches (getrusage RUSAGE_THREAD: voluntary ones are blocks,
 * each ended by a wake-up; involuntary ones are preemptions), and the
 * wake-ups of a strategy's helper thread.
 */
#ifndef GPUAR_BENCH_COUNTS_H
#define GPUAR_BENCH_COUNTS_H

#include <stdbool.h>
#include <stdint.h>

struct bench_counts {
	uint64_t voluntary;	/* the waiter thread's voluntary switches */
	uint64_t involuntary;	/* and involuntary ones */
	uint64_t helper_wakeups;
	uint64_t timer_fires;
	bool has_timer;		/* the strategy waits through a port */
};

/* The calling thread's context switches into @c; 0 or -errno. */
int bench_counts_thread(struct bench_counts *c);

struct bench_counts_per_wait {
	double timer_fires;	/* < 0: no port */
	double ctx_switches;
	double wakeups;
};

/* The counts between @a and @b, per wait of @waits (> 0). */
struct bench_counts_per_wait bench_counts_per_wait(const struct bench_counts *a,
						   const struct bench_counts *b,
						   uint64_t waits);

#endif /* GPUAR_BENCH_COUNTS_H */
