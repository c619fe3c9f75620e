// SPDX-License-Identifier: MIT
/*
 * The two engines agree: the same bad submits give the same error and
 * error_index, and the same scripted waits give the same records in the
 * same order. It runs on the host against the user engine and, inside the
 * test VMs, against the module's port (GPUAR_TEST_ENGINE=kernel, see
 * engine_fixture.h).
 *
 * Error precedence, as <linux/gpuar.h> states it: a batch larger than the
 * port's wait limit is -E2BIG (error_index = count) before any entry is
 * read; then entries in order, the first bad one named by error_index,
 * each checked for its own fields (flags, pad, slot, plan, block refused,
 * start_ns not in the future: -EINVAL) before its line is looked up
 * (-ENOENT); and only a batch whose every entry is good meets the point
 * and wait limits (-ENOSPC, error_index = count).
 *
 * Outcomes come from the soft backend storing at known times, 5-50 ms
 * apart; only their order and outcomes are asserted, never durations.
 */
#include <gpuar/gpuar.h>

#include "engine_fixture.h"
#include "unit_tap.h"

#include <check.h>
#include <errno.h>
#include <unistd.h>

#define POLL "poll"
#define FLAG "flag:park_us=100,backstop_us=1000000"
#define FLAG_PREDICT \
	FLAG "+predict:margin_us=150,min_sleep_us=20,max_sleep_us=50000,window=8"
#define FLAG_BACKSTOP_10MS "flag:park_us=1000,backstop_us=10000"

/* A line id no port of this suite hands out. */
#define NO_LINE 0xfffff00du

/* ------------------------------------------------------ error precedence */

/* What one entry may get wrong; faults combine as bits. */
enum fault {
	F_LINE = 1 << 0,	/* unknown line id: -ENOENT */
	F_SLOT = 1 << 1,	/* slot past the line */
	F_FLAGS = 1 << 2,
	F_PAD = 1 << 3,
	F_PLAN = 1 << 4,	/* a plan the plan check refuses */
	F_BLOCK = 1 << 5,	/* block: the wait driver's, no port's */
	F_FUTURE = 1 << 6,	/* start_ns after now */
};

static struct gpuar_word_wait entry(struct gpuar_line *l, uint64_t ud,
				    uint64_t point, unsigned int faults)
{
	struct gpuar_word_wait w = word_wait(l, 0, 1, ud, POLL);

	w.point = point;
	if (faults & F_LINE)
		w.line = NO_LINE;
	if (faults & F_SLOT)
		w.slot = GPUAR_LINE_SLOTS;
	if (faults & F_FLAGS)
		w.flags = 1;
	if (faults & F_PAD)
		w.pad = 1;
	if (faults & F_PLAN)
		w.plan.park = 9;
	if (faults & F_BLOCK)
		w.plan = plan_of("block");
	if (faults & F_FUTURE)
		w.start_ns = gpuar_now_ns() + 1000 * MS;
	return w;
}

/* Submit @n entries of @faults each; expect @err at @index, nothing queued. */
static void expect_refused(struct gpuar_port *p, struct gpuar_line *l,
			   const unsigned int *faults, uint32_t n, int err,
			   uint32_t index)
{
	struct gpuar_word_wait w[4];
	struct gpuar_port_stats st = { .size = sizeof(st) };
	uint32_t idx = 12345, i;

	ck_assert_uint_le(n, 4);
	for (i = 0; i < n; i++)
		w[i] = entry(l, i + 1, 7, faults[i]);
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, n, &idx), err);
	ck_assert_uint_eq(idx, index);
	ck_assert_int_eq(gpuar_port_stats(p, &st), 0);
	ck_assert_uint_eq(st.submitted, 0);
	ck_assert_uint_eq(st.pending, 0);
	ck_assert_uint_eq(st.queued, 0);
}

/* Each entry fault alone, then with an unknown line: the fault wins. */
static const unsigned int entry_faults[] = {
	F_SLOT, F_FLAGS, F_PAD, F_PLAN, F_BLOCK, F_FUTURE,
};

START_TEST(an_entry_fault_comes_before_its_unknown_line)
{
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	unsigned int f = entry_faults[_i];

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	expect_refused(p, l, &f, 1, -EINVAL, 0);
	f |= F_LINE;
	expect_refused(p, l, &f, 1, -EINVAL, 0);
	gpuar_port_close(p);
}
END_TEST

