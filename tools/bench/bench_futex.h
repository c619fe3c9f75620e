/* SPDX-License-Identifier: MIT */
/* The two futex operations the benchmark uses, private to the process. */
#ifndef GPUAR_BENCH_FUTEX_H
#define GPUAR_BENCH_FUTEX_H

#include <stdint.h>

/*
 * Wait while *@word == @expected, until woken or until @abs_ns on
 * CLOCK_MONOTONIC (0: no time limit). Returns 0, or -1 with errno
 * (EAGAIN: the value had changed; ETIMEDOUT; EINTR).
 */
int bench_futex_wait(uint32_t *word, uint32_t expected, uint64_t abs_ns);
/* Wake up to @count waiters on @word; returns how many were woken. */
int bench_futex_wake(uint32_t *word, int count);

#endif /* GPUAR_BENCH_FUTEX_H */
