// SPDX-License-Identifier: MIT
/*
 * The user engine: the module's port semantics run in the caller's process.
 *
 * Its fd is an epoll fd over an eventfd (readable while a record is
 * queued), a timerfd (armed, absolute, at the next word check any pending
 * wait needs; hrtimer-backed, so without timer slack) and every pending
 * fence wait's sync_file. Readiness means "a record is ready or the engine
 * must run": gpuar_port_process() (or gpuar_reap) runs the checks that are
 * due. Word waits go through the same state machine (wstep.c) and the same
 * estimator (the shared core) as the module's.
 */
#include "port.h"
#include "wstep.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

enum { UW_WORD = 1, UW_FENCE = 2 };

/* As the module's check_floor_us default: no check interval below 10 us. */
#define GPUAR_USER_CHECK_FLOOR_NS 10000ULL

struct uwait {
	u8 kind;
	u64 user_data;
	u64 point;
	u64 start_ns;
	/* word waits */
	const uint64_t *word;
	u64 target;
	struct gpuar_line *line;
	struct gpuar_est_entry *pt;
	struct gpuar_wstep ws;
	/* fence waits: the engine's own reference to the sync_file */
	int fd;
};

struct uport {
	pthread_mutex_t lock;
	int epfd, evfd, tfd;
	/* GPUAR_PORT_WATCHER: a thread runs the engine, woken through epfd */
	bool watcher;
	int stopfd;
	pthread_t thread;
	bool ev_set;		/* the eventfd holds a count */
	u64 armed_ns;		/* the timerfd's expiry, 0 when disarmed */
	struct gpuar_wstep_cfg cfg;
	u32 max_waits;
	u32 next_line_id;
	struct uwait *pend;	/* pending waits, in submission order */
	u32 npend;
	struct gpuar_record *q;	/* queued records, ring of max_waits */
	u32 qhead, qlen;
	struct gpuar_est_table tab;
	struct gpuar_est_entry *slots;
	struct gpuar_wakelat wakelat;
	struct gpuar_port_stats st;
};

static struct uport *U(struct gpuar_port *port)
{
	return port->state;
}

static void enqueue(struct uport *u, const struct gpuar_record *rec)
{
	u->q[(u->qhead + u->qlen) % u->max_waits] = *rec;
	u->qlen++;
	if (rec->outcome < GPUAR_OUTCOME_COUNT)
		u->st.outcomes[rec->outcome]++;
}

/* Keep the eventfd readable exactly while records are queued. */
static void sync_eventfd(struct uport *u)
{
	u64 v = 1;

	if (u->qlen && !u->ev_set) {
		if (write(u->evfd, &v, sizeof(v)) == sizeof(v))
			u->ev_set = true;
	} else if (!u->qlen && u->ev_set) {
		if (read(u->evfd, &v, sizeof(v)) == sizeof(v))
			u->ev_set = false;
	}
}

