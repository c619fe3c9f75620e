// SPDX-License-Identifier: MIT
/*
 * Reading a port's records through io_uring.
 *
 * Kernel engine (or any fd yielding whole records): a multishot read
 * (IORING_OP_READ_MULTISHOT, Linux 6.7) from a ring of provided buffers
 * where the kernel has it, armed once and delivering every record as it
 * is queued; else one IORING_OP_READ per call; else, if the kernel refuses
 * that too, poll + read(2). Each refusal is counted. liburing 2.3 (Debian
 * bookworm) has no helper for the multishot read, so its SQE is prepared
 * by hand from the kernel's opcode number; the kernel's probe decides.
 *
 * User engine: its fd is an epoll fd, not readable with read(2):
 * IORING_OP_POLL_ADD on it, then gpuar_reap().
 *
 * Imminent readiness (GPUAR_PORT_IMMINENT) on the kernel engine: beside
 * the record read, a multishot IORING_OP_POLL_ADD on EPOLLPRI (Linux
 * 5.13), armed once. Its completion, at a predicted wait's early wake,
 * has the waiting thread reap as gpuar_reap() does (gpuar_imminent_reap):
 * the records already queued, else claim the imminent waits, watch their
 * words, and read the records the module finds on checking the claimed
 * waits; into the stash, and the wait returns them. Where no multishot
 * read runs, the record read is a POLL_ADD for POLLIN and a non-blocking
 * reap, as on the user engine, not a one-shot IORING_OP_READ (see
 * reap_polled). (The user engine's fd turns readable at the early wake,
 * and its gpuar_reap() claims.)
 */
#include "port.h"
#include "defaults.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_READ 1
#define TAG_CANCEL 2
#define TAG_MULTISHOT 3
#define TAG_POLL 4
#define TAG_PRI 5

#define MS_BGID 0x6a7
#define MS_BUFS 16				/* power of two */
#define MS_BUF_RECORDS 64
#define MS_BUF_BYTES (MS_BUF_RECORDS * sizeof(struct gpuar_record))
/*
 * Records delivered but not yet handed out. A buffer goes back to the
 * kernel only while the stash could take every buffer the kernel holds,
 * so the stash never overflows: a slow reader leaves the kernel without
 * buffers, the multishot read ends with ENOBUFS, and records wait in the
 * port's own queue (nothing is dropped) until the next call re-arms it.
 */
#define STASH_RECORDS (2 * MS_BUFS * MS_BUF_RECORDS)
#define STASH_RECYCLE_MAX (STASH_RECORDS - MS_BUFS * MS_BUF_RECORDS)

struct gpuar_uring_host {
	struct gpuar_port *port;
	struct io_uring ring;
	struct gpuar_uring_host_stats st;
	bool read_refused;	/* IORING_OP_READ refused once: poll + read */
	/* multishot read */
	bool ms_possible;	/* the kernel probes it and it was not refused */
	bool ms_armed;
	int ms_fd;		/* the fd it is bound to (-1: none yet) */
	struct io_uring_buf_ring *br;
	void *bufs;
	/* records delivered but not yet handed out, in order */
	struct gpuar_record *stash;
	u32 stash_head, stash_len;
	unsigned short held[MS_BUFS];	/* buffers not yet given back */
	u32 nheld;
	unsigned long fork_gen;	/* gpuar_fork_generation() at creation */
	/* imminent readiness: the multishot EPOLLPRI poll */
	bool pri_armed;
	bool pri_refused;	/* the kernel refused it: reads only */
	/* reap_polled's POLLIN poll: multishot, left armed between calls */
	bool pollin_armed;
	bool pollin_ms_refused;	/* one-shot polls, cancelled after use */
};

static struct __kernel_timespec kts(u64 ns)
{
	struct __kernel_timespec ts = {
		.tv_sec = (long long)(ns / 1000000000ULL),
		.tv_nsec = (long long)(ns % 1000000000ULL),
	};
	return ts;
}

static bool kernel_has_multishot_read(struct io_uring *ring)
{
	struct io_uring_probe *probe = io_uring_get_probe_ring(ring);
	bool ok;

	if (!probe)
		return false;
	ok = io_uring_opcode_supported(probe, GPUAR_IORING_OP_READ_MULTISHOT);
	io_uring_free_probe(probe);
	return ok;
}