START_TEST(an_unknown_line_alone_is_enoent)
{
	static const unsigned int f[] = { 0, F_LINE };
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	expect_refused(p, l, f, 2, -ENOENT, 1);
	gpuar_port_close(p);
}
END_TEST

/* The first bad entry is named, whatever comes after it. */
START_TEST(the_first_bad_entry_is_named)
{
	static const struct {
		unsigned int f[3];
		int err;
		uint32_t index;
	} c[] = {
		{ { F_LINE, F_PLAN, 0 }, -ENOENT, 0 },
		{ { 0, F_PLAN, F_LINE }, -EINVAL, 1 },
		{ { 0, F_LINE, F_SLOT }, -ENOENT, 1 },
		{ { 0, 0, F_BLOCK | F_LINE }, -EINVAL, 2 },
		{ { 0, F_FUTURE, F_LINE | F_FLAGS }, -EINVAL, 1 },
	};
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	expect_refused(p, l, c[_i].f, 3, c[_i].err, c[_i].index);
	gpuar_port_close(p);
}
END_TEST

/* A batch over the wait limit is E2BIG before any entry is looked at. */
START_TEST(a_batch_over_the_wait_limit_is_e2big_first)
{
	static const unsigned int f[] = { F_LINE | F_PLAN, F_SLOT, 0 };
	struct gpuar_port_options o = { .max_waits = 2 };
	struct gpuar_port *p = open_opts(&o);
	struct gpuar_line *l;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	expect_refused(p, l, f, 3, -E2BIG, 3);
	gpuar_port_close(p);
}
END_TEST

/* The limits meet only batches whose every entry is good. */
START_TEST(limits_come_after_every_entry)
{
	struct gpuar_port_options o = { .max_waits = 2, .max_points = 1 };
	struct gpuar_port *p = open_opts(&o);
	struct gpuar_word_wait w[3];
	struct gpuar_line *l;
	uint32_t idx;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	/* Two new points where one fits, then a bad line: the line. */
	w[0] = entry(l, 1, 100, 0);
	w[1] = entry(l, 2, 101, F_LINE);
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 2, &idx), -ENOENT);
	ck_assert_uint_eq(idx, 1);
	/* All good: the point limit, for the batch as a whole. */
	w[1] = entry(l, 2, 101, 0);
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 2, &idx), -ENOSPC);
	ck_assert_uint_eq(idx, 2);
	/* One pending wait (word 0 is 0: it waits), then two more: no room. */
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 1, &idx), 1);
	w[1] = entry(l, 2, 100, 0);
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 2, &idx), -ENOSPC);
	ck_assert_uint_eq(idx, 2);
	w[1] = entry(l, 2, 100, F_PLAN);
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 2, &idx), -EINVAL);
	ck_assert_uint_eq(idx, 1);
	gpuar_port_close(p);
}
END_TEST

/* A wait at @point on slot @slot of @l, target 1, user data @ud. */
static struct gpuar_word_wait at_point(struct gpuar_line *l, uint32_t slot,
				       uint64_t ud, uint64_t point)
{
	struct gpuar_word_wait w = word_wait(l, slot, 1, ud, POLL);

	w.point = point;
	return w;
}

static int point_known(struct gpuar_port *p, uint64_t point)
{
	struct gpuar_point_stats ps = { .size = sizeof(ps), .point = point };

	return gpuar_point_stats(p, &ps);
}

/*
 * A full point table gives its least recently taken idle point to a new
 * one, which forgets the old one's samples; a point that a pending wait
 * holds is never given up, so a new point that finds every one held is
 * -ENOSPC (error_index = count), and nothing is evicted for it.
 */
