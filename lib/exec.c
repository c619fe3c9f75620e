// SPDX-License-Identifier: MIT
/*
 * The single-threaded reactor and FILL executor (see <gpuar/exec.h>), and
 * the naive executor that runs the same tasks with every wait inline.
 */
#include "defaults.h"
#include "exec_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>


struct gpuar_task {
	struct gpuar_exec *exec;
	gpuar_task_fn fn;
	void *arg;
	u32 woke;		/* GPUAR_WOKE_* for the coming step */
	int src_err;
	bool ready;
	bool done;
	/* registrations of the last step */
	const struct gpuar_src *src;
	u64 src_seq;		/* registration order: parks go to the earliest */
	u64 deadline;		/* GPUAR_U64_MAX: none */
	bool yield;
	/* storage for await_word / await_fence */
	struct gpuar_word_source word_src;
	struct gpuar_fd_source fd_src;
};

GPUAR_EXPORT int gpuar_exec_new(struct gpuar_exec **out,
				const struct gpuar_exec_options *opts,
				struct gpuar_error *diag)
{
	struct gpuar_exec_options o;
	const char *args[2] = { "gpuar_exec_options.kind", "unknown executor" };
	struct gpuar_exec *ex;
	int ret;

	gpuar_diag_clear(diag);
	if (!out || !opts) {
		args[0] = out ? "opts" : "exec";
		args[1] = "must not be NULL";
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
	}
	*out = NULL;
	ret = GPUAR_OPTIONS_IN(&o, opts, GPUAR_EXEC_OPTIONS_SIZE_1_0,
			       "gpuar_exec_options", diag);
	if (ret)
		return ret;
	if (!gpuar_exec_kind_name(o.kind))
		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
	ex = calloc(1, sizeof(*ex));
	if (!ex)
		return -ENOMEM;
	ex->kind = o.kind;
	ex->intr_fd = -1;
	ex->park_bound_ns = o.park_bound_ns ? o.park_bound_ns :
			    GPUAR_EXEC_DEFAULT_PARK_BOUND_NS;
	ex->clock = o.clock ? o.clock : gpuar_clock_monotonic();
	if (ex->kind == GPUAR_EXEC_IO_URING && !o.clock) {
		ret = gpuar_uring_clock_init(ex);
		if (ret) {
			free(ex);
			return ret;
		}
	}
	*out = ex;
	return 0;
}

static void free_tasks(struct gpuar_exec *ex, bool only_done)
{
	u32 i, n = 0;

	for (i = 0; i < ex->ntasks; i++) {
		if (!only_done || ex->tasks[i]->done)
			free(ex->tasks[i]);
		else
			ex->tasks[n++] = ex->tasks[i];
	}
	ex->ntasks = n;
}

GPUAR_EXPORT void gpuar_exec_free(struct gpuar_exec *ex)
{
	if (!ex)
		return;
	free_tasks(ex, false);
	free(ex->tasks);
	if (ex->uring_ready)
		gpuar_uring_clock_exit(ex);
	free(ex);
}

GPUAR_EXPORT const struct gpuar_clock *gpuar_exec_clock(const struct gpuar_exec *ex)
{
	return ex ? ex->clock : NULL;
}