static void ms_setup(struct gpuar_uring_host *h)
{
	struct io_uring_buf_reg reg = { 0 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t ring_bytes = MS_BUFS * sizeof(struct io_uring_buf);
	int i;

	h->ms_fd = -1;
	if (!kernel_has_multishot_read(&h->ring))
		return;
	if (posix_memalign((void **)&h->br, page, ring_bytes < page ? page : ring_bytes))
		return;
	h->bufs = malloc(MS_BUFS * MS_BUF_BYTES);
	if (!h->bufs)
		goto fail;
	reg.ring_addr = (u64)(uintptr_t)h->br;
	reg.ring_entries = MS_BUFS;
	reg.bgid = MS_BGID;
	if (io_uring_register_buf_ring(&h->ring, &reg, 0) < 0)
		goto fail;
	io_uring_buf_ring_init(h->br);
	for (i = 0; i < MS_BUFS; i++)
		io_uring_buf_ring_add(h->br, (char *)h->bufs + (size_t)i * MS_BUF_BYTES,
				      MS_BUF_BYTES, (unsigned short)i,
				      io_uring_buf_ring_mask(MS_BUFS), i);
	io_uring_buf_ring_advance(h->br, MS_BUFS);
	h->ms_possible = true;
	return;
fail:
	free(h->bufs);
	free(h->br);
	h->bufs = NULL;
	h->br = NULL;
}

GPUAR_EXPORT int gpuar_uring_host_new(struct gpuar_uring_host **out,
				      struct gpuar_port *port)
{
	struct gpuar_uring_host *h;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->stash = calloc(STASH_RECORDS, sizeof(*h->stash));
	if (!h->stash) {
		free(h);
		return -ENOMEM;
	}
	ret = io_uring_queue_init(8, &h->ring, 0);
	if (ret < 0) {
		free(h->stash);
		free(h);
		return ret;
	}
	h->port = port;
	h->fork_gen = gpuar_fork_generation();
	ms_setup(h);
	*out = h;
	return 0;
}

static void ms_complete(struct gpuar_uring_host *h,
			const struct io_uring_cqe *cqe);

/*
 * End an armed multishot read before its buffers go: closing the ring
 * does not end it while another process (a forked child) holds the ring
 * fd, and the kernel would go on copying records into freed memory. Its
 * final completion (without F_MORE) says it is over.
 */
static void ms_end(struct gpuar_uring_host *h)
{
	struct io_uring_sqe *sqe;

	if (!h->ms_armed)
		return;
	sqe = io_uring_get_sqe(&h->ring);
	if (!sqe) {
		io_uring_submit(&h->ring);
		sqe = io_uring_get_sqe(&h->ring);
	}
	if (!sqe)
		return;
	io_uring_prep_cancel64(sqe, TAG_MULTISHOT, 0);
	io_uring_sqe_set_data64(sqe, TAG_CANCEL);
	while (io_uring_submit(&h->ring) == -EINTR)
		;
	/* ms_complete() clears ms_armed at the final completion. */
	while (h->ms_armed) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_wait_cqe(&h->ring, &cqe);

		if (ret == -EINTR)
			continue;
		if (ret < 0)
			break;
		if (io_uring_cqe_get_data64(cqe) == TAG_MULTISHOT)
			ms_complete(h, cqe);
		io_uring_cqe_seen(&h->ring, cqe);
	}
	if (h->br)
		io_uring_unregister_buf_ring(&h->ring, MS_BGID);
}

GPUAR_EXPORT void gpuar_uring_host_free(struct gpuar_uring_host *h)
{
	if (!h)
		return;
	/* A forked child's ring is its parent's: nothing of it to end. */
	if (!gpuar_forked_since(h->fork_gen))
		ms_end(h);
	io_uring_queue_exit(&h->ring);
	free(h->bufs);
	free(h->br);
	free(h->stash);
	free(h);
}

