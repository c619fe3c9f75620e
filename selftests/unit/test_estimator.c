// SPDX-License-Identifier: MIT
/* The deadline estimator, wake-up latency quantile and point table. */
#include <stdint.h>
#include <string.h>

#include "estimator.h"
#include "plan.h"
#include "unit.h"

#define US 1000ULL
#define MS 1000000ULL

/*
 * A predicting flag plan: margin 150 us, min sleep 20 us, max sleep 50 ms,
 * window 8. The worked examples below follow the sleep rule: the
 * prediction is the smallest of the window's samples, the sleep is that
 * less the margin, none below min_sleep, at most max_sleep.
 */
static const struct gpuar_plan predict_plan = {
	.park = GPUAR_PARK_FLAG,
	.flags = GPUAR_PLAN_PREDICT,
	.park_ns = 100 * US,
	.backstop_ns = 1 * MS,
	.margin_ns = 150 * US,
	.min_sleep_ns = 20 * US,
	.max_sleep_ns = 50 * MS,
	.window = 8,
};

static u64 predicted(const struct gpuar_est *est)
{
	u64 ns = 0;

	ck_assert(gpuar_est_predict(est, &ns));
	return ns;
}

/* --------------------------------------------------- worked examples */

START_TEST(first_wait_at_a_point_never_sleeps)
{
	struct gpuar_est est;
	u64 ns = 12345;

	gpuar_est_init(&est, 8);
	ck_assert(!gpuar_est_predict(&est, &ns));
	ck_assert_uint_eq(ns, 12345);
	ck_assert_uint_eq(gpuar_est_sleep_ns(&est, &predict_plan), 0);
}
END_TEST

START_TEST(residuals_1_0_0_9_1_1_ms_sleep_750_us)
{
	struct gpuar_est est;

	gpuar_est_init(&est, 8);
	gpuar_est_exact(&est, 1000 * US);
	gpuar_est_exact(&est, 900 * US);
	gpuar_est_exact(&est, 1100 * US);
	ck_assert_uint_eq(predicted(&est), 900 * US);
	ck_assert_uint_eq(gpuar_est_sleep_ns(&est, &predict_plan), 750 * US);
}
END_TEST

START_TEST(after_eight_2_ms_samples_sleep_1850_us)
{
	struct gpuar_est est;
	int i;

	gpuar_est_init(&est, 8);
	gpuar_est_exact(&est, 1000 * US);
	gpuar_est_exact(&est, 900 * US);
	gpuar_est_exact(&est, 1100 * US);
	for (i = 0; i < 7; i++)
		gpuar_est_exact(&est, 2 * MS);
	/* seven 2 ms samples: 1.1 ms is still in the window of eight */
	ck_assert_uint_eq(gpuar_est_sleep_ns(&est, &predict_plan), 950 * US);
	gpuar_est_exact(&est, 2 * MS);
	ck_assert_uint_eq(predicted(&est), 2 * MS);
	ck_assert_uint_eq(gpuar_est_sleep_ns(&est, &predict_plan), 1850 * US);
}
END_TEST

START_TEST(residual_160_us_gives_no_sleep)
{
	struct gpuar_est est;

	gpuar_est_init(&est, 8);
	gpuar_est_exact(&est, 160 * US);
	/* 160 - 150 = 10 us, below min_sleep 20 us */
	ck_assert_uint_eq(gpuar_est_sleep_ns(&est, &predict_plan), 0);
}
END_TEST

START_TEST(residual_u64_max_sleeps_max_50_ms)
{
	struct gpuar_est est;

	gpuar_est_init(&est, 8);
	gpuar_est_exact(&est, UINT64_MAX);
	ck_assert_uint_eq(gpuar_est_sleep_ns(&est, &predict_plan), 50 * MS);
}
END_TEST

/* -------------------------------------------------------- sleep rule */

START_TEST(sleep_at_exactly_min_sleep_is_kept)
{
	struct gpuar_est est;

	gpuar_est_init(&est, 8);
	gpuar_est_exact(&est, 170 * US);
	ck_assert_uint_eq(gpuar_est_sleep_ns(&est, &predict_plan), 20 * US);
	gpuar_est_exact(&est, 170 * US - 1);
	ck_assert_uint_eq(gpuar_est_sleep_ns(&est, &predict_plan), 0);
}
END_TEST

START_TEST(margin_above_prediction_saturates_to_no_sleep)
{
	struct gpuar_plan plan = predict_plan;
	struct gpuar_est est;

	plan.min_sleep_ns = 0;
	gpuar_est_init(&est, 8);
	gpuar_est_exact(&est, 100 * US);
	ck_assert_uint_eq(gpuar_est_sleep_ns(&est, &plan), 0);
}
END_TEST

START_TEST(plan_without_prediction_never_sleeps)
{
	struct gpuar_plan plan = {
		.park = GPUAR_PARK_FLAG,
		.park_ns = 100 * US,
		.backstop_ns = 1 * MS,
	};
	struct gpuar_est est;

	gpuar_est_init(&est, 8);
	gpuar_est_exact(&est, 10 * MS);
	ck_assert_uint_eq(gpuar_est_sleep_ns(&est, &plan), 0);
}
END_TEST

