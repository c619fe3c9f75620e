/* SPDX-License-Identifier: MIT */
/*
 * The benchmark's PRNG: splitmix64, so the same seed gives the same
 * workload on every machine and libc (rand() would not).
 */
#ifndef GPUAR_BENCH_RNG_H
#define GPUAR_BENCH_RNG_H

#include <stdint.h>

struct bench_rng {
	uint64_t state;
};

void bench_rng_seed(struct bench_rng *r, uint64_t seed);
uint64_t bench_rng_next(struct bench_rng *r);
/* Uniform in [lo, hi] (inclusive); lo when hi <= lo. */
uint64_t bench_rng_range(struct bench_rng *r, uint64_t lo, uint64_t hi);

#endif /* GPUAR_BENCH_RNG_H */
