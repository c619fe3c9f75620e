// SPDX-License-Identifier: MIT
/*
 * Taking records from a port's shared completion area (area_ring.h). The
 * module is the ring's one producer; takers are many (threads, read()),
 * so each record is copied out first and then claimed by swapping head
 * from h to h + 1: the module never rewrites ring[h & mask] while head
 * is h, so a swap that succeeds proves the copy whole.
 */
#include "area_ring.h"

#include <errno.h>

static bool power_of_two(u32 v)
{
	return v && !(v & (v - 1));
}

int gpuar_area_ring_init(struct gpuar_area_ring *r, void *mem, size_t mapped)
{
	const struct gpuar_area *a = mem;
	u32 size, bytes, off, entries, mask, rsize;

	if (!mem || mapped < GPUAR_AREA_SIZE_VER1)
		return -EPROTO;
	/* Read each once: the copy checked is the copy used. */
	if (__atomic_load_n(&a->magic, __ATOMIC_RELAXED) != GPUAR_AREA_MAGIC)
		return -EPROTO;
	size = __atomic_load_n(&a->size, __ATOMIC_RELAXED);
	bytes = __atomic_load_n(&a->bytes, __ATOMIC_RELAXED);
	off = __atomic_load_n(&a->ring_off, __ATOMIC_RELAXED);
	entries = __atomic_load_n(&a->ring_entries, __ATOMIC_RELAXED);
	mask = __atomic_load_n(&a->ring_mask, __ATOMIC_RELAXED);
	rsize = __atomic_load_n(&a->record_size, __ATOMIC_RELAXED);
	if (size < GPUAR_AREA_SIZE_VER1 || bytes > mapped ||
	    rsize != sizeof(struct gpuar_record) || !power_of_two(entries) ||
	    entries < GPUAR_AREA_RING_MIN || entries > GPUAR_AREA_RING_MAX ||
	    mask != entries - 1 || off < size || off % 8 ||
	    off > bytes || (u64)entries * rsize > bytes - off)
		return -EPROTO;
	r->area = mem;
	r->ring = (const unsigned char *)mem + off;
	r->entries = entries;
	r->mask = mask;
	return 0;
}

/* tail - head, or more than entries for a head out of range. */
static u32 ring_fill(const struct gpuar_area_ring *r, u32 head, u32 *tail)
{
	*tail = __atomic_load_n(&r->area->tail, __ATOMIC_ACQUIRE);
	return *tail - head;
}

/*
 * The record at @idx, word by word with relaxed loads: a taker whose
 * head is stale may copy a slot the module is rewriting, and then its
 * swap fails and the copy is dropped; the loads only keep that race
 * defined (and quiet under ThreadSanitizer).
 */
static void copy_record(const struct gpuar_area_ring *r, u32 idx,
			struct gpuar_record *out)
{
	const u64 *src = (const u64 *)(const void *)
			 (r->ring + (size_t)(idx & r->mask) * sizeof(*out));
	u64 *dst = (u64 *)(void *)out;
	size_t i;

	for (i = 0; i < sizeof(*out) / sizeof(u64); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

u32 gpuar_area_ring_take(const struct gpuar_area_ring *r,
			 struct gpuar_record *records, u32 max)
{
	u32 h = __atomic_load_n(&r->area->head, __ATOMIC_ACQUIRE);
	u32 taken = 0, tail, fill;

	while (taken < max) {
		fill = ring_fill(r, h, &tail);
		if (fill == 0 || fill > r->entries)
			break;	/* empty, or a head out of range: read() */
		copy_record(r, h, &records[taken]);
		/*
		 * Release: the copy's loads happen before the swap frees the
		 * slot to the module. A failed swap leaves in h what head is.
		 */
		if (__atomic_compare_exchange_n(&r->area->head, &h, h + 1,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			h++;
			taken++;
		}
	}
	return taken;
}

u32 gpuar_area_ring_count(const struct gpuar_area_ring *r)
{
	u32 h = __atomic_load_n(&r->area->head, __ATOMIC_ACQUIRE);
	u32 tail, fill = ring_fill(r, h, &tail);

	return fill > r->entries ? 0 : fill;
}

bool gpuar_area_ring_need_read(const struct gpuar_area_ring *r)
{
	u32 h = __atomic_load_n(&r->area->head, __ATOMIC_ACQUIRE);
	u32 tail;

	if (__atomic_load_n(&r->area->flags, __ATOMIC_ACQUIRE) &
	    GPUAR_AREA_OVERFLOW)
		return true;
	return ring_fill(r, h, &tail) > r->entries;
}