/* --------------------------------------------------- late censoring */

START_TEST(late_without_prediction_records_half_of_woke)
{
	struct gpuar_est est;

	gpuar_est_init(&est, 8);
	gpuar_est_late(&est, 1000 * US);
	ck_assert_uint_eq(predicted(&est), 500 * US);
}
END_TEST

START_TEST(late_wakes_lower_the_prediction_geometrically)
{
	struct gpuar_est est;
	u64 expect = 1 * MS;
	int i;

	gpuar_est_init(&est, 8);
	gpuar_est_exact(&est, 1 * MS);
	for (i = 0; i < 6; i++) {
		/* each late wake came at the predicted time or after it */
		gpuar_est_late(&est, predicted(&est) + 200 * US);
		expect /= 2;
		ck_assert_uint_eq(predicted(&est), expect);
	}
}
END_TEST

START_TEST(late_wake_never_raises_the_prediction)
{
	static const u64 wokes[] = {
		0, 1, 10 * US, 100 * US, 1 * MS, 50 * MS, UINT64_MAX,
	};
	struct gpuar_est est;
	size_t i;

	gpuar_est_init(&est, 4);
	gpuar_est_exact(&est, 300 * US);
	for (i = 0; i < sizeof(wokes) / sizeof(wokes[0]); i++) {
		u64 before = predicted(&est);

		gpuar_est_late(&est, wokes[i]);
		ck_assert_uint_le(predicted(&est), before);
		ck_assert_uint_le(predicted(&est), wokes[i] / 2);
	}
}
END_TEST

START_TEST(late_records_min_of_woke_and_prediction_halved)
{
	struct gpuar_est est;

	gpuar_est_init(&est, 8);
	gpuar_est_exact(&est, 800 * US);
	gpuar_est_late(&est, 10 * MS); /* prediction 800 us < woke */
	ck_assert_uint_eq(predicted(&est), 400 * US);
	gpuar_est_init(&est, 8);
	gpuar_est_exact(&est, 800 * US);
	gpuar_est_late(&est, 300 * US); /* woke 300 us < prediction */
	ck_assert_uint_eq(predicted(&est), 150 * US);
}
END_TEST

/* ------------------------------------------------------------ window */

START_TEST(init_clamps_window_to_1_through_16)
{
	struct gpuar_est est;

	gpuar_est_init(&est, 0);
	ck_assert_uint_eq(est.window, 1);
	gpuar_est_init(&est, 99);
	ck_assert_uint_eq(est.window, 16);
	gpuar_est_init(&est, 5);
	ck_assert_uint_eq(est.window, 5);
	ck_assert_uint_eq(est.len, 0);
	ck_assert_uint_eq(est.samples, 0);
}
END_TEST

START_TEST(oldest_sample_leaves_a_full_window)
{
	struct gpuar_est est;

	gpuar_est_init(&est, 2);
	gpuar_est_exact(&est, 1);
	gpuar_est_exact(&est, 2);
	ck_assert_uint_eq(predicted(&est), 1);
	gpuar_est_exact(&est, 3);
	ck_assert_uint_eq(predicted(&est), 2);
	ck_assert_uint_eq(est.samples, 3);
	ck_assert_uint_eq(est.len, 2);
}
END_TEST

START_TEST(set_window_shrinking_keeps_the_newest_samples)
{
	struct gpuar_est est;

	gpuar_est_init(&est, 8);
	gpuar_est_exact(&est, 5);
	gpuar_est_exact(&est, 1);
	gpuar_est_exact(&est, 7);
	gpuar_est_exact(&est, 8);
	gpuar_est_set_window(&est, 2);
	ck_assert_uint_eq(est.window, 2);
	ck_assert_uint_eq(est.len, 2);
	ck_assert_uint_eq(predicted(&est), 7);
	gpuar_est_exact(&est, 9); /* 7 leaves, {8, 9} remain */
	ck_assert_uint_eq(predicted(&est), 8);
}
END_TEST

START_TEST(set_window_growing_keeps_all_samples_in_order)
{
	struct gpuar_est est;

	gpuar_est_init(&est, 2);
	gpuar_est_exact(&est, 1);
	gpuar_est_exact(&est, 2);
	gpuar_est_exact(&est, 3); /* ring {2, 3}, wrapped */
	gpuar_est_set_window(&est, 4);
	ck_assert_uint_eq(est.len, 2);
	ck_assert_uint_eq(predicted(&est), 2);
	gpuar_est_exact(&est, 10);
	gpuar_est_exact(&est, 11); /* {2, 3, 10, 11} */
	ck_assert_uint_eq(predicted(&est), 2);
	gpuar_est_exact(&est, 12); /* 2 is the oldest and leaves */
	ck_assert_uint_eq(predicted(&est), 3);
	gpuar_est_exact(&est, 13);
	ck_assert_uint_eq(predicted(&est), 10);
}
END_TEST

