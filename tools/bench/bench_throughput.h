/* SPDX-License-Identifier: MIT */
/*
 * gpuar-bench --throughput N: how fast completed records come back, from
 * the module's shared completion area against read(). Each round submits
 * N waits whose word is already at its target on two kernel ports of the
 * same kind, one mapping the area and one opened GPUAR_PORT_NO_AREA, waits
 * until the module has completed them all, then times reaping the N
 * records (gpuar_port_reap, no wait); the two ports take turns going
 * first. Reported: records per second and system calls per record, the
 * medians over the rounds. Without the module, or on a module without
 * GPUAR_FEATURE_AREA, it says why it is not available.
 */
#ifndef GPUAR_BENCH_THROUGHPUT_H
#define GPUAR_BENCH_THROUGHPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "bench_stats.h"
#include "bench_strategy.h"

#define BENCH_THROUGHPUT_MAX 4096	/* the module's default wait limit */

/* One way of reaping, over the rounds. */
struct bench_reap_way {
	struct bench_spread records_per_s;
	struct bench_spread syscalls_per_record;
};

struct bench_throughput {
	uint32_t records;	/* N per round; 0: not asked for */
	unsigned int rounds;
	bool available;
	char reason[BENCH_REASON_MAX];	/* why not available, or what failed */
	struct bench_reap_way area, read;
};

/*
 * Run @cfg->throughput records per round for @cfg->reps rounds on the
 * kernel engine at @cfg->device_path. 0 (measured, or not available with
 * the reason), or -1 when a round failed (the reason says how).
 */
int bench_throughput_run(const struct bench_config *cfg,
			 struct bench_throughput *t);

#endif /* GPUAR_BENCH_THROUGHPUT_H */