START_TEST(an_idle_point_gives_way_a_held_one_never)
{
	struct gpuar_port_options o = { .max_points = 2 };
	struct gpuar_port *p = open_opts(&o);
	struct gpuar_word_wait w;
	struct gpuar_line *l;
	uint64_t *word;
	uint32_t idx;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	word = gpuar_line_words(l);
	word[0] = 1;
	/* 300 ends at once and is idle; 301 is held by a pending wait. */
	w = at_point(l, 0, 1, 300);
	submit1(p, &w);
	ck_assert_uint_eq(reap1(p, 1000 * MS).user_data, 1);
	w = at_point(l, 1, 2, 301);
	submit1(p, &w);
	/* 302: the table is full, 300 is idle and gives way. */
	w = at_point(l, 0, 3, 302);
	submit1(p, &w);
	ck_assert_uint_eq(reap1(p, 1000 * MS).user_data, 3);
	ck_assert_int_eq(point_known(p, 300), -ENOENT);
	ck_assert_int_eq(point_known(p, 301), 0);
	ck_assert_int_eq(point_known(p, 302), 0);
	/* 302 held too: 303 finds every point held, and evicts nothing. */
	w = at_point(l, 2, 4, 302);
	submit1(p, &w);
	w = at_point(l, 0, 5, 303);
	ck_assert_int_eq(gpuar_submit_word_waits(p, &w, 1, &idx), -ENOSPC);
	ck_assert_uint_eq(idx, 1);
	ck_assert_int_eq(point_known(p, 301), 0);
	ck_assert_int_eq(point_known(p, 302), 0);
	/* 301's wait ends: 301 is idle now, and gives way to 303. */
	word[1] = 1;
	ck_assert_uint_eq(reap1(p, 1000 * MS).user_data, 2);
	submit1(p, &w);
	ck_assert_uint_eq(reap1(p, 1000 * MS).user_data, 5);
	ck_assert_int_eq(point_known(p, 301), -ENOENT);
	ck_assert_int_eq(point_known(p, 303), 0);
	word[2] = 1;
	ck_assert_uint_eq(reap1(p, 1000 * MS).user_data, 4);
	gpuar_port_close(p);
}
END_TEST

/* A fence entry's own fields come before its fd. */
START_TEST(a_fence_entry_fault_comes_before_its_fd)
{
	struct gpuar_fence_wait f = { .user_data = 1, .fd = -1 };
	struct gpuar_port *p = open_port();
	uint32_t idx = 99;

	ck_assert_int_eq(gpuar_submit_fence_waits(p, &f, 1, &idx), -EBADF);
	ck_assert_uint_eq(idx, 0);
	f.flags = 1;
	ck_assert_int_eq(gpuar_submit_fence_waits(p, &f, 1, &idx), -EINVAL);
	ck_assert_uint_eq(idx, 0);
	gpuar_port_close(p);
}
END_TEST

/* ------------------------------------------------------ outcomes */

/*
 * Reap the next record (within 2 s, the slowest guest's margin) and check
 * whose it is and how it ended.
 */
static struct gpuar_record expect(struct gpuar_port *p, uint64_t ud,
				  enum gpuar_outcome outcome, int status)
{
	struct gpuar_record rec;

	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 2000 * MS), 1);
	ck_assert_msg(rec.user_data == ud && rec.outcome == outcome &&
		      rec.status == status,
		      "record %llu %s (status %d), expected %llu %s (status %d)",
		      (unsigned long long)rec.user_data,
		      gpuar_outcome_name(rec.outcome), rec.status,
		      (unsigned long long)ud, gpuar_outcome_name(outcome),
		      status);
	return rec;
}

/* The soft backend stores 1 into *@word @delay_ns from now. */
static void store_1_after(struct gpuar_soft_producer *prod, uint64_t *word,
			  uint64_t delay_ns)
{
	ck_assert_int_eq(gpuar_soft_store_after(prod, word, 1, delay_ns), 0);
}

/*
 * Every outcome, in the order its records must come. The first batch
 * ends at once:
 *
 *   1 IMMEDIATE   its word is already there at submission
 *   2 EXACT       a resubmit (start_ns given) found done at submission
 *   3 CANCELLED   pending, cancelled before anything else is submitted
 *
 * the second over 50 ms, each wait due after the one before it, so a
 * check that runs late (a slow guest) still ends them in this order:
 *
 *   4 TIMEOUT     nothing stores; its backstop is 10 ms
 *   5 LATE        its point learned 30 ms; stored at 5 ms, so the check
 *                 after the predicted sleep finds it done
 *   6 EXACT       stored at 50 ms, by then parked and checking
 */
