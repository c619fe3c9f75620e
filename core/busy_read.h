/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Busy-read's default spin budget, one value for both engines: the
 * module's busy_read_us parameter (kmod/params.c, unless Kconfig or the
 * build sets another) and the user engine's busy_read_us port option
 * (0 there means this). A blocked reader spins on the words of its waits
 * for at most this long per read()/gpuar_reap() call, then sleeps: long
 * enough to cover a plan's margin plus the wake-up latency (the spin
 * starts that far before the predicted completion), short enough that a
 * late device does not hold a CPU.
 */
#ifndef GPUAR_CORE_BUSY_READ_H
#define GPUAR_CORE_BUSY_READ_H

#define GPUAR_BUSY_READ_DEFAULT_US 1000

#endif /* GPUAR_CORE_BUSY_READ_H */
