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
 *   a reader stuck copying out (userfaultfd) . the cancel answers all the
 *                                              same: it never waits for
 *                                              readers
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>

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

struct stuck_read {
	int port;
	void *buf;
	ssize_t got;
};

static void *stuck_read_run(void *arg)
{
	struct stuck_read *s = arg;

	s->got = read(s->port, s->buf, sizeof(struct gpuar_record));
	if (s->got < 0)
		s->got = -errno;
	return NULL;
}

/*
 * A reader whose buffer faults for long (userfaultfd, FUSE) holds the
 * port's read lock while it copies. A cancel never takes that lock (the
 * queued records it asks about are indexed under the port lock): it
 * answers while the reader is stuck. Were it to wait, the test would hang
 * here until the harness's timeout failed it.
 */
TEST_F(port, cancel_beside_a_stuck_reader_answers)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_zeropage zero;
	struct stuck_read s = { .port = self->port };
	long page = sysconf(_SC_PAGESIZE);
	pthread_t t;
	int uffd, nothing, lost, err_nothing, err_lost;

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	s.buf = mmap(NULL, page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, s.buf);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (__u64)(uintptr_t)s.buf;
	reg.range.len = page;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));

	/* A queued record, and a reader stuck copying it out. */
	word_store(self->lines, 1);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1,
						       0x51, plan_poll())));
	ASSERT_EQ(0, pthread_create(&t, NULL, stuck_read_run, &s));
	sleep_ms(200);

	/* Nothing of 0x52 anywhere; 0x51's record still queued. */
	nothing = port_cancel(self->port, 0x52);
	err_nothing = errno;
	lost = port_cancel(self->port, 0x51);
	err_lost = errno;

	/* Let the reader go: it gets its record. */
	zero.range = reg.range;
	zero.mode = 0;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_ZEROPAGE, &zero));
	pthread_join(t, NULL);
	EXPECT_EQ((ssize_t)sizeof(struct gpuar_record), s.got);
	EXPECT_EQ(-1, nothing);
	EXPECT_EQ(ENOENT, err_nothing);
	EXPECT_EQ(-1, lost);
	EXPECT_EQ(EALREADY, err_lost);
	close(uffd);
	munmap(s.buf, page);
}

TEST_HARNESS_MAIN
