// SPDX-License-Identifier: MIT
/*
 * user-predict: libgpuar's user engine port (no module) under the stated
 * plan: the shared core's estimator predicts each job's completion, the
 * engine sleeps until the margin before it, then checks the word every
 * park_us. The waiter blocks in gpuar_reap(), which runs the engine.
 * The device stores into the port's own lines (gpuar_line_alloc).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpuar/gpuar.h>

#include "bench_clock.h"
#include "bench_strategy.h"
#include "bench_word.h"

struct user_state {
	struct gpuar_port *port;
	struct gpuar_line *line[BENCH_MAX_STREAMS];
	uint64_t *dev_line[BENCH_MAX_STREAMS];	/* the device's own, restored */
	struct gpuar_record rec[BENCH_MAX_STREAMS];
	uint64_t start_ns[BENCH_MAX_STREAMS];	/* original start, for resubmits */
};

static void user_close(void *state, struct bench_ctx *ctx)
{
	struct user_state *us = state;

	for (unsigned int i = 0; i < ctx->dev->streams; i++) {
		if (us->dev_line[i])
			ctx->dev->stream[i].line = us->dev_line[i];
		if (us->line[i])
			gpuar_line_free(us->port, us->line[i]);
	}
	gpuar_port_close(us->port);
	free(us);
}

static int user_open(const struct bench_strategy *st, struct bench_ctx *ctx,
		     void **state, char *why, size_t size)
{
	struct gpuar_port_options opts = {
		.engine = GPUAR_ENGINE_USER, .flags = GPUAR_PORT_CLOEXEC,
	};
	struct gpuar_error diag = { 0 };
	struct user_state *us = calloc(1, sizeof(*us));
	int err;

	(void)st;
	if (!us)
		return -ENOMEM;
	err = gpuar_port_open(&us->port, &opts, &diag);
	if (err) {
		snprintf(why, size, "gpuar_port_open: %s", diag.message);
		free(us);
		return err;
	}
	for (unsigned int i = 0; i < ctx->dev->streams; i++) {
		err = gpuar_line_alloc(us->port, &us->line[i]);
		if (err) {
			snprintf(why, size, "gpuar_line_alloc: %s", strerror(-err));
			user_close(us, ctx);
			return err;
		}
		us->dev_line[i] = ctx->dev->stream[i].line;
		ctx->dev->stream[i].line = gpuar_line_words(us->line[i]);
	}
	*state = us;
	return 0;
}

static int submit(struct user_state *us, struct bench_ctx *ctx,
		  unsigned int stream, uint64_t seq, uint64_t start_ns)
{
	struct gpuar_word_wait w = {
		.user_data = stream,
		.target = seq,
		.point = 1,
		.start_ns = start_ns,
		.line = gpuar_line_id(us->line[stream]),
		.plan = ctx->cfg->plan,
	};
	int r;

	if (!start_ns)
		us->start_ns[stream] = bench_now_ns();
	r = gpuar_submit_word_waits(us->port, &w, 1, NULL);
	return r == 1 ? 0 : (r < 0 ? r : -EIO);
}

static int user_submit(void *state, struct bench_ctx *ctx, unsigned int stream,
		       uint64_t seq)
{
	return submit(state, ctx, stream, seq, 0);
}

static int user_wait(void *state, struct bench_ctx *ctx,
		     struct bench_done *done, unsigned int max)
{
	struct user_state *us = state;

	for (;;) {
		int r = gpuar_reap(us->port, us->rec,
				   ctx->pending < max ? ctx->pending : max, -1);
		uint64_t now = bench_now_ns();
		unsigned int n = 0;

		if (r == -EINTR)
			continue;
		if (r < 0)
			return r;
		for (int i = 0; i < r; i++) {
			const struct gpuar_record *rec = &us->rec[i];
			unsigned int s = (unsigned int)rec->user_data;

			if (s >= ctx->dev->streams || !ctx->target[s]) {
				bench_note_error(ctx, "a record for no pending wait (user data %llu)",
						 (unsigned long long)rec->user_data);
				ctx->errors++;
				continue;
			}
			/*
			 * The backstop expired (the waiter was kept off its CPU
			 * that long): the work is merely late, so wait again
			 * from the original start, as the port's contract says.
			 */
			if (rec->outcome == GPUAR_OUTCOME_TIMEOUT &&
			    !submit(us, ctx, s, ctx->target[s], us->start_ns[s]))
				continue;
			done[n].stream = s;
			done[n].seen_ns = now;
			done[n].complete_ns = rec->complete_ns;
			done[n].error = rec->status != 0 ||
				!bench_word_reached(ctx->dev->stream[s].line,
					       ctx->target[s]);
			if (done[n].error)
				bench_note_error(ctx, "record outcome %u status %d value %llu for target %llu",
						 rec->outcome, rec->status,
						 (unsigned long long)rec->value,
						 (unsigned long long)ctx->target[s]);
			ctx->target[s] = 0;
			n++;
		}
		if (n)
			return (int)n;
	}
}

const struct bench_strategy bench_strat_user_predict = {
	.name = "user-predict",
	.family = "user-predict",
	.engine = "user",
	.plan = bench_plan_stated,
	.open = user_open,
	.submit = user_submit,
	.wait = user_wait,
	.close = user_close,
};
