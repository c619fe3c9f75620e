// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * A word wait's indexes, kept under the port lock: the timer queue (when
 * the port's timer must next look at each pending wait, and arming the
 * timer for the earliest), the busy queue (sleeping waits by early wake,
 * which blocked readers spin on; the sleepers' handshake is drawn below)
 * and the imminent lists (raised, claimed). Nothing here checks a word or
 * ends a wait: the other word_*.c files call down into this one, never
 * the other way.
 */
#include <linux/hrtimer.h>
#include <linux/minmax.h>

#include "../core/defaults.h"
#include "params.h"
#include "port.h"
#include "word.h"

u64 gpuar_check_floor_ns(void)
{
	return max_t(u64, GPUAR_PARAM(check_floor_us) * NSEC_PER_USEC,
		     NSEC_PER_USEC);
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

void gpuar_word_enqueue_locked(struct gpuar_port *port,
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

void gpuar_word_unqueue_locked(struct gpuar_port *port,
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
void gpuar_word_arm_locked(struct gpuar_port *port, u64 when,
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
u64 gpuar_word_slack(const struct gpuar_wait *w)
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
void gpuar_word_move_locked(struct gpuar_port *port,
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
void gpuar_word_retarget_locked(struct gpuar_port *port)
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
void gpuar_word_requeue_locked(struct gpuar_port *port,
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

void gpuar_word_busyq_add_locked(struct gpuar_port *port,
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
void gpuar_word_busyq_del_locked(struct gpuar_port *port,
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

/* ---------------------------------------------------- imminent lists */

/* Off the imminent and claimed lists, lease dropped. */
void gpuar_word_imminent_del_locked(struct gpuar_port *port,
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
