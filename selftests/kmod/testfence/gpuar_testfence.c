// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * gpuar_testfence: dma_fence timelines on request, for gpuar's selftests.
 *
 * gpuar's fence tests need fences that stay pending as long as a test
 * wants and fences that signal with an error. vgem signals its fences by
 * itself after about ten seconds and never with an error, and Debian's
 * kernels lack sw_sync, so this module provides both: a timeline per fd,
 * fences on it handed out as sync_files, signalled up to a seqno with or
 * without an error. Closing a timeline cancels its pending fences.
 *
 * Lifetime: every fence holds a reference on its timeline (whose spinlock
 * is the fence lock) and on this module, dropped in an RCU callback after
 * the fence's release; module_exit waits for those callbacks with
 * rcu_barrier(). So the module unloads only after its last fence is gone.
 *
 * Test-only: loaded in gpuar's test VMs, never installed by DKMS.
 */
#include <linux/anon_inodes.h>
#include <linux/dma-fence.h>
#include <linux/err.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/sync_file.h>
#include <linux/uaccess.h>

#include "compat_fence.h"
#include "gpuar_testfence.h"

struct tf_timeline {
	struct kref ref;
	/* The lock of every fence on this timeline; guards value, pending. */
	spinlock_t lock;
	u64 context;
	u64 value;			/* seqno the timeline has reached */
	struct list_head pending;	/* unsignalled fences */
	char name[32];
};

struct tf_fence {
	struct dma_fence base;
	struct tf_timeline *timeline;
	struct list_head link;		/* in timeline->pending until signalled */
};

static struct tf_fence *to_tf_fence(struct dma_fence *fence)
{
	return container_of(fence, struct tf_fence, base);
}

static void tf_timeline_free(struct kref *ref)
{
	kfree(container_of(ref, struct tf_timeline, ref));
}

static const char *tf_driver_name(struct dma_fence *fence)
{
	return "gpuar_testfence";
}

static const char *tf_timeline_name(struct dma_fence *fence)
{
	return to_tf_fence(fence)->timeline->name;
}

/* Runs after a grace period: nobody can reach the fence any more. */
static void tf_fence_free_rcu(struct rcu_head *rcu)
{
	struct dma_fence *fence = container_of(rcu, struct dma_fence, rcu);
	struct tf_fence *f = to_tf_fence(fence);

	kref_put(&f->timeline->ref, tf_timeline_free);
	kfree(f);
	module_put(THIS_MODULE);
}

static void tf_fence_release(struct dma_fence *fence)
{
	struct tf_fence *f = to_tf_fence(fence);
	struct tf_timeline *tl = f->timeline;
	unsigned long flags;

	/* A pending fence whose last user went away leaves the timeline. */
	spin_lock_irqsave(&tl->lock, flags);
	list_del_init(&f->link);
	spin_unlock_irqrestore(&tl->lock, flags);
	call_rcu(&fence->rcu, tf_fence_free_rcu);
}

static const struct dma_fence_ops tf_fence_ops = {
	.get_driver_name = tf_driver_name,
	.get_timeline_name = tf_timeline_name,
	.release = tf_fence_release,
};

/*
 * Signal every pending fence at or below @seqno with @error. Callbacks run
 * under the timeline lock and may drop what could be a fence's last
 * reference, whose release takes that lock: hold a reference on each fence
 * across its signal and drop them after unlocking. A fence whose last
 * reference another thread has just dropped is still listed until its
 * release takes the lock: it is skipped (no one can wait on it any more).
 */
static void tf_timeline_signal(struct tf_timeline *tl, u64 seqno, int error)
{
	struct tf_fence *f, *next;
	unsigned long flags;
	LIST_HEAD(signalled);

	spin_lock_irqsave(&tl->lock, flags);
	if (seqno > tl->value)
		tl->value = seqno;
	list_for_each_entry_safe(f, next, &tl->pending, link) {
		if (f->base.seqno > seqno ||
		    !kref_get_unless_zero(&f->base.refcount))
			continue;
		list_move_tail(&f->link, &signalled);
		if (error)
			dma_fence_set_error(&f->base, error);
		gpuar_fence_signal_locked(&f->base);
	}
	spin_unlock_irqrestore(&tl->lock, flags);

	list_for_each_entry_safe(f, next, &signalled, link) {
		list_del_init(&f->link);
		dma_fence_put(&f->base);
	}
}

static struct tf_fence *tf_fence_create(struct tf_timeline *tl, u64 seqno)
{
	struct tf_fence *f = kzalloc(sizeof(*f), GFP_KERNEL);
	bool reached;

	if (!f)
		return NULL;
	__module_get(THIS_MODULE);
	kref_get(&tl->ref);
	f->timeline = tl;
	INIT_LIST_HEAD(&f->link);
	dma_fence_init(&f->base, &tf_fence_ops, &tl->lock, tl->context, seqno);

