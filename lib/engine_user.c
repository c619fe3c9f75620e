// SPDX-License-Identifier: MIT
/*
 * The user engine proper (see engine_user.h for its parts): opening and
 * closing a port, word submit, cancel, process and stats.
 */
#include "engine_user.h"
#include "backoff.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

/*
 * Take each entry's estimator point, held so that no later new point
 * evicts it while its wait is pending (a full table gives up its least
 * recently used idle point, as the module's port does). False, with
 * nothing held, when every point of a full table is held.
 */
static bool take_points(struct uport *u, const struct gpuar_word_wait *waits,
			u32 count)
{
	struct gpuar_est_entry *e;
	u32 i, j;

	for (i = 0; i < count; i++) {
		e = gpuar_word_point(&u->tab, waits[i].point, &waits[i].plan);
		if (!e) {
			for (j = 0; j < i; j++)
				gpuar_est_entry_release(
					gpuar_est_table_find(&u->tab,
							     waits[j].point));
			return false;
		}
		gpuar_est_entry_hold(&u->tab, e);
	}
	return true;
}

/*
 * One entry, with the module's rules, errors and precedence (see
 * <linux/gpuar.h>): the entry's own fields first (all -EINVAL), then its
 * line (-ENOENT), so an entry with both faults is -EINVAL on either
 * engine.
 */
static int validate_word(const struct uport *u,
			 const struct gpuar_word_wait *w, u64 now)
{
	if (!gpuar_word_entry_valid(w, now))
		return -EINVAL;
	return uport_line_find(u, w->line) ? 0 : -ENOENT;
}

/* Commit one validated entry: its first check, then its state. */
static void word_commit(struct uport *u, const struct gpuar_word_wait *in,
			u64 now)
{
	struct uwait *w = uport_wait_alloc(u);
	u64 seen;

	w->kind = UW_WORD;
	w->user_data = in->user_data;
	w->point = in->point;
	w->start_ns = in->start_ns ? in->start_ns : now;
	w->line = uport_line_find(u, in->line);
	w->word = &w->line->words[in->slot];
	w->target = in->target;
	/* Held since take_points(), released when the wait ends. */
	w->pt = gpuar_est_table_find(&u->tab, in->point);
	w->line->pending++;
	seen = gpuar_word_load(w->word);
	w->seen = seen;
	u->st.checks++;
	/* A resubmission long overdue teaches nothing (lib/backoff.c). */
	if (gpuar_word_begin(&w->ws, &in->plan,
			     w->pt && !gpuar_backoff_due(w->start_ns, now) ?
			     &w->pt->est : NULL,
			     w->start_ns, in->start_ns != 0, now,
			     gpuar_reached(seen, in->target), &u->cfg)) {
		uport_word_end(u, w, seen);
		return;
	}
	if (w->ws.phase == GPUAR_WORD_SLEEP)
		u->st.sleeps++;
	uport_wait_reindex(u, w);
}

static int u_submit_word(struct gpuar_port *port,
			 const struct gpuar_word_wait *waits, u32 count,
			 u32 *error_index)
{
	struct uport *u = uport_of(port);
	int ret = 0;
	u32 i;
	u64 now;

	if (count > u->max_waits) {
		*error_index = count;
		return -E2BIG;
	}
	now = gpuar_now_ns();
	pthread_mutex_lock(&u->lock);
	/* All or nothing: validate every entry before committing any. */
	for (i = 0; i < count; i++) {
		ret = validate_word(u, &waits[i], now);
		if (ret) {
			*error_index = i;
			goto out;
		}
	}
	/*
	 * As the module: the limits refuse the batch as a whole (error_index
	 * = count), and only once every entry has been found valid.
	 */
	if ((u64)u->npend + u->qlen + count > u->max_waits ||
	    !take_points(u, waits, count)) {
		ret = -ENOSPC;
		*error_index = count;
		goto out;
	}
	for (i = 0; i < count; i++)
		word_commit(u, &waits[i], now);
	u->st.submitted += count;
	ret = (int)count;
	uport_note_change(u);
	uport_arm_timer(u, false);
	uport_sync_eventfd(u);
out:
	pthread_mutex_unlock(&u->lock);
	return ret;
}

