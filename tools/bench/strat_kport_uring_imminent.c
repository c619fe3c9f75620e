// SPDX-License-Identifier: MIT
/*
 * kport-uring-imminent: the module's port with imminent readiness
 * through libgpuar's io_uring host: a multishot EPOLLPRI poll beside the
 * record read; at the early wake the waiting thread claims the wait and
 * watches its word, then the record is read. Skipped where the module
 * lacks GPUAR_FEATURE_IMMINENT or io_uring is unusable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_kport.h"
#include "bench_libport.h"

struct kuimm {
	struct bench_libport lp;	/* first: bench_libport_port_stats */
	struct gpuar_uring_host *host;
};

static int kuimm_probe(const struct bench_config *cfg, char *why, size_t size)
{
	if (bench_kport_probe(cfg->device_path, GPUAR_FEATURE_WORD_WAIT |
			      GPUAR_FEATURE_IMMINENT, why, size))
		return -1;
	if (!gpuar_caps_probe()->io_uring) {
		snprintf(why, size, "io_uring unavailable");
		return -1;
	}
	return 0;
}

static void kuimm_close(void *state, struct bench_ctx *ctx)
{
	struct kuimm *k = state;

	gpuar_uring_host_free(k->host);
	bench_libport_close(&k->lp, ctx);
	free(k);
}

static int kuimm_open(const struct bench_strategy *st, struct bench_ctx *ctx,
		      void **state, char *why, size_t size)
{
	struct kuimm *k = calloc(1, sizeof(*k));
	int err;

	(void)st;
	if (!k)
		return -ENOMEM;
	err = bench_libport_open(&k->lp, ctx, GPUAR_ENGINE_KERNEL,
				 GPUAR_PORT_IMMINENT, false, why, size);
	if (err) {
		free(k);
		return err;
	}
	err = gpuar_uring_host_new(&k->host, k->lp.port);
	if (err) {
		snprintf(why, size, "gpuar_uring_host_new: %s", strerror(-err));
		kuimm_close(k, ctx);
		return err;
	}
	*state = k;
	return 0;
}

static int host_reap(void *arg, struct bench_libport *lp, unsigned int room)
{
	return gpuar_uring_host_reap(arg, lp->rec, room, -1);
}

static int kuimm_wait(void *state, struct bench_ctx *ctx,
		      struct bench_done *done, unsigned int max)
{
	struct kuimm *k = state;

	return bench_libport_wait_loop(&k->lp, ctx, done, max, host_reap, k->host);
}

const struct bench_strategy bench_strat_kport_uring_imminent = {
	.name = "kport-uring-imminent",
	.family = "kport-uring-imminent",
	.engine = "kernel",
	.probe = kuimm_probe,
	.plan = bench_plan_stated,
	.open = kuimm_open,
	.submit = bench_libport_state_submit,
	.wait = kuimm_wait,
	.close = kuimm_close,
	.port_stats = bench_libport_port_stats,
	.lib_syscalls = bench_libport_lib_syscalls,
};
