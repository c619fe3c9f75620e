// SPDX-License-Identifier: MIT
/*
 * The module fuzzer's mix (selftests/kmod/kfuzz_mix.h): weighted draws,
 * the pace planner that thins the dearest operations, and the written
 * form a run prints and a replay reads.
 */
#include <string.h>

#include "../kmod/kfuzz_mix.h"
#include "unit.h"

enum { CHEAP, DEAR, DEAREST, QUIET, N };

static const struct mix_op ops[N] = {
	[CHEAP] = { "cheap", 6 },
	[DEAR] = { "dear", 3 },
	[DEAREST] = { "dearest", 1 },
	[QUIET] = { "quiet", 0 },
};

/* A mix whose operations cost 1 us, 10 us and 100 us a draw. */
static struct mix costed(void)
{
	struct mix m = { .ops = ops, .n = N };

	m.count[CHEAP] = m.count[DEAR] = m.count[DEAREST] = 100;
	m.ns[CHEAP] = 100 * 1000;
	m.ns[DEAR] = 100 * 10000;
	m.ns[DEAREST] = 100 * 100000;
	return m;
}

/* How often each operation is drawn over every value of r mod total. */
static void draws(const struct mix *m, unsigned int *n)
{
	uint64_t total = 0, r;
	unsigned int op;

	memset(n, 0, N * sizeof(*n));
	for (op = 0; op < N; op++)
		total += mix_weight(m, m->thin, op);
	for (r = 0; r < total; r++)
		n[mix_draw(m, r)]++;
}

START_TEST(draws_follow_the_weights)
{
	struct mix m = costed();
	unsigned int n[N];

	draws(&m, n);
	ck_assert_uint_eq(n[CHEAP], 6u << MIX_THIN_MAX);
	ck_assert_uint_eq(n[DEAR], 3u << MIX_THIN_MAX);
	ck_assert_uint_eq(n[DEAREST], 1u << MIX_THIN_MAX);
	ck_assert_uint_eq(n[QUIET], 0);
	m.thin[DEAREST] = MIX_THIN_MAX;
	draws(&m, n);
	ck_assert_uint_eq(n[DEAREST], 1);
	ck_assert_uint_eq(n[CHEAP], 6u << MIX_THIN_MAX);
}
END_TEST

START_TEST(mean_weighs_each_cost_by_its_draws)
{
	struct mix m = costed();

	/* (6 * 1 + 3 * 10 + 1 * 100) / 10 us */
	ck_assert_double_eq_tol(mix_mean(&m, m.thin), 13600, 1);
	/* Not run yet: costed at the mean of all that ran. */
	m.count[DEAREST] = m.ns[DEAREST] = 0;
	ck_assert_double_eq_tol(mix_mean(&m, m.thin),
				(6 * 1000 + 3 * 10000 + 5500) / 10.0, 1);
}
END_TEST

START_TEST(a_budget_the_full_mix_meets_changes_nothing)
{
	struct mix m = costed();

	ck_assert(!mix_plan(&m, 13600));
	ck_assert_uint_eq(m.thin[CHEAP] + m.thin[DEAR] + m.thin[DEAREST], 0);
}
END_TEST

START_TEST(the_dearest_is_thinned_first_and_the_cheap_never)
{
	struct mix m = costed();

	ck_assert(mix_plan(&m, 10000));
	ck_assert_uint_gt(m.thin[DEAREST], 0);
	ck_assert_uint_eq(m.thin[DEAR], 0);
	ck_assert_uint_eq(m.thin[CHEAP], 0);
	ck_assert_double_le(mix_mean(&m, m.thin), 10000);
}
END_TEST

START_TEST(an_unreachable_budget_stops_at_the_floor)
{
	struct mix m = costed();
	unsigned int n[N];

	ck_assert(mix_plan(&m, 1));
	ck_assert_uint_eq(m.thin[DEAREST], MIX_THIN_MAX);
	ck_assert_uint_eq(m.thin[DEAR], MIX_THIN_MAX);
	ck_assert_uint_eq(m.thin[CHEAP], 0);
	/* Thinned, never dropped. */
	draws(&m, n);
	ck_assert_uint_gt(n[DEAR], 0);
	ck_assert_uint_gt(n[DEAREST], 0);
}
END_TEST

START_TEST(pace_keeps_a_mix_inside_its_band_and_gives_weight_back)
{
	struct mix m = costed();

	/* 1000 calls in 15 ms: 12 us a call after the reserve; thinned. */
	ck_assert(mix_pace(&m, 1000, 15000000));
	ck_assert_uint_gt(m.thin[DEAREST], 0);
	/* A little more time: the mix still fits, and is kept. */
	ck_assert(!mix_pace(&m, 1000, 16000000));
	/* Time to spare (the mix costs under half of it): full again. */
	ck_assert(mix_pace(&m, 1000, 100000000));
	ck_assert_uint_eq(m.thin[DEAREST], 0);
	ck_assert(!mix_pace(&m, 0, 1));
}
END_TEST

START_TEST(the_written_form_round_trips)
{
	struct mix m = costed(), back = costed();
	char text[64];

	mix_format(&m, text, sizeof(text));
	ck_assert_str_eq(text, "full");
	m.thin[DEAR] = 1;
	m.thin[DEAREST] = MIX_THIN_MAX;
	mix_format(&m, text, sizeof(text));
	ck_assert_str_eq(text, "dear/2,dearest/32");
	ck_assert_int_eq(mix_parse(&back, text), 0);
	ck_assert_mem_eq(back.thin, m.thin, sizeof(m.thin));
	ck_assert_int_eq(mix_parse(&back, "full"), 0);
	ck_assert_uint_eq(back.thin[DEAR] + back.thin[DEAREST], 0);
}
END_TEST

START_TEST(malformed_mixes_are_refused_and_change_nothing)
{
	static const char *const bad[] = {
		"", "dear", "dear/3", "dear/64", "dear/0", "rare/2",
		"quiet/2", "dear/2,", "dear/2;cheap/2", "dea/2", "dear/2x",
	};
	struct mix m = costed();
	unsigned int i;

	m.thin[CHEAP] = 1;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(mix_parse(&m, bad[i]) == -1, "%s", bad[i]);
		ck_assert_uint_eq(m.thin[CHEAP], 1);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("kfuzz_mix");
	TCase *tc = tcase_create("mix");

	tcase_add_test(tc, draws_follow_the_weights);
	tcase_add_test(tc, mean_weighs_each_cost_by_its_draws);
	tcase_add_test(tc, a_budget_the_full_mix_meets_changes_nothing);
	tcase_add_test(tc, the_dearest_is_thinned_first_and_the_cheap_never);
	tcase_add_test(tc, an_unreachable_budget_stops_at_the_floor);
	tcase_add_test(tc, pace_keeps_a_mix_inside_its_band_and_gives_weight_back);
	tcase_add_test(tc, the_written_form_round_trips);
	tcase_add_test(tc, malformed_mixes_are_refused_and_change_nothing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
