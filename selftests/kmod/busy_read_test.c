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
 * the device stores meanwhile, and the port's timer, finding the lease
 * run out, checks the word and queues the record (POLLIN, the lease
 * counted as expired) while the hog still runs. The spin's budget is
 * raised to its maximum (100 ms) for the case, so a hand-back that soon
 * is the lease's doing: the reader itself sees the store, or its
 * budget's end, only once it has its CPU back.
 *
 * The bounds are orderings and generous: the record was queued after the
 * store, before the hog ended, and less than half the spin's budget into
 * the hog (a lease of 200 us plus a TCG guest's timer lateness is far
 * below either).
 */
#define HOG_MS 300
#define SPIN_BOUND_NS (GPUAR_BUSY_READ_US_MAX * 1000ULL / 2)
#define HOG_CPU 0
#define OTHER_CPU 1

/*
 * The device waits for the hog's start blocked on a pipe, never spinning:
 * under single-threaded TCG two busy vCPUs take turns only at QEMU's
 * round-robin kick (every 100 ms), so a device that spun on start_ns saw
 * it up to that late and stored long after the hog began (79 ms in one
 * debug-kernel run); a blocked one idles its vCPU and the hog's write
 * wakes it at once, there as on hardware.
 */
struct hog {
	int go[2];		/* a pipe: one byte starts the hog */
	int started[2];		/* a pipe: the hog's byte once it runs */
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
	__atomic_store_n(&h->start_ns, start, __ATOMIC_RELEASE);
	if (write(h->started[1], "s", 1) != 1)
		return NULL;
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

/* Poll the port's stats until the reader's spin has begun: 0, or -1. */
static int await_spin(int port, __u64 checks_before)
{
	struct gpuar_port_stats st;
	__u64 until = mono_ns() + RECORD_TIMEOUT_MS * 1000000ULL;

	do {
		if (port_stats(port, &st))
			return -1;
		if (st.busy_read_checks > checks_before)
			return 0;
	} while (mono_ns() < until);
	return -1;
}

TEST_F_TIMEOUT(port, preempted_spinner_loses_its_wait_within_a_lease, 90)
{
	long long budget = t_param("busy_read_us");
	struct gpuar_port_stats before, after;
	struct hog h = { .go = { -1, -1 }, .started = { -1, -1 } };
	pthread_t reader, hogger;
	cpu_set_t self_cpu;
	struct reader rd;
	char max_budget[24];
	__u64 seq = 0, stored = 0, readable = 0;
	bool spinning = false, reader_started = false;
	int err;

	if (budget <= 0)
		SKIP(return, "busy reading is off (busy_read_us=%lld)", budget);
	if (sysconf(_SC_NPROCESSORS_ONLN) <= OTHER_CPU)
		SKIP(return, "needs two CPUs: the hog's and the device's");
	ASSERT_EQ(0, train_point(self->port, self->lines, self->line, POINT,
				 &seq, 3, WAIT_MS));
	CPU_ZERO(&self_cpu);
	CPU_SET(OTHER_CPU, &self_cpu);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(self_cpu), &self_cpu));
	ASSERT_EQ(0, pipe(h.go));
	ASSERT_EQ(0, pipe(h.started));
	err = start_on_cpu(&hogger, HOG_CPU, true, hog_run, &h);
	if (err == EPERM)
		SKIP(return, "SCHED_FIFO refused: not privileged");
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, port_stats(self->port, &before));

	/* Nothing may end the case between here and the restore below. */
	snprintf(max_budget, sizeof(max_budget), "%d", GPUAR_BUSY_READ_US_MAX);
	ASSERT_EQ(0, t_param_write("busy_read_us", max_budget));
	memset(&rd, 0, sizeof(rd));
	rd.port = self->port;
	++seq;
	if (submit_word(self->port, word_wait(self->line, 0, seq, POINT, seq,
					      plan_predict(8))) == 1 &&
	    !start_on_cpu(&reader, HOG_CPU, false, reader_run, &rd)) {
		reader_started = true;
		spinning = !await_spin(self->port, before.busy_read_checks);
	}
	if (write(h.go[1], "g", 1) == 1) {
		char c;

		/* The device stores once the hog holds the reader's CPU. */
		if (read(h.started[0], &c, 1) == 1)
			sleep_ms(2);
		stored = mono_ns();
		word_store(self->lines, seq);
		if (fd_readable(self->port, RECORD_TIMEOUT_MS) == 1)
			readable = mono_ns();
	}
	close(h.go[1]);
	pthread_join(hogger, NULL);
	if (reader_started)
		pthread_join(reader, NULL);
	close(h.go[0]);
	close(h.started[0]);
	close(h.started[1]);
	snprintf(max_budget, sizeof(max_budget), "%lld", budget);
	ASSERT_EQ(0, t_param_write("busy_read_us", max_budget));

	ASSERT_TRUE(reader_started);
	ASSERT_TRUE(spinning) {
		TH_LOG("the reader never began to spin on the wait");
	}
	ASSERT_NE(0ULL, stored);
	ASSERT_EQ((ssize_t)sizeof(rd.r), rd.ret);
	EXPECT_EQ(seq, rd.r.user_data);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, rd.r.outcome);
	EXPECT_LE(stored, rd.r.complete_ns);
	/*
	 * Queued by the timer while the reader was off its CPU, and well
	 * within the spin's budget from the hog's start: a lease as long as
	 * the budget would have held the wait past this.
	 */
	EXPECT_LT(rd.r.complete_ns, h.start_ns + SPIN_BOUND_NS) {
		TH_LOG("completed %lld us into the hog (stored %llu us into it)",
		       (long long)(rd.r.complete_ns - h.start_ns) / 1000,
		       (unsigned long long)(stored - h.start_ns) / 1000);
	}
	EXPECT_NE(0ULL, readable);
	EXPECT_LT(readable, h.end_ns);
	ASSERT_EQ(0, port_stats(self->port, &after));
	EXPECT_LT(before.lease_expiries, after.lease_expiries);
}

TEST_HARNESS_MAIN
