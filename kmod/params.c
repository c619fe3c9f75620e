// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Module parameters. The per-port limits bound what one port can make the
 * kernel hold; the intervals bound how often timers fire for it.
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/stringify.h>
#include <linux/sysfs.h>

#include "../core/defaults.h"
#include "params.h"

/*
 * Every parameter starts from core/defaults.h's default (which an in-tree
 * build's CONFIG_GPUAR_* or an out-of-tree build's GPUAR_* Kbuild variable
 * may override) and is range-checked when set, with the bounds defaults.h
 * gives (Kconfig's are the same): a value outside them is refused (EINVAL)
 * rather than left to make allocations or intervals absurd.
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
	.val = &gpuar_max_waits,
	.min = GPUAR_MAX_WAITS_MIN, .max = GPUAR_MAX_WAITS_MAX,
};
module_param_cb(max_waits, &gpuar_param_ops,
		(void *)&gpuar_max_waits_range, 0644);
MODULE_PARM_DESC(max_waits,
		 "Pending plus unread waits per port ("
		 __stringify(GPUAR_MAX_WAITS_MIN) ".."
		 __stringify(GPUAR_MAX_WAITS_MAX) ")");

unsigned int gpuar_max_lines = GPUAR_DEFAULT_MAX_LINES;
static const struct gpuar_param_range gpuar_max_lines_range = {
	.val = &gpuar_max_lines,
	.min = GPUAR_MAX_LINES_MIN, .max = GPUAR_MAX_LINES_MAX,
};
module_param_cb(max_lines, &gpuar_param_ops,
		(void *)&gpuar_max_lines_range, 0644);
MODULE_PARM_DESC(max_lines,
		 "Registered lines per port ("
		 __stringify(GPUAR_MAX_LINES_MIN) ".."
		 __stringify(GPUAR_MAX_LINES_MAX) ")");

/* Fixed at port creation: it sizes the port's estimator table. */
unsigned int gpuar_max_points = GPUAR_DEFAULT_MAX_POINTS;
static const struct gpuar_param_range gpuar_max_points_range = {
	.val = &gpuar_max_points,
	.min = GPUAR_MAX_POINTS_MIN, .max = GPUAR_MAX_POINTS_MAX,
};
module_param_cb(max_points, &gpuar_param_ops,
		(void *)&gpuar_max_points_range, 0644);
MODULE_PARM_DESC(max_points,
		 "Estimator points per port ("
		 __stringify(GPUAR_MAX_POINTS_MIN) ".."
		 __stringify(GPUAR_MAX_POINTS_MAX) ")");

unsigned int gpuar_max_ports = GPUAR_DEFAULT_MAX_PORTS;
static const struct gpuar_param_range gpuar_max_ports_range = {
	.val = &gpuar_max_ports,
	.min = GPUAR_MAX_PORTS_MIN, .max = GPUAR_MAX_PORTS_MAX,
};
module_param_cb(max_ports, &gpuar_param_ops,
		(void *)&gpuar_max_ports_range, 0644);
MODULE_PARM_DESC(max_ports,
		 "Open ports per user ("
		 __stringify(GPUAR_MAX_PORTS_MIN) ".."
		 __stringify(GPUAR_MAX_PORTS_MAX) ")");

unsigned int gpuar_check_floor_us = GPUAR_DEFAULT_CHECK_FLOOR_US;
static const struct gpuar_param_range gpuar_check_floor_us_range = {
	.val = &gpuar_check_floor_us,
	.min = GPUAR_CHECK_FLOOR_US_MIN, .max = GPUAR_CHECK_FLOOR_US_MAX,
};
module_param_cb(check_floor_us, &gpuar_param_ops,
		(void *)&gpuar_check_floor_us_range, 0644);
MODULE_PARM_DESC(check_floor_us,
		 "Shortest interval between checks of one wait, us ("
		 __stringify(GPUAR_CHECK_FLOOR_US_MIN) ".."
		 __stringify(GPUAR_CHECK_FLOOR_US_MAX) ")");

unsigned int gpuar_poll_interval_us = GPUAR_DEFAULT_POLL_INTERVAL_US;
static const struct gpuar_param_range gpuar_poll_interval_us_range = {
	.val = &gpuar_poll_interval_us,
	.min = GPUAR_POLL_INTERVAL_US_MIN, .max = GPUAR_POLL_INTERVAL_US_MAX,
};
module_param_cb(poll_interval_us, &gpuar_param_ops,
		(void *)&gpuar_poll_interval_us_range, 0644);
MODULE_PARM_DESC(poll_interval_us,
		 "Check interval of poll plans, us ("
		 __stringify(GPUAR_POLL_INTERVAL_US_MIN) ".."
		 __stringify(GPUAR_POLL_INTERVAL_US_MAX) ")");

unsigned int gpuar_poll_backstop_us = GPUAR_DEFAULT_BACKSTOP_US;
static const struct gpuar_param_range gpuar_poll_backstop_us_range = {
	.val = &gpuar_poll_backstop_us,
	.min = GPUAR_BACKSTOP_US_MIN, .max = GPUAR_BACKSTOP_US_MAX,
};
module_param_cb(poll_backstop_us, &gpuar_param_ops,
		(void *)&gpuar_poll_backstop_us_range, 0644);
