// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Completion lines: a 64-byte line in the creator's anonymous or shmem
 * memory, pinned so the timer (hard IRQ) and busy readers can read its
 * words through the kernel mapping.
 *
 * The pin is FOLL_WRITE | FOLL_LONGTERM: a read-only long-term pin of a
 * never-written anonymous page would pin the shared zero page (6.1) and
 * never see the device's stores. The mapping kind is checked here, under
 * the mmap lock, rather than left to GUP, so every kernel refuses a driver
 * or file mapping with the same errno (6.5+ GUP refuses long-term write
 * pins of file mappings itself, older kernels do not).
 *
 * What a pin holds is the page's whole folio: a long-term pinned folio
 * cannot be split or migrated, so a line in a 2 MiB huge page holds 2 MiB.
 * Each folio is therefore charged whole, once per port however many of
 * its lines share it (port->folios counts them), as io_uring charges its
 * fixed buffers:
 *   - to the port owner's user (user->locked_vm, or where free_uid is not
 *     exported and no user_struct can be held, the module's own count
 *     for that uid in uid_limit.c) against RLIMIT_MEMLOCK, unless the
 *     registering task has CAP_IPC_LOCK: a per-mm charge could be
 *     escaped by passing the fd on and exiting, or by pinning from many
 *     processes;
 *   - to the creator mm's pinned_vm, which /proc/<pid>/status shows as
 *     VmPin (the port holds that mm with mmgrab(), so the charge goes
 *     back to the right mm whoever unpins).
 * Charges move only under port->mutex, at register, unregister and
 * release.
 *
 * The pin keeps the page, not the address: line_watch.c watches the
 * address, and a line whose page leaves it (munmap, MADV_DONTNEED, a
 * mapping over it, mremap) dies. A dead line keeps its pin and charge
 * until it is unregistered or the port closes, like any other.
 */
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>

#include "../core/line.h"
#include "compat.h"
#include "params.h"
#include "port.h"
#include "uarg.h"

/* mmap lock held. */
static int gpuar_line_check_vma(struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma = vma_lookup(mm, addr);

	if (!vma)
		return -EFAULT;
	if (vma->vm_flags & (VM_IO | VM_PFNMAP | VM_MIXEDMAP))
		return -EINVAL;
	if (!vma_is_anonymous(vma) && !shmem_file(vma->vm_file))
		return -EINVAL;
	if (!(vma->vm_flags & VM_WRITE))
		return -EFAULT;
	return 0;
}

/*
 * port->folios: folio pfn -> xa_mk_value(lines << 1 | charged to the
 * user). A pinned folio stays where it is, so its pfn names it.
 */
#define GPUAR_FOLIO_USER 1UL

/*
 * Charge @pages to the port owner's user against RLIMIT_MEMLOCK: its
 * user_struct's locked_vm where the module holds one, else the module's
 * own count for that user (gpuar_uid_pin_charge), which a port's mm
 * exiting does not escape either.
 */
static int gpuar_user_charge(struct gpuar_port *port, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long cur, next;

	if (!port->user)
		return gpuar_uid_pin_charge(port->uid_limit, pages, limit);
	cur = atomic_long_read(&port->user->locked_vm);
	do {
		next = cur + pages;
		if (next > limit || next < cur)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&port->user->locked_vm, &cur, next));
	return 0;
}

static void gpuar_user_uncharge(struct gpuar_port *port, unsigned long pages)
{
	if (port->user)
		atomic_long_sub(pages, &port->user->locked_vm);
	else
		gpuar_uid_pin_uncharge(port->uid_limit, pages);
}

/* port->mutex held: charge @line's folio unless another line did. */
static int gpuar_line_charge(struct gpuar_port *port, struct gpuar_line *line)
{
	struct folio *folio = page_folio(line->page);
	unsigned long key = folio_pfn(folio), pages = folio_nr_pages(folio);
	unsigned long v = xa_to_value(xa_load(&port->folios, key) ?: xa_mk_value(0));
	bool user = false;
	int ret;

	lockdep_assert_held(&port->mutex);
	if (!v && !capable(CAP_IPC_LOCK)) {
		ret = gpuar_user_charge(port, pages);
		if (ret)
			return ret;
		user = true;
	}
	if (!v)
		v = user ? GPUAR_FOLIO_USER : 0;
	ret = xa_err(xa_store(&port->folios, key, xa_mk_value(v + 2),
			      GFP_KERNEL_ACCOUNT));
	if (ret) {
		if (user)
			gpuar_user_uncharge(port, pages);
		return ret;
	}
	if (v < 2)
		atomic64_add(pages, &port->mm->pinned_vm);
	return 0;
}