START_TEST(set_window_on_an_empty_estimator_still_predicts_nothing)
{
	struct gpuar_est est;
	u64 ns;

	gpuar_est_init(&est, 8);
	gpuar_est_set_window(&est, 3);
	ck_assert_uint_eq(est.window, 3);
	ck_assert(!gpuar_est_predict(&est, &ns));
	gpuar_est_set_window(&est, 0);
	ck_assert_uint_eq(est.window, 1);
}
END_TEST

START_TEST(set_window_to_the_same_size_changes_nothing)
{
	struct gpuar_est est, before;

	gpuar_est_init(&est, 3);
	gpuar_est_exact(&est, 4);
	gpuar_est_exact(&est, 6);
	gpuar_est_exact(&est, 5);
	gpuar_est_exact(&est, 7);
	before = est;
	gpuar_est_set_window(&est, 3);
	ck_assert(memcmp(&est, &before, sizeof(est)) == 0);
}
END_TEST

START_TEST(zeroed_estimator_records_without_overrunning_its_ring)
{
	struct gpuar_est est;

	memset(&est, 0, sizeof(est));
	gpuar_est_exact(&est, 42);
	ck_assert_uint_eq(est.window, 1);
	ck_assert_uint_eq(predicted(&est), 42);
}
END_TEST

/* ---------------------------------------------- wake-up latency, wake */

START_TEST(wakelat_is_zero_before_any_sample)
{
	struct gpuar_wakelat wl;

	gpuar_wakelat_init(&wl);
	ck_assert_uint_eq(gpuar_wakelat_quantile(&wl), 0);
	gpuar_wakelat_record(&wl, 77);
	ck_assert_uint_eq(gpuar_wakelat_quantile(&wl), 77);
}
END_TEST

START_TEST(wakelat_is_the_90th_percentile_by_nearest_rank)
{
	static const u64 shuffled[10] = {7, 3, 10, 1, 9, 5, 2, 8, 6, 4};
	struct gpuar_wakelat wl;
	u64 i;

	gpuar_wakelat_init(&wl);
	for (i = 0; i < 10; i++)
		gpuar_wakelat_record(&wl, shuffled[i]);
	/* rank ceil(0.9 * 10) = 9 */
	ck_assert_uint_eq(gpuar_wakelat_quantile(&wl), 9);
	gpuar_wakelat_init(&wl);
	for (i = 32; i >= 1; i--)
		gpuar_wakelat_record(&wl, i * 1000);
	/* rank ceil(0.9 * 32) = 29 */
	ck_assert_uint_eq(gpuar_wakelat_quantile(&wl), 29000);
}
END_TEST

START_TEST(wakelat_is_a_high_quantile_not_the_minimum)
{
	struct gpuar_wakelat wl;
	int i;

	gpuar_wakelat_init(&wl);
	for (i = 0; i < 28; i++)
		gpuar_wakelat_record(&wl, 10 * US);
	for (i = 0; i < 4; i++)
		gpuar_wakelat_record(&wl, 200 * US);
	/* 4 of 32 slow wakes are more than the 10% the quantile ignores */
	ck_assert_uint_eq(gpuar_wakelat_quantile(&wl), 200 * US);
	gpuar_wakelat_init(&wl);
	for (i = 0; i < 29; i++)
		gpuar_wakelat_record(&wl, 10 * US);
	for (i = 0; i < 3; i++)
		gpuar_wakelat_record(&wl, 200 * US);
	ck_assert_uint_eq(gpuar_wakelat_quantile(&wl), 10 * US);
}
END_TEST

START_TEST(wakelat_keeps_only_the_last_32_samples)
{
	struct gpuar_wakelat wl;
	u64 i;

	gpuar_wakelat_init(&wl);
	for (i = 1; i <= 100; i++)
		gpuar_wakelat_record(&wl, i);
	/* ring holds 69..100; the 29th smallest is 97 */
	ck_assert_uint_eq(wl.len, GPUAR_WAKELAT_SAMPLES);
	ck_assert_uint_eq(gpuar_wakelat_quantile(&wl), 97);
}
END_TEST

START_TEST(early_wake_stands_the_wake_latency_before_the_sleep)
{
	ck_assert_uint_eq(gpuar_est_early_wake_ns(750 * US, 50 * US), 700 * US);
	ck_assert_uint_eq(gpuar_est_early_wake_ns(750 * US, 750 * US), 0);
	ck_assert_uint_eq(gpuar_est_early_wake_ns(40 * US, 50 * US), 0);
	ck_assert_uint_eq(gpuar_est_early_wake_ns(0, 0), 0);
}
END_TEST

/* ------------------------------------------------------- point table */

#define TABLE_CAP 8

START_TEST(table_find_on_empty_table_finds_nothing)
{
	struct gpuar_est_entry slots[TABLE_CAP];
	u32 index[TABLE_CAP];
	struct gpuar_est_table tab;

	memset(slots, 0xff, sizeof(slots));
	gpuar_est_table_init(&tab, slots, index, TABLE_CAP, TABLE_CAP);
	ck_assert_ptr_null(gpuar_est_table_find(&tab, 0));
	ck_assert_ptr_null(gpuar_est_table_find(&tab, 12345));
	ck_assert_uint_eq(tab.used, 0);
}
END_TEST

