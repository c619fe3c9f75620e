// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Reading records: read() returns whole records only, in completion order,
 * never dropping one; poll and epoll say EPOLLIN exactly when a record is
 * queued.
 *
 *   buffer smaller than one record ........ EINVAL (the record stays queued)
 *   nothing queued, O_NONBLOCK or
 *   RWF_NOWAIT (IOCB_NOWAIT) .............. EAGAIN, never sleeps
 *   signal while blocked .................. EINTR (ERESTARTSYS: restarted
 *                                           under SA_RESTART)
 *   unwritable buffer ..................... EFAULT, the record stays queued
 *   n records and a buffer for more ....... n * 64 bytes
 */
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "kselftest_harness.h"

#include "device_thread.h"
#include "port_harness.h"

/* Queue @n immediate completions with user data @base.. on line 0 slot 7. */
static int queue_immediate(int port, __u64 *lines, __u32 line, int n,
			   __u64 base)
{
	struct gpuar_word_wait w[64];
	int i;

	if (n > 64)
		return -1;
	word_store(&lines[7], 1);
	for (i = 0; i < n; i++)
		w[i] = word_wait(line, 7, 1, 1, base + i, plan_poll());
	return submit_words(port, w, n, NULL);
}

TEST_F(port, whole_records_only)
{
	struct gpuar_record r[3];
	char buf[sizeof(r)];

	ASSERT_EQ(3, queue_immediate(self->port, self->lines, self->line, 3,
				     1));
	ASSERT_EQ(1, fd_readable(self->port, RECORD_TIMEOUT_MS));
	/* Smaller than one record: refused, nothing consumed. */
	EXPECT_EQ(-1, read(self->port, buf, sizeof(struct gpuar_record) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(self->port, buf, 1));
	EXPECT_EQ(EINVAL, errno);
	/* One and a half records' room: one record. */
	EXPECT_EQ((ssize_t)sizeof(r[0]),
		  read(self->port, r, sizeof(r[0]) * 3 / 2));
	EXPECT_EQ(1ULL, r[0].user_data);
	/* Room for three, two left: two. */
	EXPECT_EQ((ssize_t)(2 * sizeof(r[0])), read(self->port, r, sizeof(r)));
	EXPECT_EQ(2ULL, r[0].user_data);
	EXPECT_EQ(3ULL, r[1].user_data);
}

TEST_F(port, zero_length_read_einval)
{
	char c;

	EXPECT_EQ(-1, read(self->port, &c, 0));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(port, nonblocking_eagain)
{
	struct gpuar_record r;
	int fl = fcntl(self->port, F_GETFL);

	ASSERT_EQ(0, fcntl(self->port, F_SETFL, fl | O_NONBLOCK));
	EXPECT_EQ(-1, read(self->port, &r, sizeof(r)));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(1, queue_immediate(self->port, self->lines, self->line, 1,
				     5));
	ASSERT_EQ(1, fd_readable(self->port, RECORD_TIMEOUT_MS));
	EXPECT_EQ((ssize_t)sizeof(r), read(self->port, &r, sizeof(r)));
	EXPECT_EQ(5ULL, r.user_data);
	EXPECT_EQ(-1, read(self->port, &r, sizeof(r)));
	EXPECT_EQ(EAGAIN, errno);
}

/* IOCB_NOWAIT (what io_uring's inline attempt uses) on a blocking port. */
TEST_F(port, rwf_nowait_eagain)
{
	struct gpuar_record r;
	struct iovec iov = { &r, sizeof(r) };

	/* A pending word wait must not make a NOWAIT read check or sleep. */
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
						       plan_poll())));
	EXPECT_EQ(-1, preadv2(self->port, &iov, 1, -1, RWF_NOWAIT));
	EXPECT_EQ(EAGAIN, errno);
	word_store(self->lines, 1);
	ASSERT_EQ(1, fd_readable(self->port, RECORD_TIMEOUT_MS));
	EXPECT_EQ((ssize_t)sizeof(r), preadv2(self->port, &iov, 1, -1,
					      RWF_NOWAIT));
	EXPECT_EQ(1ULL, r.user_data);
}

TEST_F(port, blocking_read_waits_for_record)
{
	struct device_store d;
	struct gpuar_record r;
	__u64 stored;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 8,
						       plan_poll())));
	ASSERT_EQ(0, device_store_start(&d, self->lines, 1, 20));
	ASSERT_EQ((ssize_t)sizeof(r), read(self->port, &r, sizeof(r)));
	stored = device_store_join(&d);
	EXPECT_EQ(8ULL, r.user_data);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
	EXPECT_LE(stored, r.complete_ns);
}

