// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Busy-read: a reader blocked in read() is woken shortly before a word
 * wait is predicted to complete and checks the word itself, the way socket
 * busy polling (SO_BUSY_POLL, net.core.busy_read) serves a blocked reader.
 *
 * The reader sleeps on an hrtimer (schedule_hrtimeout, no slack) until the
 * earliest early-wake time of the port's sleeping word waits (word_wait.c
 * keeps them in its busy queue, by early wake, and wakes a reader through
 * busy_wq when a wait submitted while it sleeps wakes earlier): the
 * estimator's sleep (which already stands the plan's margin before the
 * predicted completion) minus the port's measured wake-up latency. Woken by
 * that timer it records how late it runs (the wake-up latency sample) and
 * spins on the due words in process context: no lock held while spinning,
 * cond_resched() when the scheduler asks, stop on a signal or on a record.
 * All rounds of one read() together spin at most busy_read_us; after that
 * the reader sleeps until a record arrives and the timer checks carry on,
 * so a late device never holds a CPU. The spin is bounded by that budget
 * alone, not by the predicted completion: the prediction is the fastest
 * recent completion, so most completions come after it, and a round that
 * stopped there would hand them to the timer's next check (measured:
 * p50 90 us instead of a few us in the 6.1 TCG VM). While the reader
 * spins on a wait, the timer's checks of it wait until the spin's bound
 * and resume when the spin ends (gpuar_busy_defer). A wait still
 * ends only under the port lock, in gpuar_word_check_locked(), whichever
 * of timer or reader saw it first.
 *
 * Only blocking read() busy-reads; epoll and io_uring waiters are served
 * by the timer checks (so they see at least the check interval).
 */
#include <linux/hrtimer.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/wait.h>

#include "../core/defaults.h"
#include "../core/line.h"
#include "params.h"
#include "port.h"

struct gpuar_busy_target {
	struct gpuar_wait *w;
	struct gpuar_line *line;	/* keeps the page pinned while we read */
	const u64 *word;
	u64 target;
	bool live;
};

/*
 * While a reader spins on a wait it watches the word itself: the timer's
 * checks at the wait's interval would only interrupt the spin on this CPU
 * (the timer is per port, armed here) and race it, each an interrupt and
 * two clock-event reprogrammings (about 20 us in a TCG guest, measured
 * with the function tracer). So a spun wait's next timer check is
 * deferred to the spin's bound (@from: the round's start plus its budget)
 * plus its interval, and the wait is handed back (@from: now) when the
 * spin stops or yields the CPU. A spinner preempted without yielding (a
 * fully preemptible kernel) leaves its words to that bound: at most
 * busy_read_us late.
 *
 * Defer (or hand back) every live target still pending.
 */
static void gpuar_busy_defer(struct gpuar_port *port,
			     struct gpuar_busy_target *t, unsigned int n,
			     u64 from)
{
	unsigned int i;

	spin_lock_irq(&port->lock);
	for (i = 0; i < n; i++)
		if (t[i].live && t[i].w->state == GPUAR_WAIT_PENDING)
			gpuar_word_defer_locked(port, t[i].w, from);
	spin_unlock_irq(&port->lock);
}

/*
 * Take the due waits for one round: each gets a check now (late if done
 * in its sleep, exact if the timer saw it pending before) and, still
 * pending, a reference for the spin. Each leaves the busy queue, and its
 * timer check moves past the spin (@spin_ns from now; see
 * gpuar_busy_defer).
 */