static int u_submit_fence(struct gpuar_port *port,
			  const struct gpuar_fence_wait *waits, u32 count,
			  u32 *error_index)
{
	struct uport *u = uport_of(port);
	struct uwait *some[64], **ws = count <= 64 ? some :
				       calloc(count, sizeof(*ws));
	int ret;

	if (!ws)
		return -ENOMEM;
	if (count > u->max_waits) {
		*error_index = count;
		ret = -E2BIG;
		goto out_free;
	}
	pthread_mutex_lock(&u->lock);
	ret = uport_fence_submit_locked(u, waits, count, ws, error_index);
	/* A fence already signalled completes now, as in the module. */
	if (ret >= 0)
		uport_process_locked(u, false);
	pthread_mutex_unlock(&u->lock);
out_free:
	if (ws != some)
		free(ws);
	return ret;
}

/* End word wait @w as CANCELLED at @now. */
static void word_cancel(struct uport *u, struct uwait *w, u64 now)
{
	w->ws.phase = GPUAR_WORD_DONE;
	w->ws.outcome = GPUAR_OUTCOME_CANCELLED;
	w->ws.complete_ns = now;
	w->ws.next_ns = GPUAR_U64_MAX;
	uport_word_end(u, w, gpuar_word_load(w->word));
}

static int u_cancel(struct gpuar_port *port, u64 user_data)
{
	struct uport *u = uport_of(port);
	u64 now = gpuar_now_ns();
	int n = 0;
	u32 i;

	pthread_mutex_lock(&u->lock);
	/* Over the whole slab: a cancel is rare, a run is not. */
	for (i = 0; i < u->max_waits && u->npend; i++) {
		struct uwait *w = &u->slab[i];

		if (w->kind == UW_FREE || w->user_data != user_data)
			continue;
		n++;
		if (w->kind == UW_FENCE)
			uport_fence_end(u, w, GPUAR_OUTCOME_CANCELLED,
					-ECANCELED, now);
		else
			word_cancel(u, w, now);
	}
	if (n) {
		uport_arm_timer(u, false);
		uport_sync_eventfd(u);
	} else {
		/* Lost the race to a completion whose record is queued? */
		n = uport_queued_completion(u, user_data) ? -EALREADY : -ENOENT;
	}
	pthread_mutex_unlock(&u->lock);
	return n;
}

/* ------------------------------------------------------------ process */

static int u_process(struct gpuar_port *port)
{
	struct uport *u = uport_of(port);
	int n;

	pthread_mutex_lock(&u->lock);
	/*
	 * No wake-up sample: the caller's loop may run this long after the
	 * timer fired (a busy loop), which is its lateness, not a wake-up's.
	 */
	uport_process_locked(u, false);
	n = (int)u->qlen;
	pthread_mutex_unlock(&u->lock);
	return n;
}

static u64 u_next_check(struct gpuar_port *port)
{
	struct uport *u = uport_of(port);
	struct uwait *first;
	u64 next;

	pthread_mutex_lock(&u->lock);
	first = uheap_top(&u->heap[UH_DUE], u);
	next = first ? first->ws.next_ns : GPUAR_U64_MAX;
	pthread_mutex_unlock(&u->lock);
	return next;
}

/* ------------------------------------------------------------ stats */

static int u_stats(struct gpuar_port *port, struct gpuar_port_stats *stats)
{
	struct uport *u = uport_of(port);

	pthread_mutex_lock(&u->lock);
	*stats = u->st;
	stats->size = sizeof(*stats);
	stats->pending = u->npend;
	stats->queued = u->qlen;
	stats->lines = u->nlines;
	stats->points = u->tab.used;
	stats->wakeup_latency_ns = gpuar_wakelat_quantile(&u->wakelat);
	pthread_mutex_unlock(&u->lock);
	return 0;
}

static int u_point_stats(struct gpuar_port *port,
			 struct gpuar_point_stats *stats)
{
	struct uport *u = uport_of(port);
	struct gpuar_est_entry *e;
	u64 point = stats->point, pred = 0;
	int ret = -ENOENT;

	pthread_mutex_lock(&u->lock);
	e = gpuar_est_table_find(&u->tab, point);
	if (e) {
		memset(stats, 0, sizeof(*stats));
		stats->size = sizeof(*stats);
		stats->point = point;
		stats->samples = e->est.samples;
		if (gpuar_est_predict(&e->est, &pred))
			stats->flags |= GPUAR_POINT_HAS_PREDICTION;
		stats->predicted_ns = pred;
		memcpy(stats->outcomes, e->outcomes, sizeof(stats->outcomes));
		ret = 0;
	}
	pthread_mutex_unlock(&u->lock);
	return ret;
}

/* ------------------------------------------------------------ open, close */

/*
 * @in_child: a forked child closing its copy (see lib/process.c): the
 * watcher thread is the parent's and the epoll set is shared, so only
 * the child's fds and memory go.
 */
