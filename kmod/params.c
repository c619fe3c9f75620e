// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Module parameters. The per-port limits bound what one port can make the
 * kernel hold; the intervals bound how often timers fire for it.
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/sysfs.h>

#include "../core/busy_read.h"
#include "params.h"

/*
 * Defaults: CONFIG_GPUAR_* in an in-tree build, GPUAR_* Kbuild variables
 * out of tree (make -C kmod GPUAR_MAX_WAITS=8192), else these.
 */
#ifndef GPUAR_DEFAULT_MAX_WAITS
#define GPUAR_DEFAULT_MAX_WAITS 4096
#endif
#ifndef GPUAR_DEFAULT_MAX_LINES
#define GPUAR_DEFAULT_MAX_LINES 64
#endif
#ifndef GPUAR_DEFAULT_MAX_POINTS
#define GPUAR_DEFAULT_MAX_POINTS 64
#endif
#ifndef GPUAR_DEFAULT_MAX_PORTS
#define GPUAR_DEFAULT_MAX_PORTS 128
#endif
#ifndef GPUAR_DEFAULT_CHECK_FLOOR_US
#define GPUAR_DEFAULT_CHECK_FLOOR_US 10
#endif
#ifndef GPUAR_DEFAULT_POLL_INTERVAL_US
#define GPUAR_DEFAULT_POLL_INTERVAL_US 50
#endif
#ifndef GPUAR_DEFAULT_POLL_BACKSTOP_US
#define GPUAR_DEFAULT_POLL_BACKSTOP_US 1000000
#endif
#ifndef GPUAR_DEFAULT_CHECKS_PER_FIRE
#define GPUAR_DEFAULT_CHECKS_PER_FIRE 64
#endif
#ifndef GPUAR_DEFAULT_BUSY_READ_US
#define GPUAR_DEFAULT_BUSY_READ_US GPUAR_BUSY_READ_DEFAULT_US
#endif

#ifndef GPUAR_DEFAULT_WAKELAT_MAX_US
#define GPUAR_DEFAULT_WAKELAT_MAX_US 500
#endif

/*
 * Every parameter is range-checked when set, with the same bounds as
 * Kconfig gives the build-time defaults: a value outside them is refused
 * (EINVAL) rather than left to make allocations or intervals absurd.
 */
struct gpuar_param_range {
	unsigned int *val;
	unsigned int min;
	unsigned int max;
};

static int gpuar_param_set(const char *arg, const struct kernel_param *kp)
{
	const struct gpuar_param_range *r = kp->arg;
	unsigned int v;
	int ret;

	ret = kstrtouint(arg, 0, &v);
	if (ret)
		return ret;
	if (v < r->min || v > r->max)
		return -EINVAL;
	WRITE_ONCE(*r->val, v);
	return 0;
}

static int gpuar_param_get(char *buf, const struct kernel_param *kp)
{
	const struct gpuar_param_range *r = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(*r->val));
}

static const struct kernel_param_ops gpuar_param_ops = {
	.set = gpuar_param_set,
	.get = gpuar_param_get,
};

unsigned int gpuar_max_waits = GPUAR_DEFAULT_MAX_WAITS;
static const struct gpuar_param_range gpuar_max_waits_range = {
	.val = &gpuar_max_waits, .min = 1, .max = 1048576,
};
module_param_cb(max_waits, &gpuar_param_ops,
		(void *)&gpuar_max_waits_range, 0644);
MODULE_PARM_DESC(max_waits,
		 "Pending plus unread waits per port (1..1048576)");

unsigned int gpuar_max_lines = GPUAR_DEFAULT_MAX_LINES;
static const struct gpuar_param_range gpuar_max_lines_range = {
	.val = &gpuar_max_lines, .min = 1, .max = 65536,
};
module_param_cb(max_lines, &gpuar_param_ops,
		(void *)&gpuar_max_lines_range, 0644);
MODULE_PARM_DESC(max_lines,
		 "Registered lines per port (1..65536)");

