// SPDX-License-Identifier: MIT
/*
 * A wait far past its prediction backs off (lib/backoff.c): once a wait
 * is 1 s past its start, each check that finds it pending doubles its
 * interval, from its plan's, up to 10 ms; a store that finally lands is
 * still seen (at most an interval late), the estimator learns nothing
 * from it, and cancel still works. The wait driver runs on the virtual
 * clock, so its schedule is asserted to the nanosecond; the user
 * engine's port runs in real time, where only upper bounds on its check
 * counts hold (a timer never fires early) and are asserted.
 */
#include <gpuar/gpuar.h>

#include "backoff.h"
#include "engine_fixture.h"
#include "unit_tap.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#define US 1000ULL
#define SEC 1000000000ULL
#define PARK_NS (100 * US)

START_TEST(resubmissions_double_the_park_up_to_the_cap)
{
	ck_assert_uint_eq(gpuar_backoff_park_ns(100 * US, 1), 200 * US);
	ck_assert_uint_eq(gpuar_backoff_park_ns(100 * US, 2), 400 * US);
	ck_assert_uint_eq(gpuar_backoff_park_ns(100 * US, 6), 6400 * US);
	ck_assert_uint_eq(gpuar_backoff_park_ns(100 * US, 7),
			  GPUAR_BACKOFF_CAP_NS);
	ck_assert_uint_eq(gpuar_backoff_park_ns(100 * US, 1000),
			  GPUAR_BACKOFF_CAP_NS);
	/* A plan parking longer than the cap keeps its own interval. */
	ck_assert_uint_eq(gpuar_backoff_park_ns(GPUAR_BACKOFF_CAP_NS, 3),
			  GPUAR_BACKOFF_CAP_NS);
	ck_assert_uint_le(gpuar_backoff_park_ns(100 * US, 1000),
			  GPUAR_PLAN_PARK_NS_MAX);
}
END_TEST

/* A source that checks a vclock word and notes when it was checked. */
#define MAX_CHECKS 256
struct timed_src {
	struct gpuar_src src;
	struct gpuar_vclock *vc;
	const uint64_t *word;
	uint64_t target;
	uint64_t at[MAX_CHECKS];	/* check times from 1 s on */
	unsigned int n;
};

static int t_check(void *ctx, uint64_t *value)
{
	struct timed_src *t = ctx;
	uint64_t v = __atomic_load_n(t->word, __ATOMIC_ACQUIRE);
	uint64_t now = gpuar_vclock_now(t->vc);

	if (now >= GPUAR_BACKOFF_AFTER_NS && t->n < MAX_CHECKS)
		t->at[t->n++] = now;
	if (value)
		*value = v;
	return (int64_t)(v - t->target) >= 0;
}

static const struct gpuar_src_ops timed_ops = { .check = t_check };

START_TEST(the_wait_driver_doubles_its_interval_after_a_second)
{
	const uint64_t store_at = 1500 * 1000 * US + 3 * 1000 * US + 7;
	struct gpuar_waiter_options o = { 0 };
	struct gpuar_waiter *w;
	struct gpuar_plan plan;
	struct gpuar_record rec;
	struct timed_src t;
	uint64_t word = 0, predicted = 1, gap = PARK_NS;

	memset(&t, 0, sizeof(t));
	t.vc = gpuar_vclock_new(0);
	t.word = &word;
	t.target = 1;
	t.src.ops = &timed_ops;
	t.src.ctx = &t;
	o.clock = gpuar_vclock_clock(t.vc);
	ck_assert_int_eq(gpuar_waiter_new(&w, &o, NULL), 0);
	ck_assert_int_eq(gpuar_plan_from_text("flag:park_us=100,backstop_us=1000000"
					      "+predict:margin_us=100,min_sleep_us=20,"
					      "max_sleep_us=1000000,window=8",
					      &plan, NULL), 0);
	ck_assert_int_eq(gpuar_vclock_store_at(t.vc, store_at, &word, 1), 0);
	ck_assert_int_eq(gpuar_wait_blocking(w, &t.src, &plan, 5, 9, &rec, NULL), 0);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	/* The park interval's checks run to 1 s, then each gap doubles. */
	ck_assert_uint_ge(t.n, 2);
	ck_assert_uint_eq(t.at[0], GPUAR_BACKOFF_AFTER_NS);
	for (unsigned int i = 1; i < t.n; i++) {
		gap = gap * 2 < GPUAR_BACKOFF_CAP_NS ? gap * 2 : GPUAR_BACKOFF_CAP_NS;
		ck_assert_uint_eq(t.at[i] - t.at[i - 1], gap);
	}
	/* Capped from the 7th gap: about 100 checks a second, not 10,000. */
	ck_assert_uint_eq(gap, GPUAR_BACKOFF_CAP_NS);
	ck_assert_uint_lt(t.n, 60);
	/* Seen at the first check after the store, within one capped gap. */
	ck_assert_uint_ge(rec.complete_ns, store_at);
	ck_assert_uint_le(rec.complete_ns - store_at, GPUAR_BACKOFF_CAP_NS);
	/* A wait that overdue taught the point nothing. */
	ck_assert_int_eq(gpuar_waiter_prediction(w, 5, &predicted), 0);
	ck_assert_uint_eq(predicted, 0);
	gpuar_waiter_free(w);
	gpuar_vclock_free(t.vc);
}
END_TEST