static unsigned int gpuar_busy_collect(struct gpuar_port *port,
				       struct gpuar_busy_target *t,
				       u64 spin_ns)
{
	u64 now = gpuar_now_ns();
	unsigned int n = 0, taken;

	spin_lock_irq(&port->lock);
	for (taken = 0; taken < GPUAR_BUSY_WAITS; taken++) {
		struct gpuar_wait *w = gpuar_word_take_early_locked(port, now);

		if (!w)
			break;
		if (gpuar_word_check_locked(port, w, now, true))
			continue;
		gpuar_word_defer_locked(port, w, now + spin_ns);
		kref_get(&w->ref);
		kref_get(&w->line->ref);
		t[n].w = w;
		t[n].line = w->line;
		t[n].word = &w->line->words[w->slot];
		t[n].target = w->target;
		t[n].live = true;
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
 * One spin round of at most @budget_ns; returns the time it spun. Our
 * references keep the waits and their lines' pages (the timer may end a
 * wait, and its line be unregistered, while we spin).
 *
 * The budget is kept with local_clock() (sched_clock: the TSC where there
 * is one), not the port's CLOCK_MONOTONIC: a clocksource read can be slow
 * (HPET is an MMIO read, emulated and serialized in a VM), and one per
 * pass would make each pass, so the detection of the store, that slow.
 */
static u64 gpuar_busy_spin(struct gpuar_port *port, u64 budget_ns)
{
	struct gpuar_busy_target t[GPUAR_BUSY_WAITS];
	unsigned int i, n, live;
	u64 start, spun = 0;

	n = gpuar_busy_collect(port, t, budget_ns);
	if (!n)
		return 0;
	start = local_clock();
	for (live = n; live && spun < budget_ns;) {
		for (i = 0; i < n; i++) {
			if (!t[i].live)
				continue;
			/* Ended by the timer, a cancel: stop spinning on it. */
			if (READ_ONCE(t[i].w->state) != GPUAR_WAIT_PENDING) {
				t[i].live = false;
				live--;
				continue;
			}
			if (!gpuar_reached(gpuar_load_acquire(t[i].word),
					   t[i].target))
				continue;
			gpuar_busy_complete(port, t[i].w);
			t[i].live = false;
			live--;
		}
		if (READ_ONCE(port->nqueued) || signal_pending(current))
			break;
		if (need_resched()) {
			/* The timer watches the words while we are away. */
			gpuar_busy_defer(port, t, n, gpuar_now_ns());
			cond_resched();
			spun = local_clock() - start;
			gpuar_busy_defer(port, t, n, gpuar_now_ns() +
					 (spun < budget_ns ? budget_ns - spun : 0));
		} else {
			cpu_relax();
		}
		spun = local_clock() - start;
	}
	/* Waits still pending go back to the timer's checks. */
	if (live)
		gpuar_busy_defer(port, t, n, gpuar_now_ns());
	for (i = 0; i < n; i++) {
		gpuar_line_put(t[i].line);
		gpuar_wait_put(t[i].w);
	}
	return spun;
}

/*
 * A wake-up latency sample: how late the reader runs after its timer was
 * due. Only a reader that really slept until that timer gives one (one
 * that was late to go to sleep measured its own lateness, not the wake),
 * and a sample is capped by the module's ceiling, so one long stall (a
 * preempted vCPU) cannot make readers wake absurdly early.
 */
static void gpuar_busy_record_wakelat(struct gpuar_port *port, u64 slept_at,
				      u64 wake_at)
{
	u64 now = gpuar_now_ns(), lat;

	if (slept_at >= wake_at || now <= wake_at)
		return;
	lat = min(now - wake_at, GPUAR_PARAM(wakelat_max_us) * NSEC_PER_USEC);
	spin_lock_irq(&port->lock);
	gpuar_wakelat_record(&port->wakelat, lat);
	spin_unlock_irq(&port->lock);
}

/*
 * Block until a record is queued. 0: look again; -ERESTARTSYS: a signal.
 * @spun_ns carries the spin already spent in this read().
 *
 * The earliest early wake is read, and the reader registered as a busy
 * sleeper, in one hold of the port lock after it is on both wait queues:
 * a wait committed after that sees the sleeper and wakes busy_wq if its
 * early wake is sooner, one committed before is in the queue we read.
 * word_wait.c draws that handshake above gpuar_word_early_less().
 */
int gpuar_busy_read_wait(struct gpuar_port *port, u64 *spun_ns)
{
	u64 budget = GPUAR_PARAM(busy_read_us) * NSEC_PER_USEC;
	DEFINE_WAIT(wait);
	DEFINE_WAIT(bwait);
	u64 wake_at, now;
	bool busy;

	for (;;) {
		if (READ_ONCE(port->nqueued))
			return 0;
		if (signal_pending(current))
			return -ERESTARTSYS;

		busy = *spun_ns < budget;
		prepare_to_wait(&port->wq, &wait, TASK_INTERRUPTIBLE);
		if (busy)
			prepare_to_wait(&port->busy_wq, &bwait,
					TASK_INTERRUPTIBLE);
		wake_at = 0;
		spin_lock_irq(&port->lock);
		now = gpuar_now_ns();
		if (busy) {
			wake_at = gpuar_word_first_early_locked(port);
			if (!wake_at || wake_at > now)
				gpuar_word_sleeper_add_locked(port, wake_at);
		}
		spin_unlock_irq(&port->lock);

		if (busy && wake_at && wake_at <= now) {
			finish_wait(&port->busy_wq, &bwait);
			finish_wait(&port->wq, &wait);
			*spun_ns += gpuar_busy_spin(port, budget - *spun_ns);
			continue;
		}

		if (!READ_ONCE(port->nqueued) && !signal_pending(current)) {
			if (wake_at) {
				ktime_t kt = ns_to_ktime(wake_at);

				/* 0: the timer, not a wake-up, ended it. */
				if (!schedule_hrtimeout(&kt, HRTIMER_MODE_ABS))
					gpuar_busy_record_wakelat(port, now,
								  wake_at);
			} else {
				schedule();
			}
		}
		if (busy) {
			finish_wait(&port->busy_wq, &bwait);
			spin_lock_irq(&port->lock);
			gpuar_word_sleeper_del_locked(port);
			spin_unlock_irq(&port->lock);
		}
		finish_wait(&port->wq, &wait);
	}
}
