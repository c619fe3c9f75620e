// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Word waits: a u64 in a pinned line reaching a target, with the kernel
 * as the waiter. Every decision (outcome, next check, backstop, early
 * wake, what the point's estimator learns) is core/word_state.c's, the
 * same state machine the library's userspace port runs; this file gives
 * it a clock, a timer and the word's value, and owns the wait's indexes:
 * the timer queue, the busy queue, its line's wait count.
 *
 * Submit checks the word once (done: immediate). Otherwise, if the point's
 * estimator gives a sleep, the wait's first timer check is at start +
 * sleep (done there: late); after that it is checked every interval (the
 * plan's park_ns, or the poll interval, never below the module's floor)
 * until done (exact) or until its backstop (timeout, -ETIME). Exact and
 * late outcomes train the point's estimator.
 *
 * One hrtimer per port drives every word wait of the port: pending waits
 * sit in an rbtree ordered by their next check, the timer is armed at the
 * earliest, and one firing checks at most checks_per_fire due waits before
 * re-arming, so many waits never mean many timers and a firing's cost is
 * bounded. The timer is a soft hrtimer (HRTIMER_MODE_ABS_SOFT): its
 * callback runs in the timer softirq, not in hrtimer_interrupt(), so many
 * ports with many due waits never make one hard interrupt long (and
 * softirq work is pushed to ksoftirqd when it piles up). The callback
 * takes the port lock with spin_lock_irqsave(), as every other holder
 * takes it IRQ-safe (fence callbacks take it in hard IRQ), which also
 * keeps the softirq off a CPU holding it; it reads words through the
 * pinned pages' kernel mapping, and nothing in it sleeps.

 */
#include <linux/hrtimer.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "../core/line.h"
#include "../core/plan.h"
#include "compat.h"
#include "params.h"
#include "port.h"
#include "gpuar_trace.h"
#include "uarg.h"

static u64 gpuar_check_floor_ns(void)
{
	return max_t(u64, GPUAR_PARAM(check_floor_us) * NSEC_PER_USEC,
		     NSEC_PER_USEC);
}

/* The state machine's settings, from the module parameters now. */
static void gpuar_word_cfg(struct gpuar_word_cfg *cfg)
{
	cfg->poll_interval_ns = GPUAR_PARAM(poll_interval_us) * NSEC_PER_USEC;
	cfg->floor_ns = gpuar_check_floor_ns();
	cfg->backstop_ns = max_t(u64, GPUAR_PARAM(poll_backstop_us) *
				 NSEC_PER_USEC, NSEC_PER_USEC);
	cfg->backstop_timeout = true;
}

/* ------------------------------------------------------- timer queue */

static void gpuar_word_enqueue_locked(struct gpuar_port *port,
				      struct gpuar_wait *w)
{
	struct rb_node **link = &port->timeq.rb_root.rb_node, *parent = NULL;
	bool leftmost = true;

	lockdep_assert_held(&port->lock);
	while (*link) {
		struct gpuar_wait *e;

		parent = *link;
		e = rb_entry(parent, struct gpuar_wait, tnode);
		if (w->ws.next_ns < e->ws.next_ns) {
			link = &parent->rb_left;
		} else {
			link = &parent->rb_right;
			leftmost = false;
		}
	}
	rb_link_node(&w->tnode, parent, link);
	rb_insert_color_cached(&w->tnode, &port->timeq, leftmost);
}

static void gpuar_word_unqueue_locked(struct gpuar_port *port,
				      struct gpuar_wait *w)
{
	lockdep_assert_held(&port->lock);
	if (RB_EMPTY_NODE(&w->tnode))
		return;
	rb_erase_cached(&w->tnode, &port->timeq);
	RB_CLEAR_NODE(&w->tnode);
}

/*
 * Arm the port's timer at @when unless it is armed earlier already.
 * hrtimer_start() never waits for a running callback, so this is safe
 * under the port lock (hrtimer_cancel() is not).
 */
static void gpuar_word_arm_locked(struct gpuar_port *port, u64 when)
{
	lockdep_assert_held(&port->lock);
	if (when >= port->armed_ns)
		return;
	port->armed_ns = when;
	hrtimer_start(&port->timer, ns_to_ktime(when), HRTIMER_MODE_ABS_SOFT);
}

/* -------------------------------------------------------- busy queue */

/*
 * Busy-read's side of a word wait: sleeping waits with an early wake sit
 * in port->busyq by early_ns, and a reader blocked in read()
 * (busy_read.c) sleeps until the first of them. A reader registers as a
 * busy sleeper with the earliest wake it saw; a wait committed later with
 * an earlier wake must wake it, or it would sleep past that wait. Both
 * sides act under the port lock, and the reader is on busy_wq before it
 * looks:
 *
 *   reader (gpuar_busy_read_wait)         submitter (gpuar_word_commit_locked)
 *     prepare_to_wait(busy_wq)
 *     lock
 *     wake_at = first early wake
 *     sleeper_add: busy_until = wake_at
 *     unlock
 *                                           lock
 *                                           busyq += w (early < busy_until)
 *                                           busy_until = early
 *                                           wake_up(busy_wq): reader RUNNING
 *                                           unlock
 *     schedule_hrtimeout(wake_at)
 *       returns at once; the reader
 *       looks again and sees w first
 *
 * Had the reader read the first early wake before prepare_to_wait (or
 * outside the lock), a commit in between would find no sleeper, wake
 * nobody, and the reader would sleep to its later wake_at: that
 * interleaving is what the order above rules out. A wait committed before
 * the reader takes the lock is simply in the queue it reads. A sleeper
 * that wakes cannot tell the others' wake times apart, so it sets
 * busy_until to U64_MAX: the next early wake rouses every busy sleeper,
 * which each look again (a spurious wake-up, never a lost one).
 */
static bool gpuar_word_early_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct gpuar_wait, bnode)->early_ns <
	       rb_entry(b, struct gpuar_wait, bnode)->early_ns;
}

