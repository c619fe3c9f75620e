// SPDX-License-Identifier: MIT
/* The core's outcome names: the words the module, library and gpuar-stat print. */
#include <string.h>

#include "outcome.h"
#include "unit.h"

/*
 * As released: gpuar-stat parses these words out of the module's debugfs
 * text, and scripts read them from both, so a change here is a format
 * change.
 */
static const struct {
	u32 outcome;
	const char *name;
} released[] = {
	{GPUAR_OUTCOME_IMMEDIATE, "immediate"},
	{GPUAR_OUTCOME_EXACT, "exact"},
	{GPUAR_OUTCOME_LATE, "late"},
	{GPUAR_OUTCOME_FENCE, "fence"},
	{GPUAR_OUTCOME_TIMEOUT, "timeout"},
	{GPUAR_OUTCOME_CANCELLED, "cancelled"},
};
#define RELEASED (sizeof(released) / sizeof(released[0]))

START_TEST(every_outcome_has_its_released_name)
{
	size_t i;

	ck_assert_uint_eq(RELEASED, GPUAR_OUTCOME_COUNT - 1);
	for (i = 0; i < RELEASED; i++) {
		const char *name = gpuar_outcome_str(released[i].outcome);

		ck_assert_ptr_nonnull(name);
		ck_assert_str_eq(name, released[i].name);
	}
}
END_TEST

START_TEST(unassigned_outcomes_have_no_name)
{
	ck_assert_ptr_null(gpuar_outcome_str(0));
	ck_assert_ptr_null(gpuar_outcome_str(GPUAR_OUTCOME_COUNT));
	ck_assert_ptr_null(gpuar_outcome_str(99));
	ck_assert_ptr_null(gpuar_outcome_str(0xffffffffu));
}
END_TEST

START_TEST(names_are_distinct)
{
	u32 a, b;

	for (a = 1; a < GPUAR_OUTCOME_COUNT; a++)
		for (b = a + 1; b < GPUAR_OUTCOME_COUNT; b++)
			ck_assert_str_ne(gpuar_outcome_str(a),
					 gpuar_outcome_str(b));
}
END_TEST

static Suite *outcome_suite(void)
{
	Suite *s = suite_create("outcome");
	TCase *tc = tcase_create("names");

	tcase_add_test(tc, every_outcome_has_its_released_name);
	tcase_add_test(tc, unassigned_outcomes_have_no_name);
	tcase_add_test(tc, names_are_distinct);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(outcome_suite());
}
