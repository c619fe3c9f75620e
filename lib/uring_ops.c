// SPDX-License-Identifier: MIT
/*
 * The io_uring host's operations: submitting, waiting for the completion
 * of a tagged op (serving the multishot read's and EPOLLPRI's completions
 * on the way), cancelling, and ending every op at once (see uring_host.c).
 */
#include "uring_host.h"
#include "defaults.h"

#include <errno.h>
#include <poll.h>

static struct __kernel_timespec kts(u64 ns)
{
	struct __kernel_timespec ts = {
		.tv_sec = (long long)(ns / 1000000000ULL),
		.tv_nsec = (long long)(ns % 1000000000ULL),
	};
	return ts;
}

struct io_uring_sqe *uh_get_sqe(struct gpuar_uring_host *h)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&h->ring);

	if (!sqe) {
		GPUAR_SYS(io_uring_submit(&h->ring));
		sqe = io_uring_get_sqe(&h->ring);
	}
	return sqe;
}

/* Submit @sqe, prepared; on failure it becomes a no-op, never a stray op. */
int uh_submit(struct gpuar_uring_host *h, struct io_uring_sqe *sqe)
{
	int ret;

	do {
		ret = GPUAR_SYS(io_uring_submit(&h->ring));
	} while (ret == -EINTR);
	if (ret < 0) {
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, TAG_CANCEL);
	}
	return ret < 0 ? ret : 0;
}

static int cancel_submit(struct gpuar_uring_host *h, u64 tag)
{
	struct io_uring_sqe *sqe = uh_get_sqe(h);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_cancel64(sqe, tag, 0);
	io_uring_sqe_set_data64(sqe, TAG_CANCEL);
	return uh_submit(h, sqe);
}

static int wait_cqe(struct gpuar_uring_host *h, struct io_uring_cqe **cqe,
		    u64 deadline)
{
	int ret;

	/* A completion already there: liburing takes it without entering. */
	if (io_uring_peek_cqe(&h->ring, cqe) == 0)
		return 0;
	do {
		gpuar_sys_tls++;
		if (deadline == GPUAR_U64_MAX) {
			ret = io_uring_wait_cqe(&h->ring, cqe);
		} else {
			u64 now = gpuar_now_ns();
			struct __kernel_timespec ts = kts(deadline > now ?
							  deadline - now : 0);

			ret = io_uring_wait_cqe_timeout(&h->ring, cqe, &ts);
		}
	} while (ret == -EINTR);
	return ret;
}

/*
 * Cancel the host's operations that hold @fd's file (every one where @fd
 * is negative) and wait for the last completion of each, whatever else
 * comes: afterwards none runs, holds the file or writes into the host's
 * buffers. The multishot read's last records go to the stash. Returns 0,
 * or the ring's error when it cannot wait (an operation may then live on).
 */
int uh_ops_end(struct gpuar_uring_host *h, int fd)
{
	bool polls = fd < 0 || fd == h->port_fd;	/* they poll the port */
	bool ms = h->ms_armed && (fd < 0 || fd == h->ms_fd);
	bool rd = h->rd_live;				/* never between calls */
	struct io_uring_cqe *cqe;
	int ret = 0;

	if (ms)
		ret = cancel_submit(h, TAG_MULTISHOT);
	if (!ret && polls && h->pri_armed)
		ret = cancel_submit(h, TAG_PRI);
	if (!ret && polls && h->pollin_armed)
		ret = cancel_submit(h, TAG_POLL);
	if (!ret && rd)
		ret = cancel_submit(h, TAG_READ);
	while (!ret && ((ms && h->ms_armed) || (rd && h->rd_live) ||
			(polls && (h->pri_armed || h->pollin_armed)))) {
		ret = wait_cqe(h, &cqe, GPUAR_U64_MAX);
		if (!ret)
			uh_cqe_done(h, cqe);
	}
	return ret;
}

/*
 * EPOLLPRI: the port's queued records, else claim and watch the imminent
 * waits and read what the module found (gpuar_imminent_reap), into the
 * stash, no more than the multishot read's share of it leaves room for
 * (see STASH_RECYCLE_MAX). Returns the records stashed, or a negative
 * errno. With no room the claim waits: the caller has records to hand
 * out first.
 */
