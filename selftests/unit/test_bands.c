// SPDX-License-Identifier: MIT
/* Wait bands: grammar, refusals, labels and selection at every edge. */
#include <stdint.h>

#include "plan_text_helpers.h"

#define EXAMPLE_BANDS "block;rows>=32:" EXAMPLE_FLAG_PREDICT
#define PREDICT_4   "+predict:margin_us=1,min_sleep_us=2,max_sleep_us=3,window=4"
#define FOUR_BANDS                                                             \
	"poll;rows>=1:block;rows>=100:" EXAMPLE_FLAG                             \
	";rows>=18446744073709551615:poll" PREDICT_4

static struct gpuar_bands bands_ok(const char *text)
{
	struct gpuar_bands bands;
	struct gpuar_parse_error err = {0};
	u32 i;

	ck_assert_msg(gpuar_bands_parse(text, &bands, &err) == 0,
		      "'%s' refused at %u: %s", text, err.offset, err.what);
	ck_assert_uint_ge(bands.count, 1);
	ck_assert_uint_le(bands.count, GPUAR_BANDS_MAX);
	ck_assert_uint_eq(bands.from_rows[0], 0);
	for (i = 0; i < bands.count; i++)
		ck_assert_int_eq(gpuar_plan_check(&bands.plan[i]),
				 GPUAR_PLAN_OK);
	return bands;
}

static void assert_bands_round_trip(const char *text)
{
	struct gpuar_bands bands = bands_ok(text), again;
	char label[GPUAR_BANDS_LABEL_MAX];

	ck_assert_uint_eq(gpuar_bands_label(&bands, label, sizeof(label)),
			  strlen(text));
	ck_assert_str_eq(label, text);
	again = bands_ok(label);
	ck_assert(memcmp(&bands, &again, sizeof(bands)) == 0);
}

static void assert_selects(const struct gpuar_bands *bands, u64 rows, u32 band)
{
	const struct gpuar_plan *got = gpuar_bands_select(bands, rows);

	ck_assert_msg(got == &bands->plan[band],
		      "rows %llu: got band %ld, expected %u",
		      (unsigned long long)rows,
		      got ? (long)(got - bands->plan) : -1L, band);
}

START_TEST(single_plan_is_one_band_from_zero_rows)
{
	struct gpuar_bands bands = bands_ok("poll");

	ck_assert_uint_eq(bands.count, 1);
	ck_assert_uint_eq(bands.plan[0].park, GPUAR_PARK_POLL);
	assert_selects(&bands, 0, 0);
	assert_selects(&bands, UINT64_MAX, 0);
}
END_TEST

START_TEST(parses_the_documented_example)
{
	struct gpuar_bands bands = bands_ok(EXAMPLE_BANDS);

	ck_assert_uint_eq(bands.count, 2);
	ck_assert_uint_eq(bands.from_rows[1], 32);
	ck_assert_uint_eq(bands.plan[0].park, GPUAR_PARK_BLOCK);
	ck_assert_uint_eq(bands.plan[1].park, GPUAR_PARK_FLAG);
	ck_assert_uint_eq(bands.plan[1].flags, GPUAR_PLAN_PREDICT);
	ck_assert_uint_eq(bands.plan[1].window, 8);
}
END_TEST

START_TEST(documented_example_selects_block_below_32_rows_and_flag_from_32)
{
	struct gpuar_bands bands = bands_ok(EXAMPLE_BANDS);
	u64 rows;

	for (rows = 0; rows <= 31; rows++)
		ck_assert_uint_eq(gpuar_bands_select(&bands, rows)->park,
				  GPUAR_PARK_BLOCK);
	for (rows = 32; rows <= 40; rows++)
		ck_assert_uint_eq(gpuar_bands_select(&bands, rows)->park,
				  GPUAR_PARK_FLAG);
	ck_assert_uint_eq(gpuar_bands_select(&bands, UINT64_MAX)->park,
			  GPUAR_PARK_FLAG);
}
END_TEST

START_TEST(selects_at_and_around_every_edge_of_four_bands)
{
	struct gpuar_bands bands = bands_ok(FOUR_BANDS);

	ck_assert_uint_eq(bands.count, 4);
	assert_selects(&bands, 0, 0);
	assert_selects(&bands, 1, 1);
	assert_selects(&bands, 2, 1);
	assert_selects(&bands, 99, 1);
	assert_selects(&bands, 100, 2);
	assert_selects(&bands, 101, 2);
	assert_selects(&bands, UINT64_MAX - 1, 2);
	assert_selects(&bands, UINT64_MAX, 3);
}
END_TEST

START_TEST(select_without_bands_finds_nothing)
{
	struct gpuar_bands bands = {.count = 0};

	ck_assert_ptr_null(gpuar_bands_select(&bands, 0));
	bands.count = GPUAR_BANDS_MAX + 1;
	ck_assert_ptr_null(gpuar_bands_select(&bands, 0));
}
END_TEST

