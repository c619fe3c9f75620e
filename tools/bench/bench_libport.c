// SPDX-License-Identifier: MIT
#include "bench_counts.h"
#include "bench_libport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bench_clock.h"
#include "bench_word.h"

void bench_libport_close(struct bench_libport *lp, struct bench_ctx *ctx)
{
	if (lp->ep >= 0)
		close(lp->ep);
	for (unsigned int i = 0; i < ctx->dev->streams; i++) {
		if (lp->dev_line[i])
			ctx->dev->stream[i].line = lp->dev_line[i];
		if (lp->line[i])
			gpuar_line_free(lp->port, lp->line[i]);
	}
	gpuar_port_close(lp->port);
	memset(lp, 0, sizeof(*lp));
	lp->ep = -1;
}

int bench_libport_open(struct bench_libport *lp, struct bench_ctx *ctx,
		       enum gpuar_engine engine, uint32_t flags, bool epoll,
		       char *why, size_t size)
{
	struct gpuar_port_options opts = {
		.engine = engine,
		.flags = flags | GPUAR_PORT_CLOEXEC |
			 (engine == GPUAR_ENGINE_KERNEL ? GPUAR_PORT_STRICT : 0),
		.device_path = ctx->cfg->device_path,
	};
	struct epoll_event ev = { .events = EPOLLIN | EPOLLPRI };
	struct gpuar_error diag = { 0 };
	int err;

	memset(lp, 0, sizeof(*lp));
	lp->ep = -1;
	err = gpuar_port_open(&lp->port, &opts, &diag);
	if (err) {
		snprintf(why, size, "gpuar_port_open: %s", diag.message);
		return err;
	}
	for (unsigned int i = 0; i < ctx->dev->streams; i++) {
		err = gpuar_line_alloc(lp->port, &lp->line[i]);
		if (err) {
			snprintf(why, size, "gpuar_line_alloc: %s", strerror(-err));
			goto fail;
		}
		lp->dev_line[i] = ctx->dev->stream[i].line;
		ctx->dev->stream[i].line = gpuar_line_words(lp->line[i]);
	}
	if (!epoll)
		return 0;
	lp->ep = epoll_create1(EPOLL_CLOEXEC);
	if (lp->ep < 0 ||
	    epoll_ctl(lp->ep, EPOLL_CTL_ADD, gpuar_port_fd(lp->port), &ev)) {
		err = -errno;
		snprintf(why, size, "epoll: %s", strerror(errno));
		goto fail;
	}
	return 0;
fail:
	bench_libport_close(lp, ctx);
	return err;
}

int bench_libport_submit(struct bench_libport *lp, struct bench_ctx *ctx,
			 unsigned int stream, uint64_t seq, uint64_t start_ns)
{
	struct gpuar_word_wait w = {
		.user_data = stream,
		.target = seq,
		.point = 1,	/* one call site: every job is the same work */
		.start_ns = start_ns,
		.line = gpuar_line_id(lp->line[stream]),
		.plan = ctx->cfg->plan,
	};
	int r;

	if (!start_ns)
		lp->start_ns[stream] = bench_now_ns();
	r = gpuar_submit_word_waits(lp->port, &w, 1, NULL);
	return r == 1 ? 0 : (r < 0 ? r : -EIO);
}

unsigned int bench_libport_records(struct bench_libport *lp,
				   struct bench_ctx *ctx, int n,
				   uint64_t seen_ns, struct bench_done *done,
				   unsigned int max)
{
	unsigned int out = 0;

	for (int i = 0; i < n && out < max; i++) {
		const struct gpuar_record *rec = &lp->rec[i];
		unsigned int s = (unsigned int)rec->user_data;

		if (s >= ctx->dev->streams || !ctx->target[s]) {
			bench_note_error(ctx, "a record for no pending wait (user data %llu)",
					 (unsigned long long)rec->user_data);
			ctx->errors++;
			continue;
		}
		/*
		 * The backstop expired (the waiter was kept off its CPU that
		 * long): the work is merely late, so wait again from the
		 * original start, as the port's contract says.
		 */
		if (rec->outcome == GPUAR_OUTCOME_TIMEOUT &&
		    !bench_libport_submit(lp, ctx, s, ctx->target[s], lp->start_ns[s]))
			continue;
		done[out].stream = s;
		done[out].seen_ns = seen_ns;
		done[out].complete_ns = rec->complete_ns;
		done[out].error = rec->status != 0 ||
			!bench_word_reached(ctx->dev->stream[s].line, ctx->target[s]);
		if (done[out].error)
			bench_note_error(ctx, "record outcome %u status %d value %llu for target %llu",
					 rec->outcome, rec->status,
					 (unsigned long long)rec->value,
					 (unsigned long long)ctx->target[s]);
		ctx->target[s] = 0;
		out++;
	}
	return out;
}