static void gpuar_word_busyq_add_locked(struct gpuar_port *port,
					struct gpuar_wait *w)
{
	lockdep_assert_held(&port->lock);
	rb_add_cached(&w->bnode, &port->busyq, gpuar_word_early_less);
	if (port->busy_sleepers && w->early_ns < port->busy_until) {
		port->busy_until = w->early_ns;
		wake_up(&port->busy_wq);
	}
}

/*
 * A reader took the wait, or it ended: no reader wakes for it any more. A
 * wait the timer checked first stays queued, still pending, so a reader
 * that wakes a little after the timer still spins on it.
 */
static void gpuar_word_busyq_del_locked(struct gpuar_port *port,
					struct gpuar_wait *w)
{
	lockdep_assert_held(&port->lock);
	if (RB_EMPTY_NODE(&w->bnode))
		return;
	rb_erase_cached(&w->bnode, &port->busyq);
	RB_CLEAR_NODE(&w->bnode);
}

/* The earliest early wake among pending word waits not yet spun; 0: none. */
u64 gpuar_word_first_early_locked(struct gpuar_port *port)
{
	struct rb_node *n;

	lockdep_assert_held(&port->lock);
	n = rb_first_cached(&port->busyq);
	return n ? rb_entry(n, struct gpuar_wait, bnode)->early_ns : 0;
}

/*
 * The pending wait with the earliest early wake if that is due at @now,
 * taken off the busy queue (a reader spins on it once); NULL when none.
 */
struct gpuar_wait *gpuar_word_take_early_locked(struct gpuar_port *port,
						u64 now)
{
	struct gpuar_wait *w;
	struct rb_node *n;

	lockdep_assert_held(&port->lock);
	n = rb_first_cached(&port->busyq);
	if (!n)
		return NULL;
	w = rb_entry(n, struct gpuar_wait, bnode);
	if (w->early_ns > now)
		return NULL;
	gpuar_word_busyq_del_locked(port, w);
	return w;
}

/* A reader sleeps until @wake_at (0: no early wake known); see above. */
void gpuar_word_sleeper_add_locked(struct gpuar_port *port, u64 wake_at)
{
	lockdep_assert_held(&port->lock);
	port->busy_sleepers++;
	port->busy_until = min(port->busy_until, wake_at ?: U64_MAX);
}

/* The reader woke: the next early wake rouses the others to look again. */
void gpuar_word_sleeper_del_locked(struct gpuar_port *port)
{
	lockdep_assert_held(&port->lock);
	port->busy_sleepers--;
	port->busy_until = U64_MAX;
}

/* ------------------------------------------------- checks and the end */

/*
 * End word wait @w: off the timer and busy queues, off its line's count,
 * into its point's outcomes, then its record queued. Any context, port
 * lock held; a wait already ended is left alone.
 */
