// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Size-prefixed ioctl arguments. Every argument struct starts with a __u32
 * size that userspace sets to the sizeof() it was compiled with; the kernel
 * accepts older (smaller, down to the first ABI version) and newer (larger,
 * unknown tail zero) structs, as clone3() and openat2() do. Submit
 * batches add a header naming the entries' size and count.
 */
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "params.h"
#include "port.h"

int gpuar_uarg_in(void *karg, size_t ksize, size_t minsize,
		  const void __user *uarg, u32 *usize)
{
	u32 size;
	int ret;

	if (get_user(size, (const u32 __user *)uarg))
		return -EFAULT;
	if (size < minsize)
		return -EINVAL;
	if (size > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(karg, ksize, uarg, size);
	if (ret)
		return ret;
	*usize = size;
	return 0;
}

/* Copy back what the caller's struct has room for. */
int gpuar_uarg_out(const void *karg, size_t ksize, void __user *uarg,
		   u32 usize)
{
	if (copy_to_user(uarg, karg, min_t(size_t, ksize, usize)))
		return -EFAULT;
	return 0;
}

/*
 * Validate a submit batch's header: flags and pad clear, each entry at
 * least @min_entry bytes (the first ABI version's) and at most a page, at
 * most max_waits entries.
 */
int gpuar_submit_header(struct gpuar_submit *s, size_t min_entry)
{
	if (s->flags || s->pad)
		return -EINVAL;
	if (s->entry_size < min_entry || s->entry_size > PAGE_SIZE)
		return -EINVAL;
	if (s->count > READ_ONCE(gpuar_max_waits))
		return -E2BIG;
	return 0;
}
