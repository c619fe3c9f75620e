// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * CANCEL by user data.
 *
 *   pending waits with that user data ...... their count; one CANCELLED
 *                                            record each (status -ECANCELED),
 *                                            word and fence waits alike
 *   waits with other user data ............. left pending (the neighbours
 *                                            next to it in order too)
 *   none pending, a completed one's record
 *   still queued (the cancel lost the race)  EALREADY
 *   nothing pending or queued .............. ENOENT
 *   cancelling again what was cancelled .... ENOENT (nothing left pending;
 *                                            the first cancel won), also
 *                                            beside a queued completion
 *                                            of other user data
 *   flags non-zero ......................... EINVAL
 *   a reader stuck copying out (userfaultfd) . the cancel answers all the
 *                                              same: it never waits for
 *                                              readers
 *   among 100,000 pending waits of other
 *   user data .............................. compares only the index's
 *                                            height plus its own waits
 *                                            (the gpuar_cancel tracepoint's
 *                                            looked=), not every wait
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"

#include "port_harness.h"
#include "testfence_fixture.h"
#include "trace_fixture.h"

/* A word wait's plan that keeps the timer quiet: a check every 10 ms. */
static struct gpuar_plan plan_quiet(void)
{
	return plan_flag(10000000ULL, PLAN_BACKSTOP_NS);
}

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
	int tl, fd = testfence_pending(&tl);

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
	int tl, fd = testfence_pending(&tl);

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
	int tl, fd = testfence_pending(&tl);

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

/*
 * One user data among many: its word and fence waits end, every wait of
 * other user data stays pending (fence waits cannot end by themselves;
 * word waits only at their 1 s backstop, which the count allows for).
 */
TEST_F(port, cancel_leaves_other_user_data_pending)
{
	struct gpuar_fence_wait f[64 + 3];
	struct gpuar_word_wait w[8 + 3];
	struct gpuar_port_stats st;
	struct gpuar_record r[6];
	int tl, fd = testfence_pending(&tl);
	int i, words = 0, fences = 0;

	ASSERT_LE(0, fd);
	/* 0x77's waits in the middle of the others, in submission order. */
	for (i = 0; i < 64 + 3; i++)
		f[i] = fence_wait(fd, i < 32 ? 0x1000 + i :
				      i < 35 ? 0x77 : 0x1000 + i);
	for (i = 0; i < 8 + 3; i++)
		w[i] = word_wait(self->line, i % 8, 1, 1,
				 i >= 4 && i < 7 ? 0x77 : 0x2000 + i,
				 plan_quiet());
	ASSERT_EQ(64 + 3, submit_fences(self->port, f, 64 + 3, NULL));
	ASSERT_EQ(8 + 3, submit_words(self->port, w, 8 + 3, NULL));

	EXPECT_EQ(6, port_cancel(self->port, 0x77));
	ASSERT_EQ(6, collect_records(self->port, r, 6, RECORD_TIMEOUT_MS));
	for (i = 0; i < 6; i++) {
		EXPECT_EQ(0x77ULL, r[i].user_data);
		EXPECT_EQ(GPUAR_OUTCOME_CANCELLED, r[i].outcome);
		EXPECT_EQ(-ECANCELED, r[i].status);
		words += r[i].source == GPUAR_SOURCE_WORD;
		fences += r[i].source == GPUAR_SOURCE_FENCE;
	}
	EXPECT_EQ(3, words);
	EXPECT_EQ(3, fences);

	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(64 + 3 + 8 + 3ULL, st.submitted);
	EXPECT_EQ(6ULL, st.outcomes[GPUAR_OUTCOME_CANCELLED]);
	/* Every other wait pending, or (word waits) ended at its backstop. */
	EXPECT_EQ(64 + 8ULL, st.pending + st.outcomes[GPUAR_OUTCOME_TIMEOUT]);
	EXPECT_LE(64ULL, st.pending);

	/* Each of the others is still there to cancel, once. */
	EXPECT_EQ(1, port_cancel(self->port, 0x1000 + 31));
	EXPECT_EQ(1, port_cancel(self->port, 0x1000 + 35));
	EXPECT_EQ(-1, port_cancel(self->port, 0x77));
	EXPECT_EQ(ENOENT, errno);
	close(self->port);
	self->port = -1;
	close(fd);
	close(tl);
}

/*
 * Many waits of one user data, more than one hold of the port lock ends
 * (64): every one is cancelled, none of its neighbours in order.
 */
