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
#include <sched.h>
#include <time.h>

#include "kselftest_harness.h"

#include "../../core/defaults.h"

#include "device_thread.h"
#include "port_harness.h"
#include "train_point.h"

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

	ASSERT_EQ(0, train_point(self->port, self->lines, self->line, POINT,
				 &seq, 3, WAIT_MS));
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
	ASSERT_EQ(0, train_point(self->port, self->lines, self->line, POINT,
				 &seq, 3, WAIT_MS));
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
	ASSERT_EQ(0, train_point(self->port, self->lines, self->line, POINT,
				 &seq, 3, WAIT_MS));
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

	ASSERT_EQ(0, train_point(self->port, self->lines, self->line, POINT,
				 &seq, 3, 20));
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

/*
 * A busy reader that loses its CPU while it spins holds its wait for one
 * lease at most (lease_us), not for its spin's budget: a SCHED_FIFO hog
 * made runnable on the reader's CPU mid-spin takes that CPU for HOG_MS,
 * stores the word as its first act (it is the device), and the port's
 * timer, finding the lease run out, checks the word and queues the record
 * (POLLIN, the lease counted as expired) while the hog still runs. The
 * spin's budget is raised to its maximum (100 ms) for the case, so a
 * hand-back that soon is the lease's doing: the reader itself sees the
 * store, or its budget's end, only once it has its CPU back.
 *
 * The judgement is an ordering against the spin's start: a lease as long
 * as the budget holds the wait until at least spin start + budget, so the
 * record must be queued before that. The spin began after the last look
 * that found no busy-read check (quiet_ns), which bounds its start from
 * below. The try proves something only when the hog started well before
 * that line (HOG_SLACK_NS before it: a lease of 200 us plus the timer's
 * lateness in a TCG guest); under single-threaded TCG the two vCPUs take
 * turns at QEMU's 100 ms kick, so a try can start the hog too late, and
 * the case tries again, up to TRIES times, and skips, saying so, when no
 * try could tell.
 *
 * The hog stores the word itself, and the main thread waits for the spin
 * sleeping between looks, because a thread on the other vCPU may run up
 * to a kick (100 ms) late while the hog's vCPU is busy: a device thread
 * there stored 57 to 145 ms into the hog in debug-kernel runs.
 */
#define HOG_MS 300
#define HOG_SLACK_NS 40000000ULL
#define TRIES 5
#define HOG_CPU 0
#define OTHER_CPU 1

struct hog {
	int go[2];		/* a pipe: one byte starts the hog */
	__u64 *word;		/* the hog stores @seq there at its start */
	__u64 seq;
	__u64 start_ns, end_ns;	/* set by the hog; 0 until then */
};

static void *hog_run(void *arg)
{
	struct hog *h = arg;
	__u64 start, now;
	char c;

	if (read(h->go[0], &c, 1) != 1)
		return NULL;
	start = mono_ns();
	word_store(h->word, h->seq);
	__atomic_store_n(&h->start_ns, start, __ATOMIC_RELEASE);
	do
		now = mono_ns();
	while (now - start < HOG_MS * 1000000ULL);
	__atomic_store_n(&h->end_ns, now, __ATOMIC_RELEASE);
	return NULL;
}

static int start_on_cpu(pthread_t *t, int cpu, bool fifo,
			void *(*fn)(void *), void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!err && fifo) {
		err = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		if (!err)
			err = pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		if (!err)
			err = pthread_attr_setschedparam(&attr, &sp);
	}
	if (!err)
		err = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return err;
}

/*
 * Look at the port's stats, a millisecond apart, until the reader's spin
 * has begun: 0, with *@quiet_ns the time before the last look that found
 * it not begun (the spin began after it), or -1.
 */
static int await_spin(int port, __u64 checks_before, __u64 *quiet_ns)
{
	struct gpuar_port_stats st;
	__u64 until = mono_ns() + RECORD_TIMEOUT_MS * 1000000ULL;

	do {
		__u64 now = mono_ns();

		if (port_stats(port, &st))
			return -1;
		if (st.busy_read_checks > checks_before)
			return 0;
		*quiet_ns = now;
		sleep_ms(1);
	} while (mono_ns() < until);
	return -1;
}

/* What one try saw; the case judges it. */
struct spin_try {
	struct reader rd;
	bool reader_started, spinning;
	__u64 quiet_ns, start_ns, end_ns, readable_ns;
};

/*
 * One try at seq @seq, the spin's budget at its maximum: a reader spins
 * on the wait on HOG_CPU, then the hog takes that CPU and stores. 0 with
 * @t filled, or an errno value (EPERM: SCHED_FIFO refused).
 */