static void u_free(struct uport *u, bool in_child)
{
	u32 i;

	if (in_child)
		u->watcher = false;	/* the thread is the parent's */
	uport_watcher_stop(u);
	for (i = 0; u->slab && i < u->max_waits; i++)
		if (u->slab[i].kind == UW_FENCE)
			close(u->slab[i].fd);
	if (u->tfd >= 0)
		close(u->tfd);
	if (u->evfd >= 0)
		close(u->evfd);
	if (u->epfd >= 0)
		close(u->epfd);
	for (i = 0; i < u->nlines; i++)
		free(u->lines[i]);
	free(u->lines);
	free(u->slab);
	free(u->heap_store);
	free(u->q);
	free(u->entries);
	free(u->index);
	if (!in_child)
		pthread_mutex_destroy(&u->lock);
	free(u);
}

static void u_close(struct gpuar_port *port)
{
	u_free(uport_of(port), port->closing_in_child);
	port->state = NULL;
}

static const struct gpuar_engine_ops user_ops = {
	.line_register = uport_line_register,
	.line_unregister = uport_line_unregister,
	.submit_word = u_submit_word,
	.submit_fence = u_submit_fence,
	.cancel = u_cancel,
	.reap = uport_reap,
	.process = u_process,
	.next_check = u_next_check,
	.stats = u_stats,
	.point_stats = u_point_stats,
	.claim = uport_claim,
	.claim_held = uport_claim_held,
	.close = u_close,
};

/* The port's defaults (core/defaults.h) and @opts, in the engine's units. */
static void u_configure(struct uport *u, const struct gpuar_port_options *opts)
{
	u->max_waits = opts->max_waits;
	u->cfg.poll_interval_ns = opts->poll_interval_ns;
	u->cfg.floor_ns = GPUAR_DEFAULT_CHECK_FLOOR_US * GPUAR_NSEC_PER_USEC;
	u->cfg.backstop_ns = opts->poll_backstop_ns;
	u->cfg.backstop_timeout = true;
	u->busy_budget_ns = opts->busy_read_us == GPUAR_BUSY_READ_OFF ? 0 :
		(u64)(opts->busy_read_us ? opts->busy_read_us :
		      GPUAR_DEFAULT_BUSY_READ_US) * GPUAR_NSEC_PER_USEC;
}

int gpuar_port_user_open(struct gpuar_port *port,
			 const struct gpuar_port_options *opts, bool imminent)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct uport *u = calloc(1, sizeof(*u));
	u32 cap;
	int ret;

	if (!u)
		return -ENOMEM;
	pthread_mutex_init(&u->lock, NULL);
	u->epfd = u->evfd = u->tfd = u->stopfd = -1;
	u_configure(u, opts);
	u->imminent = imminent;
	cap = gpuar_est_table_cap(opts->max_points);
	u->slab = calloc(u->max_waits, sizeof(*u->slab));
	u->heap_store = calloc((size_t)UH_COUNT * u->max_waits,
			       sizeof(*u->heap_store));
	u->q = calloc(u->max_waits, sizeof(*u->q));
	u->entries = calloc(opts->max_points, sizeof(*u->entries));
	u->index = calloc(cap, sizeof(*u->index));
	if (!u->slab || !u->heap_store || !u->q || !u->entries || !u->index) {
		u_free(u, false);
		return -ENOMEM;
	}
	uport_waits_init(u);
	gpuar_est_table_init(&u->tab, u->entries, u->index, cap,
			     opts->max_points);
	gpuar_est_table_evict_idle(&u->tab);
	gpuar_wakelat_init(&u->wakelat);
	/* Every fd close-on-exec; gpuar_port_open() makes the port fd follow opts. */
	u->epfd = epoll_create1(EPOLL_CLOEXEC);
	u->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	u->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (u->epfd < 0 || u->evfd < 0 || u->tfd < 0)
		goto sys;
	/* data.ptr NULL: not a fence (those carry their wait). */
	ev.data.ptr = NULL;
	if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->tfd, &ev) < 0)
		goto sys;
	port->engine = GPUAR_ENGINE_USER;
	port->ops = &user_ops;
	port->state = u;
	if (opts->flags & GPUAR_PORT_WATCHER) {
		/* The fd is the record eventfd; the thread waits in epfd. */
		ret = uport_watcher_start(u);
		if (ret)
			goto fail;
		port->fd = u->evfd;
		return 0;
	}
	ev.data.ptr = NULL;
	if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->evfd, &ev) < 0)
		goto sys;
	port->fd = u->epfd;
	return 0;
sys:
	ret = -errno;
fail:
	u_free(u, false);
	return ret;
}
