/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Every default and limit of a port, in one place for both engines: the
 * module's parameters (kmod/params.c) start from these and are bounded by
 * the _MIN/_MAX pairs, and the library's userspace port and wait driver use
 * the same numbers, so a port behaves the same whichever engine runs it.
 *
 * The defaults may be overridden at build time (an in-tree build's
 * CONFIG_GPUAR_*, an out-of-tree build's GPUAR_DEFAULT_* Kbuild variables);
 * the bounds may not: they are part of what the module promises.
 */
#ifndef GPUAR_CORE_DEFAULTS_H
#define GPUAR_CORE_DEFAULTS_H

/* Pending plus unread waits per port. */
#ifndef GPUAR_DEFAULT_MAX_WAITS
#define GPUAR_DEFAULT_MAX_WAITS 4096
#endif
#define GPUAR_MAX_WAITS_MIN 1
#define GPUAR_MAX_WAITS_MAX 1048576

/* Registered lines per port. */
#ifndef GPUAR_DEFAULT_MAX_LINES
#define GPUAR_DEFAULT_MAX_LINES 64
#endif
#define GPUAR_MAX_LINES_MIN 1
#define GPUAR_MAX_LINES_MAX 65536

/* Estimator points per port; fixed when the port is made (sizes its table). */
#ifndef GPUAR_DEFAULT_MAX_POINTS
#define GPUAR_DEFAULT_MAX_POINTS 64
#endif
#define GPUAR_MAX_POINTS_MIN 1
#define GPUAR_MAX_POINTS_MAX 4096

/* Open module ports per user. */
#ifndef GPUAR_DEFAULT_MAX_PORTS
#define GPUAR_DEFAULT_MAX_PORTS 128
#endif
#define GPUAR_MAX_PORTS_MIN 1
#define GPUAR_MAX_PORTS_MAX 65536

/*
 * No wait is checked more often than this, whatever its plan says: a
 * flag plan's park_ns below it (park_us=0 included) is raised to it.
 */
#ifndef GPUAR_DEFAULT_CHECK_FLOOR_US
#define GPUAR_DEFAULT_CHECK_FLOOR_US 10
#endif
#define GPUAR_CHECK_FLOOR_US_MIN 1
#define GPUAR_CHECK_FLOOR_US_MAX 10000

/* Check interval of poll plans, which carry none of their own. */
#ifndef GPUAR_DEFAULT_POLL_INTERVAL_US
#define GPUAR_DEFAULT_POLL_INTERVAL_US 50
#endif
#define GPUAR_POLL_INTERVAL_US_MIN 1
#define GPUAR_POLL_INTERVAL_US_MAX 10000

/*
 * The backstop of poll plans and of flag plans whose backstop_us is 0:
 * "0" means this default everywhere (port and wait driver alike).
 */
#ifndef GPUAR_DEFAULT_BACKSTOP_US
#define GPUAR_DEFAULT_BACKSTOP_US 1000000
#endif
#define GPUAR_BACKSTOP_US_MIN 1
#define GPUAR_BACKSTOP_US_MAX 1000000

/* Most word checks one firing of a port's timer makes. */
#ifndef GPUAR_DEFAULT_CHECKS_PER_FIRE
#define GPUAR_DEFAULT_CHECKS_PER_FIRE 64
#endif
#define GPUAR_CHECKS_PER_FIRE_MIN 1
#define GPUAR_CHECKS_PER_FIRE_MAX 4096

/*
 * Busy-read's spin budget per read()/gpuar_reap() call: long enough to
 * cover a plan's margin plus the wake-up latency (the spin starts that far
 * before the predicted completion), short enough that a late device does
 * not hold a CPU. 0 disables busy-read.
 */
#ifndef GPUAR_DEFAULT_BUSY_READ_US
#define GPUAR_DEFAULT_BUSY_READ_US 1000
#endif
#define GPUAR_BUSY_READ_US_MIN 0
#define GPUAR_BUSY_READ_US_MAX 100000

/* Waits one busy-read round spins on at once, the earliest due first. */
#define GPUAR_BUSY_WAITS 8

/*
 * Ceiling on one wake-up latency sample: one long stall (a preempted
 * vCPU, a loop that ran late) must not make blocked readers wake
 * absurdly early.
 */
#ifndef GPUAR_DEFAULT_WAKELAT_MAX_US
#define GPUAR_DEFAULT_WAKELAT_MAX_US 500
#endif
#define GPUAR_WAKELAT_MAX_US_MIN 0
#define GPUAR_WAKELAT_MAX_US_MAX 100000

/*
 * Word checks the port timers of one user may make per second, all the
 * user's ports together. A timer firing costs at least one check. Past the
 * budget the checks are not refused, they come later: a firing that finds
 * the budget spent reserves the next check and is re-armed for when it is
 * earned, a port whose reservation paid its firing reserves its next one
 * while the budget stays spent, and no port's timer is armed before its
 * reservation, so a user's firings per second, not only its checks, stay
 * below the budget plus GPUAR_CHECK_BURST_MS of it plus one firing per
 * port, however many ports and waits the user has.
 */
#ifndef GPUAR_DEFAULT_CHECK_BUDGET
#define GPUAR_DEFAULT_CHECK_BUDGET 50000
#endif
#define GPUAR_CHECK_BUDGET_MIN 100
#define GPUAR_CHECK_BUDGET_MAX 10000000

/*
 * Word checks the port timers of all users may make per second together:
 * users are kuids, and one person with a range of subordinate uids (a user
 * namespace) is thousands of users, each with a check_budget. A check is
 * taken from the user's budget and from this one, or from neither. The
 * default is four users at the default budget.
 */
#ifndef GPUAR_DEFAULT_CHECK_BUDGET_ALL
#define GPUAR_DEFAULT_CHECK_BUDGET_ALL 200000
#endif
#define GPUAR_CHECK_BUDGET_ALL_MIN 1000
#define GPUAR_CHECK_BUDGET_ALL_MAX 100000000

/* Unused budget a user (and the machine) keeps, in ms of the budget. */
#define GPUAR_CHECK_BURST_MS 10

/*
 * A lease: how long the port's timer leaves a word wait alone while
 * someone else watches its word (a busy reader, which renews it while it
 * spins, or the process that claimed an imminent wait). A watcher that
 * stops (preempted, gone) loses the wait to the timer within one lease.
 * The default lease of a claim; a claim may ask for up to
 * GPUAR_LEASE_US_MAX.
 */
#ifndef GPUAR_DEFAULT_LEASE_US
#define GPUAR_DEFAULT_LEASE_US 200
#endif
#define GPUAR_LEASE_US_MIN 10
#define GPUAR_LEASE_US_MAX 100000

/*
 * The wait driver (a waiter: one caller's waits, no port). It checks only
 * for its own caller, so it may check more often than a port, but never
 * below 1 us: a park of 0 ns would never let a virtual clock move.
 */
#define GPUAR_WAITER_CHECK_FLOOR_NS 1000ULL

/*
 * A waiter's point table is the caller's memory alone, sized at creation:
 * larger by default than a port's, and bounded only against overflow.
 */
#define GPUAR_WAITER_DEFAULT_MAX_POINTS 1024
#define GPUAR_WAITER_MAX_POINTS_MAX (1U << 24)

/*
 * The executor parks on a wait's completion source for at most this long
 * at a time when its options give no park bound, then looks again.
 */
#define GPUAR_EXEC_DEFAULT_PARK_BOUND_NS 100000ULL

#endif /* GPUAR_CORE_DEFAULTS_H */
