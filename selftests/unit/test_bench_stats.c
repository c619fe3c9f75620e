// SPDX-License-Identifier: MIT
/* gpuar-bench's order statistics: nearest-rank percentiles and spreads. */
#include <stdlib.h>

#include "bench_stats.h"
#include "unit.h"

START_TEST(percentile_of_empty_set_is_zero)
{
	ck_assert_double_eq(bench_percentile(NULL, 0, 50), 0.0);
}
END_TEST

START_TEST(percentile_of_one_sample_is_that_sample)
{
	double v[] = { 7.5 };

	ck_assert_double_eq(bench_percentile(v, 1, 0), 7.5);
	ck_assert_double_eq(bench_percentile(v, 1, 50), 7.5);
	ck_assert_double_eq(bench_percentile(v, 1, 99), 7.5);
	ck_assert_double_eq(bench_percentile(v, 1, 100), 7.5);
}
END_TEST

START_TEST(percentile_is_nearest_rank_not_interpolated)
{
	double v[] = { 1, 2, 3, 4 };

	/* p50 of 4 = rank ceil(2.0) = 2 -> 2 (interpolation would give 2.5). */
	ck_assert_double_eq(bench_percentile(v, 4, 50), 2.0);
	/* p51 -> rank ceil(2.04) = 3. */
	ck_assert_double_eq(bench_percentile(v, 4, 51), 3.0);
	/* p25 -> rank 1; p26 -> rank 2. */
	ck_assert_double_eq(bench_percentile(v, 4, 25), 1.0);
	ck_assert_double_eq(bench_percentile(v, 4, 26), 2.0);
}
END_TEST

START_TEST(percentile_exact_products_are_not_pushed_up_a_rank)
{
	double v[100];

	for (int i = 0; i < 100; i++)
		v[i] = i + 1;
	/* 99/100 * 100 = 99 exactly: rank 99, not 100. */
	ck_assert_double_eq(bench_percentile(v, 100, 99), 99.0);
	ck_assert_double_eq(bench_percentile(v, 100, 90), 90.0);
	ck_assert_double_eq(bench_percentile(v, 100, 50), 50.0);
}
END_TEST

START_TEST(percentile_ends_are_min_and_max)
{
	double v[] = { -3, 0, 10, 1000 };

	ck_assert_double_eq(bench_percentile(v, 4, 0), -3.0);
	ck_assert_double_eq(bench_percentile(v, 4, -5), -3.0);
	ck_assert_double_eq(bench_percentile(v, 4, 100), 1000.0);
	ck_assert_double_eq(bench_percentile(v, 4, 250), 1000.0);
	/* The smallest positive p is the first rank. */
	ck_assert_double_eq(bench_percentile(v, 4, 0.001), -3.0);
}
END_TEST

START_TEST(p99_of_2000_is_the_1980th_smallest)
{
	double *v = malloc(2000 * sizeof(*v));

	ck_assert_ptr_nonnull(v);
	for (int i = 0; i < 2000; i++)
		v[i] = 2000 - i;	/* descending: sorting is the caller's */
	bench_sort(v, 2000);
	ck_assert_double_eq(bench_percentile(v, 2000, 99), 1980.0);
	ck_assert_double_eq(bench_percentile(v, 2000, 99.9), 1998.0);
	free(v);
}
END_TEST

START_TEST(sort_orders_ascending_with_duplicates)
{
	double v[] = { 3, 1, 2, 1, -1 };

	bench_sort(v, 5);
	ck_assert_double_eq(v[0], -1);
	ck_assert_double_eq(v[1], 1);
	ck_assert_double_eq(v[2], 1);
	ck_assert_double_eq(v[3], 2);
	ck_assert_double_eq(v[4], 3);
}
END_TEST

START_TEST(spread_of_odd_count_is_middle_with_range)
{
	double v[] = { 5, 1, 9, 3, 7 };
	struct bench_spread s = bench_spread_of(v, 5);

	ck_assert_double_eq(s.median, 5);
	ck_assert_double_eq(s.min, 1);
	ck_assert_double_eq(s.max, 9);
	/* The input is left as it was. */
	ck_assert_double_eq(v[0], 5);
	ck_assert_double_eq(v[1], 1);
}
END_TEST

START_TEST(spread_of_even_count_averages_the_middle_two)
{
	double v[] = { 4, 1, 2, 10 };
	struct bench_spread s = bench_spread_of(v, 4);

	ck_assert_double_eq(s.median, 3);
	ck_assert_double_eq(s.min, 1);
	ck_assert_double_eq(s.max, 10);
}
END_TEST

START_TEST(spread_of_nothing_is_zero)
{
	struct bench_spread s = bench_spread_of(NULL, 0);

	ck_assert_double_eq(s.median, 0);
	ck_assert_double_eq(s.min, 0);
	ck_assert_double_eq(s.max, 0);
}
END_TEST

START_TEST(spread_handles_more_than_the_stack_buffer)
{
	double v[101];
	struct bench_spread s;

	for (int i = 0; i < 101; i++)
		v[i] = (i * 37) % 101;	/* a permutation of 0..100 */
	s = bench_spread_of(v, 101);
	ck_assert_double_eq(s.median, 50);
	ck_assert_double_eq(s.min, 0);
	ck_assert_double_eq(s.max, 100);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bench_stats");
	TCase *tc = tcase_create("stats");

	tcase_add_test(tc, percentile_of_empty_set_is_zero);
	tcase_add_test(tc, percentile_of_one_sample_is_that_sample);
	tcase_add_test(tc, percentile_is_nearest_rank_not_interpolated);
	tcase_add_test(tc, percentile_exact_products_are_not_pushed_up_a_rank);
	tcase_add_test(tc, percentile_ends_are_min_and_max);
	tcase_add_test(tc, p99_of_2000_is_the_1980th_smallest);
	tcase_add_test(tc, sort_orders_ascending_with_duplicates);
	tcase_add_test(tc, spread_of_odd_count_is_middle_with_range);
	tcase_add_test(tc, spread_of_even_count_averages_the_middle_two);
	tcase_add_test(tc, spread_of_nothing_is_zero);
	tcase_add_test(tc, spread_handles_more_than_the_stack_buffer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
