// SPDX-License-Identifier: MIT
/*
 * The names that say which path a call is on: *_blocking blocks the
 * calling thread on one wait (the wait driver, no port); *port* goes
 * through a completion port, whose fd an event loop polls. Each is the
 * function of its 1.0 name (kept, exported at GPUAR_1.0, until 1.0), which
 * it calls: one behaviour, two names. The CUDA and HIP ones are the
 * backends' (backends/vendor/vendor_renamed.c).
 */
#include "internal.h"

GPUAR_EXPORT int gpuar_port_reap(struct gpuar_port *port,
				 struct gpuar_record *records, uint32_t max,
				 int64_t timeout_ns)
{
	return gpuar_reap(port, records, max, timeout_ns);
}

GPUAR_EXPORT int gpuar_port_reap_interruptible(struct gpuar_port *port,
					       struct gpuar_record *records,
					       uint32_t max, int64_t timeout_ns,
					       const struct gpuar_interrupt *intr)
{
	return gpuar_reap_interruptible(port, records, max, timeout_ns, intr);
}

GPUAR_EXPORT int gpuar_wait_blocking(struct gpuar_waiter *waiter,
				     const struct gpuar_src *src,
				     const struct gpuar_plan *plan,
				     uint64_t point, uint64_t user_data,
				     struct gpuar_record *rec,
				     struct gpuar_error *diag)
{
	return gpuar_wait(waiter, src, plan, point, user_data, rec, diag);
}
