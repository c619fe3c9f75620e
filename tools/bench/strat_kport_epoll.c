// SPDX-License-Identifier: MIT
/*
 * kport-epoll: the module's port (non-blocking) in an epoll set, as an
 * event loop would hold it. Records come from the module's timer checks,
 * so the latency is at least the plan's check interval (park_us).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bench_counts.h"
#include "bench_clock.h"
#include "bench_kport.h"

struct kepoll {
	struct bench_kport kp;
	int ep;
};

static int kepoll_probe(const struct bench_config *cfg, char *why, size_t size)
{
	return bench_kport_probe(cfg->device_path, GPUAR_FEATURE_WORD_WAIT,
				 why, size);
}

static int kepoll_open(const struct bench_strategy *st, struct bench_ctx *ctx,
		       void **state, char *why, size_t size)
{
	struct kepoll *ke = calloc(1, sizeof(*ke));
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	(void)st;
	if (!ke)
		return -ENOMEM;
	err = bench_kport_open(&ke->kp, ctx, GPUAR_PORT_NONBLOCK, 1, why, size);
	if (err)
		goto free;
	ke->ep = epoll_create1(EPOLL_CLOEXEC);
	if (ke->ep < 0 || epoll_ctl(ke->ep, EPOLL_CTL_ADD, ke->kp.fd, &ev)) {
		err = -errno;
		if (ke->ep >= 0)
			close(ke->ep);
		bench_kport_close(&ke->kp);
		goto free;
	}
	*state = ke;
	return 0;
free:
	free(ke);
	return err;
}

static int kepoll_submit(void *state, struct bench_ctx *ctx, unsigned int stream,
			 uint64_t seq)
{
	struct kepoll *ke = state;

	return bench_kport_submit_word(&ke->kp, ctx, stream, seq, 0);
}

static int kepoll_wait(void *state, struct bench_ctx *ctx,
		       struct bench_done *done, unsigned int max)
{
	struct kepoll *ke = state;

	for (;;) {
		struct epoll_event ev;
		ssize_t r;
		uint64_t now;
		unsigned int n;

		if (BENCH_SYS(epoll_wait(ke->ep, &ev, 1, -1)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		r = BENCH_SYS(read(ke->kp.fd, ke->kp.rec, sizeof(ke->kp.rec)));
		now = bench_now_ns();
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		n = bench_kport_records(&ke->kp, ctx,
					(unsigned int)(r / (ssize_t)sizeof(ke->kp.rec[0])),
					now, done, max);
		if (n)
			return (int)n;
	}
}

static void kepoll_close(void *state, struct bench_ctx *ctx)
{
	struct kepoll *ke = state;

	(void)ctx;
	close(ke->ep);
	bench_kport_close(&ke->kp);
	free(ke);
}

const struct bench_strategy bench_strat_kport_epoll = {
	.name = "kport-epoll",
	.family = "kport-epoll",
	.engine = "kernel",
	.probe = kepoll_probe,
	.plan = bench_plan_stated,
	.open = kepoll_open,
	.submit = kepoll_submit,
	.wait = kepoll_wait,
	.close = kepoll_close,
	.port_stats = bench_kport_port_stats,
};
