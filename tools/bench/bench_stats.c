// SPDX-License-Identifier: MIT
#include "bench_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_sort(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_double);
}

double bench_percentile(const double *sorted, size_t n, double p)
{
	size_t rank;

	if (n == 0)
		return 0.0;
	if (p <= 0.0)
		return sorted[0];
	if (p >= 100.0)
		return sorted[n - 1];
	/*
	 * ceil(p/100 * n), computed so that exact products (p99 of 100
	 * samples = rank 99) are not pushed up a rank by rounding error.
	 */
	rank = (size_t)ceil(p * (double)n / 100.0 - 1e-9);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

struct bench_spread bench_spread_of(const double *v, size_t n)
{
	struct bench_spread s = { 0 };
	double small[64];
	double *c = n <= 64 ? small : malloc(n * sizeof(*c));

	if (n == 0 || !c)
		return s;
	memcpy(c, v, n * sizeof(*c));
	bench_sort(c, n);
	s.min = c[0];
	s.max = c[n - 1];
	s.median = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2.0;
	if (c != small)
		free(c);
	return s;
}
