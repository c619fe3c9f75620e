// SPDX-License-Identifier: MIT
/* spin: a load loop on the words. The latency floor, at a whole CPU. */
#include <stdio.h>

#include "bench_clock.h"
#include "bench_strategy.h"

static void spin_plan(const struct bench_strategy *st,
		      const struct bench_config *cfg, char *buf, size_t size)
{
	(void)st;
	(void)cfg;
	snprintf(buf, size, "spin");
}

static int spin_wait(void *state, struct bench_ctx *ctx,
		     struct bench_done *done, unsigned int max)
{
	unsigned int n;

	(void)state;
	while (!(n = bench_scan(ctx, done, max)))
		bench_cpu_relax();
	return (int)n;
}

const struct bench_strategy bench_strat_spin = {
	.name = "spin",
	.family = "spin",
	.engine = "bench",
	.plan = spin_plan,
	.wait = spin_wait,
};