/* Records are copied out before they leave the queue. */
TEST_F(port, efault_loses_nothing)
{
	void *bad = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	struct gpuar_record r[2];

	ASSERT_NE(MAP_FAILED, bad);
	ASSERT_EQ(2, queue_immediate(self->port, self->lines, self->line, 2,
				     10));
	ASSERT_EQ(1, fd_readable(self->port, RECORD_TIMEOUT_MS));
	EXPECT_EQ(-1, read(self->port, bad, 2 * sizeof(r[0])));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(2, collect_records(self->port, r, 2, RECORD_TIMEOUT_MS));
	EXPECT_EQ(10ULL, r[0].user_data);
	EXPECT_EQ(11ULL, r[1].user_data);
	munmap(bad, 4096);
}

/* A buffer whose second record's room faults: the first is delivered. */
TEST_F(port, partial_efault_returns_what_was_copied)
{
	char *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct gpuar_record *r, next;

	ASSERT_NE(MAP_FAILED, two);
	ASSERT_EQ(0, mprotect(two + 4096, 4096, PROT_READ));
	r = (struct gpuar_record *)(two + 4096) - 1;
	ASSERT_EQ(2, queue_immediate(self->port, self->lines, self->line, 2,
				     20));
	ASSERT_EQ(1, fd_readable(self->port, RECORD_TIMEOUT_MS));
	EXPECT_EQ((ssize_t)sizeof(*r), read(self->port, r, 2 * sizeof(*r)));
	EXPECT_EQ(20ULL, r->user_data);
	ASSERT_EQ(1, collect_records(self->port, &next, 1, RECORD_TIMEOUT_MS));
	EXPECT_EQ(21ULL, next.user_data);
	munmap(two, 8192);
}

static void on_usr1(int sig)
{
	(void)sig;
}

struct blocked_read {
	int port;
	ssize_t ret;
	int err;
	int done;
	struct gpuar_record r;
};

static void *blocked_read_run(void *arg)
{
	struct blocked_read *b = arg;

	b->ret = read(b->port, &b->r, sizeof(b->r));
	b->err = errno;
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Signal the reader until its read() returns: a signal that lands before
 * the thread reaches read() (a TCG stall) interrupts nothing.
 */
static void interrupt_reader(pthread_t t, struct blocked_read *b)
{
	int i;

	for (i = 0; i < 200 && !__atomic_load_n(&b->done, __ATOMIC_ACQUIRE);
	     i++) {
		pthread_kill(t, SIGUSR1);
		sleep_ms(10);
	}
	pthread_join(t, NULL);
}

static int set_usr1(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGUSR1, &sa, NULL);
}

TEST_F(port, signal_interrupts_blocked_read_eintr)
{
	struct blocked_read b = { .port = self->port };
	pthread_t t;

	ASSERT_EQ(0, set_usr1(0));
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
						       plan_poll())));
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_read_run, &b));
	sleep_ms(20);
	interrupt_reader(t, &b);
	EXPECT_EQ(-1, b.ret);
	EXPECT_EQ(EINTR, b.err);
	/* The wait is still pending and still ends with its one record. */
	word_store(self->lines, 1);
	ASSERT_ONE_RECORD(self->port, b.r);
	EXPECT_EQ(1ULL, b.r.user_data);
}

TEST_F(port, sa_restart_resumes_blocked_read)
{
	struct blocked_read b = { .port = self->port };
	pthread_t t;

	ASSERT_EQ(0, set_usr1(SA_RESTART));
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 2,
						       plan_poll())));
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_read_run, &b));
	sleep_ms(20);
	ASSERT_EQ(0, pthread_kill(t, SIGUSR1));
	sleep_ms(20);
	word_store(self->lines, 1);
	pthread_join(t, NULL);
	EXPECT_EQ((ssize_t)sizeof(b.r), b.ret);
	EXPECT_EQ(2ULL, b.r.user_data);
}

