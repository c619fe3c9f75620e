// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The in-kernel deadline estimator, seen through POINT_STATS and the
 * records: the first wait at a point never sleeps; after it the kernel
 * sleeps on the prediction; late wakes lower the prediction (never raise
 * it); the window forgets old samples. Per port and per point.
 *
 *   POINT_STATS of a point the port never saw ..... ENOENT
 *   POINT_STATS with flags set on input ........... EINVAL (flags is out)
 */
#include "kselftest_harness.h"

#include "device_thread.h"
#include "port_harness.h"

/* One predicted wait at @point whose store lands @ms after submission. */
static int one_wait(int port, __u64 *word, __u32 line, __u64 point,
		    __u64 target, unsigned int ms, __u32 window,
		    struct gpuar_record *r)
{
	struct device_store d;

	if (submit_word(port, word_wait(line, 0, target, point, target,
					plan_predict(window))) != 1)
		return -1;
	if (device_store_start(&d, word, target, ms))
		return -1;
	device_store_join(&d);
	return collect_records(port, r, 1, RECORD_TIMEOUT_MS) == 1 ? 0 : -1;
}

TEST_F(port, unknown_point_enoent)
{
	struct gpuar_point_stats ps;

	EXPECT_EQ(-1, point_stats(self->port, 4242, &ps));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(port, point_stats_flags_in_einval)
{
	struct gpuar_point_stats ps;
	struct gpuar_record r;

	ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 3, 1, 10,
			      8, &r));
	memset(&ps, 0, sizeof(ps));
	ps.size = sizeof(ps);
	ps.point = 3;
	ps.flags = GPUAR_POINT_HAS_PREDICTION;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_POINT_STATS, &ps));
	EXPECT_EQ(EINVAL, errno);
}

/* An immediate completion teaches nothing: no residual was seen. */
TEST_F(port, immediate_records_no_sample)
{
	struct gpuar_point_stats ps;
	struct gpuar_record r;

	word_store(self->lines, 1);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 5, 1,
						       plan_predict(8))));
	ASSERT_ONE_RECORD(self->port, r);
	ASSERT_EQ(GPUAR_OUTCOME_IMMEDIATE, r.outcome);
	ASSERT_EQ(0, point_stats(self->port, 5, &ps));
	EXPECT_EQ(0ULL, ps.samples);
	EXPECT_EQ(0U, ps.flags & GPUAR_POINT_HAS_PREDICTION);
	EXPECT_EQ(0ULL, ps.predicted_ns);
	EXPECT_EQ(1ULL, ps.outcomes[GPUAR_OUTCOME_IMMEDIATE]);
}

/* The first exact wait records its residual; the prediction is it. */
TEST_F(port, first_exact_wait_gives_prediction)
{
	struct gpuar_point_stats ps;
	struct gpuar_record r;

	ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 7, 1, 20,
			      8, &r));
	ASSERT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	EXPECT_EQ(0ULL, r.slept_ns);
	ASSERT_EQ(0, point_stats(self->port, 7, &ps));
	EXPECT_EQ(7ULL, ps.point);
	EXPECT_EQ(1ULL, ps.samples);
	EXPECT_EQ(GPUAR_POINT_HAS_PREDICTION,
		  ps.flags & GPUAR_POINT_HAS_PREDICTION);
	EXPECT_LT(0ULL, ps.predicted_ns);
	EXPECT_GE(r.complete_ns - r.start_ns, ps.predicted_ns);
	EXPECT_EQ(1ULL, ps.outcomes[GPUAR_OUTCOME_EXACT]);
}

/* After a few waits at a point the kernel sleeps before checking. */
TEST_F(port, later_waits_sleep)
{
	struct gpuar_port_stats st;
	struct gpuar_record r;
	int i, slept = 0;

	for (i = 1; i <= 4; i++) {
		ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 8,
				      i, 30, 8, &r));
		if (i == 1) {
			EXPECT_EQ(0ULL, r.slept_ns);
		} else {
			slept += r.slept_ns > 0;
		}
	}
	EXPECT_EQ(3, slept);
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_LE(3ULL, st.sleeps);
	EXPECT_EQ(4ULL, st.submitted);
	EXPECT_EQ(1ULL, st.points);
}

/*
 * Late wakes lower the prediction: a late outcome records
 * min(woke, prediction) / 2, so the new prediction is at most half the old.
 */
TEST_F(port, late_wake_halves_prediction)
{
	struct gpuar_point_stats before, after;
	struct gpuar_record r;

	ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 9, 1, 50,
			      8, &r));
	ASSERT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	ASSERT_EQ(0, point_stats(self->port, 9, &before));
	ASSERT_LT(0ULL, before.predicted_ns);

	ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 9, 2, 2,
			      8, &r));
	ASSERT_EQ(GPUAR_OUTCOME_LATE, r.outcome);
	ASSERT_EQ(0, point_stats(self->port, 9, &after));
	EXPECT_EQ(2ULL, after.samples);
	EXPECT_GE(before.predicted_ns / 2, after.predicted_ns);
	EXPECT_LT(0ULL, after.predicted_ns);
	EXPECT_EQ(1ULL, after.outcomes[GPUAR_OUTCOME_LATE]);
}

