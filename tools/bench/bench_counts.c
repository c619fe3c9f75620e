// SPDX-License-Identifier: MIT
#include "bench_counts.h"

#include <errno.h>
#include <sys/resource.h>

uint64_t bench_syscall_count;

int bench_counts_thread(struct bench_counts *c)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -errno;
	c->voluntary = (uint64_t)ru.ru_nvcsw;
	c->involuntary = (uint64_t)ru.ru_nivcsw;
	return 0;
}

static double per(uint64_t from, uint64_t to, uint64_t waits)
{
	return to > from ? (double)(to - from) / (double)waits : 0.0;
}

struct bench_counts_per_wait bench_counts_per_wait(const struct bench_counts *a,
						   const struct bench_counts *b,
						   uint64_t waits)
{
	struct bench_counts_per_wait r = {
		.port = { -1.0, -1.0, -1.0, -1.0, -1.0, -1.0 },
		.syscalls = -1.0,
	};
	const struct bench_port_counts *pa = &a->port, *pb = &b->port;

	if (!waits)
		return r;
	if (a->has_port && b->has_port) {
		r.port.timer_fires = per(pa->timer_fires, pb->timer_fires, waits);
		r.port.checks = per(pa->checks, pb->checks, waits);
		r.port.imminent = per(pa->imminent, pb->imminent, waits);
		r.port.claims = per(pa->claims, pb->claims, waits);
		r.port.lease_expiries = per(pa->lease_expiries,
					    pb->lease_expiries, waits);
		r.port.late = per(pa->late, pb->late, waits);
	}
	if (a->has_syscalls && b->has_syscalls)
		r.syscalls = per(a->syscalls, b->syscalls, waits);
	r.ctx_switches = per(a->voluntary + a->involuntary,
			     b->voluntary + b->involuntary, waits);
	r.wakeups = per(a->voluntary + a->helper_wakeups,
			b->voluntary + b->helper_wakeups, waits);
	return r;
}
