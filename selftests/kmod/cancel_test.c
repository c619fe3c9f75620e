// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * CANCEL by user data.
 *
 *   pending waits with that user data ...... their count; one CANCELLED
 *                                            record each (status -ECANCELED)
 *   none pending, a completed one's record
 *   still queued (the cancel lost the race)  EALREADY
 *   nothing pending or queued .............. ENOENT
 *   cancelling again what was cancelled .... ENOENT (nothing left pending;
 *                                            the first cancel won)
 *   flags non-zero ......................... EINVAL
 */
#include "kselftest_harness.h"

#include "port_harness.h"
#include "testfence_fixture.h"

TEST_F(port, unknown_user_data_enoent)
{
	EXPECT_EQ(-1, port_cancel(self->port, 12345));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(port, flags_nonzero_einval)
{
	struct gpuar_cancel c;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 5,
						       plan_poll())));
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.user_data = 5;
	c.flags = 1;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_CANCEL, &c));
	EXPECT_EQ(EINVAL, errno);
	/* Still pending: the refused cancel changed nothing. */
	EXPECT_TRUE(port_quiet(self->port, 20));
	EXPECT_EQ(1, port_cancel(self->port, 5));
}

TEST_F(port, cancels_every_wait_with_the_user_data)
{
	struct gpuar_word_wait w[3];
	struct gpuar_record r[2];

	w[0] = word_wait(self->line, 0, 1, 1, 7, plan_poll());
	w[1] = word_wait(self->line, 1, 1, 1, 7, plan_poll());
	w[2] = word_wait(self->line, 2, 1, 1, 8, plan_poll());
	ASSERT_EQ(3, submit_words(self->port, w, 3, NULL));
	EXPECT_EQ(2, port_cancel(self->port, 7));
	ASSERT_EQ(2, collect_records(self->port, r, 2, RECORD_TIMEOUT_MS));
	EXPECT_EQ(7ULL, r[0].user_data);
	EXPECT_EQ(7ULL, r[1].user_data);
	EXPECT_EQ(GPUAR_OUTCOME_CANCELLED, r[0].outcome);
	EXPECT_EQ(GPUAR_OUTCOME_CANCELLED, r[1].outcome);
	EXPECT_EQ(-ECANCELED, r[0].status);
	/* The other wait is untouched. */
	EXPECT_TRUE(port_quiet(self->port, 20));
	word_store(&self->lines[2], 1);
	ASSERT_EQ(1, collect_records(self->port, r, 1, RECORD_TIMEOUT_MS));
	EXPECT_EQ(8ULL, r[0].user_data);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r[0].outcome);
}

TEST_F(port, duplicate_cancel_enoent)
{
	struct gpuar_record r;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 9,
						       plan_poll())));
	EXPECT_EQ(1, port_cancel(self->port, 9));
	/* Its CANCELLED record is queued, unread: nothing to cancel. */
	EXPECT_EQ(-1, port_cancel(self->port, 9));
	EXPECT_EQ(ENOENT, errno);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(GPUAR_OUTCOME_CANCELLED, r.outcome);
	EXPECT_EQ(-1, port_cancel(self->port, 9));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_TRUE(port_quiet(self->port, 20));
}

TEST_F(port, cancel_after_completion_ealready_then_enoent)
{
	struct gpuar_record r;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 10,
						       plan_poll())));
	word_store(self->lines, 1);
	ASSERT_EQ(1, fd_readable(self->port, RECORD_TIMEOUT_MS));
	/* Completed, record queued: the cancel lost the race. */
	EXPECT_EQ(-1, port_cancel(self->port, 10));
	EXPECT_EQ(EALREADY, errno);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	/* Read: no longer known at all. */
	EXPECT_EQ(-1, port_cancel(self->port, 10));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(port, cancel_pending_fence_wait)
{
	struct gpuar_record r;
	int tl = testfence_timeline();
	int fd;

	ASSERT_LE(0, tl);
	fd = testfence_fence(tl, 1);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, submit_fence(self->port, fd, 21));
	EXPECT_TRUE(port_quiet(self->port, 20));
	EXPECT_EQ(1, port_cancel(self->port, 21));
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(21ULL, r.user_data);
	EXPECT_EQ(GPUAR_SOURCE_FENCE, r.source);
	EXPECT_EQ(GPUAR_OUTCOME_CANCELLED, r.outcome);
	EXPECT_EQ(-ECANCELED, r.status);
	/* The fence signalling later adds nothing: one record per wait. */
	ASSERT_EQ(0, testfence_signal(tl, 1, 0));
	EXPECT_TRUE(port_quiet(self->port, 30));
	close(fd);
	close(tl);
}

TEST_F(port, cancel_signalled_fence_ealready)
{
	struct gpuar_record r;
	int tl = testfence_timeline();
	int fd;

	ASSERT_LE(0, tl);
	fd = testfence_fence(tl, 1);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, submit_fence(self->port, fd, 22));
	ASSERT_EQ(0, testfence_signal(tl, 1, 0));
	ASSERT_EQ(1, fd_readable(self->port, RECORD_TIMEOUT_MS));
	EXPECT_EQ(-1, port_cancel(self->port, 22));
	EXPECT_EQ(EALREADY, errno);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(GPUAR_OUTCOME_FENCE, r.outcome);
	close(fd);
	close(tl);
}

/* Word and fence waits sharing user data are cancelled together. */
TEST_F(port, cancel_mixed_sources)
{
	struct gpuar_record r[2];
	int tl = testfence_timeline();
	int fd;

	ASSERT_LE(0, tl);
	fd = testfence_fence(tl, 1);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, submit_fence(self->port, fd, 30));
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 30,
						       plan_poll())));
	EXPECT_EQ(2, port_cancel(self->port, 30));
	ASSERT_EQ(2, collect_records(self->port, r, 2, RECORD_TIMEOUT_MS));
	EXPECT_EQ(GPUAR_OUTCOME_CANCELLED, r[0].outcome);
	EXPECT_EQ(GPUAR_OUTCOME_CANCELLED, r[1].outcome);
	EXPECT_NE(r[0].source, r[1].source);
	close(fd);
	close(tl);
}

TEST_HARNESS_MAIN
