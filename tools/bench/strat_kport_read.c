// SPDX-License-Identifier: MIT
/*
 * kport-read: the module's port, waited with a blocking read(). The module
 * wakes the reader early (predicted completion - margin - its wake-up
 * latency) and the reader checks the word itself (busy-read).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench_counts.h"
#include "bench_clock.h"
#include "bench_kport.h"

static int kread_probe(const struct bench_config *cfg, char *why, size_t size)
{
	return bench_kport_probe(cfg->device_path, GPUAR_FEATURE_WORD_WAIT,
				 why, size);
}

static int kread_open(const struct bench_strategy *st, struct bench_ctx *ctx,
		      void **state, char *why, size_t size)
{
	struct bench_kport *kp = calloc(1, sizeof(*kp));
	int err;

	(void)st;
	if (!kp)
		return -ENOMEM;
	err = bench_kport_open(kp, ctx, 0, 1, why, size);
	if (err) {
		free(kp);
		return err;
	}
	*state = kp;
	return 0;
}

static int kread_submit(void *state, struct bench_ctx *ctx, unsigned int stream,
			uint64_t seq)
{
	return bench_kport_submit_word(state, ctx, stream, seq, 0);
}

static int kread_wait(void *state, struct bench_ctx *ctx,
		      struct bench_done *done, unsigned int max)
{
	struct bench_kport *kp = state;

	for (;;) {
		ssize_t r = BENCH_SYS(read(kp->fd, kp->rec, sizeof(kp->rec)));
		uint64_t now = bench_now_ns();
		unsigned int n;

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		n = bench_kport_records(kp, ctx, (unsigned int)(r / (ssize_t)sizeof(kp->rec[0])),
					now, done, max);
		if (n)
			return (int)n;
	}
}

static void kread_close(void *state, struct bench_ctx *ctx)
{
	(void)ctx;
	bench_kport_close(state);
	free(state);
}

const struct bench_strategy bench_strat_kport_read = {
	.name = "kport-read",
	.family = "kport-read",
	.engine = "kernel",
	.probe = kread_probe,
	.plan = bench_plan_stated,
	.open = kread_open,
	.submit = kread_submit,
	.wait = kread_wait,
	.close = kread_close,
	.port_stats = bench_kport_port_stats,
};
