/* SPDX-License-Identifier: MIT */
/*
 * Order statistics of the benchmark: percentiles of one repetition's wake
 * latencies, and the median with its spread across repetitions.
 *
 * Percentiles are nearest-rank: the p-th percentile of n sorted samples is
 * sample number ceil(p/100 * n) (1-based), so it is always a value that
 * was measured, never an interpolation; p = 0 gives the minimum and
 * p = 100 the maximum. With 2000 samples p99 is the 1980th smallest.
 */
#ifndef GPUAR_BENCH_STATS_H
#define GPUAR_BENCH_STATS_H

#include <stddef.h>

/* Sort @n doubles ascending, in place. */
void bench_sort(double *v, size_t n);

/*
 * Nearest-rank percentile @p (0..100) of @n ascending samples; 0 when
 * n == 0 (callers report an empty set as such, never as a latency).
 */
double bench_percentile(const double *sorted, size_t n, double p);

/* The median and range of a handful of values (one per repetition). */
struct bench_spread {
	double median;	/* middle value; mean of the two middle ones if n is even */
	double min;
	double max;
};

/* @v is left untouched (a copy is sorted). All zero when n == 0. */
struct bench_spread bench_spread_of(const double *v, size_t n);

#endif /* GPUAR_BENCH_STATS_H */
