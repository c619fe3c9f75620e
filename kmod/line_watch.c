// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The line watch: each line's 64 bytes watched with an MMU interval
 * notifier, so that a line whose memory goes away dies at once instead
 * of waiting, silently, on a page nobody maps any more.
 *
 * A line pins the page behind its address at registration. What the
 * process does at that address later does not move the pin: after a
 * munmap, a new mapping over it, MADV_DONTNEED or an mremap away, the
 * process and the device store to another page (or to none) while the
 * line's waits read the old one until their backstop. So the address is
 * watched, and each invalidation of it is read for what it does to the
 * pinned page (the events of include/linux/mmu_notifier.h and their
 * callers in mm/, the same on 6.1, 6.12 and 7.x):
 *
 *   UNMAP             munmap, a mapping over the range, mremap moving it,
 *                     exit_mmap, the OOM reaper: the page leaves the
 *                     address. The line dies.
 *   RELEASE           the address space has no user left (exit, exec):
 *                     dies.
 *   PROTECTION_VMA    mprotect, NUMA hinting, uffd write-protect,
 *   PROTECTION_PAGE   fork write-protecting the parent's private pages (a
 *                     pinned anonymous page is copied for the child at
 *                     once and stays the parent's), mkclean,
 *   SOFT_DIRTY        clear_refs,
 *   EXCLUSIVE         a device-exclusive entry for the same page:
 *                     the page stays where it is. The line lives.
 *   CLEAR             a zap (MADV_DONTNEED, MADV_REMOVE, truncation, a
 *                     COW replacing the page), but as well reclaim, THP
 *                     splits and collapses, KSM and migration, which a
 *                     pinned page survives in place (their unmap fails on
 *                     the pin and puts the entry back, or a shmem page
 *                     unmapped by reclaim is faulted back from its file),
 *   MIGRATE           migrate_vma() to device memory, which refuses a
 *                     pinned page, and any event this file does not know:
 *                     looked at again once the invalidation is over (the
 *                     verify work): the line lives if its address still
 *                     maps its page, a read fault allowed (so a shmem
 *                     page comes back from its file), and dies if not.
 *
 * A dying line ends every pending wait on it with a CANCELLED record of
 * status GPUAR_LINE_DEAD_STATUS (-EFAULT) and refuses later submissions
 * (word_wait.c). Its pin and charge stay until it is unregistered or the
 * port closes: they are undone under port->mutex, and the id stays the
 * caller's to unregister.
 *
 * Context. The callback may run where it must not sleep
 * (mmu_notifier_range_blockable() false: the OOM reaper), under the mmap
 * lock and, in reclaim, under fs_reclaim: it takes port->lock alone and
 * puts the line on its port's verify list; ending many waits drops the
 * lock between chunks only where the range may block. The work sleeps
 * (the mmap lock, a fault) and holds nothing of the port's while it does.
 *
 * One verify work per port, not per line: one madvise(MADV_PAGEOUT) or
 * THP split over a user's lines fires the callback once per line, and a
 * work item per line would turn one call into max_lines kworker runs,
 * each with its own mmap lock and GUP, charged to no cgroup of the user.
 * The list holds each line at most once; a run looks at up to
 * GPUAR_VERIFY_BATCH lines, then queues itself again behind other work if
 * more are waiting.
 *
 * Sequence. The callback calls mmu_interval_set_seq() under port->lock
 * every time; registration and the verify work read the sequence
 * (mmu_interval_read_begin()) before they look at the page and check it
 * (mmu_interval_read_retry()) under port->lock after: an invalidation
 * in between makes the work look again.
 *
 * Lifetimes. The notifier is inserted before the pin and removed when
 * the line leaves the id table. line.c first makes it LEAVING under
 * port->lock, after which neither the callback nor the work puts it on
 * the list again; leaving then takes it off the list and waits
 * (wait_var_event) while the work is looking at it (port->verifying),
 * so the work never holds a line that is gone, and
 * mmu_interval_notifier_remove() waits for callbacks in flight, so none
 * runs on a freed line. The work itself is the port's: it is cancelled
 * at release, once every line has left (nothing queues it after that),
 * before the port is freed. The port holds its mm (mmgrab) longer than
 * any notifier; the work takes a user of the mm (mmget_not_zero) only
 * while it looks: an mm with no user left has had its lines killed by
 * RELEASE.
 */
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "port.h"

/* Lines one run of the verify work looks at before it requeues itself. */
#define GPUAR_VERIFY_BATCH 64

