// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Cancel: the one place that ends waits of every source. The cancel ioctl
 * ends the pending waits of one user data; release ends them all. Word
 * waits end under the port lock (gpuar_word_end_locked); a fence wait is
 * collected with a reference and detached after the lock is dropped
 * (gpuar_fence_wait_detach), since removing a fence callback takes the
 * fence lock, which nests outside the port lock.
 *
 * A cancel finds its waits through the port's indexes by user data
 * (user_index.c, kept by record.c), never by looking at the others: the
 * pending waits of its user data, and when there are none, whether a
 * record of it that is not a cancellation is queued (EALREADY rather than
 * ENOENT), or sits in the area's ring, which has no index (a scan of at
 * most its ring_entries records, with interrupts on: area.c). That costs
 * the indexes' height (2 * log2(n + 1) for n waits) plus the waits of
 * that user data, whatever else the port holds, and needs only the port
 * lock: a cancel never waits for a reader, however
 * long that reader takes to copy its records out. Release walks the
 * pending list, a chunk at a time.
 */
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>

#include "port.h"
#include "gpuar_trace.h"
#include "uarg.h"

/* Pending waits looked at, or ended, per hold of the port lock. */
#define GPUAR_END_CHUNK 64

/*
 * End pending word wait @w as cancelled (returns 1), or collect pending
 * fence wait @w on @fences with a reference (returns 0; the caller
 * removes its callback outside the lock). A collected fence wait leaves
 * the pending index, so a cancel that comes back after dropping the lock
 * finds only waits it has not taken yet.
 */
static long gpuar_wait_take_locked(struct gpuar_port *port,
				   struct gpuar_wait *w, u64 now,
				   struct list_head *fences)
{
	if (w->source == GPUAR_SOURCE_WORD) {
		gpuar_word_end_locked(port, w, GPUAR_OUTCOME_CANCELLED,
				      -ECANCELED, now, 0);
		return 1;
	}
	if (!w->cancelling) {
		w->cancelling = true;
		gpuar_user_index_del(&port->pending_by_user, w);
		kref_get(&w->ref);
		list_add_tail(&w->cnode, fences);
	}
	return 0;
}

/*
 * Release: end every pending wait as cancelled, in chunks of
 * GPUAR_END_CHUNK per hold of the lock so a port with max_waits pending
 * never keeps interrupts off for long. The pending list is moved aside
 * first; fence waits, still pending once collected, go back to its front
 * in their order. Completions (timer, fence callbacks) may run between
 * chunks: they move a wait from whichever list it is on, under the lock.
 * No submitter is left. Returns the number of word waits ended.
 */
static long gpuar_wait_end_pending(struct gpuar_port *port,
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
			ended += gpuar_wait_take_locked(port, w, now, fences);
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
 * The cancel's own walk: end or collect the pending waits of @user_data,
 * found through the pending index, GPUAR_END_CHUNK per hold of the lock
 * (each one taken leaves the index, so after the lock was dropped the
 * first one left is where to go on). When none is pending, *@queued says
 * whether a record of @user_data other than a cancellation is queued.
 * *@looked counts the waits compared. Submitters are held off by
 * port->mutex. Returns the number of word waits ended.
 */
static long gpuar_wait_end_user(struct gpuar_port *port, u64 user_data,
				struct list_head *fences, bool *queued,
				unsigned int *looked)
{
	struct gpuar_wait *w, *next;
	u64 now = gpuar_now_ns();
	bool found = false;
	long ended = 0;
	unsigned int n;

	spin_lock_irq(&port->lock);
	for (;;) {
		w = gpuar_user_index_first(&port->pending_by_user, user_data,
					   looked);
		gpuar_wakes_hold_locked(port);
		for (n = 0; w && n < GPUAR_END_CHUNK; n++, w = next) {
			next = gpuar_user_index_next(w, looked);
			ended += gpuar_wait_take_locked(port, w, now, fences);
			found = true;
		}
		gpuar_wakes_release_locked(port);
		if (!w)
			break;
		spin_unlock_irq(&port->lock);
		cond_resched();
		spin_lock_irq(&port->lock);
	}
	if (!found)
		*queued = !!gpuar_user_index_first(&port->queued_by_user,
						   user_data, looked);
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
	unsigned int looked = 0;
	bool queued = false;
	u32 usize;
	long ret;

	ret = gpuar_uarg_in(&c, sizeof(c), GPUAR_CANCEL_SIZE_VER1, uarg, &usize);
	if (ret)
		return ret;
	if (c.flags)
		return -EINVAL;

	mutex_lock(&port->mutex);
	cancelled = gpuar_wait_end_user(port, c.user_data, &fences, &queued,
					&looked);
	cancelled += gpuar_fences_detach(&fences, &lost);
	mutex_unlock(&port->mutex);
	/* Not pending, not queued: maybe in the area's ring (area.c). */
	if (!cancelled && !lost && !queued)
		queued = gpuar_area_holds(port, c.user_data);

	if (cancelled)
		ret = cancelled;
	else if (lost || queued)
		ret = -EALREADY;
	else
		ret = -ENOENT;
	trace_gpuar_cancel(port, c.user_data, looked, ret);
	return ret;
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

	gpuar_wait_end_pending(port, &fences);
	gpuar_fences_detach(&fences, &lost);
}
