// SPDX-License-Identifier: MIT
/* The wait-plan text grammar: every rule, every refusal, labels. */
#include <stdint.h>

#include "plan_text_helpers.h"

/* A predict plan up to its last value, which each test completes. */
#define TO_WINDOW                                                              \
	"poll+predict:margin_us=150,min_sleep_us=20,max_sleep_us=50000,"       \
	"window="
#define TO_WINDOW_LEN (sizeof(TO_WINDOW) - 1)

/* ---------------------------------------------------------- accepted */

START_TEST(parses_block)
{
	struct gpuar_plan plan = parse_ok("block");

	ck_assert_uint_eq(plan.park, GPUAR_PARK_BLOCK);
	ck_assert_uint_eq(plan.flags, 0);
	ck_assert_uint_eq(plan.park_ns, 0);
	ck_assert_uint_eq(plan.window, 0);
}
END_TEST

START_TEST(parses_poll)
{
	struct gpuar_plan plan = parse_ok("poll");

	ck_assert_uint_eq(plan.park, GPUAR_PARK_POLL);
	ck_assert_uint_eq(plan.flags, 0);
}
END_TEST

START_TEST(parses_flag_with_values_in_ns)
{
	struct gpuar_plan plan = parse_ok(EXAMPLE_FLAG);

	ck_assert_uint_eq(plan.park, GPUAR_PARK_FLAG);
	ck_assert_uint_eq(plan.flags, 0);
	ck_assert_uint_eq(plan.park_ns, 100000);
	ck_assert_uint_eq(plan.backstop_ns, 1000000);
	ck_assert_uint_eq(plan.margin_ns, 0);
}
END_TEST

START_TEST(parses_flag_with_prediction)
{
	struct gpuar_plan plan = parse_ok(EXAMPLE_FLAG_PREDICT);

	ck_assert_uint_eq(plan.park, GPUAR_PARK_FLAG);
	ck_assert_uint_eq(plan.flags, GPUAR_PLAN_PREDICT);
	ck_assert_uint_eq(plan.park_ns, 100000);
	ck_assert_uint_eq(plan.backstop_ns, 1000000);
	ck_assert_uint_eq(plan.margin_ns, 150000);
	ck_assert_uint_eq(plan.min_sleep_ns, 20000);
	ck_assert_uint_eq(plan.max_sleep_ns, 50000000);
	ck_assert_uint_eq(plan.window, 8);
	ck_assert_uint_eq(plan.pad, 0);
}
END_TEST

START_TEST(parses_poll_with_prediction)
{
	struct gpuar_plan plan = parse_ok("poll" EXAMPLE_PREDICT);

	ck_assert_uint_eq(plan.park, GPUAR_PARK_POLL);
	ck_assert_uint_eq(plan.flags, GPUAR_PLAN_PREDICT);
	ck_assert_uint_eq(plan.park_ns, 0);
	ck_assert_uint_eq(plan.window, 8);
}
END_TEST

START_TEST(accepts_bounds_inclusive)
{
	struct gpuar_plan plan =
		parse_ok("flag:park_us=10000,backstop_us=1000000");

	ck_assert_uint_eq(plan.park_ns, GPUAR_PLAN_PARK_NS_MAX);
	ck_assert_uint_eq(plan.backstop_ns, GPUAR_PLAN_BACKSTOP_NS_MAX);
	plan = parse_ok("poll+predict:margin_us=0,min_sleep_us=0,max_sleep_us="
			"0,window=1");
	ck_assert_uint_eq(plan.window, 1);
	plan = parse_ok("poll+predict:margin_us=0,min_sleep_us=0,max_sleep_us="
			"0,window=16");
	ck_assert_uint_eq(plan.window, 16);
}
END_TEST

START_TEST(accepts_zero_values)
{
	struct gpuar_plan plan = parse_ok("flag:park_us=0,backstop_us=0");

	ck_assert_uint_eq(plan.park_ns, 0);
	ck_assert_uint_eq(plan.backstop_ns, 0);
}
END_TEST

