// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Who hears of a raise (K3-6). A raise wakes only the pollers that asked
 * for imminence: a thread blocked in poll(POLLIN) on an imminent port
 * sleeps through it and wakes for the record. A port created with
 * GPUAR_PORT_IMMINENT_RDBAND signals imminence with EPOLLRDBAND and never
 * EPOLLPRI, so io_uring's READ, whose internal poll asks for EPOLLPRI,
 * waits for the record instead of finding the port "ready" over and over
 * and being handed to an io-wq worker; RDBAND needs GPUAR_PORT_IMMINENT.
 *
 * The test stores the words itself, after it saw the raise: outcomes and
 * wake counts are asserted, never durations.
 */
#include <liburing.h>
#include <sys/epoll.h>

#include "kselftest_harness.h"

#include "port_harness.h"
#include "poller_thread.h"
#include "train_point.h"
#include "uring_probe.h"

#define WAIT_MS 30
#define POINT 0x4d
#define LONG_LEASE_NS 100000000ULL

/* Wait up to @timeout_ms for @ev on @port; the events seen, or 0. */
static short wait_for(int port, short ev, int timeout_ms)
{
	struct pollfd p = { .fd = port, .events = ev };

	return poll(&p, 1, timeout_ms) == 1 ? p.revents : 0;
}

FIXTURE(imm)
{
	int port;
	__u64 *lines;
	__u32 line;
	__u64 seq;
};

FIXTURE_VARIANT(imm)
{
	__u32 flags;
	short ev;		/* what imminence looks like */
	short never;		/* what it never looks like */
};

FIXTURE_VARIANT_ADD(imm, pri)
{
	.flags = GPUAR_PORT_IMMINENT,
	.ev = POLLPRI,
	.never = POLLRDBAND,
};

FIXTURE_VARIANT_ADD(imm, rdband)
{
	.flags = GPUAR_PORT_IMMINENT | GPUAR_PORT_IMMINENT_RDBAND,
	.ev = POLLRDBAND,
	.never = POLLPRI,
};

FIXTURE_SETUP(imm)
{
	self->port = t_port_open(GPUAR_PORT_CLOEXEC | variant->flags);
	ASSERT_LE(0, self->port) {
		TH_LOG("port: %s", strerror(errno));
	}
	self->lines = lines_map(1);
	ASSERT_NE(NULL, self->lines);
	ASSERT_EQ(0, line_register(self->port, self->lines, &self->line));
	self->seq = 0;
	ASSERT_EQ(0, train_point(self->port, self->lines, self->line, POINT,
				 &self->seq, 3, WAIT_MS));
}

FIXTURE_TEARDOWN(imm)
{
	close(self->port);
	lines_unmap(self->lines, 1);
}

static int submit_next(int port, __u32 line, __u64 *seq)
{
	++*seq;
	return submit_word(port, word_wait(line, 0, *seq, POINT, *seq,
					   plan_predict(8)));
}

/* Imminence shows as the variant's event, never the other one. */
TEST_F_TIMEOUT(imm, raise_shows_its_event, 60)
{
	struct gpuar_claim c;
	struct gpuar_claim_entry e;
	struct gpuar_record r;

	ASSERT_EQ(1, submit_next(self->port, self->line, &self->seq));
	ASSERT_EQ(variant->ev, wait_for(self->port, variant->ev | variant->never,
					RECORD_TIMEOUT_MS));
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.entries = (__u64)(uintptr_t)&e;
	c.count = 1;
	c.entry_size = sizeof(e);
	c.lease_ns = LONG_LEASE_NS;
	ASSERT_EQ(1, ioctl(self->port, GPUAR_IOC_CLAIM, &c));
	EXPECT_EQ(self->seq, e.user_data);
	EXPECT_EQ(0, wait_for(self->port, variant->ev | variant->never, 0));
	word_store(self->lines, self->seq);
	ASSERT_EQ((ssize_t)sizeof(r), read(self->port, &r, sizeof(r)));
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r.outcome);
}

/*
 * A thread blocked in poll(POLLIN) is not woken by the raise (its
 * voluntary context switches stay), and is woken by the record.
 */
