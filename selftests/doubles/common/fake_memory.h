/* SPDX-License-Identifier: MIT */
/*
 * TEST DOUBLE. Host-memory registration shared by the fake CUDA driver and
 * the fake HIP runtime: a table of registered host ranges, each with a
 * device address that differs from its host address (host +
 * FM_DEVICE_OFFSET), so a backend that hands the device the host address
 * is caught: the store or wait faults its domain with the vendor's
 * illegal-address error. Unregistering a range that queued work of any
 * fake stream still targets is counted as an unsafe unregister (the
 * use-after-free a backend must never commit). Each double links its own
 * copy, so the table is per double.
 */
#ifndef GPUAR_FAKE_MEMORY_H
#define GPUAR_FAKE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "fake_queue.h"

#define FM_DEVICE_OFFSET 0x100000000000ull

enum fm_register_result {
	FM_REGISTERED = 0,
	FM_OVERLAPS,		/* part of the range is registered already */
	FM_TABLE_FULL,
};

/* Register [@host, @host + @bytes) for @owner (a context, a device). */
enum fm_register_result fm_register(void *host, size_t bytes,
				    const void *owner);
/* Forget every range @owner registered (its context or device was reset). */
void fm_drop_owner(const void *owner);
/* False when @host starts no registered range. */
bool fm_unregister(void *host);
/* The device address of @host, or 0 when no registration covers it. */
uint64_t fm_device_address(const void *host);
/* The host word behind a device address, or NULL when unregistered. */
uint64_t *fm_host_word(uint64_t devaddr);
int fm_registered_pages(void);
uint64_t fm_unsafe_unregisters(void);

/*
 * A write-value or wait-value op on the word at @devaddr, or, when no
 * registration covers it, a fault with @illegal_address (what the device
 * would raise on that access).
 */
struct fq_op fm_word_op(enum fq_op_kind kind, uint64_t devaddr,
			uint64_t value, uint64_t mask,
			unsigned int illegal_address);

#endif /* GPUAR_FAKE_MEMORY_H */