GPUAR_EXPORT void gpuar_uring_host_stats(const struct gpuar_uring_host *h,
					 struct gpuar_uring_host_stats *stats)
{
	*stats = h->st;
}

/* Give held buffers back to the kernel while the stash has room. */
static void recycle(struct gpuar_uring_host *h)
{
	u32 n = 0;

	while (h->nheld && h->stash_len <= STASH_RECYCLE_MAX) {
		unsigned short bid = h->held[--h->nheld];

		io_uring_buf_ring_add(h->br, (char *)h->bufs + (size_t)bid * MS_BUF_BYTES,
				      MS_BUF_BYTES, bid,
				      io_uring_buf_ring_mask(MS_BUFS), (int)n++);
	}
	if (n)
		io_uring_buf_ring_advance(h->br, (int)n);
}

static u32 unstash(struct gpuar_uring_host *h, struct gpuar_record *out, u32 max)
{
	u32 n = 0;

	while (n < max && h->stash_len) {
		out[n++] = h->stash[h->stash_head];
		h->stash_head = (h->stash_head + 1) % STASH_RECORDS;
		h->stash_len--;
	}
	h->st.records += n;
	recycle(h);
	return n;
}

/* A multishot completion: stash its records, give its buffer back. */
static void ms_complete(struct gpuar_uring_host *h, const struct io_uring_cqe *cqe)
{
	if (!(cqe->flags & IORING_CQE_F_MORE))
		h->ms_armed = false;	/* ended (error, ENOBUFS): re-armed later */
	if (cqe->res == -EINVAL || cqe->res == -EOPNOTSUPP) {
		h->ms_possible = false;	/* refused: one-shot reads from now on */
		h->st.fallbacks++;
		return;
	}
	if (cqe->res > 0 && (cqe->flags & IORING_CQE_F_BUFFER)) {
		unsigned int bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
		const struct gpuar_record *r = (const void *)((char *)h->bufs +
						(size_t)bid * MS_BUF_BYTES);
		u32 i, n = (u32)cqe->res / sizeof(*r);

		/* Fits: see STASH_RECYCLE_MAX. */
		for (i = 0; i < n; i++) {
			h->stash[(h->stash_head + h->stash_len) % STASH_RECORDS] = r[i];
			h->stash_len++;
		}
		h->st.reads++;
		h->st.multishot++;
		h->held[h->nheld++] = (unsigned short)bid;
		recycle(h);
	}
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
	u32 room = h->stash_len < STASH_RECYCLE_MAX ?
		   STASH_RECYCLE_MAX - h->stash_len : 0;
	struct gpuar_record rec[GPUAR_BUSY_WAITS];
	int n, i;

	h->st.imminent++;
	if (!room)
		return 0;
	n = gpuar_imminent_reap(h->port, rec, room < GPUAR_BUSY_WAITS ? room :
				GPUAR_BUSY_WAITS, deadline);
	if (n == -EAGAIN)
		return 0;
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		h->stash[(h->stash_head + h->stash_len) % STASH_RECORDS] = rec[i];
		h->stash_len++;
	}
	return n;
}

/* Arm the EPOLLPRI poll on @fd, once (again after it ended). */
static void pri_arm(struct gpuar_uring_host *h, int fd)
{
	struct io_uring_sqe *sqe;

	if (h->pri_armed || h->pri_refused)
		return;
	sqe = io_uring_get_sqe(&h->ring);
	if (!sqe)
		return;
	io_uring_prep_poll_multishot(sqe, fd, POLLPRI);
	io_uring_sqe_set_data64(sqe, TAG_PRI);
	if (io_uring_submit(&h->ring) >= 0)
		h->pri_armed = true;
}

/*
 * Wait for a completion tagged @tag until @deadline, handling multishot
 * and EPOLLPRI completions on the way. Returns its result, or -ETIME.
 * With tag 0 it returns 0 as soon as the stash holds records; with a tag,
 * -EINPROGRESS when an EPOLLPRI stashed records meanwhile.
 */
