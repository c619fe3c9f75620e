/* SPDX-License-Identifier: MIT */
/*
 * A wait strategy: one way of waiting for the simulated device's stores.
 *
 * The driver (bench_run.c) runs one repetition of a strategy as a closed
 * loop per stream: submit(stream, seq) — the strategy prepares its wait
 * (a port submission, a fence) — then the device is launched, and wait()
 * blocks until at least one pending stream's store was observed, reporting
 * which ones and when the waiter saw each. The latency of a wait is that
 * observation time minus the device's store time.
 */
#ifndef GPUAR_BENCH_STRATEGY_H
#define GPUAR_BENCH_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/gpuar.h>

#include "bench_device.h"
#include "bench_workload.h"

#define BENCH_PLAN_TEXT_MAX 256
#define BENCH_REASON_MAX 160
#define BENCH_MARGINS_MAX 8

/* Everything a run is configured with (from the command line). */
struct bench_config {
	struct bench_workload wl;
	unsigned int reps;
	char plan_text[BENCH_PLAN_TEXT_MAX];	/* as given, round-tripped */
	struct gpuar_plan plan;			/* estimator-driven strategies */
	uint64_t poll_ns;			/* sleep-poll interval */
	uint64_t margins_us[BENCH_MARGINS_MAX];	/* oracle sweep */
	unsigned int margins;
	uint64_t lead_ns;			/* device spin before a store */
	int waiter_cpu, device_cpu;		/* -1: not pinned */
	const char *device_path;		/* /dev/gpuar */
	uint64_t background_ns;			/* idle gap before each repetition */
	bool split_submit;			/* time submit() apart (2 syscalls a wait) */
	enum bench_device_kind device;		/* --device: the completion producer */
	uint32_t throughput;			/* --throughput N: records a round, 0: off */
};

/* The state of one repetition the strategy works in. */
struct bench_ctx {
	const struct bench_config *cfg;
	struct bench_device *dev;
	uint64_t target[BENCH_MAX_STREAMS];	/* pending seq per stream, 0: none */
	unsigned int pending;			/* streams with a target */
	uint64_t errors;			/* failed waits, bad records */
	char first_error[BENCH_REASON_MAX];	/* what the first error was */
	/*
	 * Wake-ups of a strategy's own helper thread (reactor-spin's
	 * scanner), which the waiter's counts do not see: added atomically.
	 */
	uint64_t helper_wakeups;
};

/* Note why a wait failed (the first reason of a repetition is kept). */
void bench_note_error(struct bench_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One observed completion. */
struct bench_done {
	unsigned int stream;
	uint64_t seen_ns;
	/*
	 * When the port's record says the wait completed (its complete_ns),
	 * 0 where there is no record: it splits the latency into the port's
	 * detection (complete - store) and the hand-back (seen - complete).
	 */
	uint64_t complete_ns;
	bool error;	/* the wait ended in error: counted, not timed */
};

struct bench_strategy {
	const char *name;	/* as listed and selected by --strategies */
	const char *family;	/* the name without a parameter ("oracle") */
	const char *engine;	/* "bench" (its own loop), "user" or "kernel" */
	uint64_t param;		/* oracle margin (ns) */
	bool gpu_only;		/* waits through a CUDA API: --device cuda only */
	enum bench_notify notify;	/* what the device does after a store */
	/* 0 when it can run here; else a reason ("/dev/gpuar not present"). */
	int (*probe)(const struct bench_config *cfg, char *why, size_t size);
	/* The plan it waits under, as text (for the table and JSON). */
	void (*plan)(const struct bench_strategy *st, const struct bench_config *cfg,
		     char *buf, size_t size);
	/* Per repetition; 0 or a negative errno with a reason. */
	int (*open)(const struct bench_strategy *st, struct bench_ctx *ctx,
		    void **state, char *why, size_t size);
	/* Prepare the wait for @seq on @stream, before the device is launched. */
	int (*submit)(void *state, struct bench_ctx *ctx, unsigned int stream,
		      uint64_t seq);
	/* Block until >= 1 pending stream completed; the count, or -errno. */
	int (*wait)(void *state, struct bench_ctx *ctx, struct bench_done *done,
		    unsigned int max);
	void (*close)(void *state, struct bench_ctx *ctx);
	/*
	 * Strategies that wait through a port: the port's statistics so far
	 * (timer firings, checks, imminent raises, claims, lease expiries);
	 * 0 or a negative errno. NULL: no port.
	 */
	int (*port_stats)(void *state, struct gpuar_port_stats *st);
	/*
	 * Strategies that wait through a libgpuar port: the system calls the
	 * library made for it so far (gpuar_port_lib_stats); 0 or -errno.
	 */
	int (*lib_syscalls)(void *state, uint64_t *n);
};

/*
 * Check every pending stream's word once (acquire load); record the ones
 * done, seen now, and clear their targets. Returns how many.
 */
unsigned int bench_scan(struct bench_ctx *ctx, struct bench_done *done,
			unsigned int max);

/* Every strategy the benchmark knows, in table order (oracle sweep expanded). */
size_t bench_strategies(const struct bench_config *cfg,
			struct bench_strategy *out, size_t max);

/* The strategy families, one line each, for --help. */
extern const char *const bench_strategy_help[];

/* The plan text of strategies that follow the stated plan. */
void bench_plan_stated(const struct bench_strategy *st,
		       const struct bench_config *cfg, char *buf, size_t size);

/* Strategy definitions, one file each. */
extern const struct bench_strategy bench_strat_spin;
extern const struct bench_strategy bench_strat_sleep_poll;
extern const struct bench_strategy bench_strat_futex_wake;
extern const struct bench_strategy bench_strat_oracle;
extern const struct bench_strategy bench_strat_user_predict;
extern const struct bench_strategy bench_strat_kport_read;
extern const struct bench_strategy bench_strat_kport_epoll;
extern const struct bench_strategy bench_strat_kport_uring;
extern const struct bench_strategy bench_strat_fence_vgem;
extern const struct bench_strategy bench_strat_lib_reap;
extern const struct bench_strategy bench_strat_kport_epoll_imminent;
extern const struct bench_strategy bench_strat_kport_uring_imminent;
extern const struct bench_strategy bench_strat_user_imminent;
extern const struct bench_strategy bench_strat_reactor_spin;
extern const struct bench_strategy bench_strat_cuda_scanner;
extern const struct bench_strategy bench_strat_cuda_hostfunc;
extern const struct bench_strategy bench_strat_cuda_hostfunc_v2;

#endif /* GPUAR_BENCH_STRATEGY_H */
