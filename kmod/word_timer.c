// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
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

#include "compat.h"
#include "params.h"
#include "port.h"
#include "word.h"

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