START_TEST(every_outcome_in_order)
{
	struct gpuar_point_stats ps = { .point = 201 };
	struct gpuar_soft_producer *prod;
	struct gpuar_port *p = open_port();
	struct gpuar_word_wait w[3];
	struct gpuar_record rec;
	struct gpuar_line *l;
	uint64_t *words, resubmit_start;

	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	words = gpuar_line_words(l);

	/* Teach point 201 about 30 ms of work. */
	w[0] = word_wait(l, 7, 1, 100, FLAG_PREDICT);
	w[0].point = 201;
	submit1(p, &w[0]);
	store_1_after(prod, &words[7], 30 * MS);
	expect(p, 100, GPUAR_OUTCOME_EXACT, 0);

	words[0] = 1;
	words[1] = 1;
	resubmit_start = gpuar_now_ns() - 5 * MS;
	w[0] = word_wait(l, 0, 1, 1, POLL);
	w[1] = word_wait(l, 1, 1, 2, POLL);
	w[1].start_ns = resubmit_start;
	w[2] = word_wait(l, 2, 1, 3, POLL);
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 3, NULL), 3);
	ck_assert_int_eq(gpuar_cancel(p, 3), 1);

	w[0] = word_wait(l, 3, 1, 4, FLAG_BACKSTOP_10MS);
	w[1] = word_wait(l, 4, 1, 5, FLAG_PREDICT);
	w[1].point = 201;
	w[2] = word_wait(l, 5, 1, 6, FLAG);
	w[2].point = 202;
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 3, NULL), 3);
	store_1_after(prod, &words[4], 5 * MS);
	store_1_after(prod, &words[5], 50 * MS);

	expect(p, 1, GPUAR_OUTCOME_IMMEDIATE, 0);
	rec = expect(p, 2, GPUAR_OUTCOME_EXACT, 0);
	ck_assert_uint_eq(rec.start_ns, resubmit_start);
	expect(p, 3, GPUAR_OUTCOME_CANCELLED, -ECANCELED);
	expect(p, 4, GPUAR_OUTCOME_TIMEOUT, -ETIME);
	rec = expect(p, 5, GPUAR_OUTCOME_LATE, 0);
	ck_assert_uint_gt(rec.slept_ns, 0);
	rec = expect(p, 6, GPUAR_OUTCOME_EXACT, 0);
	ck_assert_uint_eq(rec.value, 1);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 0), -EAGAIN);

	/* The point learned from both of its waits, as each ended. */
	ck_assert_int_eq(gpuar_point_stats(p, &ps), 0);
	ck_assert_uint_eq(ps.samples, 2);
	ck_assert_uint_eq(ps.outcomes[GPUAR_OUTCOME_EXACT], 1);
	ck_assert_uint_eq(ps.outcomes[GPUAR_OUTCOME_LATE], 1);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

/*
 * A resubmit still pending is timed from its original start: it sleeps
 * out only what is left of the prediction, so with the work already past
 * the predicted time it parks at once and its store is EXACT.
 */
START_TEST(a_pending_resubmit_keeps_its_start)
{
	struct gpuar_point_stats ps = { .size = sizeof(ps) };
	struct gpuar_soft_producer *prod;
	struct gpuar_port *p = open_port();
	struct gpuar_word_wait w;
	struct gpuar_record rec;
	struct gpuar_line *l;
	uint64_t *words;

	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	words = gpuar_line_words(l);
	w = word_wait(l, 0, 1, 1, FLAG_PREDICT);
	w.point = 203;
	submit1(p, &w);
	store_1_after(prod, &words[0], 20 * MS);
	expect(p, 1, GPUAR_OUTCOME_EXACT, 0);

	/*
	 * Begun twice the point's prediction ago (about 20 ms; more when a
	 * loaded machine saw the first store late): its sleep is over, so
	 * no sleep.
	 */
	ps.point = 203;
	ck_assert_int_eq(gpuar_point_stats(p, &ps), 0);
	ck_assert_uint_gt(ps.predicted_ns, 0);
	w = word_wait(l, 1, 1, 2, FLAG_PREDICT);
	w.point = 203;
	w.start_ns = gpuar_now_ns() - 2 * ps.predicted_ns;
	submit1(p, &w);
	store_1_after(prod, &words[1], 20 * MS);
	rec = expect(p, 2, GPUAR_OUTCOME_EXACT, 0);
	ck_assert_uint_eq(rec.start_ns, w.start_ns);
	ck_assert_uint_eq(rec.slept_ns, 0);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

/*
 * Reaping waits the same way on both engines: a blocking reap gets a
 * record queued later (the kernel engine: the module's blocking read), a
 * finite one times out with nothing pending (WAIT_READY, or poll on a
 * module without it), a zero one never blocks.
 */
START_TEST(reaps_block_time_out_and_poll_alike)
{
	struct gpuar_soft_producer *prod;
	struct gpuar_port *p = open_port();
	struct gpuar_word_wait w;
	struct gpuar_record rec;
	struct gpuar_line *l;
	uint64_t t0;

	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 0), -EAGAIN);
	t0 = gpuar_now_ns();
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 5 * MS), -ETIME);
	ck_assert_uint_ge(gpuar_now_ns() - t0, 5 * MS);
	w = word_wait(l, 0, 1, 1, FLAG);
	submit1(p, &w);
	store_1_after(prod, &gpuar_line_words(l)[0], 10 * MS);
	rec = reap1(p, -1);
	ck_assert_uint_eq(rec.user_data, 1);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