START_TEST(table_get_adds_a_fresh_point_once)
{
	struct gpuar_est_entry slots[TABLE_CAP];
	u32 index[TABLE_CAP];
	struct gpuar_est_table tab;
	struct gpuar_est_entry *e, *again;
	u32 i;

	memset(slots, 0xff, sizeof(slots));
	gpuar_est_table_init(&tab, slots, index, TABLE_CAP, TABLE_CAP);
	e = gpuar_est_table_get(&tab, 0xabc, 8);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->point, 0xabc);
	ck_assert_uint_eq(e->est.window, 8);
	ck_assert_uint_eq(e->est.len, 0);
	for (i = 0; i < GPUAR_OUTCOME_SLOTS; i++)
		ck_assert_uint_eq(e->outcomes[i], 0);
	gpuar_est_exact(&e->est, 5 * US);
	e->outcomes[GPUAR_OUTCOME_EXACT]++;
	/* a second get with another window returns the same, untouched */
	again = gpuar_est_table_get(&tab, 0xabc, 2);
	ck_assert_ptr_eq(again, e);
	ck_assert_uint_eq(again->est.window, 8);
	ck_assert_uint_eq(again->outcomes[GPUAR_OUTCOME_EXACT], 1);
	ck_assert_ptr_eq(gpuar_est_table_find(&tab, 0xabc), e);
	ck_assert_uint_eq(tab.used, 1);
}
END_TEST

START_TEST(table_refuses_new_points_at_its_limit)
{
	struct gpuar_est_entry slots[TABLE_CAP];
	u32 index[TABLE_CAP];
	struct gpuar_est_table tab;

	gpuar_est_table_init(&tab, slots, index, TABLE_CAP, 3);
	ck_assert_ptr_nonnull(gpuar_est_table_get(&tab, 1, 8));
	ck_assert_ptr_nonnull(gpuar_est_table_get(&tab, 2, 8));
	ck_assert_ptr_nonnull(gpuar_est_table_get(&tab, 3, 8));
	ck_assert_ptr_null(gpuar_est_table_get(&tab, 4, 8));
	ck_assert_ptr_null(gpuar_est_table_find(&tab, 4));
	/* known points are still found */
	ck_assert_ptr_nonnull(gpuar_est_table_get(&tab, 2, 8));
	ck_assert_uint_eq(tab.used, 3);
}
END_TEST

/*
 * A table that evicts refuses a new point only while every point is held;
 * otherwise the least recently held idle point goes, and entries never
 * move (held pointers stay valid), however many points come and go.
 */
START_TEST(table_evicts_the_least_recently_held_idle_point)
{
	struct gpuar_est_entry slots[TABLE_CAP];
	u32 index[TABLE_CAP];
	struct gpuar_est_table tab;
	struct gpuar_est_entry *e1, *e2, *e3, *e4;
	uint64_t p;

	gpuar_est_table_init(&tab, slots, index, TABLE_CAP, 3);
	gpuar_est_table_evict_idle(&tab);
	e1 = gpuar_est_table_get(&tab, 1, 8);
	e2 = gpuar_est_table_get(&tab, 2, 8);
	e3 = gpuar_est_table_get(&tab, 3, 8);
	gpuar_est_entry_hold(&tab, e2);
	gpuar_est_entry_hold(&tab, e1);
	gpuar_est_entry_hold(&tab, e3);
	ck_assert_ptr_null(gpuar_est_table_get(&tab, 4, 8));
	gpuar_est_exact(&e3->est, 333);
	gpuar_est_entry_release(e2);
	gpuar_est_entry_release(e1);
	/* 2 was held before 1: it goes first. */
	e4 = gpuar_est_table_get(&tab, 4, 8);
	ck_assert_ptr_nonnull(e4);
	ck_assert_ptr_null(gpuar_est_table_find(&tab, 2));
	ck_assert_ptr_eq(gpuar_est_table_find(&tab, 1), e1);
	ck_assert_ptr_eq(gpuar_est_table_find(&tab, 3), e3);
	ck_assert_uint_eq(tab.used, 3);
	/* A new point starts empty. */
	ck_assert_uint_eq(e4->est.samples, 0);
	/* Churn: the held point keeps its place and its samples. */
	for (p = 100; p < 100 + 10 * TABLE_CAP; p++)
		ck_assert_ptr_nonnull(gpuar_est_table_get(&tab, p, 1));
	ck_assert_ptr_eq(gpuar_est_table_find(&tab, 3), e3);
	ck_assert_uint_eq(e3->est.samples, 1);
	ck_assert_uint_eq(tab.used, 3);
	ck_assert_ptr_nonnull(gpuar_est_table_find(&tab, 99 + 10 * TABLE_CAP));
}
END_TEST