TEST_F(port, cancels_many_waits_sharing_user_data)
{
	enum { FENCES = 1000, WORDS = 200 };
	struct gpuar_fence_wait f[FENCES + 2];
	struct gpuar_word_wait w[WORDS];
	struct gpuar_port_stats st;
	struct gpuar_record *r;
	int tl, fd = testfence_pending(&tl);
	int i, n;

	ASSERT_LE(0, fd);
	r = calloc(FENCES + WORDS, sizeof(*r));
	ASSERT_NE(NULL, r);
	f[0] = fence_wait(fd, 0x87);
	for (i = 1; i <= FENCES; i++)
		f[i] = fence_wait(fd, 0x88);
	f[FENCES + 1] = fence_wait(fd, 0x89);
	for (i = 0; i < WORDS; i++)
		w[i] = word_wait(self->line, i % 8, 1, 1, 0x88, plan_quiet());
	ASSERT_EQ(FENCES + 2, submit_fences(self->port, f, FENCES + 2, NULL));
	ASSERT_EQ(WORDS, submit_words(self->port, w, WORDS, NULL));

	EXPECT_EQ(FENCES + WORDS, port_cancel(self->port, 0x88));
	n = collect_records(self->port, r, FENCES + WORDS, RECORD_TIMEOUT_MS);
	ASSERT_EQ(FENCES + WORDS, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0x88ULL, r[i].user_data);
		EXPECT_EQ(GPUAR_OUTCOME_CANCELLED, r[i].outcome);
	}
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(2ULL, st.pending);
	EXPECT_EQ(1, port_cancel(self->port, 0x87));
	EXPECT_EQ(1, port_cancel(self->port, 0x89));
	free(r);
	close(self->port);
	self->port = -1;
	close(fd);
	close(tl);
}

/*
 * Only a queued record that is not a cancellation makes EALREADY: a
 * queued cancellation alone is ENOENT, a completion beside it EALREADY.
 */
TEST_F(port, queued_cancellation_enoent_queued_completion_ealready)
{
	struct gpuar_port_stats st;
	struct gpuar_record r[2];
	int tl, fd = testfence_pending(&tl);

	ASSERT_LE(0, fd);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1,
						       0x90, plan_quiet())));
	EXPECT_EQ(1, port_cancel(self->port, 0x90));
	EXPECT_EQ(-1, port_cancel(self->port, 0x90));
	EXPECT_EQ(ENOENT, errno);
	ASSERT_EQ(1, submit_fence(self->port, fd, 0x90));
	/* The fence's callback runs within the signal: its record is queued. */
	ASSERT_EQ(0, testfence_signal(tl, 1, 0));
	ASSERT_EQ(0, port_stats(self->port, &st));
	ASSERT_EQ(2ULL, st.queued);
	EXPECT_EQ(-1, port_cancel(self->port, 0x90));
	EXPECT_EQ(EALREADY, errno);
	ASSERT_EQ(2, collect_records(self->port, r, 2, RECORD_TIMEOUT_MS));
	EXPECT_EQ(GPUAR_OUTCOME_CANCELLED, r[0].outcome);
	EXPECT_EQ(GPUAR_OUTCOME_FENCE, r[1].outcome);
	EXPECT_EQ(-1, port_cancel(self->port, 0x90));
	EXPECT_EQ(ENOENT, errno);
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

/*
 * The index at work: a port with 100,000 pending fence waits of other user
 * data, a cancel compares only the pending index's height plus its own
 * waits, where a scan of the port would compare every one. The
 * gpuar_cancel tracepoint reports what a cancel compared (looked=).
 */
#define CROWD 100000
#define CROWD_MAX_WAITS "131072"

FIXTURE(crowded)
{
	int port;
	int timeline;
	int fence;
	__u64 *lines;
	__u32 line;
	char max_waits[32];
};

