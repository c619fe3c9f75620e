// SPDX-License-Identifier: MIT
/*
 * gpuar-bench --strategies service: its summaries, its table and its
 * JSON (bench_service_report.c), from results made up here; and the
 * options that select it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_options.h"
#include "bench_service.h"
#include "unit_tap.h"

static struct bench_service_result made_up(void)
{
	struct bench_service_result r = {
		.engines = 2,
		.cfg = { .messages = 2000, .work_ns = 1000000, .idle_after_s = 3 },
	};
	struct bench_service_engine *u = &r.eng[0], *k = &r.eng[1];

	u->engine = "user";
	u->off = (struct bench_service_mode){ .ran = true, .rtt_n = 2000,
		.rtt_p50_us = 50, .rtt_p99_us = 100, .gpu_n = 900,
		.gpu_p50_us = 40, .gpu_p99_us = 90 };
	u->on = u->off;
	u->on.rtt_p50_us = 55;
	u->on.rtt_p99_us = 150;
	u->on.claims = 880;
	u->on_lease = u->on;
	u->on_lease.rtt_p50_us = 600;
	u->idle = (struct bench_service_idle){ .ran = true, .first_s_pct = 20.5,
		.after_pct = 0.25, .after_s = 3, .checks_after = 300,
		.resubmits = 3 };
	k->engine = "kernel";
	strcpy(k->off.reason, "no \"/dev/gpuar\"");
	strcpy(k->on.reason, "no /dev/gpuar");
	strcpy(k->on_lease.reason, "no /dev/gpuar");
	strcpy(k->idle.reason, "no /dev/gpuar");
	return r;
}

static char *render(const struct bench_service_result *r, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	if (json)
		ck_assert_int_eq(bench_service_write_json(f, r), 0);
	else
		bench_service_print_table(f, r);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

START_TEST(percentiles_and_ratios)
{
	double v[100], p50, p99;
	struct bench_service_result r = made_up();

	for (int i = 0; i < 100; i++)
		v[i] = 100 - i;
	bench_service_percentiles(v, 100, &p50, &p99);
	ck_assert(p50 >= 50 && p50 <= 51);
	ck_assert(p99 >= 99 && p99 <= 100);
	bench_service_percentiles(v, 0, &p50, &p99);
	ck_assert(p50 == 0 && p99 == 0);
	ck_assert(bench_service_ratio(&r.eng[0].off, &r.eng[0].on, false) == 1.1);
	ck_assert(bench_service_ratio(&r.eng[0].off, &r.eng[0].on, true) == 1.5);
	ck_assert(bench_service_ratio(&r.eng[1].off, &r.eng[1].on, false) == 0);
}
END_TEST

START_TEST(json_has_every_field)
{
	struct bench_service_result r = made_up();
	char *j = render(&r, true);
	const char *want[] = {
		"\"schema\": \"" BENCH_SERVICE_JSON_SCHEMA "\"",
		"\"messages\": 2000", "\"work_us\": 1000.000",
		"\"engine\": \"user\"", "\"imminent_off\": {\"ran\": true",
		"\"imminent_on\": {\"ran\": true", "\"rtt_p50_us\": 55.000",
		"\"rtt_p99_us\": 150.000", "\"gpu_p50_us\": 40.000",
		"\"claims\": 880", "\"rtt_p50_ratio\": 1.1000",
		"\"rtt_p99_ratio\": 1.5000", "\"whole_lease_rtt_p50_ratio\": 12.0000",
		"\"imminent_on_whole_lease\": {\"ran\": true", "\"first_second_cpu_pct\": 20.500",
		"\"after_cpu_pct\": 0.250", "\"checks_after\": 300",
		"\"resubmits\": 3", "\"engine\": \"kernel\"",
		"\"reason\": \"no /dev/gpuar\"",
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(strstr(j, want[i]), "missing %s in\n%s", want[i], j);
	/* Quotes in a reason are dropped, so the document stays JSON. */
	ck_assert_ptr_null(strstr(j, "\\\""));
	ck_assert_ptr_null(strstr(j, "no \"/dev"));
	free(j);
}
END_TEST

START_TEST(table_states_ratio_and_idle_cost)
{
	struct bench_service_result r = made_up();
	char *t = render(&r, false);

	ck_assert_msg(strstr(t, "rtt on/off: p50 1.10x, p99 1.50x"), "%s", t);
	ck_assert_msg(strstr(t, "rtt on,lease/off: p50 12.00x"), "%s", t);
	ck_assert_msg(strstr(t, "0.25% over the 3.0 s after"), "%s", t);
	ck_assert_msg(strstr(t, "kernel  off       skipped:"), "%s", t);
	free(t);
}
END_TEST

START_TEST(options_select_the_service_mode)
{
	char *argv[] = { "gpuar-bench", "--strategies", "service", "--waits", "300",
			 "--work-us", "500", "--seconds", "2", NULL };
	struct bench_options o;

	ck_assert_int_eq(bench_options_parse(9, argv, &o), 0);
	ck_assert(o.service);
	ck_assert_uint_eq(o.service_cfg.messages, 300);
	ck_assert_uint_eq(o.service_cfg.work_ns, 500000);
	ck_assert(o.service_cfg.idle_after_s == 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bench_service");
	TCase *t = tcase_create("report");
	struct unit_skips skips = { 0 };

	tcase_add_test(t, percentiles_and_ratios);
	tcase_add_test(t, json_has_every_field);
	tcase_add_test(t, table_states_ratio_and_idle_cost);
	tcase_add_test(t, options_select_the_service_mode);
	suite_add_tcase(s, t);
	return unit_run_tap(s, &skips);
}
