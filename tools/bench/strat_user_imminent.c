// SPDX-License-Identifier: MIT
/*
 * user-imminent: libgpuar's user engine port with imminent readiness
 * (GPUAR_PORT_IMMINENT), in an epoll set as an event loop holds it: the
 * port's fd turns readable at a predicted wait's early wake, and the
 * loop's gpuar_port_reap(0) claims the wait and watches its word until the
 * store. The same event loop as kport-epoll-imminent, without a module.
 */
#include "bench_libport.h"

static int uimm_open(const struct bench_strategy *st, struct bench_ctx *ctx,
		     void **state, char *why, size_t size)
{
	(void)st;
	return bench_libport_state_open(ctx, GPUAR_ENGINE_USER,
					GPUAR_PORT_IMMINENT, true, state, why,
					size);
}

const struct bench_strategy bench_strat_user_imminent = {
	.name = "user-imminent",
	.family = "user-imminent",
	.engine = "user",
	.plan = bench_plan_stated,
	.open = uimm_open,
	.submit = bench_libport_state_submit,
	.wait = bench_libport_epoll_wait,
	.close = bench_libport_state_close,
	.port_stats = bench_libport_port_stats,
	.lib_syscalls = bench_libport_lib_syscalls,
};