static int wait_tag(struct gpuar_uring_host *h, u64 tag, u64 deadline)
{
	struct io_uring_cqe *cqe;
	int ret, res;

	for (;;) {
		if (!tag && h->stash_len)
			return 0;
		if (deadline == GPUAR_U64_MAX) {
			ret = io_uring_wait_cqe(&h->ring, &cqe);
		} else {
			u64 now = gpuar_now_ns();
			struct __kernel_timespec ts = kts(deadline > now ?
							  deadline - now : 0);

			ret = io_uring_wait_cqe_timeout(&h->ring, &cqe, &ts);
		}
		if (ret == -EINTR)
			continue;
		if (ret < 0)
			return ret;
		if (io_uring_cqe_get_data64(cqe) == TAG_PRI) {
			res = cqe->res;
			if (!(cqe->flags & IORING_CQE_F_MORE))
				h->pri_armed = false;
			io_uring_cqe_seen(&h->ring, cqe);
			if (res < 0) {
				h->pri_refused = true;
				h->st.fallbacks++;
				continue;
			}
			ret = pri_serve(h, deadline);
			if (ret < 0)
				return ret;
			/* A one-shot read still waits: the caller cancels it. */
			if (tag && ret > 0)
				return -EINPROGRESS;
			continue;
		}
		if (io_uring_cqe_get_data64(cqe) == TAG_MULTISHOT) {
			res = cqe->res;
			ms_complete(h, cqe);
			io_uring_cqe_seen(&h->ring, cqe);
			/* Ended without records: say why (0 is end of file). */
			if (!tag && !h->ms_armed && !h->stash_len)
				return res < 0 ? res : -EIO;
			continue;
		}
		if (io_uring_cqe_get_data64(cqe) == TAG_POLL &&
		    !(cqe->flags & IORING_CQE_F_MORE))
			h->pollin_armed = false;
		if (io_uring_cqe_get_data64(cqe) != tag) {
			/* A late cancel, or the POLLIN poll while none waits. */
			io_uring_cqe_seen(&h->ring, cqe);
			continue;
		}
		res = cqe->res;
		io_uring_cqe_seen(&h->ring, cqe);
		return res;
	}
}

/* Cancel the op tagged @tag and wait for its completion; keep a late result. */
static int cancel_tag(struct gpuar_uring_host *h, u64 tag)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&h->ring);
	int res;

	if (!sqe)
		return -ETIME;
	io_uring_prep_cancel64(sqe, tag, 0);
	io_uring_sqe_set_data64(sqe, TAG_CANCEL);
	io_uring_submit(&h->ring);
	do {
		res = wait_tag(h, tag, GPUAR_U64_MAX);
	} while (res == -EINPROGRESS);	/* records stashed meanwhile */
	return res == -ECANCELED ? -ETIME : res;
}

static int fallback_read(int fd, struct gpuar_record *records, u32 max,
			 u64 deadline)
{
	ssize_t n;
	int ret = gpuar_fd_wait_readable(fd, deadline);

	if (ret < 0)
		return ret;
	if (ret == 0)
		return -ETIME;
	n = read(fd, records, (size_t)max * sizeof(*records));
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
	if (io_uring_submit(&h->ring) < 0)
		return false;
	h->ms_armed = true;
	h->ms_fd = fd;
	return true;
}

static int read_oneshot(struct gpuar_uring_host *h, int fd,
			struct gpuar_record *records, u32 max, u64 deadline)
{
	struct io_uring_sqe *sqe;
	int res;

	if (h->read_refused)
		goto fallback;
	sqe = io_uring_get_sqe(&h->ring);
	if (!sqe)
		return -EBUSY;
	/* Offset -1: the file position, as read(2) (a port is a stream). */
	io_uring_prep_read(sqe, fd, records, (unsigned int)(max * sizeof(*records)),
			   (u64)-1);
	io_uring_sqe_set_data64(sqe, TAG_READ);
	res = io_uring_submit(&h->ring);
	if (res < 0)
		return res;
	res = wait_tag(h, TAG_READ, deadline);
	if (res == -EINPROGRESS) {
		/* Records came through EPOLLPRI: the stash has them. */
		res = cancel_tag(h, TAG_READ);
		if (res == -ETIME)
			return (int)unstash(h, records, max);
	}
	if (res == -ETIME)
		res = cancel_tag(h, TAG_READ);
	if (res != -EINVAL && res != -EOPNOTSUPP) {
		if (res > 0) {
			h->st.reads++;
			res = (int)((u32)res / sizeof(*records));
			h->st.records += (u32)res;
		} else if (res == 0) {
			res = -EIO;
		}
		return res;
	}
	h->read_refused = true;
	h->st.fallbacks++;
fallback:
	res = fallback_read(fd, records, max, deadline);
	if (res > 0)
		h->st.records += (u32)res;
	return res;
}

