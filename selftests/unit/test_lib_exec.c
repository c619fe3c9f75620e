// SPDX-License-Identifier: MIT
/*
 * libgpuar: the reactor and FILL executor on the virtual clock (exact to
 * the ns), the naive executor, executor kinds and the fallback chain.
 */
#include <gpuar/gpuar.h>

#include "unit_interrupt.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define US 1000ULL
#define MS 1000000ULL

static struct gpuar_vclock *vc;

static struct gpuar_exec *new_exec(enum gpuar_exec_kind kind, uint64_t park)
{
	struct gpuar_exec_options o = { .kind = kind, .park_bound_ns = park };
	struct gpuar_exec *ex;

	vc = gpuar_vclock_new(0);
	o.clock = gpuar_vclock_clock(vc);
	ck_assert_int_eq(gpuar_exec_new(&ex, &o, NULL), 0);
	return ex;
}

static void free_exec(struct gpuar_exec *ex)
{
	gpuar_exec_free(ex);
	gpuar_vclock_free(vc);
}

/* A task awaiting one word; notes when it saw it done. */
struct waiter_task {
	uint64_t *word;
	uint64_t target;
	uint64_t deadline;	/* 0: none */
	uint64_t done_at;
	uint32_t woke;
};

static int waiter_step(struct gpuar_task *t, void *arg)
{
	struct waiter_task *w = arg;

	w->woke = gpuar_task_woke(t);
	if (__atomic_load_n(w->word, __ATOMIC_ACQUIRE) >= w->target ||
	    (w->deadline && gpuar_vclock_now(vc) >= w->deadline)) {
		w->done_at = gpuar_vclock_now(vc);
		return GPUAR_TASK_DONE;
	}
	gpuar_task_await_word(t, w->word, w->target);
	if (w->deadline)
		gpuar_task_await_timer(t, w->deadline);
	return GPUAR_TASK_PENDING;
}

/* A task doing @slices slices of CPU work, yielding between them. */
struct worker_task {
	int slices;
	uint64_t slice_ns;
	uint64_t done_at;
	int ran;
};

static int worker_step(struct gpuar_task *t, void *arg)
{
	struct worker_task *w = arg;

	gpuar_vclock_advance(vc, w->slice_ns);
	if (++w->ran == w->slices) {
		w->done_at = gpuar_vclock_now(vc);
		return GPUAR_TASK_DONE;
	}
	gpuar_task_yield(t);
	return GPUAR_TASK_PENDING;
}

START_TEST(ready_work_runs_while_another_task_waits)
{
	struct gpuar_exec *ex = new_exec(GPUAR_EXEC_GPU_REACTOR, 0);
	uint64_t word = 0;
	struct waiter_task a = { .word = &word, .target = 1 };
	struct worker_task b = { .slices = 5, .slice_ns = 10 * US };
	struct gpuar_exec_stats st;

	gpuar_vclock_store_at(vc, 100 * US, &word, 1);
	ck_assert_int_eq(gpuar_exec_spawn(ex, waiter_step, &a, NULL), 0);
	ck_assert_int_eq(gpuar_exec_spawn(ex, worker_step, &b, NULL), 0);
	ck_assert_int_eq(gpuar_exec_run(ex, NULL), 0);
	ck_assert_uint_eq(b.done_at, 50 * US);	/* all work ran first */
	ck_assert_uint_eq(a.done_at, 100 * US);	/* then a park to the store */
	ck_assert_uint_eq(a.woke, GPUAR_WOKE_SOURCE);
	gpuar_exec_stats(ex, &st);
	ck_assert_uint_eq(st.polls, 7);		/* a twice, b five times */
	ck_assert_uint_eq(st.wakes, 1);
	ck_assert_uint_eq(st.parks, 1);
	ck_assert_uint_eq(st.sleeps, 0);
	ck_assert_uint_eq(st.idle_ns, 50 * US);
	free_exec(ex);
}
END_TEST

