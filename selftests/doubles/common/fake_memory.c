// SPDX-License-Identifier: MIT
/* TEST DOUBLE: registered host memory of the fake drivers (fake_memory.h). */
#include "fake_memory.h"

#include <pthread.h>

#define FM_PAGES_MAX 4096

struct fm_range {
	uintptr_t host;
	size_t bytes;
	const void *owner;
};

static pthread_mutex_t fm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fm_range fm_ranges[FM_PAGES_MAX];
static uint64_t fm_unsafe;

enum fm_register_result fm_register(void *host, size_t bytes,
				    const void *owner)
{
	uintptr_t lo = (uintptr_t)host;
	enum fm_register_result rc = FM_TABLE_FULL;

	pthread_mutex_lock(&fm_lock);
	for (int i = 0; i < FM_PAGES_MAX; i++) {
		struct fm_range *r = &fm_ranges[i];

		if (r->host && lo < r->host + r->bytes && r->host < lo + bytes) {
			rc = FM_OVERLAPS;
			break;
		}
	}
	for (int i = 0; rc == FM_TABLE_FULL && i < FM_PAGES_MAX; i++) {
		if (!fm_ranges[i].host) {
			fm_ranges[i] = (struct fm_range){ lo, bytes, owner };
			rc = FM_REGISTERED;
		}
	}
	pthread_mutex_unlock(&fm_lock);
	return rc;
}

bool fm_unregister(void *host)
{
	size_t bytes = 0;
	bool found = false;

	pthread_mutex_lock(&fm_lock);
	for (int i = 0; i < FM_PAGES_MAX && !found; i++) {
		if (fm_ranges[i].host == (uintptr_t)host) {
			bytes = fm_ranges[i].bytes;
			fm_ranges[i] = (struct fm_range){ 0, 0, NULL };
			found = true;
		}
	}
	if (found)
		fm_unsafe += fq_streams_touching(host, bytes);
	pthread_mutex_unlock(&fm_lock);
	return found;
}

void fm_drop_owner(const void *owner)
{
	pthread_mutex_lock(&fm_lock);
	for (int i = 0; i < FM_PAGES_MAX; i++)
		if (fm_ranges[i].host && fm_ranges[i].owner == owner)
			fm_ranges[i] = (struct fm_range){ 0, 0, NULL };
	pthread_mutex_unlock(&fm_lock);
}

uint64_t *fm_host_word(uint64_t devaddr)
{
	uintptr_t host = (uintptr_t)(devaddr - FM_DEVICE_OFFSET);
	uint64_t *word = NULL;

	pthread_mutex_lock(&fm_lock);
	for (int i = 0; i < FM_PAGES_MAX && !word; i++) {
		struct fm_range *r = &fm_ranges[i];

		if (r->host && host >= r->host && host + 8 <= r->host + r->bytes)
			word = (uint64_t *)host;
	}
	pthread_mutex_unlock(&fm_lock);
	return word;
}

uint64_t fm_device_address(const void *host)
{
	uint64_t devaddr = (uint64_t)(uintptr_t)host + FM_DEVICE_OFFSET;

	return fm_host_word(devaddr) ? devaddr : 0;
}

int fm_registered_pages(void)
{
	int n = 0;

	pthread_mutex_lock(&fm_lock);
	for (int i = 0; i < FM_PAGES_MAX; i++)
		n += fm_ranges[i].host != 0;
	pthread_mutex_unlock(&fm_lock);
	return n;
}

uint64_t fm_unsafe_unregisters(void)
{
	uint64_t n;

	pthread_mutex_lock(&fm_lock);
	n = fm_unsafe;
	pthread_mutex_unlock(&fm_lock);
	return n;
}

struct fq_op fm_word_op(enum fq_op_kind kind, uint64_t devaddr,
			uint64_t value, uint64_t mask,
			unsigned int illegal_address)
{
	struct fq_op op = { .kind = kind, .value = value, .mask = mask };

	op.word = fm_host_word(devaddr);
	if (!op.word)
		op = (struct fq_op){ .kind = FQ_FAULT, .code = illegal_address };
	return op;
}