enum gpuar_line_effect {
	GPUAR_LINE_KEPT,	/* the page stays at the address */
	GPUAR_LINE_TAKEN,	/* the page leaves the address */
	GPUAR_LINE_UNCLEAR,	/* look once the invalidation is over */
};

static enum gpuar_line_effect gpuar_line_effect(enum mmu_notifier_event event)
{
	switch (event) {
	case MMU_NOTIFY_UNMAP:
	case MMU_NOTIFY_RELEASE:
		return GPUAR_LINE_TAKEN;
	case MMU_NOTIFY_PROTECTION_VMA:
	case MMU_NOTIFY_PROTECTION_PAGE:
	case MMU_NOTIFY_SOFT_DIRTY:
	case MMU_NOTIFY_EXCLUSIVE:
		return GPUAR_LINE_KEPT;
	default:
		return GPUAR_LINE_UNCLEAR;
	}
}

/* port->lock held: @line is live no more; the caller ends its waits. */
static void gpuar_line_die_locked(struct gpuar_line *line)
{
	WRITE_ONCE(line->state, GPUAR_LINE_DEAD);
}

/* port->lock held: @line on the port's verify list, once. */
static void gpuar_line_verify_list_locked(struct gpuar_port *port,
					  struct gpuar_line *line)
{
	lockdep_assert_held(&port->lock);
	if (list_empty(&line->vnode))
		list_add_tail(&line->vnode, &port->verify_list);
}

/*
 * port->lock held, @line live: look at it once the invalidation is over.
 * A pending work is not queued again: it will find the line on the list.
 */
static void gpuar_line_verify_queue_locked(struct gpuar_port *port,
					   struct gpuar_line *line)
{
	gpuar_line_verify_list_locked(port, line);
	if (queue_work(gpuar_unbound_wq(), &port->verify_work))
		port->cnt.verify_queued++;
}

static bool gpuar_line_invalidate(struct mmu_interval_notifier *mni,
				  const struct mmu_notifier_range *range,
				  unsigned long cur_seq)
{
	struct gpuar_line *line = container_of(mni, struct gpuar_line, watch);
	struct gpuar_port *port = line->port;
	unsigned long flags;
	bool died = false;

	spin_lock_irqsave(&port->lock, flags);
	mmu_interval_set_seq(mni, cur_seq);
	if (line->state == GPUAR_LINE_LIVE) {
		switch (gpuar_line_effect(range->event)) {
		case GPUAR_LINE_TAKEN:
			gpuar_line_die_locked(line);
			died = true;
			break;
		case GPUAR_LINE_UNCLEAR:
			gpuar_line_verify_queue_locked(port, line);
			break;
		case GPUAR_LINE_KEPT:
			break;
		}
	}
	spin_unlock_irqrestore(&port->lock, flags);
	if (died)
		gpuar_word_end_line(port, line,
				    mmu_notifier_range_blockable(range));
	return true;
}

static const struct mmu_interval_notifier_ops gpuar_line_watch_ops = {
	.invalidate = gpuar_line_invalidate,
};

/*
 * Does @line's address map its pinned page? Only memory a line may live
 * in can (anything else now mapped there is not worth a fault: a file's
 * read could wait on I/O). A read fault is allowed, FOLL_FORCE so that a
 * PROT_NONE mapping is looked through: a shmem page unmapped by reclaim
 * comes back from its file, and a page under migration is waited for.
 */
static bool gpuar_line_mapped(struct mm_struct *mm,
			      const struct gpuar_line *line)
{
	unsigned long addr = line->uaddr & PAGE_MASK;
	struct vm_area_struct *vma;
	struct page *page;
	bool mapped = false;

	if (!mmget_not_zero(mm))
		return false;
	mmap_read_lock(mm);
	vma = vma_lookup(mm, addr);
	if (vma && (vma_is_anonymous(vma) || shmem_file(vma->vm_file)) &&
	    gpuar_get_user_page_remote(mm, addr, FOLL_FORCE, &page) == 1) {
		mapped = page == line->page;
		put_page(page);
	}
	mmap_read_unlock(mm);
	mmput(mm);
	return mapped;
}

/*
 * Look at one line the port's work took off the list (port->verifying
 * names it, so it cannot leave meanwhile): does its address still map
 * its page?
 */
