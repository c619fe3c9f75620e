// SPDX-License-Identifier: MIT
/*
 * oracle: told the true completion time (the device's due time of each
 * pending job), it sleeps until a fixed margin before the earliest, then
 * spins. The limit any sleep-then-check estimator can reach.
 */
#include <stdio.h>

#include "bench_counts.h"
#include "bench_clock.h"
#include "bench_strategy.h"

static void oracle_plan(const struct bench_strategy *st,
			const struct bench_config *cfg, char *buf, size_t size)
{
	(void)cfg;
	snprintf(buf, size, "oracle:margin_us=%llu",
		 (unsigned long long)(st->param / 1000));
}

static int oracle_open(const struct bench_strategy *st, struct bench_ctx *ctx,
		       void **state, char *why, size_t size)
{
	(void)ctx;
	(void)why;
	(void)size;
	*state = (void *)st;
	return 0;
}

static int oracle_wait(void *state, struct bench_ctx *ctx,
		       struct bench_done *done, unsigned int max)
{
	const struct bench_strategy *st = state;
	uint64_t due = UINT64_MAX;
	unsigned int n;

	n = bench_scan(ctx, done, max);
	if (n)
		return (int)n;
	for (unsigned int i = 0; i < ctx->dev->streams; i++) {
		uint64_t d = atomic_load(&ctx->dev->stream[i].due_ns);

		if (ctx->target[i] && d < due)
			due = d;
	}
	if (due != UINT64_MAX && due > st->param &&
	    bench_now_ns() < due - st->param)
		BENCH_SYS(bench_sleep_until(due - st->param));
	while (!(n = bench_scan(ctx, done, max)))
		bench_cpu_relax();
	return (int)n;
}

const struct bench_strategy bench_strat_oracle = {
	.name = "oracle",
	.family = "oracle",
	.engine = "bench",
	.plan = oracle_plan,
	.open = oracle_open,
	.wait = oracle_wait,
};
