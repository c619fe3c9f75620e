// SPDX-License-Identifier: MIT
/*
 * gpuar-bench's summaries and verdicts: medians over repetitions, the
 * oracle margin rule, the targets as ratios to the run's own floors, and
 * the virtualisation guess.
 */
#include <string.h>

#include "bench_env.h"
#include "bench_report.h"
#include "unit.h"

static struct bench_run run;

static struct bench_result *add(const char *name, const char *family,
				uint64_t param, double p50, double sys)
{
	struct bench_result *r = &run.result[run.results++];

	memset(r, 0, sizeof(*r));
	r->st.name = name;
	r->st.family = family;
	r->st.param = param;
	r->reps = 5;
	for (int i = 0; i < 5; i++) {
		/* Medians p50 and sys; other repetitions around them. */
		r->rep[i].p50 = p50 + (i - 2) * 0.01;
		r->rep[i].system_cpu_us = sys + (i - 2);
	}
	bench_summarize(r);
	return r;
}

static void setup(void)
{
	memset(&run, 0, sizeof(run));
	run.cfg.reps = 5;
	run.cfg.plan.park_ns = 50000;
	run.oracle_chosen = -1;
}

START_TEST(summary_is_median_with_range)
{
	struct bench_result *r = add("spin", "spin", 0, 0.3, 900);

	ck_assert_double_eq_tol(r->sum.p50.median, 0.3, 1e-9);
	ck_assert_double_eq_tol(r->sum.p50.min, 0.28, 1e-9);
	ck_assert_double_eq_tol(r->sum.p50.max, 0.32, 1e-9);
	ck_assert_double_eq_tol(r->sum.system_cpu_us.median, 900, 1e-9);
}
END_TEST

START_TEST(errors_add_up_over_repetitions)
{
	struct bench_result *r = add("spin", "spin", 0, 0.3, 900);

	r->rep[1].errors = 2;
	r->rep[4].errors = 1;
	bench_summarize(r);
	ck_assert_uint_eq(r->sum.errors, 3);
}
END_TEST

START_TEST(oracle_takes_smallest_qualifying_margin)
{
	add("spin", "spin", 0, 0.5, 950);
	add("oracle@10", "oracle", 10000, 20.0, 40);	/* too late */
	add("oracle@20", "oracle", 20000, 1.9, 50);	/* 1.9 <= 2*0.5+1 */
	add("oracle@50", "oracle", 50000, 0.6, 80);
	bench_choose_oracle(&run);
	ck_assert_int_eq(run.oracle_chosen, 2);
}
END_TEST

START_TEST(oracle_limit_is_inclusive)
{
	add("spin", "spin", 0, 0.5, 950);
	add("oracle@10", "oracle", 10000, 2.0, 40);	/* exactly 2*0.5+1 */
	bench_choose_oracle(&run);
	ck_assert_int_eq(run.oracle_chosen, 1);
}
END_TEST

START_TEST(oracle_unchosen_without_spin)
{
	add("oracle@10", "oracle", 10000, 0.1, 40);
	bench_choose_oracle(&run);
	ck_assert_int_eq(run.oracle_chosen, -1);
}
END_TEST

START_TEST(oracle_unchosen_when_none_qualifies)
{
	add("spin", "spin", 0, 0.5, 950);
	add("oracle@10", "oracle", 10000, 30, 40);
	add("oracle@200", "oracle", 200000, 2.01, 90);
	bench_choose_oracle(&run);
	ck_assert_int_eq(run.oracle_chosen, -1);
}
END_TEST

START_TEST(targets_are_ratios_to_the_floors)
{
	struct bench_target t[BENCH_TARGETS_MAX];
	unsigned int n;

	add("spin", "spin", 0, 0.5, 950);
	add("futex-wake", "futex-wake", 0, 50, 60);
	add("oracle@50", "oracle", 50000, 0.6, 80);
	add("kport-read", "kport-read", 0, 2.9, 130);	/* p50 <= 3.0 met; 130 > 120 missed */
	add("kport-epoll", "kport-epoll", 0, 100.1, 90); /* 100.1 > 50+50 missed; 90 <= 90 met */
	bench_choose_oracle(&run);
	n = bench_targets(&run, t, BENCH_TARGETS_MAX);
	ck_assert_uint_ge(n, 6);
	ck_assert_str_eq(t[0].state, "met");
	ck_assert_double_eq_tol(t[0].limit, 3.0, 1e-9);
	ck_assert_str_eq(t[1].state, "missed");
	ck_assert_double_eq_tol(t[1].limit, 120.0, 1e-9);
	ck_assert_str_eq(t[2].state, "met");
	ck_assert_str_eq(t[3].state, "missed");
	ck_assert_double_eq_tol(t[3].limit, 100.0, 1e-9);
	/* kport-uring was not measured. */
	ck_assert_str_eq(t[4].state, "unmeasured");
}
END_TEST