/* Fixed at port creation: it sizes the port's estimator table. */
unsigned int gpuar_max_points = GPUAR_DEFAULT_MAX_POINTS;
static const struct gpuar_param_range gpuar_max_points_range = {
	.val = &gpuar_max_points, .min = 1, .max = 4096,
};
module_param_cb(max_points, &gpuar_param_ops,
		(void *)&gpuar_max_points_range, 0644);
MODULE_PARM_DESC(max_points,
		 "Estimator points per port (1..4096)");

unsigned int gpuar_max_ports = GPUAR_DEFAULT_MAX_PORTS;
static const struct gpuar_param_range gpuar_max_ports_range = {
	.val = &gpuar_max_ports, .min = 1, .max = 65536,
};
module_param_cb(max_ports, &gpuar_param_ops,
		(void *)&gpuar_max_ports_range, 0644);
MODULE_PARM_DESC(max_ports,
		 "Open ports per user (1..65536)");

unsigned int gpuar_check_floor_us = GPUAR_DEFAULT_CHECK_FLOOR_US;
static const struct gpuar_param_range gpuar_check_floor_us_range = {
	.val = &gpuar_check_floor_us, .min = 1, .max = 10000,
};
module_param_cb(check_floor_us, &gpuar_param_ops,
		(void *)&gpuar_check_floor_us_range, 0644);
MODULE_PARM_DESC(check_floor_us,
		 "Shortest interval between checks of one wait, us (1..10000)");

unsigned int gpuar_poll_interval_us = GPUAR_DEFAULT_POLL_INTERVAL_US;
static const struct gpuar_param_range gpuar_poll_interval_us_range = {
	.val = &gpuar_poll_interval_us, .min = 1, .max = 10000,
};
module_param_cb(poll_interval_us, &gpuar_param_ops,
		(void *)&gpuar_poll_interval_us_range, 0644);
MODULE_PARM_DESC(poll_interval_us,
		 "Check interval of poll plans, us (1..10000)");

unsigned int gpuar_poll_backstop_us = GPUAR_DEFAULT_POLL_BACKSTOP_US;
static const struct gpuar_param_range gpuar_poll_backstop_us_range = {
	.val = &gpuar_poll_backstop_us, .min = 1, .max = 1000000,
};
module_param_cb(poll_backstop_us, &gpuar_param_ops,
		(void *)&gpuar_poll_backstop_us_range, 0644);
MODULE_PARM_DESC(poll_backstop_us,
		 "Backstop of poll plans and of flag plans with none, us (1..1000000)");

unsigned int gpuar_checks_per_fire = GPUAR_DEFAULT_CHECKS_PER_FIRE;
static const struct gpuar_param_range gpuar_checks_per_fire_range = {
	.val = &gpuar_checks_per_fire, .min = 1, .max = 4096,
};
module_param_cb(checks_per_fire, &gpuar_param_ops,
		(void *)&gpuar_checks_per_fire_range, 0644);
MODULE_PARM_DESC(checks_per_fire,
		 "Most word checks one timer firing makes (1..4096)");

unsigned int gpuar_busy_read_us = GPUAR_DEFAULT_BUSY_READ_US;
static const struct gpuar_param_range gpuar_busy_read_us_range = {
	.val = &gpuar_busy_read_us, .min = 0, .max = 100000,
};
module_param_cb(busy_read_us, &gpuar_param_ops,
		(void *)&gpuar_busy_read_us_range, 0644);
MODULE_PARM_DESC(busy_read_us,
		 "Most time one read() spins checking words, us; 0 disables (0..100000)");

unsigned int gpuar_wakelat_max_us = GPUAR_DEFAULT_WAKELAT_MAX_US;
static const struct gpuar_param_range gpuar_wakelat_max_us_range = {
	.val = &gpuar_wakelat_max_us, .min = 0, .max = 100000,
};
module_param_cb(wakelat_max_us, &gpuar_param_ops,
		(void *)&gpuar_wakelat_max_us_range, 0644);
MODULE_PARM_DESC(wakelat_max_us,
		 "Ceiling on one wake-up latency sample, us (0..100000)");
