// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * GPUAR_IOC_WAIT_READY: block, busy-reading as a blocked read() does, until
 * a record is queued (0), the CLOCK_MONOTONIC deadline passes (ETIME;
 * deadline 0 never blocks) or a signal arrives (EINTR). It reads nothing:
 * the record is still there for read(). Bad arguments are refused and
 * change nothing.
 */
#include <signal.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "device_thread.h"
#include "port_harness.h"

#define WAIT_MS 20
#define POINT 0x3e

static int wait_ready(int port, __u64 deadline_ns)
{
	struct gpuar_wait_ready w;

	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.deadline_ns = deadline_ns;
	return ioctl(port, GPUAR_IOC_WAIT_READY, &w);
}

static int nonblock_read(int port, struct gpuar_record *r)
{
	struct iovec v = { .iov_base = r, .iov_len = sizeof(*r) };

	return (int)preadv2(port, &v, 1, -1, RWF_NOWAIT);
}

/* A record queued while it waits: 0, and the record is still unread. */
TEST_F_TIMEOUT(port, returns_when_a_record_is_queued, 60)
{
	struct device_store d;
	struct gpuar_record r;

	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(self->line, 0, 1, POINT, 7,
					   plan_flag(PLAN_PARK_NS,
						     PLAN_BACKSTOP_NS))));
	ASSERT_EQ(0, device_store_start(&d, self->lines, 1, WAIT_MS));
	EXPECT_EQ(0, wait_ready(self->port,
				mono_ns() + RECORD_TIMEOUT_MS * 1000000ULL));
	device_store_join(&d);
	ASSERT_EQ((int)sizeof(r), nonblock_read(self->port, &r));
	EXPECT_EQ(7ULL, r.user_data);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
}

/* Predicted waits are busy-read by it, as by a blocked read(). */
TEST_F_TIMEOUT(port, busy_reads_predicted_waits, 60)
{
	long long budget = t_param("busy_read_us");
	struct gpuar_port_stats st;
	struct device_store d;
	struct gpuar_record r;
	__u64 seq;

	ASSERT_LE(0, budget);
	for (seq = 1; seq <= 6; seq++) {
		ASSERT_EQ(1, submit_word(self->port,
					 word_wait(self->line, 0, seq, POINT,
						   seq, plan_predict(8))));
		ASSERT_EQ(0, device_store_start(&d, self->lines, seq,
						WAIT_MS));
		EXPECT_EQ(0, wait_ready(self->port, mono_ns() +
					RECORD_TIMEOUT_MS * 1000000ULL));
		device_store_join(&d);
		ASSERT_EQ((int)sizeof(r), nonblock_read(self->port, &r));
		EXPECT_EQ(seq, r.user_data);
	}
	ASSERT_EQ(0, port_stats(self->port, &st));
	if (budget > 0)
		EXPECT_LT(0ULL, st.busy_read_checks);
}

/* Nothing by the deadline: ETIME, after the deadline, nothing queued. */
TEST_F(port, deadline_passes_etime)
{
	struct gpuar_port_stats st;
	__u64 deadline;

	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(self->line, 0, 1, POINT, 7,
					   plan_flag(PLAN_PARK_NS,
						     PLAN_BACKSTOP_NS))));
	deadline = mono_ns() + WAIT_MS * 1000000ULL;
	EXPECT_EQ(-1, wait_ready(self->port, deadline));
	EXPECT_EQ(ETIME, errno);
	EXPECT_LE(deadline, mono_ns());
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(0ULL, st.queued);
	/* A deadline already past: ETIME at once. */
	EXPECT_EQ(-1, wait_ready(self->port, 1));
	EXPECT_EQ(ETIME, errno);
}

/* Deadline 0 never blocks: ETIME with nothing queued, 0 with a record. */
TEST_F(port, deadline_zero_polls)
{
	struct gpuar_record r;

	EXPECT_EQ(-1, wait_ready(self->port, 0));
	EXPECT_EQ(ETIME, errno);
	word_store(self->lines, 1);
	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(self->line, 0, 1, POINT, 7,
					   plan_poll())));
	EXPECT_EQ(0, wait_ready(self->port, 0));
	/* It read nothing: the record is still there. */
	EXPECT_EQ(0, wait_ready(self->port, 0));
	ASSERT_EQ((int)sizeof(r), nonblock_read(self->port, &r));
	EXPECT_EQ(GPUAR_OUTCOME_IMMEDIATE, r.outcome);
	EXPECT_EQ(-1, wait_ready(self->port, 0));
	EXPECT_EQ(ETIME, errno);
}

