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
 *
 * Busy-read, as the module's (kmod/busy_read.c): a reaper blocked in
 * gpuar_reap() with no watcher thread and no hardware word wait checks
 * the words of flag waits whose predicted sleep is over itself, in a load
 * loop, within the call's spin budget (busy_read_us); see busy_read().
 */
#include "port.h"
#include "wstep.h"
#include "busy_read.h"

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

/*
 * As the module's wakelat_max_us default: a wake-up latency sample is
 * capped, so one long stall (a preempted vCPU, a loop that ran the engine
 * late) cannot make blocked reapers wake absurdly early.
 */
#define GPUAR_USER_WAKELAT_MAX_NS 500000ULL

/* Waits one busy-read round spins on, the due first (as the module). */
#define GPUAR_USER_BUSY_WAITS 8

/*
 * How often a spin looks for a signalled fence (a poll(2) of the epoll
 * fd), only while fence waits are pending: a word spin cannot see one.
 */
#define GPUAR_USER_BUSY_FENCE_LOOK_NS 10000ULL

/*
 * The spin reads the clock once every this many passes: a vDSO read costs
 * tens of ns, but where the clocksource has no vDSO read it is a system
 * call, and one per pass would slow each pass, so the detection, to it.
 */
#define GPUAR_USER_BUSY_CLOCK_PASSES 16

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
	/*
	 * The value the last check saw: a spinning reaper watches for a
	 * change from it, so a store that lands between that check and the
	 * spin's first load is not taken for the old value.
	 */
	u64 seen;
	/* the next check is a blocked reaper's (busy_read_checks) */
	bool reader_due;
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
	bool expiry_left;	/* it expired and was left undrained (lazy) */
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
	u64 wakelat_ns;		/* its quantile, kept as samples come */
	u64 busy_budget_ns;	/* spin budget of one reap call; 0: none */
	u32 busy_sleepers;	/* reapers asleep on epfd with budget left */
	/*
	 * Bumped (under the lock) at every record queued and every submit,
	 * read without it by a spinning reaper: the set of waits changed,
	 * look again.
	 */
	u32 changes;
	struct gpuar_port_stats st;
};

static struct uport *U(struct gpuar_port *port)
{
	return port->state;
}

/* Caller holds the lock; spinning reapers read u->changes without it. */
static void note_change(struct uport *u)
{
	__atomic_store_n(&u->changes, u->changes + 1, __ATOMIC_RELEASE);
}