static void arm_timer(struct uport *u)
{
	struct itimerspec its = { 0 };
	u64 next = GPUAR_U64_MAX;
	u32 i;

	for (i = 0; i < u->npend; i++)
		if (u->pend[i].kind == UW_WORD && u->pend[i].ws.next_ns < next)
			next = u->pend[i].ws.next_ns;
	if (next == GPUAR_U64_MAX)
		next = 0;	/* disarm */
	if (next == u->armed_ns)
		return;
	/* An absolute expiry already past fires at once; 0 would disarm. */
	its.it_value.tv_sec = (time_t)(next / 1000000000ULL);
	its.it_value.tv_nsec = (long)(next % 1000000000ULL);
	if (timerfd_settime(u->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		u->armed_ns = next;
}

static void word_done(struct uport *u, struct uwait *w, u64 value)
{
	struct gpuar_record rec;

	gpuar_wstep_record(&w->ws, &rec, w->user_data, w->point, value);
	if (w->pt && rec.outcome < GPUAR_OUTCOME_COUNT)
		w->pt->outcomes[rec.outcome]++;
	w->line->pending--;
	enqueue(u, &rec);
	w->kind = 0;
}

static void fence_done(struct uport *u, struct uwait *w, u8 outcome,
		       int status, u64 complete_ns)
{
	struct gpuar_record rec = {
		.user_data = w->user_data,
		.start_ns = w->start_ns,
		.complete_ns = complete_ns,
		.status = status,
		.version = GPUAR_RECORD_VERSION_1,
		.source = GPUAR_SOURCE_FENCE,
		.outcome = outcome,
	};

	epoll_ctl(u->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	close(w->fd);
	w->fd = -1;
	enqueue(u, &rec);
	w->kind = 0;
}

static void compact(struct uport *u)
{
	u32 i, n = 0;

	for (i = 0; i < u->npend; i++)
		if (u->pend[i].kind)
			u->pend[n++] = u->pend[i];
	u->npend = n;
}

static void drain_timer(struct uport *u, u64 now)
{
	u64 ticks;

	if (read(u->tfd, &ticks, sizeof(ticks)) == sizeof(ticks)) {
		u->st.timer_fires++;
		if (u->armed_ns && now >= u->armed_ns)
			gpuar_wakelat_record(&u->wakelat, now - u->armed_ns);
		u->armed_ns = 0;
	}
}

static void check_fence(struct uport *u, struct uwait *w, u64 now)
{
	struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
	int signalled = 0, status = 0;
	uint64_t ts = 0;

	if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLIN | POLLERR)))
		return;
	if (gpuar_sync_file_info(w->fd, &signalled, &status, &ts) < 0 ||
	    !signalled)
		return;
	fence_done(u, w, GPUAR_OUTCOME_FENCE, status, ts ? ts : now);
}

static void process_locked(struct uport *u)
{
	u64 now = gpuar_now_ns();
	bool removed = false;
	u32 i;

	drain_timer(u, now);
	for (i = 0; i < u->npend; i++) {
		struct uwait *w = &u->pend[i];
		u64 seen;
		bool done;

		if (w->kind == UW_FENCE) {
			check_fence(u, w, now);
			removed |= !w->kind;
			continue;
		}
		if (w->ws.next_ns > now)
			continue;
		seen = gpuar_word_load(w->word);
		done = gpuar_reached(seen, w->target);
		u->st.checks++;
		if (gpuar_wstep_checked(&w->ws, w->pt ? &w->pt->est : NULL, now,
					done)) {
			word_done(u, w, seen);
			removed = true;
		}
	}
	if (removed)
		compact(u);
	arm_timer(u);
	sync_eventfd(u);
}

static int u_process(struct gpuar_port *port)
{
	struct uport *u = U(port);
	int n;

	pthread_mutex_lock(&u->lock);
	process_locked(u);
	n = (int)u->qlen;
	pthread_mutex_unlock(&u->lock);
	return n;
}

static u64 u_next_check(struct gpuar_port *port)
{
	struct uport *u = U(port);
	u64 next = GPUAR_U64_MAX;
	u32 i;

	pthread_mutex_lock(&u->lock);
	for (i = 0; i < u->npend; i++)
		if (u->pend[i].kind == UW_WORD && u->pend[i].ws.next_ns < next)
			next = u->pend[i].ws.next_ns;
	pthread_mutex_unlock(&u->lock);
	return next;
}

static int u_line_register(struct gpuar_port *port, struct gpuar_line *line)
{
	struct uport *u = U(port);

	pthread_mutex_lock(&u->lock);
	line->id = ++u->next_line_id;
	pthread_mutex_unlock(&u->lock);
	return 0;
}

static int u_line_unregister(struct gpuar_port *port, struct gpuar_line *line)
{
	struct uport *u = U(port);
	int ret;

	pthread_mutex_lock(&u->lock);
	ret = line->pending ? -EBUSY : 0;
	pthread_mutex_unlock(&u->lock);
	return ret;
}

/* Caller holds lines_lock. */
static struct gpuar_line *line_by_id(struct gpuar_port *port, u32 id)
{
	u32 i;

	for (i = 0; i < port->lines_cap; i++)
		if (port->lines[i] && port->lines[i]->id == id)
			return port->lines[i];
	return NULL;
}

static bool new_point(struct uport *u, const struct gpuar_word_wait *waits,
		      u32 i)
{
	u32 j;

	if (gpuar_est_table_find(&u->tab, waits[i].point))
		return false;
	for (j = 0; j < i; j++)
		if (waits[j].point == waits[i].point)
			return false;
	return true;
}