/*
 * GPUAR_PORT_IMMINENT opens on either engine: running (the user engine,
 * a module with GPUAR_FEATURE_IMMINENT) or declined with a warning (a
 * module without it); claims with bad arguments are refused alike.
 */
START_TEST(imminent_runs_or_is_declined_with_a_warning)
{
	struct gpuar_port_options o = { .flags = GPUAR_PORT_IMMINENT };
	struct gpuar_claim_entry e[2];
	struct gpuar_error err;
	struct gpuar_port *p;

	o.engine = test_engine();
	if (o.engine != GPUAR_ENGINE_USER)
		kparams_apply(&o);
	ck_assert_msg(gpuar_port_open(&p, &o, &err) == 0, "%s", err.message);
	if (gpuar_port_imminent(p)) {
		ck_assert_uint_ne(err.code, GPUAR_W_FEATURE_FALLBACK);
		ck_assert_int_eq(gpuar_port_claim(p, e, 2, 0, &err), 0);
	} else {
		ck_assert(!user_engine(p));
		ck_assert_uint_eq(err.code, GPUAR_W_FEATURE_FALLBACK);
		ck_assert_int_eq(gpuar_port_claim(p, e, 2, 0, &err), -EOPNOTSUPP);
		ck_assert_uint_eq(err.code, GPUAR_E_FEATURE_UNAVAILABLE);
	}
	ck_assert_int_eq(gpuar_port_claim(p, e, 0, 0, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_ARGUMENT);
	ck_assert_int_eq(gpuar_port_claim(p, NULL, 2, 0, &err), -EINVAL);
	ck_assert_int_eq(gpuar_port_claim(p, e, 2, 200 * MS, &err), -EINVAL);
	gpuar_port_close(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("conformance");
	TCase *err = tcase_create("errors"), *out = tcase_create("outcomes");
	struct unit_skips skips = { 0 };
	int ret;

	if (test_engine() != GPUAR_ENGINE_USER)
		kparams_save();
	tcase_add_loop_test(err, an_entry_fault_comes_before_its_unknown_line,
			    0, sizeof(entry_faults) / sizeof(entry_faults[0]));
	tcase_add_test(err, an_unknown_line_alone_is_enoent);
	tcase_add_loop_test(err, the_first_bad_entry_is_named, 0, 5);
	tcase_add_test(err, a_batch_over_the_wait_limit_is_e2big_first);
	tcase_add_test(err, limits_come_after_every_entry);
	tcase_add_test(err, an_idle_point_gives_way_a_held_one_never);
	tcase_add_test(err, a_fence_entry_fault_comes_before_its_fd);
	suite_add_tcase(s, err);
	tcase_set_timeout(out, 30);
	tcase_add_test(out, every_outcome_in_order);
	tcase_add_test(out, a_pending_resubmit_keeps_its_start);
	tcase_add_test(out, reaps_block_time_out_and_poll_alike);
	tcase_add_test(out, imminent_runs_or_is_declined_with_a_warning);
	suite_add_tcase(s, out);
	ret = unit_run_tap(s, &skips);
	kparams_restore();
	return ret;
}
