// SPDX-License-Identifier: MIT
/* The binary wait plan check: each fault, in its stated order. */
#include <string.h>

#include "plan.h"
#include "unit.h"

static struct gpuar_plan flag_predict(void)
{
	return (struct gpuar_plan){
		.park = GPUAR_PARK_FLAG,
		.flags = GPUAR_PLAN_PREDICT,
		.park_ns = 100000,
		.backstop_ns = 1000000,
		.margin_ns = 150000,
		.min_sleep_ns = 20000,
		.max_sleep_ns = 50000000,
		.window = 8,
	};
}

START_TEST(accepts_block_poll_and_flag)
{
	struct gpuar_plan block = {.park = GPUAR_PARK_BLOCK};
	struct gpuar_plan poll = {.park = GPUAR_PARK_POLL};
	struct gpuar_plan flag = {
		.park = GPUAR_PARK_FLAG,
		.park_ns = 100000,
		.backstop_ns = 1000000,
	};

	ck_assert_int_eq(gpuar_plan_check(&block), GPUAR_PLAN_OK);
	ck_assert_int_eq(gpuar_plan_check(&poll), GPUAR_PLAN_OK);
	ck_assert_int_eq(gpuar_plan_check(&flag), GPUAR_PLAN_OK);
}
END_TEST

START_TEST(accepts_poll_and_flag_with_prediction)
{
	struct gpuar_plan plan = flag_predict();

	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_OK);
	plan.park = GPUAR_PARK_POLL;
	plan.park_ns = plan.backstop_ns = 0;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_OK);
}
END_TEST

START_TEST(accepts_bounds_inclusive)
{
	struct gpuar_plan plan = flag_predict();

	plan.park_ns = GPUAR_PLAN_PARK_NS_MAX;
	plan.backstop_ns = GPUAR_PLAN_BACKSTOP_NS_MAX;
	plan.window = GPUAR_PLAN_WINDOW_MAX;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_OK);
	plan.park_ns = plan.backstop_ns = 0;
	plan.window = GPUAR_PLAN_WINDOW_MIN;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_OK);
}
END_TEST

START_TEST(refuses_unknown_park)
{
	struct gpuar_plan plan = {.park = 0};

	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_BAD_PARK);
	plan.park = GPUAR_PARK_FLAG + 1;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_BAD_PARK);
	plan.park = 0xffffffffU;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_BAD_PARK);
}
END_TEST

START_TEST(refuses_unknown_flag_bits)
{
	struct gpuar_plan plan = {.park = GPUAR_PARK_POLL, .flags = 1U << 1};

	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_BAD_FLAGS);
	plan.flags = 1U << 31;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_BAD_FLAGS);
}
END_TEST

START_TEST(refuses_block_with_prediction)
{
	struct gpuar_plan plan = flag_predict();

	plan.park = GPUAR_PARK_BLOCK;
	plan.park_ns = plan.backstop_ns = 0;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_BLOCK_PREDICT);
}
END_TEST

START_TEST(refuses_park_ns_above_10ms)
{
	struct gpuar_plan plan = flag_predict();

	plan.park_ns = GPUAR_PLAN_PARK_NS_MAX + 1;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_PARK_RANGE);
}
END_TEST

START_TEST(refuses_backstop_ns_above_1s)
{
	struct gpuar_plan plan = flag_predict();

	plan.backstop_ns = GPUAR_PLAN_BACKSTOP_NS_MAX + 1;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_BACKSTOP_RANGE);
}
END_TEST

START_TEST(refuses_window_outside_1_to_16)
{
	struct gpuar_plan plan = flag_predict();

	plan.window = 0;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_WINDOW_RANGE);
	plan.window = GPUAR_PLAN_WINDOW_MAX + 1;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_WINDOW_RANGE);
}
END_TEST

START_TEST(refuses_park_fields_on_block_and_poll)
{
	struct gpuar_plan plan = {.park = GPUAR_PARK_POLL, .park_ns = 1};

	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_UNUSED_NONZERO);
	plan = (struct gpuar_plan){.park = GPUAR_PARK_BLOCK, .backstop_ns = 1};
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_UNUSED_NONZERO);
}
END_TEST