int bench_libport_wait_loop(struct bench_libport *lp, struct bench_ctx *ctx,
			    struct bench_done *done, unsigned int max,
			    bench_libport_reap_fn reap, void *arg)
{
	/* No more than the pending waits, or than lp->rec holds. */
	unsigned int room = ctx->pending < max ? ctx->pending : max;

	if (room > BENCH_MAX_STREAMS)
		room = BENCH_MAX_STREAMS;
	for (;;) {
		int r = reap(arg, lp, room);
		unsigned int n;

		if (r == -EINTR || r == -EAGAIN)
			continue;
		if (r < 0)
			return r;
		n = bench_libport_records(lp, ctx, r, bench_now_ns(), done, max);
		if (n)
			return (int)n;
	}
}

static int reap_blocking(void *arg, struct bench_libport *lp, unsigned int room)
{
	(void)arg;
	return gpuar_port_reap(lp->port, lp->rec, room, -1);
}

int bench_libport_reap_wait(void *state, struct bench_ctx *ctx,
			    struct bench_done *done, unsigned int max)
{
	return bench_libport_wait_loop(state, ctx, done, max, reap_blocking, NULL);
}

/*
 * The loop's one call, on any readiness: gpuar_port_reap(0) runs the user
 * engine, reads the queued records, and on EPOLLPRI (or the user
 * engine's early wake) claims and watches the imminent waits, then
 * reads theirs.
 */
static int reap_on_readiness(void *arg, struct bench_libport *lp,
			     unsigned int room)
{
	struct epoll_event ev;

	(void)arg;
	if (BENCH_SYS(epoll_wait(lp->ep, &ev, 1, -1)) < 0)
		return -errno;
	return gpuar_port_reap(lp->port, lp->rec, room, 0);
}

int bench_libport_epoll_wait(void *state, struct bench_ctx *ctx,
			     struct bench_done *done, unsigned int max)
{
	return bench_libport_wait_loop(state, ctx, done, max, reap_on_readiness,
				       NULL);
}

int bench_libport_port_stats(void *state, struct gpuar_port_stats *st)
{
	const struct bench_libport *lp = state;

	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return gpuar_port_stats(lp->port, st);
}

int bench_libport_state_open(struct bench_ctx *ctx, enum gpuar_engine engine,
			     uint32_t flags, bool epoll, void **state,
			     char *why, size_t size)
{
	struct bench_libport *lp = calloc(1, sizeof(*lp));
	int err;

	if (!lp)
		return -ENOMEM;
	err = bench_libport_open(lp, ctx, engine, flags, epoll, why, size);
	if (err) {
		free(lp);
		return err;
	}
	*state = lp;
	return 0;
}

int bench_libport_state_submit(void *state, struct bench_ctx *ctx,
			       unsigned int stream, uint64_t seq)
{
	return bench_libport_submit(state, ctx, stream, seq, 0);
}

void bench_libport_state_close(void *state, struct bench_ctx *ctx)
{
	bench_libport_close(state, ctx);
	free(state);
}

int bench_libport_lib_syscalls(void *state, uint64_t *n)
{
	const struct bench_libport *lp = state;
	struct gpuar_port_lib_stats st = { .size = sizeof(st) };
	int ret = gpuar_port_lib_stats(lp->port, &st);

	*n = st.syscalls;
	return ret;
}
