// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Fence waits: a sync_file's dma_fence ends a wait when it signals.
 *
 * The callback (gpuar_fence_cb) runs wherever the fence signals: often in
 * hard IRQ context, always with the fence's lock held. It only takes the
 * port lock IRQ-safe and queues the record. Lock order is therefore fence
 * lock -> port lock, and the port never calls into the fence
 * (dma_fence_add_callback, dma_fence_remove_callback) with its own lock
 * held.
 *
 * A wait lets go of its fence as soon as it ended, not when its record is
 * read: an unread record must not pin the driver's fence (and through its
 * ops the driver). The callback cannot drop it itself, since it runs
 * under the fence lock, which the fence's release may take: it hands the
 * wait to a work item that puts the fence in process context. A wait a
 * canceller collected keeps its fence for the canceller's
 * dma_fence_remove_callback(), and the canceller drops it afterwards.
 */
#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "params.h"
#include "port.h"
#include "uarg.h"

/* The signal time of a signalled fence (set before its callbacks run). */
static u64 gpuar_fence_time(struct dma_fence *f)
{
	return ktime_to_ns(gpuar_fence_timestamp(f));
}

/* Process context: the fence of a wait that ended, if it still has it. */
void gpuar_fence_wait_drop(struct gpuar_wait *w)
{
	struct dma_fence *f = xchg(&w->fence, NULL);

	if (f)
		dma_fence_put(f);
}

static LLIST_HEAD(gpuar_fence_puts);

static void gpuar_fence_puts_fn(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&gpuar_fence_puts);
	struct gpuar_wait *w, *tmp;

	llist_for_each_entry_safe(w, tmp, list, fence_put) {
		gpuar_fence_wait_drop(w);
		gpuar_wait_put(w);
		cond_resched();
	}
}

static DECLARE_WORK(gpuar_fence_puts_work, gpuar_fence_puts_fn);

/* Module exit: no deferred put is left. */
void gpuar_fence_puts_flush(void)
{
	flush_work(&gpuar_fence_puts_work);
}

/*
 * Any context, fence lock held. The wait is handed (with a reference, as
 * a reader may free it meanwhile) to the work that drops its fence,
 * unless a canceller holds it, which does that itself.
 */
static void gpuar_fence_cb(struct dma_fence *f, struct dma_fence_cb *cb)
{
	struct gpuar_wait *w = container_of(cb, struct gpuar_wait, cb);
	struct gpuar_port *port = w->port;
	unsigned long flags;
	bool drop;

	spin_lock_irqsave(&port->lock, flags);
	drop = w->state == GPUAR_WAIT_PENDING && !w->cancelling;
	gpuar_wait_complete_locked(port, w, GPUAR_OUTCOME_FENCE, f->error,
				   gpuar_fence_time(f),
				   f->seqno);
	if (drop)
		kref_get(&w->ref);
	spin_unlock_irqrestore(&port->lock, flags);
	if (drop && llist_add(&w->fence_put, &gpuar_fence_puts))
		schedule_work(&gpuar_fence_puts_work);
}

/*
 * Process context, port lock not held; the caller holds a reference on
 * @w. Removes the callback and ends the wait as cancelled; false when the
 * fence signalled first. dma_fence_remove_callback() answers false when
 * the signaller has already taken the callback off the fence's list. The
 * signaller does that, and calls the callback, with the fence lock held,
 * and dma_fence_remove_callback() takes that lock: so when it answers
 * false our callback has returned and its record is queued. The loop
 * below only makes that order explicit: release() frees the port right
 * after, and must never do so while a callback could still touch it.
 */
bool gpuar_fence_wait_detach(struct gpuar_wait *w)
{
	struct gpuar_port *port = w->port;

	if (!dma_fence_remove_callback(w->fence, &w->cb)) {
		spin_lock_irq(&port->lock);
		while (w->state == GPUAR_WAIT_PENDING) {
			spin_unlock_irq(&port->lock);
			cpu_relax();
			spin_lock_irq(&port->lock);
		}
		spin_unlock_irq(&port->lock);
		return false;
	}
	spin_lock_irq(&port->lock);
	gpuar_wait_complete_locked(port, w, GPUAR_OUTCOME_CANCELLED,
				   -ECANCELED, gpuar_now_ns(), w->fence->seqno);
	spin_unlock_irq(&port->lock);
	return true;
}

/*
 * The fence of sync_file @fd. Looks the fd up first: sync_file_get_fence()
 * answers NULL both for a closed fd and for one that is not a sync_file,
 * and those deserve different errnos (EBADF, EINVAL).
 */
static struct dma_fence *gpuar_fence_from_fd(int fd)
{
	struct dma_fence *fence;
	struct file *file;

	if (fd < 0)
		return ERR_PTR(-EBADF);
	file = fget(fd);
	if (!file)
		return ERR_PTR(-EBADF);
	fput(file);
	fence = sync_file_get_fence(fd);
	return fence ?: ERR_PTR(-EINVAL);
}

static int gpuar_fence_read_entries(const struct gpuar_submit *s,
				    struct gpuar_fence_wait *e,
				    struct dma_fence **fences, u32 *bad)
{
	const char __user *src = u64_to_user_ptr(s->entries);
	struct dma_fence *fence;
	u32 i;
	int ret;

	for (i = 0; i < s->count; i++) {
		*bad = i;
		cond_resched();	/* long batches: see gpuar_submit_fence_ioctl */
		ret = copy_struct_from_user(&e[i], sizeof(e[i]),
					    src + (size_t)i * s->entry_size,
					    s->entry_size);
		if (ret)
			return ret;
		if (e[i].flags || e[i].reserved[0] || e[i].reserved[1])
			return -EINVAL;
		fence = gpuar_fence_from_fd(e[i].fd);
		if (IS_ERR(fence))
			return PTR_ERR(fence);
		fences[i] = fence;
	}
	return 0;
}

