// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Imminent readiness, the caller's side: a port created with
 * GPUAR_PORT_IMMINENT raises EPOLLPRI when a predicted word wait reaches
 * its early wake (word_timer.c does that), so an epoll or io_uring
 * program learns that a completion is near without a blocked reader.
 * GPUAR_IOC_CLAIM hands it those waits (user data, line, slot, target)
 * and leases them: the timer leaves them alone until the lease ends, and
 * the caller watches the words in user mode, where the spin is its own
 * (accounted to it, in a low-power wait where the CPU has one). When it
 * sees a word done it reads, and the read checks the claimed waits first
 * (gpuar_claimed_check), so the record comes back in that same call. A
 * claimer that never looks loses its waits to the timer when the lease
 * runs out.
 *
 * Only the port's own address space may claim: the entries name line
 * addresses, which mean nothing in another process that got the fd.
 *
 * Every walk here holds the port lock with interrupts off, so each is
 * bounded: a claim looks at GPUAR_CLAIM_BATCH raised waits at most, and
 * the read's check of the claimed waits goes through them a chunk per
 * hold, rotating the ones not done to the back.
 */
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "../core/defaults.h"
#include "../core/line.h"
#include "params.h"
#include "port.h"
#include "uarg.h"

/*
 * The lease a claim asked for, within the bounds. 0: a busy reader's spin
 * budget (busy_read_us), since a claimer watches the word as a busy
 * reader spins on it and a lease shorter than the store's usual lateness
 * past the prediction hands the wait back to the timer just before the
 * store (a 200 us lease did so for about half the waits of an emulated
 * 1 ms job); lease_us where busy reading is off.
 */
static u64 gpuar_claim_lease_ns(u64 asked)
{
	if (!asked) {
		u64 us = GPUAR_PARAM(busy_read_us) ?: GPUAR_PARAM(lease_us);

		return clamp_t(u64, us, GPUAR_LEASE_US_MIN,
			       GPUAR_LEASE_US_MAX) * NSEC_PER_USEC;
	}
	return clamp_t(u64, asked, NSEC_PER_USEC,
		       (u64)GPUAR_LEASE_US_MAX * NSEC_PER_USEC);
}

static void gpuar_claim_entry_fill(struct gpuar_claim_entry *e,
				   const struct gpuar_wait *w)
{
	memset(e, 0, sizeof(*e));
	e->user_data = w->user_data;
	e->addr = w->line->uaddr;
	e->target = w->target;
	e->lease_end_ns = READ_ONCE(w->lease_end_ns);
	e->line = w->line->id;
	e->slot = w->slot;
}

/* Copy @n entries out, each @esize bytes (a tail past ours zeroed). */
static int gpuar_claim_copy_out(const struct gpuar_claim *c,
				const struct gpuar_claim_entry *e,
				unsigned int n)
{
	char __user *dst = u64_to_user_ptr(c->entries);
	size_t ours = min_t(size_t, c->entry_size, sizeof(*e));
	unsigned int i;

	for (i = 0; i < n; i++, dst += c->entry_size) {
		if (copy_to_user(dst, &e[i], ours))
			return -EFAULT;
		if (c->entry_size > ours &&
		    clear_user(dst + ours, c->entry_size - ours))
			return -EFAULT;
	}
	return 0;
}

