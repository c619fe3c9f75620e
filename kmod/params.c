// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Module parameters. The per-port limits bound what one port can make the
 * kernel hold; the intervals bound how often timers fire for it.
 */
#include <linux/moduleparam.h>

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
#define GPUAR_DEFAULT_BUSY_READ_US 200
#endif

unsigned int gpuar_max_waits = GPUAR_DEFAULT_MAX_WAITS;
module_param_named(max_waits, gpuar_max_waits, uint, 0644);
MODULE_PARM_DESC(max_waits, "Pending plus unread waits per port");

unsigned int gpuar_max_lines = GPUAR_DEFAULT_MAX_LINES;
module_param_named(max_lines, gpuar_max_lines, uint, 0644);
MODULE_PARM_DESC(max_lines, "Registered lines per port");

/* Fixed at port creation: it sizes the port's estimator table. */
unsigned int gpuar_max_points = GPUAR_DEFAULT_MAX_POINTS;
module_param_named(max_points, gpuar_max_points, uint, 0644);
MODULE_PARM_DESC(max_points, "Estimator points per port, 1..4096");

unsigned int gpuar_max_ports = GPUAR_DEFAULT_MAX_PORTS;
module_param_named(max_ports, gpuar_max_ports, uint, 0644);
MODULE_PARM_DESC(max_ports, "Open ports per user");

unsigned int gpuar_check_floor_us = GPUAR_DEFAULT_CHECK_FLOOR_US;
module_param_named(check_floor_us, gpuar_check_floor_us, uint, 0644);
MODULE_PARM_DESC(check_floor_us,
		 "Shortest interval between checks of one wait, us");

unsigned int gpuar_poll_interval_us = GPUAR_DEFAULT_POLL_INTERVAL_US;
module_param_named(poll_interval_us, gpuar_poll_interval_us, uint, 0644);
MODULE_PARM_DESC(poll_interval_us, "Check interval of poll plans, us");

unsigned int gpuar_poll_backstop_us = GPUAR_DEFAULT_POLL_BACKSTOP_US;
module_param_named(poll_backstop_us, gpuar_poll_backstop_us, uint, 0644);
MODULE_PARM_DESC(poll_backstop_us,
		 "Backstop of poll plans and of flag plans with none, us");

unsigned int gpuar_checks_per_fire = GPUAR_DEFAULT_CHECKS_PER_FIRE;
module_param_named(checks_per_fire, gpuar_checks_per_fire, uint, 0644);
MODULE_PARM_DESC(checks_per_fire,
		 "Most word checks one timer firing makes");

unsigned int gpuar_busy_read_us = GPUAR_DEFAULT_BUSY_READ_US;
module_param_named(busy_read_us, gpuar_busy_read_us, uint, 0644);
MODULE_PARM_DESC(busy_read_us,
		 "Most time one read() spins checking words, us; 0 disables");
