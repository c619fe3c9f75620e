/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * dma_fence API differences across the kernels gpuar builds against
 * (Debian's 6.1, 6.12 and 7.x). kmod/compat_fence.kbuild greps the target's
 * <linux/dma-fence.h> and defines the GPUAR_HAVE_* macros used here: a
 * version number would lie, since distributions backport (Debian's 6.1
 * has dma_fence_timestamp(), which mainline added in 6.6).
 *
 * A Kbuild file runs the detection with
 *	include $(src)/compat_fence.kbuild
 *
 * Include this instead of calling the dma_fence functions that changed.
 */
#ifndef GPUAR_COMPAT_FENCE_H
#define GPUAR_COMPAT_FENCE_H

#include <linux/bitops.h>
#include <linux/dma-fence.h>
#include <linux/ktime.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>

/*
 * Without the detection every macro stays undefined, which selects the 6.1
 * API: 6.12 still builds with it (set_deadline being only a hint), 7.x
 * does not.
 */

/* 7.x renamed dma_fence_enable_sw_signaling(). */
static inline void gpuar_fence_enable_signaling(struct dma_fence *fence)
{
#ifdef GPUAR_HAVE_DMA_FENCE_ENABLE_SIGNALING
	dma_fence_enable_signaling(fence);
#else
	dma_fence_enable_sw_signaling(fence);
#endif
}

/*
 * The spinlock protecting @fence. From 7.x a fence may carry its lock
 * inline, so fence->lock is no longer the way to reach it.
 */
static inline spinlock_t *gpuar_fence_lock(struct dma_fence *fence)
{
#ifdef GPUAR_HAVE_DMA_FENCE_SPINLOCK
	return dma_fence_spinlock(fence);
#else
	return fence->lock;
#endif
}

/*
 * dma_fence_signal() and dma_fence_signal_locked() return void from 7.x;
 * before, an int saying whether the fence was already signalled. These
 * drop the result everywhere so no caller comes to depend on it.
 */
static inline void gpuar_fence_signal(struct dma_fence *fence)
{
	dma_fence_signal(fence);
}

/* Caller holds gpuar_fence_lock(@fence). */
static inline void gpuar_fence_signal_locked(struct dma_fence *fence)
{
	dma_fence_signal_locked(fence);
}

/* A hint to the fence's driver that someone waits by @deadline (6.4+). */
static inline void gpuar_fence_set_deadline(struct dma_fence *fence,
					    ktime_t deadline)
{
#ifdef GPUAR_HAVE_DMA_FENCE_SET_DEADLINE
	dma_fence_set_deadline(fence, deadline);
#endif
}

/*
 * The time a signalled @fence signalled. dma_fence_signal() sets the
 * timestamp before it runs the callbacks, so a callback always finds it.
 */
static inline ktime_t gpuar_fence_timestamp(struct dma_fence *fence)
{
#ifdef GPUAR_HAVE_DMA_FENCE_TIMESTAMP
	return dma_fence_timestamp(fence);
#else
	if (test_bit(DMA_FENCE_FLAG_TIMESTAMP_BIT, &fence->flags))
		return fence->timestamp;
	return ktime_get();
#endif
}

/*
 * The name of the driver that owns @fence, for diagnostics. From 7.x the
 * ops are RCU-protected and a signalled fence may have dropped them. The
 * caller holds rcu_read_lock() and a reference on @fence.
 */
static inline const char *gpuar_fence_driver_name(struct dma_fence *fence)
{
#if defined(GPUAR_HAVE_DMA_FENCE_DRIVER_NAME)
	/* __rcu: valid until rcu_read_unlock(), which the caller holds. */
	return unrcu_pointer(dma_fence_driver_name(fence));
#elif defined(GPUAR_HAVE_DMA_FENCE_OPS_RCU)
	const struct dma_fence_ops *ops = rcu_dereference(fence->ops);

	return ops ? ops->get_driver_name(fence) : "signaled";
#else
	return fence->ops->get_driver_name(fence);
#endif
}

#endif /* GPUAR_COMPAT_FENCE_H */
