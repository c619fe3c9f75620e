/* SPDX-License-Identifier: MIT */
/*
 * The consumer's side of a port's shared completion area (struct
 * gpuar_area, "The area" in <linux/gpuar.h>): records taken from the
 * module's ring with no system call. Works on any memory laid out as the
 * area, so the unit tests play the module in user memory.
 */
#ifndef GPUAR_LIB_AREA_RING_H
#define GPUAR_LIB_AREA_RING_H

#include "internal.h"

#include <stddef.h>

/*
 * A validated view of one area: the header's geometry, read once and
 * checked, so a later scribble over the header cannot move the ring
 * out of the mapping. Immutable after gpuar_area_ring_init: any number
 * of threads take from it at once.
 */
struct gpuar_area_ring {
	struct gpuar_area *area;
	const unsigned char *ring;	/* area + ring_off */
	u32 entries;
	u32 mask;
};

/*
 * Check the header of @mem (@mapped bytes of it readable and writable)
 * and fill @r. 0, or -EPROTO where anything is off: the wrong magic, a
 * header smaller than GPUAR_AREA_SIZE_VER1, bytes past @mapped, a ring
 * outside bytes or overlapping the header, entries not a power of two in
 * GPUAR_AREA_RING_MIN..MAX or a mask that disagrees, a record_size other
 * than this library's struct gpuar_record. The caller then leaves the
 * area alone and reads the port as before.
 */
int gpuar_area_ring_init(struct gpuar_area_ring *r, void *mem, size_t mapped);

/*
 * Take up to @max records, oldest first, each by the contract's
 * compare-and-swap of head after copying it out. Returns how many (0:
 * the ring was empty, or its head lay out of range). Thread-safe
 * against other takers, read() included.
 */
u32 gpuar_area_ring_take(const struct gpuar_area_ring *r,
			 struct gpuar_record *records, u32 max);

/*
 * Must the port be read() for its records? True while the module keeps
 * records in its queue (GPUAR_AREA_OVERFLOW), and while head does not lie
 * within ring_entries behind tail (a scribbled head: the module queues
 * every record then, so only read() finds them).
 */
bool gpuar_area_ring_need_read(const struct gpuar_area_ring *r);

/* Records in the ring now (0 for an out-of-range head). */
u32 gpuar_area_ring_count(const struct gpuar_area_ring *r);

#endif /* GPUAR_LIB_AREA_RING_H */