	spin_lock_irq(&tl->lock);
	reached = seqno <= tl->value;
	if (!reached)
		list_add_tail(&f->link, &tl->pending);
	spin_unlock_irq(&tl->lock);
	if (reached)
		gpuar_fence_signal(&f->base);
	return f;
}

static long tf_ioctl_fence(struct tf_timeline *tl, void __user *uarg)
{
	struct gpuar_testfence_fence arg;
	struct sync_file *sync_file;
	struct tf_fence *f;
	int fd;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags)
		return -EINVAL;

	f = tf_fence_create(tl, arg.seqno);
	if (!f)
		return -ENOMEM;
	sync_file = sync_file_create(&f->base);
	dma_fence_put(&f->base);	/* the sync_file holds its own */
	if (!sync_file)
		return -ENOMEM;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		fput(sync_file->file);
		return fd;
	}
	if (put_user(fd, &((struct gpuar_testfence_fence __user *)uarg)->fd)) {
		put_unused_fd(fd);
		fput(sync_file->file);
		return -EFAULT;
	}
	fd_install(fd, sync_file->file);
	return 0;
}

static long tf_ioctl_signal(struct tf_timeline *tl, void __user *uarg)
{
	struct gpuar_testfence_signal arg;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || arg.error > 0 || arg.error < -MAX_ERRNO)
		return -EINVAL;
	if (arg.seqno < READ_ONCE(tl->value))
		return -EINVAL;
	tf_timeline_signal(tl, arg.seqno, arg.error);
	return 0;
}

static long tf_timeline_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	struct tf_timeline *tl = file->private_data;

	switch (cmd) {
	case GPUAR_TESTFENCE_IOC_FENCE:
		return tf_ioctl_fence(tl, (void __user *)arg);
	case GPUAR_TESTFENCE_IOC_SIGNAL:
		return tf_ioctl_signal(tl, (void __user *)arg);
	default:
		return -ENOTTY;
	}
}

static int tf_timeline_release(struct inode *inode, struct file *file)
{
	struct tf_timeline *tl = file->private_data;

	tf_timeline_signal(tl, U64_MAX, -ECANCELED);
	kref_put(&tl->ref, tf_timeline_free);
	return 0;
}

static const struct file_operations tf_timeline_fops = {
	.owner = THIS_MODULE,
	.release = tf_timeline_release,
	.unlocked_ioctl = tf_timeline_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static long tf_ioctl_timeline(void __user *uarg)
{
	struct gpuar_testfence_timeline arg;
	struct tf_timeline *tl;
	int fd;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags & ~GPUAR_TESTFENCE_CLOEXEC || arg.pad)
		return -EINVAL;

	tl = kzalloc(sizeof(*tl), GFP_KERNEL);
	if (!tl)
		return -ENOMEM;
	kref_init(&tl->ref);
	spin_lock_init(&tl->lock);
	INIT_LIST_HEAD(&tl->pending);
	tl->context = dma_fence_context_alloc(1);
	snprintf(tl->name, sizeof(tl->name), "gpuar_testfence:%llu",
		 tl->context);

	fd = anon_inode_getfd("[gpuar_testfence]", &tf_timeline_fops, tl,
			      O_RDWR | (arg.flags & GPUAR_TESTFENCE_CLOEXEC ?
					O_CLOEXEC : 0));
	if (fd < 0)
		kref_put(&tl->ref, tf_timeline_free);
	return fd;
}

static long tf_dev_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	switch (cmd) {
	case GPUAR_TESTFENCE_IOC_TIMELINE:
		return tf_ioctl_timeline((void __user *)arg);
	case GPUAR_TESTFENCE_IOC_BARRIER:
		/*
		 * Tests count live fences by this module's refcount; a
		 * released fence drops its reference only in its RCU
		 * callback, so let them wait for those callbacks.
		 */
		if (arg)
			return -EINVAL;
		rcu_barrier();
		return 0;
	}
	return -ENOTTY;
}

static const struct file_operations tf_dev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = tf_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice tf_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "gpuar_testfence",
	.fops = &tf_dev_fops,
	.mode = 0600,
};

static int __init tf_init(void)
{
	return misc_register(&tf_misc);
}

static void __exit tf_exit(void)
{
	misc_deregister(&tf_misc);
	/* The last fences' free callbacks may still be running. */
	rcu_barrier();
}

module_init(tf_init);
module_exit(tf_exit);

MODULE_DESCRIPTION("gpuar test-only dma_fence timelines (not for production)");
MODULE_AUTHOR("gpuar developers");
MODULE_LICENSE("Dual MIT/GPL");
