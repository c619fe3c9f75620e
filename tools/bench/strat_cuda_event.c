// SPDX-License-Identifier: MIT
/*
 * futex-wake on a real GPU (--device cuda): the vendor's interrupt-driven
 * blocking sync in place of the simulated device's futex. The producer
 * records a CU_EVENT_BLOCKING_SYNC event after each job's write-value, in
 * a primary context with blocking-sync scheduling; the waiter blocks in
 * cuEventSynchronize (the driver sleeps until the GPU's interrupt), then
 * checks the words. With several streams it waits on the pending stream
 * submitted first, as an application without foreknowledge would: one
 * that finishes earlier is seen only after it. The driver's wake-up runs
 * on this process's threads and counts in its system CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_cuda.h"
#include "bench_strategy.h"

struct event_state {
	uint64_t order[BENCH_MAX_STREAMS];	/* submission order per stream */
	uint64_t next;
};

static void event_plan(const struct bench_strategy *st,
		       const struct bench_config *cfg, char *buf, size_t size)
{
	(void)st;
	(void)cfg;
	snprintf(buf, size, "cuda-event:blocking_sync");
}

static int event_open(const struct bench_strategy *st, struct bench_ctx *ctx,
		      void **state, char *why, size_t size)
{
	(void)st;
	if (ctx->dev->kind != BENCH_DEVICE_CUDA) {
		snprintf(why, size, "the event wait needs --device cuda");
		return -EINVAL;
	}
	*state = calloc(1, sizeof(struct event_state));
	return *state ? 0 : -ENOMEM;
}

static int event_submit(void *state, struct bench_ctx *ctx, unsigned int stream,
			uint64_t seq)
{
	struct event_state *es = state;

	(void)ctx;
	(void)seq;
	es->order[stream] = ++es->next;
	return 0;
}

static int event_wait(void *state, struct bench_ctx *ctx,
		      struct bench_done *done, unsigned int max)
{
	struct event_state *es = state;

	for (;;) {
		unsigned int n = bench_scan(ctx, done, max), first = 0;
		uint64_t best = UINT64_MAX;
		char why[BENCH_REASON_MAX];

		if (n)
			return (int)n;
		for (unsigned int i = 0; i < ctx->dev->streams; i++) {
			if (ctx->target[i] && es->order[i] < best) {
				best = es->order[i];
				first = i;
			}
		}
		if (best == UINT64_MAX)
			return -EINVAL;	/* nothing pending: a driver bug */
		if (bench_cuda_event_wait(ctx->dev->cuda, first, why, sizeof(why))) {
			bench_note_error(ctx, "%s", why);
			return -EIO;
		}
	}
}

static void event_close(void *state, struct bench_ctx *ctx)
{
	(void)ctx;
	free(state);
}

const struct bench_strategy bench_strat_cuda_event = {
	.name = "futex-wake",
	.family = "futex-wake",
	.engine = "bench",
	.notify = BENCH_NOTIFY_EVENT,
	.plan = event_plan,
	.open = event_open,
	.submit = event_submit,
	.wait = event_wait,
	.close = event_close,
};
