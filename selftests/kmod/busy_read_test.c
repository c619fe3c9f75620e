// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Busy-read: a reader blocked in read() sleeps through most of a predicted
 * wait, is woken shortly before the predicted completion, checks the word
 * itself for a bounded time, and returns soon after the device's store.
 * Its CPU time shows the sleep; a late device never holds its CPU.
 *
 * Bounds are generous (TCG): CPU time below half the wait, not a latency.
 */
#include <pthread.h>
#include <time.h>

#include "kselftest_harness.h"

#include "device_thread.h"
#include "port_harness.h"

#define WAIT_MS 50
#define POINT 0xb0

struct reader {
	int port;
	ssize_t ret;
	struct gpuar_record r;
	__u64 cpu_ns;		/* the reader thread's CPU time in read() */
	__u64 returned_ns;
};

static __u64 thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static void *reader_run(void *arg)
{
	struct reader *rd = arg;
	__u64 cpu = thread_cpu_ns();

	rd->ret = read(rd->port, &rd->r, sizeof(rd->r));
	rd->returned_ns = mono_ns();
	rd->cpu_ns = thread_cpu_ns() - cpu;
	return NULL;
}

/* Train POINT with @n waits whose store lands @ms after submission. */
static int train(int port, __u64 *word, __u32 line, __u64 *seq, int n,
		 unsigned int ms)
{
	struct gpuar_record r;
	struct device_store d;
	int i;

	for (i = 0; i < n; i++) {
		++*seq;
		if (submit_word(port, word_wait(line, 0, *seq, POINT, *seq,
						plan_predict(8))) != 1)
			return -1;
		if (device_store_start(&d, word, *seq, ms))
			return -1;
		device_store_join(&d);
		if (collect_records(port, &r, 1, RECORD_TIMEOUT_MS) != 1)
			return -1;
	}
	return 0;
}

/*
 * One blocked read of a predicted wait whose store lands @ms after
 * submission. Returns 0 and fills @rd and *@stored.
 */
static int blocked_read(int port, __u64 *word, __u32 line, __u64 *seq,
			unsigned int ms, struct reader *rd, __u64 *stored)
{
	struct device_store d;
	pthread_t t;

	++*seq;
	memset(rd, 0, sizeof(*rd));
	rd->port = port;
	if (submit_word(port, word_wait(line, 0, *seq, POINT, *seq,
					plan_predict(8))) != 1)
		return -1;
	if (pthread_create(&t, NULL, reader_run, rd))
		return -1;
	if (device_store_start(&d, word, *seq, ms))
		return -1;
	*stored = device_store_join(&d);
	pthread_join(t, NULL);
	return rd->ret == (ssize_t)sizeof(rd->r) ? 0 : -1;
}

TEST_F_TIMEOUT(port, blocked_reader_sleeps_through_the_wait, 60)
{
	struct reader rd;
	__u64 seq = 0, stored;

	ASSERT_EQ(0, train(self->port, self->lines, self->line, &seq, 3,
			   WAIT_MS));
	ASSERT_EQ(0, blocked_read(self->port, self->lines, self->line, &seq,
				  WAIT_MS, &rd, &stored));
	EXPECT_EQ(seq, rd.r.user_data);
	/* Done by a check after the store: exact or late, never early. */
	EXPECT_TRUE(rd.r.outcome == GPUAR_OUTCOME_EXACT ||
		    rd.r.outcome == GPUAR_OUTCOME_LATE);
	EXPECT_LE(stored, rd.r.complete_ns);
	EXPECT_LE(rd.r.complete_ns, rd.returned_ns);
	EXPECT_LT(0ULL, rd.r.slept_ns);
	/*
	 * Back soon after the store: not at the backstop, nor a whole wait
	 * later (a generous bound, for TCG; the checks come every 100 us).
	 */
	EXPECT_GT(stored + WAIT_MS * 1000000ULL, rd.returned_ns);
	/* Slept through most of it: under half the wait on the CPU. */
	EXPECT_GT(WAIT_MS * 1000000ULL / 2, rd.cpu_ns) {
		TH_LOG("reader used %llu us of CPU in a %d ms wait",
		       (unsigned long long)rd.cpu_ns / 1000, WAIT_MS);
	}
}

