// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * gpuar: GPU completion ports. The misc device /dev/gpuar and module
 * lifetime. The device handle answers two ioctls, VERSION and
 * PORT_CREATE; everything else happens on the port fds it hands out.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "port.h"
#include "uarg.h"

/* The build's version (Kbuild passes the project's), else this one. */
#ifndef GPUAR_MODULE_VERSION
#define GPUAR_MODULE_VERSION "0.1.0"
#endif

static long gpuar_version_ioctl(void __user *uarg)
{
	struct gpuar_version v;
	u32 usize;
	int ret;

	ret = gpuar_uarg_in(&v, sizeof(v), GPUAR_VERSION_SIZE_VER1, uarg,
			    &usize);
	if (ret)
		return ret;
	if (v.pad)
		return -EINVAL;
	v.abi = GPUAR_ABI_VERSION;
	v.record_max = GPUAR_RECORD_VERSION_MAX;
	v.features = GPUAR_FEATURE_WORD_WAIT | GPUAR_FEATURE_FENCE_WAIT |
		     GPUAR_FEATURE_BUSY_READ | GPUAR_FEATURE_IMMINENT |
		     GPUAR_FEATURE_WAIT_READY | GPUAR_FEATURE_IMMINENT_RDBAND |
		     GPUAR_FEATURE_AREA;
	if (IS_ENABLED(CONFIG_MMU_NOTIFIER))
		v.features |= GPUAR_FEATURE_LINE_WATCH;
	return gpuar_uarg_out(&v, sizeof(v), uarg, usize);
}

static long gpuar_dev_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case GPUAR_IOC_VERSION:
		return gpuar_version_ioctl(uarg);
	case GPUAR_IOC_PORT_CREATE:
		return gpuar_port_create(uarg);
	}
	return -ENOTTY;
}

static const struct file_operations gpuar_dev_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.unlocked_ioctl = gpuar_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice gpuar_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "gpuar",
	.fops = &gpuar_dev_fops,
	.mode = 0660,
};

static int __init gpuar_init(void)
{
	int ret;

	ret = misc_register(&gpuar_misc);
	if (ret)
		return ret;
	gpuar_debugfs_init();
	return 0;
}

/*
 * Every port holds a module reference (its file's f_op owner), so no port
 * exists here. What may still run is RCU callbacks queued by the fences
 * and files we released: wait for them before the code goes away.
 */
static void __exit gpuar_exit(void)
{
	gpuar_debugfs_exit();
	misc_deregister(&gpuar_misc);
	gpuar_fence_puts_flush();
	rcu_barrier();
}

module_init(gpuar_init);
module_exit(gpuar_exit);

MODULE_DESCRIPTION("GPU completion ports: awaitable GPU completion as file descriptors");
MODULE_AUTHOR("gpuar authors");
MODULE_LICENSE("Dual MIT/GPL");
MODULE_VERSION(GPUAR_MODULE_VERSION);
