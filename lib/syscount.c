// SPDX-License-Identifier: MIT
/*
 * Counting the system calls the library makes for a port (internal.h's
 * GPUAR_SYS), which gpuar_port_lib_stats reports (port.c). The count is
 * the honest price of a wait: a reap that finds its records in the
 * shared completion area makes none.
 */
#include "port.h"

_Thread_local u64 gpuar_sys_tls;

void gpuar_sys_charge(struct gpuar_port *port, u64 mark)
{
	u64 made = gpuar_sys_tls - mark;

	gpuar_sys_tls = mark;
	if (made)
		__atomic_add_fetch(&port->syscalls, made, __ATOMIC_RELAXED);
}
