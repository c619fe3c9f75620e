// SPDX-License-Identifier: MIT
/*
 * lib-reap: libgpuar's kernel engine port, the waiter blocked in a plain
 * gpuar_port_reap() (no timeout): the library's blocking read, which the
 * module busy-reads. What a program that just calls the library gets,
 * beside kport-read, the same wait without the library.
 */
#include "bench_kport.h"
#include "bench_libport.h"

static int lreap_probe(const struct bench_config *cfg, char *why, size_t size)
{
	return bench_kport_probe(cfg->device_path, GPUAR_FEATURE_WORD_WAIT,
				 why, size);
}

static int lreap_open(const struct bench_strategy *st, struct bench_ctx *ctx,
		      void **state, char *why, size_t size)
{
	(void)st;
	return bench_libport_state_open(ctx, GPUAR_ENGINE_KERNEL, 0, false, state,
					why, size);
}

const struct bench_strategy bench_strat_lib_reap = {
	.name = "lib-reap",
	.family = "lib-reap",
	.engine = "kernel",
	.probe = lreap_probe,
	.plan = bench_plan_stated,
	.open = lreap_open,
	.submit = bench_libport_state_submit,
	.wait = bench_libport_reap_wait,
	.close = bench_libport_state_close,
	.port_stats = bench_libport_port_stats,
	.lib_syscalls = bench_libport_lib_syscalls,
};
