// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Reading a port through io_uring (liburing): IORING_OP_READ completes
 * with whole records when one arrives, and does so without an io-wq
 * worker: the port is FMODE_NOWAIT, so io_uring's inline attempt gets
 * EAGAIN and it arms poll instead of punting the read to a thread.
 * A short buffer completes with -EINVAL, as read() does.
 */
#include <dirent.h>
#include <liburing.h>

#include "kselftest_harness.h"

#include "device_thread.h"
#include "port_harness.h"
#include "uring_probe.h"

FIXTURE(ring)
{
	int port;
	__u64 *lines;
	__u32 line;
	struct io_uring ring;
};

FIXTURE_SETUP(ring)
{
	self->port = t_port_open(GPUAR_PORT_CLOEXEC);
	ASSERT_LE(0, self->port);
	self->lines = lines_map(1);
	ASSERT_NE(NULL, self->lines);
	ASSERT_EQ(0, line_register(self->port, self->lines, &self->line));
	ASSERT_EQ(0, io_uring_queue_init(16, &self->ring, 0));
}

FIXTURE_TEARDOWN(ring)
{
	io_uring_queue_exit(&self->ring);
	close(self->port);
	lines_unmap(self->lines, 1);
}

TEST_F(ring, read_completes_when_record_arrives)
{
	struct gpuar_record r[2];
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct device_store d;

	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 3,
						       plan_poll())));
	sqe = io_uring_get_sqe(&self->ring);
	ASSERT_NE(NULL, sqe);
	io_uring_prep_read(sqe, self->port, r, sizeof(r), 0);
	io_uring_sqe_set_data64(sqe, 0x99);
	ASSERT_EQ(1, io_uring_submit(&self->ring));

	EXPECT_EQ(NULL, cqe_within(&self->ring, 20));
	/* Parked on poll, not on a worker thread. */
	EXPECT_EQ(0, iowq_workers());

	ASSERT_EQ(0, device_store_start(&d, self->lines, 1, 10));
	device_store_join(&d);
	cqe = cqe_within(&self->ring, RECORD_TIMEOUT_MS);
	ASSERT_NE(NULL, cqe);
	EXPECT_EQ(0x99ULL, io_uring_cqe_get_data64(cqe));
	EXPECT_EQ((int)sizeof(r[0]), cqe->res);
	io_uring_cqe_seen(&self->ring, cqe);
	EXPECT_EQ(3ULL, r[0].user_data);
	EXPECT_EQ(GPUAR_OUTCOME_EXACT, r[0].outcome);
}

TEST_F(ring, read_of_queued_record_completes_inline)
{
	struct gpuar_record r;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;

	word_store(self->lines, 1);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 4,
						       plan_poll())));
	ASSERT_EQ(1, fd_readable(self->port, RECORD_TIMEOUT_MS));
	sqe = io_uring_get_sqe(&self->ring);
	io_uring_prep_read(sqe, self->port, &r, sizeof(r), 0);
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	cqe = cqe_within(&self->ring, RECORD_TIMEOUT_MS);
	ASSERT_NE(NULL, cqe);
	EXPECT_EQ((int)sizeof(r), cqe->res);
	io_uring_cqe_seen(&self->ring, cqe);
	EXPECT_EQ(4ULL, r.user_data);
	EXPECT_EQ(0, iowq_workers());
}

TEST_F(ring, short_buffer_einval)
{
	char buf[16];
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;

	sqe = io_uring_get_sqe(&self->ring);
	io_uring_prep_read(sqe, self->port, buf, sizeof(buf), 0);
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	cqe = cqe_within(&self->ring, RECORD_TIMEOUT_MS);
	ASSERT_NE(NULL, cqe);
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&self->ring, cqe);
}

/* Several reads in flight: each takes its own records, none is lost. */
TEST_F(ring, many_reads_in_flight)
{
	struct gpuar_record r[8];
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int i, seen[8] = { 0 };

	for (i = 0; i < 8; i++) {
		sqe = io_uring_get_sqe(&self->ring);
		io_uring_prep_read(sqe, self->port, &r[i], sizeof(r[i]), 0);
		io_uring_sqe_set_data64(sqe, i);
	}
	ASSERT_EQ(8, io_uring_submit(&self->ring));
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(1, submit_word(self->port,
					 word_wait(self->line, i, 1, 1, i,
						   plan_poll())));
	}
	EXPECT_EQ(NULL, cqe_within(&self->ring, 10));
	for (i = 0; i < 8; i++)
		word_store(&self->lines[i], 1);
	for (i = 0; i < 8; i++) {
		__u64 k;

		cqe = cqe_within(&self->ring, RECORD_TIMEOUT_MS);
		ASSERT_NE(NULL, cqe);
		k = io_uring_cqe_get_data64(cqe);
		ASSERT_GT(8ULL, k);
		EXPECT_EQ((int)sizeof(r[0]), cqe->res);
		io_uring_cqe_seen(&self->ring, cqe);
		ASSERT_GT(8ULL, r[k].user_data);
		seen[r[k].user_data]++;
	}
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(1, seen[i]);
	}
	EXPECT_EQ(0, iowq_workers());
}

TEST_F(ring, poll_add_reports_readable)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;

	sqe = io_uring_get_sqe(&self->ring);
	io_uring_prep_poll_add(sqe, self->port, POLLIN);
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	EXPECT_EQ(NULL, cqe_within(&self->ring, 20));
	word_store(self->lines, 1);
	ASSERT_EQ(1, submit_word(self->port, word_wait(self->line, 0, 1, 1, 1,
						       plan_poll())));
	cqe = cqe_within(&self->ring, RECORD_TIMEOUT_MS);
	ASSERT_NE(NULL, cqe);
	EXPECT_EQ(POLLIN, cqe->res & POLLIN);
	io_uring_cqe_seen(&self->ring, cqe);
}

TEST_HARNESS_MAIN