/* The predict rule's times go up to 1 s, as the backstop does. */
START_TEST(accepts_sleep_times_up_to_1s)
{
	struct gpuar_plan plan = parse_ok(
		"poll+predict:margin_us=1000000,min_sleep_us=1000000,"
		"max_sleep_us=1000000,window=4");

	ck_assert_uint_eq(plan.margin_ns, GPUAR_PLAN_SLEEP_NS_MAX);
	ck_assert_uint_eq(plan.min_sleep_ns, GPUAR_PLAN_SLEEP_NS_MAX);
	ck_assert_uint_eq(plan.max_sleep_ns, GPUAR_PLAN_SLEEP_NS_MAX);
	assert_plan_refused("poll+predict:margin_us=1000001,min_sleep_us=0,"
			    "max_sleep_us=0,window=1", 23,
			    "margin_us 1000001 out of range (max 1000000)");
	assert_plan_refused("poll+predict:margin_us=0,min_sleep_us=0,"
			    "max_sleep_us=1000001,window=1", 53,
			    "max_sleep_us 1000001 out of range (max 1000000)");
}
END_TEST

START_TEST(refusal_error_is_optional)
{
	struct gpuar_plan plan;

	ck_assert_int_eq(gpuar_plan_parse("flog", &plan, NULL), -1);
	ck_assert_int_eq(gpuar_plan_parse("poll", &plan, NULL), 0);
	ck_assert_uint_eq(plan.park, GPUAR_PARK_POLL);
}
END_TEST

/* ---------------------------------------------------------- refusals */

START_TEST(refuses_null_and_empty_text)
{
	assert_plan_refused(NULL, 0, "no text");
	assert_plan_refused("", 0,
			    "expected a park kind ('block', 'poll' or 'flag')");
	assert_plan_refused(" block", 0,
			    "expected a park kind ('block', 'poll' or 'flag')");
}
END_TEST

START_TEST(refuses_unknown_park_kind)
{
	assert_plan_refused("flog:park_us=100,backstop_us=1000", 0,
			    "unknown park kind 'flog'");
	assert_plan_refused("Block", 0, "unknown park kind 'Block'");
	assert_plan_refused("blockx", 0, "unknown park kind 'blockx'");
	assert_plan_refused("pol", 0, "unknown park kind 'pol'");
}
END_TEST

START_TEST(refusal_quotes_long_or_unprintable_words_safely)
{
	assert_plan_refused(
		"abcdefghijklmnopqrstuvwxyz0123456789", 0,
		"unknown park kind 'abcdefghijklmnopqrstuvwxyz012345...'");
	/* bytes outside the word end it: refused as trailing text */
	assert_plan_refused("poll\x01", 4, "trailing text");
}
END_TEST

START_TEST(refuses_block_with_prediction)
{
	assert_plan_refused("block" EXAMPLE_PREDICT, 5,
			    "block takes no prediction");
	assert_plan_refused("block+", 5, "block takes no prediction");
}
END_TEST

START_TEST(refuses_parameters_on_block_and_poll)
{
	assert_plan_refused("block:park_us=100,backstop_us=1000", 5,
			    "block takes no parameters");
	assert_plan_refused("poll:park_us=100", 4, "poll takes no parameters");
}
END_TEST

START_TEST(refuses_flag_without_parameters)
{
	assert_plan_refused("flag", 4, "missing ':park_us='");
	assert_plan_refused("flag" EXAMPLE_PREDICT, 4, "expected ':park_us='");
	assert_plan_refused("flag:", 4, "expected ':park_us='");
}
END_TEST

START_TEST(refuses_missing_key)
{
	assert_plan_refused("flag:park_us=100", 16, "missing ',backstop_us='");
	assert_plan_refused("flag:park_us=100,", 16, "expected ',backstop_us='");
	assert_plan_refused("flag:backstop_us=1000", 4, "expected ':park_us='");
	assert_plan_refused(
		"poll+predict:margin_us=150,min_sleep_us=20,max_sleep_us=50000",
		61, "missing ',window='");
	assert_plan_refused(
		"poll+predict:margin_us=150,max_sleep_us=50000,window=8", 26,
		"expected ',min_sleep_us='");
}
END_TEST

