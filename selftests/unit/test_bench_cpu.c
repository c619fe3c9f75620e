// SPDX-License-Identifier: MIT
/*
 * gpuar-bench's CPU accounting: CPUs x wall - idle - the device's own time
 * (its wake-ups kept), and the thread clock.
 */
#include <stdint.h>
#include <time.h>

#include "bench_cpu.h"
#include "unit.h"

START_TEST(busy_is_cpus_times_wall_minus_idle)
{
	/* 2 CPUs, 1 s: 2 s of CPU; 150 ticks idle at 100 Hz = 1.5 s. */
	struct bench_cpu_sample s = {
		.wall_ns = 1000000000, .cpus = 2, .idle_ticks = 150, .ticks_per_s = 100,
	};

	ck_assert_double_eq_tol(bench_system_cpu_ns(&s), 0.5e9, 1.0);
}
END_TEST

START_TEST(device_time_is_subtracted_but_its_wakeups_count)
{
	struct bench_cpu_sample s = {
		.wall_ns = 1000000000, .cpus = 2, .idle_ticks = 100, .ticks_per_s = 100,
		.device_ns = 300000000, .device_notify_ns = 20000000,
	};

	/* 2 s - 1 s idle - (300 ms - 20 ms) of the device = 720 ms. */
	ck_assert_double_eq_tol(bench_system_cpu_ns(&s), 720e6, 1.0);
}
END_TEST

START_TEST(notify_above_device_time_subtracts_nothing)
{
	struct bench_cpu_sample s = {
		.wall_ns = 1000000000, .cpus = 1, .idle_ticks = 50, .ticks_per_s = 100,
		.device_ns = 10, .device_notify_ns = 20,
	};

	ck_assert_double_eq_tol(bench_system_cpu_ns(&s), 0.5e9, 1.0);
}
END_TEST

START_TEST(tick_rounding_below_zero_clamps_to_zero)
{
	/* An idle machine can report one tick more idle than wall allows. */
	struct bench_cpu_sample s = {
		.wall_ns = 100000000, .cpus = 2, .idle_ticks = 21, .ticks_per_s = 100,
	};

	ck_assert_double_eq(bench_system_cpu_ns(&s), 0.0);
}
END_TEST

START_TEST(unknown_tick_rate_gives_zero)
{
	struct bench_cpu_sample s = { .wall_ns = 1000, .cpus = 2, .ticks_per_s = 0 };

	ck_assert_double_eq(bench_system_cpu_ns(&s), 0.0);
}
END_TEST

START_TEST(other_tick_rates_scale)
{
	/* USER_HZ 250: 250 ticks = 1 s. */
	struct bench_cpu_sample s = {
		.wall_ns = 2000000000, .cpus = 4, .idle_ticks = 1750, .ticks_per_s = 250,
	};

	ck_assert_double_eq_tol(bench_system_cpu_ns(&s), 1e9, 1.0);
}
END_TEST

START_TEST(thread_clock_counts_work_not_sleep)
{
	uint64_t t0 = bench_thread_cpu_ns(), t1, t2;
	struct timespec ts = { .tv_nsec = 20000000 };
	volatile uint64_t x = 0;

	/* Spin for 20 ms of wall time: the thread clock moves. */
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		x++;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 20000000L);
	t1 = bench_thread_cpu_ns();
	ck_assert_uint_gt(t1, t0);
	/* Sleep 20 ms: it moves far less than the sleep (order, not duration). */
	nanosleep(&ts, NULL);
	t2 = bench_thread_cpu_ns();
	ck_assert_uint_lt(t2 - t1, t1 - t0);
}
END_TEST

START_TEST(own_thread_read_through_pthread_clock)
{
	uint64_t a = bench_other_thread_cpu_ns(pthread_self());
	uint64_t b = bench_thread_cpu_ns();

	ck_assert_uint_gt(a, 0);
	ck_assert_uint_le(a, b);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bench_cpu");
	TCase *tc = tcase_create("cpu");

	tcase_add_test(tc, busy_is_cpus_times_wall_minus_idle);
	tcase_add_test(tc, device_time_is_subtracted_but_its_wakeups_count);
	tcase_add_test(tc, notify_above_device_time_subtracts_nothing);
	tcase_add_test(tc, tick_rounding_below_zero_clamps_to_zero);
	tcase_add_test(tc, unknown_tick_rate_gives_zero);
	tcase_add_test(tc, other_tick_rates_scale);
	tcase_add_test(tc, thread_clock_counts_work_not_sleep);
	tcase_add_test(tc, own_thread_read_through_pthread_clock);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
