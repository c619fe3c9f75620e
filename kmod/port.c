// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Ports: creation, the file operations and teardown.
 *
 * A port file is an anonymous inode made the way eventfd makes its files:
 * anon_inode_getfile(), FMODE_NOWAIT so io_uring may read it without a
 * worker, then fd_install(). The file's private data is the port; release
 * runs once, after the last fd and the last in-flight call are gone, in
 * whatever task dropped the last reference (or a kworker), which is why the
 * port holds its creator's mm with mmgrab() rather than using current->mm.
 */
#include <linux/anon_inodes.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "compat.h"
#include "params.h"
#include "port.h"
#include "uarg.h"

#define GPUAR_POINTS_MAX 4096

/* Port ids: never reused while the module is loaded; the first is 1. */
static atomic64_t gpuar_port_ids = ATOMIC64_INIT(0);

u64 gpuar_now_ns(void)
{
	return ktime_get_ns();
}

static long gpuar_port_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct gpuar_port *port = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (GPUAR_IOC_BASE(cmd)) {
	case GPUAR_IOC_BASE(GPUAR_IOC_LINE_REGISTER):
		return gpuar_line_register_ioctl(port, uarg);
	case GPUAR_IOC_BASE(GPUAR_IOC_LINE_UNREGISTER):
		return gpuar_line_unregister_ioctl(port, uarg);
	case GPUAR_IOC_BASE(GPUAR_IOC_SUBMIT_WORD):
		return gpuar_submit_word_ioctl(port, uarg);
	case GPUAR_IOC_BASE(GPUAR_IOC_SUBMIT_FENCE):
		return gpuar_submit_fence_ioctl(port, uarg);
	case GPUAR_IOC_BASE(GPUAR_IOC_CANCEL):
		return gpuar_cancel_ioctl(port, uarg);
	case GPUAR_IOC_BASE(GPUAR_IOC_PORT_STATS):
		return gpuar_port_stats_ioctl(port, uarg);
	case GPUAR_IOC_BASE(GPUAR_IOC_POINT_STATS):
		return gpuar_point_stats_ioctl(port, uarg);
	}
	return -ENOTTY;
}

static void gpuar_port_free(struct gpuar_port *port)
{
	gpuar_port_list_del(port);
	gpuar_lines_release(port);
	xa_destroy(&port->lines);
	kvfree(port->points.slots);
	mmdrop(port->mm);
	gpuar_uid_limit_put(port->uid_limit);
	mutex_destroy(&port->read_mutex);
	mutex_destroy(&port->mutex);
	kfree(port);
}

/*
 * Teardown. No ioctl or read can be running (the file is gone), but fence
 * callbacks (IRQ) and the port's timer can. Word waits are ended under the
 * lock; fence callbacks are removed outside it, one collected wait at a
 * time; only then is the timer cancelled (outside the lock: its callback
 * takes the lock) and everything freed.
 */
static int gpuar_port_release(struct inode *inode, struct file *file)
{
	struct gpuar_port *port = file->private_data;
	struct gpuar_wait *w, *tmp;
	LIST_HEAD(fences);
	LIST_HEAD(done);

	gpuar_wait_end_pending(port, NULL, &fences);

	list_for_each_entry_safe(w, tmp, &fences, cnode) {
		gpuar_fence_wait_detach(w);
		list_del(&w->cnode);
		gpuar_wait_put(w);
	}

	hrtimer_cancel(&port->timer);

	/* Nothing can touch the queue now (no lock needed, none taken). */
	list_splice_init(&port->records, &done);
	list_for_each_entry_safe(w, tmp, &done, node) {
		list_del(&w->node);
		gpuar_wait_put(w);
		cond_resched();
	}
	WARN_ON_ONCE(!list_empty(&port->pending));
	gpuar_port_free(port);
	return 0;
}

const struct file_operations gpuar_port_fops = {
	.owner = THIS_MODULE,
	.release = gpuar_port_release,
	.read_iter = gpuar_port_read_iter,
	.poll = gpuar_port_poll,
	.unlocked_ioctl = gpuar_port_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.show_fdinfo = gpuar_port_show_fdinfo,
};

static struct gpuar_port *gpuar_port_alloc(u32 record_version)
{
	u32 limit = clamp_t(u32, READ_ONCE(gpuar_max_points), 1,
			    GPUAR_POINTS_MAX);
	u32 cap = roundup_pow_of_two(limit * 2);
	struct gpuar_est_entry *slots;
	struct gpuar_port *port;

	port = kzalloc(sizeof(*port), GFP_KERNEL_ACCOUNT);
	if (!port)
		return NULL;
	slots = kvcalloc(cap, sizeof(*slots), GFP_KERNEL_ACCOUNT);
	if (!slots) {
		kfree(port);
		return NULL;
	}
	spin_lock_init(&port->lock);
	mutex_init(&port->mutex);
	mutex_init(&port->read_mutex);
	init_waitqueue_head(&port->wq);
	init_waitqueue_head(&port->busy_wq);
	port->busyq = RB_ROOT_CACHED;
	port->busy_until = U64_MAX;
	port->id = atomic64_inc_return(&gpuar_port_ids);
	INIT_LIST_HEAD(&port->pending);
	INIT_LIST_HEAD(&port->records);
	INIT_LIST_HEAD(&port->global);
	port->timeq = RB_ROOT_CACHED;
	port->armed_ns = U64_MAX;
	xa_init_flags(&port->lines, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
	gpuar_est_table_init(&port->points, slots, cap, limit);
	gpuar_wakelat_init(&port->wakelat);
	gpuar_word_timer_init(port);
	port->record_version = record_version;
	port->creator = task_tgid_vnr(current);
	return port;
}

int gpuar_port_create(const void __user *uarg)
{
	struct gpuar_port_create pc;
	struct gpuar_port *port;
	struct gpuar_uid_limit *uid_limit;
	struct file *file;
	u32 usize;
	int fd, ret;

	ret = gpuar_uarg_in(&pc, sizeof(pc), GPUAR_PORT_CREATE_SIZE_VER1, uarg,
			    &usize);
	if (ret)
		return ret;
	if ((pc.flags & ~GPUAR_PORT_FLAGS_ALL) || pc.pad ||
	    pc.record_version > GPUAR_RECORD_VERSION_MAX)
		return -EINVAL;
	if (!current->mm)
		return -EINVAL;

	uid_limit = gpuar_uid_limit_get();
	if (IS_ERR(uid_limit))
		return PTR_ERR(uid_limit);
	port = gpuar_port_alloc(pc.record_version ?: GPUAR_RECORD_VERSION_MAX);
	if (!port) {
		gpuar_uid_limit_put(uid_limit);
		return -ENOMEM;
	}
	port->uid_limit = uid_limit;
	mmgrab(current->mm);
	port->mm = current->mm;

	fd = get_unused_fd_flags(O_RDWR |
				 (pc.flags & GPUAR_PORT_CLOEXEC ? O_CLOEXEC : 0));
	if (fd < 0) {
		ret = fd;
		goto err_free;
	}
	file = anon_inode_getfile("[gpuar_port]", &gpuar_port_fops, port,
				  O_RDWR |
				  (pc.flags & GPUAR_PORT_NONBLOCK ? O_NONBLOCK : 0));
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		ret = PTR_ERR(file);
		goto err_free;
	}
	file->f_mode |= FMODE_NOWAIT;
	gpuar_port_list_add(port);
	fd_install(fd, file);
	return fd;

err_free:
	gpuar_port_free(port);
	return ret;
}
