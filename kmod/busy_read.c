// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Busy-read: a reader blocked in read() is woken shortly before a word
 * wait is predicted to complete and checks the word itself, the way socket
 * busy polling (SO_BUSY_POLL, net.core.busy_read) serves a blocked reader.
 *
 * The reader sleeps on an hrtimer (schedule_hrtimeout, no slack) until the
 * earliest early-wake time of the port's sleeping word waits (word_queue.c
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
 * spins on a wait it holds a lease on it (lease_us), which it renews as
 * it spins: the timer leaves the wait alone meanwhile, and takes it back
 * when the spin ends or within one lease of the reader losing its CPU
 * (a preempted spinner holds nobody's completions for longer). A wait
 * still ends only under the port lock, in gpuar_word_check_locked(),
 * whichever of timer or reader saw it first.
 *
 * Blocking read() and GPUAR_IOC_WAIT_READY (which waits, with a deadline,
 * for a record it leaves to a later read) busy-read; epoll and io_uring
 * waiters are served by the timer checks, or on a port with imminent
 * readiness by their own user-mode wait after a claim (claim.c).
 */
#include <linux/hrtimer.h>
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/wait.h>

#include "../core/defaults.h"
#include "../core/line.h"
#include "params.h"
#include "port.h"
#include "uarg.h"

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
 * with the function tracer). So a spun wait is leased (@lease_ns at a
 * time), the spin renews the lease, and the wait is handed back when the
 * spin stops. A spinner that loses its CPU stops renewing: the timer takes
 * its waits back within one lease, not at the spin's bound.
 */
static void gpuar_busy_release(struct gpuar_port *port,
			       struct gpuar_busy_target *t, unsigned int n)
{
	u64 now = gpuar_now_ns();
	unsigned int i;

	spin_lock_irq(&port->lock);
	for (i = 0; i < n; i++)
		if (t[i].live)
			gpuar_word_release_locked(port, t[i].w, now);
	spin_unlock_irq(&port->lock);
}

/*
 * Take the due waits for one round: each gets a check now (late if done
 * in its sleep, exact if the timer saw it pending before) and, still
 * pending, a reference for the spin and a lease of @lease_ns. Each leaves
 * the busy queue.
 */
static unsigned int gpuar_busy_collect(struct gpuar_port *port,
				       struct gpuar_busy_target *t,
				       u64 lease_ns)
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
		gpuar_word_lease_locked(port, w, now + lease_ns);
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
 * The leases are renewed from the same clock, counted from the
 * CLOCK_MONOTONIC time of the round's start: each time a quarter of the
 * lease has passed, every target's lease is moved to a lease from now.
 */
static u64 gpuar_busy_spin(struct gpuar_port *port, u64 budget_ns)
{
	struct gpuar_busy_target t[GPUAR_BUSY_WAITS];
	u64 lease = GPUAR_PARAM(lease_us) * NSEC_PER_USEC;
	u64 start, mono_start, renewed = 0, spun = 0;
	unsigned int i, n, live;

	mono_start = gpuar_now_ns();
	n = gpuar_busy_collect(port, t, lease);
	if (!n)
		return 0;
	start = local_clock();
	for (live = n; live && spun < budget_ns;) {
		if (spun - renewed >= lease / 4) {
			renewed = spun;
			/*
			 * Renewed without the lock, as far as the backstop
			 * (gpuar_word_lease_locked): it is set at submit
			 * and never changes, and our reference holds @w.
			 */
			for (i = 0; i < n; i++)
				if (t[i].live)
					WRITE_ONCE(t[i].w->lease_end_ns,
						   min(mono_start + spun + lease,
						       t[i].w->ws.backstop_at_ns));
		}
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
		if (gpuar_records_ready(port) || signal_pending(current))
			break;
		/* Away longer than a lease, the timer takes the words back. */
		if (need_resched())
			cond_resched();
		else
			cpu_relax();
		spun = local_clock() - start;
	}
	/* Waits still pending go back to the timer's checks. */
	if (live)
		gpuar_busy_release(port, t, n);
	for (i = 0; i < n; i++) {
		gpuar_line_put(t[i].line);
		gpuar_wait_put(t[i].w);
	}
	return spun;
}

/*
 * A wake-up latency sample: how late the reader runs after its timer was
 * due. Only a reader that really slept until that timer gives one (one
 * that was late to go to sleep measured its own lateness, not the wake).
 */
static void gpuar_busy_record_wakelat(struct gpuar_port *port, u64 slept_at,
				      u64 wake_at)
{
	if (slept_at >= wake_at)
		return;
	spin_lock_irq(&port->lock);
	gpuar_word_wakelat_locked(port, wake_at, gpuar_now_ns());
	spin_unlock_irq(&port->lock);
}