/* The target named @name among @n, or NULL. */
static const struct bench_target *named(const struct bench_target *t,
					unsigned int n, const char *name)
{
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

START_TEST(imminent_targets_are_ratios_to_the_blocked_reader)
{
	struct bench_target t[BENCH_TARGETS_MAX];
	const struct bench_target *x;
	struct bench_result *r;
	unsigned int n;

	add("spin", "spin", 0, 0.5, 1000);
	add("futex-wake", "futex-wake", 0, 100, 300);
	add("kport-read", "kport-read", 0, 30, 700);
	add("lib-reap", "lib-reap", 0, 36, 700);		/* 36 > 30 + 5 */
	r = add("kport-epoll-imminent", "kport-epoll-imminent", 0, 34, 740);
	for (int i = 0; i < 5; i++)
		r->rep[i].port.timer_fires = 1.5;
	bench_summarize(r);
	n = bench_targets(&run, t, BENCH_TARGETS_MAX);
	ck_assert_uint_le(n, BENCH_TARGETS_MAX);
	x = named(t, n, "lib-reap p50 <= kport-read p50 + 5 us");
	ck_assert_ptr_nonnull(x);
	ck_assert_str_eq(x->state, "missed");
	x = named(t, n, "kport-epoll-imminent p50 <= kport-read p50 + 5 us");
	ck_assert_str_eq(x->state, "met");
	ck_assert_double_eq_tol(x->limit, 35.0, 1e-9);
	x = named(t, n, "kport-epoll-imminent p50 <= 0.5x futex-wake p50");
	ck_assert_str_eq(x->state, "met");
	x = named(t, n, "kport-epoll-imminent system CPU <= 0.75x spin");
	ck_assert_str_eq(x->state, "met");
	ck_assert_double_eq_tol(x->limit, 750.0, 1e-9);
	x = named(t, n, "kport-epoll-imminent system CPU <= 1.2x kport-read");
	ck_assert_str_eq(x->state, "met");
	x = named(t, n, "kport-epoll-imminent timer firings <= 2 per wait");
	ck_assert_str_eq(x->state, "met");
	ck_assert_double_eq_tol(x->measured, 1.5, 1e-9);
	/* Skipped (a module without the feature): unmeasured, not missed. */
	x = named(t, n, "kport-uring-imminent p50 <= kport-read p50 + 5 us");
	ck_assert_str_eq(x->state, "unmeasured");
}
END_TEST

START_TEST(targets_on_the_oracle_are_unmeasured_without_a_margin)
{
	struct bench_target t[BENCH_TARGETS_MAX];

	add("spin", "spin", 0, 0.5, 950);
	add("oracle@10", "oracle", 10000, 30, 40);
	add("kport-read", "kport-read", 0, 1.0, 50);
	bench_choose_oracle(&run);
	bench_targets(&run, t, BENCH_TARGETS_MAX);
	ck_assert_str_eq(t[0].state, "met");
	ck_assert_str_eq(t[1].state, "unmeasured");
}
END_TEST

START_TEST(skipped_and_failed_results_are_named_so)
{
	struct bench_result *a = add("kport-read", "kport-read", 0, 1, 1);
	struct bench_result *b = add("spin", "spin", 0, 1, 1);

	a->skipped = true;
	ck_assert_str_eq(bench_result_status(&run, a), "skipped");
	ck_assert_ptr_null(bench_find(&run, "kport-read"));
	b->reps = 3;
	ck_assert_str_eq(bench_result_status(&run, b), "error");
	b->reps = 5;
	ck_assert_str_eq(bench_result_status(&run, b), "ok");
	ck_assert_ptr_eq(bench_find(&run, "spin"), b);
}
END_TEST

START_TEST(virt_is_read_from_what_the_guest_sees)
{
	ck_assert_str_eq(bench_env_virt("tsc kvm-clock hpet", "QEMU", true), "kvm");
	ck_assert_str_eq(bench_env_virt("tsc hpet acpi_pm", "QEMU", true), "tcg");
	ck_assert_str_eq(bench_env_virt("tsc hpet", "", true), "hypervisor");
	ck_assert_str_eq(bench_env_virt("tsc hpet", "Dell Inc.", false), "none");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bench_result");
	TCase *tc = tcase_create("result");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, summary_is_median_with_range);
	tcase_add_test(tc, errors_add_up_over_repetitions);
	tcase_add_test(tc, oracle_takes_smallest_qualifying_margin);
	tcase_add_test(tc, oracle_limit_is_inclusive);
	tcase_add_test(tc, oracle_unchosen_without_spin);
	tcase_add_test(tc, oracle_unchosen_when_none_qualifies);
	tcase_add_test(tc, targets_are_ratios_to_the_floors);
	tcase_add_test(tc, imminent_targets_are_ratios_to_the_blocked_reader);
	tcase_add_test(tc, targets_on_the_oracle_are_unmeasured_without_a_margin);
	tcase_add_test(tc, skipped_and_failed_results_are_named_so);
	tcase_add_test(tc, virt_is_read_from_what_the_guest_sees);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
