// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Busy-read: a reader blocked in read() is woken shortly before a word
 * wait is predicted to complete and checks the word itself, the way socket
 * busy polling (SO_BUSY_POLL, net.core.busy_read) serves a blocked reader.
 *
 * The reader sleeps on an hrtimer (schedule_hrtimeout, no slack) until the
 * earliest early-wake time of the port's sleeping word waits: the
 * estimator's sleep (which already stands the plan's margin before the
 * predicted completion) minus the port's measured wake-up latency. Woken by
 * that timer it records how late it runs (the wake-up latency sample) and
 * spins on the due words in process context: no lock held while spinning,
 * cond_resched() when the scheduler asks, stop on a signal, on a record, or
 * after the round's bound (the largest check interval of the words it
 * spins on). All rounds of one read() together spin at most busy_read_us;
 * after that the reader sleeps until a record arrives and the timer checks
 * carry on. A wait still ends only under the port lock, in
 * gpuar_word_check_locked(), whichever of timer or reader saw it first.
 *
 * Only blocking read() busy-reads; epoll and io_uring waiters are served
 * by the timer checks (so they see at least the check interval).
 */
#include <linux/hrtimer.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/wait.h>

#include "../core/line.h"
#include "params.h"
#include "port.h"

/* Waits one round spins on, and timer-queue entries looked at to find them. */
#define GPUAR_BUSY_WAITS 8
#define GPUAR_BUSY_SCAN 32

struct gpuar_busy_target {
	struct gpuar_wait *w;
	struct gpuar_line *line;	/* keeps the page pinned while we read */
	const u64 *word;
	u64 target;
	bool live;
};

/* The earliest early-wake among sleeping, not yet spun word waits; 0: none. */
static u64 gpuar_busy_next_locked(struct gpuar_port *port)
{
	struct rb_node *n = rb_first_cached(&port->timeq);
	unsigned int scanned = 0;
	u64 best = 0;

	for (; n && scanned < GPUAR_BUSY_SCAN; n = rb_next(n), scanned++) {
		struct gpuar_wait *w = rb_entry(n, struct gpuar_wait, tnode);

		if (w->phase != GPUAR_PHASE_SLEEP || w->spun || !w->early_ns)
			continue;
		if (!best || w->early_ns < best)
			best = w->early_ns;
	}
	return best;
}

/*
 * Take the due sleeping waits for one round: each gets its first check
 * now (late if already done) and, still pending, a reference for the spin.
 */
static unsigned int gpuar_busy_collect(struct gpuar_port *port,
				       struct gpuar_busy_target *t,
				       u64 *round_ns)
{
	struct gpuar_wait *due[GPUAR_BUSY_WAITS];
	unsigned int i, ndue = 0, n = 0, scanned = 0;
	u64 now = gpuar_now_ns();
	struct rb_node *node;

	spin_lock_irq(&port->lock);
	node = rb_first_cached(&port->timeq);
	for (; node && scanned < GPUAR_BUSY_SCAN && ndue < GPUAR_BUSY_WAITS;
	     node = rb_next(node), scanned++) {
		struct gpuar_wait *w = rb_entry(node, struct gpuar_wait, tnode);

		if (w->phase == GPUAR_PHASE_SLEEP && !w->spun && w->early_ns &&
		    w->early_ns <= now)
			due[ndue++] = w;
	}
	for (i = 0; i < ndue; i++) {
		struct gpuar_wait *w = due[i];

		w->spun = true;
		if (gpuar_word_check_locked(port, w, now, true))
			continue;
		/* Pending: the timer keeps checking it at its interval too. */
		gpuar_word_unqueue_locked(port, w);
		w->next_ns = min(now + w->interval_ns, w->backstop_ns);
		gpuar_word_enqueue_locked(port, w);
		gpuar_word_arm_locked(port, w->next_ns);
		kref_get(&w->ref);
		kref_get(&w->line->ref);
		t[n].w = w;
		t[n].line = w->line;
		t[n].word = &w->line->words[w->slot];
		t[n].target = w->target;
		t[n].live = true;
		*round_ns = max(*round_ns, w->interval_ns);
		n++;
	}
	spin_unlock_irq(&port->lock);
	return n;
}

/* A spun word reached its target: end the wait if nobody else has. */
static void gpuar_busy_complete(struct gpuar_port *port, struct gpuar_wait *w)
{
	spin_lock_irq(&port->lock);
	if (w->state == GPUAR_WAIT_PENDING)
		gpuar_word_check_locked(port, w, gpuar_now_ns(), true);
	spin_unlock_irq(&port->lock);
}

/*
 * One spin round. Our references keep the waits and their lines' pages
 * (the timer may end a wait, and its line be unregistered, while we spin).
 */
static void gpuar_busy_spin(struct gpuar_port *port, u64 budget_end)
{
	struct gpuar_busy_target t[GPUAR_BUSY_WAITS];
	u64 round_ns = 0, now, end;
	unsigned int i, n, live;

	n = gpuar_busy_collect(port, t, &round_ns);
	if (!n)
		return;
	now = gpuar_now_ns();
	end = min(now + round_ns, budget_end);
	for (live = n; live && now < end;) {
		for (i = 0; i < n; i++) {
			if (!t[i].live || !gpuar_reached(gpuar_word_load(t[i].word),
							 t[i].target))
				continue;
			gpuar_busy_complete(port, t[i].w);
			t[i].live = false;
			live--;
		}
		if (READ_ONCE(port->nqueued) || signal_pending(current))
			break;
		if (need_resched())
			cond_resched();
		else
			cpu_relax();
		now = gpuar_now_ns();
	}
	for (i = 0; i < n; i++) {
		gpuar_line_put(t[i].line);
		gpuar_wait_put(t[i].w);
	}
}

/*
 * Block until a record is queued. 0: look again; -ERESTARTSYS: a signal.
 * @spun_ns carries the spin already spent in this read().
 */
int gpuar_busy_read_wait(struct gpuar_port *port, u64 *spun_ns)
{
	u64 budget = GPUAR_PARAM(busy_read_us) * NSEC_PER_USEC;
	DEFINE_WAIT(wait);
	u64 wake_at, now;

	for (;;) {
		if (READ_ONCE(port->nqueued))
			return 0;
		if (signal_pending(current))
			return -ERESTARTSYS;

		wake_at = 0;
		if (*spun_ns < budget) {
			spin_lock_irq(&port->lock);
			wake_at = gpuar_busy_next_locked(port);
			spin_unlock_irq(&port->lock);
		}
		now = gpuar_now_ns();
		if (wake_at && wake_at <= now) {
			gpuar_busy_spin(port, now + (budget - *spun_ns));
			*spun_ns += gpuar_now_ns() - now;
			continue;
		}

		prepare_to_wait(&port->wq, &wait, TASK_INTERRUPTIBLE);
		if (!READ_ONCE(port->nqueued) && !signal_pending(current)) {
			if (wake_at) {
				ktime_t kt = ns_to_ktime(wake_at);

				if (!schedule_hrtimeout(&kt, HRTIMER_MODE_ABS)) {
					/* The timer woke us: how late do we run? */
					now = gpuar_now_ns();
					spin_lock_irq(&port->lock);
					gpuar_wakelat_record(&port->wakelat,
							     now > wake_at ?
							     now - wake_at : 0);
					spin_unlock_irq(&port->lock);
				}
			} else {
				schedule();
			}
		}
		finish_wait(&port->wq, &wait);
	}
}
