// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Ports: creation, the file operations and teardown, and the list of
 * every port (debugfs gpuar/ports).
 *
 * A port file is an anonymous inode made the way eventfd makes its files:
 * anon_inode_getfile(), FMODE_NOWAIT so io_uring may read it without a
 * worker, then fd_install(). The file's private data is the port; release
 * runs once, after the last fd and the last in-flight call are gone, in
 * whatever task dropped the last reference (or a kworker), which is why the
 * port holds its creator's mm with mmgrab() rather than using current->mm.
 */
#include <linux/anon_inodes.h>
#include <linux/debugfs.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/sched/user.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "../core/defaults.h"
#include "compat.h"
#include "params.h"
#include "port.h"
#include "uarg.h"

/* Port ids: never reused while the module is loaded; the first is 1. */
static atomic64_t gpuar_port_ids = ATOMIC64_INIT(0);

static LIST_HEAD(gpuar_ports);
static DEFINE_MUTEX(gpuar_ports_lock);
static struct dentry *gpuar_debugfs_dir;

static void gpuar_port_list_add(struct gpuar_port *port)
{
	mutex_lock(&gpuar_ports_lock);
	list_add_tail(&port->global, &gpuar_ports);
	mutex_unlock(&gpuar_ports_lock);
}

static void gpuar_port_list_del(struct gpuar_port *port)
{
	mutex_lock(&gpuar_ports_lock);
	list_del_init(&port->global);
	mutex_unlock(&gpuar_ports_lock);
}

static long gpuar_port_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct gpuar_port *port = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case GPUAR_IOC_LINE_REGISTER:
		return gpuar_line_register_ioctl(port, uarg);
	case GPUAR_IOC_LINE_UNREGISTER:
		return gpuar_line_unregister_ioctl(port, uarg);
	case GPUAR_IOC_SUBMIT_WORD:
		return gpuar_submit_word_ioctl(port, uarg);
	case GPUAR_IOC_SUBMIT_FENCE:
		return gpuar_submit_fence_ioctl(port, uarg);
	case GPUAR_IOC_CANCEL:
		return gpuar_cancel_ioctl(port, uarg);
	case GPUAR_IOC_CLAIM:
		return gpuar_claim_ioctl(port, uarg);
	case GPUAR_IOC_WAIT_READY:
		return gpuar_wait_ready_ioctl(port, uarg);
	case GPUAR_IOC_PORT_STATS:
		return gpuar_port_stats_ioctl(port, uarg);
	case GPUAR_IOC_POINT_STATS:
		return gpuar_point_stats_ioctl(port, uarg);
	}
	return -ENOTTY;
}

static void gpuar_port_free(struct gpuar_port *port)
{
	gpuar_port_list_del(port);
	gpuar_lines_release(port);
	xa_destroy(&port->lines);
	kvfree(port->points.entries);
	kvfree(port->points.index);
	gpuar_area_free(port);
	mmdrop(port->mm);
	put_pid(port->creator);
	gpuar_user_put(port->user);
	gpuar_uid_limit_put(port->uid_limit);
	mutex_destroy(&port->read_mutex);
	mutex_destroy(&port->mutex);
	kfree(port);
}

/*
 * read(): blocks (interruptibly, with busy-read) until a record is queued,
 * unless O_NONBLOCK or IOCB_NOWAIT, which never sleep or spin. read_mutex
 * is never held while sleeping, so a blocked reader does not hold off a
 * non-blocking one (io_uring).
 *
 * A non-blocking reader that finds read_mutex taken gets EAGAIN while
 * records may be queued. An edge-triggered epoll waiter would then never
 * hear of them, so a reader that leaves records behind raises the edge
 * again:
 *
 *   reader A (blocking)                  reader B (nonblocking, EPOLLET)
 *                                          epoll_wait: the EPOLLIN edge
 *     lock read_mutex
 *     move 8 of 10 records                 trylock read_mutex fails: EAGAIN
 *     unlock read_mutex                    epoll_wait: waits for an edge
 *     nqueued != 0: wake_up_poll  ------>  woken: reads the 2 left
 *
 * Without A's wake, B would sleep until the next completion, which may
 * never come. The wake is spurious only when B had not raced A. Blocked
 * readers wait exclusively, so a record wakes one of them (and every
 * poller), and that same wake passes the rest on.
 *
 * Every read first checks the port's claimed waits (claim.c): their
 * claimer watched the words itself and reads when it saw one reach its
 * target, so that record comes back in this very call. Those records are
 * queued without a wake-up, being this reader's to move; whatever it
 * leaves queued (a short buffer, the read mutex held by another, a
 * signal, a fault) gets the wake-up here instead.
 */
