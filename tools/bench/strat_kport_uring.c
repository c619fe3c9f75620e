// SPDX-License-Identifier: MIT
/*
 * kport-uring: the module's port read through io_uring (liburing). One
 * read is kept in flight; the port supports non-blocking reads, so the
 * read waits on the port's poll instead of blocking a worker thread.
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_counts.h"
#include "bench_clock.h"
#include "bench_kport.h"

struct kuring {
	struct bench_kport kp;
	struct io_uring ring;
	bool armed;
};

static int kuring_probe(const struct bench_config *cfg, char *why, size_t size)
{
	struct io_uring ring;
	int err;

	if (bench_kport_probe(cfg->device_path, GPUAR_FEATURE_WORD_WAIT, why, size))
		return -1;
	err = io_uring_queue_init(4, &ring, 0);
	if (err) {
		snprintf(why, size, "io_uring unavailable: %s", strerror(-err));
		return -1;
	}
	io_uring_queue_exit(&ring);
	return 0;
}

static int kuring_open(const struct bench_strategy *st, struct bench_ctx *ctx,
		       void **state, char *why, size_t size)
{
	struct kuring *ku = calloc(1, sizeof(*ku));
	int err;

	(void)st;
	if (!ku)
		return -ENOMEM;
	err = bench_kport_open(&ku->kp, ctx, 0, 1, why, size);
	if (err)
		goto free;
	err = io_uring_queue_init(4, &ku->ring, 0);
	if (err) {
		snprintf(why, size, "io_uring_queue_init: %s", strerror(-err));
		bench_kport_close(&ku->kp);
		goto free;
	}
	*state = ku;
	return 0;
free:
	free(ku);
	return err;
}

static int kuring_submit(void *state, struct bench_ctx *ctx, unsigned int stream,
			 uint64_t seq)
{
	struct kuring *ku = state;

	return bench_kport_submit_word(&ku->kp, ctx, stream, seq, 0);
}

static int kuring_arm(struct kuring *ku)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ku->ring);
	int r;

	if (!sqe)
		return -EBUSY;
	/* -1: the file position, which a port (a stream) does not have. */
	io_uring_prep_read(sqe, ku->kp.fd, ku->kp.rec, sizeof(ku->kp.rec),
			   (__u64)-1);
	r = BENCH_SYS(io_uring_submit(&ku->ring));
	if (r < 0)
		return r;
	ku->armed = true;
	return 0;
}

static int kuring_wait(void *state, struct bench_ctx *ctx,
		       struct bench_done *done, unsigned int max)
{
	struct kuring *ku = state;

	for (;;) {
		struct io_uring_cqe *cqe;
		uint64_t now;
		int res, err;
		unsigned int n;

		if (!ku->armed && (err = kuring_arm(ku)))
			return err;
		/* Entering the kernel only when no completion is there. */
		err = io_uring_peek_cqe(&ku->ring, &cqe);
		if (err)
			err = BENCH_SYS(io_uring_wait_cqe(&ku->ring, &cqe));
		if (err == -EINTR)
			continue;
		if (err)
			return err;
		now = bench_now_ns();
		res = cqe->res;
		io_uring_cqe_seen(&ku->ring, cqe);
		ku->armed = false;
		if (res == -EAGAIN || res == -EINTR)
			continue;
		if (res < 0)
			return res;
		n = bench_kport_records(&ku->kp, ctx,
					(unsigned int)res / sizeof(ku->kp.rec[0]),
					now, done, max);
		if (n)
			return (int)n;
	}
}

static void kuring_close(void *state, struct bench_ctx *ctx)
{
	struct kuring *ku = state;

	(void)ctx;
	/* Closing the port first ends an armed read. */
	bench_kport_close(&ku->kp);
	io_uring_queue_exit(&ku->ring);
	free(ku);
}

const struct bench_strategy bench_strat_kport_uring = {
	.name = "kport-uring",
	.family = "kport-uring",
	.engine = "kernel",
	.probe = kuring_probe,
	.plan = bench_plan_stated,
	.open = kuring_open,
	.submit = kuring_submit,
	.wait = kuring_wait,
	.close = kuring_close,
	.port_stats = bench_kport_port_stats,
};