static int pri_serve(struct gpuar_uring_host *h, u64 deadline)
{
	u32 room = uh_stash_room(h);
	struct gpuar_record rec[GPUAR_BUSY_WAITS];
	int n;

	h->st.imminent++;
	if (!room)
		return 0;
	n = gpuar_imminent_reap(h->port, rec, room < GPUAR_BUSY_WAITS ? room :
				GPUAR_BUSY_WAITS, deadline, false);
	if (n == -EAGAIN)
		return 0;
	if (n < 0)
		return n;
	pthread_mutex_lock(&h->lock);
	uh_stash_add(h, rec, (u32)n);
	pthread_mutex_unlock(&h->lock);
	return n;
}

/* Arm the EPOLLPRI poll on @fd, once (again after it ended). */
void uh_pri_arm(struct gpuar_uring_host *h, int fd)
{
	struct io_uring_sqe *sqe;

	if (h->pri_armed || h->pri_refused)
		return;
	sqe = io_uring_get_sqe(&h->ring);
	if (!sqe)
		return;
	io_uring_prep_poll_multishot(sqe, fd, POLLPRI);
	io_uring_sqe_set_data64(sqe, TAG_PRI);
	if (uh_submit(h, sqe) == 0)
		h->pri_armed = true;
}

/*
 * Wait for the completion tagged @tag until @deadline, handling multishot
 * and EPOLLPRI completions on the way. Returns WAIT_DONE (*res: its
 * result), -ETIME, or a negative errno: the ring's, or a failing EPOLLPRI
 * serve's (where @pri_err is NULL; else the first such error is kept
 * there and the wait goes on). With tag 0 it returns 0 as soon as the
 * stash holds records; with a tag, -EINPROGRESS when an EPOLLPRI stashed
 * records meanwhile (the op tagged @tag still runs then).
 */
int uh_wait_tag(struct gpuar_uring_host *h, u64 tag, u64 deadline,
		int *res, int *pri_err)
{
	struct io_uring_cqe *cqe;
	u64 got;
	int ret, r;

	for (;;) {
		if (!tag && h->stash_len)
			return 0;
		ret = wait_cqe(h, &cqe, deadline);
		if (ret < 0)
			return ret;
		got = io_uring_cqe_get_data64(cqe);
		r = cqe->res;
		uh_cqe_done(h, cqe);
		if (tag && got == tag) {
			*res = r;
			return WAIT_DONE;
		}
		if (got == TAG_PRI && r < 0) {
			h->pri_refused = true;
			h->st.fallbacks++;
		} else if (got == TAG_PRI) {
			ret = pri_serve(h, deadline);
			if (ret < 0 && !pri_err)
				return ret;
			if (ret < 0 && !*pri_err)
				*pri_err = ret;
			if (tag && ret > 0)
				return -EINPROGRESS;
		} else if (got == TAG_MULTISHOT && !tag && !h->ms_armed &&
			   !h->stash_len) {
			/* Ended without records: say why (0 is end of file). */
			return r < 0 ? r : -EIO;
		}
		/* Else a late cancel, or the POLLIN poll while none waits. */
	}
}

/*
 * Cancel the op tagged @tag and wait for its own completion, whatever
 * comes first (records EPOLLPRI brings go to the stash, a failing serve's
 * error to @pri_err): no op outlives the call that made it. *res gets its
 * result: -ECANCELED, or what it did before the cancel reached it.
 * Returns 0, or the ring's error (the op may then run on).
 */
int uh_cancel_tag(struct gpuar_uring_host *h, u64 tag, int *res, int *pri_err)
{
	int ret = cancel_submit(h, tag);

	if (ret < 0)
		return ret;
	do {
		ret = uh_wait_tag(h, tag, GPUAR_U64_MAX, res, pri_err);
	} while (ret == -EINPROGRESS);
	return ret == WAIT_DONE ? 0 : ret;
}
