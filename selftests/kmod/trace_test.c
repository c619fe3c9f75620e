// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The module's tracepoints: gpuar:gpuar_submit, gpuar:gpuar_check and
 * gpuar:gpuar_complete fire for a word wait and carry its user data, read
 * back through tracefs (the guest mounts it at /sys/kernel/tracing).
 * cancel_test.c reads gpuar:gpuar_cancel.
 *
 * A kernel built without event tracing has no events/ directory: the
 * tests skip there (the debug kernel's tinyconfig base may lack it). Where
 * events/ exists, a missing events/gpuar/ is a failure.
 */
#include "kselftest_harness.h"

#include "device_thread.h"
#include "port_harness.h"
#include "trace_fixture.h"

FIXTURE(traced)
{
	int port;
	__u64 *lines;
	__u32 line;
};

FIXTURE_SETUP(traced)
{
	if (access(TRACEFS "/events", F_OK))
		SKIP(return, "this kernel has no event tracing (no %s/events)",
		     TRACEFS);
	ASSERT_EQ(0, access(TRACEFS "/events/gpuar/enable", F_OK)) {
		TH_LOG("event tracing is on, but gpuar's events are missing");
	}
	ASSERT_EQ(0, write_file(TRACEFS "/trace", ""));
	ASSERT_EQ(0, write_file(TRACEFS "/events/gpuar/enable", "1"));
	self->port = t_port_open(GPUAR_PORT_CLOEXEC);
	ASSERT_LE(0, self->port);
	self->lines = lines_map(1);
	ASSERT_NE(NULL, self->lines);
	ASSERT_EQ(0, line_register(self->port, self->lines, &self->line));
}

FIXTURE_TEARDOWN(traced)
{
	if (access(TRACEFS "/events/gpuar/enable", F_OK))
		return;
	write_file(TRACEFS "/events/gpuar/enable", "0");
	close(self->port);
	lines_unmap(self->lines, 1);
}

/* A wait the device completes 20 ms later: submit, checks, completion. */
TEST_F(traced, word_wait_traces_submit_check_complete)
{
	struct device_store d;
	struct gpuar_record r;
	char *trace;

	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(self->line, 0, 1, 1, 0x7ace1,
					   plan_flag(PLAN_PARK_NS,
						     PLAN_BACKSTOP_NS))));
	ASSERT_EQ(0, device_store_start(&d, self->lines, 1, 20));
	device_store_join(&d);
	ASSERT_ONE_RECORD(self->port, r);
	ASSERT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);

	trace = read_trace();
	ASSERT_NE(NULL, trace);
	EXPECT_TRUE(trace_has(trace, "gpuar_submit:", "user_data=0x7ace1"));
	EXPECT_TRUE(trace_has(trace, "gpuar_check:", "user_data=0x7ace1"));
	EXPECT_TRUE(trace_has(trace, "gpuar_complete:", "user_data=0x7ace1"));
	/* outcome=2 is GPUAR_OUTCOME_EXACT, as in the record. */
	EXPECT_TRUE(trace_has(trace, "gpuar_complete:", "outcome=2"));
	free(trace);
}

/* Disabled events record nothing: the tracepoints cost only when on. */
TEST_F(traced, disabled_events_record_nothing)
{
	struct gpuar_record r;
	char *trace;

	ASSERT_EQ(0, write_file(TRACEFS "/events/gpuar/enable", "0"));
	word_store(self->lines, 1);
	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(self->line, 0, 1, 1, 0x7ace2,
					   plan_poll())));
	ASSERT_ONE_RECORD(self->port, r);
	ASSERT_EQ(GPUAR_OUTCOME_IMMEDIATE, r.outcome);

	trace = read_trace();
	ASSERT_NE(NULL, trace);
	EXPECT_FALSE(trace_has(trace, "gpuar_", "user_data=0x7ace2"));
	free(trace);
}

TEST_HARNESS_MAIN
