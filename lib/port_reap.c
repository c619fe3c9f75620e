// SPDX-License-Identifier: MIT
/*
 * Reaping a port (gpuar_reap, gpuar_reap_interruptible) and running it
 * (gpuar_port_process): the engine's reap, and imminent readiness's
 * claim and watch around it. Each call charges the port with the system
 * calls it made (lib/syscount.c).
 */
#include "port.h"

#include <errno.h>

static int reap(struct gpuar_port *port, struct gpuar_record *records,
		u32 max, int64_t timeout_ns, int intr_fd)
{
	u64 deadline;
	int ret;

	if (intr_fd >= 0 && gpuar_interrupt_fd_set(intr_fd))
		return -EINTR;
	if (!gpuar_port_imminent(port))
		return port->ops->reap(port, records, max, timeout_ns, intr_fd);
	/* A zero timeout still watches, for one lease: what it opted into. */
	deadline = gpuar_deadline_in(timeout_ns);
	ret = gpuar_imminent_reap(port, records, max,
				  timeout_ns == 0 ? GPUAR_U64_MAX : deadline,
				  timeout_ns == 0);
	if (ret != -EAGAIN || timeout_ns == 0)
		return ret;
	if (intr_fd >= 0 && gpuar_interrupt_fd_set(intr_fd))
		return -EINTR;
	if (deadline != GPUAR_U64_MAX) {
		u64 now = gpuar_now_ns();

		if (now >= deadline)
			return -ETIME;
		timeout_ns = (int64_t)(deadline - now);
	}
	return port->ops->reap(port, records, max, timeout_ns, intr_fd);
}

GPUAR_EXPORT int gpuar_reap_interruptible(struct gpuar_port *port,
					  struct gpuar_record *records,
					  uint32_t max, int64_t timeout_ns,
					  const struct gpuar_interrupt *intr)
{
	u64 mark = gpuar_sys_mark();
	int ret;

	if (!port || !records || !max)
		return -EINVAL;
	if (port_forked(port))
		return -EPERM;
	ret = reap(port, records, max, timeout_ns, gpuar_interrupt_fd_of(intr));
	gpuar_sys_charge(port, mark);
	return ret;
}

GPUAR_EXPORT int gpuar_reap(struct gpuar_port *port,
			    struct gpuar_record *records, uint32_t max,
			    int64_t timeout_ns)
{
	return gpuar_reap_interruptible(port, records, max, timeout_ns, NULL);
}

static int process(struct gpuar_port *port)
{
	int n, hit;

	n = port->ops->process(port);
	/* Records are queued: the caller reads them first, claims later. */
	if (n != 0)
		return n;
	hit = gpuar_imminent_serve(port, GPUAR_U64_MAX, true);
	if (hit <= 0)
		return hit;
	n = port->ops->process(port);
	/*
	 * The module checks the claimed waits only when they are read, so
	 * its queued count does not hold their records yet.
	 */
	return n < 0 || port->engine != GPUAR_ENGINE_KERNEL ? n : n + hit;
}

GPUAR_EXPORT int gpuar_port_process(struct gpuar_port *port)
{
	u64 mark = gpuar_sys_mark();
	int ret = port_usable(port);

	if (ret)
		return ret;
	ret = process(port);
	gpuar_sys_charge(port, mark);
	return ret;
}