START_TEST(refuses_keys_out_of_order)
{
	assert_plan_refused("flag:backstop_us=1000,park_us=100", 4,
			    "expected ':park_us='");
	assert_plan_refused("poll+predict:min_sleep_us=20,margin_us=150,max_"
			    "sleep_us=50000,window=8",
			    13, "expected 'margin_us='");
	assert_plan_refused("poll+predict:margin_us=150,min_sleep_us=20,window="
			    "8,max_sleep_us=50000",
			    42, "expected ',max_sleep_us='");
}
END_TEST

START_TEST(refuses_repeated_key)
{
	assert_plan_refused("flag:park_us=100,park_us=100,backstop_us=1000", 16,
			    "expected ',backstop_us='");
	assert_plan_refused(EXAMPLE_FLAG_PREDICT ",window=8",
			    sizeof(EXAMPLE_FLAG_PREDICT) - 1, "trailing text");
}
END_TEST

START_TEST(refuses_misspelt_key_and_separator)
{
	assert_plan_refused("flag:park=100,backstop_us=1000", 4,
			    "expected ':park_us='");
	assert_plan_refused("flag:park_us:100,backstop_us=1000", 4,
			    "expected ':park_us='");
	assert_plan_refused("flag:park_us=100;backstop_us=1000", 16,
			    "expected ',backstop_us='");
	assert_plan_refused("flag:park_us=100, backstop_us=1000", 16,
			    "expected ',backstop_us='");
}
END_TEST

START_TEST(refuses_unknown_suffix_after_plus)
{
	assert_plan_refused("poll+", 5, "missing 'predict:'");
	assert_plan_refused("poll+predict", 5, "expected 'predict:'");
	assert_plan_refused("poll+deadline:margin_us=1", 5,
			    "expected 'predict:'");
}
END_TEST

START_TEST(refuses_trailing_text)
{
	assert_plan_refused("block x", 5, "trailing text");
	assert_plan_refused("poll;", 4, "trailing text");
	assert_plan_refused(EXAMPLE_FLAG " ", sizeof(EXAMPLE_FLAG) - 1,
			    "trailing text");
	assert_plan_refused(EXAMPLE_FLAG ",margin_us=1", sizeof(EXAMPLE_FLAG) - 1,
			    "trailing text");
	assert_plan_refused(EXAMPLE_FLAG_PREDICT "x",
			    sizeof(EXAMPLE_FLAG_PREDICT) - 1, "trailing text");
	assert_plan_refused("flag:park_us=100.5,backstop_us=1000", 16,
			    "expected ',backstop_us='");
}
END_TEST

START_TEST(refuses_signs_and_non_numbers)
{
	assert_plan_refused("flag:park_us=+100,backstop_us=1000", 13,
			    "expected a number for park_us");
	assert_plan_refused("flag:park_us=-1,backstop_us=1000", 13,
			    "expected a number for park_us");
	assert_plan_refused("flag:park_us=,backstop_us=1000", 13,
			    "expected a number for park_us");
	assert_plan_refused("flag:park_us=100,backstop_us=x", 29,
			    "expected a number for backstop_us");
	assert_plan_refused(TO_WINDOW, TO_WINDOW_LEN,
			    "expected a number for window");
}
END_TEST

START_TEST(refuses_leading_zero)
{
	assert_plan_refused("flag:park_us=0100,backstop_us=1000", 13,
			    "leading zero in number");
	assert_plan_refused("flag:park_us=00,backstop_us=1000", 13,
			    "leading zero in number");
	assert_plan_refused(TO_WINDOW "08", TO_WINDOW_LEN,
			    "leading zero in number");
}
END_TEST

START_TEST(refuses_park_us_above_10000)
{
	assert_plan_refused("flag:park_us=20000,backstop_us=1000", 13,
			    "park_us 20000 out of range (max 10000)");
	assert_plan_refused("flag:park_us=10001,backstop_us=1000", 13,
			    "park_us 10001 out of range (max 10000)");
}
END_TEST

START_TEST(refuses_backstop_us_above_1000000)
{
	assert_plan_refused("flag:park_us=100,backstop_us=1000001", 29,
			    "backstop_us 1000001 out of range (max 1000000)");
}
END_TEST

START_TEST(refuses_window_outside_1_to_16)
{
	assert_plan_refused(TO_WINDOW "0", TO_WINDOW_LEN,
			    "window 0 out of range 1..16");
	assert_plan_refused(TO_WINDOW "17", TO_WINDOW_LEN,
			    "window 17 out of range 1..16");
	assert_plan_refused(TO_WINDOW "18446744073709551615", TO_WINDOW_LEN,
			    "window 18446744073709551615 out of range 1..16");
}
END_TEST

