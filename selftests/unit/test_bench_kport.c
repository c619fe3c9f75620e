// SPDX-License-Identifier: MIT
/*
 * gpuar-bench's module probe: a strategy needing features a module lacks
 * is skipped with a reason naming them, so an older module's run says
 * why the imminent strategies are missing.
 */
#include <string.h>

#include "bench_kport.h"
#include "unit.h"

START_TEST(present_features_are_no_reason)
{
	char why[160] = "";

	ck_assert_int_eq(bench_kport_features_missing("/dev/gpuar",
		GPUAR_FEATURE_WORD_WAIT | GPUAR_FEATURE_IMMINENT,
		GPUAR_FEATURE_WORD_WAIT | GPUAR_FEATURE_IMMINENT, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "");
}
END_TEST

START_TEST(missing_features_are_named)
{
	char why[160];

	ck_assert_int_eq(bench_kport_features_missing("/dev/gpuar",
		GPUAR_FEATURE_WORD_WAIT | GPUAR_FEATURE_FENCE_WAIT,
		GPUAR_FEATURE_WORD_WAIT | GPUAR_FEATURE_IMMINENT |
		GPUAR_FEATURE_WAIT_READY, why, sizeof(why)), -1);
	ck_assert_str_eq(why, "the module (/dev/gpuar) lacks GPUAR_FEATURE_IMMINENT "
			 "GPUAR_FEATURE_WAIT_READY");
}
END_TEST

START_TEST(unknown_bits_are_given_in_hex)
{
	char why[160];

	ck_assert_int_eq(bench_kport_features_missing("/dev/gpuar", 0,
		GPUAR_FEATURE_WORD_WAIT | (1ULL << 40), why, sizeof(why)), -1);
	ck_assert_str_eq(why, "the module (/dev/gpuar) lacks GPUAR_FEATURE_WORD_WAIT "
			 "feature bits 0x10000000000");
}
END_TEST

START_TEST(a_short_buffer_is_cut_not_overrun)
{
	char why[16];

	ck_assert_int_eq(bench_kport_features_missing("/dev/gpuar", 0,
		GPUAR_FEATURE_IMMINENT | GPUAR_FEATURE_WAIT_READY, why, sizeof(why)), -1);
	ck_assert_uint_eq(strlen(why), sizeof(why) - 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bench_kport");
	TCase *tc = tcase_create("probe");

	tcase_add_test(tc, present_features_are_no_reason);
	tcase_add_test(tc, missing_features_are_named);
	tcase_add_test(tc, unknown_bits_are_given_in_hex);
	tcase_add_test(tc, a_short_buffer_is_cut_not_overrun);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
