// SPDX-License-Identifier: MIT
/*
 * gpuar_reap() on the user engine. The reaper runs the engine and takes
 * what is queued. While nothing is, it waits for the watcher thread's
 * record where there is one; else, between its engine runs, it parks on a
 * word with the CPU's hardware word wait, or without one busy-reads as
 * the module's read() does (kmod/busy_read.c): it checks the words of flag
 * waits whose predicted sleep is over itself, in a load loop, within the
 * call's spin budget (busy_read_us). Past that it sleeps on the port's fd
 * as a busy sleeper, so the timer wakes it early for the next spin.
 */
#include "engine_user.h"

#include <errno.h>
#include <poll.h>

/*
 * How often a spin looks for a signalled fence (a poll(2) of the epoll
 * fd), only while fence waits are pending: a word spin cannot see one.
 */
#define BUSY_FENCE_LOOK_NS 10000ULL

/*
 * The spin reads the clock once every this many passes: a vDSO read costs
 * tens of ns, but where the clocksource has no vDSO read it is a system
 * call, and one per pass would slow each pass, so the detection, to it.
 */
#define BUSY_CLOCK_PASSES 16

/*
 * Park a blocked reaper on the word of the flag wait due first with the
 * hardware word wait (umwait/mwaitx/wfet/wfe), bounded by that wait's
 * next check, the reaper's deadline and what is left of the call's spin
 * budget (@budget_ns; the time parked is added to *@spun_ns): a parked
 * CPU stays in C0 and counts as busy, so the park is a spin by another
 * name and busy_read_us bounds both; past it the reaper sleeps on the fd.
 * The store wakes it without a timer. The line is held busy meanwhile so
 * no other thread can free it. False where the CPU has no word wait,
 * cannot keep the bound, or no flag wait is parked.
 */
static bool hw_park(struct uport *u, u64 deadline, u64 budget_ns,
		    u64 *spun_ns)
{
	struct uwait *first;
	struct uline *line;
	const uint64_t *word;
	u64 until, bound, seen, seq, start;
	bool waited;

	if (!gpuar_hw_word_wait_kind())
		return false;
	pthread_mutex_lock(&u->lock);
	first = uheap_top(&u->heap[UH_DUE], u);
	if (!first || first->ws.phase != GPUAR_WORD_PARK ||
	    first->ws.plan.park != GPUAR_PARK_FLAG) {
		pthread_mutex_unlock(&u->lock);
		return false;
	}
	line = first->line;
	line->pending++;
	word = first->word;
	seq = first->seq;
	until = first->ws.next_ns < deadline ? first->ws.next_ns : deadline;
	start = gpuar_now_ns();
	if (gpuar_add_sat(start, budget_ns) < until)
		until = start + budget_ns;
	bound = first->ws.interval_ns;
	seen = gpuar_word_load(word);
	pthread_mutex_unlock(&u->lock);
	waited = gpuar_hw_word_wait(word, seen, until, bound) == 0;
	*spun_ns += gpuar_now_ns() - start;
	pthread_mutex_lock(&u->lock);
	line->pending--;
	if (!waited) {
		/* A bound the CPU's wait cannot keep (arm64 WFE): the fd waits. */
		pthread_mutex_unlock(&u->lock);
		return false;
	}
	/*
	 * The word moved: check the wait now rather than at its next tick
	 * (if it is still the one parked on; other waits on the word keep
	 * their own ticks, so this costs the same however many are pending).
	 */
	if (gpuar_word_load(word) != seen && first->seq == seq &&
	    first->kind == UW_WORD) {
		u64 now = gpuar_now_ns();

		if (first->ws.next_ns > now) {
			first->ws.next_ns = now;
			uport_wait_reindex(u, first);
		}
	}
	pthread_mutex_unlock(&u->lock);
	return true;
}

struct busy_target {
	struct uwait *w;	/* the wait, while its seq is still this */
	u64 seq;
	struct uline *line;	/* held busy (pending) while we read */
	const uint64_t *word;
	u64 seen;
	u64 next_ns;
	u64 backstop_ns;
};

/*
 * Give the flag waits whose early wake is here (see uport_early_key) their
 * post-sleep check now, by the reaper: LATE if the work is done, else
 * they park and become spin targets. Lock held; true when any was due.
 */
