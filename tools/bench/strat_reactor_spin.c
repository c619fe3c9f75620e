// SPDX-License-Identifier: MIT
/*
 * reactor-spin: the design NVIDIA's cuda-async crate ships (its
 * reactor.rs): one process-wide reactor thread scans every armed slot
 * with plain loads, spinning 10,000 passes without a completion before
 * it yields the CPU (sched_yield), and parks only when nothing is armed;
 * arming the first slot unparks it. A completion disarms the slot and
 * wakes the waiter (the waiting task's thread), which blocks meanwhile.
 * Its latency is a scan plus a wake-up; its CPU, the scanner's core
 * whenever anything is armed: the baseline a kernel port's CPU is
 * measured against. The scanner's unparks are counted as wake-ups.
 *
 * cuda-scanner (--device cuda) is the same reactor over real streams, as
 * a library without gpuar's lines must build it: the producer records
 * each stream's event after the job's write, and the scanner polls every
 * pending stream's event with cuEventQuery, yielding the CPU after each
 * pass that completed nothing (a driver query per slot makes a pass far
 * dearer than a load; a busier pace would only burn the core). Its thread
 * makes the producer's context current first. A query's error completes
 * the wait as an error with the driver's reason: a dead stream is not
 * waited for forever.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_counts.h"
#include "bench_clock.h"
#include "bench_cuda.h"
#include "bench_futex.h"
#include "bench_strategy.h"
#include "bench_word.h"

/* cuda-async's SPIN_PASSES: scans without a completion before a yield. */
#define REACTOR_SPIN_PASSES 10000

/* cuda-scanner: passes without a completion before a yield. */
#define SCANNER_SPIN_PASSES 1

/* What a reactor checks, and how long it spins before it yields. */
struct reactor_kind {
	bool events;		/* cuEventQuery of the stream's event, not the word */
	unsigned int spin_passes;
};

static const struct reactor_kind reactor_words = { false, REACTOR_SPIN_PASSES };
static const struct reactor_kind reactor_events = { true, SCANNER_SPIN_PASSES };

struct slot {
	const uint64_t *word;
	uint64_t target;
	atomic_bool armed;
	atomic_bool done;	/* disarmed by a completion: the waiter's */
	atomic_bool failed;	/* ... by an error, named in reactor.why */
};

struct reactor {
	struct bench_ctx *ctx;
	const struct reactor_kind *kind;
	bool attach_failed;		/* the scanner's context: every slot fails */
	char why[BENCH_CUDA_WHY_MAX];	/* the scanner's first error */
	atomic_bool why_set;
	struct slot slot[BENCH_MAX_STREAMS];
	atomic_uint armed;		/* slots armed */
	atomic_uint park_gen;		/* bumped to unpark the scanner */
	atomic_uint done_gen;		/* bumped at every completion */
	atomic_bool waiter_asleep;
	atomic_bool stop;
	pthread_t thread;
};

static void reactor_plan(const struct bench_strategy *st,
			 const struct bench_config *cfg, char *buf, size_t size)
{
	(void)st;
	(void)cfg;
	snprintf(buf, size, "reactor:spin_passes=%d", REACTOR_SPIN_PASSES);
}

static void scanner_plan(const struct bench_strategy *st,
			 const struct bench_config *cfg, char *buf, size_t size)
{
	(void)st;
	(void)cfg;
	snprintf(buf, size, "scanner:cuEventQuery,spin_passes=%d",
		 SCANNER_SPIN_PASSES);
}

/* Slot @i's check: 1 done, 0 not yet, -1 failed (the reason in r->why). */
static int check(struct reactor *r, unsigned int i)
{
	struct slot *s = &r->slot[i];
	char why[BENCH_CUDA_WHY_MAX];
	int done;

	if (!r->kind->events)
		return bench_word_reached(s->word, s->target);
	if (r->attach_failed)
		return -1;
	done = bench_cuda_event_query(r->ctx->dev->cuda, i, s->target, why,
				      sizeof(why));
	if (done >= 0)
		return done;
	/* Only the scanner writes why; the waiter reads it after a done. */
	if (!atomic_load(&r->why_set)) {
		snprintf(r->why, sizeof(r->why), "%s", why);
		atomic_store(&r->why_set, true);
	}
	return -1;
}

/* One pass over the slots; true when one completed. */
static bool scan(struct reactor *r)
{
	bool any = false;

	for (unsigned int i = 0; i < r->ctx->dev->streams; i++) {
		struct slot *s = &r->slot[i];
		int done;

		if (!atomic_load_explicit(&s->armed, memory_order_acquire) ||
		    !(done = check(r, i)))
			continue;
		atomic_store(&s->failed, done < 0);
		atomic_store(&s->armed, false);
		atomic_store(&s->done, true);
		atomic_fetch_sub(&r->armed, 1);
		any = true;
	}
	if (any) {
		atomic_fetch_add(&r->done_gen, 1);
		if (atomic_load(&r->waiter_asleep))
			BENCH_SYS(bench_futex_wake((uint32_t *)&r->done_gen, 1));
	}
	return any;
}

