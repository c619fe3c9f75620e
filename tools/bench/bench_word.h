/* SPDX-License-Identifier: MIT */
/*
 * Reading a completion word: an acquire load (the device's writes before
 * its store are visible once it is seen), compared in the shared core's
 * wrapping order.
 */
#ifndef GPUAR_BENCH_WORD_H
#define GPUAR_BENCH_WORD_H

#include <stdbool.h>
#include <stdint.h>

#include "line.h"

static inline bool bench_word_reached(const uint64_t *word, uint64_t target)
{
	return gpuar_reached(__atomic_load_n(word, __ATOMIC_ACQUIRE), target);
}

#endif /* GPUAR_BENCH_WORD_H */
