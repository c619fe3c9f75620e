// SPDX-License-Identifier: MIT
/*
 * gpuar-bench's machine-independent counts: per-wait arithmetic, a
 * strategy without a port has no port counts, and the thread's context
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
		.port = { .timer_fires = 100, .checks = 50, .imminent = 7,
			  .claims = 6, .lease_expiries = 1, .late = 2 },
		.has_port = true,
	};
	struct bench_counts b = {
		.voluntary = 30, .involuntary = 8, .helper_wakeups = 13,
		.port = { .timer_fires = 140, .checks = 110, .imminent = 27,
			  .claims = 16, .lease_expiries = 6, .late = 4 },
		.has_port = true,
	};
	struct bench_counts_per_wait pw = bench_counts_per_wait(&a, &b, 20);

	ck_assert_double_eq_tol(pw.port.timer_fires, 2.0, 1e-9);
	ck_assert_double_eq_tol(pw.port.checks, 3.0, 1e-9);
	ck_assert_double_eq_tol(pw.port.imminent, 1.0, 1e-9);
	ck_assert_double_eq_tol(pw.port.claims, 0.5, 1e-9);
	ck_assert_double_eq_tol(pw.port.lease_expiries, 0.25, 1e-9);
	ck_assert_double_eq_tol(pw.port.late, 0.1, 1e-9);
	/* (20 voluntary + 4 involuntary) / 20 */
	ck_assert_double_eq_tol(pw.ctx_switches, 1.2, 1e-9);
	/* (20 voluntary + 10 of the helper's) / 20 */
	ck_assert_double_eq_tol(pw.wakeups, 1.5, 1e-9);
}
END_TEST

static void assert_no_port_counts(const struct bench_port_per_wait *p)
{
	ck_assert(p->timer_fires < 0);
	ck_assert(p->checks < 0);
	ck_assert(p->imminent < 0);
	ck_assert(p->claims < 0);
	ck_assert(p->lease_expiries < 0);
	ck_assert(p->late < 0);
}

START_TEST(no_port_has_no_port_counts)
{
	struct bench_counts a = { .voluntary = 1 }, b = { .voluntary = 5 };
	struct bench_counts_per_wait pw = bench_counts_per_wait(&a, &b, 4);

	assert_no_port_counts(&pw.port);
	ck_assert_double_eq_tol(pw.wakeups, 1.0, 1e-9);
	/* A port whose stats failed at either end is not counted either. */
	a.has_port = true;
	pw = bench_counts_per_wait(&a, &b, 4);
	assert_no_port_counts(&pw.port);
}
END_TEST

/* System calls per wait where both ends counted them, else -1 ("-"). */
START_TEST(syscalls_per_wait_only_when_counted)
{
	struct bench_counts a = { .syscalls = 10, .has_syscalls = true };
	struct bench_counts b = { .syscalls = 30, .has_syscalls = true };
	struct bench_counts_per_wait pw = bench_counts_per_wait(&a, &b, 4);

	ck_assert_double_eq_tol(pw.syscalls, 5.0, 1e-9);
	b.has_syscalls = false;
	pw = bench_counts_per_wait(&a, &b, 4);
	ck_assert(pw.syscalls < 0);
	pw = bench_counts_per_wait(&a, &a, 0);
	ck_assert(pw.syscalls < 0);
}
END_TEST

START_TEST(no_waits_count_nothing)
{
	struct bench_counts a = { .voluntary = 1 }, b = { .voluntary = 5 };
	struct bench_counts_per_wait pw = bench_counts_per_wait(&a, &b, 0);

	assert_no_port_counts(&pw.port);
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
	tcase_add_test(tc, no_port_has_no_port_counts);
	tcase_add_test(tc, no_waits_count_nothing);
	tcase_add_test(tc, syscalls_per_wait_only_when_counted);
	tcase_add_test(tc, a_sleep_is_a_voluntary_switch);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