void gpuar_word_end_locked(struct gpuar_port *port, struct gpuar_wait *w,
			   u8 outcome, s32 status, u64 complete_ns, u64 value)
{
	lockdep_assert_held(&port->lock);
	if (w->state != GPUAR_WAIT_PENDING)
		return;
	gpuar_word_unqueue_locked(port, w);
	gpuar_word_busyq_del_locked(port, w);
	w->line->waits--;
	if (w->pe) {
		w->pe->outcomes[outcome]++;
		gpuar_est_entry_release(w->pe);
	}
	w->rec.checks = w->ws.checks;
	w->rec.slept_ns = w->ws.slept_ns;
	gpuar_wait_complete_locked(port, w, outcome, status, complete_ns,
				   value);
}

/*
 * One check of pending wait @w, due at @now. Ends the wait (true) when the
 * word reached its target or the backstop passed; otherwise requeues it at
 * its next check (the caller arms the timer). The check's own time is
 * taken after the load, so a record's complete_ns is never earlier than
 * the store it saw, and each check of one timer firing has its own.
 */
bool gpuar_word_check_locked(struct gpuar_port *port, struct gpuar_wait *w,
			     u64 now, bool by_reader)
{
	u64 word = gpuar_load_acquire(&w->line->words[w->slot]);
	struct gpuar_est *est = w->pe ? &w->pe->est : NULL;
	bool ended;

	lockdep_assert_held(&port->lock);
	now = max(now, gpuar_now_ns());
	port->cnt.checks++;
	if (by_reader)
		port->cnt.busy_read_checks++;
	/* The check moves next_ns, the timer queue's key: out first. */
	gpuar_word_unqueue_locked(port, w);
	ended = gpuar_word_checked(&w->ws, est, now,
				   gpuar_reached(word, w->target));
	trace_gpuar_check(port, w, word, now);
	if (!ended) {
		gpuar_word_enqueue_locked(port, w);
		return false;
	}
	gpuar_word_end_locked(port, w, w->ws.outcome,
			      w->ws.outcome == GPUAR_OUTCOME_TIMEOUT ? -ETIME : 0,
			      now, word);
	return true;
}

/*
 * Move @w's next timer check to @from plus its interval (its backstop at
 * the latest) and arm the timer for it. A busy reader uses this while it
 * watches the word itself; see busy_read.c.
 */
void gpuar_word_defer_locked(struct gpuar_port *port, struct gpuar_wait *w,
			     u64 from)
{
	lockdep_assert_held(&port->lock);
	gpuar_word_unqueue_locked(port, w);
	w->ws.next_ns = min(from + w->ws.interval_ns, w->ws.backstop_at_ns);
	gpuar_word_enqueue_locked(port, w);
	gpuar_word_arm_locked(port, w->ws.next_ns);
}

/* -------------------------------------------------------------- timer */

/*
 * Check the waits due at @now, earliest first, at most checks_per_fire of
 * them, and arm the timer for what is left.
 */
static void gpuar_word_run_due_locked(struct gpuar_port *port, u64 now)
{
	unsigned int budget = max(1U, READ_ONCE(gpuar_checks_per_fire));
	struct rb_node *first;

	lockdep_assert_held(&port->lock);
	port->armed_ns = U64_MAX;
	port->cnt.timer_fires++;
	while ((first = rb_first_cached(&port->timeq))) {
		struct gpuar_wait *w = rb_entry(first, struct gpuar_wait, tnode);

		if (w->ws.next_ns > now) {
			gpuar_word_arm_locked(port, w->ws.next_ns);
			return;
		}
		if (!budget) {
			/*
			 * Over the cap: let the CPU go for at least as long
			 * as this firing took (and the floor), so one port's
			 * checks never take more than half a CPU in softirq.
			 */
			u64 end = gpuar_now_ns();

			gpuar_word_arm_locked(port, end +
					      max(end - now,
						  gpuar_check_floor_ns()));
			return;
		}
		budget--;
		gpuar_word_check_locked(port, w, now, false);
	}
}

static enum hrtimer_restart gpuar_word_timer_fn(struct hrtimer *timer)
{
	struct gpuar_port *port = container_of(timer, struct gpuar_port, timer);
	unsigned long flags;

	spin_lock_irqsave(&port->lock, flags);
	gpuar_word_run_due_locked(port, gpuar_now_ns());
	spin_unlock_irqrestore(&port->lock, flags);
	return HRTIMER_NORESTART;
}

void gpuar_word_timer_init(struct gpuar_port *port)
{
	gpuar_hrtimer_setup(&port->timer, gpuar_word_timer_fn, CLOCK_MONOTONIC,
			    HRTIMER_MODE_ABS_SOFT);
}

