// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * A word wait's checks and its end: one look at the word, decided by
 * core/word_state.c (done, not yet, or past the backstop), and the end
 * that takes an ended wait off its indexes and queues its record. Every
 * checker (the timer, a busy reader, a claim, a submit) comes here.
 */
#include <linux/minmax.h>
#include <linux/sched.h>

#include "../core/defaults.h"
#include "../core/line.h"
#include "port.h"
#include "gpuar_trace.h"
#include "word.h"

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
bool gpuar_word_look_locked(struct gpuar_port *port,
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
