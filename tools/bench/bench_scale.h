/* SPDX-License-Identifier: MIT */
/*
 * gpuar-bench --pending N: the engines' cost with many waits outstanding.
 * N waits on one port, all on one word with targets N apart; a producer
 * thread advances the word at a steady rate, and each record is answered
 * by a wait N further on, so N stay pending while they complete in a
 * steady stream. Reports records/s and CPU per completion per engine.
 */
#ifndef GPUAR_BENCH_SCALE_H
#define GPUAR_BENCH_SCALE_H

#include <stdint.h>
#include <stdio.h>

struct bench_scale_config {
	uint32_t pending;	/* N, 0: not the scale mode */
	uint64_t rate;		/* completions per second; 0: 2N (each wait lives 0.5 s) */
	uint32_t seconds;	/* measured, after a warm-up of one wait lifetime */
	const char *engines;	/* "user", "kernel" or NULL: both (kernel where it opens) */
	const char *device_path;
	const char *plan;	/* the waits' plan, text */
};

/*
 * Its margin covers the producer's 1 ms steps, so a wait's sleep rarely
 * overshoots its store (a LATE outcome halves the point's prediction,
 * which would make the next waits park, and be checked, for half their
 * life: a cost of the plan, not of the engine).
 */
#define BENCH_SCALE_PLAN \
	"flag:park_us=1000,backstop_us=1000000+predict:margin_us=5000," \
	"min_sleep_us=20,max_sleep_us=1000000,window=8"

/* Run and print one line per engine to @out. 0, or 1 when a run failed. */
int bench_scale_main(const struct bench_scale_config *cfg, FILE *out);

#endif /* GPUAR_BENCH_SCALE_H */
