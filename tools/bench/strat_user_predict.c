// SPDX-License-Identifier: MIT
/*
 * user-predict: libgpuar's user engine port (no module) under the stated
 * plan: the shared core's estimator predicts each job's completion, the
 * engine sleeps until the margin before it, then checks the word every
 * park_us. The waiter blocks in gpuar_port_reap(), which runs the engine.
 * The device stores into the port's own lines (gpuar_line_alloc).
 */
#include "bench_libport.h"

static int user_open(const struct bench_strategy *st, struct bench_ctx *ctx,
		     void **state, char *why, size_t size)
{
	(void)st;
	return bench_libport_state_open(ctx, GPUAR_ENGINE_USER, 0, false, state,
					why, size);
}

const struct bench_strategy bench_strat_user_predict = {
	.name = "user-predict",
	.family = "user-predict",
	.engine = "user",
	.plan = bench_plan_stated,
	.open = user_open,
	.submit = bench_libport_state_submit,
	.wait = bench_libport_reap_wait,
	.close = bench_libport_state_close,
	.port_stats = bench_libport_port_stats,
	.lib_syscalls = bench_libport_lib_syscalls,
};
