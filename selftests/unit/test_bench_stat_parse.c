// SPDX-License-Identifier: MIT
/*
 * gpuar-stat's parsers of the module's debugfs listing and a port's
 * fdinfo, from fixture text in the layout kmod/stats.c prints.
 */
#include "stat_parse.h"
#include "unit.h"

static const char debugfs_two_ports[] =
	"port 7\n"
	"port_id:\t7\n"
	"record_version:\t1\n"
	"creator:\t4242\n"
	"pending:\t1\n"
	"queued:\t0\n"
	"lines:\t1\n"
	"points:\t2\n"
	"submitted:\t2001\n"
	"immediate:\t3\n"
	"exact:\t1900\n"
	"late:\t97\n"
	"fence:\t0\n"
	"timeout:\t0\n"
	"cancelled:\t0\n"
	"checks:\t4300\n"
	"sleeps:\t1990\n"
	"timer_fires:\t4100\n"
	"busy_read_checks:\t17\n"
	"wakeup_latency_ns:\t52000\n"
	"point 0x1 samples=2000 predicted_ns=987000 immediate=3 exact=1900 late=97 fence=0 timeout=0 cancelled=0\n"
	"point 0xdeadbeef samples=0 predicted_ns=0 immediate=0 exact=0 late=0 fence=0 timeout=0 cancelled=0\n"
	"\n"
	"port 12\n"
	"port_id:\t12\n"
	"record_version:\t1\n"
	"creator:\t4243\n"
	"submitted:\t5\n"
	"fence:\t5\n"
	"some_future_counter:\t99\n"
	"\n";

START_TEST(debugfs_ports_and_counters)
{
	struct stat_snapshot s = { 0 };

	ck_assert_int_eq(stat_parse_debugfs(debugfs_two_ports, &s), 0);
	ck_assert_uint_eq(s.nport, 2);
	ck_assert_str_eq(s.port[0].id, "7");
	ck_assert_str_eq(s.port[1].id, "12");
	ck_assert_int_eq(s.port[0].pid, 4242);
	ck_assert_uint_eq(s.port[0].record_version, 1);
	ck_assert_uint_eq(s.port[0].pending, 1);
	ck_assert_uint_eq(s.port[0].points, 2);
	ck_assert_uint_eq(s.port[0].submitted, 2001);
	ck_assert_uint_eq(s.port[0].outcomes[GPUAR_OUTCOME_EXACT], 1900);
	ck_assert_uint_eq(s.port[0].outcomes[GPUAR_OUTCOME_LATE], 97);
	ck_assert_uint_eq(s.port[0].outcomes[GPUAR_OUTCOME_IMMEDIATE], 3);
	ck_assert_uint_eq(s.port[0].checks, 4300);
	ck_assert_uint_eq(s.port[0].busy_read_checks, 17);
	ck_assert_uint_eq(s.port[0].wakeup_latency_ns, 52000);
	ck_assert_uint_eq(stat_port_ended(&s.port[0]), 2000);
	ck_assert_uint_eq(s.port[1].outcomes[GPUAR_OUTCOME_FENCE], 5);
	ck_assert_int_eq(s.port[1].pid, 4243);
	stat_snapshot_free(&s);
}
END_TEST

START_TEST(debugfs_points_with_hex_keys)
{
	struct stat_snapshot s = { 0 };

	ck_assert_int_eq(stat_parse_debugfs(debugfs_two_ports, &s), 0);
	ck_assert_uint_eq(s.port[0].npt, 2);
	ck_assert(s.port[0].has_points);
	ck_assert_uint_eq(s.port[0].pt[0].point, 1);
	ck_assert_uint_eq(s.port[0].pt[0].samples, 2000);
	ck_assert_uint_eq(s.port[0].pt[0].predicted_ns, 987000);
	ck_assert_uint_eq(s.port[0].pt[0].outcomes[GPUAR_OUTCOME_EXACT], 1900);
	ck_assert_uint_eq(s.port[0].pt[0].outcomes[GPUAR_OUTCOME_LATE], 97);
	ck_assert_uint_eq(stat_point_ended(&s.port[0].pt[0]), 2000);
	ck_assert_uint_eq(s.port[0].pt[1].point, 0xdeadbeef);
	ck_assert_uint_eq(s.port[0].pt[1].predicted_ns, 0);
	ck_assert_uint_eq(s.port[1].npt, 0);
	stat_snapshot_free(&s);
}
END_TEST

START_TEST(debugfs_empty_listing_has_no_ports)
{
	struct stat_snapshot s = { 0 };

	ck_assert_int_eq(stat_parse_debugfs("", &s), 0);
	ck_assert_uint_eq(s.nport, 0);
}
END_TEST

START_TEST(debugfs_bad_point_line_is_refused)
{
	struct stat_snapshot s = { 0 };

	ck_assert_int_eq(stat_parse_debugfs("port 1\npoint zz samples=1\n", &s), -1);
	stat_snapshot_free(&s);
	ck_assert_int_eq(stat_parse_debugfs("port 1\npoint 0x1 samples=\n", &s), -1);
	stat_snapshot_free(&s);
}
END_TEST

START_TEST(fdinfo_port_after_the_kernels_own_lines)
{
	static const char text[] =
		"pos:\t0\n"
		"flags:\t02000002\n"
		"mnt_id:\t15\n"
		"ino:\t1057\n"
		"port_id:\t7\n"
		"record_version:\t1\n"
		"creator:\t77\n"
		"pending:\t0\n"
		"submitted:\t10\n"
		"exact:\t9\n"
		"late:\t1\n"
		"checks:\t25\n"
		"wakeup_latency_ns:\t61000\n";
	struct stat_port p = { 0 };

	ck_assert_int_eq(stat_parse_fdinfo(text, &p), 0);
	ck_assert_uint_eq(p.submitted, 10);
	ck_assert_uint_eq(p.outcomes[GPUAR_OUTCOME_EXACT], 9);
	ck_assert_uint_eq(p.checks, 25);
	ck_assert_uint_eq(p.wakeup_latency_ns, 61000);
	ck_assert_int_eq(p.pid, 77);
	ck_assert(!p.has_points);
}
END_TEST

START_TEST(fdinfo_of_another_file_is_not_a_port)
{
	struct stat_port p = { 0 };

	ck_assert_int_eq(stat_parse_fdinfo("pos:\t0\nflags:\t02\nmnt_id:\t15\n", &p), -1);
}
END_TEST

START_TEST(outcome_names_follow_the_abi)
{
	ck_assert_str_eq(stat_outcome_name(GPUAR_OUTCOME_IMMEDIATE), "immediate");
	ck_assert_str_eq(stat_outcome_name(GPUAR_OUTCOME_CANCELLED), "cancelled");
	ck_assert_ptr_null(stat_outcome_name(0));
	ck_assert_ptr_null(stat_outcome_name(GPUAR_OUTCOME_COUNT));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bench_stat_parse");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, debugfs_ports_and_counters);
	tcase_add_test(tc, debugfs_points_with_hex_keys);
	tcase_add_test(tc, debugfs_empty_listing_has_no_ports);
	tcase_add_test(tc, debugfs_bad_point_line_is_refused);
	tcase_add_test(tc, fdinfo_port_after_the_kernels_own_lines);
	tcase_add_test(tc, fdinfo_of_another_file_is_not_a_port);
	tcase_add_test(tc, outcome_names_follow_the_abi);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return unit_run(suite());
}
