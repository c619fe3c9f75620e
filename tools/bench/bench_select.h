/* SPDX-License-Identifier: MIT */
/*
 * Which strategies a run measures, for the device it runs against. On a
 * real GPU (--device cuda) futex-wake becomes the vendor's blocking-sync
 * event wait (strat_cuda_event.c), and the strategies that need the
 * simulated device are skipped with the reason: oracle (it is told each
 * job's true completion time, which a GPU does not know in advance) and
 * fence-vgem (the simulated device signals the vgem fence; a GPU stream
 * cannot).
 */
#ifndef GPUAR_BENCH_SELECT_H
#define GPUAR_BENCH_SELECT_H

#include "bench_result.h"

/* The futex-wake of a real GPU. */
extern const struct bench_strategy bench_strat_cuda_event;

/* Why @st cannot run against @kind, or NULL when it can. */
const char *bench_device_refusal(enum bench_device_kind kind,
				 const struct bench_strategy *st);

/*
 * Fill @run->result with the strategies @list selects (NULL: all) for
 * @run->cfg, each probed: the unavailable ones are marked skipped with
 * their reason.
 */
void bench_select_strategies(struct bench_run *run, const char *list);

#endif /* GPUAR_BENCH_SELECT_H */