/* Without evict_idle a full table stays full, as the library's do. */
START_TEST(table_without_eviction_ignores_idleness)
{
	struct gpuar_est_entry slots[TABLE_CAP];
	u32 index[TABLE_CAP];
	struct gpuar_est_table tab;

	gpuar_est_table_init(&tab, slots, index, TABLE_CAP, 1);
	ck_assert_ptr_nonnull(gpuar_est_table_get(&tab, 1, 8));
	ck_assert_ptr_null(gpuar_est_table_get(&tab, 2, 8));
}
END_TEST

START_TEST(table_limit_is_capped_at_capacity)
{
	struct gpuar_est_entry slots[4];
	u32 index[4];
	struct gpuar_est_table tab;
	u64 p;

	gpuar_est_table_init(&tab, slots, index, 4, 100);
	ck_assert_uint_eq(tab.limit, 4);
	for (p = 10; p < 14; p++)
		ck_assert_ptr_nonnull(gpuar_est_table_get(&tab, p, 1));
	ck_assert_ptr_null(gpuar_est_table_get(&tab, 99, 1));
	/* a full table still answers a miss, probing once around */
	ck_assert_ptr_null(gpuar_est_table_find(&tab, 99));
	for (p = 10; p < 14; p++)
		ck_assert_uint_eq(gpuar_est_table_find(&tab, p)->point, p);
}
END_TEST

START_TEST(table_refuses_a_capacity_that_is_not_a_power_of_two)
{
	struct gpuar_est_entry slots[6];
	u32 index[6];
	struct gpuar_est_table tab;

	gpuar_est_table_init(&tab, slots, index, 6, 6);
	ck_assert_uint_eq(tab.cap, 0);
	ck_assert_ptr_null(gpuar_est_table_get(&tab, 1, 8));
	gpuar_est_table_init(&tab, slots, index, 0, 0);
	ck_assert_ptr_null(gpuar_est_table_get(&tab, 1, 8));
	ck_assert_ptr_null(gpuar_est_table_find(&tab, 1));
}
END_TEST

/* The slot a point takes in an empty table: its home. */
static size_t home_of(u64 point)
{
	struct gpuar_est_entry slots[TABLE_CAP];
	u32 index[TABLE_CAP];
	struct gpuar_est_table tab;

	gpuar_est_table_init(&tab, slots, index, TABLE_CAP, TABLE_CAP);
	return gpuar_est_table_get(&tab, point, 1)->slot;
}

/* A point other than @point whose home is @home. */
static u64 point_with_home(size_t home, u64 not )
{
	u64 p;

	for (p = 1; p < 100000; p++)
		if (p != not &&home_of(p) == home)
			return p;
	ck_abort_msg("no point with home %zu", home);
	return 0;
}

START_TEST(colliding_points_each_keep_their_own_entry)
{
	struct gpuar_est_entry slots[TABLE_CAP];
	u32 index[TABLE_CAP];
	struct gpuar_est_table tab;
	u64 a = point_with_home(3, 0);
	u64 b = point_with_home(3, a);
	struct gpuar_est_entry *ea, *eb;

	gpuar_est_table_init(&tab, slots, index, TABLE_CAP, TABLE_CAP);
	ea = gpuar_est_table_get(&tab, a, 4);
	eb = gpuar_est_table_get(&tab, b, 4);
	ck_assert_ptr_ne(ea, eb);
	ck_assert_int_eq(ea->slot, 3);
	ck_assert_int_eq(eb->slot, 4);
	gpuar_est_exact(&ea->est, 111);
	gpuar_est_exact(&eb->est, 222);
	ck_assert_uint_eq(predicted(&gpuar_est_table_find(&tab, a)->est), 111);
	ck_assert_uint_eq(predicted(&gpuar_est_table_find(&tab, b)->est), 222);
}
END_TEST

START_TEST(collision_in_the_last_slot_wraps_to_the_first)
{
	struct gpuar_est_entry slots[TABLE_CAP];
	u32 index[TABLE_CAP];
	struct gpuar_est_table tab;
	u64 a = point_with_home(TABLE_CAP - 1, 0);
	u64 b = point_with_home(TABLE_CAP - 1, a);

	gpuar_est_table_init(&tab, slots, index, TABLE_CAP, TABLE_CAP);
	ck_assert_int_eq(gpuar_est_table_get(&tab, a, 1)->slot, TABLE_CAP - 1);
	ck_assert_int_eq(gpuar_est_table_get(&tab, b, 1)->slot, 0);
	ck_assert_uint_eq(gpuar_est_table_find(&tab, b)->point, b);
	ck_assert_uint_eq(gpuar_est_table_find(&tab, a)->point, a);
}
END_TEST