static ssize_t gpuar_port_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct gpuar_port *port = iocb->ki_filp->private_data;
	bool nowait = (iocb->ki_filp->f_flags & O_NONBLOCK) ||
		      (iocb->ki_flags & IOCB_NOWAIT);
	u64 spun_ns = 0;
	ssize_t ret;

	if (iov_iter_count(to) < sizeof(struct gpuar_record))
		return -EINVAL;
	for (;;) {
		unsigned int quiet = gpuar_claimed_check(port, true);

		if (nowait) {
			ret = mutex_trylock(&port->read_mutex) ? 0 : -EAGAIN;
		} else {
			ret = mutex_lock_interruptible(&port->read_mutex) ?
			      -ERESTARTSYS : 0;
		}
		if (ret) {
			/* The records queued quietly are someone else's now. */
			if (quiet)
				wake_up_poll(&port->wq, EPOLLIN | EPOLLRDNORM);
			return ret;
		}
		ret = gpuar_records_move(port, to);
		mutex_unlock(&port->read_mutex);
		if ((ret > 0 || quiet) && gpuar_records_ready(port))
			wake_up_poll(&port->wq, EPOLLIN | EPOLLRDNORM);
		if (ret)
			return ret;
		if (nowait)
			return -EAGAIN;
		ret = gpuar_busy_read_wait(port, &spun_ns, U64_MAX, true);
		if (ret)
			return ret;
	}
}

static __poll_t gpuar_port_poll(struct file *file,
				struct poll_table_struct *pt)
{
	struct gpuar_port *port = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &port->wq, pt);
	/* Raises wake pri_wq: only pollers that asked to hear of them. */
	if (port->imminent_mask &&
	    (poll_requested_events(pt) & (EPOLLPRI | EPOLLRDBAND)))
		poll_wait(file, &port->pri_wq, pt);
	spin_lock_irq(&port->lock);
	/* The ring's head is userspace's: read, not trusted (area.c). */
	if (port->nqueued || gpuar_area_ready(port))
		mask = EPOLLIN | EPOLLRDNORM;
	/* Only an opted-in port ever raises a wait: nraised stays 0. */
	if (port->nraised)
		mask |= port->imminent_mask;
	spin_unlock_irq(&port->lock);
	return mask;
}

/*
 * Teardown. No ioctl or read can be running (the file is gone), but fence
 * callbacks (IRQ) and the port's timer can. Every pending wait is ended
 * (fence callbacks removed outside the lock); only then is the timer
 * cancelled (outside the lock: its callback takes the lock) and
 * everything freed.
 */
static int gpuar_port_release(struct inode *inode, struct file *file)
{
	struct gpuar_port *port = file->private_data;

	gpuar_cancel_all(port);
	hrtimer_cancel(&port->timer);
	gpuar_records_free(port);
	WARN_ON_ONCE(!list_empty(&port->pending));
	gpuar_port_free(port);
	return 0;
}

static const struct file_operations gpuar_port_fops = {
	.owner = THIS_MODULE,
	.release = gpuar_port_release,
	.read_iter = gpuar_port_read_iter,
	.poll = gpuar_port_poll,
	.mmap = gpuar_area_mmap,	/* area.c */
	.unlocked_ioctl = gpuar_port_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.show_fdinfo = gpuar_port_show_fdinfo,	/* stats.c */
};

static struct gpuar_port *gpuar_port_alloc(u32 record_version)
{
	u32 limit = clamp_t(u32, READ_ONCE(gpuar_max_points),
			    GPUAR_MAX_POINTS_MIN, GPUAR_MAX_POINTS_MAX);
	u32 cap = gpuar_est_table_cap(limit);
	struct gpuar_est_entry *entries;
	struct gpuar_port *port;
	u32 *index;

