// SPDX-License-Identifier: MIT
#include "bench_cpu.h"

#include <time.h>

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t bench_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t bench_other_thread_cpu_ns(pthread_t thread)
{
	clockid_t id;

	if (pthread_getcpuclockid(thread, &id))
		return 0;
	return clock_ns(id);
}

double bench_system_cpu_ns(const struct bench_cpu_sample *s)
{
	double idle_ns, busy, device_own;

	if (s->ticks_per_s <= 0)
		return 0.0;
	idle_ns = (double)s->idle_ticks * 1e9 / (double)s->ticks_per_s;
	busy = (double)s->cpus * (double)s->wall_ns - idle_ns;
	device_own = s->device_ns > s->device_notify_ns ?
		     (double)(s->device_ns - s->device_notify_ns) : 0.0;
	busy -= device_own;
	return busy > 0.0 ? busy : 0.0;
}