MODULE_PARM_DESC(poll_backstop_us,
		 "Backstop of poll plans and of flag plans with none, us ("
		 __stringify(GPUAR_BACKSTOP_US_MIN) ".."
		 __stringify(GPUAR_BACKSTOP_US_MAX) ")");

unsigned int gpuar_checks_per_fire = GPUAR_DEFAULT_CHECKS_PER_FIRE;
static const struct gpuar_param_range gpuar_checks_per_fire_range = {
	.val = &gpuar_checks_per_fire,
	.min = GPUAR_CHECKS_PER_FIRE_MIN, .max = GPUAR_CHECKS_PER_FIRE_MAX,
};
module_param_cb(checks_per_fire, &gpuar_param_ops,
		(void *)&gpuar_checks_per_fire_range, 0644);
MODULE_PARM_DESC(checks_per_fire,
		 "Most word checks one timer firing makes ("
		 __stringify(GPUAR_CHECKS_PER_FIRE_MIN) ".."
		 __stringify(GPUAR_CHECKS_PER_FIRE_MAX) ")");

unsigned int gpuar_busy_read_us = GPUAR_DEFAULT_BUSY_READ_US;
static const struct gpuar_param_range gpuar_busy_read_us_range = {
	.val = &gpuar_busy_read_us,
	.min = GPUAR_BUSY_READ_US_MIN, .max = GPUAR_BUSY_READ_US_MAX,
};
module_param_cb(busy_read_us, &gpuar_param_ops,
		(void *)&gpuar_busy_read_us_range, 0644);
MODULE_PARM_DESC(busy_read_us,
		 "Most time one read() spins checking words, us; 0 disables ("
		 __stringify(GPUAR_BUSY_READ_US_MIN) ".."
		 __stringify(GPUAR_BUSY_READ_US_MAX) ")");

unsigned int gpuar_wakelat_max_us = GPUAR_DEFAULT_WAKELAT_MAX_US;
static const struct gpuar_param_range gpuar_wakelat_max_us_range = {
	.val = &gpuar_wakelat_max_us,
	.min = GPUAR_WAKELAT_MAX_US_MIN, .max = GPUAR_WAKELAT_MAX_US_MAX,
};
module_param_cb(wakelat_max_us, &gpuar_param_ops,
		(void *)&gpuar_wakelat_max_us_range, 0644);
MODULE_PARM_DESC(wakelat_max_us,
		 "Ceiling on one wake-up latency sample, us ("
		 __stringify(GPUAR_WAKELAT_MAX_US_MIN) ".."
		 __stringify(GPUAR_WAKELAT_MAX_US_MAX) ")");

unsigned int gpuar_check_budget = GPUAR_DEFAULT_CHECK_BUDGET;
static const struct gpuar_param_range gpuar_check_budget_range = {
	.val = &gpuar_check_budget,
	.min = GPUAR_CHECK_BUDGET_MIN, .max = GPUAR_CHECK_BUDGET_MAX,
};
module_param_cb(check_budget, &gpuar_param_ops,
		(void *)&gpuar_check_budget_range, 0644);
MODULE_PARM_DESC(check_budget,
		 "Word checks per second of one user's port timers; more are delayed ("
		 __stringify(GPUAR_CHECK_BUDGET_MIN) ".."
		 __stringify(GPUAR_CHECK_BUDGET_MAX) ")");

unsigned int gpuar_check_budget_all = GPUAR_DEFAULT_CHECK_BUDGET_ALL;
static const struct gpuar_param_range gpuar_check_budget_all_range = {
	.val = &gpuar_check_budget_all,
	.min = GPUAR_CHECK_BUDGET_ALL_MIN, .max = GPUAR_CHECK_BUDGET_ALL_MAX,
};
module_param_cb(check_budget_all, &gpuar_param_ops,
		(void *)&gpuar_check_budget_all_range, 0644);
MODULE_PARM_DESC(check_budget_all,
		 "Word checks per second of all users' port timers together; more are delayed ("
		 __stringify(GPUAR_CHECK_BUDGET_ALL_MIN) ".."
		 __stringify(GPUAR_CHECK_BUDGET_ALL_MAX) ")");

unsigned int gpuar_lease_us = GPUAR_DEFAULT_LEASE_US;
static const struct gpuar_param_range gpuar_lease_us_range = {
	.val = &gpuar_lease_us,
	.min = GPUAR_LEASE_US_MIN, .max = GPUAR_LEASE_US_MAX,
};
module_param_cb(lease_us, &gpuar_param_ops,
		(void *)&gpuar_lease_us_range, 0644);
MODULE_PARM_DESC(lease_us,
		 "Lease of a busy reader's and (by default) a claim's waits, us ("
		 __stringify(GPUAR_LEASE_US_MIN) ".."
		 __stringify(GPUAR_LEASE_US_MAX) ")");
