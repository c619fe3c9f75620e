// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Word waits end to end: a CPU thread plays the device and stores into the
 * line; the kernel checks the word and posts one record per wait.
 *
 *   word at target at submit ....... IMMEDIATE, status 0
 *   store while checking ........... EXACT, value = the word seen
 *   store during estimator sleep ... LATE, slept_ns > 0
 *   no store before the backstop ... TIMEOUT, status -ETIME
 *   target ahead in wrapping order . pending until reached, across 2^64
 *   complete_ns ..................... never before the store that ended
 *                                     the wait (taken per check, after
 *                                     the load)
 */
#include "kselftest_harness.h"

#include "device_thread.h"
#include "port_harness.h"

#define PARK_NS 100000ULL	/* 100 us */

static void expect_word_record(struct __test_metadata *_metadata,
			       const struct gpuar_record *r, __u64 user_data,
			       __u64 point, int outcome)
{
	EXPECT_EQ(user_data, r->user_data);
	EXPECT_EQ(point, r->point);
	EXPECT_EQ(GPUAR_SOURCE_WORD, r->source);
	EXPECT_EQ(outcome, r->outcome);
	EXPECT_EQ(GPUAR_RECORD_VERSION_1, r->version);
	EXPECT_LE(r->start_ns, r->complete_ns);
	EXPECT_LE(1U, r->checks);
	if (outcome == GPUAR_OUTCOME_TIMEOUT) {
		EXPECT_EQ(-ETIME, r->status);
	} else if (outcome == GPUAR_OUTCOME_CANCELLED) {
		EXPECT_EQ(-ECANCELED, r->status);
	} else {
		EXPECT_EQ(0, r->status);
	}
}

TEST_F(port, immediate_when_word_at_target)
{
	struct gpuar_record r;
	__u64 before = mono_ns();

	word_store(&self->lines[3], 7);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 3, 7, 11,
						       0xabcdef, plan_poll())));
	ASSERT_ONE_RECORD(self->port, r);
	expect_word_record(_metadata, &r, 0xabcdef, 11,
			   GPUAR_OUTCOME_IMMEDIATE);
	EXPECT_EQ(7ULL, r.value);
	EXPECT_EQ(0ULL, r.slept_ns);
	EXPECT_LE(before, r.start_ns);
	EXPECT_LE(r.complete_ns, mono_ns());
}

TEST_F(port, immediate_when_word_past_target)
{
	struct gpuar_record r;

	word_store(self->lines, 100);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 60, 1, 1,
						       plan_flag(PARK_NS,
								 PLAN_BACKSTOP_NS))));
	ASSERT_ONE_RECORD(self->port, r);
	expect_word_record(_metadata, &r, 1, 1, GPUAR_OUTCOME_IMMEDIATE);
	EXPECT_EQ(100ULL, r.value);
}

TEST_F(port, exact_when_stored_while_checking_flag)
{
	struct device_store d;
	struct gpuar_record r;
	__u64 stored;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 2, 2,
						       plan_flag(PARK_NS,
								 PLAN_BACKSTOP_NS))));
	ASSERT_EQ(0, device_store_start(&d, self->lines, 1, 20));
	stored = device_store_join(&d);
	ASSERT_ONE_RECORD(self->port, r);
	expect_word_record(_metadata, &r, 2, 2, GPUAR_OUTCOME_EXACT);
	EXPECT_EQ(1ULL, r.value);
	EXPECT_EQ(0ULL, r.slept_ns);	/* no prediction without PREDICT */
	EXPECT_LE(2U, r.checks);	/* one saw it pending, one done */
	EXPECT_LE(stored, r.complete_ns);	/* never done before the store */
}

TEST_F(port, exact_when_stored_while_checking_poll)
{
	struct device_store d;
	struct gpuar_record r;
	__u64 stored;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 5, 3, 3, 3,
						       plan_poll())));
	ASSERT_EQ(0, device_store_start(&d, &self->lines[5], 3, 20));
	stored = device_store_join(&d);
	ASSERT_ONE_RECORD(self->port, r);
	expect_word_record(_metadata, &r, 3, 3, GPUAR_OUTCOME_EXACT);
	EXPECT_EQ(3ULL, r.value);
	EXPECT_LE(stored, r.complete_ns);
}