/*
 * A deadline past the clock's range (2^63 and up: libgpuar's
 * gpuar_reap(..., INT64_MAX) once sent now + INT64_MAX) is no deadline:
 * it waits for the record, arming no timer in the past (a negative
 * ktime: a WARN in hrtimer_reprogram and a timer interrupt per pass, K3-1;
 * the runner fails a run whose kernel log has the WARN). Each deadline
 * waits for its own record, stored 20 ms in.
 */
TEST_F_TIMEOUT(port, deadline_past_the_clock_is_none, 60)
{
	static const __u64 far[] = {
		1ULL << 63, (1ULL << 63) + 1, ~0ULL - 1, ~0ULL,
	};
	struct device_store d;
	struct gpuar_record r;
	unsigned int i;
	__u64 t0;

	for (i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		ASSERT_EQ(1, submit_word(self->port,
					 word_wait(self->line, 0, i + 1, POINT,
						   100 + i,
						   plan_flag(PLAN_PARK_NS,
							     PLAN_BACKSTOP_NS))));
		ASSERT_EQ(0, device_store_start(&d, self->lines, i + 1,
						WAIT_MS));
		t0 = mono_ns();
		EXPECT_EQ(0, wait_ready(self->port, far[i])) {
			TH_LOG("deadline %#llx: %s", (unsigned long long)far[i],
			       strerror(errno));
		}
		/* It waited for the store, not an instant ETIME. */
		EXPECT_LE(t0 + (WAIT_MS / 2) * 1000000ULL, mono_ns());
		device_store_join(&d);
		ASSERT_EQ((int)sizeof(r), nonblock_read(self->port, &r));
		EXPECT_EQ(100ULL + i, r.user_data);
	}
}

/*
 * Any holder of the port fd may wait for a record, as it may read and
 * poll: a forked child (another address space) gets 0, and ETIME with
 * nothing queued, never EPERM.
 */
TEST_F_TIMEOUT(port, works_from_another_address_space, 60)
{
	int status;
	pid_t pid;

	word_store(self->lines, 1);
	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(self->line, 0, 1, POINT, 7,
					   plan_poll())));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct gpuar_record rec;

		if (wait_ready(self->port, mono_ns() + 1000000000ULL))
			_exit(10 + (errno == EPERM));
		if (nonblock_read(self->port, &rec) != (int)sizeof(rec))
			_exit(20);
		if (wait_ready(self->port, mono_ns() + 1000000ULL) != -1 ||
		    errno != ETIME)
			_exit(30 + (errno == EPERM));
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal first: EINTR, even with SA_RESTART (the caller re-decides). */
TEST_F(port, signal_eintr)
{
	struct itimerval it = { .it_value = { .tv_usec = WAIT_MS * 1000 } };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(self->line, 0, 1, POINT, 7,
					   plan_flag(PLAN_PARK_NS,
						     PLAN_BACKSTOP_NS))));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	EXPECT_EQ(-1, wait_ready(self->port, mono_ns() +
				 RECORD_TIMEOUT_MS * 1000000ULL));
	EXPECT_EQ(EINTR, errno);
	signal(SIGALRM, SIG_DFL);
}

TEST_F(port, bad_arguments)
{
	struct gpuar_port_stats st;
	struct gpuar_wait_ready w;
	struct {
		struct gpuar_wait_ready w;
		__u64 tail;
	} big;

	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.flags = 1;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_WAIT_READY, &w));
	EXPECT_EQ(EINVAL, errno);
	w.flags = 0;
	w.size = GPUAR_WAIT_READY_SIZE_VER1 - 8;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_WAIT_READY, &w));
	EXPECT_EQ(EINVAL, errno);
	memset(&big, 0, sizeof(big));
	big.w.size = sizeof(big);
	big.tail = 1;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_WAIT_READY, &big));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_WAIT_READY, NULL));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, port_stats(self->port, &st));
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(0ULL, st.queued);
}

TEST_HARNESS_MAIN