/* The module's rules and errors, in its order (see <linux/gpuar.h>). */
static int validate_word(struct gpuar_port *port,
			 const struct gpuar_word_wait *w, u64 now)
{
	if (w->flags || w->pad || w->slot >= GPUAR_LINE_SLOTS ||
	    w->start_ns > now)
		return -EINVAL;
	if (!line_by_id(port, w->line))
		return -ENOENT;
	if (gpuar_plan_check(&w->plan) != GPUAR_PLAN_OK ||
	    w->plan.park == GPUAR_PARK_BLOCK)
		return -EINVAL;
	return 0;
}

static int u_submit_word(struct gpuar_port *port,
			 const struct gpuar_word_wait *waits, u32 count,
			 u32 *error_index)
{
	struct uport *u = U(port);
	u32 i, new_points = 0;
	int ret = 0;
	u64 now;

	if (count > u->max_waits) {
		*error_index = count;
		return -E2BIG;
	}
	now = gpuar_now_ns();
	pthread_mutex_lock(&port->lines_lock);
	pthread_mutex_lock(&u->lock);
	/* All or nothing: validate every entry before committing any. */
	for (i = 0; i < count; i++) {
		ret = validate_word(port, &waits[i], now);
		if (ret) {
			*error_index = i;
			goto out;
		}
		if (new_point(u, waits, i))
			new_points++;
	}
	/*
	 * As the module: the limits refuse the batch as a whole (error_index
	 * = count), and only once every entry has been found valid.
	 */
	if (u->tab.used + new_points > u->tab.limit) {
		ret = -ENOSPC;
		*error_index = count;
		goto out;
	}
	if ((u64)u->npend + u->qlen + count > u->max_waits) {
		ret = -ENOSPC;
		*error_index = count;
		goto out;
	}
	for (i = 0; i < count; i++) {
		const struct gpuar_word_wait *in = &waits[i];
		struct uwait *w = &u->pend[u->npend];
		u64 seen;

		memset(w, 0, sizeof(*w));
		w->kind = UW_WORD;
		w->user_data = in->user_data;
		w->point = in->point;
		w->start_ns = in->start_ns ? in->start_ns : now;
		w->line = line_by_id(port, in->line);
		w->word = &w->line->words[in->slot];
		w->target = in->target;
		w->pt = gpuar_wstep_point(&u->tab, in->point, &in->plan);
		w->fd = -1;
		w->line->pending++;
		seen = gpuar_word_load(w->word);
		u->st.checks++;
		if (gpuar_wstep_begin(&w->ws, &in->plan, w->pt ? &w->pt->est : NULL,
				      w->start_ns, in->start_ns != 0, now,
				      gpuar_reached(seen, in->target), &u->cfg)) {
			word_done(u, w, seen);
			continue;
		}
		if (w->ws.phase == GPUAR_WSTEP_SLEEP)
			u->st.sleeps++;
		u->npend++;
	}
	u->st.submitted += count;
	ret = (int)count;
	arm_timer(u);
	sync_eventfd(u);
out:
	pthread_mutex_unlock(&u->lock);
	pthread_mutex_unlock(&port->lines_lock);
	return ret;
}

static int validate_fence(const struct gpuar_fence_wait *f)
{
	int ret;

	if (f->flags || f->reserved[0] || f->reserved[1])
		return -EINVAL;
	if (f->fd < 0 || fcntl(f->fd, F_GETFD) < 0)
		return -EBADF;
	ret = gpuar_sync_file_info(f->fd, NULL, NULL, NULL);
	if (ret == -EBADF)
		return ret;
	return ret < 0 ? -EINVAL : 0;
}