/* Late wakes never raise it: a late wait after a short one keeps it low. */
TEST_F(port, late_wake_never_raises_prediction)
{
	struct gpuar_point_stats a, b;
	struct gpuar_record r;

	ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 10, 1, 50,
			      8, &r));
	ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 10, 2, 2,
			      8, &r));
	ASSERT_EQ(GPUAR_OUTCOME_LATE, r.outcome);
	ASSERT_EQ(0, point_stats(self->port, 10, &a));
	/* Work slower than predicted is exact, never late; min() keeps a. */
	ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 10, 3, 50,
			      8, &r));
	ASSERT_EQ(0, point_stats(self->port, 10, &b));
	EXPECT_GE(a.predicted_ns, b.predicted_ns);
}

/*
 * Window 1: only the last sample counts, so a slower run raises it. The
 * second run is 40 ms longer than the first one *measured* (a stall under
 * TCG can stretch the first residual well past its 10 ms of work), so the
 * sleep on the first prediction always ends before the store: exact.
 */
TEST_F(port, window_forgets_old_samples)
{
	struct gpuar_point_stats a, b;
	struct gpuar_record r;
	unsigned int slower_ms;

	ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 11, 1, 10,
			      1, &r));
	ASSERT_EQ(0, point_stats(self->port, 11, &a));
	slower_ms = (unsigned int)(a.predicted_ns / 1000000) + 40;
	ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 11, 2,
			      slower_ms, 1, &r));
	ASSERT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	ASSERT_EQ(0, point_stats(self->port, 11, &b));
	EXPECT_LT(a.predicted_ns, b.predicted_ns);
}

/* Points are separate: training one leaves another without a prediction. */
TEST_F(port, points_are_independent)
{
	struct gpuar_point_stats ps;
	struct gpuar_record r;

	ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 12, 1, 20,
			      8, &r));
	ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 13, 2, 20,
			      8, &r));
	EXPECT_EQ(0ULL, r.slept_ns);	/* first at point 13 */
	ASSERT_EQ(0, point_stats(self->port, 13, &ps));
	EXPECT_EQ(1ULL, ps.samples);
}

/* Estimators are per port: a new port starts without a prediction. */
TEST_F(port, ports_do_not_share_estimators)
{
	struct gpuar_point_stats ps;
	struct gpuar_record r;
	__u64 *lines = lines_map(1);
	int other = t_port_open(GPUAR_PORT_CLOEXEC);
	__u32 id;

	ASSERT_LE(0, other);
	ASSERT_NE(NULL, lines);
	ASSERT_EQ(0, one_wait(self->port, self->lines, self->line, 14, 1, 20,
			      8, &r));
	ASSERT_EQ(0, line_register(other, lines, &id));
	EXPECT_EQ(-1, point_stats(other, 14, &ps));
	EXPECT_EQ(ENOENT, errno);
	ASSERT_EQ(0, one_wait(other, lines, id, 14, 1, 20, 8, &r));
	EXPECT_EQ(0ULL, r.slept_ns);
	close(other);
	lines_unmap(lines, 1);
}

TEST_F(port, port_stats_count_outcomes)
{
	struct gpuar_port_stats st;
	struct gpuar_word_wait w[3];
	struct gpuar_record r[3];

	word_store(self->lines, 1);
	w[0] = word_wait(self->line, 0, 1, 1, 1, plan_poll());	/* immediate */
	w[1] = word_wait(self->line, 1, 1, 1, 2, plan_poll());	/* cancelled */
	w[2] = word_wait(self->line, 2, 1, 1, 3, plan_poll());	/* exact */
	ASSERT_EQ(3, submit_words(self->port, w, 3, NULL));
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(3ULL, st.submitted);
	EXPECT_EQ(2ULL, st.pending);
	EXPECT_EQ(1ULL, st.queued);
	EXPECT_EQ(1ULL, st.lines);
	EXPECT_EQ(1ULL, st.points);
	EXPECT_EQ(1, port_cancel(self->port, 2));
	word_store(&self->lines[2], 1);
	ASSERT_EQ(3, collect_records(self->port, r, 3, RECORD_TIMEOUT_MS));
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(0ULL, st.queued);
	EXPECT_EQ(1ULL, st.outcomes[GPUAR_OUTCOME_IMMEDIATE]);
	EXPECT_EQ(1ULL, st.outcomes[GPUAR_OUTCOME_CANCELLED]);
	EXPECT_EQ(1ULL, st.outcomes[GPUAR_OUTCOME_EXACT]);
	EXPECT_LE(4ULL, st.checks);
}

TEST_HARNESS_MAIN