START_TEST(store_at_30us_is_seen_between_10us_slices)
{
	struct gpuar_exec *ex = new_exec(GPUAR_EXEC_GPU_REACTOR, 0);
	uint64_t word = 0;
	struct waiter_task a = { .word = &word, .target = 1 };
	struct worker_task b = { .slices = 10, .slice_ns = 10 * US };
	struct gpuar_exec_stats st;

	gpuar_vclock_store_at(vc, 30 * US, &word, 1);
	ck_assert_int_eq(gpuar_exec_spawn(ex, waiter_step, &a, NULL), 0);
	ck_assert_int_eq(gpuar_exec_spawn(ex, worker_step, &b, NULL), 0);
	ck_assert_int_eq(gpuar_exec_run(ex, NULL), 0);
	ck_assert_uint_eq(a.done_at, 30 * US);	/* on time */
	ck_assert_uint_eq(b.done_at, 100 * US);
	gpuar_exec_stats(ex, &st);
	ck_assert_uint_eq(st.parks + st.sleeps, 0);	/* never idle */
	free_exec(ex);
}
END_TEST

START_TEST(park_never_overshoots_a_deadline)
{
	struct gpuar_exec *ex = new_exec(GPUAR_EXEC_GPU_REACTOR, 100 * US);
	uint64_t word = 0;
	struct waiter_task a = { .word = &word, .target = 1, .deadline = 250 * US };
	struct gpuar_exec_stats st;

	gpuar_vclock_store_at(vc, 1000 * US, &word, 1);
	ck_assert_int_eq(gpuar_exec_spawn(ex, waiter_step, &a, NULL), 0);
	ck_assert_int_eq(gpuar_exec_run(ex, NULL), 0);
	ck_assert_uint_eq(a.done_at, 250 * US);
	ck_assert_uint_eq(a.woke, GPUAR_WOKE_TIMER);
	ck_assert_uint_eq(word, 0);	/* time never passed the deadline */
	gpuar_exec_stats(ex, &st);
	ck_assert_uint_eq(st.parks, 3);	/* to 100, 200, then 250 */
	free_exec(ex);
}
END_TEST

struct timer_task {
	uint64_t at;
	uint64_t fired;
	int *order;
	int id;
};

static int timer_step(struct gpuar_task *t, void *arg)
{
	struct timer_task *tt = arg;

	if (gpuar_task_woke(t) & GPUAR_WOKE_TIMER) {
		tt->fired = gpuar_vclock_now(vc);
		*tt->order = *tt->order * 10 + tt->id;
		return GPUAR_TASK_DONE;
	}
	gpuar_task_await_timer(t, tt->at);
	return GPUAR_TASK_PENDING;
}

START_TEST(only_timers_sleep_to_the_earliest)
{
	struct gpuar_exec *ex = new_exec(GPUAR_EXEC_GPU_REACTOR, 0);
	int order = 0;
	struct timer_task a = { .at = 50 * US, .order = &order, .id = 1 };
	struct timer_task b = { .at = 20 * US, .order = &order, .id = 2 };
	struct gpuar_exec_stats st;

	gpuar_exec_spawn(ex, timer_step, &a, NULL);
	gpuar_exec_spawn(ex, timer_step, &b, NULL);
	ck_assert_int_eq(gpuar_exec_run(ex, NULL), 0);
	ck_assert_int_eq(order, 21);
	ck_assert_uint_eq(a.fired, 50 * US);
	ck_assert_uint_eq(b.fired, 20 * US);
	gpuar_exec_stats(ex, &st);
	ck_assert_uint_eq(st.sleeps, 2);
	ck_assert_uint_eq(st.parks, 0);
	ck_assert_uint_eq(st.idle_ns, 50 * US);
	free_exec(ex);
}
END_TEST

static int forgetful_step(struct gpuar_task *t, void *arg)
{
	(void)t;
	(void)arg;
	return GPUAR_TASK_PENDING;	/* registers nothing: nothing can wake it */
}

START_TEST(stalled_is_reported)
{
	struct gpuar_exec *ex = new_exec(_i ? GPUAR_EXEC_GPU_REACTOR : GPUAR_EXEC_NAIVE, 0);
	struct gpuar_error err;

	gpuar_exec_spawn(ex, forgetful_step, NULL, NULL);
	ck_assert_int_eq(gpuar_exec_run(ex, &err), -EDEADLK);
	ck_assert_uint_eq(err.code, _i ? GPUAR_E_STALLED : GPUAR_E_PENDED_INLINE);
	free_exec(ex);
}
END_TEST