/* Not done until the word reaches the target: smaller stores do nothing. */
TEST_F(port, pending_until_target_reached)
{
	struct gpuar_record r;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 10, 1, 1,
						       plan_poll())));
	word_store(self->lines, 5);
	EXPECT_TRUE(port_quiet(self->port, 30));
	word_store(self->lines, 9);
	EXPECT_TRUE(port_quiet(self->port, 30));
	word_store(self->lines, 10);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	EXPECT_EQ(10ULL, r.value);
}

/*
 * Late: train point 40 with one exact 50 ms wait, so the estimator
 * predicts ~50 ms; then the device stores after 2 ms, during the sleep,
 * and the first check after the sleep finds it done.
 */
TEST_F(port, late_when_stored_during_sleep)
{
	struct device_store d;
	struct gpuar_record r;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 40, 1,
						       plan_predict(8))));
	ASSERT_EQ(0, device_store_start(&d, self->lines, 1, 50));
	device_store_join(&d);
	ASSERT_ONE_RECORD(self->port, r);
	ASSERT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	EXPECT_EQ(0ULL, r.slept_ns);	/* the first wait at a point never sleeps */

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 2, 40, 2,
						       plan_predict(8))));
	ASSERT_EQ(0, device_store_start(&d, self->lines, 2, 2));
	device_store_join(&d);
	ASSERT_ONE_RECORD(self->port, r);
	expect_word_record(_metadata, &r, 2, 40, GPUAR_OUTCOME_LATE);
	EXPECT_LT(0ULL, r.slept_ns);
	EXPECT_EQ(2ULL, r.value);
}

TEST_F(port, timeout_at_backstop)
{
	struct gpuar_record r;
	const __u64 backstop = 20000000ULL;	/* 20 ms */

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 9, 9,
						       plan_flag(PARK_NS,
								 backstop))));
	ASSERT_ONE_RECORD(self->port, r);
	expect_word_record(_metadata, &r, 9, 9, GPUAR_OUTCOME_TIMEOUT);
	/* Never before the backstop. */
	EXPECT_LE(r.start_ns + backstop, r.complete_ns);
	/* Exactly one record: nothing follows the timeout. */
	word_store(self->lines, 1);
	EXPECT_TRUE(port_quiet(self->port, 30));
}

/* A resubmitted wait keeps its original start (and so its backstop). */
TEST_F(port, resubmit_keeps_start)
{
	struct gpuar_word_wait w;
	struct gpuar_record r;
	__u64 start = mono_ns() - 5000000ULL;

	w = word_wait(self->line, 0, 1, 1, 1, plan_poll());
	w.start_ns = start;
	ASSERT_EQ(1, submit_word(self->port, w));
	word_store(self->lines, 1);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(start, r.start_ns);
	EXPECT_LE(start + 5000000ULL, r.complete_ns);
}

/*
 * A resubmit (start_ns given) that is done at its first check was seen
 * pending before: it ends exact, and the estimator takes a sample from
 * its original start. A first submit done at once stays immediate.
 */
TEST_F(port, resubmit_done_at_submit_is_exact)
{
	struct gpuar_point_stats ps;
	struct gpuar_word_wait w;
	struct gpuar_record r;
	__u64 start = mono_ns() - 5000000ULL;

	word_store(self->lines, 1);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 0x5e,
						       1, plan_poll())));
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(GPUAR_OUTCOME_IMMEDIATE, r.outcome);
	ASSERT_EQ(0, point_stats(self->port, 0x5e, &ps));
	EXPECT_EQ(0ULL, ps.samples);

	w = word_wait(self->line, 0, 1, 0x5e, 2, plan_poll());
	w.start_ns = start;
	ASSERT_EQ(1, submit_word(self->port, w));
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	EXPECT_EQ(start, r.start_ns);
	EXPECT_LE(start + 5000000ULL, r.complete_ns);
	EXPECT_EQ(0, r.status);
	ASSERT_EQ(0, point_stats(self->port, 0x5e, &ps));
	EXPECT_EQ(1ULL, ps.samples);
	EXPECT_EQ(1ULL, ps.outcomes[GPUAR_OUTCOME_EXACT]);
}

