// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Records: ending a wait, reading records out, poll, and cancel.
 *
 * A wait ends exactly once, under the port lock, in
 * gpuar_wait_complete_locked(): whoever sees it done first (submit, the
 * timer, a busy reader, a fence callback, cancel, release) moves it from
 * the pending list to the record queue; everyone later sees its state and
 * leaves it alone. The wait itself is the queued record, so queuing never
 * allocates and never fails: the number queued is bounded by the port's
 * wait limit, which a wait keeps counting against until its record is read.
 */
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "port.h"
#include "gpuar_trace.h"
#include "uarg.h"

/* Records copied out per pass under the lock (64 bytes each, on stack). */
#define GPUAR_READ_BATCH 8

/* Any context; port->lock held. */
void gpuar_wait_complete_locked(struct gpuar_port *port, struct gpuar_wait *w,
				u8 outcome, s32 status, u64 complete_ns,
				u64 value)
{
	struct gpuar_record *r = &w->rec;

	lockdep_assert_held(&port->lock);
	if (w->state != GPUAR_WAIT_PENDING)
		return;
	if (w->source == GPUAR_SOURCE_WORD) {
		gpuar_word_unqueue_locked(port, w);
		gpuar_busy_unqueue_locked(port, w);
		w->line->waits--;
		if (w->pe)
			w->pe->outcomes[outcome]++;
	}
	r->user_data = w->user_data;
	r->start_ns = w->start_ns;
	r->complete_ns = complete_ns;
	r->value = value;
	r->status = status;
	r->checks = w->checks;
	r->version = port->record_version;
	r->source = w->source;
	r->outcome = outcome;
	w->state = GPUAR_WAIT_DONE;
	list_move_tail(&w->node, &port->records);
	port->npending--;
	port->nqueued++;
	port->cnt.outcomes[outcome]++;
	trace_gpuar_complete(port, r);
	wake_up_poll(&port->wq, EPOLLIN | EPOLLRDNORM);
}

/* Process context: the fence reference is dropped here. */
static void gpuar_wait_release(struct kref *ref)
{
	struct gpuar_wait *w = container_of(ref, struct gpuar_wait, ref);

	if (w->fence)
		dma_fence_put(w->fence);
	kfree(w);
}

void gpuar_wait_put(struct gpuar_wait *w)
{
	kref_put(&w->ref, gpuar_wait_release);
}

/* Copy up to @max queued records, oldest first; returns how many. */
static unsigned int gpuar_records_peek(struct gpuar_port *port,
				       struct gpuar_record *out,
				       unsigned int max)
{
	struct gpuar_wait *w;
	unsigned int n = 0;

	spin_lock_irq(&port->lock);
	list_for_each_entry(w, &port->records, node) {
		if (n == max)
			break;
		out[n++] = w->rec;
	}
	spin_unlock_irq(&port->lock);
	return n;
}

/* Drop the @n oldest records (which the caller holding read_mutex copied). */
static void gpuar_records_drop(struct gpuar_port *port, unsigned int n)
{
	struct gpuar_wait *w, *tmp;
	LIST_HEAD(gone);

	spin_lock_irq(&port->lock);
	list_for_each_entry_safe(w, tmp, &port->records, node) {
		if (!n--)
			break;
		list_move_tail(&w->node, &gone);
		port->nqueued--;
	}
	spin_unlock_irq(&port->lock);
	list_for_each_entry_safe(w, tmp, &gone, node) {
		list_del(&w->node);
		gpuar_wait_put(w);
	}
}

/*
 * Move queued records to the user, oldest first, whole records only.
 * Records are copied out before they leave the queue, so a fault loses
 * nothing. read_mutex makes copy-then-drop atomic against other readers;
 * it is never held while sleeping, so a blocked reader does not hold off
 * a non-blocking one (io_uring). Returns bytes moved, or -EFAULT if the
 * first record could not be.
 */
