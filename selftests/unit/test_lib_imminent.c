// SPDX-License-Identifier: MIT
/*
 * Imminent readiness (GPUAR_PORT_IMMINENT). The user engine's path runs
 * here in full: the flag, the fd turning readable at the early wake,
 * the claim and its entries, a lease that runs out, the records; the
 * kernel engine's choice when the module lacks the feature is checked
 * through the decision both engines' open takes (gpuar_imminent_check),
 * since no module runs on the host. Machines are noisy: the work is
 * 20-40 ms and the margins are wide; the tests assert outcomes and
 * counters, not latencies.
 */
#include <gpuar/gpuar.h>

#include "port.h"
#include "trained_port.h"
#include "unit_tap.h"

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>

#define MS 1000000ULL
/* A 3 ms margin: the early wake comes well before the store. */
#define PLAN "flag:park_us=1000,backstop_us=1000000" \
	"+predict:margin_us=3000,min_sleep_us=20,max_sleep_us=500000,window=4"
#define WORK_NS (20 * MS)
#define TRAINING 3

static int open_user(struct gpuar_port **p, uint32_t flags,
		     struct gpuar_error *err)
{
	struct gpuar_port_options o = {
		.engine = GPUAR_ENGINE_USER,
		.flags = flags,
		/* A lease (the busy-read budget) as long as the wait. */
		.busy_read_us = 20000,
	};

	return gpuar_port_open(p, &o, err);
}

static void setup(struct trained_port *f)
{
	struct gpuar_port_options o = {
		.engine = GPUAR_ENGINE_USER,
		.flags = GPUAR_PORT_IMMINENT,
		.busy_read_us = 20000,	/* a lease as long as the wait */
	};

	trained_port_open(f, &o, PLAN, 5);
	ck_assert(gpuar_port_imminent(f->port));
}

static struct gpuar_port_stats stats(struct gpuar_port *p)
{
	struct gpuar_port_stats st = { .size = sizeof(st) };

	ck_assert_int_eq(gpuar_port_stats(p, &st), 0);
	return st;
}

static bool fd_readable(struct gpuar_port *p, int timeout_ms)
{
	struct pollfd pfd = { .fd = gpuar_port_fd(p), .events = POLLIN | POLLPRI };

	return poll(&pfd, 1, timeout_ms) == 1;
}

START_TEST(the_flag_is_taken_and_reported)
{
	struct gpuar_port *p;
	struct gpuar_error err;

	ck_assert_int_eq(open_user(&p, 0, &err), 0);
	ck_assert(!gpuar_port_imminent(p));
	gpuar_port_close(p);
	ck_assert_int_eq(open_user(&p, GPUAR_PORT_IMMINENT, &err), 0);
	ck_assert_uint_eq(err.code, GPUAR_OK);
	ck_assert(gpuar_port_imminent(p));
	gpuar_port_close(p);
	ck_assert(!gpuar_port_imminent(NULL));
}
END_TEST

START_TEST(a_watcher_port_runs_without_it)
{
	struct gpuar_port *p = NULL;
	struct gpuar_error err;

	ck_assert_int_eq(open_user(&p, GPUAR_PORT_IMMINENT | GPUAR_PORT_WATCHER,
				   &err), 0);
	ck_assert_uint_eq(err.code, GPUAR_W_FEATURE_FALLBACK);
	ck_assert(!gpuar_port_imminent(p));
	gpuar_port_close(p);
	ck_assert_int_eq(open_user(&p, GPUAR_PORT_IMMINENT | GPUAR_PORT_WATCHER |
				   GPUAR_PORT_STRICT, &err), -EOPNOTSUPP);
	ck_assert_uint_eq(err.code, GPUAR_E_FEATURE_UNAVAILABLE);
	ck_assert_ptr_null(p);
}
END_TEST

/* The kernel engine's open, for a module with and without the feature. */
START_TEST(a_module_without_the_feature_falls_back_or_refuses)
{
	const char *lacking = "the gpuar module lacks GPUAR_FEATURE_IMMINENT";
	struct gpuar_error err = { 0 };
	bool on = true;

	ck_assert_int_eq(gpuar_imminent_check(0, lacking, &on, &err), 0);
	ck_assert(!on);
	ck_assert_uint_eq(err.code, GPUAR_OK);
	ck_assert_int_eq(gpuar_imminent_check(GPUAR_PORT_IMMINENT, NULL, &on,
					      &err), 0);
	ck_assert(on);
	ck_assert_uint_eq(err.code, GPUAR_OK);
	ck_assert_int_eq(gpuar_imminent_check(GPUAR_PORT_IMMINENT, lacking, &on,
					      &err), 0);
	ck_assert(!on);
	ck_assert_uint_eq(err.code, GPUAR_W_FEATURE_FALLBACK);
	ck_assert(gpuar_code_is_warning(err.code));
	ck_assert_ptr_nonnull(strstr(err.message, "GPUAR_FEATURE_IMMINENT"));
	ck_assert_int_eq(gpuar_imminent_check(GPUAR_PORT_IMMINENT |
					      GPUAR_PORT_STRICT, lacking, &on,
					      &err), -EOPNOTSUPP);
	ck_assert(!on);
	ck_assert_uint_eq(err.code, GPUAR_E_FEATURE_UNAVAILABLE);
	ck_assert_int_eq(err.sys_errno, EOPNOTSUPP);
}
END_TEST