TEST_F(port, cancel_pending_word_wait)
{
	struct gpuar_record r;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 4, 77,
						       plan_poll())));
	EXPECT_TRUE(port_quiet(self->port, 10));
	EXPECT_EQ(1, port_cancel(self->port, 77));
	ASSERT_ONE_RECORD(self->port, r);
	expect_word_record(_metadata, &r, 77, 4, GPUAR_OUTCOME_CANCELLED);
	/* The store after the cancel completes nothing. */
	word_store(self->lines, 1);
	EXPECT_TRUE(port_quiet(self->port, 30));
}

/* 2^64 - 2 waits for 1: the counter wraps, and 2^64 - 1 is not yet 1. */
TEST_F(port, wrap_around_target)
{
	struct gpuar_record r;

	word_store(self->lines, ~0ULL - 1);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
						       plan_poll())));
	word_store(self->lines, ~0ULL);
	EXPECT_TRUE(port_quiet(self->port, 30));
	word_store(self->lines, 0);
	EXPECT_TRUE(port_quiet(self->port, 30));
	word_store(self->lines, 3);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	EXPECT_EQ(3ULL, r.value);
}

/* A word just past a wrapped target is done; half the space ahead is not. */
TEST_F(port, wrap_around_immediate_and_far_ahead)
{
	struct gpuar_word_wait w[2];
	struct gpuar_record r;

	word_store(self->lines, 1);
	w[0] = word_wait(self->line, 0, ~0ULL, 1, 1, plan_poll());
	w[1] = word_wait(self->line, 0, 1ULL + (1ULL << 63), 1, 2,
			 plan_poll());
	ASSERT_EQ(2, submit_words(self->port, w, 2, NULL));
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(1ULL, r.user_data);
	EXPECT_EQ(GPUAR_OUTCOME_IMMEDIATE, r.outcome);
	EXPECT_TRUE(port_quiet(self->port, 30));
	EXPECT_EQ(1, port_cancel(self->port, 2));
}

TEST_F(port, two_waits_on_one_word)
{
	struct gpuar_word_wait w[2];
	struct gpuar_record r[2];
	const struct gpuar_record *a, *b;

	w[0] = word_wait(self->line, 2, 1, 1, 1, plan_poll());
	w[1] = word_wait(self->line, 2, 2, 1, 2, plan_poll());
	ASSERT_EQ(2, submit_words(self->port, w, 2, NULL));
	word_store(&self->lines[2], 1);
	ASSERT_EQ(1, collect_records(self->port, r, 1, RECORD_TIMEOUT_MS));
	EXPECT_EQ(1ULL, r[0].user_data);
	EXPECT_TRUE(port_quiet(self->port, 20));
	word_store(&self->lines[2], 2);
	ASSERT_EQ(1, collect_records(self->port, &r[1], 1, RECORD_TIMEOUT_MS));
	a = record_find(r, 2, 1);
	b = record_find(r, 2, 2);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(1ULL, a->value);
	EXPECT_EQ(2ULL, b->value);
	EXPECT_LE(a->complete_ns, b->complete_ns);
}

/* One store past both targets ends both waits. */
TEST_F(port, one_store_ends_two_waits)
{
	struct gpuar_word_wait w[2];
	struct gpuar_record r[2];

	w[0] = word_wait(self->line, 1, 5, 1, 1, plan_poll());
	w[1] = word_wait(self->line, 1, 6, 1, 2, plan_poll());
	ASSERT_EQ(2, submit_words(self->port, w, 2, NULL));
	EXPECT_TRUE(port_quiet(self->port, 10));
	word_store(&self->lines[1], 6);
	ASSERT_EQ(2, collect_records(self->port, r, 2, RECORD_TIMEOUT_MS));
	EXPECT_NE(NULL, record_find(r, 2, 1));
	EXPECT_NE(NULL, record_find(r, 2, 2));
	EXPECT_EQ(6ULL, r[0].value);
	EXPECT_EQ(6ULL, r[1].value);
}

