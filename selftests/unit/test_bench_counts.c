// SPDX-License-Identifier: MIT
/*
 * gpuar-bench's machine-independent counts: per-wait arithmetic, a
 * strategy without a port has no timer count, and the thread's context
 * switches do count a block.
 */
#include <stdint.h>
#include <time.h>

#include "bench_counts.h"
#include "unit.h"

START_TEST(counts_are_divided_per_wait)
{
	struct bench_counts a = {
		.voluntary = 10, .involuntary = 4, .helper_wakeups = 3,
		.timer_fires = 100, .has_timer = true,
	};
	struct bench_counts b = {
		.voluntary = 30, .involuntary = 8, .helper_wakeups = 13,
		.timer_fires = 140, .has_timer = true,
	};
	struct bench_counts_per_wait pw = bench_counts_per_wait(&a, &b, 20);

	ck_assert_double_eq_tol(pw.timer_fires, 2.0, 1e-9);
	/* (20 voluntary + 4 involuntary) / 20 */
	ck_assert_double_eq_tol(pw.ctx_switches, 1.2, 1e-9);
	/* (20 voluntary + 10 of the helper's) / 20 */
	ck_assert_double_eq_tol(pw.wakeups, 1.5, 1e-9);
}
END_TEST

START_TEST(no_port_has_no_timer_count)
{
	struct bench_counts a = { .voluntary = 1 }, b = { .voluntary = 5 };
	struct bench_counts_per_wait pw = bench_counts_per_wait(&a, &b, 4);

	ck_assert(pw.timer_fires < 0);
	ck_assert_double_eq_tol(pw.wakeups, 1.0, 1e-9);
	/* A port whose stats failed at either end is not counted either. */
	a.has_timer = true;
	pw = bench_counts_per_wait(&a, &b, 4);
	ck_assert(pw.timer_fires < 0);
}
END_TEST

START_TEST(no_waits_count_nothing)
{
	struct bench_counts a = { .voluntary = 1 }, b = { .voluntary = 5 };
	struct bench_counts_per_wait pw = bench_counts_per_wait(&a, &b, 0);

	ck_assert(pw.timer_fires < 0);
	ck_assert_double_eq(pw.ctx_switches, 0.0);
	ck_assert_double_eq(pw.wakeups, 0.0);
}
END_TEST

START_TEST(a_sleep_is_a_voluntary_switch)
{
	struct timespec ts = { .tv_nsec = 1000000 };
	struct bench_counts a, b;

	ck_assert_int_eq(bench_counts_thread(&a), 0);
	for (int i = 0; i < 3; i++)
		nanosleep(&ts, NULL);
	ck_assert_int_eq(bench_counts_thread(&b), 0);
	ck_assert_uint_ge(b.voluntary, a.voluntary + 3);
	ck_assert_uint_ge(b.involuntary, a.involuntary);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bench_counts");
	TCase *tc = tcase_create("counts");

	tcase_add_test(tc, counts_are_divided_per_wait);
	tcase_add_test(tc, no_port_has_no_timer_count);
	tcase_add_test(tc, no_waits_count_nothing);
	tcase_add_test(tc, a_sleep_is_a_voluntary_switch);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
