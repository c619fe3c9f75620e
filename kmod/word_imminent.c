// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Leases and imminence: a wait someone watches in user mode is leased
 * (the timer leaves it alone until the lease ends), and on a port opened
 * with GPUAR_PORT_IMMINENT a wait that reaches its early wake is raised
 * (EPOLLPRI) until a claim hands it out, leased, to the claimer, or a
 * check ends it. docs/design.md draws the wait's whole life (raise,
 * claim, lease, hand-back, end) with the function for each arrow.
 */
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/minmax.h>

#include "../core/line.h"
#include "port.h"
#include "word.h"

/*
 * Lease @w until @until: the timer leaves it alone meanwhile (someone is
 * watching its word), and takes it back when the lease runs out unless
 * the watcher renewed it. Only ever lengthens a lease, and never past the
 * wait's backstop, where the timer ends it whoever watches: a busy
 * reader's lease taken near the backstop would otherwise outlast it, and
 * a claim that follows would report that lease (the ABI header promises
 * a claim's lease_end_ns never passes the backstop).
 */
void gpuar_word_lease_locked(struct gpuar_port *port, struct gpuar_wait *w,
			     u64 until)
{
	lockdep_assert_held(&port->lock);
	until = min(until, w->ws.backstop_at_ns);
	WRITE_ONCE(w->lease_end_ns, max(READ_ONCE(w->lease_end_ns), until));
	gpuar_word_requeue_locked(port, w);
}

/*
 * A busy reader stops watching pending @w at @now, having just seen it
 * pending: its lease ends (a claim's stays) and the timer checks it again
 * an interval from now.
 */
void gpuar_word_release_locked(struct gpuar_port *port, struct gpuar_wait *w,
			       u64 now)
{
	lockdep_assert_held(&port->lock);
	if (w->state != GPUAR_WAIT_PENDING)
		return;
	if (w->imminent != GPUAR_IMMINENT_CLAIMED)
		WRITE_ONCE(w->lease_end_ns, 0);
	w->ws.next_ns = max(w->ws.next_ns,
			    min(now + w->ws.interval_ns, w->ws.backstop_at_ns));
	gpuar_word_requeue_locked(port, w);
}

/* @w reached its early wake on an opted-in port: EPOLLPRI until claimed. */
void gpuar_word_raise_locked(struct gpuar_port *port, struct gpuar_wait *w)
{
	w->raise_ns = 0;
	w->imminent = GPUAR_IMMINENT_RAISED;
	list_add_tail(&w->inode, &port->imminent_list);
	port->nraised++;
	port->cnt.imminent++;
	gpuar_pri_wake_locked(port);
}

/*
 * Claim raised waits, the earliest raised first, looking at no more than
 * @max of them (the caller's chunk bounds this hold of the lock): each is
 * checked once, and one whose word is already done ends then (LATE, its
 * record queued) instead of being handed out; the others are leased
 * @lease_ns past their predicted completion (gpuar_word_claim_until) and
 * go into @out with a reference for the caller. Returns how many.
 * A claimed wait was seen pending at its claim, so the claimer's sighting
 * of the store, read back through gpuar_claimed_check(), ends it EXACT at
 * that time.
 *
 * The first claim after a raise is a wake-up latency sample (raise due
 * to claim), as a blocked reader's wake is: an event loop woken by
 * EPOLLPRI takes that long to come and look, so later raises come that
 * much earlier and the claimer is watching before the sleep ends.
 */
unsigned int gpuar_word_claim_locked(struct gpuar_port *port,
				     struct gpuar_wait **out, unsigned int max,
				     u64 lease_ns)
{
	u64 now = gpuar_now_ns(), until;
	unsigned int n = 0, looked;
	bool sampled = false;

	lockdep_assert_held(&port->lock);
	for (looked = 0; looked < max && !list_empty(&port->imminent_list);
	     looked++) {
		struct gpuar_wait *w = list_first_entry(&port->imminent_list,
							struct gpuar_wait,
							inode);

		if (!sampled) {
			gpuar_word_wakelat_locked(port, w->early_ns, now);
			sampled = true;
		}
		if (gpuar_reached(gpuar_load_acquire(&w->line->words[w->slot]),
				  w->target)) {
			/* Ends it, off the raised list: nothing to watch. */
			gpuar_word_look_locked(port, w, now, false, true);
			continue;
		}
		until = gpuar_word_claim_until(&w->ws, now, lease_ns);
		list_move_tail(&w->inode, &port->claimed);
		port->nraised--;
		port->nclaimed++;
		w->imminent = GPUAR_IMMINENT_CLAIMED;
		gpuar_word_lease_locked(port, w, until);
		kref_get(&w->ref);
		out[n++] = w;
	}
	if (n)
		gpuar_word_retarget_locked(port);
	return n;
}

/*
 * Undo the claim of @w (a claim that could not hand it out): raised
 * again, at the head of the list (the caller goes newest first, so the
 * order is as before), its lease gone. Its lease may have run out
 * meanwhile (the copy-out faulted slowly): raised again all the same.
 */
void gpuar_word_unclaim_locked(struct gpuar_port *port, struct gpuar_wait *w)
{
	lockdep_assert_held(&port->lock);
	if (w->state != GPUAR_WAIT_PENDING ||
	    w->imminent == GPUAR_IMMINENT_RAISED)
		return;
	if (w->imminent == GPUAR_IMMINENT_CLAIMED) {
		list_move(&w->inode, &port->imminent_list);
		port->nclaimed--;
	} else {
		list_add(&w->inode, &port->imminent_list);
	}
	port->nraised++;
	w->imminent = GPUAR_IMMINENT_RAISED;
	WRITE_ONCE(w->lease_end_ns, 0);
	gpuar_word_requeue_locked(port, w);
}
