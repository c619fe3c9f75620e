// SPDX-License-Identifier: MIT
/*
 * The soft producer as a long-lived device: the cost of a store does not
 * grow with the stores made before it, and made stores' times stay
 * findable for the recent ones.
 */
#include <gpuar/gpuar.h>

#include "unit.h"

#include <check.h>
#include <time.h>

#define MANY 40000
#define MS 1000000ULL

/*
 * 40000 stores all due at once: making them is O(n log n) with a heap;
 * a scan of every store ever scheduled per store was O(n^2), seconds.
 */
START_TEST(many_due_stores_are_made_quickly)
{
	static uint64_t words[MANY];
	struct gpuar_soft_producer *p;
	uint64_t t0 = gpuar_now_ns(), now = t0;

	ck_assert_int_eq(gpuar_soft_producer_new(&p), 0);
	for (uint32_t i = 0; i < MANY; i++)
		ck_assert_int_eq(gpuar_soft_store_at(p, &words[i], i + 1, t0), 0);
	while (gpuar_soft_stores(p) < MANY && now - t0 < 20000 * MS) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
		now = gpuar_now_ns();
	}
	ck_assert_uint_eq(gpuar_soft_stores(p), MANY);
	ck_assert_msg(now - t0 < 1000 * MS, "%llu ms for %d stores",
		      (unsigned long long)((now - t0) / MS), MANY);
	/* In order of scheduling; the latest ones' times are kept. */
	ck_assert_uint_eq(words[MANY - 1], MANY);
	ck_assert_uint_ne(gpuar_soft_stored_at(p, &words[MANY - 1], MANY), 0);
	ck_assert_uint_ge(gpuar_soft_stored_at(p, &words[MANY - 1], MANY),
			  gpuar_soft_stored_at(p, &words[MANY - 2], MANY - 1));
	gpuar_soft_producer_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("soft_producer");
	TCase *t = tcase_create("producer");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, many_due_stores_are_made_quickly);
	suite_add_tcase(s, t);
	return unit_run(s);
}