static bool busy_early_checks(struct uport *u, u64 now)
{
	struct uwait *w;
	bool any = false;

	uport_early_refresh(u, now);
	while ((w = uheap_top(&u->heap[UH_EARLY], u)) &&
	       w->key[UH_EARLY] <= now) {
		w->reader_due = true;	/* leaves UH_EARLY */
		w->ws.next_ns = now;
		uport_wait_reindex(u, w);
		any = true;
	}
	if (any)
		uport_run_locked(u, false, false);
	return any;
}

static void take_min(u64 *a, u64 b)
{
	if (b < *a)
		*a = b;
}

/*
 * The spin targets: parked flag waits that slept, the GPUAR_BUSY_WAITS
 * due first (UH_SPIN). *@until becomes the earliest time the engine must
 * run for something the spin does not watch (the spin ends there):
 * another wait's check (UH_DUE's first that is no target) or early wake
 * (UH_EARLY's first), a candidate left out, a target's backstop. A
 * target's own park checks are not among them: the spin sees its word
 * continuously, and a check between rounds would leave the word
 * unwatched for a few us every park_us. *@fences: fence waits are
 * pending. Lock held; the cost is the heaps' first few entries.
 */
static u32 busy_collect(struct uport *u, struct busy_target *t, u64 *until,
			bool *fences)
{
	u32 spin[GPUAR_BUSY_WAITS + 1], due[GPUAR_BUSY_WAITS + 1];
	struct uwait *early;
	u32 i, j, n, k;

	*fences = u->nfences > 0;
	n = uheap_first(&u->heap[UH_SPIN], u, spin, GPUAR_BUSY_WAITS + 1);
	if (n > GPUAR_BUSY_WAITS) {
		take_min(until, u->slab[spin[GPUAR_BUSY_WAITS]].ws.next_ns);
		n = GPUAR_BUSY_WAITS;
	}
	/* The targets are among UH_DUE's first n + 1: skip them. */
	k = uheap_first(&u->heap[UH_DUE], u, due, n + 1);
	for (i = 0; i < k; i++) {
		for (j = 0; j < n && spin[j] != due[i]; j++)
			;
		if (j == n) {
			take_min(until, u->slab[due[i]].ws.next_ns);
			break;
		}
	}
	early = uheap_top(&u->heap[UH_EARLY], u);
	if (early)
		take_min(until, early->key[UH_EARLY]);
	for (i = 0; i < n; i++) {
		struct uwait *w = &u->slab[spin[i]];

		t[i] = (struct busy_target){
			.w = w,
			.seq = w->seq,
			.line = w->line,
			.word = w->word,
			.seen = w->seen,
			.next_ns = w->ws.next_ns,
			.backstop_ns = w->ws.backstop_at_ns,
		};
		take_min(until, t[i].backstop_ns);
		t[i].line->pending++;
	}
	return n;
}