START_TEST(label_round_trips_bands)
{
	assert_bands_round_trip("block");
	assert_bands_round_trip(EXAMPLE_BANDS);
	assert_bands_round_trip(FOUR_BANDS);
	assert_bands_round_trip("poll;rows>=1:poll");
}
END_TEST

START_TEST(bands_label_truncates_like_snprintf)
{
	struct gpuar_bands bands = bands_ok(EXAMPLE_BANDS);
	size_t full = strlen(EXAMPLE_BANDS);
	char buf[GPUAR_BANDS_LABEL_MAX];
	size_t size;

	ck_assert_uint_eq(gpuar_bands_label(&bands, NULL, 0), full);
	for (size = 1; size <= full + 1; size++) {
		memset(buf, 'x', sizeof(buf));
		ck_assert_uint_eq(gpuar_bands_label(&bands, buf, size), full);
		ck_assert_uint_eq(strlen(buf), size - 1);
		ck_assert(strncmp(buf, EXAMPLE_BANDS, size - 1) == 0);
		ck_assert_int_eq(buf[size], 'x');
	}
}
END_TEST

START_TEST(refuses_a_fifth_band)
{
	assert_bands_refused(
		"poll;rows>=1:poll;rows>=2:poll;rows>=3:poll;rows>=4:poll", 43,
		"more than 4 bands");
}
END_TEST

START_TEST(refuses_an_edge_at_zero_rows)
{
	assert_bands_refused("block;rows>=0:poll", 12,
			     "edge 0 not above 0, where the first band starts");
}
END_TEST

START_TEST(refuses_edges_that_do_not_increase)
{
	assert_bands_refused("block;rows>=32:poll;rows>=32:block", 26,
			     "edge 32 not above the previous edge 32");
	assert_bands_refused("block;rows>=32:poll;rows>=16:block", 26,
			     "edge 16 not above the previous edge 32");
}
END_TEST

START_TEST(refuses_malformed_edges)
{
	assert_bands_refused("block;", 6, "missing 'rows>='");
	assert_bands_refused("block;poll", 6, "expected 'rows>='");
	assert_bands_refused("block;rows>32:poll", 6, "expected 'rows>='");
	assert_bands_refused("block;rows>=:poll", 12,
			     "expected a number for the band edge");
	assert_bands_refused("block;rows>=-1:poll", 12,
			     "expected a number for the band edge");
	assert_bands_refused("block;rows>=032:poll", 12,
			     "leading zero in number");
	assert_bands_refused("block;rows>=18446744073709551616:poll", 12,
			     "number overflows");
	assert_bands_refused("block;rows>=32poll", 14, "expected ':'");
	assert_bands_refused(
		"block;rows>=32:", 15,
		"expected a park kind ('block', 'poll' or 'flag')");
	assert_bands_refused(
		";rows>=32:poll", 0,
		"expected a park kind ('block', 'poll' or 'flag')");
}
END_TEST

START_TEST(refusal_inside_a_later_band_gives_the_offset_in_the_whole_text)
{
	assert_bands_refused("block;rows>=32:flog", 15,
			     "unknown park kind 'flog'");
	assert_bands_refused("block;rows>=32:block" PREDICT_4, 20,
			     "block takes no prediction");
	assert_bands_refused("block;rows>=32:flag:park_us=20000,backstop_us=1",
			     28, "park_us 20000 out of range (max 10000)");
	assert_bands_refused("poll;rows>=8:poll x", 17, "trailing text");
}
END_TEST

START_TEST(refuses_null_text)
{
	assert_bands_refused(NULL, 0, "no text");
}
END_TEST

static Suite *bands_suite(void)
{
	Suite *s = suite_create("bands");
	TCase *ok = tcase_create("accepted");
	TCase *bad = tcase_create("refused");

	tcase_add_test(ok, single_plan_is_one_band_from_zero_rows);
	tcase_add_test(ok, parses_the_documented_example);
	tcase_add_test(
		ok, documented_example_selects_block_below_32_rows_and_flag_from_32);
	tcase_add_test(ok, selects_at_and_around_every_edge_of_four_bands);
	tcase_add_test(ok, select_without_bands_finds_nothing);
	tcase_add_test(ok, label_round_trips_bands);
	tcase_add_test(ok, bands_label_truncates_like_snprintf);
	suite_add_tcase(s, ok);

	tcase_add_test(bad, refuses_a_fifth_band);
	tcase_add_test(bad, refuses_an_edge_at_zero_rows);
	tcase_add_test(bad, refuses_edges_that_do_not_increase);
	tcase_add_test(bad, refuses_malformed_edges);
	tcase_add_test(
		bad,
		refusal_inside_a_later_band_gives_the_offset_in_the_whole_text);
	tcase_add_test(bad, refuses_null_text);
	suite_add_tcase(s, bad);
	return s;
}

int main(void)
{
	return unit_run(bands_suite());
}
