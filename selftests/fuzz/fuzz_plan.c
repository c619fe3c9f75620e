// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the wait-plan grammar. On any input: parsing never
 * crashes; a refusal points inside the text; a parsed plan passes the
 * binary check, its label is the text itself, re-parses to the identical
 * struct and label, and labels into small buffers stay NUL-terminated.
 * The input's first bytes are also tried as a binary plan: the check
 * never crashes, and a plan it accepts labels safely (and round-trips
 * when its times are whole microseconds).
 */
#include <stdint.h>

#include "plan.h"
#include "plan_text.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_parsed(const char *text, const struct gpuar_plan *plan)
{
	char label[GPUAR_PLAN_LABEL_MAX], again_label[GPUAR_PLAN_LABEL_MAX];
	struct gpuar_plan again;
	size_t n;

	FUZZ_CHECK(gpuar_plan_check(plan) == GPUAR_PLAN_OK);
	n = gpuar_plan_label(plan, label, sizeof(label));
	FUZZ_CHECK(n < sizeof(label));
	FUZZ_CHECK(strlen(label) == n);
	FUZZ_CHECK(strcmp(label, text) == 0);
	FUZZ_CHECK(gpuar_plan_parse(label, &again, NULL) == 0);
	FUZZ_CHECK(memcmp(plan, &again, sizeof(again)) == 0);
	gpuar_plan_label(&again, again_label, sizeof(again_label));
	FUZZ_CHECK(strcmp(label, again_label) == 0);
	FUZZ_CHECK_SMALL_BUFFERS(gpuar_plan_label, plan, label);
}

static bool whole_us(const struct gpuar_plan *p)
{
	return !(p->park_ns % 1000 || p->backstop_ns % 1000 ||
		 p->margin_ns % 1000 || p->min_sleep_ns % 1000 ||
		 p->max_sleep_ns % 1000);
}

static void check_binary(const uint8_t *data)
{
	char label[GPUAR_PLAN_LABEL_MAX];
	struct gpuar_plan plan, again;
	size_t n;

	memcpy(&plan, data, sizeof(plan));
	FUZZ_CHECK(gpuar_plan_check(&plan) < GPUAR_PLAN_FAULT_COUNT);
	n = gpuar_plan_label(&plan, label, sizeof(label));
	FUZZ_CHECK(n < sizeof(label) && strlen(label) == n);
	FUZZ_CHECK_SMALL_BUFFERS(gpuar_plan_label, &plan, label);
	if (gpuar_plan_check(&plan) != GPUAR_PLAN_OK || !whole_us(&plan))
		return;
	FUZZ_CHECK(gpuar_plan_parse(label, &again, NULL) == 0);
	FUZZ_CHECK(memcmp(&plan, &again, sizeof(again)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct gpuar_parse_error err;
	struct gpuar_plan plan;

	memset(&err, '#', sizeof(err));
	if (gpuar_plan_parse(text, &plan, &err) == 0)
		check_parsed(text, &plan);
	else
		fuzz_check_refusal(text, &err);
	if (size >= sizeof(struct gpuar_plan))
		check_binary(data);
	free(text);
	return 0;
}