START_TEST(table_holds_many_points_up_to_capacity)
{
	enum { CAP = 256 };
	static struct gpuar_est_entry slots[CAP];
	static u32 index[CAP];
	struct gpuar_est_table tab;
	u64 i;

	gpuar_est_table_init(&tab, slots, index, CAP, CAP);
	/* call-site-like keys: aligned addresses, many sharing low bits */
	for (i = 0; i < CAP; i++) {
		struct gpuar_est_entry *e =
			gpuar_est_table_get(&tab, 0x400000 + i * 64, 8);

		ck_assert_ptr_nonnull(e);
		gpuar_est_exact(&e->est, i);
	}
	for (i = 0; i < CAP; i++) {
		struct gpuar_est_entry *e =
			gpuar_est_table_find(&tab, 0x400000 + i * 64);

		ck_assert_ptr_nonnull(e);
		ck_assert_uint_eq(predicted(&e->est), i);
	}
	ck_assert_ptr_null(gpuar_est_table_get(&tab, 1, 8));
}
END_TEST

/* Every indexed entry sits at its slot, and the index holds nothing else. */
static void assert_index_consistent(const struct gpuar_est_table *tab)
{
	u32 i, indexed = 0;

	for (i = 0; i < tab->cap; i++)
		if (tab->index[i] != GPUAR_EST_SLOT_EMPTY) {
			const struct gpuar_est_entry *e =
				&tab->entries[tab->index[i] - 1];

			ck_assert(e->used);
			ck_assert_uint_eq(e->slot, i);
			indexed++;
		}
	ck_assert_uint_eq(indexed, tab->used);
}

/* Index slots @point's lookup reads. */
static u64 find_visits(struct gpuar_est_table *tab, u64 point)
{
	u64 before = tab->visits;

	gpuar_est_table_find(tab, point);
	return tab->visits - before;
}

/*
 * Evicting the head of a run shifts the rest of the run back into the
 * hole: no tombstone is left, so a miss at that home ends where the run
 * now ends.
 */
START_TEST(eviction_shifts_the_run_back_without_tombstones)
{
	struct gpuar_est_entry slots[TABLE_CAP];
	u32 index[TABLE_CAP];
	struct gpuar_est_table tab;
	u64 a = point_with_home(2, 0);
	u64 b = point_with_home(2, a);
	u64 c = point_with_home(3, 0);
	u64 d = point_with_home(6, 0);
	u64 miss;
	struct gpuar_est_entry *ea, *eb, *ec;

	for (miss = 1; miss == a || miss == b || home_of(miss) != 2; miss++)
		;
	gpuar_est_table_init(&tab, slots, index, TABLE_CAP, 3);
	gpuar_est_table_evict_idle(&tab);
	ea = gpuar_est_table_get(&tab, a, 1);
	eb = gpuar_est_table_get(&tab, b, 1);
	ec = gpuar_est_table_get(&tab, c, 1);
	/* a at its home 2, b displaced to 3, c (home 3) to 4 */
	ck_assert_uint_eq(ea->slot, 2);
	ck_assert_uint_eq(eb->slot, 3);
	ck_assert_uint_eq(ec->slot, 4);
	/* d evicts a, idle longest: b moves back to 2, c to its home 3 */
	ck_assert_ptr_eq(gpuar_est_table_get(&tab, d, 1), ea);
	ck_assert_uint_eq(ea->slot, 6);
	ck_assert_uint_eq(eb->slot, 2);
	ck_assert_uint_eq(ec->slot, 3);
	ck_assert_uint_eq(index[4], GPUAR_EST_SLOT_EMPTY);
	assert_index_consistent(&tab);
	ck_assert_ptr_eq(gpuar_est_table_find(&tab, b), eb);
	ck_assert_ptr_eq(gpuar_est_table_find(&tab, c), ec);
	ck_assert_ptr_null(gpuar_est_table_find(&tab, a));
	/* a miss at home 2 reads 2, 3 and the empty 4 */
	ck_assert_uint_eq(find_visits(&tab, miss), 3);
}
END_TEST

/*
 * A run that wraps past the last slot shifts back across it too: an entry
 * at slot 0 whose home is the last slot moves into a hole there.
 */
START_TEST(shift_back_wraps_past_the_last_slot)
{
	struct gpuar_est_entry slots[TABLE_CAP];
	u32 index[TABLE_CAP];
	struct gpuar_est_table tab;
	u64 a = point_with_home(TABLE_CAP - 1, 0);
	u64 b = point_with_home(TABLE_CAP - 1, a);
	u64 c = point_with_home(0, 0);
	u64 d = point_with_home(4, 0);
	struct gpuar_est_entry *eb, *ec;

	gpuar_est_table_init(&tab, slots, index, TABLE_CAP, 3);
	gpuar_est_table_evict_idle(&tab);
	gpuar_est_table_get(&tab, a, 1);
	eb = gpuar_est_table_get(&tab, b, 1);
	ec = gpuar_est_table_get(&tab, c, 1);
	ck_assert_uint_eq(eb->slot, 0);
	ck_assert_uint_eq(ec->slot, 1);
	gpuar_est_table_get(&tab, d, 1);	/* evicts a */
	ck_assert_uint_eq(eb->slot, TABLE_CAP - 1);
	ck_assert_uint_eq(ec->slot, 0);
	ck_assert_uint_eq(index[1], GPUAR_EST_SLOT_EMPTY);
	assert_index_consistent(&tab);
	ck_assert_ptr_eq(gpuar_est_table_find(&tab, b), eb);
	ck_assert_ptr_eq(gpuar_est_table_find(&tab, c), ec);
}
END_TEST

