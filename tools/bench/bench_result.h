/* SPDX-License-Identifier: MIT */
/*
 * What a run measured: per strategy, each repetition's figures, and their
 * medians with spread (min..max over repetitions).
 */
#ifndef GPUAR_BENCH_RESULT_H
#define GPUAR_BENCH_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include "bench_throughput.h"
#include "bench_counts.h"
#include "bench_stats.h"
#include "bench_strategy.h"

#define BENCH_REPS_MAX 64
#define BENCH_STRATEGIES_MAX 32

/* One repetition of one strategy. */
struct bench_rep {
	double p50, p90, p99, max;	/* wake latency, µs */
	double waiter_cpu_us;		/* per wait */
	double system_cpu_us;		/* per wait */
	double background_cpu_us;	/* per wait: the machine's own load */
	double submit_cpu_us;		/* per wait, of waiter_cpu_us (--split-submit) */
	double detect_p50;		/* record's completion - store, µs; <0: no records */
	double waits_per_s;
	uint64_t waits;			/* completed */
	uint64_t errors;
	uint64_t late_stores;		/* device stored > 50 µs after due */
	/*
	 * Machine-independent counts, per wait: the port's counters (each
	 * < 0: the strategy has no port), the waiter thread's context
	 * switches (voluntary and not), and wake-ups (the waiter's
	 * voluntary switches, each a block ended by a wake, plus a helper
	 * thread's).
	 */
	struct bench_port_per_wait port;
	double ctx_switches, wakeups;
	double syscalls;		/* system calls per wait; < 0: not counted */
};

/* The medians (and spread) of the repetitions. */
struct bench_summary {
	struct bench_spread p50, p90, p99, max;
	struct bench_spread waiter_cpu_us, system_cpu_us, waits_per_s;
	struct bench_spread background_cpu_us, submit_cpu_us, detect_p50;
	struct bench_spread timer_fires, checks, imminent, claims, lease_expiries;
	struct bench_spread late;
	struct bench_spread ctx_switches, wakeups, syscalls;
	uint64_t errors;		/* over all repetitions */
	uint64_t late_stores;
};

struct bench_result {
	struct bench_strategy st;
	char plan[BENCH_PLAN_TEXT_MAX];
	bool skipped;
	char reason[BENCH_REASON_MAX];	/* why skipped, or why a rep failed */
	unsigned int reps;		/* repetitions run */
	struct bench_rep rep[BENCH_REPS_MAX];
	struct bench_summary sum;
};

/* Environment of the run, for the JSON and the table's header. */
struct bench_env {
	char kernel[128];
	unsigned int cpus;
	char virt[16];		/* tcg, kvm, hypervisor, none */
	char clocksource[32];
	char engine[8];		/* kernel when /dev/gpuar opens, else user */
	char date[32];		/* UTC, ISO 8601 */
	char wait_cpus[32];	/* "waiter 0, device 1" */
	struct bench_device_info device;	/* the producer (--device) */
};

struct bench_run {
	struct bench_config cfg;
	struct bench_env env;
	struct bench_result result[BENCH_STRATEGIES_MAX];
	unsigned int results;
	int oracle_chosen;	/* index into result[], -1 when none qualified */
	struct bench_throughput tp;	/* --throughput: the area against read() */
};

/* Fill @s from the repetitions of @r. */
void bench_summarize(struct bench_result *r);

/*
 * The oracle's margin: the smallest of the sweep whose median p50 is at
 * most 2x spin's median p50 + 1 µs. Sets run->oracle_chosen.
 */
void bench_choose_oracle(struct bench_run *run);

/* The result named @name, or NULL (also when skipped). */
const struct bench_result *bench_find(const struct bench_run *run,
				      const char *name);

#endif /* GPUAR_BENCH_RESULT_H */
