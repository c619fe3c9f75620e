// SPDX-License-Identifier: MIT
/*
 * The shared completion area's consumer (lib/area_ring.c), with the test
 * playing the module in user memory: it writes records and advances tail
 * with a store-release, sets GPUAR_AREA_OVERFLOW and keeps a queue that a
 * stand-in read() serves, scribbles over head, and races several taking
 * threads against a producer reusing a small ring's slots.
 */
#include "area_ring.h"
#include "unit.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define RING_OFF 256

struct fake_area {
	union {
		struct gpuar_area hdr;
		unsigned char bytes[RING_OFF];
	};
	struct gpuar_record ring[GPUAR_AREA_RING_MAX];
};

static struct fake_area *area_new(u32 entries)
{
	struct fake_area *a = aligned_alloc(64, sizeof(*a));

	ck_assert_ptr_nonnull(a);
	memset(a, 0, RING_OFF + (size_t)entries * sizeof(struct gpuar_record));
	a->hdr.magic = GPUAR_AREA_MAGIC;
	a->hdr.size = GPUAR_AREA_SIZE_VER1;
	a->hdr.bytes = RING_OFF + entries * (u32)sizeof(struct gpuar_record);
	a->hdr.ring_off = RING_OFF;
	a->hdr.ring_entries = entries;
	a->hdr.ring_mask = entries - 1;
	a->hdr.record_size = sizeof(struct gpuar_record);
	return a;
}

/*
 * Record @i as the module would write it, every word derived from @i, so
 * that a copy torn between two records shows. Relaxed stores: a stale
 * taker may be copying the slot meanwhile (and then its swap fails).
 */
static void record_store(struct gpuar_record *slot, u64 i)
{
	u64 *w = (u64 *)(void *)slot;
	size_t k;

	for (k = 0; k < sizeof(*slot) / sizeof(u64); k++)
		__atomic_store_n(&w[k], i * 0x9e3779b97f4a7c15ULL + k,
				 __ATOMIC_RELAXED);
}

static bool record_whole(const struct gpuar_record *rec, u64 *i)
{
	const u64 *w = (const u64 *)(const void *)rec;
	u64 first = w[0];
	size_t k;

	*i = first * 0xf1de83e19937733dULL;	/* the inverse multiplier */
	for (k = 0; k < sizeof(*rec) / sizeof(u64); k++)
		if (w[k] != *i * 0x9e3779b97f4a7c15ULL + k)
			return false;
	return true;
}

/* The module's producer step: room in the ring, else false. */
static bool produce(struct fake_area *a, u64 i)
{
	u32 tail = a->hdr.tail;
	u32 head = __atomic_load_n(&a->hdr.head, __ATOMIC_ACQUIRE);

	if (tail - head >= a->hdr.ring_entries)
		return false;
	record_store(&a->ring[tail & a->hdr.ring_mask], i);
	__atomic_store_n(&a->hdr.tail, tail + 1, __ATOMIC_RELEASE);
	return true;
}

/* An area of @entries, its view in *@r, and records 0..@n-1 produced. */
static struct fake_area *ring_with(u32 entries, struct gpuar_area_ring *r,
				   u64 n)
{
	struct fake_area *a = area_new(entries);
	u64 i;

	ck_assert_int_eq(gpuar_area_ring_init(r, a, a->hdr.bytes), 0);
	for (i = 0; i < n; i++)
		ck_assert(produce(a, i));
	return a;
}

START_TEST(multiplier_inverse)
{
	u64 i;

	ck_assert_uint_eq(0x9e3779b97f4a7c15ULL * 0xf1de83e19937733dULL, 1);
	{
		struct gpuar_record r;

		record_store(&r, 12345);
		ck_assert(record_whole(&r, &i));
		ck_assert_uint_eq(i, 12345);
		r.status ^= 1;
		ck_assert(!record_whole(&r, &i));
	}
}
END_TEST