START_TEST(refuses_number_that_overflows_u64)
{
	assert_plan_refused("flag:park_us=18446744073709551616,backstop_us=1",
			    13, "number overflows");
	assert_plan_refused(
		"flag:park_us=99999999999999999999999,backstop_us=1", 13,
		"number overflows");
	assert_plan_refused(TO_WINDOW "18446744073709551616", TO_WINDOW_LEN,
			    "number overflows");
}
END_TEST

START_TEST(refuses_us_that_overflow_in_ns)
{
	assert_plan_refused("poll+predict:margin_us=18446744073709552,min_"
			    "sleep_us=0,max_sleep_us=0,window=1",
			    23,
			    "margin_us 18446744073709552 overflows in ns (max "
			    "18446744073709551)");
	assert_plan_refused("poll+predict:margin_us=0,min_sleep_us="
			    "18446744073709551615,max_sleep_us=0,window=1",
			    38,
			    "min_sleep_us 18446744073709551615 overflows in ns "
			    "(max 18446744073709551)");
	assert_plan_refused("poll+predict:margin_us=0,min_sleep_us=0,max_sleep_"
			    "us=18446744073709552,window=1",
			    53,
			    "max_sleep_us 18446744073709552 overflows in ns "
			    "(max 18446744073709551)");
}
END_TEST

START_TEST(refuses_bands_text_as_a_plan)
{
	assert_plan_refused("block;rows>=32:poll", 5, "trailing text");
}
END_TEST

/* ------------------------------------------------------------ labels */

START_TEST(label_round_trips_the_documented_plans)
{
	assert_plan_round_trips("block");
	assert_plan_round_trips("poll");
	assert_plan_round_trips(EXAMPLE_FLAG);
	assert_plan_round_trips(EXAMPLE_FLAG_PREDICT);
}
END_TEST

START_TEST(label_round_trips_extreme_values)
{
	assert_plan_round_trips("flag:park_us=0,backstop_us=0");
	assert_plan_round_trips("flag:park_us=10000,backstop_us=1000000");
	assert_plan_round_trips("poll+predict:margin_us=1000000,min_"
				"sleep_us=1000000,"
				"max_sleep_us=1000000,window=16");
	assert_plan_round_trips(
		"flag:park_us=10000,backstop_us=1000000+predict:margin_us=0,"
		"min_sleep_us=0,max_sleep_us=0,window=1");
}
END_TEST

START_TEST(label_truncates_like_snprintf)
{
	struct gpuar_plan plan = parse_ok(EXAMPLE_FLAG_PREDICT);
	size_t full = strlen(EXAMPLE_FLAG_PREDICT);
	char buf[GPUAR_PLAN_LABEL_MAX];
	size_t size;

	/* size 0: nothing written, full length returned */
	memset(buf, 'x', sizeof(buf));
	ck_assert_uint_eq(gpuar_plan_label(&plan, buf, 0), full);
	ck_assert_int_eq(buf[0], 'x');
	ck_assert_uint_eq(gpuar_plan_label(&plan, NULL, 0), full);
	for (size = 1; size <= full + 1; size++) {
		memset(buf, 'x', sizeof(buf));
		ck_assert_uint_eq(gpuar_plan_label(&plan, buf, size), full);
		ck_assert_uint_eq(strlen(buf), size - 1);
		ck_assert(strncmp(buf, EXAMPLE_FLAG_PREDICT, size - 1) == 0);
		ck_assert_int_eq(buf[size], 'x'); /* nothing past size */
	}
}
END_TEST

START_TEST(largest_label_fits_label_max)
{
	struct gpuar_plan plan = {
		.park = GPUAR_PARK_FLAG,
		.flags = GPUAR_PLAN_PREDICT,
		.park_ns = GPUAR_PLAN_PARK_NS_MAX - 1,
		.backstop_ns = GPUAR_PLAN_BACKSTOP_NS_MAX - 1,
		.margin_ns = UINT64_MAX,
		.min_sleep_ns = UINT64_MAX - 1,
		.max_sleep_ns = UINT64_MAX - 2,
		.window = 16,
	};
	char buf[GPUAR_PLAN_LABEL_MAX];

	ck_assert_uint_lt(gpuar_plan_label(&plan, buf, sizeof(buf)),
			  GPUAR_PLAN_LABEL_MAX);
}
END_TEST

