/* SPDX-License-Identifier: MIT */
/* The run's outputs: the human table, the gpuar-bench/1 JSON, the plot. */
#ifndef GPUAR_BENCH_REPORT_H
#define GPUAR_BENCH_REPORT_H

#include <stdio.h>

#include "bench_result.h"

/*
 * One of the project's performance targets, as measured: a bound relative
 * to a floor of the same run.
 */
struct bench_target {
	const char *name;	/* "kport-read p50 <= 2x spin p50 + 2 us" */
	const char *state;	/* "met", "missed", "unmeasured" */
	double measured;	/* the strategy's median */
	double limit;		/* what it had to stay at or below */
	const char *unit;	/* "us" or "us/wait" */
	char why[96];		/* why unmeasured */
	bool ran;		/* the strategy it bounds was measured */
};

#define BENCH_TARGETS_MAX 24
/* Evaluate the performance targets on @run; returns how many. */
unsigned int bench_targets(const struct bench_run *run, struct bench_target *t,
			   unsigned int max);

/* Whether any oracle margin of the sweep was measured. */
bool bench_oracle_ran(const struct bench_run *run);

/* "ok", "skipped" or "error" (a repetition failed). */
const char *bench_result_status(const struct bench_run *run,
				const struct bench_result *r);

/*
 * System CPU as a percentage of one core's time: CPU per wait times waits
 * per second (medians), so 100 is one core kept busy.
 */
double bench_core_pct(const struct bench_summary *s);

void bench_print_table(FILE *f, const struct bench_run *run);
/*
 * The targets (--targets) of the strategies that ran, met or missed;
 * "no target applies" when none of them has one.
 */
void bench_print_targets(FILE *f, const struct bench_run *run);
/* 0, or -1 with errno. */
int bench_write_json(const char *path, const struct bench_run *run);
/* 0, or -1 with a message on stderr (gnuplot missing or failing). */
int bench_write_plot(const char *path, const struct bench_run *run);
/*
 * Write the gnuplot program instead of running it (for a machine without
 * gnuplot, such as the test VM): `gnuplot FILE` then writes @png.
 */
int bench_write_plot_script(const char *path, const char *png,
			    const struct bench_run *run);

#endif /* GPUAR_BENCH_REPORT_H */
