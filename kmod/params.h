/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Module parameters: the limits and intervals an administrator may tune.
 * Read with READ_ONCE at the point of use, so a change through sysfs takes
 * effect for later requests without a lock.
 */
#ifndef GPUAR_KMOD_PARAMS_H
#define GPUAR_KMOD_PARAMS_H

#include <linux/types.h>

extern unsigned int gpuar_max_waits;		/* pending + unread, per port */
extern unsigned int gpuar_max_lines;		/* per port */
extern unsigned int gpuar_max_points;		/* estimator points per port */
extern unsigned int gpuar_max_ports;		/* per user */
extern unsigned int gpuar_check_floor_us;	/* shortest check interval */
extern unsigned int gpuar_poll_interval_us;	/* interval of poll plans */
extern unsigned int gpuar_poll_backstop_us;	/* backstop of poll plans */
extern unsigned int gpuar_checks_per_fire;	/* cap per timer firing */
extern unsigned int gpuar_busy_read_us;	/* spin budget per read() */
extern unsigned int gpuar_wakelat_max_us;	/* ceiling of a wake-up sample */
extern unsigned int gpuar_check_budget;	/* timer checks/s per user */
extern unsigned int gpuar_check_budget_all;	/* ... of all users */
extern unsigned int gpuar_lease_us;		/* lease of a watched wait */

#define GPUAR_PARAM(name) ((u64)READ_ONCE(gpuar_##name))

#endif /* GPUAR_KMOD_PARAMS_H */
