// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Word waits: a u64 in a pinned line reaching a target, with the kernel
 * as the waiter. Every decision (outcome, next check, backstop, early
 * wake, what the point's estimator learns) is core/word_state.c's, the
 * same state machine the library's userspace port runs; the word_*.c
 * files give it a clock, a timer and the word's value, and own the wait's
 * indexes: the timer queue, the busy queue, the imminent lists, its
 * line's wait count.
 *
 * Submit checks the word once (done: immediate). Otherwise, if the point's
 * estimator gives a sleep, the wait's first timer check is at start +
 * sleep (done there: late); after that it is checked every interval (the
 * plan's park_ns, or the poll interval, never below the module's floor)
 * until done (exact) or until its backstop (timeout, -ETIME). Exact and
 * late outcomes train the point's estimator.
 *
 * The files of a word wait, calls going down this list only:
 *   word_wait.c      submit: validate, take points, commit (this file)
 *   word_timer.c     the port's timer: spacing, slack, the check budget
 *   word_imminent.c  leases; raising, claiming and unclaiming imminent waits
 *   word_check.c     one check of the word, and the wait's end
 *   word_queue.c     the indexes: timer queue, busy queue, imminent lists
 */
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "../core/defaults.h"
#include "../core/line.h"
#include "../core/plan.h"
#include "params.h"
#include "port.h"
#include "uarg.h"
#include "word.h"

/* The state machine's settings, from the module parameters now. */
static void gpuar_word_cfg(struct gpuar_word_cfg *cfg)
{
	cfg->poll_interval_ns = GPUAR_PARAM(poll_interval_us) * NSEC_PER_USEC;
	cfg->floor_ns = gpuar_check_floor_ns();
	cfg->backstop_ns = max_t(u64, GPUAR_PARAM(poll_backstop_us) *
				 NSEC_PER_USEC, NSEC_PER_USEC);
	cfg->backstop_timeout = true;
}

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