static int failing_step(struct gpuar_task *t, void *arg)
{
	(void)t;
	(void)arg;
	return -EIO;
}

START_TEST(task_error_ends_the_run)
{
	struct gpuar_exec *ex = new_exec(GPUAR_EXEC_GPU_REACTOR, 0);
	struct gpuar_error err;

	gpuar_exec_spawn(ex, failing_step, NULL, NULL);
	ck_assert_int_eq(gpuar_exec_run(ex, &err), -EIO);
	ck_assert_uint_eq(err.code, GPUAR_E_BACKEND);
	free_exec(ex);
}
END_TEST

START_TEST(naive_waits_inline)
{
	struct gpuar_exec *ex = new_exec(GPUAR_EXEC_NAIVE, 0);
	uint64_t word = 0;
	struct waiter_task a = { .word = &word, .target = 1 };
	struct worker_task b = { .slices = 5, .slice_ns = 10 * US };

	gpuar_vclock_store_at(vc, 100 * US, &word, 1);
	gpuar_exec_spawn(ex, waiter_step, &a, NULL);
	gpuar_exec_spawn(ex, worker_step, &b, NULL);
	ck_assert_int_eq(gpuar_exec_run(ex, NULL), 0);
	ck_assert_uint_eq(a.done_at, 100 * US);
	ck_assert_uint_eq(b.done_at, 150 * US);	/* ran only after a's wait */
	free_exec(ex);
}
END_TEST

/* A source error wakes the task, which sees it. */
static int err_check(void *ctx, uint64_t *v)
{
	(void)ctx;
	(void)v;
	return -ENODEV;
}

static const struct gpuar_src_ops err_ops = { .check = err_check };

static int src_err_step(struct gpuar_task *t, void *arg)
{
	static struct gpuar_src src = { .ops = &err_ops };

	if (gpuar_task_woke(t) & GPUAR_WOKE_SOURCE)
		return gpuar_task_source_error(t);
	*(int *)arg += 1;
	gpuar_task_await_source(t, &src);
	return GPUAR_TASK_PENDING;
}

START_TEST(source_error_reaches_the_task)
{
	struct gpuar_exec *ex = new_exec(GPUAR_EXEC_GPU_REACTOR, 0);
	struct gpuar_error err;
	int steps = 0;

	gpuar_exec_spawn(ex, src_err_step, &steps, NULL);
	ck_assert_int_eq(gpuar_exec_run(ex, &err), -ENODEV);
	ck_assert_int_eq(steps, 1);
	free_exec(ex);
}
END_TEST

static void *write_later(void *arg)
{
	int fd = *(int *)arg;

	usleep(20000);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	return NULL;
}

static int fence_step(struct gpuar_task *t, void *arg)
{
	int *fds = arg;

	if (gpuar_task_woke(t) & GPUAR_WOKE_SOURCE)
		return GPUAR_TASK_DONE;
	gpuar_task_await_fence(t, fds[0]);
	return GPUAR_TASK_PENDING;
}