START_TEST(accepts_a_good_header)
{
	struct fake_area *a = area_new(16);
	struct gpuar_area_ring r;

	ck_assert_int_eq(gpuar_area_ring_init(&r, a, a->hdr.bytes), 0);
	ck_assert_uint_eq(r.entries, 16);
	ck_assert_uint_eq(r.mask, 15);
	ck_assert_ptr_eq(r.ring, (unsigned char *)a + RING_OFF);
	/* A newer module's larger header, the ring after it. */
	a->hdr.size = 224;
	ck_assert_int_eq(gpuar_area_ring_init(&r, a, a->hdr.bytes), 0);
	free(a);
}
END_TEST

/* Each field broken alone: the area is refused, never half-trusted. */
START_TEST(refuses_each_bad_field)
{
	struct fake_area *a = area_new(16);
	struct gpuar_area good = a->hdr;
	struct gpuar_area_ring r;
	size_t mapped = good.bytes;
	int which;

	for (which = 0; which < 13; which++) {
		a->hdr = good;
		switch (which) {
		case 0: a->hdr.magic ^= 1; break;
		case 1: a->hdr.size = GPUAR_AREA_SIZE_VER1 - 4; break;
		case 2: a->hdr.bytes = (u32)mapped + 1; break;
		case 3: a->hdr.ring_off = 128; break;	/* over the header */
		case 4: a->hdr.ring_entries = 12; a->hdr.ring_mask = 11; break;
		case 5: a->hdr.ring_entries = 4; a->hdr.ring_mask = 3; break;
		case 6: a->hdr.ring_entries = 2 * GPUAR_AREA_RING_MAX;
			a->hdr.ring_mask = 2 * GPUAR_AREA_RING_MAX - 1; break;
		case 7: a->hdr.ring_mask = 31; break;
		case 8: a->hdr.record_size = 48; break;
		case 9: a->hdr.ring_entries = 32; a->hdr.ring_mask = 31; break;
		case 10: a->hdr.ring_off = RING_OFF + 4; break;	/* misaligned */
		case 11: a->hdr.ring_off = 0xfffffff8u; break;	/* wraps */
		case 12: a->hdr.ring_entries = 0; a->hdr.ring_mask = ~0u; break;
		}
		ck_assert_msg(gpuar_area_ring_init(&r, a, mapped) == -EPROTO,
			      "bad field %d accepted", which);
	}
	a->hdr = good;
	ck_assert_int_eq(gpuar_area_ring_init(&r, a, mapped - 1), -EPROTO);
	ck_assert_int_eq(gpuar_area_ring_init(&r, a, 100), -EPROTO);
	ck_assert_int_eq(gpuar_area_ring_init(&r, NULL, mapped), -EPROTO);
	free(a);
}
END_TEST

START_TEST(takes_in_order_and_each_once)
{
	struct gpuar_area_ring r;
	struct fake_area *a = ring_with(8, &r, 0);
	struct gpuar_record out[16];
	u64 i, k;

	ck_assert_uint_eq(gpuar_area_ring_take(&r, out, 16), 0);
	for (i = 0; i < 5; i++)
		ck_assert(produce(a, i));
	ck_assert_uint_eq(gpuar_area_ring_count(&r), 5);
	ck_assert_uint_eq(gpuar_area_ring_take(&r, out, 3), 3);
	ck_assert_uint_eq(gpuar_area_ring_take(&r, out + 3, 16), 2);
	ck_assert_uint_eq(gpuar_area_ring_take(&r, out, 16), 0);
	for (i = 0; i < 5; i++) {
		ck_assert(record_whole(&out[i], &k));
		ck_assert_uint_eq(k, i);
	}
	ck_assert_uint_eq(a->hdr.head, 5);
	ck_assert(!gpuar_area_ring_need_read(&r));
	free(a);
}
END_TEST