TEST_F_TIMEOUT(imm, raise_wakes_no_pollin_poller, 60)
{
	struct poller p = { .port = self->port, .events = POLLIN };
	struct gpuar_record r;
	long before;

	ASSERT_EQ(0, poller_start(&p, RECORD_TIMEOUT_MS));
	before = poller_switches(&p);
	ASSERT_LE(0, before);
	ASSERT_EQ(1, submit_next(self->port, self->line, &self->seq));
	ASSERT_EQ(variant->ev, wait_for(self->port, variant->ev,
					RECORD_TIMEOUT_MS));
	sleep_ms(WAIT_MS / 3);
	EXPECT_EQ(before, poller_switches(&p));
	EXPECT_EQ(1, __atomic_load_n(&p.state, __ATOMIC_ACQUIRE));
	word_store(self->lines, self->seq);
	ASSERT_EQ(0, pthread_join(p.thread, NULL));
	EXPECT_TRUE(p.revents & POLLIN);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(self->seq, r.user_data);
}

/* An EPOLLIN-only epoll watcher reports nothing at a raise. */
TEST_F_TIMEOUT(imm, raise_is_no_epollin_event, 60)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 1 };
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct gpuar_record r;

	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->port, &ev));
	ASSERT_EQ(1, submit_next(self->port, self->line, &self->seq));
	ASSERT_EQ(variant->ev, wait_for(self->port, variant->ev,
					RECORD_TIMEOUT_MS));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	word_store(self->lines, self->seq);
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, RECORD_TIMEOUT_MS));
	EXPECT_TRUE(ev.events & EPOLLIN);
	ASSERT_ONE_RECORD(self->port, r);
	close(ep);
}

/*
 * io_uring's READ on an RDBAND port while a wait is raised and not
 * claimed: the READ waits for the record (its poll did not ask for
 * EPOLLRDBAND), no io-wq worker takes it, and the record comes. On an
 * EPOLLPRI port the same READ may be re-issued and handed to a worker
 * (the trap the header documents), so only RDBAND is held to it.
 */
TEST_F_TIMEOUT(imm, uring_read_waits_for_the_record, 60)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct gpuar_record r;
	struct io_uring ring;
	int workers;

	if (variant->ev != POLLRDBAND)
		SKIP(return, "EPOLLPRI is in io_uring's READ poll: documented");
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	ASSERT_EQ(1, submit_next(self->port, self->line, &self->seq));
	ASSERT_EQ(variant->ev, wait_for(self->port, variant->ev,
					RECORD_TIMEOUT_MS));
	workers = iowq_workers();
	sqe = io_uring_get_sqe(&ring);
	ASSERT_NE(NULL, sqe);
	io_uring_prep_read(sqe, self->port, &r, sizeof(r), 0);
	ASSERT_EQ(1, io_uring_submit(&ring));
	/* Raised, unclaimed: the READ stays armed, with no worker. */
	EXPECT_EQ(NULL, cqe_within(&ring, WAIT_MS));
	EXPECT_EQ(workers, iowq_workers());
	word_store(self->lines, self->seq);
	cqe = cqe_within(&ring, RECORD_TIMEOUT_MS);
	ASSERT_NE(NULL, cqe);
	EXPECT_EQ((int)sizeof(r), cqe->res);
	EXPECT_EQ(self->seq, r.user_data);
	io_uring_cqe_seen(&ring, cqe);
	EXPECT_EQ(workers, iowq_workers());
	io_uring_queue_exit(&ring);
}

TEST(rdband_needs_imminent)
{
	struct gpuar_version v;
	int dev = t_dev_open();

	ASSERT_LE(0, dev);
	ASSERT_EQ(0, t_version(dev, &v));
	EXPECT_TRUE(v.features & GPUAR_FEATURE_IMMINENT_RDBAND);
	EXPECT_EQ(-1, t_port_create(dev, GPUAR_PORT_IMMINENT_RDBAND));
	EXPECT_EQ(EINVAL, errno);
	close(dev);
}

TEST_HARNESS_MAIN