/* ------------------------------------------------------------ submit */

/*
 * Waits committed per hold of the port lock, and entries read, looked up
 * or allocated between two preemption points: a 4096-entry batch takes
 * long on a debug kernel, and must not hold the CPU all that time.
 */
#define GPUAR_COMMIT_CHUNK 64

/*
 * Take each entry's estimator point for its wait, held so nothing evicts
 * it while the wait is pending (a full table gives up its least recently
 * used idle point for a new one); -ENOSPC, with nothing held, when every
 * point of a full table is held. port->mutex held (the table's shape
 * changes only under it), and port->lock taken per chunk: an eviction
 * scans the table.
 */
static int gpuar_word_take_points(struct gpuar_port *port,
				  const struct gpuar_word_wait *e,
				  struct gpuar_wait **waits, u32 count)
{
	u32 i, n;

	lockdep_assert_held(&port->mutex);
	spin_lock_irq(&port->lock);
	for (i = 0; i < count; i++) {
		struct gpuar_est_entry *pe;

		if (i && !(i % GPUAR_COMMIT_CHUNK)) {
			spin_unlock_irq(&port->lock);
			cond_resched();
			spin_lock_irq(&port->lock);
		}
		pe = gpuar_word_point(&port->points, e[i].point, &e[i].plan);
		if (!pe) {
			for (n = 0; n < i; n++)
				gpuar_est_entry_release(waits[n]->pe);
			spin_unlock_irq(&port->lock);
			return -ENOSPC;
		}
		gpuar_est_entry_hold(&port->points, pe);
		waits[i]->pe = pe;
	}
	spin_unlock_irq(&port->lock);
	return 0;
}

/*
 * Commit one validated entry at @now; port->mutex and port->lock held.
 * @cfg and @wakelat (the port's wake-up latency) are read once per chunk
 * of the batch.
 */
static void gpuar_word_commit_locked(struct gpuar_port *port,
				     struct gpuar_wait *w,
				     const struct gpuar_word_wait *e,
				     struct gpuar_line *line, u64 now,
				     const struct gpuar_word_cfg *cfg,
				     u64 wakelat)
{
	u64 word;

	lockdep_assert_held(&port->lock);
	w->port = port;
	w->source = GPUAR_SOURCE_WORD;
	w->state = GPUAR_WAIT_PENDING;
	w->user_data = e->user_data;
	w->start_ns = e->start_ns ?: now;
	w->line = line;
	w->slot = e->slot;
	w->target = e->target;
	w->rec.point = e->point;
	/* Taken and held before the commit (gpuar_word_take_points). */
	WARN_ON_ONCE(!w->pe);
	RB_CLEAR_NODE(&w->tnode);
	RB_CLEAR_NODE(&w->bnode);
	line->waits++;
	port->npending++;
	port->cnt.submitted++;
	list_add_tail(&w->node, &port->pending);
	trace_gpuar_submit(port, w);

	word = gpuar_load_acquire(&line->words[w->slot]);
	now = gpuar_now_ns();	/* the check's time: after its load */
	port->cnt.checks++;
	/* A resubmit (start_ns given) was seen pending by the checks before. */
	if (gpuar_word_begin(&w->ws, &e->plan, w->pe ? &w->pe->est : NULL,
			     w->start_ns, e->start_ns != 0, now,
			     gpuar_reached(word, w->target), cfg)) {
		gpuar_word_end_locked(port, w, w->ws.outcome, 0, now, word);
		return;
	}
	if (w->ws.phase == GPUAR_WORD_SLEEP)
		port->cnt.sleeps++;
	gpuar_word_enqueue_locked(port, w);
	w->early_ns = gpuar_word_early_ns(&w->ws, wakelat);
	if (gpuar_word_busy_candidate(&w->ws) &&
	    w->early_ns < w->ws.backstop_at_ns)
		gpuar_word_busyq_add_locked(port, w);
	gpuar_word_arm_locked(port, w->ws.next_ns);
}

/*
 * Copy in and check entries, in order, up to the first bad one; returns
 * its error with *@bad its index (*@bad = count when all are good). The
 * line ids are looked up later, under the port mutex, only for the
 * entries before *@bad, so the index reported is that of the first bad
 * entry whatever is wrong with it.
 */
static int gpuar_word_read_entries(const struct gpuar_submit *s,
				   struct gpuar_word_wait *e, u32 *bad)
{
	const char __user *src = u64_to_user_ptr(s->entries);
	u64 now = gpuar_now_ns();
	u32 i;
	int ret;

