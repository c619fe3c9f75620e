// SPDX-License-Identifier: MIT
#include "bench_clock_sync.h"

#include <string.h>

void bench_clock_sync_init(struct bench_clock_sync *cs)
{
	memset(cs, 0, sizeof(*cs));
}

void bench_clock_sync_add(struct bench_clock_sync *cs, uint64_t t0, uint64_t g,
			  uint64_t t1)
{
	uint64_t half;

	cs->samples++;
	if (t1 < t0)
		return;
	/* Rounded up, so the true offset is always within it. */
	half = (t1 - t0 + 1) / 2;
	if (cs->valid && half >= cs->half_rtt_ns)
		return;
	/* Wrapping difference, then signed: the offset may be either sign. */
	cs->offset_ns = (int64_t)(g - (t0 + (t1 - t0) / 2));
	cs->half_rtt_ns = half;
	cs->valid = true;
}

uint64_t bench_clock_sync_host_ns(const struct bench_clock_sync *cs,
				  uint64_t device_ns)
{
	return device_ns - (uint64_t)cs->offset_ns;
}
