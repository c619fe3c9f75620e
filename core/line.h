/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Completion lines and memory descriptors.
 *
 * A line is 64 bytes, 64-byte aligned: eight u64 slots. A device stores a
 * sequence number into a slot behind its work. A memory descriptor names
 * one slot and the target it must reach. "Reached" is wrapping order, so a
 * counter that wraps past 2^64 keeps completing, and a later store that
 * lands before anyone looks still completes an earlier target.
 */
#ifndef GPUAR_CORE_LINE_H
#define GPUAR_CORE_LINE_H

#include "types.h"

struct gpuar_memdesc {
	const u64 *line;	/* GPUAR_LINE_BYTES-aligned */
	u32 slot;		/* < GPUAR_LINE_SLOTS */
	u64 target;
};

/* True when @word is at or past @target in wrapping order. */
static inline bool gpuar_reached(u64 word, u64 target)
{
	return (s64)(word - target) >= 0;
}

/*
 * Load a slot with acquire semantics: once the value reaches a target, the
 * device's writes before its store are visible to the caller. This is the
 * one load of a completion word, in the module, the library, the backends
 * and the tools alike. The compiler's acquire load of an aligned u64 is a
 * single untorn access, the same instruction the kernel's
 * smp_load_acquire() emits on the 64-bit architectures the module builds
 * for (a plain load on x86-64, LDAR on arm64), and needs no header.
 */
static inline u64 gpuar_load_acquire(const u64 *word)
{
	return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/* Load the descriptor's slot (acquire); store it in *@seen if non-NULL. */
static inline bool gpuar_memdesc_reached(const struct gpuar_memdesc *md,
					 u64 *seen)
{
	u64 word = gpuar_load_acquire(&md->line[md->slot]);

	if (seen)
		*seen = word;
	return gpuar_reached(word, md->target);
}

/* True when @addr is a valid line address (non-NULL, 64-byte aligned). */
static inline bool gpuar_line_aligned(u64 addr)
{
	return addr && !(addr & (GPUAR_LINE_BYTES - 1));
}

#endif /* GPUAR_CORE_LINE_H */
