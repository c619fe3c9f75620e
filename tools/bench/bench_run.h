/* SPDX-License-Identifier: MIT */
/*
 * The measurement loop: every strategy, interleaved repetition by
 * repetition (rep 1 of each, then rep 2 of each, ...) so that drift in
 * the machine's load lands on all of them alike.
 */
#ifndef GPUAR_BENCH_RUN_H
#define GPUAR_BENCH_RUN_H

#include "bench_result.h"

/*
 * Probe, then run every selected strategy of @run->result (filled by the
 * caller, skipped ones marked). @progress: print a progress line to
 * stderr. Returns 0, or a negative errno when the device cannot start.
 */
int bench_run_all(struct bench_run *run, bool progress);

#endif /* GPUAR_BENCH_RUN_H */