/* A fence signalled (or the timer is due): the epoll fd is readable. */
static bool busy_fd_ready(struct uport *u)
{
	struct pollfd pfd = { .fd = u->epfd, .events = POLLIN };

	return GPUAR_SYS(poll(&pfd, 1, 0)) > 0;
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
	u64 fence_look = now + BUSY_FENCE_LOOK_NS;
	u32 i, pass;

	for (pass = 1;; pass++) {
		for (i = 0; i < n; i++)
			if (gpuar_word_load(t[i].word) != t[i].seen)
				return;
		if (__atomic_load_n(&u->changes, __ATOMIC_ACQUIRE) != changes)
			return;
		gpuar_cpu_relax();
		if (pass % BUSY_CLOCK_PASSES)
			continue;
		now = gpuar_now_ns();
		if (now >= limit)
			return;
		if (fences && now >= fence_look) {
			if (busy_fd_ready(u))
				return;
			fence_look = now + BUSY_FENCE_LOOK_NS;
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
 * lock, as uport_reap() does. Returns their number, 0 when none came (look
 * again), -EAGAIN when there was nothing to spin on (sleep on the fd).
 */
static int busy_read(struct uport *u, u64 deadline, u64 budget_ns,
		     u64 *spun_ns, struct gpuar_record *records, u32 max)
{
	struct busy_target t[GPUAR_BUSY_WAITS];
	u64 now, until = deadline, start;
	bool fences = false, early;
	u32 i, n, changes;

	pthread_mutex_lock(&u->lock);
	early = busy_early_checks(u, gpuar_now_ns());
	n = uport_pop(u, records, max);
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
		/* The word moved: the target, if still parked, is checked now. */
		if (!moved || t[i].w->seq != t[i].seq ||
		    t[i].w->kind != UW_WORD ||
		    t[i].w->ws.phase != GPUAR_WORD_PARK)
			continue;
		t[i].w->reader_due = true;
		t[i].w->ws.next_ns = now;
		uport_wait_reindex(u, t[i].w);
	}
	uport_run_locked(u, false, true);
	n = uport_pop(u, records, max);
	pthread_mutex_unlock(&u->lock);
	return (int)n;
}

/*
 * Sleep on the epoll fd until the next check, a fence or a record. With
 * spin budget left the reaper counts as a busy sleeper: the timer is
 * armed the wake-up latency before a flag wait's sleep ends (uport_early_key).
 */
static int reap_sleep(struct uport *u, u64 deadline, bool busy, int intr_fd)
{
	int ret;

	if (busy) {
		pthread_mutex_lock(&u->lock);
		u->busy_sleepers++;
		uport_arm_timer(u, false);
		pthread_mutex_unlock(&u->lock);
	}
	ret = gpuar_fd_wait_interruptible(u->epfd, intr_fd, deadline);
	if (busy) {
		/*
		 * The engine's next run re-arms the timer: a re-arm now would
		 * discard the expiry that woke us, and its latency sample.
		 */
		pthread_mutex_lock(&u->lock);
		u->busy_sleepers--;
		if (ret < 0)
			uport_arm_timer(u, false);
		pthread_mutex_unlock(&u->lock);
	}
	return ret;
}

int uport_reap(struct gpuar_port *port, struct gpuar_record *records,
	       u32 max, int64_t timeout_ns, int intr_fd)
{
	struct uport *u = uport_of(port);
	u64 deadline = gpuar_deadline_in(timeout_ns);
	u64 spun = 0;
	bool last = false, woken = false;
	int ret;
	u32 n;

	/*
	 * @woken: this pass follows our own sleep on the fd, so how late it
	 * runs after the timer is a wake-up latency sample. The first pass is
	 * none: a caller that reaps late (a busy event loop, a non-blocking
	 * reap) would count its own lateness, which would make blocked
	 * reapers wake, and spin, earlier than they need.
	 *
	 * A pass that is not a wake-up arms the timer lazily and, if it
	 * comes back with records, makes no system call for the timer: an
	 * event loop that claimed and watched a wait (gpuar_imminent_serve)
	 * or reaps what a check queued is on its way back with a record,
	 * and re-arming the timerfd there put a timerfd_settime (about 20 us
	 * in a TCG guest) between the record and its caller. What that
	 * leaves (an expiry undrained, one armed earlier than needed) costs
	 * at most a spurious readiness, and the next pass that finds no
	 * record settles the timer exactly before anyone sleeps on it.
	 */
	for (;;) {
		pthread_mutex_lock(&u->lock);
		uport_run_locked(u, woken, !woken);
		n = uport_pop(u, records, max);
		if (!n && !woken)
			uport_settle_timer(u, gpuar_now_ns());
		pthread_mutex_unlock(&u->lock);
		woken = false;
		if (n)
			return (int)n;
		if (timeout_ns == 0)
			return -EAGAIN;
		if (last)
			return -ETIME;
		/* A park or spin is short: an interrupt is seen between them. */
		if (intr_fd >= 0 && gpuar_interrupt_fd_set(intr_fd))
			return -EINTR;
		if (u->watcher) {
			/* The watcher runs the engine: wait for a record. */
			ret = gpuar_fd_wait_interruptible(u->evfd, intr_fd,
							  deadline);
			if (ret < 0)
				return ret;
			last = ret == 0 || gpuar_now_ns() >= deadline;
			continue;
		}
		if (spun < u->busy_budget_ns &&
		    hw_park(u, deadline, u->busy_budget_ns - spun, &spun)) {
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
		ret = reap_sleep(u, deadline, spun < u->busy_budget_ns, intr_fd);
		if (ret < 0)
			return ret;
		/*
		 * The fd may stay readable without ever yielding a record (a
		 * timer always due): the deadline is the clock's, not poll's.
		 */
		last = ret == 0 || gpuar_now_ns() >= deadline;
		woken = true;
	}
}
