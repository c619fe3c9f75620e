// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "bench_report.h"

const char *bench_result_status(const struct bench_run *run,
				const struct bench_result *r)
{
	if (r->skipped)
		return "skipped";
	return r->reps == run->cfg.reps ? "ok" : "error";
}

bool bench_oracle_ran(const struct bench_run *run)
{
	for (unsigned int i = 0; i < run->results; i++)
		if (!strcmp(run->result[i].st.family, "oracle") &&
		    !run->result[i].skipped && run->result[i].reps)
			return true;
	return false;
}

static void target(struct bench_target *t, const char *name,
		   const struct bench_result *r, const struct bench_result *floor,
		   const char *floor_name, double measured, double limit,
		   const char *unit)
{
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->unit = unit;
	t->ran = r != NULL;
	if (!r || !floor) {
		t->state = "unmeasured";
		snprintf(t->why, sizeof(t->why), "%s not measured", !r ? "strategy" : floor_name);
		return;
	}
	t->measured = measured;
	t->limit = limit;
	t->state = measured <= limit ? "met" : "missed";
}

unsigned int bench_targets(const struct bench_run *run, struct bench_target *t,
			   unsigned int max)
{
	const struct bench_result *spin = bench_find(run, "spin");
	const struct bench_result *futex = bench_find(run, "futex-wake");
	const struct bench_result *oracle = run->oracle_chosen >= 0 ?
		&run->result[run->oracle_chosen] : NULL;
	const struct bench_result *kr = bench_find(run, "kport-read");
	const struct bench_result *ke = bench_find(run, "kport-epoll");
	const struct bench_result *ku = bench_find(run, "kport-uring");
	const struct bench_result *up = bench_find(run, "user-predict");
	const struct bench_result *fv = bench_find(run, "fence-vgem");
	double park_us = (double)run->cfg.plan.park_ns / 1000.0;
	/* Why a target against the oracle has no floor. */
	const char *no_oracle = run->cfg.device != BENCH_DEVICE_SIM ?
		"oracle (simulated device only)" : !bench_oracle_ran(run) ?
		"oracle" : "oracle (no margin qualified)";
	unsigned int n = 0;

#define M(r, f) ((r) ? (r)->sum.f.median : 0.0)
	if (n < max)
		target(&t[n++], "kport-read p50 <= 2x spin p50 + 2 us", kr, spin, "spin",
		       M(kr, p50), 2 * M(spin, p50) + 2, "us");
	if (n < max)
		target(&t[n++], "kport-read system CPU <= 1.5x oracle", kr, oracle,
		       no_oracle, M(kr, system_cpu_us),
		       1.5 * M(oracle, system_cpu_us), "us/wait");
	if (n < max)
		target(&t[n++], "kport-epoll system CPU <= 1.5x futex-wake", ke, futex,
		       "futex-wake", M(ke, system_cpu_us), 1.5 * M(futex, system_cpu_us),
		       "us/wait");
	if (n < max)
		target(&t[n++], "kport-epoll p50 <= futex-wake p50 + park_us", ke, futex,
		       "futex-wake", M(ke, p50), M(futex, p50) + park_us, "us");
	if (n < max)
		target(&t[n++], "kport-uring system CPU <= 1.5x futex-wake", ku, futex,
		       "futex-wake", M(ku, system_cpu_us), 1.5 * M(futex, system_cpu_us),
		       "us/wait");
	if (n < max)
		target(&t[n++], "kport-uring p50 <= futex-wake p50 + park_us", ku, futex,
		       "futex-wake", M(ku, p50), M(futex, p50) + park_us, "us");
	if (n < max)
		target(&t[n++], "user-predict p50 <= 2x spin p50 + 5 us", up, spin, "spin",
		       M(up, p50), 2 * M(spin, p50) + 5, "us");
	if (n < max)
		target(&t[n++], "user-predict system CPU <= 1.5x oracle", up, oracle,
		       no_oracle, M(up, system_cpu_us),
		       1.5 * M(oracle, system_cpu_us), "us/wait");
	if (n < max)
		target(&t[n++], "fence-vgem p50 <= 1.5x futex-wake", fv, futex,
		       "futex-wake", M(fv, p50), 1.5 * M(futex, p50), "us");
	if (n < max)
		target(&t[n++], "fence-vgem system CPU <= 1.5x futex-wake", fv, futex,
		       "futex-wake", M(fv, system_cpu_us), 1.5 * M(futex, system_cpu_us),
		       "us/wait");
#undef M
	return n;
}