static void gpuar_line_verify(struct gpuar_port *port, struct gpuar_line *line)
{
	unsigned long seq;
	bool mapped, died = false;

	seq = mmu_interval_read_begin(&line->watch);
	mapped = gpuar_line_mapped(port->mm, line);
	spin_lock_irq(&port->lock);
	if (line->state == GPUAR_LINE_LIVE) {
		if (mmu_interval_read_retry(&line->watch, seq)) {
			/*
			 * Changed again while we looked: look again, later in
			 * this run or the next (gpuar_port_verify). A callback
			 * meanwhile may have listed it already.
			 */
			gpuar_line_verify_list_locked(port, line);
		} else if (!mapped) {
			gpuar_line_die_locked(line);
			died = true;
		}
	}
	spin_unlock_irq(&port->lock);
	if (died)
		gpuar_word_end_line(port, line, true);
}

/*
 * The port's verify work: up to GPUAR_VERIFY_BATCH lines off the list,
 * each looked at with port->verifying naming it; then, if lines are left,
 * queued again rather than looping, so one port's lines never keep a
 * kworker for long.
 */
static void gpuar_port_verify(struct work_struct *work)
{
	struct gpuar_port *port = container_of(work, struct gpuar_port,
					       verify_work);
	unsigned int n;

	for (n = 0; n < GPUAR_VERIFY_BATCH; n++) {
		struct gpuar_line *line;

		spin_lock_irq(&port->lock);
		line = list_first_entry_or_null(&port->verify_list,
						struct gpuar_line, vnode);
		if (!line) {
			spin_unlock_irq(&port->lock);
			return;
		}
		list_del_init(&line->vnode);
		if (line->state != GPUAR_LINE_LIVE) {
			/* Died meanwhile (leaving takes a line off first). */
			spin_unlock_irq(&port->lock);
			continue;
		}
		WRITE_ONCE(port->verifying, line);
		port->cnt.verify_looks++;
		spin_unlock_irq(&port->lock);

		gpuar_line_verify(port, line);

		WRITE_ONCE(port->verifying, NULL);
		/*
		 * Order the store before wake_up_var()'s look at the wait
		 * queue, against wait_var_event()'s queueing before its test
		 * in gpuar_line_watch_stop(): else a leaving line could sleep
		 * on a verifying it read stale, with nobody left to wake it.
		 */
		smp_mb();
		wake_up_var(&port->verifying);
	}
	spin_lock_irq(&port->lock);
	if (!list_empty(&port->verify_list) &&
	    queue_work(gpuar_unbound_wq(), &port->verify_work))
		port->cnt.verify_queued++;
	spin_unlock_irq(&port->lock);
}

/* At port creation: the port's verify work and its list, empty. */
void gpuar_port_watch_init(struct gpuar_port *port)
{
	INIT_LIST_HEAD(&port->verify_list);
	INIT_WORK(&port->verify_work, gpuar_port_verify);
}

/*
 * At release, every line gone (so nothing queues the work again): no run
 * of the work outlives the port.
 */
void gpuar_port_watch_release(struct gpuar_port *port)
{
	WARN_ON_ONCE(!list_empty(&port->verify_list));
	cancel_work_sync(&port->verify_work);
}

/*
 * Watch @line (port->mutex held, in the port's mm): *@seq is the sequence
 * its pin is taken under. The first notifier of an mm registers it for
 * interval notifiers, taking every mmap lock of the mm: a signal may
 * interrupt that (-EINTR), and nothing is done yet, so the call restarts.
 */
int gpuar_line_watch_start(struct gpuar_port *port, struct gpuar_line *line,
			   unsigned long *seq)
{
	int ret;

	INIT_LIST_HEAD(&line->vnode);
	ret = mmu_interval_notifier_insert(&line->watch, port->mm, line->uaddr,
					   GPUAR_LINE_BYTES,
					   &gpuar_line_watch_ops);
	if (ret)
		return ret == -EINTR ? -ERESTARTNOINTR : ret;
	*seq = mmu_interval_read_begin(&line->watch);
	return 0;
}

/*
 * port->lock held, @line just made live: an invalidation since its pin
 * (@seq) may have taken the page, so look.
 */
void gpuar_line_watch_arm_locked(struct gpuar_port *port,
				 struct gpuar_line *line, unsigned long seq)
{
	lockdep_assert_held(&port->lock);
	if (mmu_interval_read_retry(&line->watch, seq))
		gpuar_line_verify_queue_locked(port, line);
}

/*
 * @line is LEAVING (or never went live): neither the callback nor the
 * work lists it any more. Off the list, then wait while the work looks at
 * it, then no callback either.
 */
void gpuar_line_watch_stop(struct gpuar_line *line)
{
	struct gpuar_port *port = line->port;

	spin_lock_irq(&port->lock);
	list_del_init(&line->vnode);
	spin_unlock_irq(&port->lock);
	wait_var_event(&port->verifying, READ_ONCE(port->verifying) != line);
	mmu_interval_notifier_remove(&line->watch);
}
