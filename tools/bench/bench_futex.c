// SPDX-License-Identifier: MIT
#include "bench_futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench_clock.h"

int bench_futex_wait(uint32_t *word, uint32_t expected, uint64_t abs_ns)
{
	struct timespec ts = bench_ts(abs_ns);

	/* WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline. */
	return (int)syscall(SYS_futex, word, FUTEX_WAIT_BITSET_PRIVATE,
			    expected, abs_ns ? &ts : NULL, NULL,
			    FUTEX_BITSET_MATCH_ANY);
}

int bench_futex_wake(uint32_t *word, int count)
{
	return (int)syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count,
			    NULL, NULL, 0);
}
