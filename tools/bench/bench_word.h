/* SPDX-License-Identifier: MIT */
/*
 * Reading a completion word: core/line.h's acquire load (the device's
 * writes before its store are visible once it is seen), compared in the
 * shared core's wrapping order.
 */
#ifndef GPUAR_BENCH_WORD_H
#define GPUAR_BENCH_WORD_H

#include <stdbool.h>
#include <stdint.h>

#include "line.h"

static inline bool bench_word_reached(const uint64_t *word, uint64_t target)
{
	/* uint64_t and the core's u64 (__u64) have one size and representation. */
	return gpuar_reached(gpuar_load_acquire((const u64 *)word), target);
}

#endif /* GPUAR_BENCH_WORD_H */