FIXTURE_SETUP(crowded)
{
	struct gpuar_fence_wait *f;
	long long max = t_param("max_waits");
	int i;

	self->port = -1;
	self->timeline = -1;
	self->fence = -1;
	self->max_waits[0] = 0;
	if (access(TRACEFS "/events", F_OK))
		SKIP(return, "this kernel has no event tracing (no %s/events)",
		     TRACEFS);
	ASSERT_LE(1, max);
	snprintf(self->max_waits, sizeof(self->max_waits), "%lld", max);
	ASSERT_EQ(0, t_param_write("max_waits", CROWD_MAX_WAITS));
	ASSERT_EQ(0, write_file(TRACEFS "/events/gpuar/gpuar_cancel/enable",
				"1"));
	self->port = t_port_open(GPUAR_PORT_CLOEXEC);
	ASSERT_LE(0, self->port);
	self->lines = lines_map(1);
	ASSERT_NE(NULL, self->lines);
	ASSERT_EQ(0, line_register(self->port, self->lines, &self->line));
	self->fence = testfence_pending(&self->timeline);
	ASSERT_LE(0, self->fence);

	/* Even user data 0, 2, ..., 199998: the tests' own are odd. */
	f = calloc(CROWD, sizeof(*f));
	ASSERT_NE(NULL, f);
	for (i = 0; i < CROWD; i++)
		f[i] = fence_wait(self->fence, 2ULL * i);
	ASSERT_EQ(CROWD, submit_fences(self->port, f, CROWD, NULL));
	free(f);
}

FIXTURE_TEARDOWN(crowded)
{
	if (self->max_waits[0])
		t_param_write("max_waits", self->max_waits);
	write_file(TRACEFS "/events/gpuar/gpuar_cancel/enable", "0");
	if (self->port >= 0)
		close(self->port);
	if (self->lines)
		lines_unmap(self->lines, 1);
	if (self->fence >= 0)
		close(self->fence);
	if (self->timeline >= 0)
		close(self->timeline);
}

/*
 * The most waits finding one user data compares in an index of @n: a
 * red-black tree of n nodes is at most 2 * log2(n + 1) deep.
 */
static long long index_height_max(unsigned long n)
{
	long long bits = 0;

	for (n += 1; n; n >>= 1)
		bits++;
	return 2 * bits;
}

/* What the cancel of @user_data just traced as compared; -1 if untraced. */
static long long cancel_looked(__u64 user_data)
{
	char needle[64];
	char *trace = read_trace();
	long long looked;

	if (!trace)
		return -1;
	snprintf(needle, sizeof(needle), "user_data=0x%llx ",
		 (unsigned long long)user_data);
	looked = trace_field(trace, "gpuar_cancel:", needle, "looked=");
	free(trace);
	return looked;
}

TEST_F_TIMEOUT(crowded, cancel_compares_only_its_own_waits, 600)
{
	__u64 mine = CROWD + 1, absent = CROWD + 3, done = CROWD + 5;
	struct gpuar_port_stats st;
	long long looked;

	/* Two word and two fence waits of one user data amid the crowd. */
	ASSERT_EQ(1, submit_fence(self->port, self->fence, mine));
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1,
						       mine, plan_quiet())));
	ASSERT_EQ(1, submit_fence(self->port, self->fence, mine));
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 1, 1, 1,
						       mine, plan_quiet())));
	ASSERT_EQ(0, write_file(TRACEFS "/trace", ""));
	EXPECT_EQ(4, port_cancel(self->port, mine));
	looked = cancel_looked(mine);
	EXPECT_LE(4, looked);
	EXPECT_GE(4 + index_height_max(CROWD + 4), looked) {
		TH_LOG("the cancel compared %lld waits of %d pending", looked,
		       CROWD + 4);
	}

	/* Nothing of that user data: ENOENT, after the height alone. */
	ASSERT_EQ(0, write_file(TRACEFS "/trace", ""));
	EXPECT_EQ(-1, port_cancel(self->port, absent));
	EXPECT_EQ(ENOENT, errno);
	looked = cancel_looked(absent);
	EXPECT_LE(1, looked);
	/* The queued index holds no completion: the 4 records are cancels. */
	EXPECT_GE(index_height_max(CROWD), looked);

	/* A completed wait's record queued: EALREADY, after both heights. */
	word_store(&self->lines[2], 1);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 2, 1, 1,
						       done, plan_quiet())));
	ASSERT_EQ(0, write_file(TRACEFS "/trace", ""));
	EXPECT_EQ(-1, port_cancel(self->port, done));
	EXPECT_EQ(EALREADY, errno);
	looked = cancel_looked(done);
	EXPECT_LE(2, looked);
	EXPECT_GE(index_height_max(CROWD) + index_height_max(1), looked);

	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ((__u64)CROWD, st.pending);
	EXPECT_EQ(5ULL, st.queued);
}

TEST_HARNESS_MAIN