START_TEST(label_shows_sub_microsecond_ns_as_a_fraction_that_does_not_parse)
{
	struct gpuar_plan plan = {
		.park = GPUAR_PARK_FLAG,
		.park_ns = 100500,
		.backstop_ns = 1000005,
	};
	struct gpuar_plan out;
	char buf[GPUAR_PLAN_LABEL_MAX];

	gpuar_plan_label(&plan, buf, sizeof(buf));
	ck_assert_str_eq(buf, "flag:park_us=100.5,backstop_us=1000.005");
	ck_assert_int_eq(gpuar_plan_parse(buf, &out, NULL), -1);
}
END_TEST

START_TEST(label_of_an_invalid_plan_names_the_fault)
{
	struct gpuar_plan plan = {.park = 7};
	char buf[GPUAR_PLAN_LABEL_MAX];

	gpuar_plan_label(&plan, buf, sizeof(buf));
	ck_assert_str_eq(buf, "invalid(park is not block, poll or flag)");
	ck_assert_int_eq(gpuar_plan_parse(buf, &plan, NULL), -1);
}
END_TEST

static Suite *plan_text_suite(void)
{
	Suite *s = suite_create("plan_text");
	TCase *ok = tcase_create("accepted");
	TCase *bad = tcase_create("refused");
	TCase *label = tcase_create("label");

	tcase_add_test(ok, parses_block);
	tcase_add_test(ok, parses_poll);
	tcase_add_test(ok, parses_flag_with_values_in_ns);
	tcase_add_test(ok, parses_flag_with_prediction);
	tcase_add_test(ok, parses_poll_with_prediction);
	tcase_add_test(ok, accepts_bounds_inclusive);
	tcase_add_test(ok, accepts_zero_values);
	tcase_add_test(ok, accepts_sleep_times_up_to_1s);
	tcase_add_test(ok, refusal_error_is_optional);
	suite_add_tcase(s, ok);

	tcase_add_test(bad, refuses_null_and_empty_text);
	tcase_add_test(bad, refuses_unknown_park_kind);
	tcase_add_test(bad, refusal_quotes_long_or_unprintable_words_safely);
	tcase_add_test(bad, refuses_block_with_prediction);
	tcase_add_test(bad, refuses_parameters_on_block_and_poll);
	tcase_add_test(bad, refuses_flag_without_parameters);
	tcase_add_test(bad, refuses_missing_key);
	tcase_add_test(bad, refuses_keys_out_of_order);
	tcase_add_test(bad, refuses_repeated_key);
	tcase_add_test(bad, refuses_misspelt_key_and_separator);
	tcase_add_test(bad, refuses_unknown_suffix_after_plus);
	tcase_add_test(bad, refuses_trailing_text);
	tcase_add_test(bad, refuses_signs_and_non_numbers);
	tcase_add_test(bad, refuses_leading_zero);
	tcase_add_test(bad, refuses_park_us_above_10000);
	tcase_add_test(bad, refuses_backstop_us_above_1000000);
	tcase_add_test(bad, refuses_window_outside_1_to_16);
	tcase_add_test(bad, refuses_number_that_overflows_u64);
	tcase_add_test(bad, refuses_us_that_overflow_in_ns);
	tcase_add_test(bad, refuses_bands_text_as_a_plan);
	suite_add_tcase(s, bad);

	tcase_add_test(label, label_round_trips_the_documented_plans);
	tcase_add_test(label, label_round_trips_extreme_values);
	tcase_add_test(label, label_truncates_like_snprintf);
	tcase_add_test(label, largest_label_fits_label_max);
	tcase_add_test(
		label,
		label_shows_sub_microsecond_ns_as_a_fraction_that_does_not_parse);
	tcase_add_test(label, label_of_an_invalid_plan_names_the_fault);
	suite_add_tcase(s, label);
	return s;
}

int main(void)
{
	return unit_run(plan_text_suite());
}