/*
 * Block until a record is queued (0), @deadline_ns passes (-ETIME) or a
 * signal arrives (-ERESTARTSYS), busy-reading while the read's spin
 * budget lasts. @spun_ns carries the spin already spent in this call.
 * A @deadline_ns past KTIME_MAX is no deadline (U64_MAX): the clock never
 * gets there, and as a ktime_t it would be negative, a timer in the past
 * that hrtimer_reprogram() warns about and that fires at once, forever.
 * @exclusive: a reader, which takes the record, so one record wakes one
 * such waiter (a reader that leaves records behind wakes the next one,
 * port.c); WAIT_READY takes nothing and is woken with the pollers.
 *
 * The earliest early wake is read, and the reader registered as a busy
 * sleeper, in one hold of the port lock after its state is set: a wait
 * committed after that sees the sleeper and wakes it if its early wake is
 * sooner, one committed before is in the queue we read. word_queue.c draws
 * that handshake above gpuar_word_early_less().
 */
int gpuar_busy_read_wait(struct gpuar_port *port, u64 *spun_ns,
			 u64 deadline_ns, bool exclusive)
{
	u64 budget = GPUAR_PARAM(busy_read_us) * NSEC_PER_USEC;
	struct gpuar_busy_sleeper me = { .task = current };
	DEFINE_WAIT(wait);
	u64 now, wake_at, sleep_to;
	bool busy, sleeper;
	int ret = 0;

	if (deadline_ns > KTIME_MAX)
		deadline_ns = U64_MAX;
	for (;;) {
		if (gpuar_records_ready(port))
			break;
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}

		busy = *spun_ns < budget;
		if (exclusive)
			prepare_to_wait_exclusive(&port->wq, &wait,
						  TASK_INTERRUPTIBLE);
		else
			prepare_to_wait(&port->wq, &wait, TASK_INTERRUPTIBLE);
		wake_at = 0;
		sleeper = false;
		spin_lock_irq(&port->lock);
		now = gpuar_now_ns();
		if (busy && now < deadline_ns) {
			wake_at = gpuar_word_first_early_locked(port);
			if (!wake_at || wake_at > now) {
				me.wake_at = wake_at;
				gpuar_word_sleeper_add_locked(port, &me);
				sleeper = true;
			}
		}
		spin_unlock_irq(&port->lock);
		if (now >= deadline_ns) {
			finish_wait(&port->wq, &wait);
			ret = gpuar_records_ready(port) ? 0 : -ETIME;
			break;
		}

		if (busy && wake_at && wake_at <= now) {
			finish_wait(&port->wq, &wait);
			*spun_ns += gpuar_busy_spin(port,
						    min(budget - *spun_ns,
							deadline_ns - now));
			continue;
		}

		sleep_to = min(wake_at ?: U64_MAX, deadline_ns);
		if (!gpuar_records_ready(port) && !signal_pending(current)) {
			if (sleep_to != U64_MAX) {
				ktime_t kt = ns_to_ktime(sleep_to);

				/* 0: the timer, not a wake-up, ended it. */
				if (!schedule_hrtimeout(&kt, HRTIMER_MODE_ABS) &&
				    sleep_to == wake_at)
					gpuar_busy_record_wakelat(port, now,
								  wake_at);
			} else {
				schedule();
			}
		}
		if (sleeper) {
			spin_lock_irq(&port->lock);
			gpuar_word_sleeper_del_locked(port, &me);
			spin_unlock_irq(&port->lock);
		}
		finish_wait(&port->wq, &wait);
	}
	/*
	 * An exclusive waiter leaving without its record may have taken the
	 * wake-up meant for the next one: pass it on.
	 */
	if (exclusive && ret && gpuar_records_ready(port))
		wake_up_poll(&port->wq, EPOLLIN | EPOLLRDNORM);
	return ret;
}

/*
 * GPUAR_IOC_WAIT_READY: wait, busy-reading, until a record is queued,
 * the deadline passes or a signal arrives; read nothing. Claimed waits
 * whose words the caller saw done are checked first, as a read would.
 */
long gpuar_wait_ready_ioctl(struct gpuar_port *port, const void __user *uarg)
{
	struct gpuar_wait_ready wr;
	u64 spun_ns = 0;
	u32 usize;
	int ret;

	ret = gpuar_uarg_in(&wr, sizeof(wr), GPUAR_WAIT_READY_SIZE_VER1, uarg,
			    &usize);
	if (ret)
		return ret;
	if (wr.flags)
		return -EINVAL;
	gpuar_claimed_check(port, false);
	if (gpuar_records_ready(port))
		return 0;
	if (!wr.deadline_ns)
		return -ETIME;
	ret = gpuar_busy_read_wait(port, &spun_ns, wr.deadline_ns, false);
	return ret == -ERESTARTSYS ? -EINTR : ret;
}
