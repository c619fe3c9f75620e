/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * ioctl argument sizes. A command is matched whole, size and direction bits
 * included: each number encodes its struct's v1 size forever, and the size
 * inside the struct says how big the caller's struct is.
 */
#ifndef GPUAR_KMOD_UARG_H
#define GPUAR_KMOD_UARG_H

#include <linux/build_bug.h>
#include <linux/stddef.h>

#include <linux/gpuar.h>

/*
 * The uapi header spells the v1 sizes as numbers, so userspace can name
 * them; they must be what the v1 structs measure. When a struct grows,
 * its VER1 size stays and this check moves to the new fields' end.
 */
static_assert(sizeof(struct gpuar_version) == GPUAR_VERSION_SIZE_VER1);
static_assert(sizeof(struct gpuar_port_create) == GPUAR_PORT_CREATE_SIZE_VER1);
static_assert(sizeof(struct gpuar_line_register) ==
	      GPUAR_LINE_REGISTER_SIZE_VER1);
static_assert(sizeof(struct gpuar_line_unregister) ==
	      GPUAR_LINE_UNREGISTER_SIZE_VER1);
static_assert(sizeof(struct gpuar_submit) == GPUAR_SUBMIT_SIZE_VER1);
static_assert(sizeof(struct gpuar_cancel) == GPUAR_CANCEL_SIZE_VER1);
static_assert(sizeof(struct gpuar_port_stats) == GPUAR_PORT_STATS_SIZE_VER1);
static_assert(sizeof(struct gpuar_point_stats) == GPUAR_POINT_STATS_SIZE_VER1);
static_assert(sizeof(struct gpuar_word_wait) == GPUAR_WORD_WAIT_SIZE_VER1);
static_assert(sizeof(struct gpuar_fence_wait) == GPUAR_FENCE_WAIT_SIZE_VER1);
static_assert(GPUAR_OUTCOME_COUNT <= GPUAR_OUTCOME_SLOTS);

#endif /* GPUAR_KMOD_UARG_H */