GPUAR_EXPORT int gpuar_uring_host_read_fd(struct gpuar_uring_host *h, int fd,
					  struct gpuar_record *records,
					  uint32_t max, int64_t timeout_ns)
{
	u64 deadline = gpuar_deadline_in(timeout_ns);
	int res;

	if (!h || !records || !max)
		return -EINVAL;
	if (gpuar_forked_since(h->fork_gen))
		return -EPERM;
	/* The stash holds the multishot fd's records: only that fd's. */
	if (h->stash_len && fd == h->ms_fd)
		return (int)unstash(h, records, max);
	/* The multishot read serves the first fd it is armed on. */
	while (h->ms_possible && (h->ms_fd < 0 || h->ms_fd == fd) &&
	       ms_arm(h, fd)) {
		res = wait_tag(h, 0, deadline);
		if (h->stash_len)
			return (int)unstash(h, records, max);
		if (!h->ms_possible)
			break;		/* refused: counted, read one-shot */
		if (res != -ENOBUFS)
			return res;
		/* Out of buffers (we were slow): buffers are back, re-arm. */
	}
	return read_oneshot(h, fd, records, max, deadline);
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
	res = io_uring_submit(&h->ring);
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
	int fd = gpuar_port_fd(h->port);
	int n, res;

	for (;;) {
		if (h->stash_len)
			return (int)unstash(h, records, max);
		n = gpuar_reap(h->port, records, max, 0);
		if (n != -EAGAIN) {
			if (n > 0)
				h->st.records += (u32)n;
			return n;
		}
		if (gpuar_now_ns() >= deadline)
			return -ETIME;
		res = pollin_arm(h, fd);
		if (res >= 0) {
			res = wait_tag(h, TAG_POLL, deadline);
			/* One-shot: a poll still armed must not outlive us. */
			if ((res == -ETIME || res == -EINPROGRESS) &&
			    h->pollin_ms_refused && h->pollin_armed) {
				res = cancel_tag(h, TAG_POLL);
				h->pollin_armed = false;
			}
			if (res == -EINPROGRESS)
				continue;	/* records stashed via EPOLLPRI */
			if (res == -EINVAL && !h->pollin_ms_refused) {
				/* No multishot poll here: one-shot from now. */
				h->pollin_ms_refused = true;
				h->pollin_armed = false;
				continue;
			}
		}
		if (res == -ETIME)
			continue;
		if (res < 0) {
			h->st.fallbacks++;
			res = gpuar_fd_wait_readable(fd, deadline);
			if (res < 0)
				return res;
		} else {
			h->st.polls++;
		}
	}
}

GPUAR_EXPORT int gpuar_uring_host_reap(struct gpuar_uring_host *h,
				       struct gpuar_record *records,
				       uint32_t max, int64_t timeout_ns)
{
	u64 deadline = gpuar_deadline_in(timeout_ns);
	int fd;

	if (!h || !h->port || !records || !max)
		return -EINVAL;
	if (gpuar_forked_since(h->fork_gen))
		return -EPERM;
	fd = gpuar_port_fd(h->port);
	if (gpuar_port_engine(h->port) == GPUAR_ENGINE_KERNEL) {
		if (!gpuar_port_imminent(h->port))
			return gpuar_uring_host_read_fd(h, fd, records, max,
							timeout_ns);
		pri_arm(h, fd);
		/* The multishot read takes a raised wait in its stride. */
		if (h->ms_possible && (h->ms_fd < 0 || h->ms_fd == fd))
			return gpuar_uring_host_read_fd(h, fd, records, max,
							timeout_ns);
	}
	return reap_polled(h, records, max, deadline);
}