static int u_submit_fence(struct gpuar_port *port,
			  const struct gpuar_fence_wait *waits, u32 count,
			  u32 *error_index)
{
	struct uport *u = U(port);
	int fds[64], *dup_fds = count <= 64 ? fds : calloc(count, sizeof(int));
	u32 i, made = 0;
	int ret = 0;
	u64 now;

	if (!dup_fds)
		return -ENOMEM;
	if (count > u->max_waits) {
		*error_index = count;
		ret = -E2BIG;
		goto out_free;
	}
	pthread_mutex_lock(&u->lock);
	for (i = 0; i < count; i++) {
		ret = validate_fence(&waits[i]);
		if (ret) {
			*error_index = i;
			goto out;
		}
	}
	if ((u64)u->npend + u->qlen + count > u->max_waits) {
		ret = -ENOSPC;
		*error_index = count;
		goto out;
	}
	/* Take the references first, so nothing is committed on failure. */
	for (made = 0; made < count; made++) {
		struct epoll_event ev = { .events = EPOLLIN };

		dup_fds[made] = fcntl(waits[made].fd, F_DUPFD_CLOEXEC, 3);
		ev.data.fd = dup_fds[made];
		if (dup_fds[made] < 0) {
			ret = -errno;
			break;
		}
		if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, dup_fds[made], &ev) < 0) {
			ret = -errno;
			close(dup_fds[made]);
			break;
		}
	}
	if (ret) {
		*error_index = made;
		while (made--) {
			epoll_ctl(u->epfd, EPOLL_CTL_DEL, dup_fds[made], NULL);
			close(dup_fds[made]);
		}
		goto out;
	}
	now = gpuar_now_ns();
	for (i = 0; i < count; i++) {
		struct uwait *w = &u->pend[u->npend++];

		memset(w, 0, sizeof(*w));
		w->kind = UW_FENCE;
		w->user_data = waits[i].user_data;
		w->start_ns = now;
		w->fd = dup_fds[i];
	}
	u->st.submitted += count;
	ret = (int)count;
	/* A fence already signalled completes now, as in the module. */
	process_locked(u);
out:
	pthread_mutex_unlock(&u->lock);
out_free:
	if (dup_fds != fds)
		free(dup_fds);
	return ret;
}

static int u_cancel(struct gpuar_port *port, u64 user_data)
{
	struct uport *u = U(port);
	u64 now = gpuar_now_ns();
	int n = 0;
	u32 i;

	pthread_mutex_lock(&u->lock);
	for (i = 0; i < u->npend; i++) {
		struct uwait *w = &u->pend[i];

		if (w->user_data != user_data)
			continue;
		n++;
		if (w->kind == UW_FENCE) {
			fence_done(u, w, GPUAR_OUTCOME_CANCELLED, -ECANCELED, now);
			continue;
		}
		w->ws.phase = GPUAR_WSTEP_DONE;
		w->ws.outcome = GPUAR_OUTCOME_CANCELLED;
		w->ws.complete_ns = now;
		{
			struct gpuar_record rec;

			gpuar_wstep_record(&w->ws, &rec, w->user_data, w->point,
					   gpuar_word_load(w->word));
			rec.status = -ECANCELED;
			if (w->pt)
				w->pt->outcomes[GPUAR_OUTCOME_CANCELLED]++;
			w->line->pending--;
			enqueue(u, &rec);
			w->kind = 0;
		}
	}
	if (n) {
		compact(u);
		arm_timer(u);
		sync_eventfd(u);
	} else {
		n = -ENOENT;
		/* A completed wait's record lost the race; a cancelled one's not. */
		for (i = 0; i < u->qlen; i++) {
			const struct gpuar_record *r =
				&u->q[(u->qhead + i) % u->max_waits];

			if (r->user_data == user_data &&
			    r->outcome != GPUAR_OUTCOME_CANCELLED)
				n = -EALREADY;
		}
	}
	pthread_mutex_unlock(&u->lock);
	return n;
}

static u32 pop(struct uport *u, struct gpuar_record *records, u32 max)
{
	u32 n = 0;

	while (n < max && u->qlen) {
		records[n++] = u->q[u->qhead];
		u->qhead = (u->qhead + 1) % u->max_waits;
		u->qlen--;
	}
	sync_eventfd(u);
	return n;
}

/*
 * Park a blocked reaper on the word of the flag wait due first with the
 * hardware word wait (umwait/mwaitx/wfet/wfe), bounded by that wait's
 * next check and the reaper's deadline, so the store wakes it without a
 * timer. The line is held busy meanwhile so no other thread can free it.
 * False where the CPU has no word wait, cannot keep the bound, or no flag
 * wait is parked.
 */
