// SPDX-License-Identifier: MIT
/* gpuar-bench's /proc/stat parsing, from fixture text. */
#include <stdio.h>
#include <string.h>

#include "bench_procstat.h"
#include "unit.h"

/* As a 6.1 kernel prints it (2 CPUs). */
static const char fixture[] =
	"cpu  10132153 290696 3084719 46828483 16683 0 25195 0 175628 0\n"
	"cpu0 1393280 32966 572056 13343292 6130 0 17875 0 23933 0\n"
	"cpu1 1335040 31982 520542 13332981 5440 0 3180 0 21787 0\n"
	"intr 1997430227 24 9 0 0 0 0 0 0 1 0 0 0 0 0 0\n"
	"ctxt 3346498563\n"
	"btime 1700000000\n"
	"processes 1234567\n"
	"procs_running 2\n"
	"procs_blocked 0\n"
	"softirq 123 4 5 6 7 8 9 10 11 12 13\n";

START_TEST(aggregate_line_columns_are_read)
{
	struct bench_procstat s;

	ck_assert_int_eq(bench_procstat_parse(fixture, &s), 0);
	ck_assert_uint_eq(s.user, 10132153);
	ck_assert_uint_eq(s.nice, 290696);
	ck_assert_uint_eq(s.system, 3084719);
	ck_assert_uint_eq(s.idle, 46828483);
	ck_assert_uint_eq(s.iowait, 16683);
	ck_assert_uint_eq(s.irq, 0);
	ck_assert_uint_eq(s.softirq, 25195);
	ck_assert_uint_eq(s.steal, 0);
}
END_TEST

START_TEST(cpu_lines_are_counted_not_summed_again)
{
	struct bench_procstat s;

	ck_assert_int_eq(bench_procstat_parse(fixture, &s), 0);
	ck_assert_uint_eq(s.cpus, 2);
	/* cpu0's idle must not overwrite the aggregate. */
	ck_assert_uint_eq(s.idle, 46828483);
}
END_TEST

START_TEST(idle_counts_iowait)
{
	struct bench_procstat s;

	ck_assert_int_eq(bench_procstat_parse(fixture, &s), 0);
	ck_assert_uint_eq(bench_procstat_idle(&s), 46828483 + 16683);
}
END_TEST

START_TEST(old_kernels_with_four_columns_parse)
{
	struct bench_procstat s;

	ck_assert_int_eq(bench_procstat_parse("cpu  1 2 3 4\ncpu0 1 2 3 4\n", &s), 0);
	ck_assert_uint_eq(s.idle, 4);
	ck_assert_uint_eq(s.iowait, 0);
	ck_assert_uint_eq(s.steal, 0);
	ck_assert_uint_eq(s.cpus, 1);
}
END_TEST

START_TEST(missing_aggregate_line_is_refused)
{
	struct bench_procstat s;

	ck_assert_int_eq(bench_procstat_parse("cpu0 1 2 3 4\nintr 5\n", &s), -1);
	ck_assert_int_eq(bench_procstat_parse("", &s), -1);
}
END_TEST

START_TEST(short_aggregate_line_is_refused)
{
	struct bench_procstat s;

	ck_assert_int_eq(bench_procstat_parse("cpu  1 2 3\n", &s), -1);
	ck_assert_int_eq(bench_procstat_parse("cpu  1 2 x 4\n", &s), -1);
}
END_TEST

START_TEST(many_cpus_are_counted)
{
	char text[8192];
	size_t len = 0;
	struct bench_procstat s;

	len += (size_t)snprintf(text + len, sizeof(text) - len, "cpu  1 1 1 1 1 1 1 1 1 1\n");
	for (int i = 0; i < 128; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"cpu%d 0 0 0 1 0 0 0 0 0 0\n", i);
	ck_assert_int_eq(bench_procstat_parse(text, &s), 0);
	ck_assert_uint_eq(s.cpus, 128);
}
END_TEST

START_TEST(the_running_kernel_parses)
{
	struct bench_procstat s;

	ck_assert_int_eq(bench_procstat_read(&s), 0);
	ck_assert_uint_ge(s.cpus, 1);
	ck_assert_uint_gt(s.user + s.system + s.idle, 0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bench_procstat");
	TCase *tc = tcase_create("procstat");

	tcase_add_test(tc, aggregate_line_columns_are_read);
	tcase_add_test(tc, cpu_lines_are_counted_not_summed_again);
	tcase_add_test(tc, idle_counts_iowait);
	tcase_add_test(tc, old_kernels_with_four_columns_parse);
	tcase_add_test(tc, missing_aggregate_line_is_refused);
	tcase_add_test(tc, short_aggregate_line_is_refused);
	tcase_add_test(tc, many_cpus_are_counted);
	tcase_add_test(tc, the_running_kernel_parses);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