	for (i = 0; i < s->count; i++) {
		*bad = i;
		if (i && !(i % GPUAR_COMMIT_CHUNK))
			cond_resched();
		ret = copy_struct_from_user(&e[i], sizeof(e[i]),
					    src + (size_t)i * s->entry_size,
					    s->entry_size);
		if (ret)
			return ret;
		if (!gpuar_word_entry_valid(&e[i], now))
			return -EINVAL;
	}
	*bad = s->count;
	return 0;
}

long gpuar_submit_word_ioctl(struct gpuar_port *port, void __user *uarg)
{
	struct gpuar_line **lines = NULL;
	struct gpuar_wait **waits = NULL;
	struct gpuar_word_wait *e = NULL;
	struct gpuar_submit s;
	u32 usize, i, bad;
	struct gpuar_word_cfg cfg;
	u64 now, wakelat = 0;
	int ret, entry_ret;

	ret = gpuar_uarg_in(&s, sizeof(s), GPUAR_SUBMIT_SIZE_VER1, uarg, &usize);
	if (ret)
		return ret;
	bad = s.count;
	ret = -EPERM;
	if (current->mm != port->mm)
		goto fail;
	ret = gpuar_submit_header(&s, GPUAR_WORD_WAIT_SIZE_VER1);
	if (ret)
		goto fail;
	if (!s.count)
		return 0;

	/* count <= max_waits <= 2^20: far below kvmalloc's INT_MAX. */
	ret = -ENOMEM;
	e = kvmalloc_array(s.count, sizeof(*e), GFP_KERNEL_ACCOUNT);
	lines = kvmalloc_array(s.count, sizeof(*lines), GFP_KERNEL_ACCOUNT);
	waits = kvcalloc(s.count, sizeof(*waits), GFP_KERNEL_ACCOUNT);
	if (!e || !lines || !waits)
		goto fail;
	entry_ret = gpuar_word_read_entries(&s, e, &bad);

	mutex_lock(&port->mutex);
	for (i = 0; i < bad; i++) {
		if (i && !(i % GPUAR_COMMIT_CHUNK))
			cond_resched();
		lines[i] = xa_load(&port->lines, e[i].line);
		if (!lines[i]) {
			bad = i;
			ret = -ENOENT;
			goto fail_unlock;
		}
	}
	if (entry_ret) {
		ret = entry_ret;
		goto fail_unlock;
	}
	ret = -ENOSPC;
	if (!gpuar_waits_fit(port, s.count))
		goto fail_unlock;
	ret = -ENOMEM;
	for (i = 0; i < s.count; i++) {
		if (i && !(i % GPUAR_COMMIT_CHUNK))
			cond_resched();
		waits[i] = kzalloc(sizeof(*waits[i]), GFP_KERNEL_ACCOUNT);
		if (!waits[i])
			goto fail_unlock;
		kref_init(&waits[i]->ref);
	}
	ret = gpuar_word_take_points(port, e, waits, s.count);
	if (ret)
		goto fail_unlock;

	/*
	 * Room is ours since the check above, under the mutex: only
	 * submitters (serialised by it) add waits. Commit in chunks so a
	 * large batch never keeps interrupts off for long.
	 */
	spin_lock_irq(&port->lock);
	for (i = 0; i < s.count; i++) {
		if (i && !(i % GPUAR_COMMIT_CHUNK)) {
			spin_unlock_irq(&port->lock);
			cond_resched();
			spin_lock_irq(&port->lock);
		}
		if (!(i % GPUAR_COMMIT_CHUNK)) {
			gpuar_word_cfg(&cfg);
			wakelat = gpuar_wakelat_quantile(&port->wakelat);
		}
		now = gpuar_now_ns();
		gpuar_word_commit_locked(port, waits[i], &e[i], lines[i], now,
					 &cfg, wakelat);
	}
	spin_unlock_irq(&port->lock);
	mutex_unlock(&port->mutex);

	kvfree(waits);
	kvfree(lines);
	kvfree(e);
	return s.count;

fail_unlock:
	mutex_unlock(&port->mutex);
fail:
	if (waits)
		for (i = 0; i < s.count; i++)
			kfree(waits[i]);
	kvfree(waits);
	kvfree(lines);
	kvfree(e);
	s.error_index = bad;
	if (gpuar_uarg_out(&s, sizeof(s), uarg, usize))
		return -EFAULT;
	return ret;
}
