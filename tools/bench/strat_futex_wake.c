// SPDX-License-Identifier: MIT
/*
 * futex-wake: the waiter blocks on a futex that the device bumps and wakes
 * after each store — the stand-in for an interrupt-driven blocking sync
 * (cuStreamSynchronize with blocking sync). The device's wake-up is timed
 * apart and counted against this strategy's system CPU.
 */
#include <errno.h>
#include <stdio.h>

#include "bench_counts.h"
#include "bench_futex.h"
#include "bench_strategy.h"

static void futex_plan(const struct bench_strategy *st,
		       const struct bench_config *cfg, char *buf, size_t size)
{
	(void)st;
	(void)cfg;
	snprintf(buf, size, "futex-wake");
}

static int futex_wait(void *state, struct bench_ctx *ctx,
		      struct bench_done *done, unsigned int max)
{
	struct bench_device *dev = ctx->dev;
	unsigned int n;

	(void)state;
	for (;;) {
		/* Read the event count first: a store after it changes it. */
		uint32_t ev = atomic_load(&dev->event);

		n = bench_scan(ctx, done, max);
		if (n)
			return (int)n;
		atomic_fetch_add(&dev->event_waiters, 1);
		if (BENCH_SYS(bench_futex_wait((uint32_t *)&dev->event, ev, 0)) &&
		    errno != EAGAIN && errno != EINTR) {
			atomic_fetch_sub(&dev->event_waiters, 1);
			return -errno;
		}
		atomic_fetch_sub(&dev->event_waiters, 1);
	}
}

const struct bench_strategy bench_strat_futex_wake = {
	.name = "futex-wake",
	.family = "futex-wake",
	.engine = "bench",
	.notify = BENCH_NOTIFY_FUTEX,
	.plan = futex_plan,
	.wait = futex_wait,
};