/* The readers check words themselves: the port counts those checks. */
TEST_F_TIMEOUT(port, blocked_readers_check_words, 90)
{
	long long budget = t_param("busy_read_us");
	struct gpuar_port_stats st;
	struct reader rd;
	__u64 seq = 0, stored;
	int i;

	ASSERT_LE(0, budget);
	ASSERT_EQ(0, train(self->port, self->lines, self->line, &seq, 3,
			   WAIT_MS));
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, blocked_read(self->port, self->lines, self->line,
					  &seq, WAIT_MS, &rd, &stored));
	}
	ASSERT_EQ(0, port_stats(self->port, &st));
	if (budget > 0) {
		EXPECT_LT(0ULL, st.busy_read_checks);
	} else {
		EXPECT_EQ(0ULL, st.busy_read_checks);
	}
}

/*
 * A reader already asleep in read() on an idle port when a predicted wait
 * is submitted: the submit wakes it to sleep until the wait's early wake,
 * so it busy-reads that wait (the port counts the reader's checks) and
 * still sleeps through most of it.
 *
 * That wait's plan wakes the reader 5 ms ahead of the prediction, not the
 * fixture's 150 us: a reader woken more than the margin late (a TCG guest's
 * timer interrupt alone has taken 200 us) finds the record the timer's
 * check queued and makes no check of its own, which says nothing about
 * whether the submit woke it.
 */
#define EARLY_MARGIN_NS 5000000ULL

TEST_F_TIMEOUT(port, reader_blocked_before_submit_busy_reads, 60)
{
	long long budget = t_param("busy_read_us");
	struct gpuar_port_stats before, after;
	struct device_store d;
	struct gpuar_plan plan;
	struct reader rd;
	__u64 seq = 0;
	pthread_t t;

	ASSERT_LE(0, budget);
	ASSERT_EQ(0, train(self->port, self->lines, self->line, &seq, 3,
			   WAIT_MS));
	ASSERT_EQ(0, port_stats(self->port, &before));
	memset(&rd, 0, sizeof(rd));
	rd.port = self->port;
	ASSERT_EQ(0, pthread_create(&t, NULL, reader_run, &rd));
	/* Let the reader block on the idle port first. */
	sleep_ms(20);
	++seq;
	plan = plan_predict(8);
	plan.margin_ns = EARLY_MARGIN_NS;
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, seq,
						       POINT, seq, plan)));
	ASSERT_EQ(0, device_store_start(&d, self->lines, seq, WAIT_MS));
	device_store_join(&d);
	pthread_join(t, NULL);
	ASSERT_EQ((ssize_t)sizeof(rd.r), rd.ret);
	EXPECT_EQ(seq, rd.r.user_data);
	ASSERT_EQ(0, port_stats(self->port, &after));
	if (budget > 0) {
		EXPECT_LT(before.busy_read_checks, after.busy_read_checks);
	} else {
		EXPECT_EQ(before.busy_read_checks, after.busy_read_checks);
	}
}

/*
 * A late device: predicted at ~20 ms, the store comes at 60 ms. The
 * reader's spin is bounded, so it sleeps again and its CPU stays low.
 */
TEST_F_TIMEOUT(port, late_device_does_not_hold_the_cpu, 60)
{
	struct reader rd;
	__u64 seq = 0, stored;

	ASSERT_EQ(0, train(self->port, self->lines, self->line, &seq, 3, 20));
	ASSERT_EQ(0, blocked_read(self->port, self->lines, self->line, &seq,
				  60, &rd, &stored));
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, rd.r.outcome);
	EXPECT_LE(stored, rd.r.complete_ns);
	EXPECT_GT(60 * 1000000ULL / 2, rd.cpu_ns) {
		TH_LOG("reader used %llu us of CPU in a 60 ms wait",
		       (unsigned long long)rd.cpu_ns / 1000);
	}
}

/* A blocked reader that the device never answers gets the timeout. */
TEST_F(port, blocked_reader_gets_timeout)
{
	struct reader rd = { .port = self->port };
	pthread_t t;

	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(self->line, 0, 1, 1, 1,
					   plan_flag(100000, 30000000))));
	ASSERT_EQ(0, pthread_create(&t, NULL, reader_run, &rd));
	pthread_join(t, NULL);
	ASSERT_EQ((ssize_t)sizeof(rd.r), rd.ret);
	EXPECT_EQ(GPUAR_OUTCOME_TIMEOUT, rd.r.outcome);
	EXPECT_EQ(-ETIME, rd.r.status);
}

TEST_HARNESS_MAIN
