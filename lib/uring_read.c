// SPDX-License-Identifier: MIT
/*
 * The io_uring host's reads: the multishot read, the one-shot read, poll
 * + read(2) where the kernel refuses both, and the POLL_ADD and reap of
 * the user engine's fd and of an imminent port (see uring_host.c).
 */
#include "uring_host.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

static int fallback_read(int fd, struct gpuar_record *records, u32 max,
			 u64 deadline)
{
	ssize_t n;
	int ret = gpuar_fd_wait_readable(fd, deadline);

	if (ret < 0)
		return ret;
	if (ret == 0)
		return -ETIME;
	n = GPUAR_SYS(read(fd, records, (size_t)max * sizeof(*records)));
	if (n < 0)
		return -errno;
	return (int)((size_t)n / sizeof(*records));
}

static bool ms_arm(struct gpuar_uring_host *h, int fd)
{
	struct io_uring_sqe *sqe;

	if (h->ms_armed)
		return true;
	sqe = io_uring_get_sqe(&h->ring);
	if (!sqe)
		return false;
	io_uring_prep_rw(GPUAR_IORING_OP_READ_MULTISHOT, sqe, fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = MS_BGID;
	io_uring_sqe_set_data64(sqe, TAG_MULTISHOT);
	if (uh_submit(h, sqe) < 0)
		return false;
	h->ms_armed = true;
	pthread_mutex_lock(&h->lock);	/* uh_host_holds() reads it */
	h->ms_fd = fd;
	pthread_mutex_unlock(&h->lock);
	return true;
}

/*
 * One IORING_OP_READ of at most RD_RECORDS records, into the host's own
 * buffer, copied out once it completed: the read never targets the
 * caller's buffer, and is never left running when the call returns, not
 * even when the wait ends otherwise (the deadline, an EPOLLPRI that
 * brought records, a failing EPOLLPRI serve): it is cancelled and its own
 * completion waited for, whatever comes meanwhile. Records that an
 * EPOLLPRI brought are the port's: handed out here only when @fd is the
 * port's, else kept for its reader.
 */
static int read_oneshot(struct gpuar_uring_host *h, int fd,
			struct gpuar_record *records, u32 max, u64 deadline)
{
	u32 n = max < RD_RECORDS ? max : RD_RECORDS;
	struct io_uring_sqe *sqe;
	int why, ret, res = 0, pri_err = 0;

	if (h->read_refused)
		goto fallback;
	if (h->rd_live)
		return -EBUSY;	/* one the ring could not end: see uh_ops_end */
	sqe = uh_get_sqe(h);
	if (!sqe)
		return -EBUSY;
	/* Offset -1: the file position, as read(2) (a port is a stream). */
	io_uring_prep_read(sqe, fd, h->rd_buf, (unsigned int)(n * sizeof(*records)),
			   (u64)-1);
	io_uring_sqe_set_data64(sqe, TAG_READ);
	ret = uh_submit(h, sqe);
	if (ret < 0)
		return ret;
	h->rd_live = true;
	do {
		why = uh_wait_tag(h, TAG_READ, deadline, &res, NULL);
	} while (why == -EINPROGRESS && fd != h->port_fd);
	if (why != WAIT_DONE) {
		ret = uh_cancel_tag(h, TAG_READ, &res, &pri_err);
		if (ret < 0)
			return ret;
	}
	if (res == -EINVAL || res == -EOPNOTSUPP) {
		h->read_refused = true;
		h->st.fallbacks++;
		goto fallback;
	}
	if (res > 0) {
		n = (u32)res / sizeof(*records);
		h->st.reads++;
		if (why == -EINPROGRESS && n <= uh_stash_room(h)) {
			/* After the records EPOLLPRI brought, in order. */
			pthread_mutex_lock(&h->lock);
			uh_stash_add(h, h->rd_buf, n);
			pthread_mutex_unlock(&h->lock);
			return (int)uh_unstash(h, records, max);
		}
		memcpy(records, h->rd_buf, n * sizeof(*records));
		h->st.records += n;
		return (int)n;
	}
	if (why == -EINPROGRESS)
		return (int)uh_unstash(h, records, max);
	if (why == WAIT_DONE)
		return res == 0 ? -EIO : res;
	return why == -ETIME && pri_err ? pri_err : why;
fallback:
	ret = fallback_read(fd, records, max, deadline);
	if (ret > 0)
		h->st.records += (u32)ret;
	return ret;
}

/* A call's arguments and process: 0, -EINVAL or -EPERM. */
static int host_usable(const struct gpuar_uring_host *h,
		       const struct gpuar_record *records, u32 max)
{
	if (!h || !records || !max)
		return -EINVAL;
	return gpuar_forked_since(h->fork_gen) ? -EPERM : 0;
}

/* The host's calls charge its port with their system calls. */
static int charged(struct gpuar_uring_host *h, u64 mark, int ret)
{
	if (h->port)
		gpuar_sys_charge(h->port, mark);
	return ret;
}

static int read_fd(struct gpuar_uring_host *h, int fd,
		   struct gpuar_record *records, u32 max, int64_t timeout_ns)
{
	u64 deadline = gpuar_deadline_in(timeout_ns);
	int res;

	/* The stash holds the multishot fd's records: only that fd's. */
	if (h->stash_len && fd == h->ms_fd)
		return (int)uh_unstash(h, records, max);
	/* The multishot read serves the first fd it is armed on. */
	while (h->ms_possible && (h->ms_fd < 0 || h->ms_fd == fd) &&
	       ms_arm(h, fd)) {
		res = uh_wait_tag(h, 0, deadline, NULL, NULL);
		if (h->stash_len)
			return (int)uh_unstash(h, records, max);
		if (!h->ms_possible)
			break;		/* refused: counted, read one-shot */
		if (res != -ENOBUFS)
			return res;
		/* Out of buffers (we were slow): buffers are back, re-arm. */
	}
	return read_oneshot(h, fd, records, max, deadline);
}

GPUAR_EXPORT int gpuar_uring_host_read_fd(struct gpuar_uring_host *h, int fd,
					  struct gpuar_record *records,
					  uint32_t max, int64_t timeout_ns)
{
	int ret = host_usable(h, records, max);

	return ret ? ret : charged(h, gpuar_sys_mark(),
				   read_fd(h, fd, records, max, timeout_ns));
}

/*
 * Arm the POLLIN poll of reap_polled on @fd: multishot (Linux 5.13), left
 * armed across calls, so records that came through EPOLLPRI meanwhile
 * leave nothing to cancel; one-shot where the kernel refused that.
 * Returns 0, or a negative errno (no SQE, or the submit failed).
 */
static int pollin_arm(struct gpuar_uring_host *h, int fd)
{
	struct io_uring_sqe *sqe;
	int res;

	if (h->pollin_armed)
		return 0;
	sqe = io_uring_get_sqe(&h->ring);
	if (!sqe)
		return -EBUSY;
	if (h->pollin_ms_refused)
		io_uring_prep_poll_add(sqe, fd, POLLIN);
	else
		io_uring_prep_poll_multishot(sqe, fd, POLLIN);
	io_uring_sqe_set_data64(sqe, TAG_POLL);
	res = uh_submit(h, sqe);
	if (res < 0)
		return res;
	h->pollin_armed = true;
	h->st.poll_arms++;
	return 0;
}

/*
 * Poll the port's fd for POLLIN, then reap without blocking, until a
 * record or @deadline: the user engine's fd (an epoll fd, which read(2)
 * cannot take), and the module's port with imminent readiness where no
 * multishot read runs. io_uring's own poll of a read takes EPOLLPRI for
 * readiness, so a one-shot IORING_OP_READ armed while a wait is raised
 * would be retried until io_uring handed it to a worker thread, blocked
 * in the module's read() (busy-reading there) until cancelled; a
 * POLL_ADD asks for POLLIN alone. The reap claims what is imminent.
 * The poll stays armed when EPOLLPRI brought the records (multishot):
 * cancelling it would cost two more trips into the kernel before they
 * are handed back.
 */
static int reap_polled(struct gpuar_uring_host *h, struct gpuar_record *records,
		       u32 max, u64 deadline)
{
	int fd = h->port_fd;
	int n, why, res, ret, pri_err = 0;

	for (;;) {
		if (h->stash_len)
			return (int)uh_unstash(h, records, max);
		n = gpuar_reap(h->port, records, max, 0);
		if (n != -EAGAIN) {
			if (n > 0)
				h->st.records += (u32)n;
			return n;
		}
		if (gpuar_now_ns() >= deadline)
			return -ETIME;
		if (pollin_arm(h, fd) < 0) {
			h->st.fallbacks++;
			ret = gpuar_fd_wait_readable(fd, deadline);
			if (ret < 0)
				return ret;
			continue;
		}
		why = uh_wait_tag(h, TAG_POLL, deadline, &res, NULL);
		/* One-shot: a poll still armed must not outlive us. */
		if (why != WAIT_DONE && h->pollin_ms_refused && h->pollin_armed) {
			ret = uh_cancel_tag(h, TAG_POLL, &res, &pri_err);
			if (ret < 0)
				return ret;
		}
		if (why == -ETIME || why == -EINPROGRESS)
			continue;	/* records stashed via EPOLLPRI */
		if (why < 0)
			return why;	/* a failing EPOLLPRI serve, or the ring */
		if (res == -EINVAL && !h->pollin_ms_refused) {
			/* No multishot poll here: one-shot from now. */
			h->pollin_ms_refused = true;
			continue;
		}
		if (res < 0) {
			h->st.fallbacks++;
			ret = gpuar_fd_wait_readable(fd, deadline);
			if (ret < 0)
				return ret;
		} else {
			h->st.polls++;
		}
	}
}

static int host_reap(struct gpuar_uring_host *h, struct gpuar_record *records,
		     u32 max, int64_t timeout_ns)
{
	u64 deadline = gpuar_deadline_in(timeout_ns);
	int fd = h->port_fd, n;

	if (gpuar_port_engine(h->port) == GPUAR_ENGINE_KERNEL) {
		/* Records the host read come first, then the area's. */
		if (h->stash_len && fd == h->ms_fd)
			return (int)uh_unstash(h, records, max);
		n = gpuar_port_area_take(h->port, records, max);
		if (n > 0) {
			h->st.records += (u32)n;
			return n;
		}
		if (!gpuar_port_imminent(h->port))
			return read_fd(h, fd, records, max, timeout_ns);
		uh_pri_arm(h, fd);
		/* The multishot read takes a raised wait in its stride. */
		if (h->ms_possible && (h->ms_fd < 0 || h->ms_fd == fd))
			return read_fd(h, fd, records, max, timeout_ns);
	}
	return reap_polled(h, records, max, deadline);
}

GPUAR_EXPORT int gpuar_uring_host_reap(struct gpuar_uring_host *h,
				       struct gpuar_record *records,
				       uint32_t max, int64_t timeout_ns)
{
	int ret = host_usable(h, records, max);

	if (ret)
		return ret;
	if (h->port_closed)
		return -EBADF;
	if (!h->port)
		return -EINVAL;
	return charged(h, gpuar_sys_mark(),
		       host_reap(h, records, max, timeout_ns));
}