static int spin_try(int port, __u64 *word, __u32 line, __u64 seq,
		    __u64 checks_before, struct spin_try *t)
{
	struct hog h = { .go = { -1, -1 }, .word = word, .seq = seq };
	pthread_t reader, hogger;
	int err;

	memset(t, 0, sizeof(*t));
	t->rd.port = port;
	if (pipe(h.go))
		return errno;
	err = start_on_cpu(&hogger, HOG_CPU, true, hog_run, &h);
	if (err) {
		close(h.go[0]);
		close(h.go[1]);
		return err;
	}
	/* The spin cannot begin before the wait is submitted. */
	t->quiet_ns = mono_ns();
	if (submit_word(port, word_wait(line, 0, seq, POINT, seq,
					plan_predict(8))) == 1 &&
	    !start_on_cpu(&reader, HOG_CPU, false, reader_run, &t->rd)) {
		t->reader_started = true;
		t->spinning = !await_spin(port, checks_before, &t->quiet_ns);
	}
	if (write(h.go[1], "g", 1) == 1 &&
	    fd_readable(port, RECORD_TIMEOUT_MS) == 1)
		t->readable_ns = mono_ns();
	close(h.go[1]);
	pthread_join(hogger, NULL);
	if (t->reader_started)
		pthread_join(reader, NULL);
	close(h.go[0]);
	t->start_ns = h.start_ns;
	t->end_ns = h.end_ns;
	return 0;
}

TEST_F_TIMEOUT(port, preempted_spinner_loses_its_wait_within_a_lease, 120)
{
	long long budget = t_param("busy_read_us");
	__u64 budget_max = GPUAR_BUSY_READ_US_MAX * 1000ULL;
	struct gpuar_port_stats before, after;
	cpu_set_t self_cpu;
	struct spin_try t;
	char buf[24];
	__u64 seq = 0;
	int try, err = 0;

	if (budget <= 0)
		SKIP(return, "busy reading is off (busy_read_us=%lld)", budget);
	if (sysconf(_SC_NPROCESSORS_ONLN) <= OTHER_CPU)
		SKIP(return, "needs two CPUs: the hog's and the reader's");
	ASSERT_EQ(0, train_point(self->port, self->lines, self->line, POINT,
				 &seq, 3, WAIT_MS));
	CPU_ZERO(&self_cpu);
	CPU_SET(OTHER_CPU, &self_cpu);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(self_cpu), &self_cpu));

	for (try = 0; try < TRIES; try++) {
		ASSERT_EQ(0, port_stats(self->port, &before));
		/* Nothing may end the case between here and the restore. */
		snprintf(buf, sizeof(buf), "%d", GPUAR_BUSY_READ_US_MAX);
		ASSERT_EQ(0, t_param_write("busy_read_us", buf));
		err = spin_try(self->port, self->lines, self->line, ++seq,
			       before.busy_read_checks, &t);
		snprintf(buf, sizeof(buf), "%lld", budget);
		ASSERT_EQ(0, t_param_write("busy_read_us", buf));
		if (err == EPERM)
			SKIP(return, "SCHED_FIFO refused: not privileged");
		ASSERT_EQ(0, err);
		ASSERT_TRUE(t.reader_started);
		ASSERT_TRUE(t.spinning) {
			TH_LOG("the reader never began to spin on the wait");
		}
		ASSERT_NE(0ULL, t.start_ns);
		ASSERT_EQ((ssize_t)sizeof(t.rd.r), t.rd.ret);
		EXPECT_EQ(seq, t.rd.r.user_data);
		/* The hog stored after its start: nothing done before. */
		EXPECT_LE(t.start_ns, t.rd.r.complete_ns);
		ASSERT_EQ(0, port_stats(self->port, &after));
		if (t.start_ns + HOG_SLACK_NS < t.quiet_ns + budget_max)
			break;
		TH_LOG("try %d: the hog started %llu ms after the spin could have: cannot tell",
		       try + 1,
		       (unsigned long long)(t.start_ns - t.quiet_ns) / 1000000);
	}
	if (try == TRIES)
		SKIP(return, "no try started the hog within %llu ms of the spin (single-threaded TCG?)",
		     (budget_max - HOG_SLACK_NS) / 1000000);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, t.rd.r.outcome);
	EXPECT_NE(0ULL, t.readable_ns);
	EXPECT_LT(t.readable_ns, t.end_ns);
	EXPECT_LT(before.lease_expiries, after.lease_expiries);
	/*
	 * Queued by the timer while the reader was off its CPU: before a
	 * lease as long as the budget could have ended.
	 */
	EXPECT_LT(t.rd.r.complete_ns, t.quiet_ns + budget_max) {
		TH_LOG("completed %lld us into the hog, %lld us after the spin could have begun",
		       (long long)(t.rd.r.complete_ns - t.start_ns) / 1000,
		       (long long)(t.rd.r.complete_ns - t.quiet_ns) / 1000);
	}
}

TEST_HARNESS_MAIN
