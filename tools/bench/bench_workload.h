/* SPDX-License-Identifier: MIT */
/*
 * Workloads: how long each piece of simulated device work runs.
 *
 *   fixed     every job takes work_us
 *   jitter    uniform in [work_us - jitter_us, work_us + jitter_us]
 *   bimodal   work_us or work2_us, the longer one with probability
 *             bimodal_pct percent — two durations at one readback point,
 *             the case that tests how an estimator handles a minimum
 *
 * Durations come from a PRNG seeded by (seed, repetition, stream), so the
 * same seed gives the same sequence of jobs to every strategy of a
 * repetition and to every run of the benchmark.
 */
#ifndef GPUAR_BENCH_WORKLOAD_H
#define GPUAR_BENCH_WORKLOAD_H

#include <stdint.h>

#include "bench_rng.h"

enum bench_workload_kind {
	BENCH_WL_FIXED,
	BENCH_WL_JITTER,
	BENCH_WL_BIMODAL,
};

struct bench_workload {
	enum bench_workload_kind kind;
	uint64_t work_us;
	uint64_t jitter_us;
	uint64_t work2_us;
	unsigned int bimodal_pct;
	uint64_t waits;		/* per repetition, over all streams */
	unsigned int streams;
	uint64_t seed;
};

const char *bench_workload_kind_name(enum bench_workload_kind k);
/* 0 and *@k set, or -1 for an unknown name. */
int bench_workload_kind_parse(const char *name, enum bench_workload_kind *k);

/* Checks the fields agree with each other; NULL, or what is wrong. */
const char *bench_workload_check(const struct bench_workload *w);

/* The duration stream of one (repetition, stream). */
void bench_workload_rng(const struct bench_workload *w, unsigned int rep,
			unsigned int stream, struct bench_rng *r);
/* The next job's duration in ns. */
uint64_t bench_workload_next_ns(const struct bench_workload *w,
				struct bench_rng *r);

#endif /* GPUAR_BENCH_WORKLOAD_H */