/* Real clock: a pollable fd (standing in for a sync_file) wakes the task. */
START_TEST(fd_wait_wakes_the_task)
{
	struct gpuar_exec_options o = { .kind = GPUAR_EXEC_GPU_REACTOR };
	struct gpuar_exec_stats st;
	struct gpuar_exec *ex;
	pthread_t th;
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(gpuar_exec_new(&ex, &o, NULL), 0);
	gpuar_exec_spawn(ex, fence_step, fds, NULL);
	pthread_create(&th, NULL, write_later, &fds[1]);
	ck_assert_int_eq(gpuar_exec_run(ex, NULL), 0);
	pthread_join(th, NULL);
	gpuar_exec_stats(ex, &st);
	ck_assert_uint_eq(st.wakes, 1);
	ck_assert_uint_ge(st.parks, 1);
	gpuar_exec_free(ex);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

static int uring_timer_step(struct gpuar_task *t, void *arg)
{
	uint64_t *at = arg;

	if (gpuar_task_woke(t) & GPUAR_WOKE_TIMER)
		return GPUAR_TASK_DONE;
	*at = gpuar_now_ns() + 10 * MS;
	gpuar_task_await_timer(t, *at);
	return GPUAR_TASK_PENDING;
}

START_TEST(io_uring_executor_idles_on_timeouts)
{
	struct gpuar_exec_options o = { .kind = GPUAR_EXEC_IO_URING };
	struct gpuar_exec_stats st;
	struct gpuar_exec *ex;
	uint64_t at = 0;

	if (!gpuar_caps_probe()->io_uring) {
		fprintf(stderr, "skip: io_uring not usable on this host\n");
		return;
	}
	ck_assert_int_eq(gpuar_exec_new(&ex, &o, NULL), 0);
	gpuar_exec_spawn(ex, uring_timer_step, &at, NULL);
	ck_assert_int_eq(gpuar_exec_run(ex, NULL), 0);
	ck_assert_uint_ge(gpuar_now_ns(), at);
	gpuar_exec_stats(ex, &st);
	ck_assert_uint_ge(st.sleeps, 1);
	ck_assert_uint_eq(st.uring_fallbacks, 0);
	gpuar_exec_free(ex);
}
END_TEST

static int far_timer_step(struct gpuar_task *t, void *arg)
{
	(void)arg;
	if (gpuar_task_woke(t) & GPUAR_WOKE_TIMER)
		return GPUAR_TASK_DONE;
	gpuar_task_await_timer(t, gpuar_now_ns() + 10000 * MS);
	return GPUAR_TASK_PENDING;
}

/*
 * An interrupt set from another thread ends an idle run with -EINTR (a
 * binding's Ctrl-C), on each executor kind; the task stays for a next run.
 */
START_TEST(interrupt_ends_an_idle_run)
{
	static const enum gpuar_exec_kind kinds[] = {
		GPUAR_EXEC_GPU_REACTOR, GPUAR_EXEC_NAIVE, GPUAR_EXEC_IO_URING,
	};
	struct gpuar_exec_options o = { .kind = kinds[_i] };
	struct gpuar_interrupt *intr;
	struct gpuar_error err;
	struct gpuar_exec *ex;
	pthread_t th;
	uint64_t t0;

	if (kinds[_i] == GPUAR_EXEC_IO_URING && !gpuar_caps_probe()->io_uring)
		return;
	ck_assert_int_eq(gpuar_interrupt_new(&intr), 0);
	ck_assert_int_eq(gpuar_exec_new(&ex, &o, NULL), 0);
	gpuar_exec_set_interrupt(ex, intr);
	gpuar_exec_spawn(ex, far_timer_step, NULL, NULL);
	t0 = gpuar_now_ns();
	pthread_create(&th, NULL, unit_interrupt_in_30ms, intr);
	ck_assert_int_eq(gpuar_exec_run(ex, &err), -EINTR);
	ck_assert_uint_lt(gpuar_now_ns() - t0, 1000 * MS);
	ck_assert_uint_eq(err.sys_errno, EINTR);
	pthread_join(th, NULL);
	/* Still set: the next run returns at once; reset, it would wait. */
	ck_assert(gpuar_interrupt_triggered(intr));
	ck_assert_int_eq(gpuar_exec_run(ex, NULL), -EINTR);
	gpuar_interrupt_reset(intr);
	ck_assert(!gpuar_interrupt_triggered(intr));
	gpuar_exec_free(ex);
	gpuar_interrupt_free(intr);
}
END_TEST

static int pipe_step(struct gpuar_task *t, void *arg)
{
	int *fd = arg;

	if (gpuar_task_woke(t) & GPUAR_WOKE_SOURCE)
		return GPUAR_TASK_DONE;
	gpuar_task_await_fence(t, *fd);
	return GPUAR_TASK_PENDING;
}

/* Write to the second pipe at 50 ms, to the first at 60 ms. */
static void *write_both_later(void *arg)
{
	int *w = arg;
	char c = 1;

	usleep(50000);
	ck_assert_int_eq(write(w[1], &c, 1), 1);
	usleep(10000);
	ck_assert_int_eq(write(w[0], &c, 1), 1);
	return NULL;
}

/*
 * The io-uring executor idles through its ring on fds too: two tasks on
 * two pipes wait in one submit-and-wait to the write, not in a ppoll on
 * one of them cut into 100 us park bounds.
 */
START_TEST(io_uring_executor_parks_on_fds_through_the_ring)
{
	struct gpuar_exec_options o = { .kind = GPUAR_EXEC_IO_URING };
	struct gpuar_exec_stats st;
	struct gpuar_exec *ex;
	int a[2], b[2], w[2];
	pthread_t th;

	if (!gpuar_caps_probe()->io_uring)
		return;
	ck_assert_int_eq(pipe(a), 0);
	ck_assert_int_eq(pipe(b), 0);
	ck_assert_int_eq(gpuar_exec_new(&ex, &o, NULL), 0);
	gpuar_exec_spawn(ex, pipe_step, &a[0], NULL);
	gpuar_exec_spawn(ex, pipe_step, &b[0], NULL);
	w[0] = a[1];
	w[1] = b[1];
	pthread_create(&th, NULL, write_both_later, w);
	ck_assert_int_eq(gpuar_exec_run(ex, NULL), 0);
	pthread_join(th, NULL);
	gpuar_exec_stats(ex, &st);
	ck_assert_uint_eq(st.uring_fallbacks, 0);
	ck_assert_uint_le(st.parks, 4);
	gpuar_exec_free(ex);
	for (int i = 0; i < 2; i++) {
		close(a[i]);
		close(b[i]);
	}
}
END_TEST

static int registrations_step(struct gpuar_task *t, void *arg)
{
	struct gpuar_exec *ex = arg;

	ck_assert_ptr_eq(gpuar_task_exec(t), ex);
	ck_assert_uint_eq(gpuar_task_woke(t), GPUAR_WOKE_SPAWN);
	ck_assert_int_eq(gpuar_task_await_source(t, NULL), -EINVAL);
	ck_assert_int_eq(gpuar_task_await_word(t, NULL, 1), -EINVAL);
	ck_assert_int_eq(gpuar_task_await_fence(t, -1), -EINVAL);
	ck_assert_int_eq(gpuar_task_await_timer(NULL, 1), -EINVAL);
	ck_assert_int_eq(gpuar_task_yield(NULL), -EINVAL);
	return GPUAR_TASK_DONE;
}

START_TEST(bad_arguments_are_refused)
{
	struct gpuar_exec_options o = { .kind = 9 };
	struct gpuar_exec *ex;

	ck_assert_int_eq(gpuar_exec_new(&ex, &o, NULL), -EINVAL);
	ck_assert_int_eq(gpuar_exec_new(&ex, NULL, NULL), -EINVAL);
	ex = new_exec(GPUAR_EXEC_GPU_REACTOR, 0);
	ck_assert_ptr_eq(gpuar_exec_clock(ex), gpuar_vclock_clock(vc));
	ck_assert_int_eq(gpuar_exec_spawn(ex, NULL, NULL, NULL), -EINVAL);
	ck_assert_int_eq(gpuar_exec_spawn(ex, registrations_step, ex, NULL), 0);
	ck_assert_int_eq(gpuar_exec_run(ex, NULL), 0);
	ck_assert_int_eq(gpuar_exec_run(NULL, NULL), -EINVAL);
	/* Nothing left: an empty run is done at once. */
	ck_assert_int_eq(gpuar_exec_run(ex, NULL), 0);
	free_exec(ex);
	ck_assert_str_eq(gpuar_exec_kind_name(GPUAR_EXEC_GPU_REACTOR), "gpu-reactor");
	ck_assert_ptr_null(gpuar_exec_kind_name((enum gpuar_exec_kind)0));
}
END_TEST

/* The monotonic clock sleeps to its deadline and leaves the slack as found. */
START_TEST(monotonic_sleep_restores_timer_slack)
{
	const struct gpuar_clock *c = gpuar_clock_monotonic();
	uint64_t until;

	ck_assert_int_eq(prctl(PR_SET_TIMERSLACK, 50000UL, 0, 0, 0), 0);
	until = c->ops->now(c->ctx) + 10 * MS;
	c->ops->sleep_until(c->ctx, until);
	ck_assert_uint_ge(gpuar_now_ns(), until);
	ck_assert_int_eq(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), 50000);
}
END_TEST

