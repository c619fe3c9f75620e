// SPDX-License-Identifier: MIT
/* The coded error registry: stable numbers, names, templates, formatting. */
#include <string.h>

#include "codes.h"
#include "unit.h"

/*
 * The registry as released. Append-only: a change to any row here means a
 * number was renumbered or reused, which breaks every caller branching on
 * it. New codes add rows at the end.
 */
static const struct {
	u32 code;
	const char *name;
	u32 severity;
} released[] = {
	{1, "invalid-plan", GPUAR_SEV_ERROR},
	{2, "park-fallback", GPUAR_SEV_WARNING},
	{3, "executor-fallback", GPUAR_SEV_WARNING},
	{4, "executor-refused", GPUAR_SEV_ERROR},
	{5, "invalid-executor", GPUAR_SEV_ERROR},
	{6, "pended-inline", GPUAR_SEV_ERROR},
	{7, "stalled", GPUAR_SEV_ERROR},
	{8, "backend-error", GPUAR_SEV_ERROR},
	{9, "invalid-bands", GPUAR_SEV_ERROR},
	{10, "engine-unavailable", GPUAR_SEV_ERROR},
	{11, "engine-fallback", GPUAR_SEV_WARNING},
	{12, "system-error", GPUAR_SEV_ERROR},
	{13, "invalid-argument", GPUAR_SEV_ERROR},
	{14, "feature-unavailable", GPUAR_SEV_ERROR},
	{15, "feature-fallback", GPUAR_SEV_WARNING},
};
#define RELEASED (sizeof(released) / sizeof(released[0]))

START_TEST(registry_matches_the_released_numbering)
{
	size_t i;

	ck_assert_uint_eq(GPUAR_CODE_NEXT, RELEASED + 1);
	for (i = 0; i < RELEASED; i++) {
		const struct gpuar_code_info *info =
			gpuar_code_info(released[i].code);

		ck_assert_msg(info, "code %u missing", released[i].code);
		ck_assert_uint_eq(info->code, released[i].code);
		ck_assert_str_eq(info->name, released[i].name);
		ck_assert_uint_eq(info->severity, released[i].severity);
	}
}
END_TEST

START_TEST(enum_values_keep_their_numbers)
{
	ck_assert_int_eq(GPUAR_OK, 0);
	ck_assert_int_eq(GPUAR_E_INVALID_PLAN, 1);
	ck_assert_int_eq(GPUAR_W_PARK_FALLBACK, 2);
	ck_assert_int_eq(GPUAR_W_EXECUTOR_FALLBACK, 3);
	ck_assert_int_eq(GPUAR_E_EXECUTOR_REFUSED, 4);
	ck_assert_int_eq(GPUAR_E_INVALID_EXECUTOR, 5);
	ck_assert_int_eq(GPUAR_E_PENDED_INLINE, 6);
	ck_assert_int_eq(GPUAR_E_STALLED, 7);
	ck_assert_int_eq(GPUAR_E_BACKEND, 8);
	ck_assert_int_eq(GPUAR_E_INVALID_BANDS, 9);
	ck_assert_int_eq(GPUAR_E_ENGINE_UNAVAILABLE, 10);
	ck_assert_int_eq(GPUAR_W_ENGINE_FALLBACK, 11);
	ck_assert_int_eq(GPUAR_E_SYSTEM, 12);
	ck_assert_int_eq(GPUAR_E_INVALID_ARGUMENT, 13);
}
END_TEST

START_TEST(unassigned_numbers_have_no_entry)
{
	ck_assert_ptr_null(gpuar_code_info(GPUAR_OK));
	ck_assert_ptr_null(gpuar_code_info(GPUAR_CODE_NEXT));
	ck_assert_ptr_null(gpuar_code_info(1000));
	ck_assert_ptr_null(gpuar_code_info(0xffffffffU));
}
END_TEST

START_TEST(names_are_unique_kebab_case)
{
	u32 a, b;

	for (a = 1; a < GPUAR_CODE_NEXT; a++) {
		const char *name = gpuar_code_info(a)->name;
		size_t i, n = strlen(name);

		ck_assert_uint_gt(n, 0);
		ck_assert(name[0] != '-' && name[n - 1] != '-');
		for (i = 0; i < n; i++)
			ck_assert_msg(
				(name[i] >= 'a' && name[i] <= 'z') ||
					(name[i] >= '0' && name[i] <= '9') ||
					(name[i] == '-' && name[i + 1] != '-'),
				"name '%s' is not kebab-case", name);
		for (b = 1; b < a; b++)
			ck_assert_str_ne(name, gpuar_code_info(b)->name);
	}
}
END_TEST

START_TEST(every_template_uses_exactly_its_placeholders)
{
	u32 code;

	for (code = 1; code < GPUAR_CODE_NEXT; code++) {
		const struct gpuar_code_info *info = gpuar_code_info(code);
		unsigned used = 0;
		const char *t;

		ck_assert_uint_le(info->nargs, 10);
		for (t = info->template; *t; t++) {
			if (t[0] == '{' && t[1] >= '0' && t[1] <= '9' &&
			    t[2] == '}') {
				u32 i = (u32)(t[1] - '0');

				ck_assert_msg(i < info->nargs,
					      "%s: {%u} beyond nargs %u",
					      info->name, i, info->nargs);
				used |= 1U << i;
			}
		}
		/* nargs is the count, so every index below it appears */
		ck_assert_msg(used == (1U << info->nargs) - 1,
			      "%s: placeholders %#x, nargs %u", info->name,
			      used, info->nargs);
	}
}
END_TEST

