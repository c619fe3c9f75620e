// SPDX-License-Identifier: MIT
/* libgpuar: plans, bands, the published row count and coded errors. */
#include <gpuar/gpuar.h>

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FLAG_PREDICT "flag:park_us=100,backstop_us=1000+predict:margin_us=150," \
		     "min_sleep_us=20,max_sleep_us=50000,window=8"

START_TEST(plan_round_trips)
{
	static const char *const texts[] = {
		"block", "poll", "flag:park_us=100,backstop_us=1000", FLAG_PREDICT,
	};
	struct gpuar_error err;
	struct gpuar_plan plan;
	char buf[256];
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		ck_assert_int_eq(gpuar_plan_from_text(texts[i], &plan, &err), 0);
		ck_assert_uint_eq(err.code, GPUAR_OK);
		ck_assert_uint_eq(gpuar_plan_to_text(&plan, buf, sizeof(buf)),
				  strlen(texts[i]));
		ck_assert_str_eq(buf, texts[i]);
	}
}
END_TEST

START_TEST(plan_fields_in_ns)
{
	struct gpuar_plan plan;

	ck_assert_int_eq(gpuar_plan_from_text(FLAG_PREDICT, &plan, NULL), 0);
	ck_assert_uint_eq(plan.park, GPUAR_PARK_FLAG);
	ck_assert_uint_eq(plan.flags, GPUAR_PLAN_PREDICT);
	ck_assert_uint_eq(plan.park_ns, 100000);
	ck_assert_uint_eq(plan.backstop_ns, 1000000);
	ck_assert_uint_eq(plan.margin_ns, 150000);
	ck_assert_uint_eq(plan.min_sleep_ns, 20000);
	ck_assert_uint_eq(plan.max_sleep_ns, 50000000);
	ck_assert_uint_eq(plan.window, 8);
}
END_TEST

