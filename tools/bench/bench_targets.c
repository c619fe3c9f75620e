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

#define M(r, f) ((r) ? (r)->sum.f.median : 0.0)

/* The targets of imminent readiness, per strategy (names: static text). */
struct imminent_names {
	const char *p50_read, *p50_futex, *cpu_spin, *cpu_read, *timers;
};

static const struct imminent_names imminent_epoll = {
	"kport-epoll-imminent p50 <= kport-read p50 + 5 us",
	"kport-epoll-imminent p50 <= 0.5x futex-wake p50",
	"kport-epoll-imminent system CPU <= 0.75x spin",
	"kport-epoll-imminent system CPU <= 1.2x kport-read",
	"kport-epoll-imminent timer firings <= 2 per wait",
};

static const struct imminent_names imminent_uring = {
	"kport-uring-imminent p50 <= kport-read p50 + 5 us",
	"kport-uring-imminent p50 <= 0.5x futex-wake p50",
	"kport-uring-imminent system CPU <= 0.75x spin",
	"kport-uring-imminent system CPU <= 1.2x kport-read",
	"kport-uring-imminent timer firings <= 2 per wait",
};

/*
 * An event loop with imminent readiness should wait about as a blocked
 * reader does (kport-read) at a fraction of a spin's CPU, with no more
 * than two timer firings per wait (the early wake, and at most one more).
 */
static unsigned int imminent_targets(const struct bench_run *run,
				     const char *name,
				     const struct imminent_names *names,
				     struct bench_target *t, unsigned int max)
{
	const struct bench_result *r = bench_find(run, name);
	const struct bench_result *kr = bench_find(run, "kport-read");
	const struct bench_result *futex = bench_find(run, "futex-wake");
	const struct bench_result *spin = bench_find(run, "spin");
	unsigned int n = 0;

	if (n < max)
		target(&t[n++], names->p50_read, r, kr, "kport-read", M(r, p50),
		       M(kr, p50) + 5, "us");
	if (n < max)
		target(&t[n++], names->p50_futex, r, futex, "futex-wake", M(r, p50),
		       0.5 * M(futex, p50), "us");
	if (n < max)
		target(&t[n++], names->cpu_spin, r, spin, "spin", M(r, system_cpu_us),
		       0.75 * M(spin, system_cpu_us), "us/wait");
	if (n < max)
		target(&t[n++], names->cpu_read, r, kr, "kport-read",
		       M(r, system_cpu_us), 1.2 * M(kr, system_cpu_us), "us/wait");
	if (n < max)
		target(&t[n++], names->timers, r, r, name, M(r, timer_fires), 2.0,
		       "per wait");
	return n;
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
	if (n < max)
		target(&t[n++], "lib-reap p50 <= kport-read p50 + 5 us",
		       bench_find(run, "lib-reap"), kr, "kport-read",
		       M(bench_find(run, "lib-reap"), p50), M(kr, p50) + 5, "us");
	n += imminent_targets(run, "kport-epoll-imminent", &imminent_epoll, t + n,
			      n < max ? max - n : 0);
	n += imminent_targets(run, "kport-uring-imminent", &imminent_uring, t + n,
			      n < max ? max - n : 0);
	return n;
}