/* port->mutex held (or the port is being freed): the charge's inverse. */
static void gpuar_line_uncharge(struct gpuar_port *port,
				struct gpuar_line *line)
{
	struct folio *folio = page_folio(line->page);
	unsigned long key = folio_pfn(folio), pages = folio_nr_pages(folio);
	unsigned long v = xa_to_value(xa_load(&port->folios, key) ?: xa_mk_value(0));

	if (WARN_ON_ONCE(v < 2))
		return;
	v -= 2;
	if (v >= 2) {
		/* Replacing a value entry in place allocates nothing. */
		xa_store(&port->folios, key, xa_mk_value(v), GFP_NOWAIT);
		return;
	}
	xa_erase(&port->folios, key);
	if (v & GPUAR_FOLIO_USER)
		gpuar_user_uncharge(port, pages);
	atomic64_sub(pages, &port->mm->pinned_vm);
}

static void gpuar_line_release(struct kref *ref)
{
	struct gpuar_line *line = container_of(ref, struct gpuar_line, ref);

	unpin_user_page(line->page);
	kfree(line);
}

/* Process context: the last reference unpins. */
void gpuar_line_put(struct gpuar_line *line)
{
	kref_put(&line->ref, gpuar_line_release);
}

/* Caller runs in port->mm (checked), so pin_user_pages() pins from it. */
static int gpuar_line_pin(struct gpuar_port *port, struct gpuar_line *line)
{
	unsigned long addr = line->uaddr;
	struct page *page;
	long got;
	int ret;

	mmap_read_lock(port->mm);
	ret = gpuar_line_check_vma(port->mm, addr);
	if (!ret) {
		got = gpuar_pin_user_pages(addr & PAGE_MASK, 1,
					   FOLL_WRITE | FOLL_LONGTERM, &page);
		if (got != 1)
			ret = got < 0 ? (int)got : -EFAULT;
	}
	mmap_read_unlock(port->mm);
	if (ret)
		return ret;
	line->page = page;
	ret = gpuar_line_charge(port, line);
	if (ret) {
		unpin_user_page(page);
		return ret;
	}
	line->words = page_address(page) + offset_in_page(addr);
	return 0;
}

/* Are word waits pending on @line? */
static bool gpuar_line_busy(struct gpuar_port *port, struct gpuar_line *line)
{
	bool busy;

	spin_lock_irq(&port->lock);
	busy = !list_empty(&line->waits);
	spin_unlock_irq(&port->lock);
	return busy;
}

/*
 * @line leaves: no longer watched, its charge returned and the reference
 * of the id table (or of the registration) dropped. port->mutex held, or
 * the port is being freed.
 */
static void gpuar_line_leave(struct gpuar_port *port, struct gpuar_line *line)
{
	spin_lock_irq(&port->lock);
	WRITE_ONCE(line->state, GPUAR_LINE_LEAVING);
	spin_unlock_irq(&port->lock);
	gpuar_line_watch_stop(line);
	gpuar_line_uncharge(port, line);
	gpuar_line_put(line);
}

/*
 * The caller could not learn @id: take the line back, unless another
 * thread guessed the id meanwhile and unregistered it (it is gone from
 * the table, perhaps replaced by a newer line under the same id) or has
 * waits on it (then it stays, as if registered, until unregistered or the
 * port closes). The caller holds its own reference to @line, so @line is
 * not freed under us and no other line can have its address.
 */
static void gpuar_line_undo(struct gpuar_port *port, struct gpuar_line *line,
			    u32 id)
{
	mutex_lock(&port->mutex);
	if (xa_load(&port->lines, id) == line &&
	    !gpuar_line_busy(port, line)) {
		xa_erase(&port->lines, id);
		port->nlines--;
		gpuar_line_leave(port, line);
	}
	mutex_unlock(&port->mutex);
}

