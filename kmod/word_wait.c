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
 * sit in an rbtree ordered by when the timer must next look at them (their
 * next check, an imminent raise, a lease's end), the timer is armed at the
 * earliest, and one firing checks at most checks_per_fire due waits before
 * re-arming, so many waits never mean many timers and a firing's cost is
 * bounded. How often it fires is bounded too, whatever the waits' phases
 * (the timer storm a user could otherwise start with many ports of many
 * staggered waits):
 *   - per port, never sooner than check_floor_us after its last firing
 *     (a firing checks every due wait, so waits share firings);
 *   - per user, check_budget checks a second over all the user's ports,
 *     a firing costing at least one: past it, firings come later
 *     (gpuar_uid_budget_take), they are never refused;
 *   - waits checked every interval (PARK) arm with a quarter of their
 *     interval as slack (hrtimer_start_range_ns()), so the timer core
 *     serves ports due close together in one expiry.
 * The timer is a soft hrtimer (HRTIMER_MODE_ABS_SOFT): its callback runs
 * in the timer softirq, not in hrtimer_interrupt(), so many ports with
 * many due waits never make one hard interrupt long (and
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

#include "../core/defaults.h"
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

/*
 * When the timer must next look at @w: its next check, or its imminent
 * raise if sooner; while it is leased, not before the lease ends (nor
 * after its backstop).
 */
static u64 gpuar_word_due(const struct gpuar_wait *w)
{
	u64 due = w->ws.next_ns, lease = READ_ONCE(w->lease_end_ns);

	if (lease > due)
		due = max(due, min(lease, w->ws.backstop_at_ns));
	if (w->raise_ns && w->raise_ns < due)
		due = w->raise_ns;
	return due;
}

static void gpuar_word_enqueue_locked(struct gpuar_port *port,
				      struct gpuar_wait *w)
{
	struct rb_node **link = &port->timeq.rb_root.rb_node, *parent = NULL;
	bool leftmost = true;

	lockdep_assert_held(&port->lock);
	w->due_ns = gpuar_word_due(w);
	while (*link) {
		struct gpuar_wait *e;

		parent = *link;
		e = rb_entry(parent, struct gpuar_wait, tnode);
		if (w->due_ns < e->due_ns) {
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
 * Arm the port's timer for @when, firing at most @slack after it, unless
 * it will fire by then already; never sooner than the floor after its
 * last firing (the per-port spacing). hrtimer_start_range_ns() never
 * waits for a running callback, so this is safe under the port lock
 * (hrtimer_cancel() is not).
 */
static void gpuar_word_arm_locked(struct gpuar_port *port, u64 when,
				  u64 slack)
{
	lockdep_assert_held(&port->lock);
	when = max(when, port->last_fire_ns + gpuar_check_floor_ns());
	/* A firing before the check reserved for it would be unpaid. */
	when = max(when, port->prepaid_ns);
	if (when + slack >= port->armed_end_ns)
		return;
	port->armed_ns = when;
	port->armed_end_ns = when + slack;
	hrtimer_start_range_ns(&port->timer, ns_to_ktime(when), slack,
			       HRTIMER_MODE_ABS_SOFT);
}

/*
 * The slack the timer may take at @w's due time: a quarter of the
 * interval of a wait checked every interval, which loses nothing by a
 * check a little later; none for a predicted check, an imminent raise or
 * a lease's end, whose times are the point.
 */
static u64 gpuar_word_slack(const struct gpuar_wait *w)
{
	if (w->ws.phase != GPUAR_WORD_PARK || w->due_ns != w->ws.next_ns)
		return 0;
	return w->ws.interval_ns / 4;
}

/* Arm for the earliest wait still queued, if any. */
static void gpuar_word_arm_first_locked(struct gpuar_port *port)
{
	struct rb_node *n = rb_first_cached(&port->timeq);
	struct gpuar_wait *w;

	if (!n)
		return;
	w = rb_entry(n, struct gpuar_wait, tnode);
	gpuar_word_arm_locked(port, w->due_ns, gpuar_word_slack(w));
}

/* @w's due time changed: move it in the queue. */
static void gpuar_word_move_locked(struct gpuar_port *port,
				   struct gpuar_wait *w)
{
	gpuar_word_unqueue_locked(port, w);
	gpuar_word_enqueue_locked(port, w);
}

/*
 * The earliest due time moved later (claims leased their waits): a timer
 * armed for the old one would fire for nothing, so take it back and arm
 * for the new one. hrtimer_try_to_cancel() does not wait for a running
 * callback (that one re-arms itself at its end), so this is safe under
 * the port lock.
 */
static void gpuar_word_retarget_locked(struct gpuar_port *port)
{
	struct rb_node *n = rb_first_cached(&port->timeq);
	u64 first = n ? rb_entry(n, struct gpuar_wait, tnode)->due_ns : U64_MAX;

	lockdep_assert_held(&port->lock);
	if (port->armed_ns >= first)
		return;
	if (hrtimer_try_to_cancel(&port->timer) != 1)
		return;
	port->armed_ns = U64_MAX;
	port->armed_end_ns = U64_MAX;
	gpuar_word_arm_first_locked(port);
}

/* The same outside the timer's callback, which arms once at its end. */
static void gpuar_word_requeue_locked(struct gpuar_port *port,
				      struct gpuar_wait *w)
{
	gpuar_word_move_locked(port, w);
	gpuar_word_arm_first_locked(port);
}

/* -------------------------------------------------------- busy queue */

/*
 * Busy-read's side of a word wait: sleeping waits with an early wake sit
 * in port->busyq by early_ns, and a reader blocked in read() or
 * WAIT_READY (busy_read.c) sleeps until the first of them. A reader
 * registers as a busy sleeper with the earliest wake it saw; a wait
 * committed later with an earlier wake must wake one, or every reader
 * would sleep past that wait. Both sides act under the port lock, and the
 * reader is TASK_INTERRUPTIBLE before it looks:
 *
 *   reader (gpuar_busy_read_wait)         submitter (gpuar_word_commit_locked)
 *     prepare_to_wait(wq): INTERRUPTIBLE
 *     lock
 *     wake_at = first early wake
 *     sleeper_add(wake_at)
 *     unlock
 *                                           lock
 *                                           busyq += w (early < wake_at)
 *                                           sleeper's wake_at = early
 *                                           wake_up_process: reader RUNNING
 *                                           unlock
 *     schedule_hrtimeout(wake_at)
 *       returns at once; the reader
 *       looks again and sees w first
 *
 * Had the reader read the first early wake before setting its state (or
 * outside the lock), a commit in between would find no sleeper, wake
 * nobody, and the reader would sleep to its later wake_at: that
 * interleaving is what the order above rules out. A wait committed before
 * the reader takes the lock is simply in the queue it reads. Each sleeper
 * keeps its own wake time, and a commit wakes only the one that would
 * sleep longest past the new wait (one reader spinning on it is enough),
 * and sets that sleeper's wake time to the new one, so the next commit
 * sees it already on its way: no thundering herd of busy sleepers.
 */
static bool gpuar_word_early_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct gpuar_wait, bnode)->early_ns <
	       rb_entry(b, struct gpuar_wait, bnode)->early_ns;
}

static void gpuar_word_busyq_add_locked(struct gpuar_port *port,
					struct gpuar_wait *w)
{
	struct gpuar_busy_sleeper *s, *pick = NULL;

	lockdep_assert_held(&port->lock);
	rb_add_cached(&w->bnode, &port->busyq, gpuar_word_early_less);
	list_for_each_entry(s, &port->busy_sleepers, node)
		if ((s->wake_at ?: U64_MAX) > w->early_ns &&
		    (!pick || (s->wake_at ?: U64_MAX) >
			      (pick->wake_at ?: U64_MAX)))
			pick = s;
	if (pick) {
		pick->wake_at = w->early_ns;
		wake_up_process(pick->task);
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

/*
 * A wake-up latency sample: someone woken for an early wake due at
 * @due_ns runs at @now. Capped by the module's ceiling, so one long stall
 * (a preempted vCPU, a loop that ran late) cannot make waits wake
 * absurdly early; the early wakes use a high quantile of these.
 */
void gpuar_word_wakelat_locked(struct gpuar_port *port, u64 due_ns, u64 now)
{
	lockdep_assert_held(&port->lock);
	if (now <= due_ns)
		return;
	gpuar_wakelat_record(&port->wakelat,
			     min(now - due_ns,
				 GPUAR_PARAM(wakelat_max_us) * NSEC_PER_USEC));
}

/* A reader sleeps until @s->wake_at (0: no early wake known); see above. */
void gpuar_word_sleeper_add_locked(struct gpuar_port *port,
				   struct gpuar_busy_sleeper *s)
{
	lockdep_assert_held(&port->lock);
	list_add(&s->node, &port->busy_sleepers);
}

void gpuar_word_sleeper_del_locked(struct gpuar_port *port,
				   struct gpuar_busy_sleeper *s)
{
	lockdep_assert_held(&port->lock);
	list_del(&s->node);
}

/* ------------------------------------------------ leases and imminence */

/*
 * Lease @w until @until: the timer leaves it alone meanwhile (someone is
 * watching its word), and takes it back when the lease runs out unless
 * the watcher renewed it. Only ever lengthens a lease.
 */
void gpuar_word_lease_locked(struct gpuar_port *port, struct gpuar_wait *w,
			     u64 until)
{
	lockdep_assert_held(&port->lock);
	WRITE_ONCE(w->lease_end_ns, max(READ_ONCE(w->lease_end_ns), until));
	gpuar_word_requeue_locked(port, w);
}

/*
 * A busy reader stops watching pending @w at @now, having just seen it
 * pending: its lease ends (a claim's stays) and the timer checks it again
 * an interval from now.
 */
void gpuar_word_release_locked(struct gpuar_port *port, struct gpuar_wait *w,
			       u64 now)
{
	lockdep_assert_held(&port->lock);
	if (w->state != GPUAR_WAIT_PENDING)
		return;
	if (w->imminent != GPUAR_IMMINENT_CLAIMED)
		WRITE_ONCE(w->lease_end_ns, 0);
	w->ws.next_ns = max(w->ws.next_ns,
			    min(now + w->ws.interval_ns, w->ws.backstop_at_ns));
	gpuar_word_requeue_locked(port, w);
}

/* Off the imminent and claimed lists, lease dropped. */
static void gpuar_word_imminent_del_locked(struct gpuar_port *port,
					   struct gpuar_wait *w)
{
	if (w->imminent == GPUAR_IMMINENT_RAISED)
		port->nraised--;
	else if (w->imminent == GPUAR_IMMINENT_CLAIMED)
		port->nclaimed--;
	if (w->imminent != GPUAR_IMMINENT_NONE)
		list_del_init(&w->inode);
	w->imminent = GPUAR_IMMINENT_NONE;
	w->raise_ns = 0;
	WRITE_ONCE(w->lease_end_ns, 0);
}

/* @w reached its early wake on an opted-in port: EPOLLPRI until claimed. */
static void gpuar_word_raise_locked(struct gpuar_port *port,
				    struct gpuar_wait *w)
{
	w->raise_ns = 0;
	w->imminent = GPUAR_IMMINENT_RAISED;
	list_add_tail(&w->inode, &port->imminent_list);
	port->nraised++;
	port->cnt.imminent++;
	gpuar_pri_wake_locked(port);
}

static bool gpuar_word_look_locked(struct gpuar_port *port,
				   struct gpuar_wait *w, u64 now,
				   bool by_reader, bool raise);

/*
 * Claim raised waits, the earliest raised first, looking at no more than
 * @max of them (the caller's chunk bounds this hold of the lock): each is
 * checked once, and one whose word is already done ends then (LATE, its
 * record queued) instead of being handed out; the others are leased
 * @lease_ns past their predicted completion (gpuar_word_claim_until) and
 * go into @out with a reference for the caller. Returns how many.
 * A claimed wait was seen pending at its claim, so the claimer's sighting
 * of the store, read back through gpuar_claimed_check(), ends it EXACT at
 * that time.
 *
 * The first claim after a raise is a wake-up latency sample (raise due
 * to claim), as a blocked reader's wake is: an event loop woken by
 * EPOLLPRI takes that long to come and look, so later raises come that
 * much earlier and the claimer is watching before the sleep ends.
 */
unsigned int gpuar_word_claim_locked(struct gpuar_port *port,
				     struct gpuar_wait **out, unsigned int max,
				     u64 lease_ns)
{
	u64 now = gpuar_now_ns(), until;
	unsigned int n = 0, looked;
	bool sampled = false;

	lockdep_assert_held(&port->lock);
	for (looked = 0; looked < max && !list_empty(&port->imminent_list);
	     looked++) {
		struct gpuar_wait *w = list_first_entry(&port->imminent_list,
							struct gpuar_wait,
							inode);

		if (!sampled) {
			gpuar_word_wakelat_locked(port, w->early_ns, now);
			sampled = true;
		}
		if (gpuar_reached(gpuar_load_acquire(&w->line->words[w->slot]),
				  w->target)) {
			/* Ends it, off the raised list: nothing to watch. */
			gpuar_word_look_locked(port, w, now, false, true);
			continue;
		}
		until = gpuar_word_claim_until(&w->ws, now, lease_ns);
		list_move_tail(&w->inode, &port->claimed);
		port->nraised--;
		port->nclaimed++;
		w->imminent = GPUAR_IMMINENT_CLAIMED;
		gpuar_word_lease_locked(port, w, until);
		kref_get(&w->ref);
		out[n++] = w;
	}
	if (n)
		gpuar_word_retarget_locked(port);
	return n;
}

/*
 * Undo the claim of @w (a claim that could not hand it out): raised
 * again, at the head of the list (the caller goes newest first, so the
 * order is as before), its lease gone. Its lease may have run out
 * meanwhile (the copy-out faulted slowly): raised again all the same.
 */
void gpuar_word_unclaim_locked(struct gpuar_port *port, struct gpuar_wait *w)
{
	lockdep_assert_held(&port->lock);
	if (w->state != GPUAR_WAIT_PENDING ||
	    w->imminent == GPUAR_IMMINENT_RAISED)
		return;
	if (w->imminent == GPUAR_IMMINENT_CLAIMED) {
		list_move(&w->inode, &port->imminent_list);
		port->nclaimed--;
	} else {
		list_add(&w->inode, &port->imminent_list);
	}
	port->nraised++;
	w->imminent = GPUAR_IMMINENT_RAISED;
	WRITE_ONCE(w->lease_end_ns, 0);
	gpuar_word_requeue_locked(port, w);
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
	gpuar_word_imminent_del_locked(port, w);
	list_del_init(&w->lnode);
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
 * End every pending wait on @line, which died (its memory went), each
 * with its dead-line record. Any context; when @may_sleep the lock is
 * dropped between chunks, so a line with max_waits pending never keeps
 * interrupts off for long (waits submitted meanwhile end at their commit,
 * the line being dead).
 */
void gpuar_word_end_line(struct gpuar_port *port, struct gpuar_line *line,
			 bool may_sleep)
{
	u64 now = gpuar_now_ns();
	unsigned long flags;
	unsigned int n = 0;

	spin_lock_irqsave(&port->lock, flags);
	gpuar_wakes_hold_locked(port);
	while (!list_empty(&line->waits)) {
		gpuar_word_end_locked(port, list_first_entry(&line->waits,
							     struct gpuar_wait,
							     lnode),
				      GPUAR_OUTCOME_CANCELLED,
				      GPUAR_LINE_DEAD_STATUS, now, 0);
		if (may_sleep && !(++n % GPUAR_COMMIT_CHUNK)) {
			gpuar_wakes_release_locked(port);
			spin_unlock_irqrestore(&port->lock, flags);
			cond_resched();
			spin_lock_irqsave(&port->lock, flags);
			gpuar_wakes_hold_locked(port);
		}
	}
	gpuar_wakes_release_locked(port);
	spin_unlock_irqrestore(&port->lock, flags);
}

/*
 * One check of pending wait @w, due at @now. Ends the wait (true) when the
 * word reached its target or the backstop passed; otherwise requeues it at
 * its next check (the caller arms the timer). The check's own time is
 * taken after the load, so a record's complete_ns is never earlier than
 * the store it saw, and each check of one timer firing has its own.
 * @raise: the check at an imminent raise (gpuar_word_raise_checked).
 */
static bool gpuar_word_look_locked(struct gpuar_port *port,
				   struct gpuar_wait *w, u64 now,
				   bool by_reader, bool raise)
{
	u64 word = gpuar_load_acquire(&w->line->words[w->slot]);
	struct gpuar_est *est = w->pe ? &w->pe->est : NULL;
	bool done, ended;

	lockdep_assert_held(&port->lock);
	now = max(now, gpuar_now_ns());
	port->cnt.checks++;
	if (by_reader)
		port->cnt.busy_read_checks++;
	/* The check moves next_ns, the timer queue's key: out first. */
	gpuar_word_unqueue_locked(port, w);
	done = gpuar_reached(word, w->target);
	ended = raise ? gpuar_word_raise_checked(&w->ws, est, now, done) :
			gpuar_word_checked(&w->ws, est, now, done);
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

bool gpuar_word_check_locked(struct gpuar_port *port, struct gpuar_wait *w,
			     u64 now, bool by_reader)
{
	return gpuar_word_look_locked(port, w, now, by_reader, false);
}

/* -------------------------------------------------------------- timer */

/*
 * The timer's look at due wait @w at @now: raise it imminent if that is
 * due, leave it alone while it is leased (a lease that ran out gives a
 * claimed wait back to the timer), check it if its check is due.
 */
static void gpuar_word_visit_locked(struct gpuar_port *port,
				    struct gpuar_wait *w, u64 now)
{
	u64 lease = READ_ONCE(w->lease_end_ns);

	if (w->raise_ns && w->raise_ns <= now) {
		/* Done already: no one need come and look (LATE). */
		if (gpuar_word_look_locked(port, w, now, false, true))
			return;
		gpuar_word_raise_locked(port, w);
	}
	if (lease && lease <= now) {
		WRITE_ONCE(w->lease_end_ns, 0);
		port->cnt.lease_expiries++;
		if (w->imminent == GPUAR_IMMINENT_CLAIMED) {
			list_del_init(&w->inode);
			port->nclaimed--;
			w->imminent = GPUAR_IMMINENT_NONE;
		}
	} else if (lease && w->ws.backstop_at_ns > now) {
		gpuar_word_move_locked(port, w);
		return;
	}
	if (w->ws.next_ns > now) {
		gpuar_word_move_locked(port, w);
		return;
	}
	gpuar_word_check_locked(port, w, now, false);
}

/*
 * Pay for a firing at @now that has @want due waits to look at: a check
 * reserved at an earlier firing first, then the user's budget, which also
 * pays, or reserves, the port's next firing's check (port->prepaid_ns).
 * Returns the looks paid for; *@next_ns is when the budget earns the
 * next one. 0: the budget is spent, and a look is reserved for *@next_ns
 * (no timer of the port is armed before it).
 */
static unsigned int gpuar_word_pay_locked(struct gpuar_port *port, u64 now,
					  unsigned int want, u64 *next_ns)
{
	unsigned int got = 0, more;

	if (port->prepaid_ns > now) {
		*next_ns = port->prepaid_ns;
		return 0;
	}
	if (port->prepaid_ns) {
		port->prepaid_ns = 0;
		got = 1;
	}
	/*
	 * One check more than this firing needs: the port's next firing's,
	 * kept as its reservation. Without it a port paid now came back at
	 * its next wait's due time to find the budget spent by others, fired
	 * for nothing and reserved only then, and a user's firings ran a
	 * fifth to twice over its checks.
	 */
	more = gpuar_uid_budget_take(port->uid_limit, now, want - got + 1,
				     next_ns);
	if (!more) {
		/* Spent: one reserved, for this port's next firing. */
		port->prepaid_ns = *next_ns;
		return got;
	}
	if (more > want - got) {
		port->prepaid_ns = now;
		return want;
	}
	got += more;
	/* Fewer than it wanted: the budget is spent; reserve the next. */
	if (gpuar_uid_budget_hold(port->uid_limit, now, next_ns))
		port->prepaid_ns = *next_ns;
	return got;
}

/*
 * Look at the waits due at @now, earliest first, as many as the user's
 * check budget pays for and at most checks_per_fire of them, and arm the
 * timer for what is left.
 */
static void gpuar_word_run_due_locked(struct gpuar_port *port, u64 now)
{
	unsigned int cap = max(1U, READ_ONCE(gpuar_checks_per_fire));
	unsigned int due = 0, paid, left;
	struct rb_node *n;
	u64 next_ns;

	lockdep_assert_held(&port->lock);
	port->armed_ns = U64_MAX;
	port->armed_end_ns = U64_MAX;
	port->last_fire_ns = now;
	port->cnt.timer_fires++;
	for (n = rb_first_cached(&port->timeq); n && due < cap; n = rb_next(n)) {
		if (rb_entry(n, struct gpuar_wait, tnode)->due_ns > now)
			break;
		due++;
	}
	/* A firing costs at least one check, whatever it finds. */
	paid = gpuar_word_pay_locked(port, now, max(due, 1U), &next_ns);
	for (left = paid; (n = rb_first_cached(&port->timeq)); left--) {
		struct gpuar_wait *w = rb_entry(n, struct gpuar_wait, tnode);

		if (w->due_ns > now) {
			gpuar_word_arm_locked(port, w->due_ns,
					      gpuar_word_slack(w));
			return;
		}
		if (!left)
			break;
		gpuar_word_visit_locked(port, w, now);
	}
	if (!n)
		return;
	if (paid < due) {
		/* The budget is spent: come back when it pays again. */
		port->cnt.budget_stretched++;
		gpuar_word_arm_locked(port, next_ns, 0);
	} else {
		/*
		 * Over the cap: let the CPU go for at least as long as this
		 * firing took (and the floor), so one port's checks never
		 * take more than half a CPU in softirq.
		 */
		u64 end = gpuar_now_ns();

		gpuar_word_arm_locked(port, end + max(end - now,
						      gpuar_check_floor_ns()),
				      0);
	}
}

static enum hrtimer_restart gpuar_word_timer_fn(struct hrtimer *timer)
{
	struct gpuar_port *port = container_of(timer, struct gpuar_port, timer);
	unsigned long flags;

	spin_lock_irqsave(&port->lock, flags);
	gpuar_wakes_hold_locked(port);
	gpuar_word_run_due_locked(port, gpuar_now_ns());
	gpuar_wakes_release_locked(port);
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
 * Take each entry's estimator point for its wait, held so nothing evicts
 * it while the wait is pending (a full table gives up its longest idle
 * point for a new one); -ENOSPC, with nothing held, when every point of a
 * full table is held.
 *
 * Which points exist changes only under port->mutex and port->lock
 * together, so the lookups run under the mutex alone, with interrupts on
 * (estimator.h); port->lock is taken, once per chunk, only to hold a
 * point, grow its window or add a new one (an O(1) eviction and a short
 * probe of the index). A point found under the mutex may have been
 * evicted, or a missing one added, by an earlier entry of the same chunk:
 * those are looked up again under the lock.
 */
static int gpuar_word_take_points(struct gpuar_port *port,
				  const struct gpuar_word_wait *e,
				  struct gpuar_wait **waits, u32 count)
{
	struct gpuar_est_table *tab = &port->points;
	u32 from, to, i, n;

	lockdep_assert_held(&port->mutex);
	for (from = 0; from < count; from = to) {
		to = min(count, from + GPUAR_COMMIT_CHUNK);
		if (from)
			cond_resched();
		for (i = from; i < to; i++)
			waits[i]->pe = gpuar_est_table_find(tab, e[i].point);
		spin_lock_irq(&port->lock);
		for (i = from; i < to; i++) {
			struct gpuar_est_entry *pe = waits[i]->pe;

			if (pe && pe->used && pe->point == e[i].point)
				gpuar_word_point_fit(pe, &e[i].plan);
			else
				pe = gpuar_word_point(tab, e[i].point,
						      &e[i].plan);
			if (!pe) {
				for (n = 0; n < i; n++)
					gpuar_est_entry_release(waits[n]->pe);
				spin_unlock_irq(&port->lock);
				for (n = i; n < count; n++)
					waits[n]->pe = NULL;
				return -ENOSPC;
			}
			gpuar_est_entry_hold(tab, pe);
			waits[i]->pe = pe;
		}
		spin_unlock_irq(&port->lock);
	}
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
	INIT_LIST_HEAD(&w->inode);
	list_add_tail(&w->lnode, &line->waits);
	gpuar_wait_add_pending_locked(port, w);

	if (line->state == GPUAR_LINE_DEAD) {
		/* It died after the submitter looked it up: ends at once. */
		gpuar_word_end_locked(port, w, GPUAR_OUTCOME_CANCELLED,
				      GPUAR_LINE_DEAD_STATUS, gpuar_now_ns(), 0);
		return;
	}
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
	w->early_ns = gpuar_word_early_ns(&w->ws, wakelat);
	if (gpuar_word_busy_candidate(&w->ws) &&
	    w->early_ns < w->ws.backstop_at_ns) {
		gpuar_word_busyq_add_locked(port, w);
		/* The timer raises it imminent at its early wake. */
		if (port->imminent)
			w->raise_ns = max(w->early_ns, 1ULL);
	}
	gpuar_word_enqueue_locked(port, w);
	gpuar_word_arm_locked(port, w->due_ns, gpuar_word_slack(w));
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
		/* Its memory went (line_watch.c); rechecked at the commit. */
		if (READ_ONCE(lines[i]->state) == GPUAR_LINE_DEAD) {
			bad = i;
			ret = -EFAULT;
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
