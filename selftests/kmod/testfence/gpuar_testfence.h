/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * gpuar_testfence: a test-only source of dma_fences, in the spirit of
 * sw_sync (which Debian's kernels lack). Loaded only in gpuar's test VMs,
 * never installed.
 *
 *   /dev/gpuar_testfence
 *     GPUAR_TESTFENCE_IOC_TIMELINE  create a timeline; returns its fd.
 *     GPUAR_TESTFENCE_IOC_BARRIER   wait for every released fence to be
 *                                   freed (and its module reference
 *                                   dropped): an rcu_barrier().
 *   timeline fd
 *     GPUAR_TESTFENCE_IOC_FENCE     a fence at seqno, returned as a new
 *                                   sync_file fd. A seqno the timeline has
 *                                   already reached gives a signalled fence.
 *     GPUAR_TESTFENCE_IOC_SIGNAL    advance the timeline to seqno: every
 *                                   pending fence at or below it signals,
 *                                   with error (0 or a negative errno) set
 *                                   first. The timeline never goes back
 *                                   (EINVAL).
 *     close()                       signals every pending fence with
 *                                   -ECANCELED.
 *
 * Fences keep the module loaded until the last reference is gone.
 */
#ifndef _UAPI_GPUAR_TESTFENCE_H
#define _UAPI_GPUAR_TESTFENCE_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define GPUAR_TESTFENCE_PATH "/dev/gpuar_testfence"

/* gpuar_testfence_timeline.flags */
#define GPUAR_TESTFENCE_CLOEXEC (1U << 0)

struct gpuar_testfence_timeline {
	__u32 flags;		/* GPUAR_TESTFENCE_CLOEXEC */
	__u32 pad;		/* must be zero */
};

struct gpuar_testfence_fence {
	__aligned_u64 seqno;
	__s32 fd;		/* out: the sync_file, O_CLOEXEC */
	__u32 flags;		/* must be zero */
};

struct gpuar_testfence_signal {
	__aligned_u64 seqno;
	__s32 error;		/* 0, or -MAX_ERRNO..-1 */
	__u32 flags;		/* must be zero */
};

#define GPUAR_TESTFENCE_IOC_MAGIC 0xB7

#define GPUAR_TESTFENCE_IOC_TIMELINE \
	_IOW(GPUAR_TESTFENCE_IOC_MAGIC, 0x00, struct gpuar_testfence_timeline)
#define GPUAR_TESTFENCE_IOC_FENCE \
	_IOWR(GPUAR_TESTFENCE_IOC_MAGIC, 0x01, struct gpuar_testfence_fence)
#define GPUAR_TESTFENCE_IOC_SIGNAL \
	_IOW(GPUAR_TESTFENCE_IOC_MAGIC, 0x02, struct gpuar_testfence_signal)

#define GPUAR_TESTFENCE_IOC_BARRIER _IO(GPUAR_TESTFENCE_IOC_MAGIC, 0x03)

#endif /* _UAPI_GPUAR_TESTFENCE_H */