long gpuar_line_register_ioctl(struct gpuar_port *port, void __user *uarg)
{
	struct gpuar_line_register lr;
	struct gpuar_line *line;
	unsigned long seq;
	u32 usize, id;
	int ret;

	ret = gpuar_uarg_in(&lr, sizeof(lr), GPUAR_LINE_REGISTER_SIZE_VER1,
			    uarg, &usize);
	if (ret)
		return ret;
	if (lr.flags || lr.pad)
		return -EINVAL;
	if (!gpuar_line_aligned(lr.addr) || lr.addr >= TASK_SIZE_MAX)
		return -EINVAL;
	if (current->mm != port->mm)
		return -EPERM;

	line = kzalloc(sizeof(*line), GFP_KERNEL_ACCOUNT);
	if (!line)
		return -ENOMEM;
	kref_init(&line->ref);
	line->port = port;
	line->uaddr = lr.addr;
	line->state = GPUAR_LINE_ARMING;
	INIT_LIST_HEAD(&line->waits);

	mutex_lock(&port->mutex);
	if (port->nlines >= READ_ONCE(gpuar_max_lines)) {
		ret = -ENOSPC;
		goto err_unlock;
	}
	/* Watched before it is pinned, so no change in between goes unseen. */
	ret = gpuar_line_watch_start(port, line, &seq);
	if (ret)
		goto err_unlock;
	ret = gpuar_line_pin(port, line);
	if (ret) {
		gpuar_line_watch_stop(line);
		goto err_unlock;
	}
	ret = xa_alloc(&port->lines, &id, line, xa_limit_31b,
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		gpuar_line_leave(port, line);
		mutex_unlock(&port->mutex);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	line->id = id;
	port->nlines++;
	spin_lock_irq(&port->lock);
	WRITE_ONCE(line->state, GPUAR_LINE_LIVE);
	gpuar_line_watch_arm_locked(port, line, seq);
	spin_unlock_irq(&port->lock);
	/*
	 * The table's reference is the table's: once the mutex drops,
	 * another thread may unregister the id (ids are predictable) and
	 * free the line. Ours lasts until the id is out.
	 */
	kref_get(&line->ref);
	mutex_unlock(&port->mutex);

	/*
	 * Copy the id out with the mutex dropped: the argument may sit on a
	 * page whose fault blocks for long (userfaultfd, FUSE), and nothing
	 * else of the port should wait for that.
	 */
	lr.id = id;
	ret = gpuar_uarg_out(&lr, sizeof(lr), uarg, usize);
	if (ret)
		gpuar_line_undo(port, line, id);
	gpuar_line_put(line);
	return ret;

err_unlock:
	mutex_unlock(&port->mutex);
	kfree(line);
	return ret;
}

long gpuar_line_unregister_ioctl(struct gpuar_port *port,
				 const void __user *uarg)
{
	struct gpuar_line_unregister lu;
	struct gpuar_line *line;
	u32 usize;
	int ret;

	ret = gpuar_uarg_in(&lu, sizeof(lu), GPUAR_LINE_UNREGISTER_SIZE_VER1,
			    uarg, &usize);
	if (ret)
		return ret;
	/* The lines are the port's address space's: a forked child's not. */
	if (current->mm != port->mm)
		return -EPERM;

	mutex_lock(&port->mutex);
	line = xa_load(&port->lines, lu.id);
	if (!line) {
		ret = -ENOENT;
		goto out;
	}
	if (gpuar_line_busy(port, line)) {
		ret = -EBUSY;
		goto out;
	}
	xa_erase(&port->lines, lu.id);
	port->nlines--;
	gpuar_line_leave(port, line);
out:
	mutex_unlock(&port->mutex);
	return ret;
}

/* Release: no wait references a line any more. */
void gpuar_lines_release(struct gpuar_port *port)
{
	struct gpuar_line *line;
	unsigned long id;

	xa_for_each(&port->lines, id, line) {
		xa_erase(&port->lines, id);
		gpuar_line_leave(port, line);
	}
	port->nlines = 0;
	gpuar_port_watch_release(port);
	xa_destroy(&port->folios);
}
