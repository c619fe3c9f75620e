// SPDX-License-Identifier: MIT
/*
 * gpuar-bench's simulated device: stores land in order of their due
 * times, never before them, into lines on pages of their own, and the
 * futex notification wakes a blocked waiter. Jobs of 10-40 ms; the tests
 * assert order and outcome, not durations.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "bench_clock.h"
#include "bench_device.h"
#include "bench_futex.h"
#include "unit.h"

static struct bench_device dev;

static void wait_stored(unsigned int s, uint64_t seq)
{
	while (atomic_load(&dev.stream[s].stored_seq) != seq)
		bench_sleep_until(bench_now_ns() + 200000);
}

START_TEST(store_lands_after_its_due_time)
{
	uint64_t due;

	ck_assert_int_eq(bench_device_start(&dev, 1, 2000000, -1), 0);
	due = bench_device_launch(&dev, 0, 1, 10000000);
	wait_stored(0, 1);
	ck_assert_uint_eq(__atomic_load_n(dev.stream[0].line, __ATOMIC_ACQUIRE), 1);
	ck_assert_uint_ge(bench_device_store_ns(&dev.stream[0], 1), due);
	bench_device_stop(&dev);
}
END_TEST

START_TEST(earlier_due_stores_first_across_streams)
{
	uint64_t t0, t1;

	ck_assert_int_eq(bench_device_start(&dev, 2, 1000000, -1), 0);
	/* The later launch is due first: the device must re-plan its sleep. */
	bench_device_launch(&dev, 0, 7, 40000000);
	bench_device_launch(&dev, 1, 3, 10000000);
	wait_stored(0, 7);
	wait_stored(1, 3);
	t0 = bench_device_store_ns(&dev.stream[0], 7);
	t1 = bench_device_store_ns(&dev.stream[1], 3);
	ck_assert_uint_lt(t1, t0);
	ck_assert_uint_eq(*dev.stream[1].line, 3);
	ck_assert_uint_eq(*dev.stream[0].line, 7);
	bench_device_stop(&dev);
}
END_TEST

START_TEST(lines_are_page_aligned_and_apart)
{
	long page = sysconf(_SC_PAGESIZE);

	ck_assert_int_eq(bench_device_start(&dev, 3, 1000000, -1), 0);
	for (unsigned int i = 0; i < 3; i++) {
		ck_assert_uint_eq((uintptr_t)dev.stream[i].line % (uintptr_t)page, 0);
		for (unsigned int k = 0; k < i; k++)
			ck_assert_ptr_ne(dev.stream[i].line, dev.stream[k].line);
	}
	bench_device_stop(&dev);
}
END_TEST

START_TEST(futex_notify_wakes_a_blocked_waiter)
{
	uint32_t ev;

	ck_assert_int_eq(bench_device_start(&dev, 1, 1000000, -1), 0);
	atomic_store(&dev.notify, BENCH_NOTIFY_FUTEX);
	ev = atomic_load(&dev.event);
	atomic_fetch_add(&dev.event_waiters, 1);
	bench_device_launch(&dev, 0, 1, 20000000);
	/* Blocks until the device's wake (a 2 s limit only guards a hang). */
	while (atomic_load(&dev.event) == ev) {
		int r = bench_futex_wait((uint32_t *)&dev.event, ev,
					 bench_now_ns() + 2000000000ULL);

		ck_assert(r == 0 || errno == EAGAIN || errno == EINTR);
	}
	atomic_fetch_sub(&dev.event_waiters, 1);
	ck_assert_uint_eq(*dev.stream[0].line, 1);
	/* The wake-up was timed apart, as the producer's cost. */
	wait_stored(0, 1);
	bench_device_stop(&dev);
}
END_TEST

START_TEST(reset_clears_lines_and_counters)
{
	ck_assert_int_eq(bench_device_start(&dev, 1, 1000000, -1), 0);
	bench_device_launch(&dev, 0, 5, 10000000);
	wait_stored(0, 5);
	bench_device_reset(&dev);
	ck_assert_uint_eq(*dev.stream[0].line, 0);
	ck_assert_uint_eq(atomic_load(&dev.stream[0].stored_seq), 0);
	ck_assert_int_eq(atomic_load(&dev.notify), BENCH_NOTIFY_NONE);
	/* And the device takes new jobs from sequence 1 again. */
	bench_device_launch(&dev, 0, 1, 10000000);
	wait_stored(0, 1);
	ck_assert_uint_eq(*dev.stream[0].line, 1);
	bench_device_stop(&dev);
}
END_TEST

START_TEST(start_refuses_bad_stream_counts)
{
	ck_assert_int_eq(bench_device_start(&dev, 0, 1000, -1), -EINVAL);
	ck_assert_int_eq(bench_device_start(&dev, BENCH_MAX_STREAMS + 1, 1000, -1), -EINVAL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bench_device");
	TCase *tc = tcase_create("device");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, store_lands_after_its_due_time);
	tcase_add_test(tc, earlier_due_stores_first_across_streams);
	tcase_add_test(tc, lines_are_page_aligned_and_apart);
	tcase_add_test(tc, futex_notify_wakes_a_blocked_waiter);
	tcase_add_test(tc, reset_clears_lines_and_counters);
	tcase_add_test(tc, start_refuses_bad_stream_counts);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