/*
 * The point evicted is the one idle longest: released first, or, never
 * held, added first; holding takes a point off the idle list, releasing
 * puts it at the end.
 */
START_TEST(eviction_takes_the_point_idle_longest)
{
	struct gpuar_est_entry slots[TABLE_CAP];
	u32 index[TABLE_CAP];
	struct gpuar_est_table tab;
	struct gpuar_est_entry *e1, *e2, *e3;

	gpuar_est_table_init(&tab, slots, index, TABLE_CAP, 3);
	gpuar_est_table_evict_idle(&tab);
	e1 = gpuar_est_table_get(&tab, 1, 1);
	e2 = gpuar_est_table_get(&tab, 2, 1);
	e3 = gpuar_est_table_get(&tab, 3, 1);
	gpuar_est_entry_hold(&tab, e1);
	gpuar_est_entry_hold(&tab, e1);
	gpuar_est_entry_hold(&tab, e3);
	gpuar_est_entry_release(e3);
	gpuar_est_entry_release(e1);
	/* idle: 2 (added), 3 (released), 1 still held once */
	ck_assert_ptr_eq(gpuar_est_table_get(&tab, 4, 1), e2);
	ck_assert_ptr_null(gpuar_est_table_find(&tab, 2));
	ck_assert_ptr_eq(gpuar_est_table_get(&tab, 5, 1), e3);
	ck_assert_ptr_null(gpuar_est_table_find(&tab, 3));
	/* 1 held, 4 and 5 idle: 4 goes, then 5, then nothing */
	ck_assert_ptr_eq(gpuar_est_table_get(&tab, 6, 1), e2);
	ck_assert_uint_eq(e2->point, 6);
	gpuar_est_entry_hold(&tab, e2);
	ck_assert_ptr_eq(gpuar_est_table_get(&tab, 7, 1), e3);
	gpuar_est_entry_hold(&tab, e3);
	ck_assert_ptr_null(gpuar_est_table_get(&tab, 8, 1));
	gpuar_est_entry_release(e1);
	ck_assert_ptr_eq(gpuar_est_table_get(&tab, 8, 1), e1);
	ck_assert_ptr_eq(gpuar_est_table_find(&tab, 6), e2);
	ck_assert_ptr_eq(gpuar_est_table_find(&tab, 7), e3);
	assert_index_consistent(&tab);
}
END_TEST

/*
 * The costs K3-4 was about, at the module's default (64 points, 128
 * slots) after ten tables' worth of new points: a tombstone table had no
 * empty slot left by then, and every new point or miss read all 128
 * slots (a new point twice, plus a 128-entry LRU scan). Counted in index
 * slots read, with call-site-like keys.
 */
START_TEST(churn_keeps_every_probe_short)
{
	enum { LIMIT = 64, CAP = 128 };
	static struct gpuar_est_entry slots[LIMIT];
	static u32 index[CAP];
	struct gpuar_est_table tab;
	u64 p, before;

	gpuar_est_table_init(&tab, slots, index, CAP, LIMIT);
	gpuar_est_table_evict_idle(&tab);
	for (p = 0; p < 10 * LIMIT; p++) {
		struct gpuar_est_entry *e =
			gpuar_est_table_get(&tab, 0x400000 + p * 64, 8);

		ck_assert_ptr_nonnull(e);
		gpuar_est_entry_hold(&tab, e);
		gpuar_est_entry_release(e);
	}
	assert_index_consistent(&tab);
	ck_assert_uint_eq(tab.used, LIMIT);

	before = tab.visits;
	for (; p < 11 * LIMIT; p++)
		ck_assert_ptr_nonnull(
			gpuar_est_table_get(&tab, 0x400000 + p * 64, 8));
	ck_assert_uint_le(tab.visits - before, 8 * LIMIT);

	before = tab.visits;
	for (p = 10 * LIMIT; p < 11 * LIMIT; p++)
		ck_assert_ptr_nonnull(
			gpuar_est_table_find(&tab, 0x400000 + p * 64));
	ck_assert_uint_le(tab.visits - before, 4 * LIMIT);

	before = tab.visits;
	for (p = 0; p < LIMIT; p++)
		ck_assert_ptr_null(
			gpuar_est_table_find(&tab, 0x400000 + p * 64));
	ck_assert_uint_le(tab.visits - before, 4 * LIMIT);
	assert_index_consistent(&tab);
}
END_TEST

/*
 * Random points, holds and releases against a model: the index stays
 * consistent, a held entry never moves or changes point, the table never
 * holds more than its limit, and a refusal happens only when every point
 * is held.
 */
