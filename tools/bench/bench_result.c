// SPDX-License-Identifier: MIT
#include "bench_result.h"

#include <string.h>

#define SPREAD_OF(to, field) do {					\
	double v[BENCH_REPS_MAX];					\
	for (unsigned int i = 0; i < r->reps; i++)			\
		v[i] = r->rep[i].field;					\
	s->to = bench_spread_of(v, r->reps);				\
} while (0)
#define SPREAD(field) SPREAD_OF(field, field)

void bench_summarize(struct bench_result *r)
{
	struct bench_summary *s = &r->sum;

	memset(s, 0, sizeof(*s));
	SPREAD(p50);
	SPREAD(p90);
	SPREAD(p99);
	SPREAD(max);
	SPREAD(waiter_cpu_us);
	SPREAD(system_cpu_us);
	SPREAD(waits_per_s);
	SPREAD(background_cpu_us);
	SPREAD(submit_cpu_us);
	SPREAD(detect_p50);
	SPREAD_OF(timer_fires, port.timer_fires);
	SPREAD_OF(checks, port.checks);
	SPREAD_OF(imminent, port.imminent);
	SPREAD_OF(claims, port.claims);
	SPREAD_OF(lease_expiries, port.lease_expiries);
	SPREAD_OF(late, port.late);
	SPREAD(ctx_switches);
	SPREAD(wakeups);
	SPREAD(syscalls);
	for (unsigned int i = 0; i < r->reps; i++) {
		s->errors += r->rep[i].errors;
		s->late_stores += r->rep[i].late_stores;
	}
}

const struct bench_result *bench_find(const struct bench_run *run,
				      const char *name)
{
	for (unsigned int i = 0; i < run->results; i++) {
		const struct bench_result *r = &run->result[i];

		if (!strcmp(r->st.name, name))
			return r->skipped || !r->reps ? NULL : r;
	}
	return NULL;
}

void bench_choose_oracle(struct bench_run *run)
{
	const struct bench_result *spin = bench_find(run, "spin");
	uint64_t best = UINT64_MAX;

	run->oracle_chosen = -1;
	if (!spin)
		return;
	for (unsigned int i = 0; i < run->results; i++) {
		const struct bench_result *r = &run->result[i];

		if (strcmp(r->st.family, "oracle") || r->skipped || !r->reps ||
		    r->sum.errors)
			continue;
		if (r->sum.p50.median <= 2.0 * spin->sum.p50.median + 1.0 &&
		    r->st.param < best) {
			best = r->st.param;
			run->oracle_chosen = (int)i;
		}
	}
}
