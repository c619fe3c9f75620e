// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The wait object and the record queue, knowing nothing of any source.
 *
 * A wait joins the pending list in gpuar_wait_add_pending_locked() and
 * ends exactly once, under the port lock, in
 * gpuar_wait_complete_locked(): whoever sees it done first (submit, the
 * timer, a busy reader, a fence callback, cancel, release) moves it from
 * the pending list to the record queue; everyone later sees its state and
 * leaves it alone. A source takes the wait off its own indexes first
 * (word waits: gpuar_word_end_locked), so this file never learns them.
 * The indexes by user data are this file's (user_index.c keeps them): a
 * wait is in port->pending_by_user from its commit until it ends (or a
 * canceller collects it), then in port->queued_by_user until its record
 * is read, unless the record is a cancellation (-ECANCELED), which no
 * cancel asks about.
 * The wait itself is the queued record, so queuing never allocates and
 * never fails: the number queued is bounded by the port's wait limit,
 * which a wait keeps counting against until its record is read.
 */
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "params.h"
#include "port.h"
#include "gpuar_trace.h"

/* Records copied out per pass under the lock (64 bytes each, on stack). */
#define GPUAR_READ_BATCH 8

/*
 * Commit @w: pending from now on, for any completion to end. Its source
 * filled its fields (the user data first: the index is keyed by it).
 * port->lock held, and port->mutex: only submitters add waits, so a
 * cancel (which holds it) walks an index nothing joins meanwhile.
 */
void gpuar_wait_add_pending_locked(struct gpuar_port *port,
				   struct gpuar_wait *w)
{
	lockdep_assert_held(&port->mutex);
	lockdep_assert_held(&port->lock);
	w->state = GPUAR_WAIT_PENDING;
	list_add_tail(&w->node, &port->pending);
	gpuar_user_index_add(&port->pending_by_user, w);
	port->npending++;
	port->cnt.submitted++;
	trace_gpuar_submit(port, w);
}

/*
 * Any context; port->lock held. Fills the record's common fields (a
 * source sets its own, e.g. point, checks, slept_ns, beforehand) and
 * queues it. A wait already ended is left alone.
 */
void gpuar_wait_complete_locked(struct gpuar_port *port, struct gpuar_wait *w,
				u8 outcome, s32 status, u64 complete_ns,
				u64 value)
{
	struct gpuar_record *r = &w->rec;

	lockdep_assert_held(&port->lock);
	if (w->state != GPUAR_WAIT_PENDING)
		return;
	r->user_data = w->user_data;
	r->start_ns = w->start_ns;
	r->complete_ns = complete_ns;
	r->value = value;
	r->status = status;
	r->version = port->record_version;
	r->source = w->source;
	r->outcome = outcome;
	w->state = GPUAR_WAIT_DONE;
	list_move_tail(&w->node, &port->records);
	gpuar_user_index_del(&port->pending_by_user, w);
	/* A dead line's record (-EFAULT) is no cancellation's: a cancel asks. */
	if (outcome != GPUAR_OUTCOME_CANCELLED || status != -ECANCELED)
		gpuar_user_index_add(&port->queued_by_user, w);
	port->npending--;
	port->nqueued++;
	port->cnt.outcomes[outcome]++;
	trace_gpuar_complete(port, r);
	if (port->quiet_reader)
		port->quiet_queued++;
	else if (port->wakes_held)
		port->owed_in = true;
	else
		wake_up_poll(&port->wq, EPOLLIN | EPOLLRDNORM);
}

/*
 * Wake-ups, batched. A walk that may end or raise many waits in one hold
 * of the port lock (a timer firing, a line's death, a cancel's chunk)
 * holds the wake-ups back and gives each queue one wake-up at the end,
 * as timerfd wakes once per expiry: not a walk of every poller per
 * record. A blocked reader woken once takes what its buffer holds and
 * wakes the next one for what it leaves (port.c), so one wake-up of wq
 * serves a batch. Holds nest; port->lock held throughout.
 */
void gpuar_wakes_hold_locked(struct gpuar_port *port)
{
	lockdep_assert_held(&port->lock);
	port->wakes_held++;
}

void gpuar_wakes_release_locked(struct gpuar_port *port)
{
	lockdep_assert_held(&port->lock);
	if (WARN_ON_ONCE(!port->wakes_held) || --port->wakes_held)
		return;
	if (port->owed_in) {
		port->owed_in = false;
		wake_up_poll(&port->wq, EPOLLIN | EPOLLRDNORM);
	}
	if (port->owed_pri) {
		port->owed_pri = false;
		gpuar_pri_wake_locked(port);
	}
}

/*
 * Tell the pollers that asked for imminence (gpuar_port_poll) that a wait
 * was raised, or owe them that until the batch ends. EPOLLPRI's wake-up
 * has no key (port.h says why), EPOLLRDBAND's has.
 */
void gpuar_pri_wake_locked(struct gpuar_port *port)
{
	lockdep_assert_held(&port->lock);
	if (port->wakes_held)
		port->owed_pri = true;
	else if (port->imminent_mask == EPOLLPRI)
		wake_up(&port->pri_wq);
	else
		wake_up_poll(&port->pri_wq, port->imminent_mask);
}

/*
 * Would @count more waits fit the port's limit (pending plus unread)?
 * Submitters ask once the entries are checked (their faults come first)
 * and before allocating a wait for each, so a full port costs no such
 * allocations (an answer that may be stale by the commit), and again
 * under the lock at the commit, where it holds: only submitters,
 * serialised by port->mutex, add waits.
 */
bool gpuar_waits_fit_locked(struct gpuar_port *port, u32 count)
{
	lockdep_assert_held(&port->lock);
	return (u64)port->npending + port->nqueued + count <=
	       READ_ONCE(gpuar_max_waits);
}

bool gpuar_waits_fit(struct gpuar_port *port, u32 count)
{
	bool fit;

	spin_lock_irq(&port->lock);
	fit = gpuar_waits_fit_locked(port, count);
	spin_unlock_irq(&port->lock);
	return fit;
}

/*
 * Process context. A fence wait has usually let go of its fence when it
 * ended (fence_wait.c); one that never ended still holds it.
 */
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
		gpuar_user_index_del(&port->queued_by_user, w);
		port->nqueued--;
	}
	spin_unlock_irq(&port->lock);
	list_for_each_entry_safe(w, tmp, &gone, node) {
		list_del(&w->node);
		gpuar_wait_put(w);
	}
}

/*
 * Move queued records to the user, oldest first, whole records only;
 * read_mutex held. Records are copied out before they leave the queue, so
 * a fault loses nothing, and read_mutex makes copy-then-drop atomic
 * against other readers. Returns bytes moved, or -EFAULT if the first
 * record could not be.
 */
ssize_t gpuar_records_move(struct gpuar_port *port, struct iov_iter *to)
{
	struct gpuar_record batch[GPUAR_READ_BATCH];
	const size_t rsize = sizeof(batch[0]);
	ssize_t done = 0;

	lockdep_assert_held(&port->read_mutex);
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
 * Release: free every record left unread. Nothing else can touch the
 * queue any more (no pending wait, no timer, no reader), so no lock, and
 * the queued index goes with the port.
 */
void gpuar_records_free(struct gpuar_port *port)
{
	struct gpuar_wait *w, *tmp;
	LIST_HEAD(done);

	list_splice_init(&port->records, &done);
	list_for_each_entry_safe(w, tmp, &done, node) {
		list_del(&w->node);
		gpuar_wait_put(w);
		cond_resched();
	}
}