START_TEST(bad_claims_are_refused_and_change_nothing)
{
	struct gpuar_claim_entry e[2];
	struct gpuar_port_stats before, after;
	struct gpuar_port *plain;
	struct gpuar_error err;
	struct trained_port f;

	setup(&f);
	trained_port_train(&f, TRAINING, WORK_NS);
	trained_port_submit(&f, WORK_NS);
	before = stats(f.port);
	ck_assert_int_eq(gpuar_port_claim(NULL, e, 2, 0, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_ARGUMENT);
	ck_assert_int_eq(gpuar_port_claim(f.port, NULL, 2, 0, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_ARGUMENT);
	ck_assert_int_eq(gpuar_port_claim(f.port, e, 0, 0, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_ARGUMENT);
	ck_assert_int_eq(gpuar_port_claim(f.port, e, 2, 101 * MS, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_ARGUMENT);
	ck_assert_ptr_nonnull(strstr(err.message, "lease_ns"));
	after = stats(f.port);
	ck_assert_uint_eq(after.checks, before.checks);
	ck_assert_uint_eq(after.pending, 1);

	/* A port that did not opt in has nothing to claim, ever. */
	ck_assert_int_eq(open_user(&plain, 0, &err), 0);
	ck_assert_int_eq(gpuar_port_claim(plain, e, 2, 0, &err), -EOPNOTSUPP);
	ck_assert_uint_eq(err.code, GPUAR_E_FEATURE_UNAVAILABLE);
	gpuar_port_close(plain);
	trained_port_close(&f);
}
END_TEST

/*
 * The event loop's path: the fd turns readable before the store (the
 * early wake), gpuar_port_process() claims the wait and watches its word
 * until the store, and a non-blocking reap returns an EXACT record.
 */
START_TEST(an_event_loop_gets_the_store_through_the_claim)
{
	struct gpuar_port_stats before, after;
	struct gpuar_record rec;
	struct trained_port f;
	uint64_t stored;

	setup(&f);
	trained_port_train(&f, TRAINING, WORK_NS);
	/*
	 * A loop kept off its CPU past the store (a busy machine) makes
	 * its claim's first check find the work done (LATE), a producer
	 * kept off its CPU past the lease leaves the store to the timer:
	 * try again.
	 */
	for (int attempt = 0; attempt < 5; attempt++) {
		int n = 0;

		before = stats(f.port);
		trained_port_submit(&f, WORK_NS);
		ck_assert_int_eq(gpuar_port_reap(f.port, &rec, 1, 0), -EAGAIN);
		while (n == 0) {
			ck_assert(fd_readable(f.port, 2000));
			n = gpuar_port_process(f.port);
			ck_assert_int_ge(n, 0);
		}
		ck_assert_int_eq(n, 1);
		ck_assert_int_eq(gpuar_port_reap(f.port, &rec, 1, 0), 1);
		after = stats(f.port);
		ck_assert_uint_eq(rec.user_data, f.seq);
		ck_assert_uint_eq(rec.value, f.seq);
		ck_assert_int_eq(rec.status, 0);
		/* A lease that ran out before the store: the timer saw it. */
		if (rec.outcome == GPUAR_OUTCOME_EXACT &&
		    after.lease_expiries == before.lease_expiries)
			break;
	}
	stored = gpuar_soft_stored_at(f.prod, f.word, f.seq);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_uint_ge(rec.complete_ns, stored);
	/* Seen by the claimer's check, not the timer's park checks. */
	ck_assert_uint_ge(after.busy_read_checks, before.busy_read_checks + 1);
	ck_assert_uint_le(after.checks - before.checks, 4);
	/* Raised once (by the run the early readiness brought), claimed once. */
	ck_assert_uint_eq(after.imminent, before.imminent + 1);
	ck_assert_uint_eq(after.claims, before.claims + 1);
	trained_port_close(&f);
}
END_TEST

START_TEST(a_claim_names_the_wait_and_leases_it_once)
{
	struct gpuar_claim_entry e[4];
	struct gpuar_record rec;
	struct trained_port f;
	uint64_t now;
	int n;

	setup(&f);
	trained_port_train(&f, TRAINING, WORK_NS);
	trained_port_submit(&f, 0);	/* no store: the lease runs out */
	ck_assert_int_eq(gpuar_port_claim(f.port, e, 4, 0, NULL), 0);
	/* Imminent from the early wake on, when the fd turns readable. */
	for (;;) {
		now = gpuar_now_ns();
		n = gpuar_port_claim(f.port, e, 4, 2 * MS, NULL);
		if (n)
			break;
		ck_assert(fd_readable(f.port, 2000));
	}
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(e[0].user_data, f.seq);
	ck_assert_uint_eq(e[0].target, f.seq);
	ck_assert_uint_eq(e[0].addr, (uint64_t)(uintptr_t)gpuar_line_words(f.line));
	ck_assert_uint_eq(e[0].line, gpuar_line_id(f.line));
	ck_assert_uint_eq(e[0].slot, 0);
	/*
	 * The lease runs 2 ms past the predicted completion (the 3 ms
	 * margin and the wake-up latency after the claim), or past the
	 * claim if that is later: never less than 2 ms from the claim,
	 * never more than a prediction (about WORK_NS) beyond.
	 */
	ck_assert_uint_ge(e[0].lease_end_ns, now + 2 * MS);
	ck_assert_uint_le(e[0].lease_end_ns, gpuar_now_ns() + 2 * MS + 2 * WORK_NS);
	/* Claimed once: not offered again, during the lease or after. */
	ck_assert_int_eq(gpuar_port_claim(f.port, e, 4, 0, NULL), 0);
	ck_assert_int_eq(gpuar_port_reap(f.port, &rec, 1, 10 * MS), -ETIME);
	ck_assert_int_eq(gpuar_port_claim(f.port, e, 4, 0, NULL), 0);
	/* Past the lease the timer's park checks find the store. */
	gpuar_soft_store_at(f.prod, f.word, f.seq, gpuar_now_ns());
	rec.user_data = 0;
	ck_assert_int_eq(gpuar_port_reap(f.port, &rec, 1, 2000 * MS), 1);
	ck_assert_uint_eq(rec.user_data, f.seq);
	ck_assert_uint_eq(rec.value, f.seq);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	trained_port_close(&f);
}
END_TEST

/*
 * The imminent counters, with the module's meanings: a wait raised
 * imminent counts once (however often it is offered or found), a claim
 * counts the waits it hands out, a claim's lease that runs out counts
 * once; a wait done before its early wake is never raised. The user
 * engine has no check budget to stretch a timer firing.
 */
START_TEST(the_imminent_counters_count_as_the_module_does)
{
	struct gpuar_port_stats before, claimed, after;
	struct gpuar_claim_entry e[4];
	struct gpuar_record rec;
	struct trained_port f;
	int n;

	setup(&f);
	trained_port_train(&f, TRAINING, WORK_NS);
	before = stats(f.port);
	trained_port_submit(&f, 0);	/* no store: the lease runs out */
	while ((n = gpuar_port_claim(f.port, e, 4, 2 * MS, NULL)) == 0)
		ck_assert(fd_readable(f.port, 2000));
	ck_assert_int_eq(n, 1);
	claimed = stats(f.port);
	ck_assert_uint_eq(claimed.imminent, before.imminent + 1);
	ck_assert_uint_eq(claimed.claims, before.claims + 1);
	ck_assert_uint_eq(claimed.lease_expiries, before.lease_expiries);
	/*
	 * Let the lease run out (the run after its end drops it), then
	 * store: a store within the lease would end the wait instead.
	 */
	while (gpuar_now_ns() <= e[0].lease_end_ns)
		ck_assert_int_eq(gpuar_port_reap(f.port, &rec, 1, 5 * MS), -ETIME);
	ck_assert_int_eq(gpuar_port_process(f.port), 0);
	ck_assert_int_eq(gpuar_port_claim(f.port, e, 4, 0, NULL), 0);
	gpuar_soft_store_at(f.prod, f.word, f.seq, gpuar_now_ns());
	ck_assert_int_eq(gpuar_port_reap(f.port, &rec, 1, 2000 * MS), 1);
	ck_assert_uint_eq(rec.user_data, f.seq);
	after = stats(f.port);
	ck_assert_uint_eq(after.imminent, before.imminent + 1);
	ck_assert_uint_eq(after.claims, before.claims + 1);
	ck_assert_uint_eq(after.lease_expiries, before.lease_expiries + 1);
	ck_assert_uint_eq(after.budget_stretched, 0);

	/* Done at its first check: never imminent, nothing to claim. */
	before = after;
	__atomic_store_n(f.word, f.seq + 1, __ATOMIC_RELEASE);
	trained_port_submit(&f, 0);
	ck_assert_int_eq(gpuar_port_reap(f.port, &rec, 1, 0), 1);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_IMMEDIATE);
	after = stats(f.port);
	ck_assert_uint_eq(after.imminent, before.imminent);
	ck_assert_uint_eq(after.claims, before.claims);
	ck_assert_uint_eq(after.lease_expiries, before.lease_expiries);
	trained_port_close(&f);
}
END_TEST

/* A store during a caller's own lease is checked by the next run. */
START_TEST(a_claimed_word_that_moved_is_checked_at_once)
{
	struct gpuar_port_stats before, after;
	struct gpuar_claim_entry e[1];
	struct gpuar_record rec;
	struct trained_port f;
	int n;

	setup(&f);
	trained_port_train(&f, TRAINING, WORK_NS);
	trained_port_submit(&f, 0);
	while ((n = gpuar_port_claim(f.port, e, 1, 50 * MS, NULL)) == 0)
		ck_assert(fd_readable(f.port, 2000));
	ck_assert_int_eq(n, 1);
	before = stats(f.port);
	__atomic_store_n(f.word, f.seq, __ATOMIC_RELEASE);
	ck_assert_int_eq(gpuar_port_reap(f.port, &rec, 1, 0), 1);
	after = stats(f.port);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_uint_eq(after.busy_read_checks, before.busy_read_checks + 1);
	trained_port_close(&f);
}
END_TEST

/*
 * A reap on its way back with a record makes no system call for the
 * timer: it may leave an expiry undrained, or armed for a wait that is
 * gone (a claimed wait's lease end), which costs at most a spurious
 * readiness. The reap that then finds nothing settles the timer, so the
 * fd of a port with nothing pending goes quiet instead of staying
 * readable (an event loop would spin on it), and the next wait is still
 * served. With and without imminent readiness: the record comes from a
 * claim, or from the check the timer's expiry brought.
 */
static void reap_then_quiet(bool imminent)
{
	struct gpuar_port_options o = {
		.engine = GPUAR_ENGINE_USER,
		.flags = imminent ? GPUAR_PORT_IMMINENT : 0,
		.busy_read_us = 20000,
	};
	struct gpuar_claim_entry e[1];
	struct gpuar_record rec;
	struct trained_port f;
	int n = 0, spurious = 0;

	trained_port_open(&f, &o, PLAN, 5);
	trained_port_train(&f, TRAINING, WORK_NS);
	if (imminent) {
		trained_port_submit(&f, 0);
		while ((n = gpuar_port_claim(f.port, e, 1, 50 * MS, NULL)) == 0)
			ck_assert(fd_readable(f.port, 2000));
		ck_assert_int_eq(n, 1);
		__atomic_store_n(f.word, f.seq, __ATOMIC_RELEASE);
		ck_assert_int_eq(gpuar_port_reap(f.port, &rec, 1, 0), 1);
	} else {
		trained_port_submit(&f, WORK_NS);
		while (n != 1) {
			ck_assert(fd_readable(f.port, 2000));
			n = gpuar_port_reap(f.port, &rec, 1, 0);
			ck_assert(n == 1 || n == -EAGAIN);
		}
	}
	ck_assert_uint_eq(rec.user_data, f.seq);
	/* A claim's lease ends about 50 ms after it: wait past that. */
	while (fd_readable(f.port, 300)) {
		ck_assert_int_eq(gpuar_port_reap(f.port, &rec, 1, 0), -EAGAIN);
		ck_assert_int_lt(++spurious, 3);
	}
	trained_port_submit(&f, WORK_NS);
	rec = trained_port_reap(&f);
	ck_assert_uint_eq(rec.user_data, f.seq);
	ck_assert_uint_eq(rec.value, f.seq);
	trained_port_close(&f);
}

START_TEST(a_reap_with_a_record_leaves_at_most_a_spurious_readiness)
{
	reap_then_quiet(false);
	reap_then_quiet(true);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_imminent");
	TCase *t = tcase_create("imminent");
	struct unit_skips skips = { 0 };

	tcase_set_timeout(t, 30);
	tcase_add_test(t, the_flag_is_taken_and_reported);
	tcase_add_test(t, a_watcher_port_runs_without_it);
	tcase_add_test(t, a_module_without_the_feature_falls_back_or_refuses);
	tcase_add_test(t, bad_claims_are_refused_and_change_nothing);
	tcase_add_test(t, an_event_loop_gets_the_store_through_the_claim);
	tcase_add_test(t, a_claim_names_the_wait_and_leases_it_once);
	tcase_add_test(t, a_claimed_word_that_moved_is_checked_at_once);
	tcase_add_test(t, the_imminent_counters_count_as_the_module_does);
	tcase_add_test(t, a_reap_with_a_record_leaves_at_most_a_spurious_readiness);
	suite_add_tcase(s, t);
	return unit_run_tap(s, &skips);
}