/* head and tail are free-running: past 2^32 they wrap, the ring does not care. */
START_TEST(counters_wrap)
{
	struct fake_area *a = area_new(8);
	struct gpuar_area_ring r;
	struct gpuar_record out[8];
	u64 i, k, next = 0;
	u32 n;

	a->hdr.head = a->hdr.tail = UINT32_MAX - 3;
	ck_assert_int_eq(gpuar_area_ring_init(&r, a, a->hdr.bytes), 0);
	for (i = 0; i < 20; i++) {
		ck_assert(produce(a, i));
		if (i % 3 == 2) {
			n = gpuar_area_ring_take(&r, out, 8);
			while (n--) {
				ck_assert(record_whole(&out[0], &k));
				memmove(out, out + 1, n * sizeof(out[0]));
				ck_assert_uint_eq(k, next++);
			}
		}
	}
	n = gpuar_area_ring_take(&r, out, 8);
	for (i = 0; i < n; i++) {
		ck_assert(record_whole(&out[i], &k));
		ck_assert_uint_eq(k, next++);
	}
	ck_assert_uint_eq(next, 20);
	ck_assert_uint_lt(a->hdr.head, 100);	/* it wrapped */
	free(a);
}
END_TEST

START_TEST(full_ring_takes_all)
{
	struct gpuar_area_ring r;
	struct fake_area *a = ring_with(8, &r, 8);
	struct gpuar_record out[8];

	ck_assert(!produce(a, 8));
	ck_assert(!gpuar_area_ring_need_read(&r));
	ck_assert_uint_eq(gpuar_area_ring_take(&r, out, 8), 8);
	free(a);
}
END_TEST

/* A head that does not lie within ring_entries behind tail: read(). */
START_TEST(head_out_of_range)
{
	struct gpuar_area_ring r;
	struct fake_area *a = ring_with(8, &r, 3);
	struct gpuar_record out[8];

	a->hdr.head = a->hdr.tail + 1;		/* ahead of tail */
	ck_assert_uint_eq(gpuar_area_ring_take(&r, out, 8), 0);
	ck_assert_uint_eq(gpuar_area_ring_count(&r), 0);
	ck_assert(gpuar_area_ring_need_read(&r));
	a->hdr.head = a->hdr.tail - 9;		/* more than a ring behind */
	ck_assert_uint_eq(gpuar_area_ring_take(&r, out, 8), 0);
	ck_assert(gpuar_area_ring_need_read(&r));
	a->hdr.head = a->hdr.tail - 8;		/* exactly full: fine */
	ck_assert(!gpuar_area_ring_need_read(&r));
	ck_assert_uint_eq(gpuar_area_ring_take(&r, out, 8), 8);
	free(a);
}
END_TEST

/*
 * Overflow as the contract has it: a record that finds the ring full
 * waits in the queue, the flag is up while any does, and later records
 * queue behind it; read() serves the ring's records first, then the
 * queue's, and moves what fits back into the ring. A reaper that takes
 * from the ring and reads only when need_read says so gets every record
 * once, in order.
 */
struct model {
	struct fake_area *a;
	u64 queue[256];
	u32 qhead, qlen;
};

static void model_complete(struct model *m, u64 i)
{
	if (!m->qlen && produce(m->a, i))
		return;
	m->queue[(m->qhead + m->qlen++) % 256] = i;
	__atomic_or_fetch(&m->a->hdr.flags, GPUAR_AREA_OVERFLOW, __ATOMIC_RELEASE);
}

static u32 model_read(struct model *m, const struct gpuar_area_ring *r,
		      struct gpuar_record *out, u32 max)
{
	u32 n = gpuar_area_ring_take(r, out, max);

	while (n < max && m->qlen) {
		record_store(&out[n++], m->queue[m->qhead]);
		m->qhead = (m->qhead + 1) % 256;
		m->qlen--;
	}
	while (m->qlen && produce(m->a, m->queue[m->qhead])) {
		m->qhead = (m->qhead + 1) % 256;
		m->qlen--;
	}
	if (!m->qlen)
		__atomic_and_fetch(&m->a->hdr.flags, ~GPUAR_AREA_OVERFLOW,
				   __ATOMIC_RELEASE);
	return n;
}