static bool hw_park(struct uport *u, u64 deadline)
{
	struct uwait *first = NULL;
	struct gpuar_line *line;
	const uint64_t *word;
	u64 until, bound, seen;
	bool waited;
	u32 i;

	if (!gpuar_hw_word_wait_kind())
		return false;
	pthread_mutex_lock(&u->lock);
	for (i = 0; i < u->npend; i++) {
		struct uwait *w = &u->pend[i];

		if (w->kind == UW_WORD && (!first || w->ws.next_ns < first->ws.next_ns))
			first = w;
	}
	if (!first || first->ws.phase != GPUAR_WSTEP_PARK ||
	    first->ws.plan.park != GPUAR_PARK_FLAG) {
		pthread_mutex_unlock(&u->lock);
		return false;
	}
	line = first->line;
	line->pending++;
	word = first->word;
	until = first->ws.next_ns < deadline ? first->ws.next_ns : deadline;
	bound = first->ws.interval_ns;
	seen = gpuar_word_load(word);
	pthread_mutex_unlock(&u->lock);
	waited = gpuar_hw_word_wait(word, seen, until, bound) == 0;
	pthread_mutex_lock(&u->lock);
	line->pending--;
	if (!waited) {
		/* A bound the CPU's wait cannot keep (arm64 WFE): the fd waits. */
		pthread_mutex_unlock(&u->lock);
		return false;
	}
	/* The word moved: check its waits now rather than at their next tick. */
	if (gpuar_word_load(word) != seen) {
		u64 now = gpuar_now_ns();

		for (i = 0; i < u->npend; i++)
			if (u->pend[i].kind == UW_WORD && u->pend[i].word == word &&
			    u->pend[i].ws.next_ns > now)
				u->pend[i].ws.next_ns = now;
	}
	pthread_mutex_unlock(&u->lock);
	return true;
}

static int u_reap(struct gpuar_port *port, struct gpuar_record *records,
		  u32 max, int64_t timeout_ns)
{
	struct uport *u = U(port);
	u64 deadline = timeout_ns < 0 ? GPUAR_U64_MAX :
		       gpuar_now_ns() + (u64)timeout_ns;
	bool last = false;
	int ret;
	u32 n;

	for (;;) {
		pthread_mutex_lock(&u->lock);
		process_locked(u);
		n = pop(u, records, max);
		pthread_mutex_unlock(&u->lock);
		if (n)
			return (int)n;
		if (timeout_ns == 0)
			return -EAGAIN;
		if (last)
			return -ETIME;
		if (u->watcher) {
			/* The watcher runs the engine: wait for a record. */
			ret = gpuar_fd_wait_readable(u->evfd, deadline);
			if (ret < 0)
				return ret;
			last = ret == 0;
			continue;
		}
		if (hw_park(u, deadline)) {
			last = gpuar_now_ns() >= deadline;
			continue;
		}
		/* The epoll fd wakes us at the next check, a fence or a record. */
		ret = gpuar_fd_wait_readable(u->epfd, deadline);
		if (ret < 0 && ret != -EINTR)
			return ret;
		if (ret == -EINTR)
			return ret;
		last = ret == 0;
	}
}

static int u_stats(struct gpuar_port *port, struct gpuar_port_stats *stats)
{
	struct uport *u = U(port);

	pthread_mutex_lock(&u->lock);
	*stats = u->st;
	stats->size = sizeof(*stats);
	stats->pending = u->npend;
	stats->queued = u->qlen;
	stats->lines = __atomic_load_n(&port->lines_used, __ATOMIC_RELAXED);
	stats->points = u->tab.used;
	stats->wakeup_latency_ns = gpuar_wakelat_quantile(&u->wakelat);
	pthread_mutex_unlock(&u->lock);
	return 0;
}