/* ------------------------------------------------------ kinds */

START_TEST(kind_names_parse)
{
	enum gpuar_exec_kind k;
	struct gpuar_error err;

	ck_assert_int_eq(gpuar_exec_kind_parse("io-uring", &k, &err), 0);
	ck_assert_int_eq(k, GPUAR_EXEC_IO_URING);
	ck_assert_int_eq(gpuar_exec_kind_parse("gpu-reactor", &k, &err), 0);
	ck_assert_int_eq(k, GPUAR_EXEC_GPU_REACTOR);
	ck_assert_int_eq(gpuar_exec_kind_parse("naive", &k, &err), 0);
	ck_assert_int_eq(k, GPUAR_EXEC_NAIVE);
	ck_assert_int_eq(gpuar_exec_kind_parse("tokio", &k, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_EXECUTOR);
	ck_assert_ptr_nonnull(strstr(err.message, "tokio"));
}
END_TEST

static const struct gpuar_caps all_caps = {
	.io_uring = true, .hw_word_wait = true, .module = true,
	.precise_sleep = true, .hw_word_wait_kind = "umwait",
};

START_TEST(each_kind_runs_where_possible)
{
	enum gpuar_exec_kind k, got;
	struct gpuar_error err;

	for (k = GPUAR_EXEC_NAIVE; k <= GPUAR_EXEC_IO_URING; k++) {
		ck_assert_int_eq(gpuar_exec_resolve(k, true, &all_caps, &got, &err), 0);
		ck_assert_int_eq(got, k);
		ck_assert_uint_eq(err.code, GPUAR_OK);
	}
}
END_TEST

START_TEST(missing_io_uring_falls_back_with_warning)
{
	struct gpuar_caps c = all_caps;
	enum gpuar_exec_kind got;
	struct gpuar_error err;

	c.io_uring = false;
	ck_assert_int_eq(gpuar_exec_resolve(GPUAR_EXEC_IO_URING, false, &c, &got, &err), 0);
	ck_assert_int_eq(got, GPUAR_EXEC_GPU_REACTOR);
	ck_assert_uint_eq(err.code, GPUAR_W_EXECUTOR_FALLBACK);
	ck_assert_ptr_nonnull(strstr(err.message, "'io-uring'"));
	ck_assert_ptr_nonnull(strstr(err.message, "io_uring is not usable"));
	ck_assert_ptr_nonnull(strstr(err.message, "'gpu-reactor'"));
	ck_assert_int_eq(gpuar_exec_resolve(GPUAR_EXEC_IO_URING, true, &c, &got, &err),
			 -EOPNOTSUPP);
	ck_assert_uint_eq(err.code, GPUAR_E_EXECUTOR_REFUSED);
}
END_TEST

START_TEST(missing_precise_sleep_falls_back_to_naive)
{
	struct gpuar_caps c = all_caps;
	enum gpuar_exec_kind k, got;
	struct gpuar_error err;

	c.precise_sleep = false;
	for (k = GPUAR_EXEC_GPU_REACTOR; k <= GPUAR_EXEC_IO_URING; k++) {
		ck_assert_int_eq(gpuar_exec_resolve(k, false, &c, &got, &err), 0);
		ck_assert_int_eq(got, GPUAR_EXEC_NAIVE);
		ck_assert_uint_eq(err.code, GPUAR_W_EXECUTOR_FALLBACK);
		ck_assert_ptr_nonnull(strstr(err.message, "'naive'"));
		ck_assert_int_eq(gpuar_exec_resolve(k, true, &c, &got, &err), -EOPNOTSUPP);
		ck_assert_uint_eq(err.code, GPUAR_E_EXECUTOR_REFUSED);
	}
}
END_TEST

START_TEST(unknown_kind_is_invalid)
{
	enum gpuar_exec_kind got;
	struct gpuar_error err;

	ck_assert_int_eq(gpuar_exec_resolve((enum gpuar_exec_kind)9, false, &all_caps,
					    &got, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_EXECUTOR);
}
END_TEST

START_TEST(missing_hw_word_wait_falls_back_with_warning)
{
	struct gpuar_caps c = all_caps;
	struct gpuar_error err;

	ck_assert_str_eq(gpuar_park_resolve(&c, &err), "umwait");
	ck_assert_uint_eq(err.code, GPUAR_OK);
	c.hw_word_wait = false;
	c.hw_word_wait_kind = "none";
	ck_assert_str_eq(gpuar_park_resolve(&c, &err), "sleep");
	ck_assert_uint_eq(err.code, GPUAR_W_PARK_FALLBACK);
}
END_TEST

START_TEST(caps_are_probed_once_and_consistent)
{
	const struct gpuar_caps *c = gpuar_caps_probe();
	const char *hw = gpuar_hw_word_wait_kind();

	ck_assert_ptr_eq(c, gpuar_caps_probe());
	ck_assert_int_eq(c->hw_word_wait, hw != NULL);
	ck_assert_str_eq(c->hw_word_wait_kind, hw ? hw : "none");
	if (access(GPUAR_DEVICE_PATH, F_OK) != 0)
		ck_assert(!c->module);
	ck_assert(c->precise_sleep);
	if (!hw) {
		uint64_t word = 0;

		ck_assert_int_eq(gpuar_hw_word_wait(&word, 0, gpuar_now_ns() + MS, MS),
				 -EOPNOTSUPP);
	}
}
END_TEST

static void *store_later(void *arg)
{
	usleep(20000);
	__atomic_store_n((uint64_t *)arg, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Where the CPU has a hardware word wait: a store ends the wait, else the
 * deadline. The 200 us bound is one every kind keeps (arm64 WFE needs an
 * event stream tick, up to 150 us, and refuses a smaller one).
 */
START_TEST(hw_word_wait_returns_on_store_or_deadline)
{
	const char *kind = gpuar_hw_word_wait_kind();
	uint64_t word = 0, until;
	pthread_t th;

	if (!kind) {
		fprintf(stderr, "skip: the CPU has no hardware word wait\n");
		return;
	}
	if (!strcmp(kind, "wfe"))
		ck_assert_int_eq(gpuar_hw_word_wait(&word, 0, gpuar_now_ns() + MS,
						    100000), -EOPNOTSUPP);
	until = gpuar_now_ns() + 10 * MS;
	ck_assert_int_eq(gpuar_hw_word_wait(&word, 0, until, 200000), 0);
	ck_assert_uint_ge(gpuar_now_ns(), until);
	pthread_create(&th, NULL, store_later, &word);
	ck_assert_int_eq(gpuar_hw_word_wait(&word, 0, gpuar_now_ns() + 5000 * MS,
					    200000), 0);
	ck_assert_uint_eq(__atomic_load_n(&word, __ATOMIC_ACQUIRE), 1);
	pthread_join(th, NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_exec");
	TCase *r = tcase_create("reactor"), *k = tcase_create("kinds");
	SRunner *sr;
	int failed;

	tcase_set_timeout(r, 30);
	tcase_add_test(r, ready_work_runs_while_another_task_waits);
	tcase_add_test(r, store_at_30us_is_seen_between_10us_slices);
	tcase_add_test(r, park_never_overshoots_a_deadline);
	tcase_add_test(r, only_timers_sleep_to_the_earliest);
	tcase_add_loop_test(r, stalled_is_reported, 0, 2);
	tcase_add_test(r, task_error_ends_the_run);
	tcase_add_test(r, naive_waits_inline);
	tcase_add_test(r, source_error_reaches_the_task);
	tcase_add_test(r, fd_wait_wakes_the_task);
	tcase_add_test(r, io_uring_executor_idles_on_timeouts);
	tcase_add_loop_test(r, interrupt_ends_an_idle_run, 0, 3);
	tcase_add_test(r, io_uring_executor_parks_on_fds_through_the_ring);
	tcase_add_test(r, bad_arguments_are_refused);
	tcase_add_test(r, monotonic_sleep_restores_timer_slack);
	suite_add_tcase(s, r);
	tcase_add_test(k, kind_names_parse);
	tcase_add_test(k, each_kind_runs_where_possible);
	tcase_add_test(k, missing_io_uring_falls_back_with_warning);
	tcase_add_test(k, missing_precise_sleep_falls_back_to_naive);
	tcase_add_test(k, unknown_kind_is_invalid);
	tcase_add_test(k, missing_hw_word_wait_falls_back_with_warning);
	tcase_add_test(k, caps_are_probed_once_and_consistent);
	tcase_add_test(k, hw_word_wait_returns_on_store_or_deadline);
	suite_add_tcase(s, k);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
