// SPDX-License-Identifier: MIT
/* sleep-poll: check, sleep a fixed interval (1 ns timer slack), repeat. */
#include <stdio.h>

#include "bench_counts.h"
#include "bench_clock.h"
#include "bench_strategy.h"

static void poll_plan(const struct bench_strategy *st,
		      const struct bench_config *cfg, char *buf, size_t size)
{
	(void)st;
	snprintf(buf, size, "sleep-poll:interval_us=%llu",
		 (unsigned long long)(cfg->poll_ns / 1000));
}

static int poll_wait(void *state, struct bench_ctx *ctx,
		     struct bench_done *done, unsigned int max)
{
	unsigned int n;

	(void)state;
	while (!(n = bench_scan(ctx, done, max)))
		BENCH_SYS(bench_sleep_until(bench_now_ns() + ctx->cfg->poll_ns));
	return (int)n;
}

const struct bench_strategy bench_strat_sleep_poll = {
	.name = "sleep-poll",
	.family = "sleep-poll",
	.engine = "bench",
	.plan = poll_plan,
	.wait = poll_wait,
};
