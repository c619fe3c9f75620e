// SPDX-License-Identifier: MIT
/* gpuar-bench's workloads: same seed, same jobs; shapes as declared. */
#include <stdint.h>

#include "bench_workload.h"
#include "unit.h"

static struct bench_workload wl(enum bench_workload_kind k)
{
	return (struct bench_workload){
		.kind = k, .work_us = 1000, .jitter_us = 200, .work2_us = 3000,
		.bimodal_pct = 25, .waits = 100, .streams = 1, .seed = 42,
	};
}

START_TEST(same_seed_gives_same_sequence)
{
	struct bench_workload w = wl(BENCH_WL_JITTER);
	struct bench_rng a, b;

	bench_workload_rng(&w, 3, 1, &a);
	bench_workload_rng(&w, 3, 1, &b);
	for (int i = 0; i < 1000; i++)
		ck_assert_uint_eq(bench_workload_next_ns(&w, &a),
				  bench_workload_next_ns(&w, &b));
}
END_TEST

START_TEST(repetitions_streams_and_seeds_differ)
{
	struct bench_workload w = wl(BENCH_WL_JITTER), w2 = w;
	struct bench_rng base, rep, stream, seed;
	int same_rep = 0, same_stream = 0, same_seed = 0;

	w2.seed = 43;
	bench_workload_rng(&w, 0, 0, &base);
	bench_workload_rng(&w, 1, 0, &rep);
	bench_workload_rng(&w, 0, 1, &stream);
	bench_workload_rng(&w2, 0, 0, &seed);
	for (int i = 0; i < 100; i++) {
		uint64_t v = bench_workload_next_ns(&w, &base);

		same_rep += v == bench_workload_next_ns(&w, &rep);
		same_stream += v == bench_workload_next_ns(&w, &stream);
		same_seed += v == bench_workload_next_ns(&w, &seed);
	}
	/* 401 possible values: a few coincidences, never most. */
	ck_assert_int_lt(same_rep, 20);
	ck_assert_int_lt(same_stream, 20);
	ck_assert_int_lt(same_seed, 20);
}
END_TEST

START_TEST(fixed_is_always_work)
{
	struct bench_workload w = wl(BENCH_WL_FIXED);
	struct bench_rng r;

	bench_workload_rng(&w, 0, 0, &r);
	for (int i = 0; i < 100; i++)
		ck_assert_uint_eq(bench_workload_next_ns(&w, &r), 1000000);
}
END_TEST

START_TEST(jitter_stays_in_bounds_and_reaches_both_ends)
{
	struct bench_workload w = wl(BENCH_WL_JITTER);
	struct bench_rng r;
	uint64_t lo = UINT64_MAX, hi = 0;

	bench_workload_rng(&w, 0, 0, &r);
	for (int i = 0; i < 20000; i++) {
		uint64_t v = bench_workload_next_ns(&w, &r);

		ck_assert_uint_ge(v, 800000);
		ck_assert_uint_le(v, 1200000);
		ck_assert_uint_eq(v % 1000, 0);
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	ck_assert_uint_eq(lo, 800000);
	ck_assert_uint_eq(hi, 1200000);
}
END_TEST

START_TEST(bimodal_gives_two_durations_in_proportion)
{
	struct bench_workload w = wl(BENCH_WL_BIMODAL);
	struct bench_rng r;
	int longer = 0;

	bench_workload_rng(&w, 0, 0, &r);
	for (int i = 0; i < 10000; i++) {
		uint64_t v = bench_workload_next_ns(&w, &r);

		ck_assert(v == 1000000 || v == 3000000);
		longer += v == 3000000;
	}
	/* 25% of 10000, well inside binomial noise (sd ~43). */
	ck_assert_int_gt(longer, 2300);
	ck_assert_int_lt(longer, 2700);
}
END_TEST

START_TEST(check_refuses_inconsistent_workloads)
{
	struct bench_workload w = wl(BENCH_WL_JITTER);

	ck_assert_ptr_null(bench_workload_check(&w));
	w.jitter_us = 1000;
	ck_assert_ptr_nonnull(bench_workload_check(&w));
	w = wl(BENCH_WL_FIXED);
	w.work_us = 0;
	ck_assert_ptr_nonnull(bench_workload_check(&w));
	w = wl(BENCH_WL_FIXED);
	w.streams = 8;
	w.waits = 4;
	ck_assert_ptr_nonnull(bench_workload_check(&w));
	w = wl(BENCH_WL_BIMODAL);
	w.work2_us = 0;
	ck_assert_ptr_nonnull(bench_workload_check(&w));
}
END_TEST

START_TEST(kind_names_round_trip)
{
	enum bench_workload_kind k;

	ck_assert_int_eq(bench_workload_kind_parse("bimodal", &k), 0);
	ck_assert_int_eq(k, BENCH_WL_BIMODAL);
	ck_assert_str_eq(bench_workload_kind_name(k), "bimodal");
	ck_assert_int_eq(bench_workload_kind_parse("Fixed", &k), -1);
}
END_TEST

START_TEST(rng_range_is_inclusive_and_degenerate_safe)
{
	struct bench_rng r;
	int seen[3] = { 0 };

	bench_rng_seed(&r, 1);
	for (int i = 0; i < 300; i++)
		seen[bench_rng_range(&r, 5, 7) - 5]++;
	ck_assert(seen[0] && seen[1] && seen[2]);
	ck_assert_uint_eq(bench_rng_range(&r, 9, 9), 9);
	ck_assert_uint_eq(bench_rng_range(&r, 9, 3), 9);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bench_workload");
	TCase *tc = tcase_create("workload");

	tcase_add_test(tc, same_seed_gives_same_sequence);
	tcase_add_test(tc, repetitions_streams_and_seeds_differ);
	tcase_add_test(tc, fixed_is_always_work);
	tcase_add_test(tc, jitter_stays_in_bounds_and_reaches_both_ends);
	tcase_add_test(tc, bimodal_gives_two_durations_in_proportion);
	tcase_add_test(tc, check_refuses_inconsistent_workloads);
	tcase_add_test(tc, kind_names_round_trip);
	tcase_add_test(tc, rng_range_is_inclusive_and_degenerate_safe);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
