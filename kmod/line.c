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
 * The pinned page is charged to the creator mm's pinned_vm against
 * RLIMIT_MEMLOCK (as RDMA and io_uring do); the port holds that mm with
 * mmgrab() so the charge is returned to the right mm whoever unpins.
 */
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
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

static int gpuar_pinned_charge(struct mm_struct *mm)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (atomic64_add_return(1, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_dec(&mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

static void gpuar_line_release(struct kref *ref)
{
	struct gpuar_line *line = container_of(ref, struct gpuar_line, ref);

	unpin_user_page(line->page);
	atomic64_dec(&line->port->mm->pinned_vm);
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

	ret = gpuar_pinned_charge(port->mm);
	if (ret)
		return ret;
	mmap_read_lock(port->mm);
	ret = gpuar_line_check_vma(port->mm, addr);
	if (!ret) {
		got = gpuar_pin_user_pages(addr & PAGE_MASK, 1,
					   FOLL_WRITE | FOLL_LONGTERM, &page);
		if (got != 1)
			ret = got < 0 ? (int)got : -EFAULT;
	}
	mmap_read_unlock(port->mm);
	if (ret) {
		atomic64_dec(&port->mm->pinned_vm);
		return ret;
	}
	line->page = page;
	line->words = page_address(page) + offset_in_page(addr);
	return 0;
}

/*
 * The caller could not learn the id: take the line back, unless a
 * submitter guessed the id and has waits on it meanwhile (then it stays,
 * as if registered, until unregistered or the port closes).
 */
static void gpuar_line_undo(struct gpuar_port *port, struct gpuar_line *line)
{
	bool busy;

	mutex_lock(&port->mutex);
	spin_lock_irq(&port->lock);
	busy = line->waits;
	spin_unlock_irq(&port->lock);
	if (!busy && xa_load(&port->lines, line->id) == line) {
		xa_erase(&port->lines, line->id);
		port->nlines--;
		gpuar_line_put(line);
	}
	mutex_unlock(&port->mutex);
}

long gpuar_line_register_ioctl(struct gpuar_port *port, void __user *uarg)
{
	struct gpuar_line_register lr;
	struct gpuar_line *line;
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

	mutex_lock(&port->mutex);
	if (port->nlines >= READ_ONCE(gpuar_max_lines)) {
		ret = -ENOSPC;
		goto err_unlock;
	}
	ret = gpuar_line_pin(port, line);
	if (ret)
		goto err_unlock;
	ret = xa_alloc(&port->lines, &id, line, xa_limit_31b,
		       GFP_KERNEL_ACCOUNT);
	if (ret) {
		mutex_unlock(&port->mutex);
		gpuar_line_put(line);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	line->id = id;
	port->nlines++;
	mutex_unlock(&port->mutex);

	/*
	 * Copy the id out with the mutex dropped: the argument may sit on a
	 * page whose fault blocks for long (userfaultfd, FUSE), and nothing
	 * else of the port should wait for that.
	 */
	lr.id = id;
	ret = gpuar_uarg_out(&lr, sizeof(lr), uarg, usize);
	if (ret)
		gpuar_line_undo(port, line);
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
	spin_lock_irq(&port->lock);
	if (line->waits)
		ret = -EBUSY;
	spin_unlock_irq(&port->lock);
	if (ret)
		goto out;
	xa_erase(&port->lines, lu.id);
	port->nlines--;
	gpuar_line_put(line);
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
		gpuar_line_put(line);
	}
	port->nlines = 0;
}