GPUAR_EXPORT int gpuar_exec_spawn(struct gpuar_exec *ex, gpuar_task_fn fn,
				  void *arg, struct gpuar_task **out)
{
	struct gpuar_task *t;

	if (!ex || !fn)
		return -EINVAL;
	if (ex->ntasks == ex->cap) {
		u32 cap = ex->cap ? ex->cap * 2 : 8;
		struct gpuar_task **n = realloc(ex->tasks, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ex->tasks = n;
		ex->cap = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->exec = ex;
	t->fn = fn;
	t->arg = arg;
	t->ready = true;
	t->woke = GPUAR_WOKE_SPAWN;
	t->deadline = GPUAR_U64_MAX;
	ex->tasks[ex->ntasks++] = t;
	if (out)
		*out = t;
	return 0;
}

GPUAR_EXPORT int gpuar_task_await_source(struct gpuar_task *t,
					 const struct gpuar_src *src)
{
	if (!t || !src || !src->ops || !src->ops->check)
		return -EINVAL;
	t->src = src;
	t->src_seq = ++t->exec->seq;
	return 0;
}

GPUAR_EXPORT int gpuar_task_await_word(struct gpuar_task *t,
				       const uint64_t *word, uint64_t target)
{
	if (!t || !word)
		return -EINVAL;
	return gpuar_task_await_source(t, gpuar_word_source_init(&t->word_src,
								 word, target));
}

GPUAR_EXPORT int gpuar_task_await_fence(struct gpuar_task *t, int fd)
{
	if (!t || fd < 0)
		return -EINVAL;
	return gpuar_task_await_source(t, gpuar_fd_source_init(&t->fd_src, fd));
}

GPUAR_EXPORT int gpuar_task_await_timer(struct gpuar_task *t,
					uint64_t deadline_ns)
{
	if (!t)
		return -EINVAL;
	if (deadline_ns < t->deadline)
		t->deadline = deadline_ns;
	return 0;
}

GPUAR_EXPORT int gpuar_task_yield(struct gpuar_task *t)
{
	if (!t)
		return -EINVAL;
	t->yield = true;
	return 0;
}

GPUAR_EXPORT uint32_t gpuar_task_woke(const struct gpuar_task *t)
{
	return t ? t->woke : 0;
}

GPUAR_EXPORT int gpuar_task_source_error(const struct gpuar_task *t)
{
	return t ? t->src_err : -EINVAL;
}

GPUAR_EXPORT struct gpuar_exec *gpuar_task_exec(const struct gpuar_task *t)
{
	return t ? t->exec : NULL;
}

GPUAR_EXPORT void gpuar_exec_stats(const struct gpuar_exec *ex,
				   struct gpuar_exec_stats *stats)
{
	if (stats) {
		if (ex)
			*stats = ex->st;
		else
			memset(stats, 0, sizeof(*stats));
	}
}

static u64 now_of(const struct gpuar_exec *ex)
{
	return ex->clock->ops->now(ex->clock->ctx);
}

static bool registered(const struct gpuar_task *t)
{
	return t->src || t->deadline != GPUAR_U64_MAX;
}

/* One step: clear the registrations, call the task, account the result. */
static int step(struct gpuar_exec *ex, struct gpuar_task *t)
{
	int r;

	t->src = NULL;
	t->deadline = GPUAR_U64_MAX;
	t->yield = false;
	t->ready = false;
	ex->st.polls++;
	r = t->fn(t, t->arg);
	t->woke = 0;
	t->src_err = 0;
	if (r == GPUAR_TASK_DONE || r < 0) {
		t->done = true;
		t->src = NULL;
		t->deadline = GPUAR_U64_MAX;
	} else if (t->yield) {
		t->ready = true;
		t->woke = GPUAR_WOKE_YIELD;
	}
	return r < 0 ? r : 0;
}

static int task_failed(int r, struct gpuar_error *diag)
{
	char num[24];
	const char *args[4] = { "task", num, "step", strerror(-r) };

	snprintf(num, sizeof(num), "%d", r);
	return gpuar_diag_set(diag, GPUAR_E_BACKEND, -r, args, 4);
}

/* Wake tasks whose source completed (or failed) or whose deadline passed. */
static u32 wake_scan(struct gpuar_exec *ex)
{
	u64 now = now_of(ex);
	u32 i, woken = 0;

	for (i = 0; i < ex->ntasks; i++) {
		struct gpuar_task *t = ex->tasks[i];
		u32 why = 0;

		if (t->done || t->ready || !registered(t))
			continue;
		if (t->src) {
			int c = t->src->ops->check(t->src->ctx, NULL);

			if (c != 0) {
				why |= GPUAR_WOKE_SOURCE;
				t->src_err = c < 0 ? c : 0;
			}
		}
		if (t->deadline <= now)
			why |= GPUAR_WOKE_TIMER;
		if (why) {
			t->woke = why;
			t->ready = true;
			ex->st.wakes++;
			woken++;
		}
	}
	return woken;
}

GPUAR_EXPORT void gpuar_exec_set_interrupt(struct gpuar_exec *ex,
					   const struct gpuar_interrupt *intr)
{
	if (ex)
		ex->intr_fd = gpuar_interrupt_fd_of(intr);
}

static bool interrupted(const struct gpuar_exec *ex)
{
	return ex->intr_fd >= 0 && gpuar_interrupt_fd_set(ex->intr_fd);
}

/*
 * Sleep to @until on the executor's clock, or until the interrupt is set
 * (the io_uring clock's sleep is then a park through the ring on it).
 */
static void idle_sleep(struct gpuar_exec *ex, u64 until)
{
	if (ex->intr_fd >= 0 && ex->uring_ready &&
	    gpuar_uring_park(ex, &ex->intr_fd, 1, until) == 0)
		return;
	gpuar_sleep_interruptible(ex->clock, until, ex->intr_fd);
}

static int interrupted_run(struct gpuar_error *diag)
{
	return gpuar_diag_sys(diag, "gpuar_exec_run (interrupted)", EINTR);
}

/*
 * The io-uring kind parks through its ring: one submit-and-wait on every
 * fd its tasks wait on and the interrupt's, to the earliest @deadline;
 * bounded by the park bound only when some task waits on a word, which
 * only a check sees. False when it could not (too many fds, a refused
 * op: counted), and the caller parks as the other kinds do.
 */
static bool park_through_ring(struct gpuar_exec *ex, u64 now, u64 deadline)
{
	int fds[GPUAR_URING_PARK_FDS];
	bool words = false;
	u64 until = deadline;
	u32 i, n = 0;

	if (!ex->uring_ready)
		return false;
	for (i = 0; i < ex->ntasks; i++) {
		const struct gpuar_src *src = ex->tasks[i]->src;

		if (ex->tasks[i]->done || !src)
			continue;
		if (!src->ops->fd) {
			words = true;
			continue;
		}
		if (n == GPUAR_URING_PARK_FDS - 1)
			return false;
		fds[n++] = src->ops->fd(src->ctx);
	}
	if (ex->intr_fd >= 0)
		fds[n++] = ex->intr_fd;
	if (words && now + ex->park_bound_ns < until)
		until = now + ex->park_bound_ns;
	if (gpuar_uring_park(ex, fds, n, until) < 0) {
		ex->st.uring_fallbacks++;
		return false;
	}
	return true;
}

/*
 * Nothing is ready: sleep to the earliest deadline when only timers are
 * registered, else park on the earliest registered wait's source, bounded
 * by the park bound and the earliest deadline. Returns -EDEADLK when
 * nothing registered can wake anyone.
 */
static int idle(struct gpuar_exec *ex)
{
	const struct gpuar_clock *c = ex->clock;
	struct gpuar_task *park_on = NULL;
	u64 deadline = GPUAR_U64_MAX, now, until;
	u32 i;
	int ret = 0;

	for (i = 0; i < ex->ntasks; i++) {
		struct gpuar_task *t = ex->tasks[i];

		if (t->done)
			continue;
		if (t->deadline < deadline)
			deadline = t->deadline;
		if (t->src && (!park_on || t->src_seq < park_on->src_seq))
			park_on = t;
	}
	if (!park_on && deadline == GPUAR_U64_MAX)
		return -EDEADLK;
	now = now_of(ex);
	if (!park_on) {
		ex->st.sleeps++;
		idle_sleep(ex, deadline);
	} else if (park_through_ring(ex, now, deadline)) {
		ex->st.parks++;
	} else {
		until = now + ex->park_bound_ns;
		if (deadline < until)
			until = deadline;
		ex->st.parks++;
		if (park_on->src->ops->park)
			ret = park_on->src->ops->park(park_on->src->ctx, c, until);
		else
			c->ops->sleep_until(c->ctx, until);
	}
	ex->st.idle_ns += now_of(ex) - now;
	return ret;
}

static u32 live_tasks(const struct gpuar_exec *ex)
{
	u32 i, n = 0;

	for (i = 0; i < ex->ntasks; i++)
		n += !ex->tasks[i]->done;
	return n;
}

static int stalled(struct gpuar_exec *ex, struct gpuar_error *diag)
{
	char num[24];
	const char *args[1] = { gpuar_u64_text(live_tasks(ex), num) };

	return gpuar_diag_set(diag, GPUAR_E_STALLED, EDEADLK, args, 1);
}

static int run_reactor(struct gpuar_exec *ex, struct gpuar_error *diag)
{
	u32 i, n;
	int r;

	while (live_tasks(ex)) {
		if (interrupted(ex))
			return interrupted_run(diag);
		/* One pass over the tasks ready now (spawned ones included). */
		n = ex->ntasks;
		for (i = 0; i < n; i++) {
			struct gpuar_task *t = ex->tasks[i];

			if (t->done || !t->ready)
				continue;
			r = step(ex, t);
			if (r < 0)
				return task_failed(r, diag);
		}
		if (!live_tasks(ex))
			break;
		wake_scan(ex);
		for (i = 0; i < ex->ntasks; i++)
			if (!ex->tasks[i]->done && ex->tasks[i]->ready)
				break;
		if (i < ex->ntasks)
			continue;
		r = idle(ex);
		if (r == -EDEADLK)
			return stalled(ex, diag);
		if (r < 0)
			return task_failed(r, diag);
	}
	return 0;
}

/* The naive executor: each task to completion, every wait inline. */
static int run_naive(struct gpuar_exec *ex, struct gpuar_error *diag)
{
	const struct gpuar_clock *c = ex->clock;
	u32 i;
	int r;

	for (i = 0; i < ex->ntasks; i++) {
		struct gpuar_task *t = ex->tasks[i];

		while (!t->done) {
			r = step(ex, t);
			if (r < 0)
				return task_failed(r, diag);
			if (t->done || t->ready)
				continue;
			if (!registered(t)) {
				const char *args[2] = { "a task", "naive" };

				return gpuar_diag_set(diag, GPUAR_E_PENDED_INLINE,
						      EDEADLK, args, 2);
			}
			/* Block here until the wait completes or the deadline. */
			while (!wake_scan(ex)) {
				u64 now = now_of(ex), until = t->deadline;

				if (interrupted(ex))
					return interrupted_run(diag);
				if (t->src) {
					if (now + ex->park_bound_ns < until)
						until = now + ex->park_bound_ns;
					ex->st.parks++;
					if (t->src->ops->park)
						r = t->src->ops->park(t->src->ctx, c, until);
					else
						c->ops->sleep_until(c->ctx, until);
					if (r < 0)
						return task_failed(r, diag);
				} else {
					ex->st.sleeps++;
					idle_sleep(ex, until);
				}
				ex->st.idle_ns += now_of(ex) - now;
			}
		}
	}
	return 0;
}

GPUAR_EXPORT int gpuar_exec_run(struct gpuar_exec *ex, struct gpuar_error *diag)
{
	int r;

	gpuar_diag_clear(diag);
	if (!ex) {
		const char *args[2] = { "exec", "must not be NULL" };

		return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL,
				      args, 2);
	}
	r = ex->kind == GPUAR_EXEC_NAIVE ? run_naive(ex, diag) :
	    run_reactor(ex, diag);
	free_tasks(ex, true);
	return r;
}