START_TEST(overflow_keeps_order)
{
	struct model m = { .a = area_new(8) };
	struct gpuar_area_ring r;
	struct gpuar_record out[5];
	u64 i, k, next = 0, done = 0;
	u32 n, reads = 0;

	ck_assert_int_eq(gpuar_area_ring_init(&r, m.a, m.a->hdr.bytes), 0);
	while (next < 200) {
		/* Bursts of 13 completions against reaps of 5. */
		for (i = 0; i < 13 && done < 200; i++)
			model_complete(&m, done++);
		do {
			n = gpuar_area_ring_take(&r, out, 5);
			if (!n && gpuar_area_ring_need_read(&r)) {
				n = model_read(&m, &r, out, 5);
				reads++;
			}
			for (i = 0; i < n; i++) {
				ck_assert(record_whole(&out[i], &k));
				ck_assert_uint_eq(k, next++);
			}
		} while (n);
		ck_assert(!gpuar_area_ring_need_read(&r));
	}
	ck_assert_uint_gt(reads, 0);	/* the overflow path ran */
	free(m.a);
}
END_TEST

/*
 * Several takers race a producer on a small ring: stale copies are
 * common (a slot rewritten between a taker's copy and its swap), so a
 * taker that kept a copy its swap did not prove would show a torn or
 * repeated record. Every record comes out whole, exactly once, and each
 * taker's own records in increasing order.
 */
#define RACE_RECORDS 200000u
#define RACE_TAKERS 4

struct taker {
	const struct gpuar_area_ring *r;
	u64 *seen;	/* in the order taken */
	u32 nseen;
	u32 torn;
	bool *stop;
};

static void *taker_main(void *arg)
{
	struct taker *t = arg;
	struct gpuar_record out[3];
	u32 n, i;
	u64 k;

	for (;;) {
		n = gpuar_area_ring_take(t->r, out, 1 + t->nseen % 3);
		for (i = 0; i < n; i++) {
			if (!record_whole(&out[i], &k))
				t->torn++;
			else if (t->nseen < RACE_RECORDS)
				t->seen[t->nseen++] = k;
		}
		if (!n) {
			if (__atomic_load_n(t->stop, __ATOMIC_ACQUIRE) &&
			    !gpuar_area_ring_count(t->r))
				return NULL;
			sched_yield();
		}
	}
}

START_TEST(takers_race_a_producer)
{
	struct fake_area *a = area_new(8);
	struct gpuar_area_ring r;
	struct taker t[RACE_TAKERS];
	pthread_t th[RACE_TAKERS];
	bool stop = false;
	u8 *count = calloc(RACE_RECORDS, 1);
	u64 i, total = 0;
	u32 j, k;

	ck_assert_ptr_nonnull(count);
	ck_assert_int_eq(gpuar_area_ring_init(&r, a, a->hdr.bytes), 0);
	for (j = 0; j < RACE_TAKERS; j++) {
		t[j] = (struct taker){ .r = &r, .stop = &stop,
				       .seen = calloc(RACE_RECORDS, sizeof(u64)) };
		ck_assert_ptr_nonnull(t[j].seen);
		ck_assert_int_eq(pthread_create(&th[j], NULL, taker_main, &t[j]), 0);
	}
	for (i = 0; i < RACE_RECORDS; i++)
		while (!produce(a, i))
			sched_yield();
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	for (j = 0; j < RACE_TAKERS; j++) {
		ck_assert_int_eq(pthread_join(th[j], NULL), 0);
		ck_assert_uint_eq(t[j].torn, 0);
		for (k = 0; k < t[j].nseen; k++) {
			ck_assert_uint_lt(t[j].seen[k], RACE_RECORDS);
			ck_assert_uint_eq(count[t[j].seen[k]]++, 0);
			if (k)
				ck_assert_uint_gt(t[j].seen[k], t[j].seen[k - 1]);
		}
		total += t[j].nseen;
		free(t[j].seen);
	}
	ck_assert_uint_eq(total, RACE_RECORDS);
	ck_assert_uint_eq(a->hdr.head, a->hdr.tail);
	free(count);
	free(a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("area_ring");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, multiplier_inverse);
	tcase_add_test(t, accepts_a_good_header);
	tcase_add_test(t, refuses_each_bad_field);
	tcase_add_test(t, takes_in_order_and_each_once);
	tcase_add_test(t, counters_wrap);
	tcase_add_test(t, full_ring_takes_all);
	tcase_add_test(t, head_out_of_range);
	tcase_add_test(t, overflow_keeps_order);
	tcase_add_test(t, takers_race_a_producer);
	suite_add_tcase(s, t);
	return unit_run(s);
}