/* Eight slots are eight independent words. */
TEST_F(port, eight_slots_of_one_line)
{
	struct gpuar_word_wait w[GPUAR_LINE_SLOTS];
	struct gpuar_record r[GPUAR_LINE_SLOTS];
	int i, n;

	for (i = 0; i < GPUAR_LINE_SLOTS; i++)
		w[i] = word_wait(self->line, i, 10 + i, 1, i, plan_poll());
	ASSERT_EQ(GPUAR_LINE_SLOTS, submit_words(self->port, w,
						 GPUAR_LINE_SLOTS, NULL));
	for (i = 0; i < GPUAR_LINE_SLOTS; i += 2)
		word_store(&self->lines[i], 10 + i);
	n = collect_records(self->port, r, GPUAR_LINE_SLOTS / 2,
			    RECORD_TIMEOUT_MS);
	ASSERT_EQ(GPUAR_LINE_SLOTS / 2, n);
	/* Only the even slots were stored. */
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0ULL, r[i].user_data % 2);
		EXPECT_EQ(10 + r[i].user_data, r[i].value);
	}
	EXPECT_TRUE(port_quiet(self->port, 30));
	for (i = 1; i < GPUAR_LINE_SLOTS; i += 2)
		word_store(&self->lines[i], 10 + i);
	n = collect_records(self->port, r, GPUAR_LINE_SLOTS / 2,
			    RECORD_TIMEOUT_MS);
	ASSERT_EQ(GPUAR_LINE_SLOTS / 2, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(1ULL, r[i].user_data % 2);
		EXPECT_EQ(10 + r[i].user_data, r[i].value);
	}
}

/* As many lines as the port allows, one wait each, one device store each. */
TEST_F(port, many_lines)
{
	long long max = t_param("max_lines");
	unsigned int n, i;
	__u64 *mem;
	__u32 *ids;
	struct gpuar_word_wait *w;
	struct gpuar_record *r;
	int got;

	ASSERT_LT(1, max);
	n = max > 256 ? 256 : (unsigned int)max;
	mem = lines_map((n + 63) / 64);
	ids = calloc(n, sizeof(*ids));
	w = calloc(n, sizeof(*w));
	r = calloc(n, sizeof(*r));
	ASSERT_NE(NULL, mem);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, line_unregister(self->port, self->line));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, line_register(self->port, line_at(mem, i),
					   &ids[i])) {
			TH_LOG("line %u: %s", i, strerror(errno));
		}
		w[i] = word_wait(ids[i], i % 8, 1, 1, i, plan_poll());
	}
	ASSERT_EQ((int)n, submit_words(self->port, w, n, NULL));
	EXPECT_TRUE(port_quiet(self->port, 10));
	for (i = 0; i < n; i++)
		word_store(line_at(mem, i) + i % 8, 1);
	got = collect_records(self->port, r, n, RECORD_TIMEOUT_MS);
	ASSERT_EQ((int)n, got);
	for (i = 0; i < n; i++) {
		EXPECT_NE(NULL, record_find(r, got, i));
	}
	lines_unmap(mem, (n + 63) / 64);
}

#define STAMP_WORDS 64	/* 8 lines x 8 slots: one timer firing's worth */
#define STAMP_ROUNDS 30

struct stamped_stores {
	__u64 *mem;
	__u64 value;
	__u64 stored_ns[STAMP_WORDS];
};

/*
 * Store into every word in turn, as fast as it goes (faster than a timer
 * firing checks them), noting the time before each store.
 */