long gpuar_claim_ioctl(struct gpuar_port *port, void __user *uarg)
{
	struct gpuar_claim_entry *e = NULL;
	struct gpuar_wait **waits = NULL;
	struct gpuar_claim c;
	unsigned int n, i;
	u32 usize;
	int ret;

	ret = gpuar_uarg_in(&c, sizeof(c), GPUAR_CLAIM_SIZE_VER1, uarg, &usize);
	if (ret)
		return ret;
	if (current->mm != port->mm)
		return -EPERM;
	if (c.flags || !port->imminent ||
	    c.entry_size < GPUAR_CLAIM_ENTRY_SIZE_VER1 ||
	    c.entry_size > PAGE_SIZE)
		return -EINVAL;
	if (c.count > READ_ONCE(gpuar_max_waits))
		return -E2BIG;

	/*
	 * No more than are raised now (the rest could not be claimed), and
	 * no more than a chunk: each wait claimed is checked and leased with
	 * interrupts off, as is each one a failed copy-out gives back.
	 */
	spin_lock_irq(&port->lock);
	n = min3(c.count, port->nraised, (u32)GPUAR_CLAIM_BATCH);
	spin_unlock_irq(&port->lock);
	if (!n)
		return 0;
	/*
	 * Touch the destination before claiming: a faulting one costs the
	 * caller EFAULT and nothing else, so the give-back below is for a
	 * page another thread unmaps meanwhile, not a loop a caller can
	 * drive.
	 */
	if (clear_user(u64_to_user_ptr(c.entries), (size_t)n * c.entry_size))
		return -EFAULT;
	e = kvmalloc_array(n, sizeof(*e), GFP_KERNEL_ACCOUNT);
	waits = kvmalloc_array(n, sizeof(*waits), GFP_KERNEL_ACCOUNT);
	if (!e || !waits) {
		ret = -ENOMEM;
		goto out;
	}

	spin_lock_irq(&port->lock);
	gpuar_wakes_hold_locked(port);
	n = gpuar_word_claim_locked(port, waits, n,
				    gpuar_claim_lease_ns(c.lease_ns));
	gpuar_wakes_release_locked(port);
	for (i = 0; i < n; i++)
		gpuar_claim_entry_fill(&e[i], waits[i]);
	spin_unlock_irq(&port->lock);

	ret = gpuar_claim_copy_out(&c, e, n);
	spin_lock_irq(&port->lock);
	if (ret) {
		/* Newest first, so the raised order is as it was. */
		for (i = n; i-- > 0;)
			gpuar_word_unclaim_locked(port, waits[i]);
	} else {
		port->cnt.claims += n;
		ret = n;
	}
	spin_unlock_irq(&port->lock);
	for (i = 0; i < n; i++)
		gpuar_wait_put(waits[i]);
out:
	kvfree(waits);
	kvfree(e);
	return ret;
}

/*
 * Check the claimed waits whose words reached their targets (the claimer
 * saw them and reads now): each such wait ends, its record queued. Every
 * wait claimed when the call began is looked at once, GPUAR_COMMIT_CHUNK
 * per hold of the lock with a preemption point between: a wait not done
 * goes to the back of the list, so each hold starts with waits not yet
 * looked at, and a slow wait claimed first hides no later one. A claim
 * made meanwhile (another thread of the process) may be looked at
 * instead of an older one, which the next read then checks.
 *
 * @quiet: the caller is a read that moves the records next, so those
 * queued here wake no one (a wake-up would only send every poller, an
 * io_uring poll's task work among them, to find the record gone, on the
 * reader's own path back to user mode); the caller wakes wq if it
 * leaves any behind. Returns how many were queued quietly.
 */
unsigned int gpuar_claimed_check(struct gpuar_port *port, bool quiet)
{
	unsigned int left, n, queued = 0;
	struct gpuar_wait *w;
	u64 now;

	left = READ_ONCE(port->nclaimed);
	while (left) {
		spin_lock_irq(&port->lock);
		port->quiet_reader = quiet;
		gpuar_wakes_hold_locked(port);
		now = gpuar_now_ns();
		left = min(left, port->nclaimed);
		for (n = 0; left && n < GPUAR_COMMIT_CHUNK; n++, left--) {
			w = list_first_entry(&port->claimed, struct gpuar_wait,
					     inode);
			if (gpuar_reached(gpuar_load_acquire(&w->line->words[w->slot]),
					  w->target))
				gpuar_word_check_locked(port, w, now, true);
			else
				list_move_tail(&w->inode, &port->claimed);
		}
		gpuar_wakes_release_locked(port);
		port->quiet_reader = false;
		queued += port->quiet_queued;
		port->quiet_queued = 0;
		spin_unlock_irq(&port->lock);
		if (left)
			cond_resched();
	}
	return queued;
}
