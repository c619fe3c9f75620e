// SPDX-License-Identifier: MIT
#include "bench_rng.h"

void bench_rng_seed(struct bench_rng *r, uint64_t seed)
{
	r->state = seed;
}

uint64_t bench_rng_next(struct bench_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t bench_rng_range(struct bench_rng *r, uint64_t lo, uint64_t hi)
{
	uint64_t span;

	if (hi <= lo)
		return lo;
	span = hi - lo + 1;
	if (span == 0)	/* the full 64-bit range */
		return bench_rng_next(r);
	/* Modulo bias is below 2^-40 for the spans a workload uses. */
	return lo + bench_rng_next(r) % span;
}