	port = kzalloc(sizeof(*port), GFP_KERNEL_ACCOUNT);
	if (!port)
		return NULL;
	entries = kvcalloc(limit, sizeof(*entries), GFP_KERNEL_ACCOUNT);
	index = kvcalloc(cap, sizeof(*index), GFP_KERNEL_ACCOUNT);
	if (!entries || !index) {
		kvfree(entries);
		kvfree(index);
		kfree(port);
		return NULL;
	}
	spin_lock_init(&port->lock);
	mutex_init(&port->mutex);
	mutex_init(&port->read_mutex);
	init_waitqueue_head(&port->wq);
	init_waitqueue_head(&port->pri_wq);
	port->busyq = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&port->busy_sleepers);
	INIT_LIST_HEAD(&port->imminent_list);
	INIT_LIST_HEAD(&port->claimed);
	port->id = atomic64_inc_return(&gpuar_port_ids);
	INIT_LIST_HEAD(&port->pending);
	INIT_LIST_HEAD(&port->records);
	INIT_LIST_HEAD(&port->spent);
	port->pending_by_user = RB_ROOT;
	port->queued_by_user = RB_ROOT;
	INIT_LIST_HEAD(&port->global);
	port->timeq = RB_ROOT_CACHED;
	port->armed_ns = U64_MAX;
	port->armed_end_ns = U64_MAX;
	xa_init_flags(&port->lines, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
	xa_init_flags(&port->folios, XA_FLAGS_ACCOUNT);
	gpuar_port_watch_init(port);
	gpuar_est_table_init(&port->points, entries, index, cap, limit);
	/* A long-lived port with ever new points must not fill up for good. */
	gpuar_est_table_evict_idle(&port->points);
	gpuar_wakelat_init(&port->wakelat);
	gpuar_word_timer_init(port);
	port->record_version = record_version;
	port->creator = get_pid(task_tgid(current));
	port->user = gpuar_user_get();
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
	if ((pc.flags & ~GPUAR_PORT_FLAGS_ALL) ||
	    pc.record_version > GPUAR_RECORD_VERSION_MAX)
		return -EINVAL;
	/* ring_entries was pad: 0 without the area, as pad always was. */
	if (!(pc.flags & GPUAR_PORT_AREA) && pc.ring_entries)
		return -EINVAL;
	if ((pc.flags & GPUAR_PORT_IMMINENT_RDBAND) &&
	    !(pc.flags & GPUAR_PORT_IMMINENT))
		return -EINVAL;
	if (!current->mm)
		return -EINVAL;

	uid_limit = gpuar_uid_limit_get();
	if (IS_ERR(uid_limit))
		return PTR_ERR(uid_limit);
	/* 0 is version 1 forever: a caller that names none predates v2. */
	port = gpuar_port_alloc(pc.record_version ?: GPUAR_RECORD_VERSION_1);
	if (!port) {
		gpuar_uid_limit_put(uid_limit);
		return -ENOMEM;
	}
	port->uid_limit = uid_limit;
	port->imminent = pc.flags & GPUAR_PORT_IMMINENT;
	if (port->imminent)
		port->imminent_mask = pc.flags & GPUAR_PORT_IMMINENT_RDBAND ?
				      EPOLLRDBAND : EPOLLPRI;
	mmgrab(current->mm);
	port->mm = current->mm;
	if (pc.flags & GPUAR_PORT_AREA) {
		ret = gpuar_area_create(port, pc.ring_entries);
		if (ret)
			goto err_free;
	}

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

/* debugfs gpuar/ports: every port, with its points. */
static int gpuar_ports_show(struct seq_file *m, void *unused)
{
	struct gpuar_port *port;

	mutex_lock(&gpuar_ports_lock);
	list_for_each_entry(port, &gpuar_ports, global) {
		seq_printf(m, "port %llu\n", port->id);
		gpuar_port_show(m, port);
		gpuar_port_show_points(m, port);
		seq_putc(m, '\n');
	}
	mutex_unlock(&gpuar_ports_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(gpuar_ports);

void gpuar_debugfs_init(void)
{
	gpuar_debugfs_dir = debugfs_create_dir("gpuar", NULL);
	debugfs_create_file("ports", 0400, gpuar_debugfs_dir, NULL,
			    &gpuar_ports_fops);
}

void gpuar_debugfs_exit(void)
{
	debugfs_remove_recursive(gpuar_debugfs_dir);
}