TEST_F(port, poll_exact)
{
	struct gpuar_record r;
	struct pollfd p = { .fd = self->port, .events = POLLIN | POLLOUT };

	EXPECT_EQ(0, poll(&p, 1, 0));
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
						       plan_poll())));
	EXPECT_EQ(0, poll(&p, 1, 20));
	word_store(self->lines, 1);
	EXPECT_EQ(1, poll(&p, 1, RECORD_TIMEOUT_MS));
	EXPECT_EQ(POLLIN, p.revents & (POLLIN | POLLERR | POLLHUP));
	EXPECT_EQ(0, p.revents & POLLOUT);	/* not writable */
	ASSERT_EQ((ssize_t)sizeof(r), read(self->port, &r, sizeof(r)));
	EXPECT_EQ(0, poll(&p, 1, 0));
}

TEST_F(port, epoll_level_triggered)
{
	struct epoll_event ev = { .events = EPOLLIN }, out[2];
	struct gpuar_record r;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_LE(0, ep);
	ev.data.u64 = 0x77;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->port, &ev));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 10));
	ASSERT_EQ(1, queue_immediate(self->port, self->lines, self->line, 1,
				     1));
	ASSERT_EQ(1, epoll_wait(ep, out, 2, RECORD_TIMEOUT_MS));
	EXPECT_EQ(0x77ULL, out[0].data.u64);
	EXPECT_EQ((__u32)EPOLLIN, out[0].events);
	/* Level: still ready until read. */
	EXPECT_EQ(1, epoll_wait(ep, out, 2, 0));
	ASSERT_EQ((ssize_t)sizeof(r), read(self->port, &r, sizeof(r)));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 10));
	close(ep);
}

TEST_F(port, epoll_edge_triggered)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET }, out[2];
	struct gpuar_record r[2];
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->port, &ev));
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
						       plan_poll())));
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 1, 1, 1, 2,
						       plan_poll())));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 10));
	word_store(self->lines, 1);
	ASSERT_EQ(1, epoll_wait(ep, out, 2, RECORD_TIMEOUT_MS));
	/* Edge: reported once, not again while nothing new arrives. */
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 20));
	/* A new record is a new edge, even with the old one unread. */
	word_store(&self->lines[1], 1);
	EXPECT_EQ(1, epoll_wait(ep, out, 2, RECORD_TIMEOUT_MS));
	ASSERT_EQ(2, collect_records(self->port, r, 2, RECORD_TIMEOUT_MS));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 10));
	close(ep);
}

/*
 * A slow reader: as many completions as the port's wait limit pile up
 * unread (half immediate, half ended by the device), none is lost, each
 * arrives once, and a wait past the limit is refused until one is read.
 */
TEST_F_TIMEOUT(port, slow_reader_loses_nothing, 120)
{
	long long max = t_param("max_waits");
	unsigned int n, i, got = 0, batch = 256;
	struct gpuar_word_wait *w;
	struct gpuar_record *r;
	unsigned char *seen;

	ASSERT_LT(1, max);
	n = max > 16384 ? 16384 : (unsigned int)max;
	w = calloc(n, sizeof(*w));
	r = calloc(n, sizeof(*r));
	seen = calloc(n, 1);
	ASSERT_NE(NULL, seen);
	word_store(&self->lines[0], 1);
	for (i = 0; i < n; i++)
		w[i] = word_wait(self->line, i % 2 ? 1 : 0, 1, 1, i,
				 plan_poll());
	for (i = 0; i < n; i += batch) {
		unsigned int c = n - i < batch ? n - i : batch;

		ASSERT_EQ((int)c, submit_words(self->port, w + i, c, NULL)) {
			TH_LOG("batch at %u: %s", i, strerror(errno));
		}
	}
	word_store(&self->lines[1], 1);
	sleep_ms(50);
	/* Full: pending plus unread is the limit. */
	EXPECT_EQ(-1, submit_word(self->port, w[0]));
	EXPECT_EQ(ENOSPC, errno);

	while (got < n) {
		int k = collect_records(self->port, r, n - got < 512 ?
					n - got : 512, RECORD_TIMEOUT_MS);

		ASSERT_LT(0, k);
		for (i = 0; i < (unsigned int)k; i++) {
			ASSERT_GT(n, r[i].user_data);
			EXPECT_EQ(0, seen[r[i].user_data]);
			seen[r[i].user_data] = 1;
		}
		got += k;
	}
	EXPECT_EQ(n, got);
	EXPECT_TRUE(port_quiet(self->port, 20));
	/* Read: room again. */
	EXPECT_EQ(1, submit_word(self->port, w[0]));
	free(w);
	free(r);
	free(seen);
}

TEST_HARNESS_MAIN