static void enqueue(struct uport *u, const struct gpuar_record *rec)
{
	u->q[(u->qhead + u->qlen) % u->max_waits] = *rec;
	u->qlen++;
	note_change(u);
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

/* A flag wait whose estimator sleep a blocked reaper may end by spinning. */
static bool busy_kind(const struct uwait *w)
{
	return w->kind == UW_WORD && w->ws.plan.park == GPUAR_PARK_FLAG &&
	       w->ws.sleep_from_ns;
}

/*
 * When the engine must next look at @w. With @wakelat (a reaper asleep
 * with spin budget left, or one about to spin) a flag wait still in its
 * estimator sleep is due that much before the sleep ends, as the
 * module's early wake: the timerfd wake runs late by about the port's
 * wake-up latency, and the reaper should be spinning by the time the
 * sleep ends, not start then. Never more than half the sleep early: a
 * noisy latency must not turn the sleep into a spin.
 */
static u64 due_ns(const struct uwait *w, u64 wakelat)
{
	u64 span;

	if (!wakelat || w->ws.phase != GPUAR_WSTEP_SLEEP || !busy_kind(w))
		return w->ws.next_ns;
	span = w->ws.next_ns - w->ws.sleep_from_ns;
	return w->ws.sleep_from_ns +
	       gpuar_est_early_wake_ns(span, wakelat < span / 2 ?
					     wakelat : span / 2);
}

/*
 * Arm the timerfd at the next time the engine must run. @lazy: keep an
 * expiry that is earlier (or one armed with nothing left to check, or one
 * already past and left undrained), which costs at most a spurious
 * readiness, so that a reaper on its way back with a record makes no
 * system call; the engine's next run arms it exactly.
 */
static void arm_timer(struct uport *u, bool lazy)
{
	struct itimerspec its = { 0 };
	u64 next = GPUAR_U64_MAX, due;
	u64 wakelat = u->busy_sleepers ? u->wakelat_ns : 0;
	u32 i;

	for (i = 0; i < u->npend; i++) {
		if (u->pend[i].kind != UW_WORD)
			continue;
		due = due_ns(&u->pend[i], wakelat);
		if (due < next)
			next = due;
	}
	if (lazy && u->armed_ns && u->armed_ns <= next)
		return;
	if (next == GPUAR_U64_MAX)
		next = 0;	/* disarm */
	if (next == u->armed_ns)
		return;
	/* An absolute expiry already past fires at once; 0 would disarm. */
	its.it_value.tv_sec = (time_t)(next / 1000000000ULL);
	its.it_value.tv_nsec = (long)(next % 1000000000ULL);
	if (timerfd_settime(u->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0) {
		/* Setting it discards an expiry left undrained: count it. */
		if (u->expiry_left)
			u->st.timer_fires++;
		u->expiry_left = false;
		u->armed_ns = next;
	}
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

/*
 * Consume an expiry of the timerfd. @woken: the caller may have been woken
 * by it, so how late it runs is a wake-up latency sample; a reaper that
 * spun or parked up to the check is on time by construction and gives
 * none.
 */
static void drain_timer(struct uport *u, u64 now, bool woken)
{
	bool left = u->expiry_left;
	u64 ticks, lat;

	/* Not expired (same clock), or disarmed: no read(2) to make. */
	if (!u->armed_ns || now < u->armed_ns)
		return;
	u->expiry_left = false;
	if (read(u->tfd, &ticks, sizeof(ticks)) == sizeof(ticks)) {
		u->st.timer_fires++;
		/* One left by a spin woke nobody: no sample. */
		if (woken && !left) {
			lat = now - u->armed_ns;
			if (lat > GPUAR_USER_WAKELAT_MAX_NS)
				lat = GPUAR_USER_WAKELAT_MAX_NS;
			gpuar_wakelat_record(&u->wakelat, lat);
			u->wakelat_ns = gpuar_wakelat_quantile(&u->wakelat);
		}
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

/*
 * Run the engine; @woken as drain_timer(), @lazy_arm as arm_timer()'s
 * @lazy (and an expiry is left for the next run to drain). The caller
 * syncs the eventfd (sync_eventfd, pop) once it has taken the records it
 * wants: a reaper that takes them in the same hold of the lock makes no
 * eventfd calls.
 */
static void run_locked(struct uport *u, bool woken, bool lazy_arm)
{
	u64 now = gpuar_now_ns();
	bool removed = false;
	u32 i;

	/* Lazy: an expiry during a spin is drained by the next run. */
	if (!lazy_arm)
		drain_timer(u, now, woken);
	else if (u->armed_ns && now >= u->armed_ns)
		u->expiry_left = true;
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
		w->seen = seen;
		u->st.checks++;
		if (w->reader_due) {
			u->st.busy_read_checks++;
			w->reader_due = false;
		}
		if (gpuar_wstep_checked(&w->ws, w->pt ? &w->pt->est : NULL, now,
					done)) {
			word_done(u, w, seen);
			removed = true;
		}
	}
	if (removed)
		compact(u);
	arm_timer(u, lazy_arm);
}

static void process_locked(struct uport *u, bool woken)
{
	run_locked(u, woken, false);
	sync_eventfd(u);
}

static int u_process(struct gpuar_port *port)
{
	struct uport *u = U(port);
	int n;

	pthread_mutex_lock(&u->lock);
	process_locked(u, true);
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
		w->seen = seen;
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
	note_change(u);
	arm_timer(u, false);
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
	note_change(u);
	/* A fence already signalled completes now, as in the module. */
	process_locked(u, true);
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
		arm_timer(u, false);
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

/* A spin pass's pause: let the sibling hyperthread run, save power. */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" : : : "memory");
#else
	__asm__ volatile("" : : : "memory");
#endif
}

struct busy_target {
	struct gpuar_line *line;	/* held busy (pending) while we read */
	const uint64_t *word;
	u64 seen;
	u64 next_ns;
	u64 backstop_ns;
};

/*
 * Give the flag waits whose early wake is here (see due_ns) their
 * post-sleep check now, by the reaper: LATE if the work is done, else
 * they park and become spin targets. Lock held; true when any was due.
 */
static bool busy_early_checks(struct uport *u, u64 now)
{
	bool any = false;
	u32 i;

	for (i = 0; i < u->npend; i++) {
		struct uwait *w = &u->pend[i];

		if (!busy_kind(w) || w->ws.phase != GPUAR_WSTEP_SLEEP ||
		    due_ns(w, u->wakelat_ns) > now)
			continue;
		w->reader_due = true;
		w->ws.next_ns = now;
		any = true;
	}
	if (any)
		run_locked(u, false, false);
	return any;
}

static void take_min(u64 *a, u64 b)
{
	if (b < *a)
		*a = b;
}

/*
 * The spin targets: parked flag waits that slept, the GPUAR_USER_BUSY_WAITS
 * due first. *@until becomes the earliest time the engine must run for
 * something the spin does not watch (the spin ends there): another wait's
 * check or early wake, a target's backstop. A target's own park checks
 * are not among them: the spin sees its word continuously, and a check
 * between rounds would leave the word unwatched for a few us every
 * park_us. *@fences: fence waits are pending. Lock held.
 */
static u32 busy_collect(struct uport *u, struct busy_target *t, u64 *until,
			bool *fences)
{
	u64 dropped = GPUAR_U64_MAX;	/* next check of a candidate left out */
	u32 i, j, n = 0;

	for (i = 0; i < u->npend; i++) {
		struct uwait *w = &u->pend[i];

		if (w->kind == UW_FENCE)
			*fences = true;
		if (w->kind != UW_WORD)
			continue;
		if (!busy_kind(w) || w->ws.phase != GPUAR_WSTEP_PARK) {
			take_min(until, due_ns(w, u->wakelat_ns));
			continue;
		}
		/* Insertion by next check; the last falls off when full. */
		if (n == GPUAR_USER_BUSY_WAITS)
			take_min(&dropped, w->ws.next_ns < t[n - 1].next_ns ?
				 t[n - 1].next_ns : w->ws.next_ns);
		for (j = n; j > 0 && t[j - 1].next_ns > w->ws.next_ns; j--)
			if (j < GPUAR_USER_BUSY_WAITS)
				t[j] = t[j - 1];
		if (j >= GPUAR_USER_BUSY_WAITS)
			continue;
		t[j] = (struct busy_target){
			.line = w->line,
			.word = w->word,
			.seen = w->seen,
			.next_ns = w->ws.next_ns,
			.backstop_ns = w->ws.backstop_at_ns,
		};
		if (n < GPUAR_USER_BUSY_WAITS)
			n++;
	}
	take_min(until, dropped);
	for (i = 0; i < n; i++) {
		take_min(until, t[i].backstop_ns);
		t[i].line->pending++;
	}
	return n;
}

/* A fence signalled (or the timer is due): the epoll fd is readable. */
static bool busy_fd_ready(struct uport *u)
{
	struct pollfd pfd = { .fd = u->epfd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

/*
 * Spin until a target's word moves, the set of waits changes (a record
 * queued, a submit), a fence signals, or @limit. No lock held: the
 * targets' lines are held busy, so their pages stay mapped.
 */
static void busy_spin(struct uport *u, const struct busy_target *t, u32 n,
		      u32 changes, bool fences, u64 limit)
{
	u64 now = gpuar_now_ns();
	u64 fence_look = now + GPUAR_USER_BUSY_FENCE_LOOK_NS;
	u32 i, pass;

	for (pass = 1;; pass++) {
		for (i = 0; i < n; i++)
			if (gpuar_word_load(t[i].word) != t[i].seen)
				return;
		if (__atomic_load_n(&u->changes, __ATOMIC_ACQUIRE) != changes)
			return;
		cpu_relax();
		if (pass % GPUAR_USER_BUSY_CLOCK_PASSES)
			continue;
		now = gpuar_now_ns();
		if (now >= limit)
			return;
		if (fences && now >= fence_look) {
			if (busy_fd_ready(u))
				return;
			fence_look = now + GPUAR_USER_BUSY_FENCE_LOOK_NS;
		}
	}
}

/*
 * One busy-read round of a reaper blocked in gpuar_reap() (no watcher, no
 * hardware word wait to park in), as the module's read(): give the flag
 * waits whose early wake is here their post-sleep check, then spin on the
 * words of the parked ones that slept, in a load loop, until a word moves
 * from what the last check saw, the engine must run for another reason (a
 * wait's next check or backstop, a fence, a record, a submit), the
 * caller's @deadline or @budget_ns. A word that moved has its waits
 * checked at once by the engine, under the
 * lock, through the state machine (EXACT when reached), and counted in
 * busy_read_checks. The spin is not bounded by the prediction: that is
 * the fastest recent completion, so most come after it (see
 * kmod/busy_read.c). Adds the time spun to *@spun_ns.
 *
 * Records the checks queue are taken (up to @max) in the same hold of the
 * lock, as u_reap does. Returns their number, 0 when none came (look
 * again), -EAGAIN when there was nothing to spin on (sleep on the fd).
 */
static int busy_read(struct uport *u, u64 deadline, u64 budget_ns,
		     u64 *spun_ns, struct gpuar_record *records, u32 max)
{
	struct busy_target t[GPUAR_USER_BUSY_WAITS];
	u64 now, until = deadline, start;
	bool fences = false, early;
	u32 i, j, n, changes;

	pthread_mutex_lock(&u->lock);
	early = busy_early_checks(u, gpuar_now_ns());
	n = pop(u, records, max);
	/* With a hardware word wait the reaper parks there (hw_park). */
	if (n || (early && gpuar_hw_word_wait_kind())) {
		pthread_mutex_unlock(&u->lock);
		return (int)n;
	}
	n = busy_collect(u, t, &until, &fences);
	changes = u->changes;
	pthread_mutex_unlock(&u->lock);
	if (!n)
		return -EAGAIN;

	start = gpuar_now_ns();
	busy_spin(u, t, n, changes, fences,
		  until < start + budget_ns ? until : start + budget_ns);
	now = gpuar_now_ns();
	*spun_ns += now - start;

	pthread_mutex_lock(&u->lock);
	for (i = 0; i < n; i++) {
		bool moved = gpuar_word_load(t[i].word) != t[i].seen;

		t[i].line->pending--;
		if (!moved)
			continue;
		/* The word moved: its parked waits are checked now. */
		for (j = 0; j < u->npend; j++) {
			struct uwait *w = &u->pend[j];

			if (w->kind == UW_WORD && w->word == t[i].word &&
			    w->ws.phase == GPUAR_WSTEP_PARK) {
				w->reader_due = true;
				w->ws.next_ns = now;
			}
		}
	}
	run_locked(u, false, true);
	n = pop(u, records, max);
	pthread_mutex_unlock(&u->lock);
	return (int)n;
}

/*
 * Sleep on the epoll fd until the next check, a fence or a record. With
 * spin budget left the reaper counts as a busy sleeper: the timer is
 * armed the wake-up latency before a flag wait's sleep ends (due_ns).
 */
static int reap_sleep(struct uport *u, u64 deadline, bool busy)
{
	int ret;

	if (busy) {
		pthread_mutex_lock(&u->lock);
		u->busy_sleepers++;
		arm_timer(u, false);
		pthread_mutex_unlock(&u->lock);
	}
	ret = gpuar_fd_wait_readable(u->epfd, deadline);
	if (busy) {
		/*
		 * The engine's next run re-arms the timer: a re-arm now would
		 * discard the expiry that woke us, and its latency sample.
		 */
		pthread_mutex_lock(&u->lock);
		u->busy_sleepers--;
		if (ret < 0)
			arm_timer(u, false);
		pthread_mutex_unlock(&u->lock);
	}
	return ret;
}

static int u_reap(struct gpuar_port *port, struct gpuar_record *records,
		  u32 max, int64_t timeout_ns)
{
	struct uport *u = U(port);
	u64 deadline = timeout_ns < 0 ? GPUAR_U64_MAX :
		       gpuar_now_ns() + (u64)timeout_ns;
	u64 spun = 0;
	bool last = false, woken = true;
	int ret;
	u32 n;

	/*
	 * @woken: this pass may follow a wake by the fd (the caller's loop,
	 * or our own sleep), not a spin or park that ran up to the check.
	 */
	for (;;) {
		pthread_mutex_lock(&u->lock);
		run_locked(u, woken, false);
		n = pop(u, records, max);
		pthread_mutex_unlock(&u->lock);
		woken = false;
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
		if (spun < u->busy_budget_ns) {
			ret = busy_read(u, deadline, u->busy_budget_ns - spun,
					&spun, records, max);
			if (ret > 0)
				return ret;
			if (ret == 0) {
				last = gpuar_now_ns() >= deadline;
				continue;
			}
		}
		ret = reap_sleep(u, deadline, spun < u->busy_budget_ns);
		if (ret < 0)
			return ret;
		last = ret == 0;
		woken = true;
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
		process_locked(u, true);
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
	u->busy_budget_ns = opts->busy_read_us == GPUAR_BUSY_READ_OFF ? 0 :
		(u64)(opts->busy_read_us ? opts->busy_read_us :
		      GPUAR_BUSY_READ_DEFAULT_US) * GPUAR_NSEC_PER_USEC;
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
