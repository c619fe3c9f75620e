// SPDX-License-Identifier: MIT
#include "bench_workload.h"

#include <string.h>

static const char *const kind_names[] = {
	[BENCH_WL_FIXED] = "fixed",
	[BENCH_WL_JITTER] = "jitter",
	[BENCH_WL_BIMODAL] = "bimodal",
};

const char *bench_workload_kind_name(enum bench_workload_kind k)
{
	return (unsigned int)k < sizeof(kind_names) / sizeof(kind_names[0]) ?
	       kind_names[k] : "?";
}

int bench_workload_kind_parse(const char *name, enum bench_workload_kind *k)
{
	for (unsigned int i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		if (!strcmp(name, kind_names[i])) {
			*k = (enum bench_workload_kind)i;
			return 0;
		}
	}
	return -1;
}

const char *bench_workload_check(const struct bench_workload *w)
{
	if (w->work_us == 0)
		return "--work-us must be at least 1";
	if (w->work_us > 10000000)
		return "--work-us must be at most 10000000 (10 s)";
	if (w->kind == BENCH_WL_JITTER && w->jitter_us >= w->work_us)
		return "--jitter-us must be below --work-us";
	if (w->kind == BENCH_WL_BIMODAL &&
	    (w->work2_us == 0 || w->work2_us > 10000000))
		return "--work2-us must be 1..10000000 for a bimodal workload";
	if (w->kind == BENCH_WL_BIMODAL && w->bimodal_pct > 100)
		return "--bimodal-pct must be 0..100";
	if (w->waits == 0)
		return "--waits must be at least 1";
	if (w->streams == 0 || w->streams > 64)
		return "--streams must be 1..64";
	if (w->waits < w->streams)
		return "--waits must be at least --streams";
	return NULL;
}

void bench_workload_rng(const struct bench_workload *w, unsigned int rep,
			unsigned int stream, struct bench_rng *r)
{
	struct bench_rng mix;

	/* Decorrelate (seed, rep, stream) through one splitmix step each. */
	bench_rng_seed(&mix, w->seed);
	bench_rng_seed(&mix, bench_rng_next(&mix) ^ ((uint64_t)rep << 32 | stream));
	bench_rng_seed(r, bench_rng_next(&mix));
}

uint64_t bench_workload_next_ns(const struct bench_workload *w,
				struct bench_rng *r)
{
	uint64_t us = w->work_us;

	switch (w->kind) {
	case BENCH_WL_FIXED:
		break;
	case BENCH_WL_JITTER:
		us = bench_rng_range(r, w->work_us - w->jitter_us,
				     w->work_us + w->jitter_us);
		break;
	case BENCH_WL_BIMODAL:
		if (bench_rng_range(r, 1, 100) <= w->bimodal_pct)
			us = w->work2_us;
		break;
	}
	return us * 1000;
}
