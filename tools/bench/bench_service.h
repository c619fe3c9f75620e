/* SPDX-License-Identifier: MIT */
/*
 * gpuar-bench --strategies service: an event loop that serves a socket
 * while it awaits GPU work. One epoll loop serves a TCP echo socket on
 * 127.0.0.1 (a client thread sends small messages and times the round
 * trips) and keeps one GPU wait in flight on a libgpuar port (the soft
 * producer's stores on the user engine; the module's port where
 * /dev/gpuar opens), with imminent readiness off and then on, in one run.
 * Then one wait whose store never comes stays pending, resubmitted at
 * each backstop as a caller does, and the process's CPU time is read
 * over its first second and the seconds after.
 *
 *   bench_service.c         the loop, the client, the idle wait (runs)
 *   bench_service_report.c  summaries, the table, the JSON (pure)
 */
#ifndef GPUAR_BENCH_SERVICE_H
#define GPUAR_BENCH_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_SERVICE_REASON_MAX 160

/* What one engine did with imminent readiness off or on. */
struct bench_service_mode {
	bool ran;
	char reason[BENCH_SERVICE_REASON_MAX];	/* why not, when !ran */
	uint64_t rtt_n;			/* socket round trips timed */
	double rtt_p50_us, rtt_p99_us;
	uint64_t gpu_n;			/* GPU waits completed */
	double gpu_p50_us, gpu_p99_us;	/* store to the loop's reap */
	uint64_t errors;		/* records with an error, short echoes */
	uint64_t claims;		/* the port's claims (imminent) */
};

/* The never-completing wait: the process's CPU share while it is pending. */
struct bench_service_idle {
	bool ran;
	char reason[BENCH_SERVICE_REASON_MAX];
	double first_s_pct;		/* % of a core over its first second */
	double after_pct;		/* % of a core over the seconds after */
	double after_s;			/* how long "after" was measured */
	uint64_t checks_after;		/* the port's word checks meanwhile */
	uint64_t resubmits;		/* backstop timeouts resubmitted */
};

struct bench_service_engine {
	const char *engine;		/* "user" or "kernel" */
	/*
	 * Imminent readiness off, on (the port's default claim slice), and
	 * on with each claim watched for its whole lease in one call
	 * (GPUAR_CLAIM_SLICE_OFF: what 0.1 did), for comparison.
	 */
	struct bench_service_mode off, on, on_lease;
	struct bench_service_idle idle;
};

struct bench_service_config {
	uint32_t messages;	/* round trips per mode */
	uint64_t work_ns;	/* each GPU job's duration */
	double idle_after_s;	/* seconds measured after the idle wait's first */
	const char *device_path;	/* the kernel engine's, NULL: default */
};

#define BENCH_SERVICE_ENGINES 2
#define BENCH_SERVICE_JSON_SCHEMA "gpuar-bench-service/1"

struct bench_service_result {
	struct bench_service_engine eng[BENCH_SERVICE_ENGINES];
	unsigned int engines;
	struct bench_service_config cfg;
};

/* bench_service_report.c */
/*
 * p50 and p99 of @v (@n values, sorted in place) into *@p50 and *@p99,
 * in the unit given; both 0 when @n is 0.
 */
void bench_service_percentiles(double *v, size_t n, double *p50, double *p99);
/* @on / @off, or 0 when either did not run or @off is 0. */
double bench_service_ratio(const struct bench_service_mode *off,
			   const struct bench_service_mode *on, bool p99);
void bench_service_print_table(FILE *out, const struct bench_service_result *r);
/* The JSON document (BENCH_SERVICE_JSON_SCHEMA); 0 or -1 (errno set). */
int bench_service_write_json(FILE *out, const struct bench_service_result *r);

/* bench_service.c: run and report; 0, or 1 when a measurement failed. */
int bench_service_main(const struct bench_service_config *cfg,
		       const char *json_path, FILE *out);

#endif /* GPUAR_BENCH_SERVICE_H */