static ssize_t gpuar_records_move(struct gpuar_port *port, struct iov_iter *to)
{
	struct gpuar_record batch[GPUAR_READ_BATCH];
	const size_t rsize = sizeof(batch[0]);
	ssize_t done = 0;

	for (;;) {
		unsigned int want, got;
		size_t copied;

		want = min_t(size_t, iov_iter_count(to) / rsize,
			     GPUAR_READ_BATCH);
		if (!want)
			break;
		got = gpuar_records_peek(port, batch, want);
		if (!got)
			break;
		copied = copy_to_iter(batch, got * rsize, to);
		gpuar_records_drop(port, copied / rsize);
		done += (copied / rsize) * rsize;
		if (copied < got * rsize)
			return done ?: -EFAULT;
	}
	return done;
}

/*
 * read(): blocks (interruptibly, with busy-read) until a record is queued,
 * unless O_NONBLOCK or IOCB_NOWAIT, which never sleep or spin.
 */
ssize_t gpuar_port_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct gpuar_port *port = iocb->ki_filp->private_data;
	bool nowait = (iocb->ki_filp->f_flags & O_NONBLOCK) ||
		      (iocb->ki_flags & IOCB_NOWAIT);
	u64 spun_ns = 0;
	ssize_t ret;

	if (iov_iter_count(to) < sizeof(struct gpuar_record))
		return -EINVAL;
	for (;;) {
		if (nowait) {
			if (!mutex_trylock(&port->read_mutex))
				return -EAGAIN;
		} else if (mutex_lock_interruptible(&port->read_mutex)) {
			return -ERESTARTSYS;
		}
		ret = gpuar_records_move(port, to);
		mutex_unlock(&port->read_mutex);
		/*
		 * A non-blocking reader that found read_mutex taken got
		 * EAGAIN while records were queued; if we leave records
		 * behind, say so again, or an edge-triggered epoll waiter
		 * that saw its one edge consumed would never hear of them.
		 */
		if (ret > 0 && READ_ONCE(port->nqueued))
			wake_up_poll(&port->wq, EPOLLIN | EPOLLRDNORM);
		if (ret)
			return ret;
		if (nowait)
			return -EAGAIN;
		ret = gpuar_busy_read_wait(port, &spun_ns);
		if (ret)
			return ret;
	}
}

__poll_t gpuar_port_poll(struct file *file, struct poll_table_struct *pt)
{
	struct gpuar_port *port = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &port->wq, pt);
	spin_lock_irq(&port->lock);
	if (port->nqueued)
		mask = EPOLLIN | EPOLLRDNORM;
	spin_unlock_irq(&port->lock);
	return mask;
}

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
long gpuar_wait_end_pending(struct gpuar_port *port, const u64 *match,
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
				gpuar_wait_complete_locked(port, w,
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
 * Is a record of @user_data (other than a cancellation) queued? Records
 * leave the queue only under read_mutex, so holding it the walk may drop
 * the port lock between chunks (new records only join the tail).
 */
static bool gpuar_record_queued(struct gpuar_port *port, u64 user_data)
{
	struct gpuar_wait *w;
	unsigned int n = 0;
	bool found = false;

	mutex_lock(&port->read_mutex);
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
	struct gpuar_wait *w, *tmp;
	struct gpuar_cancel c;
	LIST_HEAD(fences);
	long cancelled, lost = 0;
	bool queued = false;
	u32 usize;
	int ret;

	ret = gpuar_uarg_in(&c, sizeof(c), GPUAR_CANCEL_SIZE_VER1, uarg, &usize);
	if (ret)
		return ret;
	if (c.flags)
		return -EINVAL;

	mutex_lock(&port->mutex);
	cancelled = gpuar_wait_end_pending(port, &c.user_data, &fences);
	if (!cancelled && list_empty(&fences))
		queued = gpuar_record_queued(port, c.user_data);

	list_for_each_entry_safe(w, tmp, &fences, cnode) {
		if (gpuar_fence_wait_detach(w))
			cancelled++;
		else
			lost++;
		list_del(&w->cnode);
		gpuar_wait_put(w);
	}
	mutex_unlock(&port->mutex);

	if (cancelled)
		return cancelled;
	if (lost || queued)
		return -EALREADY;
	return -ENOENT;
}
