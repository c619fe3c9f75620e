// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Cancel: the one place that ends waits of every source. The cancel ioctl
 * ends the pending waits of one user data; release ends them all. Word
 * waits end under the port lock (gpuar_word_end_locked); a fence wait is
 * collected with a reference and detached after the lock is dropped
 * (gpuar_fence_wait_detach), since removing a fence callback takes the
 * fence lock, which nests outside the port lock.
 */
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>

#include "port.h"
#include "uarg.h"

/* Pending waits looked at, or ended, per hold of the port lock. */
#define GPUAR_END_CHUNK 64

/*
 * End the pending waits matching @match (every one when NULL) as
 * cancelled, in chunks of GPUAR_END_CHUNK per hold of the lock so a port
 * with max_waits pending never keeps interrupts off for long. Word waits
 * end under the lock; fence waits are collected on @fences with a
 * reference (the caller removes their callbacks outside the lock). The
 * pending list is moved aside first; waits still pending go back to its
 * front in their order. Completions (timer, fence callbacks) may run
 * between chunks: they move a wait from whichever list it is on, under the
 * lock. Submitters are held off by port->mutex or are gone (release).
 * Returns the number of word waits ended.
 */
static long gpuar_wait_end_pending(struct gpuar_port *port, const u64 *match,
				   struct list_head *fences)
{
	u64 now = gpuar_now_ns();
	LIST_HEAD(todo);
	LIST_HEAD(keep);
	long ended = 0;
	unsigned int n;

	spin_lock_irq(&port->lock);
	list_splice_init(&port->pending, &todo);
	while (!list_empty(&todo)) {
		for (n = 0; n < GPUAR_END_CHUNK && !list_empty(&todo); n++) {
			struct gpuar_wait *w;

			w = list_first_entry(&todo, struct gpuar_wait, node);
			list_move_tail(&w->node, &keep);
			if (match && w->user_data != *match)
				continue;
			if (w->source == GPUAR_SOURCE_WORD) {
				gpuar_word_end_locked(port, w,
						      GPUAR_OUTCOME_CANCELLED,
						      -ECANCELED, now, 0);
				ended++;
			} else if (!w->cancelling) {
				w->cancelling = true;
				kref_get(&w->ref);
				list_add_tail(&w->cnode, fences);
			}
		}
		if (!list_empty(&todo)) {
			spin_unlock_irq(&port->lock);
			cond_resched();
			spin_lock_irq(&port->lock);
		}
	}
	list_splice(&keep, &port->pending);
	spin_unlock_irq(&port->lock);
	return ended;
}

/*
 * Detach the fence waits collected on @fences and drop our references;
 * returns how many were cancelled, and in *@lost how many had signalled
 * first (their records are queued).
 */
static long gpuar_fences_detach(struct list_head *fences, long *lost)
{
	struct gpuar_wait *w, *tmp;
	long cancelled = 0;

	list_for_each_entry_safe(w, tmp, fences, cnode) {
		if (gpuar_fence_wait_detach(w))
			cancelled++;
		else
			(*lost)++;
		gpuar_fence_wait_drop(w);
		list_del(&w->cnode);
		gpuar_wait_put(w);
	}
	return cancelled;
}

/*
 * Is a record of @user_data (other than a cancellation) queued (1, or 0;
 * -EINTR when killed while waiting for a reader)? Records
 * leave the queue only under read_mutex, so holding it the walk may drop
 * the port lock between chunks (new records only join the tail).
 */
static int gpuar_record_queued(struct gpuar_port *port, u64 user_data)
{
	struct gpuar_wait *w;
	unsigned int n = 0;
	bool found = false;

	/*
	 * A reader holds read_mutex while it copies out, which a faulting
	 * buffer (userfaultfd, FUSE) can make last: wait for it killably.
	 */
	if (mutex_lock_killable(&port->read_mutex))
		return -EINTR;
	spin_lock_irq(&port->lock);
	list_for_each_entry(w, &port->records, node) {
		if (w->user_data == user_data &&
		    w->rec.outcome != GPUAR_OUTCOME_CANCELLED) {
			found = true;
			break;
		}
		if (++n % GPUAR_END_CHUNK == 0) {
			spin_unlock_irq(&port->lock);
			cond_resched();
			spin_lock_irq(&port->lock);
		}
	}
	spin_unlock_irq(&port->lock);
	mutex_unlock(&port->read_mutex);
	return found;
}

/*
 * Cancel by user data. Word waits end under the lock. A fence wait is
 * collected (with a reference, so a reader cannot free it under us) and its
 * callback removed after the lock is dropped; if the callback already ran
 * the wait has its fence record and the cancel lost that race.
 */
long gpuar_cancel_ioctl(struct gpuar_port *port, const void __user *uarg)
{
	struct gpuar_cancel c;
	LIST_HEAD(fences);
	long cancelled, lost = 0;
	int queued = 0;
	u32 usize;
	int ret;

	ret = gpuar_uarg_in(&c, sizeof(c), GPUAR_CANCEL_SIZE_VER1, uarg, &usize);
	if (ret)
		return ret;
	if (c.flags)
		return -EINVAL;

	mutex_lock(&port->mutex);
	cancelled = gpuar_wait_end_pending(port, &c.user_data, &fences);
	cancelled += gpuar_fences_detach(&fences, &lost);
	mutex_unlock(&port->mutex);
	/*
	 * Only to tell EALREADY from ENOENT: outside port->mutex, so
	 * submitters never queue behind a reader's slow copy-out through
	 * this cancel.
	 */
	if (!cancelled && !lost)
		queued = gpuar_record_queued(port, c.user_data);

	if (cancelled)
		return cancelled;
	if (queued < 0)
		return queued;
	if (lost || queued)
		return -EALREADY;
	return -ENOENT;
}

/*
 * Release: end every pending wait. No ioctl or read can run any more, but
 * fence callbacks and the port's timer still can; when this returns no
 * fence callback will touch the port again.
 */
void gpuar_cancel_all(struct gpuar_port *port)
{
	LIST_HEAD(fences);
	long lost = 0;

	gpuar_wait_end_pending(port, NULL, &fences);
	gpuar_fences_detach(&fences, &lost);
}
