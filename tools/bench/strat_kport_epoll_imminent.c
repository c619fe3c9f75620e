// SPDX-License-Identifier: MIT
/*
 * kport-epoll-imminent: the module's port with imminent readiness
 * (GPUAR_PORT_IMMINENT) through libgpuar, in an epoll set for POLLIN and
 * POLLPRI as an event loop holds it. At a predicted wait's early wake the
 * port raises EPOLLPRI; the loop's gpuar_port_reap(0) claims the wait and
 * watches its word in the loop's own thread until the store, then reads
 * the record. Skipped where the module lacks GPUAR_FEATURE_IMMINENT.
 */
#include "bench_kport.h"
#include "bench_libport.h"

static int kepi_probe(const struct bench_config *cfg, char *why, size_t size)
{
	return bench_kport_probe(cfg->device_path, GPUAR_FEATURE_WORD_WAIT |
				 GPUAR_FEATURE_IMMINENT, why, size);
}

static int kepi_open(const struct bench_strategy *st, struct bench_ctx *ctx,
		     void **state, char *why, size_t size)
{
	(void)st;
	return bench_libport_state_open(ctx, GPUAR_ENGINE_KERNEL,
					GPUAR_PORT_IMMINENT, true, state, why,
					size);
}

const struct bench_strategy bench_strat_kport_epoll_imminent = {
	.name = "kport-epoll-imminent",
	.family = "kport-epoll-imminent",
	.engine = "kernel",
	.probe = kepi_probe,
	.plan = bench_plan_stated,
	.open = kepi_open,
	.submit = bench_libport_state_submit,
	.wait = bench_libport_epoll_wait,
	.close = bench_libport_state_close,
	.port_stats = bench_libport_port_stats,
	.lib_syscalls = bench_libport_lib_syscalls,
};
