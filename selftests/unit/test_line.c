// SPDX-License-Identifier: MIT
/* Completion lines: reached() in wrapping order, acquire loads, alignment. */
#include <stdint.h>

#include "line.h"
#include "unit.h"

#define HALF ((u64)1 << 63)

START_TEST(reached_when_word_equals_target)
{
	ck_assert(gpuar_reached(7, 7));
	ck_assert(gpuar_reached(0, 0));
	ck_assert(gpuar_reached(UINT64_MAX, UINT64_MAX));
}
END_TEST

START_TEST(reached_when_word_is_past_target)
{
	ck_assert(gpuar_reached(8, 7));
	ck_assert(gpuar_reached(1000000, 1));
}
END_TEST

START_TEST(not_reached_before_target)
{
	ck_assert(!gpuar_reached(6, 7));
	ck_assert(!gpuar_reached(0, 1));
}
END_TEST

START_TEST(reached_after_counter_wraps_past_zero)
{
	/* target just below 2^64, the counter wrapped to small values */
	ck_assert(gpuar_reached(0, UINT64_MAX));
	ck_assert(gpuar_reached(5, UINT64_MAX - 5));
	ck_assert(gpuar_reached(UINT64_MAX, UINT64_MAX - 1));
}
END_TEST

START_TEST(not_reached_when_target_wrapped_ahead_of_word)
{
	/* the target is a few steps past the wrap, the word is not there yet */
	ck_assert(!gpuar_reached(UINT64_MAX - 5, 5));
	ck_assert(!gpuar_reached(UINT64_MAX, 0));
}
END_TEST

START_TEST(reached_is_decided_by_the_half_range)
{
	/* within 2^63 - 1 ahead counts as reached, 2^63 ahead as behind */
	ck_assert(gpuar_reached(100 + (HALF - 1), 100));
	ck_assert(!gpuar_reached(100 + HALF, 100));
	ck_assert(!gpuar_reached(100, 100 + (HALF - 1)));
	ck_assert(!gpuar_reached(100, 101));
}
END_TEST

START_TEST(later_store_completes_an_earlier_target)
{
	_Alignas(GPUAR_LINE_BYTES) u64 line[GPUAR_LINE_SLOTS] = {0};
	struct gpuar_memdesc md = {.line = line, .slot = 3, .target = 10};
	u64 seen = 0;

	line[3] = 9;
	ck_assert(!gpuar_memdesc_reached(&md, &seen));
	ck_assert_uint_eq(seen, 9);
	/* stores 10..15 landed before anyone looked: 10 is still complete */
	line[3] = 15;
	ck_assert(gpuar_memdesc_reached(&md, &seen));
	ck_assert_uint_eq(seen, 15);
}
END_TEST

START_TEST(later_store_across_wrap_completes_an_earlier_target)
{
	_Alignas(GPUAR_LINE_BYTES) u64 line[GPUAR_LINE_SLOTS] = {0};
	struct gpuar_memdesc md = {
		.line = line,
		.slot = 0,
		.target = UINT64_MAX - 1,
	};

	line[0] = 3; /* wrapped: 2^64 - 1, 0, 1, 2, 3 were stored */
	ck_assert(gpuar_memdesc_reached(&md, NULL));
}
END_TEST

START_TEST(memdesc_reads_its_own_slot)
{
	_Alignas(GPUAR_LINE_BYTES) u64 line[GPUAR_LINE_SLOTS];
	u32 slot;

	for (slot = 0; slot < GPUAR_LINE_SLOTS; slot++)
		line[slot] = 100 + slot;
	for (slot = 0; slot < GPUAR_LINE_SLOTS; slot++) {
		struct gpuar_memdesc md = {
			.line = line,
			.slot = slot,
			.target = 100 + slot,
		};
		struct gpuar_memdesc next = md;
		u64 seen;

		next.target++;
		ck_assert(gpuar_memdesc_reached(&md, &seen));
		ck_assert_uint_eq(seen, 100 + slot);
		ck_assert(!gpuar_memdesc_reached(&next, NULL));
	}
}
END_TEST

START_TEST(load_acquire_returns_the_stored_word)
{
	u64 word = 0x0123456789abcdefULL;

	ck_assert_uint_eq(gpuar_load_acquire(&word), 0x0123456789abcdefULL);
	word = UINT64_MAX;
	ck_assert_uint_eq(gpuar_load_acquire(&word), UINT64_MAX);
}
END_TEST

START_TEST(line_address_must_be_nonzero_and_64_byte_aligned)
{
	ck_assert(!gpuar_line_aligned(0));
	ck_assert(gpuar_line_aligned(64));
	ck_assert(gpuar_line_aligned(0x7f0000001000ULL));
	ck_assert(!gpuar_line_aligned(65));
	ck_assert(!gpuar_line_aligned(32));
	ck_assert(!gpuar_line_aligned(0x7f0000001008ULL));
}
END_TEST

static Suite *line_suite(void)
{
	Suite *s = suite_create("line");
	TCase *tc = tcase_create("reached");

	tcase_add_test(tc, reached_when_word_equals_target);
	tcase_add_test(tc, reached_when_word_is_past_target);
	tcase_add_test(tc, not_reached_before_target);
	tcase_add_test(tc, reached_after_counter_wraps_past_zero);
	tcase_add_test(tc, not_reached_when_target_wrapped_ahead_of_word);
	tcase_add_test(tc, reached_is_decided_by_the_half_range);
	tcase_add_test(tc, later_store_completes_an_earlier_target);
	tcase_add_test(tc, later_store_across_wrap_completes_an_earlier_target);
	tcase_add_test(tc, memdesc_reads_its_own_slot);
	tcase_add_test(tc, load_acquire_returns_the_stored_word);
	tcase_add_test(tc, line_address_must_be_nonzero_and_64_byte_aligned);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(line_suite());
}