static void gpuar_fence_init_wait(struct gpuar_port *port,
				  struct gpuar_wait *w,
				  const struct gpuar_fence_wait *e, u64 now)
{
	w->port = port;
	w->source = GPUAR_SOURCE_FENCE;
	w->user_data = e->user_data;
	w->start_ns = now;
	INIT_LIST_HEAD(&w->cb.node);
}

long gpuar_submit_fence_ioctl(struct gpuar_port *port, void __user *uarg)
{
	struct gpuar_fence_wait *e = NULL;
	struct dma_fence **fences = NULL;
	struct gpuar_wait **waits = NULL;
	struct gpuar_submit s;
	u32 usize, i, bad;
	u64 now;
	int ret;

	ret = gpuar_uarg_in(&s, sizeof(s), GPUAR_SUBMIT_SIZE_VER1, uarg, &usize);
	if (ret)
		return ret;
	bad = s.count;
	ret = gpuar_submit_header(&s, GPUAR_FENCE_WAIT_SIZE_VER1);
	if (ret)
		goto fail;
	if (!s.count)
		return 0;

	/* count <= max_waits <= 2^20: far below kvmalloc's INT_MAX. */
	ret = -ENOMEM;
	e = kvmalloc_array(s.count, sizeof(*e), GFP_KERNEL_ACCOUNT);
	fences = kvcalloc(s.count, sizeof(*fences), GFP_KERNEL_ACCOUNT);
	waits = kvcalloc(s.count, sizeof(*waits), GFP_KERNEL_ACCOUNT);
	if (!e || !fences || !waits)
		goto fail;
	ret = gpuar_fence_read_entries(&s, e, fences, &bad);
	if (ret)
		goto fail;
	bad = s.count;
	/* The entries' faults come first; then the limit, before any wait. */
	ret = -ENOSPC;
	if (!gpuar_waits_fit(port, s.count))
		goto fail;
	/*
	 * A batch may hold max_waits entries: every loop over it outside
	 * the port lock lets the CPU go once an entry, so a long one never
	 * runs without a preemption point.
	 */
	ret = -ENOMEM;
	for (i = 0; i < s.count; i++) {
		cond_resched();
		waits[i] = kzalloc(sizeof(*waits[i]), GFP_KERNEL_ACCOUNT);
		if (!waits[i])
			goto fail;
		kref_init(&waits[i]->ref);
		waits[i]->fence = fences[i];
		fences[i] = NULL;
	}

	/*
	 * Reserve room and make the waits pending under the lock; hang the
	 * callbacks after it is dropped (fence lock -> port lock order). The
	 * mutex keeps cancel from looking at a wait whose callback is not
	 * hung yet.
	 */
	mutex_lock(&port->mutex);
	spin_lock_irq(&port->lock);
	if (!gpuar_waits_fit_locked(port, s.count)) {
		spin_unlock_irq(&port->lock);
		mutex_unlock(&port->mutex);
		ret = -ENOSPC;
		goto fail;
	}
	/*
	 * Room is ours from here: only submitters, serialised by the mutex,
	 * add waits. Committed in chunks; no callback is hung yet, so
	 * nothing ends these waits while the lock is dropped between them.
	 */
	now = gpuar_now_ns();
	for (i = 0; i < s.count; i++) {
		if (i && !(i % GPUAR_COMMIT_CHUNK)) {
			spin_unlock_irq(&port->lock);
			cond_resched();
			spin_lock_irq(&port->lock);
		}
		gpuar_fence_init_wait(port, waits[i], &e[i], now);
		gpuar_wait_add_pending_locked(port, waits[i]);
	}
	spin_unlock_irq(&port->lock);

	for (i = 0; i < s.count; i++) {
		struct gpuar_wait *w = waits[i];

		cond_resched();
		/* From here on the callback may end and a reader free @w. */
		if (dma_fence_add_callback(w->fence, &w->cb, gpuar_fence_cb)) {
			/*
			 * Already signalled: the record is still owed. The
			 * status takes the fence lock and the timestamp may
			 * wait for the signaller to set it: read both (and
			 * the seqno) before taking our lock. A fence that
			 * signalled before the submit has complete_ns <
			 * start_ns (see struct gpuar_record).
			 */
			struct dma_fence *f = w->fence;
			int status = dma_fence_get_status(f);
			u64 when = gpuar_fence_time(f);
			u64 seqno = f->seqno;

			/* Ours alone until queued: a reader may then free it. */
			w->fence = NULL;
			spin_lock_irq(&port->lock);
			gpuar_wait_complete_locked(port, w, GPUAR_OUTCOME_FENCE,
						   min(status, 0), when, seqno);
			spin_unlock_irq(&port->lock);
			dma_fence_put(f);
		}
	}
	mutex_unlock(&port->mutex);
	kvfree(waits);
	kvfree(fences);
	kvfree(e);
	return s.count;

fail:
	for (i = 0; waits && i < s.count; i++) {
		if (waits[i] && waits[i]->fence)
			dma_fence_put(waits[i]->fence);
		kfree(waits[i]);
	}
	for (i = 0; fences && i < s.count; i++)
		if (fences[i])
			dma_fence_put(fences[i]);
	kvfree(waits);
	kvfree(fences);
	kvfree(e);
	s.error_index = bad;
	if (gpuar_uarg_out(&s, sizeof(s), uarg, usize))
		return -EFAULT;
	return ret;
}