static void *reactor_main(void *arg)
{
	struct reactor *r = arg;
	unsigned int idle_passes = 0;

	/* The events' context, current here as on the producer's thread. */
	if (r->kind->events &&
	    bench_cuda_attach(r->ctx->dev->cuda, r->why, sizeof(r->why))) {
		r->attach_failed = true;
		atomic_store(&r->why_set, true);
	}
	while (!atomic_load(&r->stop)) {
		unsigned int gen = atomic_load(&r->park_gen);

		if (!atomic_load(&r->armed)) {
			/* Nothing armed: park until an arm (or stop) bumps gen. */
			if (!BENCH_SYS(bench_futex_wait((uint32_t *)&r->park_gen, gen, 0)))
				__atomic_fetch_add(&r->ctx->helper_wakeups, 1,
						   __ATOMIC_RELAXED);
			continue;
		}
		if (scan(r)) {
			idle_passes = 0;
		} else if (++idle_passes >= r->kind->spin_passes) {
			sched_yield();
			idle_passes = 0;
		}
	}
	if (r->kind->events && !r->attach_failed)
		bench_cuda_detach(r->ctx->dev->cuda);
	return NULL;
}

static int reactor_start(const struct reactor_kind *kind, struct bench_ctx *ctx,
			 void **state, char *why, size_t size)
{
	struct reactor *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->ctx = ctx;
	r->kind = kind;
	err = -pthread_create(&r->thread, NULL, reactor_main, r);
	if (err) {
		snprintf(why, size, "pthread_create: %s", strerror(-err));
		free(r);
		return err;
	}
	*state = r;
	return 0;
}

static int reactor_open(const struct bench_strategy *st, struct bench_ctx *ctx,
			void **state, char *why, size_t size)
{
	(void)st;
	return reactor_start(&reactor_words, ctx, state, why, size);
}

static int scanner_open(const struct bench_strategy *st, struct bench_ctx *ctx,
			void **state, char *why, size_t size)
{
	int err = bench_cuda_has(ctx->dev, BENCH_CUDA_NEED_EVENT_QUERY, why, size);

	(void)st;
	return err ? err : reactor_start(&reactor_events, ctx, state, why, size);
}

static int scanner_probe(const struct bench_config *cfg, char *why, size_t size)
{
	return bench_cuda_probe(cfg->device, BENCH_CUDA_NEED_EVENT_QUERY, why,
				size);
}

static int reactor_submit(void *state, struct bench_ctx *ctx, unsigned int stream,
			  uint64_t seq)
{
	struct reactor *r = state;
	struct slot *s = &r->slot[stream];

	s->word = ctx->dev->stream[stream].line;
	s->target = seq;
	atomic_store(&s->done, false);
	atomic_store_explicit(&s->armed, true, memory_order_release);
	/* Idle to active: unpark the scanner (only then, as cuda-async). */
	if (atomic_fetch_add(&r->armed, 1) == 0) {
		atomic_fetch_add(&r->park_gen, 1);
		BENCH_SYS(bench_futex_wake((uint32_t *)&r->park_gen, 1));
	}
	return 0;
}

static int reactor_wait(void *state, struct bench_ctx *ctx,
			struct bench_done *done, unsigned int max)
{
	struct reactor *r = state;

	for (;;) {
		unsigned int gen = atomic_load(&r->done_gen), n = 0;
		uint64_t now = 0;

		for (unsigned int i = 0; i < ctx->dev->streams && n < max; i++) {
			if (!ctx->target[i] || !atomic_load(&r->slot[i].done))
				continue;
			if (!now)
				now = bench_now_ns();
			atomic_store(&r->slot[i].done, false);
			done[n].stream = i;
			done[n].seen_ns = now;
			done[n].complete_ns = 0;
			done[n].error = atomic_load(&r->slot[i].failed) ||
					!bench_word_reached(ctx->dev->stream[i].line,
							    ctx->target[i]);
			if (atomic_load(&r->slot[i].failed))
				bench_note_error(ctx, "%s", r->why);
			ctx->target[i] = 0;
			n++;
		}
		if (n)
			return (int)n;
		atomic_store(&r->waiter_asleep, true);
		if (BENCH_SYS(bench_futex_wait((uint32_t *)&r->done_gen, gen, 0)) &&
		    errno != EAGAIN && errno != EINTR) {
			atomic_store(&r->waiter_asleep, false);
			return -errno;
		}
		atomic_store(&r->waiter_asleep, false);
	}
}

static void reactor_close(void *state, struct bench_ctx *ctx)
{
	struct reactor *r = state;

	(void)ctx;
	atomic_store(&r->stop, true);
	atomic_fetch_add(&r->park_gen, 1);
	BENCH_SYS(bench_futex_wake((uint32_t *)&r->park_gen, 1));
	pthread_join(r->thread, NULL);
	free(r);
}

const struct bench_strategy bench_strat_reactor_spin = {
	.name = "reactor-spin",
	.family = "reactor-spin",
	.engine = "bench",
	.plan = reactor_plan,
	.open = reactor_open,
	.submit = reactor_submit,
	.wait = reactor_wait,
	.close = reactor_close,
};

const struct bench_strategy bench_strat_cuda_scanner = {
	.name = "cuda-scanner",
	.family = "cuda-scanner",
	.engine = "bench",
	.gpu_only = true,
	.notify = BENCH_NOTIFY_EVENT,
	.probe = scanner_probe,
	.plan = scanner_plan,
	.open = scanner_open,
	.submit = reactor_submit,
	.wait = reactor_wait,
	.close = reactor_close,
};
