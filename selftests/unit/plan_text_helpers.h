/* SPDX-License-Identifier: MIT */
/* Assertions shared by the plan and bands grammar tests. */
#ifndef GPUAR_PLAN_TEXT_HELPERS_H
#define GPUAR_PLAN_TEXT_HELPERS_H

#include <string.h>

#include "plan.h"
#include "plan_text.h"
#include "unit.h"
/* The plans and bands docs/design.md uses as its examples. */

#define EXAMPLE_FLAG "flag:park_us=100,backstop_us=1000"
#define EXAMPLE_PREDICT \
	"+predict:margin_us=150,min_sleep_us=20,max_sleep_us=50000,window=8"
#define EXAMPLE_FLAG_PREDICT EXAMPLE_FLAG EXAMPLE_PREDICT

static inline struct gpuar_plan parse_ok(const char *text)
{
	struct gpuar_plan plan;
	struct gpuar_parse_error err = {0};

	memset(&plan, 0, sizeof(plan));
	ck_assert_msg(gpuar_plan_parse(text, &plan, &err) == 0,
		      "'%s' refused at %u: %s", text, err.offset, err.what);
	ck_assert_int_eq(gpuar_plan_check(&plan), GPUAR_PLAN_OK);
	return plan;
}

/* Refused at @offset with exactly @what, leaving the output untouched. */
static inline void assert_plan_refused(const char *text, unsigned offset,
				       const char *what)
{
	struct gpuar_plan plan, before;
	struct gpuar_parse_error err = {0};

	memset(&plan, 0xa5, sizeof(plan));
	before = plan;
	ck_assert_msg(gpuar_plan_parse(text, &plan, &err) == -1,
		      "'%s' was accepted", text ? text : "(null)");
	ck_assert_msg(err.offset == offset && strcmp(err.what, what) == 0,
		      "'%s': refused at %u '%s', expected at %u '%s'",
		      text ? text : "(null)", err.offset, err.what, offset,
		      what);
	ck_assert(memcmp(&plan, &before, sizeof(plan)) == 0);
}

static inline void assert_bands_refused(const char *text, unsigned offset,
					const char *what)
{
	struct gpuar_bands bands, before;
	struct gpuar_parse_error err = {0};

	memset(&bands, 0xa5, sizeof(bands));
	before = bands;
	ck_assert_msg(gpuar_bands_parse(text, &bands, &err) == -1,
		      "'%s' was accepted", text ? text : "(null)");
	ck_assert_msg(err.offset == offset && strcmp(err.what, what) == 0,
		      "'%s': refused at %u '%s', expected at %u '%s'",
		      text ? text : "(null)", err.offset, err.what, offset,
		      what);
	ck_assert(memcmp(&bands, &before, sizeof(bands)) == 0);
}

/* parse -> label gives the text back, and the label parses to the same. */
static inline void assert_plan_round_trips(const char *text)
{
	struct gpuar_plan plan = parse_ok(text), again;
	char label[GPUAR_PLAN_LABEL_MAX];
	size_t n = gpuar_plan_label(&plan, label, sizeof(label));

	ck_assert_uint_eq(n, strlen(text));
	ck_assert_str_eq(label, text);
	again = parse_ok(label);
	ck_assert(memcmp(&plan, &again, sizeof(plan)) == 0);
}

#endif /* GPUAR_PLAN_TEXT_HELPERS_H */
