/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * ioctl dispatch and argument sizes. A command is matched without its size
 * bits: the size inside the struct is the authority, so a caller built
 * against a newer (larger) struct reaches the same handler.
 */
#ifndef GPUAR_KMOD_UARG_H
#define GPUAR_KMOD_UARG_H

#include <linux/ioctl.h>
#include <linux/stddef.h>

#include <linux/gpuar.h>

#define GPUAR_IOC_BASE(cmd) ((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

/* The first ABI version's sizes: the smallest struct a caller may pass. */
#define GPUAR_VERSION_SIZE_VER1 sizeof(struct gpuar_version)
#define GPUAR_PORT_CREATE_SIZE_VER1 sizeof(struct gpuar_port_create)
#define GPUAR_LINE_REGISTER_SIZE_VER1 sizeof(struct gpuar_line_register)
#define GPUAR_LINE_UNREGISTER_SIZE_VER1 sizeof(struct gpuar_line_unregister)
#define GPUAR_SUBMIT_SIZE_VER1 sizeof(struct gpuar_submit)
#define GPUAR_CANCEL_SIZE_VER1 sizeof(struct gpuar_cancel)
#define GPUAR_PORT_STATS_SIZE_VER1 sizeof(struct gpuar_port_stats)
#define GPUAR_POINT_STATS_SIZE_VER1 sizeof(struct gpuar_point_stats)
#define GPUAR_WORD_WAIT_SIZE_VER1 sizeof(struct gpuar_word_wait)
#define GPUAR_FENCE_WAIT_SIZE_VER1 sizeof(struct gpuar_fence_wait)

#endif /* GPUAR_KMOD_UARG_H */
