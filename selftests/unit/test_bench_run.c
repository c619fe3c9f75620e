// SPDX-License-Identifier: MIT
/*
 * gpuar-bench's measurement loop end to end on a tiny workload (a few
 * 10 ms jobs): every bench-side strategy completes every wait without
 * errors, the figures are consistent with each other, and strategies
 * whose requirement is missing are skipped with a reason. Outcomes only:
 * no figure is compared with a duration.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_options.h"
#include "bench_report.h"
#include "bench_run.h"
#include "bench_throughput.h"
#include "unit.h"

static struct bench_run run;

static void configure(const char *strategies, unsigned int streams)
{
	char waits[16], nstreams[8];
	char *argv[] = {
		"gpuar-bench", "--work-us", "10000", "--waits", waits, "--reps", "2",
		"--streams", nstreams, "--background-ms", "0", "--strategies",
		(char *)strategies, "--oracle-margins", "2000",
		"--device-path", "/nonexistent/gpuar", NULL,
	};
	struct bench_options o;
	struct bench_strategy all[BENCH_STRATEGIES_MAX];
	size_t n;

	snprintf(waits, sizeof(waits), "%u", 4 * streams);
	snprintf(nstreams, sizeof(nstreams), "%u", streams);
	optind = 0;	/* glibc: re-initialise getopt for a new argv */
	ck_assert_int_eq(bench_options_parse(sizeof(argv) / sizeof(argv[0]) - 1, argv, &o), 0);
	memset(&run, 0, sizeof(run));
	run.cfg = o.cfg;
	n = bench_strategies(&run.cfg, all, BENCH_STRATEGIES_MAX);
	for (size_t i = 0; i < n; i++) {
		struct bench_result *r = &run.result[run.results];

		if (!bench_selected(o.strategies, &all[i]))
			continue;
		r->st = all[i];
		r->st.plan(&r->st, &run.cfg, r->plan, sizeof(r->plan));
		if (r->st.probe && r->st.probe(&run.cfg, r->reason, sizeof(r->reason)))
			r->skipped = true;
		run.results++;
	}
}

static void assert_measured(const struct bench_result *r, unsigned int waits)
{
	ck_assert_msg(!r->skipped, "%s skipped: %s", r->st.name, r->reason);
	ck_assert_uint_eq(r->reps, 2);
	ck_assert_uint_eq(r->sum.errors, 0);
	for (unsigned int i = 0; i < r->reps; i++) {
		const struct bench_rep *p = &r->rep[i];

		ck_assert_uint_eq(p->waits, waits);
		ck_assert(p->p50 >= 0 && p->p50 <= p->p90);
		ck_assert(p->p90 <= p->p99 && p->p99 <= p->max);
		ck_assert(p->waiter_cpu_us > 0);
		ck_assert(p->waits_per_s > 0);
	}
}

START_TEST(bench_strategies_complete_every_wait)
{
	configure("spin,sleep-poll,futex-wake,oracle,user-predict", 1);
	ck_assert_uint_eq(run.results, 5);
	ck_assert_int_eq(bench_run_all(&run, false), 0);
	for (unsigned int i = 0; i < run.results; i++)
		assert_measured(&run.result[i], 4);
}
END_TEST

START_TEST(streams_complete_every_wait)
{
	configure("spin,futex-wake,oracle,user-predict", 3);
	ck_assert_int_eq(bench_run_all(&run, false), 0);
	for (unsigned int i = 0; i < run.results; i++)
		assert_measured(&run.result[i], 12);
}
END_TEST

/*
 * The detection split: a strategy with port records (user-predict) gets a
 * detection p50 that is part of its latency; one without (spin) gets
 * none (-1) and no detect_us_p50 in the JSON.
 */
START_TEST(record_strategies_split_detection_from_hand_back)
{
	configure("spin,user-predict", 1);
	ck_assert_int_eq(bench_run_all(&run, false), 0);
	for (unsigned int i = 0; i < run.result[0].reps; i++)
		ck_assert(run.result[0].rep[i].detect_p50 < 0);
	for (unsigned int i = 0; i < run.result[1].reps; i++) {
		const struct bench_rep *p = &run.result[1].rep[i];

		ck_assert(p->detect_p50 >= 0);
		/* The port completed it before the waiter saw it. */
		ck_assert(p->detect_p50 <= p->max);
	}
	ck_assert(run.result[0].sum.detect_p50.median < 0);
	ck_assert(run.result[1].sum.detect_p50.median >= 0);
}
END_TEST

/*
 * The strategies that run here without a module: the reactor (its
 * scanner's unparks counted as wake-ups, no port, so no timer count) and
 * the user engine's event loop with imminent readiness (timer firings
 * from its port). Counts are per wait and only consistent, not bounded:
 * the machine may be busy.
 */
START_TEST(reactor_and_user_imminent_complete_and_count)
{
	configure("reactor-spin,user-imminent,user-predict", 2);
	ck_assert_uint_eq(run.results, 3);
	ck_assert_int_eq(bench_run_all(&run, false), 0);
	for (unsigned int i = 0; i < run.results; i++) {
		const struct bench_result *r = &run.result[i];

		assert_measured(r, 8);
		for (unsigned int k = 0; k < r->reps; k++) {
			const struct bench_rep *p = &r->rep[k];

			ck_assert(p->ctx_switches >= 0 && p->wakeups >= 0);
			if (i == 0) {
				ck_assert(p->port.timer_fires < 0);
				ck_assert(p->port.checks < 0);
			} else {
				ck_assert(p->port.timer_fires >= 0);
				ck_assert(p->port.checks >= 0);
			}
		}
	}
	/* The reactor's waiter blocks for every completion it is handed. */
	ck_assert(run.result[0].sum.wakeups.median > 0);
	ck_assert_str_eq(run.result[0].plan, "reactor:spin_passes=10000");
}
END_TEST