START_TEST(default_plan_is_its_text)
{
	struct gpuar_plan named, spelled;
	struct gpuar_error err;
	char buf[256];

	ck_assert_int_eq(gpuar_plan_from_text("default", &named, &err), 0);
	ck_assert_uint_eq(err.code, GPUAR_OK);
	ck_assert_int_eq(gpuar_plan_from_text(GPUAR_PLAN_DEFAULT_TEXT, &spelled,
					      NULL), 0);
	ck_assert_mem_eq(&named, &spelled, sizeof(named));
	/* it predicts, with the values gpuar.h gives */
	ck_assert_uint_eq(named.park, GPUAR_PARK_FLAG);
	ck_assert_uint_eq(named.flags, GPUAR_PLAN_PREDICT);
	ck_assert_uint_eq(named.park_ns, 100000);
	ck_assert_uint_eq(named.backstop_ns, 1000000000);
	ck_assert_uint_eq(named.margin_ns, 100000);
	ck_assert_uint_eq(named.min_sleep_ns, 20000);
	ck_assert_uint_eq(named.max_sleep_ns, 1000000000);
	ck_assert_uint_eq(named.window, 8);
	/* written out in full */
	ck_assert_uint_eq(gpuar_plan_to_text(&named, buf, sizeof(buf)),
			  strlen(GPUAR_PLAN_DEFAULT_TEXT));
	ck_assert_str_eq(buf, GPUAR_PLAN_DEFAULT_TEXT);
	/* only the whole text names it */
	ck_assert_int_eq(gpuar_plan_from_text("default+predict:margin_us=1,"
					      "min_sleep_us=1,max_sleep_us=1,window=1",
					      &named, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_PLAN);
	ck_assert_int_eq(gpuar_plan_from_text("Default", &named, NULL), -EINVAL);
}
END_TEST

START_TEST(plan_refusal_is_coded)
{
	struct gpuar_error err;
	struct gpuar_plan plan;

	ck_assert_int_eq(gpuar_plan_from_text("block+predict:margin_us=1,min_sleep_us=1,max_sleep_us=1,window=1",
					      &plan, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_PLAN);
	ck_assert_int_eq(err.sys_errno, EINVAL);
	ck_assert_ptr_nonnull(strstr(err.message, "invalid-plan[1]"));
	ck_assert_ptr_nonnull(strstr(err.message, "block+predict"));
	ck_assert_int_eq(gpuar_plan_from_text("flag:park_us=100", &plan, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_PLAN);
	ck_assert_int_eq(gpuar_plan_from_text(NULL, &plan, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_ARGUMENT);
}
END_TEST

START_TEST(bands_select_by_rows)
{
	const char *text = "block;rows>=32:" FLAG_PREDICT;
	struct gpuar_wait_bands bands;
	struct gpuar_error err;
	char buf[512];

	ck_assert_int_eq(gpuar_bands_from_text(text, &bands, &err), 0);
	ck_assert_uint_eq(bands.count, 2);
	ck_assert_uint_eq(bands.from_rows[1], 32);
	ck_assert_uint_eq(gpuar_bands_for_rows(&bands, 0)->park, GPUAR_PARK_BLOCK);
	ck_assert_uint_eq(gpuar_bands_for_rows(&bands, 31)->park, GPUAR_PARK_BLOCK);
	ck_assert_ptr_eq(gpuar_bands_for_rows(&bands, 32), &bands.plan[1]);
	ck_assert_ptr_eq(gpuar_bands_for_rows(&bands, UINT64_MAX), &bands.plan[1]);
	gpuar_bands_to_text(&bands, buf, sizeof(buf));
	ck_assert_str_eq(buf, text);
}
END_TEST

START_TEST(bands_refusal_is_coded)
{
	struct gpuar_wait_bands bands;
	struct gpuar_error err;

	ck_assert_int_eq(gpuar_bands_from_text("poll;rows>=0:block", &bands, &err),
			 -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_BANDS);
	ck_assert_int_eq(gpuar_bands_from_text("poll;rows>=8:block;rows>=4:poll",
					       &bands, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_BANDS);
}
END_TEST

START_TEST(published_rows_pick_the_band)
{
	struct gpuar_rows rows = { 0 };
	struct gpuar_wait_bands bands;

	ck_assert_int_eq(gpuar_bands_from_text("block;rows>=32:poll", &bands, NULL), 0);
	ck_assert_uint_eq(gpuar_bands_current(&bands, &rows)->park, GPUAR_PARK_BLOCK);
	gpuar_rows_publish(&rows, 40);
	ck_assert_uint_eq(gpuar_rows_read(&rows), 40);
	ck_assert_uint_eq(gpuar_bands_current(&bands, &rows)->park, GPUAR_PARK_POLL);
	gpuar_rows_publish(&rows, 31);
	ck_assert_uint_eq(gpuar_bands_current(&bands, &rows)->park, GPUAR_PARK_BLOCK);
}
END_TEST

/* The public header's copy of the numbers matches the core's registry. */
START_TEST(public_codes_match_registry)
{
	ck_assert_str_eq(gpuar_code_name(GPUAR_E_INVALID_PLAN), "invalid-plan");
	ck_assert_str_eq(gpuar_code_name(GPUAR_W_PARK_FALLBACK), "park-fallback");
	ck_assert_str_eq(gpuar_code_name(GPUAR_W_EXECUTOR_FALLBACK), "executor-fallback");
	ck_assert_str_eq(gpuar_code_name(GPUAR_E_EXECUTOR_REFUSED), "executor-refused");
	ck_assert_str_eq(gpuar_code_name(GPUAR_E_INVALID_EXECUTOR), "invalid-executor");
	ck_assert_str_eq(gpuar_code_name(GPUAR_E_PENDED_INLINE), "pended-inline");
	ck_assert_str_eq(gpuar_code_name(GPUAR_E_STALLED), "stalled");
	ck_assert_str_eq(gpuar_code_name(GPUAR_E_BACKEND), "backend-error");
	ck_assert_str_eq(gpuar_code_name(GPUAR_E_INVALID_BANDS), "invalid-bands");
	ck_assert_str_eq(gpuar_code_name(GPUAR_E_ENGINE_UNAVAILABLE), "engine-unavailable");
	ck_assert_str_eq(gpuar_code_name(GPUAR_W_ENGINE_FALLBACK), "engine-fallback");
	ck_assert_str_eq(gpuar_code_name(GPUAR_E_SYSTEM), "system-error");
	ck_assert_str_eq(gpuar_code_name(GPUAR_E_INVALID_ARGUMENT), "invalid-argument");
	ck_assert_ptr_null(gpuar_code_name(0));
	ck_assert(gpuar_code_is_warning(GPUAR_W_PARK_FALLBACK));
	ck_assert(gpuar_code_is_warning(GPUAR_W_ENGINE_FALLBACK));
	ck_assert(!gpuar_code_is_warning(GPUAR_E_STALLED));
	ck_assert_str_eq(gpuar_version(), "0.1.0");
	ck_assert_str_eq(gpuar_outcome_name(GPUAR_OUTCOME_LATE), "late");
	ck_assert_str_eq(gpuar_outcome_name(99), "?");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_plan");
	TCase *tc = tcase_create("plan");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, plan_round_trips);
	tcase_add_test(tc, plan_fields_in_ns);
	tcase_add_test(tc, default_plan_is_its_text);
	tcase_add_test(tc, plan_refusal_is_coded);
	tcase_add_test(tc, bands_select_by_rows);
	tcase_add_test(tc, bands_refusal_is_coded);
	tcase_add_test(tc, published_rows_pick_the_band);
	tcase_add_test(tc, public_codes_match_registry);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
