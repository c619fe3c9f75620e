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
 *
 * An area port (area.c) puts the record in the shared ring instead while
 * the ring has room and the queue is empty, so records keep their order:
 * once one queues, every later one queues behind it (GPUAR_AREA_OVERFLOW
 * set) until a read() has moved the queue back into the ring. A record in
 * the ring counts against the limit until a consumer takes it. Its wait
 * is then spent: off the lists and indexes, on port->spent until process
 * context drops the port's reference (gpuar_spent_free).
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
	gpuar_user_index_del(&port->pending_by_user, w);
	port->npending--;
	port->cnt.outcomes[outcome]++;
	if (port->area && list_empty(&port->records) &&
	    gpuar_area_push_locked(port, r)) {
		/* The ring has the record; a cancel looks there (area.c). */
		list_move_tail(&w->node, &port->spent);
	} else {
		list_move_tail(&w->node, &port->records);
		/* A dead line's (-EFAULT) is no cancellation's: a cancel asks. */
		if (outcome != GPUAR_OUTCOME_CANCELLED || status != -ECANCELED)
			gpuar_user_index_add(&port->queued_by_user, w);
		port->nqueued++;
		if (port->area) {
			port->cnt.area_overflows++;
			gpuar_area_overflow_locked(port, true);
		}
	}
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
	return (u64)port->npending + port->nqueued +
	       gpuar_area_used_locked(port) + count <=
	       READ_ONCE(gpuar_max_waits);
}

/*
 * The submitters' first look, in process context before they allocate:
 * also where the spent waits of an area port are freed, so those never
 * outnumber the waits that completed since the last submit (at most
 * max_waits) whoever reaps the ring.
 */
bool gpuar_waits_fit(struct gpuar_port *port, u32 count)
{
	bool fit;

	gpuar_spent_free(port);
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
 * Is a record there for a reader: queued, or in the area's ring? Any
 * context, no lock: the answer of a look, as READ_ONCE(nqueued) was.
 */
bool gpuar_records_ready(struct gpuar_port *port)
{
	return READ_ONCE(port->nqueued) || gpuar_area_ready(port);
}

/*
 * Process context: drop the port's reference of every spent wait (its
 * record went to the ring). They wait for this because a record can
 * reach the ring in hard IRQ (a fence callback) and in the middle of a
 * walk that goes on using the wait (the timer, a cancel's chunk, a busy
 * reader's check), where freeing it is neither allowed (a fence wait's
 * last put drops its fence) nor safe. Others may still hold references
 * (a canceller, the fence put work, a busy reader): the last put frees.
 */
void gpuar_spent_free(struct gpuar_port *port)
{
	struct gpuar_wait *w, *tmp;
	LIST_HEAD(gone);

	if (!port->area || list_empty_careful(&port->spent))
		return;
	spin_lock_irq(&port->lock);
	list_splice_init(&port->spent, &gone);
	spin_unlock_irq(&port->lock);
	list_for_each_entry_safe(w, tmp, &gone, node) {
		list_del(&w->node);
		gpuar_wait_put(w);
		cond_resched();
	}
}

/*
 * After a read, move what fits of the queue into the ring, oldest first,
 * GPUAR_COMMIT_CHUNK per hold of the lock; the queue empty, the overflow
 * flag goes off. read_mutex held: records leave the queue only under it.
 * No wake-up: these records were ready already, and the reader that
 * leaves any behind wakes the next (port.c).
 */
static void gpuar_records_refill(struct gpuar_port *port)
{
	struct gpuar_wait *w;
	unsigned int n;

	lockdep_assert_held(&port->read_mutex);
	for (n = GPUAR_COMMIT_CHUNK; n == GPUAR_COMMIT_CHUNK;) {
		spin_lock_irq(&port->lock);
		for (n = 0; n < GPUAR_COMMIT_CHUNK; n++) {
			w = list_first_entry_or_null(&port->records,
						     struct gpuar_wait, node);
			if (!w || !gpuar_area_push_locked(port, &w->rec))
				break;
			list_move_tail(&w->node, &port->spent);
			gpuar_user_index_del(&port->queued_by_user, w);
			port->nqueued--;
		}
		if (list_empty(&port->records))
			gpuar_area_overflow_locked(port, false);
		spin_unlock_irq(&port->lock);
		cond_resched();
	}
}

/*
 * The queue's part of a read: records are copied out before they leave
 * the queue, so a fault loses nothing, and read_mutex makes
 * copy-then-drop atomic against other readers. @done: bytes the read
 * moved already.
 */
static ssize_t gpuar_records_move_queue(struct gpuar_port *port,
					struct iov_iter *to, ssize_t done)
{
	struct gpuar_record batch[GPUAR_READ_BATCH];
	const size_t rsize = sizeof(batch[0]);

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
 * Move records to the user, oldest first, whole records only; read_mutex
 * held. An area port's ring comes first (area.c takes its records by the
 * consumers' swap), then the queue, whose records are all younger (none
 * enters the ring while the queue holds one); then the queue refills the
 * ring. A read that lost GPUAR_AREA_CAS_TRIES swaps to userspace's
 * consumers goes on to the queue even though the ring may hold older
 * records: those are the racing consumers' to return. Returns bytes
 * moved, or -EFAULT if the first record could not be.
 */
ssize_t gpuar_records_move(struct gpuar_port *port, struct iov_iter *to)
{
	ssize_t done = 0;

	lockdep_assert_held(&port->read_mutex);
	if (port->area) {
		done = gpuar_area_take(port, to);
		if (done < 0)
			return done;
	}
	done = gpuar_records_move_queue(port, to, done);
	if (port->area) {
		gpuar_records_refill(port);
		gpuar_spent_free(port);
	}
	return done;
}

/*
 * Release: free every record left unread, and every spent wait. Nothing
 * else can touch the queue any more (no pending wait, no timer, no
 * reader), so no lock, and the queued index goes with the port.
 */
void gpuar_records_free(struct gpuar_port *port)
{
	struct gpuar_wait *w, *tmp;
	LIST_HEAD(done);

	list_splice_init(&port->records, &done);
	list_splice_init(&port->spent, &done);
	list_for_each_entry_safe(w, tmp, &done, node) {
		list_del(&w->node);
		gpuar_wait_put(w);
		cond_resched();
	}
}