START_TEST(refuses_predict_fields_without_prediction)
{
	struct gpuar_plan plan = flag_predict();
	struct gpuar_plan base;

	plan.flags = 0;
	plan.margin_ns = plan.min_sleep_ns = plan.max_sleep_ns = 0;
	plan.window = 0;
	base = plan;
	ck_assert_int_eq(gpuar_plan_check(&base), GPUAR_PLAN_OK);
	plan.margin_ns = 1;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_UNUSED_NONZERO);
	plan = base;
	plan.min_sleep_ns = 1;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_UNUSED_NONZERO);
	plan = base;
	plan.max_sleep_ns = 1;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_UNUSED_NONZERO);
	plan = base;
	plan.window = 8;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_UNUSED_NONZERO);
}
END_TEST

/* The predict rule's times are bounded as the backstop is. */
START_TEST(refuses_sleep_times_above_1s)
{
	struct gpuar_plan plan = flag_predict();
	struct gpuar_plan base = plan;

	plan.margin_ns = GPUAR_PLAN_BACKSTOP_NS_MAX;
	plan.min_sleep_ns = GPUAR_PLAN_BACKSTOP_NS_MAX;
	plan.max_sleep_ns = GPUAR_PLAN_BACKSTOP_NS_MAX;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_OK);
	plan = base;
	plan.margin_ns = GPUAR_PLAN_BACKSTOP_NS_MAX + 1;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_SLEEP_RANGE);
	plan = base;
	plan.min_sleep_ns = GPUAR_PLAN_BACKSTOP_NS_MAX + 1;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_SLEEP_RANGE);
	plan = base;
	plan.max_sleep_ns = ~0ULL;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_SLEEP_RANGE);
}
END_TEST

START_TEST(refuses_nonzero_pad)
{
	struct gpuar_plan plan = flag_predict();

	plan.pad = 1;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_PAD_NONZERO);
}
END_TEST

START_TEST(reports_the_first_fault_in_stated_order)
{
	/* everything wrong at once: the kind is reported first */
	struct gpuar_plan plan = {
		.park = 9,
		.flags = 0x80,
		.park_ns = ~0ULL,
		.window = 99,
		.pad = 1,
	};

	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_BAD_PARK);
	plan.park = GPUAR_PARK_FLAG;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_BAD_FLAGS);
	plan.flags = GPUAR_PLAN_PREDICT;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_PARK_RANGE);
	plan.park_ns = 0;
	plan.backstop_ns = ~0ULL;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_BACKSTOP_RANGE);
	plan.backstop_ns = 0;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_WINDOW_RANGE);
	plan.window = 1;
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_PAD_NONZERO);
}
END_TEST

START_TEST(every_fault_has_a_distinct_phrase)
{
	int a, b;

	for (a = 0; a < GPUAR_PLAN_FAULT_COUNT; a++) {
		const char *sa = gpuar_plan_fault_str(a);

		ck_assert_ptr_nonnull(sa);
		ck_assert_uint_gt(strlen(sa), 0);
		for (b = 0; b < a; b++)
			ck_assert_str_ne(sa, gpuar_plan_fault_str(b));
	}
	ck_assert_str_eq(gpuar_plan_fault_str(GPUAR_PLAN_WINDOW_RANGE),
			 "window out of range 1..16");
	ck_assert_str_eq(gpuar_plan_fault_str(GPUAR_PLAN_FAULT_COUNT),
			 "unknown plan fault");
}
END_TEST

static Suite *plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("check");

	tcase_add_test(tc, accepts_block_poll_and_flag);
	tcase_add_test(tc, accepts_poll_and_flag_with_prediction);
	tcase_add_test(tc, accepts_bounds_inclusive);
	tcase_add_test(tc, refuses_unknown_park);
	tcase_add_test(tc, refuses_unknown_flag_bits);
	tcase_add_test(tc, refuses_block_with_prediction);
	tcase_add_test(tc, refuses_park_ns_above_10ms);
	tcase_add_test(tc, refuses_backstop_ns_above_1s);
	tcase_add_test(tc, refuses_window_outside_1_to_16);
	tcase_add_test(tc, refuses_park_fields_on_block_and_poll);
	tcase_add_test(tc, refuses_predict_fields_without_prediction);
	tcase_add_test(tc, refuses_sleep_times_above_1s);
	tcase_add_test(tc, refuses_nonzero_pad);
	tcase_add_test(tc, reports_the_first_fault_in_stated_order);
	tcase_add_test(tc, every_fault_has_a_distinct_phrase);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(plan_suite());
}