static struct gpuar_port_stats stats_of(struct gpuar_port *port)
{
	struct gpuar_port_stats st = { .size = sizeof(st) };

	ck_assert_int_eq(gpuar_port_stats(port, &st), 0);
	return st;
}

/* Serve @port for @ns: wait on its fd, process; records stay queued. */
static void serve_for(struct gpuar_port *port, uint64_t ns)
{
	uint64_t end = gpuar_now_ns() + ns;

	while (gpuar_now_ns() < end) {
		struct gpuar_record rec;

		if (gpuar_port_reap(port, &rec, 1, 1000000) == 1)
			ck_abort_msg("a record came: outcome %u", rec.outcome);
	}
}

/*
 * The user engine: a resubmitted wait whose original start is 2 s back
 * is far past any prediction at once. Over 300 ms its checks follow the
 * doubling to the cap: 7 doubling gaps (12.7 ms) and then one check each
 * 10 ms, about 36, where the plan's 100 us would make 3,000.
 */
START_TEST(the_user_engine_backs_off_a_long_overdue_wait)
{
	struct gpuar_port_options o = { .engine = GPUAR_ENGINE_USER };
	struct gpuar_port *port;
	struct gpuar_line *line;
	struct gpuar_word_wait ww = { .slot = 0, .target = 1, .point = 3 };
	struct gpuar_point_stats ps = { .size = sizeof(ps), .point = 3 };
	struct gpuar_record rec;
	uint64_t checks, stored;

	ck_assert_int_eq(gpuar_port_open(&port, &o, NULL), 0);
	ck_assert_int_eq(gpuar_line_alloc(port, &line), 0);
	ww.line = gpuar_line_id(line);
	ck_assert_int_eq(gpuar_plan_from_text("flag:park_us=100,backstop_us=1000000",
					      &ww.plan, NULL), 0);
	ww.user_data = 41;
	ww.start_ns = gpuar_now_ns() - 2 * SEC;
	ck_assert_int_eq(gpuar_submit_word_waits(port, &ww, 1, NULL), 1);
	checks = stats_of(port).checks;
	serve_for(port, 300 * 1000 * US);
	checks = stats_of(port).checks - checks;
	ck_assert_uint_ge(checks, 1);
	ck_assert_uint_le(checks, 7 + 300 / 10 + 2);
	/* The store lands: the record comes, EXACT, and nothing was learned. */
	__atomic_store_n(&gpuar_line_words(line)[0], 1, __ATOMIC_RELEASE);
	stored = gpuar_now_ns();
	ck_assert_int_eq(gpuar_port_reap(port, &rec, 1, 2000000000LL), 1);
	ck_assert_uint_eq(rec.user_data, 41);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_uint_ge(rec.complete_ns, stored);
	ck_assert_int_eq(gpuar_point_stats(port, &ps), 0);
	ck_assert_uint_eq(ps.samples, 0);
	/* Cancel still ends a backed-off wait. */
	ww.user_data = 42;
	ww.target = 2;
	ww.start_ns = gpuar_now_ns() - 2 * SEC;
	ck_assert_int_eq(gpuar_submit_word_waits(port, &ww, 1, NULL), 1);
	serve_for(port, 50 * 1000 * US);
	ck_assert_int_eq(gpuar_cancel(port, 42), 1);
	ck_assert_int_eq(gpuar_port_reap(port, &rec, 1, 0), 1);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_CANCELLED);
	ck_assert_int_eq(gpuar_line_free(port, line), 0);
	gpuar_port_close(port);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_backoff");
	TCase *t = tcase_create("backoff");
	struct unit_skips skips = { 0 };

	tcase_set_timeout(t, 30);
	tcase_add_test(t, resubmissions_double_the_park_up_to_the_cap);
	tcase_add_test(t, the_wait_driver_doubles_its_interval_after_a_second);
	tcase_add_test(t, the_user_engine_backs_off_a_long_overdue_wait);
	suite_add_tcase(s, t);
	return unit_run_tap(s, &skips);
}
