// SPDX-License-Identifier: MIT
/*
 * The claim slice (struct gpuar_port_options.claim_slice_us): on a port
 * with imminent readiness, one gpuar_port_process() call watches its
 * claimed words for a slice, not a whole lease, so an event loop serves
 * its other fds meanwhile; the claim persists, the user engine's fd stays
 * readable while it is unfinished, the next call resumes watching without
 * claiming again, and a store made between calls is seen by a later one.
 *
 * The lease is long (100 ms past the predicted completion) and the store
 * never comes on its own: a call that watched for the whole lease would
 * take 100 ms or more; a slice is tens of microseconds. The bound asserted
 * (half the lease) is the feature's, not a performance figure.
 */
#include <gpuar/gpuar.h>

#include "engine_fixture.h"
#include "trained_port.h"
#include "unit_tap.h"

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>

#define PLAN "flag:park_us=1000,backstop_us=1000000" \
	"+predict:margin_us=20000,min_sleep_us=20,max_sleep_us=500000,window=4"
#define WORK_NS (50 * MS)
#define LEASE_US 100000

static struct gpuar_port_stats stats_of(struct gpuar_port *port)
{
	struct gpuar_port_stats st = { .size = sizeof(st) };

	ck_assert_int_eq(gpuar_port_stats(port, &st), 0);
	return st;
}

static bool fd_ready(struct gpuar_port *port, int timeout_ms)
{
	struct pollfd p = { .fd = gpuar_port_fd(port), .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1;
}

/* One claimed wait whose store comes only when the test makes it. */
static void slice_holds_the_claim(uint32_t claim_slice_us)
{
	struct gpuar_port_options o = {
		.engine = GPUAR_ENGINE_USER,
		.flags = GPUAR_PORT_IMMINENT | GPUAR_PORT_STRICT,
		.busy_read_us = LEASE_US,
		.claim_slice_us = claim_slice_us,
	};
	struct gpuar_record rec;
	struct trained_port f;
	uint64_t t0, took;
	int calls = 0, n;

	trained_port_open(&f, &o, PLAN, 7);
	trained_port_train(&f, 3, WORK_NS);
	trained_port_submit(&f, 0);
	/* Until the early wake's readiness brings the claim. */
	while (stats_of(f.port).claims == 0) {
		ck_assert(fd_ready(f.port, 2000));
		t0 = gpuar_now_ns();
		n = gpuar_port_process(f.port);
		took = gpuar_now_ns() - t0;
		ck_assert_int_eq(n, 0);
		ck_assert_int_lt(++calls, 1000);
	}
	/* The claiming call came back within a slice, not the lease. */
	ck_assert_uint_lt(took, LEASE_US * 1000ULL / 2);
	ck_assert_uint_eq(stats_of(f.port).lease_expiries, 0);
	/* Unfinished: the fd stays ready, and the next calls resume it. */
	for (int i = 0; i < 3; i++) {
		ck_assert(fd_ready(f.port, 0));
		t0 = gpuar_now_ns();
		ck_assert_int_eq(gpuar_port_process(f.port), 0);
		ck_assert_uint_lt(gpuar_now_ns() - t0, LEASE_US * 1000ULL / 2);
	}
	ck_assert_uint_eq(stats_of(f.port).claims, 1);
	ck_assert_int_eq(gpuar_port_reap(f.port, &rec, 1, 0), -EAGAIN);
	ck_assert_uint_eq(stats_of(f.port).claims, 1);
	/* The store lands between calls: a later call sees it. */
	__atomic_store_n(f.word, f.seq, __ATOMIC_RELEASE);
	ck_assert(fd_ready(f.port, 0));
	ck_assert_int_eq(gpuar_port_process(f.port), 1);
	ck_assert_int_eq(gpuar_port_reap(f.port, &rec, 1, 0), 1);
	ck_assert_uint_eq(rec.user_data, f.seq);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_int_eq(rec.status, 0);
	/*
	 * The next call that finds no record lets the reached claim go:
	 * nothing held, nothing queued, the fd is quiet again.
	 */
	ck_assert_int_eq(gpuar_port_process(f.port), 0);
	ck_assert(!fd_ready(f.port, 0));
	ck_assert_uint_eq(stats_of(f.port).claims, 1);
	trained_port_close(&f);
}

START_TEST(an_explicit_slice_returns_and_keeps_the_claim)
{
	slice_holds_the_claim(50);
}
END_TEST

START_TEST(the_user_engine_slices_by_default)
{
	slice_holds_the_claim(0);
}
END_TEST

START_TEST(a_slice_above_the_lease_cap_is_refused)
{
	struct gpuar_port_options o = {
		.engine = GPUAR_ENGINE_USER,
		.claim_slice_us = GPUAR_BUSY_READ_MAX_US + 1,
	};
	struct gpuar_port *port = NULL;
	struct gpuar_error err;

	ck_assert_int_eq(gpuar_port_open(&port, &o, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_ARGUMENT);
	o.claim_slice_us = GPUAR_CLAIM_SLICE_OFF;
	ck_assert_int_eq(gpuar_port_open(&port, &o, &err), 0);
	gpuar_port_close(port);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_claim_slice");
	TCase *t = tcase_create("slice");
	struct unit_skips skips = { 0 };

	tcase_set_timeout(t, 30);
	tcase_add_test(t, an_explicit_slice_returns_and_keeps_the_claim);
	tcase_add_test(t, the_user_engine_slices_by_default);
	tcase_add_test(t, a_slice_above_the_lease_cap_is_refused);
	suite_add_tcase(s, t);
	return unit_run_tap(s, &skips);
}