static int u_point_stats(struct gpuar_port *port,
			 struct gpuar_point_stats *stats)
{
	struct uport *u = U(port);
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

/* The watcher thread: sleeps in the epoll set, runs the engine when woken. */
static void *watcher_main(void *arg)
{
	struct uport *u = arg;
	struct epoll_event evs[8];
	bool stop = false;
	int n, i;

	while (!stop) {
		n = epoll_wait(u->epfd, evs, 8, -1);
		for (i = 0; i < n; i++)
			stop |= evs[i].data.fd == u->stopfd;
		if (n < 0 && errno != EINTR)
			break;
		pthread_mutex_lock(&u->lock);
		process_locked(u);
		pthread_mutex_unlock(&u->lock);
	}
	return NULL;
}

static void u_free(struct uport *u)
{
	u32 i;

	if (u->watcher) {
		u64 one = 1;

		if (write(u->stopfd, &one, sizeof(one)) == sizeof(one))
			pthread_join(u->thread, NULL);
	}
	if (u->stopfd >= 0)
		close(u->stopfd);

	for (i = 0; u->pend && i < u->npend; i++)
		if (u->pend[i].kind == UW_FENCE)
			close(u->pend[i].fd);
	if (u->tfd >= 0)
		close(u->tfd);
	if (u->evfd >= 0)
		close(u->evfd);
	if (u->epfd >= 0)
		close(u->epfd);
	free(u->pend);
	free(u->q);
	free(u->slots);
	pthread_mutex_destroy(&u->lock);
	free(u);
}

static void u_close(struct gpuar_port *port)
{
	u_free(U(port));
	port->state = NULL;
}

static const struct gpuar_engine_ops user_ops = {
	.line_register = u_line_register,
	.line_unregister = u_line_unregister,
	.submit_word = u_submit_word,
	.submit_fence = u_submit_fence,
	.cancel = u_cancel,
	.reap = u_reap,
	.process = u_process,
	.next_check = u_next_check,
	.stats = u_stats,
	.point_stats = u_point_stats,
	.close = u_close,
};

static u32 pow2_at_least(u32 n)
{
	u32 p = 1;

	while (p < n && p < (1U << 30))
		p <<= 1;
	return p;
}

int gpuar_port_user_open(struct gpuar_port *port,
			 const struct gpuar_port_options *opts)
{
	int cloexec = (opts->flags & GPUAR_PORT_CLOEXEC) ? EPOLL_CLOEXEC : 0;
	struct epoll_event ev = { .events = EPOLLIN };
	struct uport *u = calloc(1, sizeof(*u));
	u32 cap;

	if (!u)
		return -ENOMEM;
	pthread_mutex_init(&u->lock, NULL);
	u->epfd = u->evfd = u->tfd = u->stopfd = -1;
	u->max_waits = opts->max_waits;
	u->cfg.poll_interval_ns = opts->poll_interval_ns;
	u->cfg.floor_ns = GPUAR_USER_CHECK_FLOOR_NS;
	u->cfg.backstop_ns = opts->poll_backstop_ns;
	u->cfg.backstop_timeout = true;
	cap = pow2_at_least(opts->max_points * 2);
	u->pend = calloc(u->max_waits, sizeof(*u->pend));
	u->q = calloc(u->max_waits, sizeof(*u->q));
	u->slots = calloc(cap, sizeof(*u->slots));
	if (!u->pend || !u->q || !u->slots)
		goto nomem;
	gpuar_est_table_init(&u->tab, u->slots, cap, opts->max_points);
	gpuar_wakelat_init(&u->wakelat);
	/* Internal fds never leak into children; the port fd follows opts. */
	u->epfd = epoll_create1(cloexec);
	u->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	u->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (u->epfd < 0 || u->evfd < 0 || u->tfd < 0)
		goto sys;
	ev.data.fd = u->tfd;
	if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->tfd, &ev) < 0)
		goto sys;
	port->engine = GPUAR_ENGINE_USER;
	port->ops = &user_ops;
	port->state = u;
	if (opts->flags & GPUAR_PORT_WATCHER) {
		/* The fd is the record eventfd; the thread waits in epfd. */
		u->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ev.data.fd = u->stopfd;
		if (u->stopfd < 0 ||
		    epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->stopfd, &ev) < 0)
			goto sys;
		errno = pthread_create(&u->thread, NULL, watcher_main, u);
		if (errno)
			goto sys;
		u->watcher = true;
		port->fd = u->evfd;
		return 0;
	}
	ev.data.fd = u->evfd;
	if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->evfd, &ev) < 0)
		goto sys;
	port->fd = u->epfd;
	return 0;
sys: {
	int err = -errno;

	u_free(u);
	return err;
}
nomem:
	u_free(u);
	return -ENOMEM;
}