START_TEST(severity_is_error_or_warning)
{
	u32 code;

	for (code = 1; code < GPUAR_CODE_NEXT; code++) {
		u32 sev = gpuar_code_info(code)->severity;

		ck_assert(sev == GPUAR_SEV_ERROR || sev == GPUAR_SEV_WARNING);
	}
}
END_TEST

START_TEST(format_fills_placeholders)
{
	const char *args[] = {"flog", "unknown park kind 'flog'", "0"};
	const char *backend[] = {"cuda", "700", "CUDA_ERROR_ILLEGAL_ADDRESS",
				 "an illegal memory access"};
	char buf[256];
	size_t n;

	n = gpuar_code_format(buf, sizeof(buf), GPUAR_E_INVALID_PLAN, args, 3);
	ck_assert_str_eq(buf, "invalid-plan[1]: invalid wait plan 'flog': "
			      "unknown park kind 'flog' (at offset 0)");
	ck_assert_uint_eq(n, strlen(buf));
	gpuar_code_format(buf, sizeof(buf), GPUAR_E_BACKEND, backend, 4);
	ck_assert_str_eq(
		buf, "backend-error[8]: cuda backend error 700 "
		     "(CUDA_ERROR_ILLEGAL_ADDRESS): an illegal memory access");
}
END_TEST

START_TEST(format_prints_missing_arguments_as_question_marks)
{
	const char *args[] = {"poll", NULL};
	char buf[256];

	gpuar_code_format(buf, sizeof(buf), GPUAR_E_INVALID_PLAN, args, 2);
	ck_assert_str_eq(buf, "invalid-plan[1]: invalid wait plan 'poll': ? "
			      "(at offset ?)");
	gpuar_code_format(buf, sizeof(buf), GPUAR_E_STALLED, NULL, 0);
	ck_assert_str_eq(buf, "stalled[7]: executor stalled: ? task(s) remain "
			      "and nothing can wake them");
}
END_TEST

START_TEST(format_of_an_unassigned_code_says_unknown)
{
	char buf[64];

	ck_assert_uint_eq(gpuar_code_format(buf, sizeof(buf), 99, NULL, 0), 11);
	ck_assert_str_eq(buf, "unknown[99]");
	gpuar_code_format(buf, sizeof(buf), 0, NULL, 0);
	ck_assert_str_eq(buf, "unknown[0]");
}
END_TEST

START_TEST(format_truncates_safely_and_returns_the_full_length)
{
	const char *args[] = {"x", "y", "z"};
	char full[256], buf[256];
	size_t n, size;

	n = gpuar_code_format(full, sizeof(full), GPUAR_E_SYSTEM, args, 3);
	ck_assert_uint_eq(n, strlen(full));
	ck_assert_uint_eq(gpuar_code_format(NULL, 0, GPUAR_E_SYSTEM, args, 3),
			  n);
	for (size = 1; size <= n + 1; size++) {
		memset(buf, '#', sizeof(buf));
		ck_assert_uint_eq(
			gpuar_code_format(buf, size, GPUAR_E_SYSTEM, args, 3),
			n);
		ck_assert_uint_eq(strlen(buf), size - 1);
		ck_assert(strncmp(buf, full, size - 1) == 0);
		ck_assert_int_eq(buf[size], '#');
	}
}
END_TEST

START_TEST(every_code_formats_without_placeholders_left)
{
	const char *args[10] = {"a0", "a1", "a2", "a3", "a4",
				"a5", "a6", "a7", "a8", "a9"};
	char buf[512];
	u32 code;

	for (code = 1; code < GPUAR_CODE_NEXT; code++) {
		const struct gpuar_code_info *info = gpuar_code_info(code);
		u32 i;

		gpuar_code_format(buf, sizeof(buf), code, args, 10);
		ck_assert_ptr_null(strchr(buf, '{'));
		ck_assert(strncmp(buf, info->name, strlen(info->name)) == 0);
		for (i = 0; i < info->nargs; i++)
			ck_assert_ptr_nonnull(strstr(buf, args[i]));
	}
}
END_TEST

static Suite *codes_suite(void)
{
	Suite *s = suite_create("codes");
	TCase *reg = tcase_create("registry");
	TCase *fmt = tcase_create("format");

	tcase_add_test(reg, registry_matches_the_released_numbering);
	tcase_add_test(reg, enum_values_keep_their_numbers);
	tcase_add_test(reg, unassigned_numbers_have_no_entry);
	tcase_add_test(reg, names_are_unique_kebab_case);
	tcase_add_test(reg, every_template_uses_exactly_its_placeholders);
	tcase_add_test(reg, severity_is_error_or_warning);
	suite_add_tcase(s, reg);

	tcase_add_test(fmt, format_fills_placeholders);
	tcase_add_test(fmt, format_prints_missing_arguments_as_question_marks);
	tcase_add_test(fmt, format_of_an_unassigned_code_says_unknown);
	tcase_add_test(fmt,
		       format_truncates_safely_and_returns_the_full_length);
	tcase_add_test(fmt, every_code_formats_without_placeholders_left);
	suite_add_tcase(s, fmt);
	return s;
}

int main(void)
{
	return unit_run(codes_suite());
}