/* The table @run prints, and the JSON it writes, as text (free them). */
static char *table_of(const struct bench_run *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	bench_print_table(f, r);
	fclose(f);
	return text;
}

static char *json_of(const struct bench_run *r)
{
	char path[] = "/tmp/gpuar-bench-json-XXXXXX", *text;
	int fd = mkstemp(path);
	FILE *f;
	size_t len;

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(bench_write_json(path, r), 0);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	text = calloc(1, 1 << 20);
	ck_assert_ptr_nonnull(text);
	len = fread(text, 1, (1 << 20) - 1, f);
	text[len] = '\0';
	fclose(f);
	unlink(path);
	return text;
}

/*
 * syscalls/wait: none for spin (a load loop), some for each strategy that
 * blocks, whether the bench makes the calls (sleep-poll's sleeps,
 * futex-wake's and the reactor's futexes) or the library does
 * (user-predict); the table's column and the JSON's field carry them.
 */
START_TEST(syscalls_are_counted_per_strategy)
{
	char *text;

	configure("spin,sleep-poll,futex-wake,reactor-spin,user-predict", 1);
	ck_assert_uint_eq(run.results, 5);
	ck_assert_int_eq(bench_run_all(&run, false), 0);
	for (unsigned int i = 0; i < run.results; i++) {
		const struct bench_result *r = &run.result[i];

		assert_measured(r, 4);
		for (unsigned int k = 0; k < r->reps; k++) {
			if (i == 0)
				ck_assert(r->rep[k].syscalls == 0);
			else
				ck_assert_msg(r->rep[k].syscalls > 0, "%s: %f",
					      r->st.name, r->rep[k].syscalls);
		}
	}
	text = table_of(&run);
	ck_assert_ptr_nonnull(strstr(text, "sys/w"));
	free(text);
	text = json_of(&run);
	/* The summary's and each repetition's, for every strategy. */
	{
		unsigned int n = 0;

		for (char *at = text; (at = strstr(at, "\"syscalls_per_wait\": ")); at++)
			n++;
		ck_assert_uint_eq(n, 5 * 3);
	}
	ck_assert_ptr_nonnull(strstr(text, "\"strategy\": \"spin\""));
	free(text);
}
END_TEST

/*
 * --throughput without the module: not available, and why, in the table
 * and the JSON; nothing else of the run changes. (The measurement itself
 * needs a module with the shared area: the VM's kernel engine.)
 */
START_TEST(throughput_without_the_area_says_not_available)
{
	char *text;

	configure("spin", 1);
	run.cfg.throughput = 64;
	ck_assert_int_eq(bench_run_all(&run, false), 0);
	ck_assert_int_eq(bench_throughput_run(&run.cfg, &run.tp), 0);
	ck_assert(!run.tp.available);
	ck_assert_uint_eq(run.tp.records, 64);
	ck_assert_ptr_nonnull(strstr(run.tp.reason, "/nonexistent/gpuar"));
	text = table_of(&run);
	ck_assert_ptr_nonnull(strstr(text, "throughput: not available: kernel engine: "));
	free(text);
	text = json_of(&run);
	ck_assert_ptr_nonnull(strstr(text, "\"throughput\": {\"records_per_round\": 64, "
					  "\"status\": \"not available\", \"reason\": "));
	free(text);
	/* Not asked for: no section, no key. */
	run.cfg.throughput = 0;
	ck_assert_int_eq(bench_throughput_run(&run.cfg, &run.tp), 0);
	text = table_of(&run);
	ck_assert_ptr_null(strstr(text, "throughput"));
	free(text);
}
END_TEST

START_TEST(missing_module_skips_with_reason)
{
	configure("kport-read,kport-epoll,kport-uring,fence-vgem,lib-reap,"
		  "kport-epoll-imminent,kport-uring-imminent", 1);
	ck_assert_uint_eq(run.results, 7);
	for (unsigned int i = 0; i < run.results; i++) {
		ck_assert(run.result[i].skipped);
		ck_assert_ptr_nonnull(strstr(run.result[i].reason, "/nonexistent/gpuar"));
	}
	ck_assert_int_eq(bench_run_all(&run, false), 0);
	for (unsigned int i = 0; i < run.results; i++) {
		ck_assert_uint_eq(run.result[i].reps, 0);
		ck_assert_str_eq(bench_result_status(&run, &run.result[i]), "skipped");
	}
}
END_TEST

START_TEST(plans_are_reported_per_strategy)
{
	configure("spin,sleep-poll,oracle,user-predict", 1);
	ck_assert_str_eq(run.result[0].plan, "spin");
	ck_assert_str_eq(run.result[1].plan, "sleep-poll:interval_us=50");
	ck_assert_str_eq(run.result[2].plan, "oracle:margin_us=2000");
	ck_assert_str_eq(run.result[3].plan, BENCH_DEFAULT_PLAN);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bench_run");
	TCase *tc = tcase_create("run");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, bench_strategies_complete_every_wait);
	tcase_add_test(tc, streams_complete_every_wait);
	tcase_add_test(tc, record_strategies_split_detection_from_hand_back);
	tcase_add_test(tc, reactor_and_user_imminent_complete_and_count);
	tcase_add_test(tc, syscalls_are_counted_per_strategy);
	tcase_add_test(tc, throughput_without_the_area_says_not_available);
	tcase_add_test(tc, missing_module_skips_with_reason);
	tcase_add_test(tc, plans_are_reported_per_strategy);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
