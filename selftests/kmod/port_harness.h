/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The kselftest fixture most suites share: a port (close-on-exec, blocking)
 * and one page of anonymous line memory whose first line is registered.
 * Include after kselftest_harness.h.
 */
#ifndef GPUAR_SELFTEST_PORT_HARNESS_H
#define GPUAR_SELFTEST_PORT_HARNESS_H

#include "port_fixture.h"

/* Long enough for TCG's stalls; a record that is owed arrives well within. */
#define RECORD_TIMEOUT_MS 5000

FIXTURE(port)
{
	int port;
	__u64 *lines;		/* one page: 64 lines */
	__u32 line;		/* id of line 0 */
};

FIXTURE_SETUP(port)
{
	self->port = t_port_open(GPUAR_PORT_CLOEXEC);
	ASSERT_LE(0, self->port) {
		TH_LOG("port: %s", strerror(errno));
	}
	self->lines = lines_map(1);
	ASSERT_NE(NULL, self->lines);
	ASSERT_EQ(0, line_register(self->port, self->lines, &self->line)) {
		TH_LOG("LINE_REGISTER: %s", strerror(errno));
	}
}

FIXTURE_TEARDOWN(port)
{
	close(self->port);
	lines_unmap(self->lines, 1);
}

/* Read one record into @rec (a struct gpuar_record) or fail the test. */
#define ASSERT_ONE_RECORD(port, rec) \
	ASSERT_EQ(1, collect_records((port), &(rec), 1, RECORD_TIMEOUT_MS))

#endif /* GPUAR_SELFTEST_PORT_HARNESS_H */