START_TEST(random_churn_matches_a_model)
{
	enum { LIMIT = 16, CAP = 32, STEPS = 20000 };
	static struct gpuar_est_entry slots[LIMIT];
	static u32 index[CAP];
	struct gpuar_est_table tab;
	struct gpuar_est_entry *held[LIMIT * 2];
	u64 held_point[LIMIT * 2];
	u32 nheld = 0, i, step;
	u64 seed = 12345;

	gpuar_est_table_init(&tab, slots, index, CAP, LIMIT);
	gpuar_est_table_evict_idle(&tab);
	for (step = 0; step < STEPS; step++) {
		u64 r, point;
		struct gpuar_est_entry *e;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		r = seed >> 33;
		point = r % 48;
		if ((r & 0x300) == 0 && nheld) {
			i = (u32)((r >> 12) % nheld);
			gpuar_est_entry_release(held[i]);
			held[i] = held[--nheld];
			held_point[i] = held_point[nheld];
			continue;
		}
		e = gpuar_est_table_get(&tab, point, 1);
		if (!e) {
			u32 j, distinct = 0;

			/* refused: every entry is held */
			for (j = 0; j < LIMIT; j++)
				distinct += slots[j].holds != 0;
			ck_assert_uint_eq(distinct, LIMIT);
			continue;
		}
		ck_assert_uint_eq(e->point, point);
		if (nheld < LIMIT * 2) {
			gpuar_est_entry_hold(&tab, e);
			held[nheld] = e;
			held_point[nheld++] = point;
		}
		for (i = 0; i < nheld; i++)
			ck_assert_uint_eq(held[i]->point, held_point[i]);
		ck_assert_uint_le(tab.used, LIMIT);
	}
	assert_index_consistent(&tab);
}
END_TEST

static Suite *estimator_suite(void)
{
	Suite *s = suite_create("estimator");
	TCase *vec = tcase_create("worked examples");
	TCase *rule = tcase_create("rules");
	TCase *wl = tcase_create("wake latency");
	TCase *tab = tcase_create("table");

	tcase_add_test(vec, first_wait_at_a_point_never_sleeps);
	tcase_add_test(vec, residuals_1_0_0_9_1_1_ms_sleep_750_us);
	tcase_add_test(vec, after_eight_2_ms_samples_sleep_1850_us);
	tcase_add_test(vec, residual_160_us_gives_no_sleep);
	tcase_add_test(vec, residual_u64_max_sleeps_max_50_ms);
	suite_add_tcase(s, vec);

	tcase_add_test(rule, sleep_at_exactly_min_sleep_is_kept);
	tcase_add_test(rule, margin_above_prediction_saturates_to_no_sleep);
	tcase_add_test(rule, plan_without_prediction_never_sleeps);
	tcase_add_test(rule, late_without_prediction_records_half_of_woke);
	tcase_add_test(rule, late_wakes_lower_the_prediction_geometrically);
	tcase_add_test(rule, late_wake_never_raises_the_prediction);
	tcase_add_test(rule, late_records_min_of_woke_and_prediction_halved);
	tcase_add_test(rule, init_clamps_window_to_1_through_16);
	tcase_add_test(rule, oldest_sample_leaves_a_full_window);
	tcase_add_test(rule, set_window_shrinking_keeps_the_newest_samples);
	tcase_add_test(rule, set_window_growing_keeps_all_samples_in_order);
	tcase_add_test(rule,
		       set_window_on_an_empty_estimator_still_predicts_nothing);
	tcase_add_test(rule, set_window_to_the_same_size_changes_nothing);
	tcase_add_test(rule,
		       zeroed_estimator_records_without_overrunning_its_ring);
	suite_add_tcase(s, rule);

	tcase_add_test(wl, wakelat_is_zero_before_any_sample);
	tcase_add_test(wl, wakelat_is_the_90th_percentile_by_nearest_rank);
	tcase_add_test(wl, wakelat_is_a_high_quantile_not_the_minimum);
	tcase_add_test(wl, wakelat_keeps_only_the_last_32_samples);
	tcase_add_test(wl, early_wake_stands_the_wake_latency_before_the_sleep);
	suite_add_tcase(s, wl);

	tcase_add_test(tab, table_find_on_empty_table_finds_nothing);
	tcase_add_test(tab, table_get_adds_a_fresh_point_once);
	tcase_add_test(tab, table_refuses_new_points_at_its_limit);
	tcase_add_test(tab, table_evicts_the_least_recently_held_idle_point);
	tcase_add_test(tab, table_without_eviction_ignores_idleness);
	tcase_add_test(tab, table_limit_is_capped_at_capacity);
	tcase_add_test(tab,
		       table_refuses_a_capacity_that_is_not_a_power_of_two);
	tcase_add_test(tab, colliding_points_each_keep_their_own_entry);
	tcase_add_test(tab, collision_in_the_last_slot_wraps_to_the_first);
	tcase_add_test(tab, table_holds_many_points_up_to_capacity);
	tcase_add_test(tab, eviction_shifts_the_run_back_without_tombstones);
	tcase_add_test(tab, shift_back_wraps_past_the_last_slot);
	tcase_add_test(tab, eviction_takes_the_point_idle_longest);
	tcase_add_test(tab, churn_keeps_every_probe_short);
	tcase_add_test(tab, random_churn_matches_a_model);
	suite_add_tcase(s, tab);
	return s;
}

int main(void)
{
	return unit_run(estimator_suite());
}
