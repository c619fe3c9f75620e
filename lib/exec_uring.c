// SPDX-License-Identifier: MIT
/*
 * The io-uring executor's idle goes through its ring: a park is one
 * submit-and-wait on a POLL_ADD for every fd its tasks wait on (fences,
 * ports, the interrupt) and an absolute TIMEOUT for the earliest deadline
 * (or the park bound when a task waits on a word, which only a check
 * sees), and a sleep is that TIMEOUT alone. Timeouts in ns have no timer
 * slack. A refused op falls back to the slack-free ppoll or
 * clock_nanosleep and is counted.
 */
#include "exec_internal.h"

#include <errno.h>
#include <poll.h>

#define TAG_PARK_TIMEOUT (~0ULL)
#define TAG_PARK_CANCEL (~0ULL - 1)

static struct __kernel_timespec kts(u64 ns)
{
	struct __kernel_timespec ts = {
		.tv_sec = (long long)(ns / 1000000000ULL),
		.tv_nsec = (long long)(ns % 1000000000ULL),
	};
	return ts;
}

/* Sleep to @until_ns with one absolute TIMEOUT; false if the op was refused. */
static bool uring_sleep(struct io_uring *ring, u64 until_ns)
{
	struct __kernel_timespec ts = kts(until_ns);
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int res, ret;

	if (!sqe)
		return false;
	io_uring_prep_timeout(sqe, &ts, 0, IORING_TIMEOUT_ABS);
	if (io_uring_submit(ring) < 0)
		return false;
	do {
		ret = io_uring_wait_cqe(ring, &cqe);
	} while (ret == -EINTR);
	if (ret < 0)
		return false;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res == -ETIME || res == 0;
}

/*
 * One park through the ring: wait until one of @fds (n of them, at most
 * GPUAR_URING_PARK_FDS) is readable or @until_ns, then take back every op
 * still armed, so nothing of this park outlives it. 0, or a negative
 * errno when the ring refused (the caller parks otherwise).
 */
int gpuar_uring_park(struct gpuar_exec *ex, const int *fds, u32 n,
		     u64 until_ns)
{
	struct io_uring *ring = &ex->ring;
	struct __kernel_timespec ts = kts(until_ns);
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	u32 armed, i;
	int ret;

	/* The arming and the removals each fit at once (the ring is idle). */
	if (n > GPUAR_URING_PARK_FDS || io_uring_sq_space_left(ring) < n + 1)
		return -EBUSY;
	for (i = 0; i < n; i++) {
		sqe = io_uring_get_sqe(ring);
		io_uring_prep_poll_add(sqe, fds[i], POLLIN);
		io_uring_sqe_set_data64(sqe, i);
	}
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_timeout(sqe, &ts, 0, IORING_TIMEOUT_ABS);
	io_uring_sqe_set_data64(sqe, TAG_PARK_TIMEOUT);
	do {
		ret = io_uring_submit_and_wait(ring, 1);
	} while (ret == -EINTR);
	if (ret < 0)
		return ret;
	armed = n + 1;
	/* Whatever woke us, end the others: removals, then every completion. */
	for (i = 0; i <= n; i++) {
		sqe = io_uring_get_sqe(ring);
		if (i < n)
			io_uring_prep_poll_remove(sqe, i);
		else
			io_uring_prep_timeout_remove(sqe, TAG_PARK_TIMEOUT, 0);
		io_uring_sqe_set_data64(sqe, TAG_PARK_CANCEL);
	}
	io_uring_submit(ring);
	/* Each armed op completes once (done, or cancelled), as each removal does. */
	for (u32 left = 2 * armed; left;) {
		ret = io_uring_wait_cqe(ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret < 0)
			return ret;
		io_uring_cqe_seen(ring, cqe);
		left--;
	}
	return 0;
}

static uint64_t uc_now(void *ctx)
{
	(void)ctx;
	return gpuar_now_ns();
}

static void uc_sleep_until(void *ctx, uint64_t until_ns)
{
	struct gpuar_exec *ex = ctx;
	const struct gpuar_clock *mono = gpuar_clock_monotonic();

	if (until_ns <= gpuar_now_ns())
		return;
	if (!uring_sleep(&ex->ring, until_ns)) {
		ex->st.uring_fallbacks++;
		mono->ops->sleep_until(mono->ctx, until_ns);
	}
}

static void uc_wait_word(void *ctx, const uint64_t *word, uint64_t seen,
			 uint64_t until_ns)
{
	u64 now = gpuar_now_ns();

	if (now < until_ns &&
	    gpuar_hw_word_wait(word, seen, until_ns, until_ns - now) == 0)
		return;
	uc_sleep_until(ctx, until_ns);
}

static const struct gpuar_clock_ops uring_clock_ops = {
	.now = uc_now,
	.sleep_until = uc_sleep_until,
	.wait_word = uc_wait_word,
};

int gpuar_uring_clock_init(struct gpuar_exec *ex)
{
	int ret = io_uring_queue_init(GPUAR_URING_ENTRIES, &ex->ring, 0);

	if (ret < 0)
		return ret;
	ex->uring_ready = true;
	ex->uring_clock.ops = &uring_clock_ops;
	ex->uring_clock.ctx = ex;
	ex->clock = &ex->uring_clock;
	return 0;
}

void gpuar_uring_clock_exit(struct gpuar_exec *ex)
{
	io_uring_queue_exit(&ex->ring);
	ex->uring_ready = false;
}