static void *stamped_stores_run(void *arg)
{
	struct stamped_stores *d = arg;
	unsigned int i;

	for (i = 0; i < STAMP_WORDS; i++) {
		d->stored_ns[i] = mono_ns();
		__atomic_store_n(&d->mem[i], d->value, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * The record's complete_ns is the time of the check that saw the word
 * done, so it is never earlier than the store: with stores landing while
 * one timer firing checks many waits, a time taken once per firing (before
 * the loads) would be.
 */
TEST_F(port, complete_ns_never_before_the_store)
{
	struct stamped_stores d;
	struct gpuar_word_wait w[STAMP_WORDS];
	struct gpuar_record r[STAMP_WORDS];
	unsigned int round, i, early = 0;
	__u32 ids[8];
	pthread_t t;

	memset(&d, 0, sizeof(d));
	d.mem = lines_map(1);
	ASSERT_NE(NULL, d.mem);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, line_register(self->port, line_at(d.mem, i),
					   &ids[i]));
	for (round = 0; round < STAMP_ROUNDS; round++) {
		d.value = round + 1;
		for (i = 0; i < STAMP_WORDS; i++)
			w[i] = word_wait(ids[i / 8], i % 8, d.value, 1, i,
					 plan_flag(10000, PLAN_BACKSTOP_NS));
		ASSERT_EQ(STAMP_WORDS, submit_words(self->port, w,
						    STAMP_WORDS, NULL));
		ASSERT_EQ(0, pthread_create(&t, NULL, stamped_stores_run, &d));
		pthread_join(t, NULL);
		ASSERT_EQ(STAMP_WORDS, collect_records(self->port, r,
						       STAMP_WORDS,
						       RECORD_TIMEOUT_MS));
		for (i = 0; i < STAMP_WORDS; i++) {
			__u64 at = d.stored_ns[r[i].user_data];

			EXPECT_EQ(GPUAR_OUTCOME_EXACT, r[i].outcome);
			if (r[i].complete_ns < at) {
				if (!early++)
					TH_LOG("complete_ns %llu ns before the store",
					       (unsigned long long)(at - r[i].complete_ns));
			}
		}
	}
	EXPECT_EQ(0U, early) {
		TH_LOG("%u of %u records before their store", early,
		       STAMP_ROUNDS * STAMP_WORDS);
	}
	lines_unmap(d.mem, 1);
}

/* A poll plan has no backstop of its own: the module's default ends it. */
TEST_F_TIMEOUT(port, poll_plan_times_out_at_module_backstop, 60)
{
	long long backstop_us = t_param("poll_backstop_us");
	struct gpuar_record r;

	ASSERT_LT(0, backstop_us);
	ASSERT_GE(10000000, backstop_us);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
						       plan_poll())));
	ASSERT_EQ(1, collect_records(self->port, &r, 1,
				     (int)(backstop_us / 1000) + RECORD_TIMEOUT_MS));
	EXPECT_EQ(GPUAR_OUTCOME_TIMEOUT, r.outcome);
	EXPECT_EQ(-ETIME, r.status);
	EXPECT_LE(r.start_ns + (__u64)backstop_us * 1000, r.complete_ns);
}

/* However short park_ns is, checks never come faster than the floor. */
TEST_F(port, park_interval_respects_floor)
{
	long long floor_us = t_param("check_floor_us");
	struct device_store d;
	struct gpuar_record r;
	__u64 span;

	ASSERT_LT(0, floor_us);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
						       plan_flag(1, PLAN_BACKSTOP_NS))));
	ASSERT_EQ(0, device_store_start(&d, self->lines, 1, 20));
	device_store_join(&d);
	ASSERT_ONE_RECORD(self->port, r);
	ASSERT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	span = r.complete_ns - r.start_ns;
	/* One check at submit, then at most one per floor interval. */
	EXPECT_GE(span / ((__u64)floor_us * 1000) + 2, (__u64)r.checks) {
		TH_LOG("%u checks in %llu us with a %lld us floor", r.checks,
		       (unsigned long long)span / 1000, floor_us);
	}
}

/* A flag plan without a backstop gets the module's default. */
TEST_F_TIMEOUT(port, flag_plan_zero_backstop_uses_module_default, 60)
{
	long long backstop_us = t_param("poll_backstop_us");
	struct gpuar_record r;

	ASSERT_LT(0, backstop_us);
	ASSERT_GE(10000000, backstop_us);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
						       plan_flag(PARK_NS, 0))));
	ASSERT_EQ(1, collect_records(self->port, &r, 1,
				     (int)(backstop_us / 1000) + RECORD_TIMEOUT_MS));
	EXPECT_EQ(GPUAR_OUTCOME_TIMEOUT, r.outcome);
	EXPECT_LE(r.start_ns + (__u64)backstop_us * 1000, r.complete_ns);
}

/* A poll plan checks at the module's poll interval, no faster. */
TEST_F(port, poll_plan_checks_at_module_interval)
{
	long long interval_us = t_param("poll_interval_us");
	struct device_store d;
	struct gpuar_record r;
	__u64 span;

	ASSERT_LT(0, interval_us);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
						       plan_poll())));
	ASSERT_EQ(0, device_store_start(&d, self->lines, 1, 20));
	device_store_join(&d);
	ASSERT_ONE_RECORD(self->port, r);
	ASSERT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	span = r.complete_ns - r.start_ns;
	EXPECT_GE(span / ((__u64)interval_us * 1000) + 2, (__u64)r.checks) {
		TH_LOG("%u checks in %llu us at a %lld us interval", r.checks,
		       (unsigned long long)span / 1000, interval_us);
	}
}

TEST_HARNESS_MAIN
