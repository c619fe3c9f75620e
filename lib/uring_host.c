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
 *
 * The host's armed ops hold the port's file, and the records they read
 * have left the port's queue. So the first host of a port wraps the
 * port's engine ops (struct host_port): its cancel also finds the records
 * a host holds (-EALREADY), and its close ends the hosts' ops on the port
 * before the engine closes, after which their reaps answer -EBADF.
 */
#include "port.h"
#include "defaults.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
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
/* A one-shot read's most records: its buffer is the host's (see read_oneshot). */
#define RD_RECORDS MS_BUF_RECORDS

struct host_port;

struct gpuar_uring_host {
	struct gpuar_port *port;	/* NULL: none, or it was closed */
	int port_fd;			/* its fd, while it is open (else -1) */
	bool port_closed;		/* closed before the host: -EBADF */
	struct host_port *hp;		/* the port's binding (port_bind) */
	struct gpuar_uring_host *next;	/* on the binding's list */
	struct io_uring ring;
	struct gpuar_uring_host_stats st;
	bool read_refused;	/* IORING_OP_READ refused once: poll + read */
	/* the one-shot read: into rd_buf, never into a caller's buffer */
	struct gpuar_record *rd_buf;
	bool rd_live;
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
	/*
	 * Held over every change to the stash, to the held buffers and to
	 * the completion queue's head, so that a cancel on the port, from
	 * any thread, can look at the records the host holds (host_holds).
	 */
	pthread_mutex_t lock;
};

/*
 * A port read through hosts. Its engine's ops are wrapped while it is
 * open: the port's ops point at this copy, whose cancel also finds the
 * records its hosts hold and whose close first ends their operations on
 * the port. Made by the port's first host, freed at the port's close.
 */
struct host_port {
	struct gpuar_engine_ops ops;	/* first: the port's ops point here */
	const struct gpuar_engine_ops *engine;
	pthread_mutex_t lock;		/* the list of hosts */
	struct gpuar_uring_host *hosts;
};

/* Binding ports: one at a time, so that a port gets one binding. */
static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;

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

/* ------------------------------------------------------------ the stash */

static void stash_add(struct gpuar_uring_host *h, const struct gpuar_record *r,
		      u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		h->stash[(h->stash_head + h->stash_len) % STASH_RECORDS] = r[i];
		h->stash_len++;
	}
}

/*
 * Room for records that do not come from the multishot read's buffers,
 * so that the stash keeps room for every buffer the kernel holds.
 */
static u32 stash_room(const struct gpuar_uring_host *h)
{
	return h->stash_len < STASH_RECYCLE_MAX ? STASH_RECYCLE_MAX - h->stash_len : 0;
}

/* Give held buffers back to the kernel while the stash has room (locked). */
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

	pthread_mutex_lock(&h->lock);
	while (n < max && h->stash_len) {
		out[n++] = h->stash[h->stash_head];
		h->stash_head = (h->stash_head + 1) % STASH_RECORDS;
		h->stash_len--;
	}
	recycle(h);
	pthread_mutex_unlock(&h->lock);
	h->st.records += n;
	return n;
}

/* The records of a multishot completion's buffer, or NULL. */
static const struct gpuar_record *ms_records(const struct gpuar_uring_host *h,
					     const struct io_uring_cqe *cqe, u32 *n)
{
	unsigned int bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;

	if (cqe->res <= 0 || !(cqe->flags & IORING_CQE_F_BUFFER) || bid >= MS_BUFS)
		return NULL;
	*n = (u32)cqe->res / sizeof(struct gpuar_record);
	return (const void *)((char *)h->bufs + (size_t)bid * MS_BUF_BYTES);
}

/* A multishot completion: stash its records, give its buffer back (locked). */
static void ms_complete(struct gpuar_uring_host *h, const struct io_uring_cqe *cqe)
{
	const struct gpuar_record *r;
	u32 n;

	if (!(cqe->flags & IORING_CQE_F_MORE))
		h->ms_armed = false;	/* ended (error, ENOBUFS): re-armed later */
	if (cqe->res == -EINVAL || cqe->res == -EOPNOTSUPP) {
		h->ms_possible = false;	/* refused: one-shot reads from now on */
		h->st.fallbacks++;
		return;
	}
	r = ms_records(h, cqe, &n);
	if (!r)
		return;
	stash_add(h, r, n);	/* fits: see STASH_RECYCLE_MAX */
	h->st.reads++;
	h->st.multishot++;
	h->held[h->nheld++] = (unsigned short)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
	recycle(h);
}

/*
 * Done with a completion: note what it ends (an op without more to come),
 * stash the multishot read's records, and move the queue's head, under the
 * lock that host_holds() takes.
 */
static void cqe_done(struct gpuar_uring_host *h, struct io_uring_cqe *cqe)
{
	bool more = cqe->flags & IORING_CQE_F_MORE;

	pthread_mutex_lock(&h->lock);
	switch (io_uring_cqe_get_data64(cqe)) {
	case TAG_MULTISHOT:
		ms_complete(h, cqe);
		break;
	case TAG_PRI:
		h->pri_armed &= more;
		break;
	case TAG_POLL:
		h->pollin_armed &= more;
		break;
	case TAG_READ:
		h->rd_live = false;
		break;
	}
	io_uring_cqe_seen(&h->ring, cqe);
	pthread_mutex_unlock(&h->lock);
}

static bool completed(const struct gpuar_record *r, u64 user_data)
{
	return r->user_data == user_data && r->outcome != GPUAR_OUTCOME_CANCELLED;
}

/*
 * Whether the host holds a record of @user_data, other than a
 * cancellation, that it has not handed out: in the stash, or delivered by
 * the multishot read on the port's fd and not yet handled. Any thread.
 */
static bool host_holds(struct gpuar_uring_host *h, u64 user_data)
{
	const struct gpuar_record *r;
	struct io_uring_cqe *cqe;
	unsigned int head;
	bool found = false;
	u32 i, n;

	pthread_mutex_lock(&h->lock);
	for (i = 0; i < h->stash_len && !found; i++)
		found = completed(&h->stash[(h->stash_head + i) % STASH_RECORDS],
				  user_data);
	io_uring_for_each_cqe(&h->ring, head, cqe) {
		if (found || h->ms_fd != h->port_fd)
			break;
		if (io_uring_cqe_get_data64(cqe) != TAG_MULTISHOT)
			continue;
		r = ms_records(h, cqe, &n);
		for (i = 0; r && i < n && !found; i++)
			found = completed(&r[i], user_data);
	}
	pthread_mutex_unlock(&h->lock);
	return found;
}

/* ----------------------------------------------------------------- ops */

static struct io_uring_sqe *get_sqe(struct gpuar_uring_host *h)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&h->ring);

	if (!sqe) {
		io_uring_submit(&h->ring);
		sqe = io_uring_get_sqe(&h->ring);
	}
	return sqe;
}

/* Submit @sqe, prepared; on failure it becomes a no-op, never a stray op. */
static int submit(struct gpuar_uring_host *h, struct io_uring_sqe *sqe)
{
	int ret;

	do {
		ret = io_uring_submit(&h->ring);
	} while (ret == -EINTR);
	if (ret < 0) {
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, TAG_CANCEL);
	}
	return ret < 0 ? ret : 0;
}

static int cancel_submit(struct gpuar_uring_host *h, u64 tag)
{
	struct io_uring_sqe *sqe = get_sqe(h);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_cancel64(sqe, tag, 0);
	io_uring_sqe_set_data64(sqe, TAG_CANCEL);
	return submit(h, sqe);
}

static int wait_cqe(struct gpuar_uring_host *h, struct io_uring_cqe **cqe,
		    u64 deadline)
{
	int ret;

	do {
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
static int ops_end(struct gpuar_uring_host *h, int fd)
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
			cqe_done(h, cqe);
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
	u32 room = stash_room(h);
	struct gpuar_record rec[GPUAR_BUSY_WAITS];
	int n;

	h->st.imminent++;
	if (!room)
		return 0;
	n = gpuar_imminent_reap(h->port, rec, room < GPUAR_BUSY_WAITS ? room :
				GPUAR_BUSY_WAITS, deadline);
	if (n == -EAGAIN)
		return 0;
	if (n < 0)
		return n;
	pthread_mutex_lock(&h->lock);
	stash_add(h, rec, (u32)n);
	pthread_mutex_unlock(&h->lock);
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
	if (submit(h, sqe) == 0)
		h->pri_armed = true;
}

/* wait_tag: the completion tagged so came; *res has its result. */
#define WAIT_DONE 1

/*
 * Wait for the completion tagged @tag until @deadline, handling multishot
 * and EPOLLPRI completions on the way. Returns WAIT_DONE (*res: its
 * result), -ETIME, or a negative errno: the ring's, or a failing EPOLLPRI
 * serve's (where @pri_err is NULL; else the first such error is kept
 * there and the wait goes on). With tag 0 it returns 0 as soon as the
 * stash holds records; with a tag, -EINPROGRESS when an EPOLLPRI stashed
 * records meanwhile (the op tagged @tag still runs then).
 */
static int wait_tag(struct gpuar_uring_host *h, u64 tag, u64 deadline,
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
		cqe_done(h, cqe);
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
static int cancel_tag(struct gpuar_uring_host *h, u64 tag, int *res, int *pri_err)
{
	int ret = cancel_submit(h, tag);

	if (ret < 0)
		return ret;
	do {
		ret = wait_tag(h, tag, GPUAR_U64_MAX, res, pri_err);
	} while (ret == -EINPROGRESS);
	return ret == WAIT_DONE ? 0 : ret;
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
	if (submit(h, sqe) < 0)
		return false;
	h->ms_armed = true;
	pthread_mutex_lock(&h->lock);	/* host_holds() reads it */
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
		return -EBUSY;	/* one the ring could not end: see ops_end */
	sqe = get_sqe(h);
	if (!sqe)
		return -EBUSY;
	/* Offset -1: the file position, as read(2) (a port is a stream). */
	io_uring_prep_read(sqe, fd, h->rd_buf, (unsigned int)(n * sizeof(*records)),
			   (u64)-1);
	io_uring_sqe_set_data64(sqe, TAG_READ);
	ret = submit(h, sqe);
	if (ret < 0)
		return ret;
	h->rd_live = true;
	do {
		why = wait_tag(h, TAG_READ, deadline, &res, NULL);
	} while (why == -EINPROGRESS && fd != h->port_fd);
	if (why != WAIT_DONE) {
		ret = cancel_tag(h, TAG_READ, &res, &pri_err);
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
		if (why == -EINPROGRESS && n <= stash_room(h)) {
			/* After the records EPOLLPRI brought, in order. */
			pthread_mutex_lock(&h->lock);
			stash_add(h, h->rd_buf, n);
			pthread_mutex_unlock(&h->lock);
			return (int)unstash(h, records, max);
		}
		memcpy(records, h->rd_buf, n * sizeof(*records));
		h->st.records += n;
		return (int)n;
	}
	if (why == -EINPROGRESS)
		return (int)unstash(h, records, max);
	if (why == WAIT_DONE)
		return res == 0 ? -EIO : res;
	return why == -ETIME && pri_err ? pri_err : why;
fallback:
	ret = fallback_read(fd, records, max, deadline);
	if (ret > 0)
		h->st.records += (u32)ret;
	return ret;
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
		res = wait_tag(h, 0, deadline, NULL, NULL);
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
	res = submit(h, sqe);
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
			return (int)unstash(h, records, max);
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
		why = wait_tag(h, TAG_POLL, deadline, &res, NULL);
		/* One-shot: a poll still armed must not outlive us. */
		if (why != WAIT_DONE && h->pollin_ms_refused && h->pollin_armed) {
			ret = cancel_tag(h, TAG_POLL, &res, &pri_err);
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

GPUAR_EXPORT int gpuar_uring_host_reap(struct gpuar_uring_host *h,
				       struct gpuar_record *records,
				       uint32_t max, int64_t timeout_ns)
{
	u64 deadline = gpuar_deadline_in(timeout_ns);
	int fd;

	if (!h || !records || !max)
		return -EINVAL;
	if (gpuar_forked_since(h->fork_gen))
		return -EPERM;
	if (h->port_closed)
		return -EBADF;
	if (!h->port)
		return -EINVAL;
	fd = h->port_fd;
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

/* ---------------------------------------------------- the port's binding */

static struct host_port *hp_of(struct gpuar_port *port)
{
	return (struct host_port *)(uintptr_t)port->ops;
}

/*
 * The port's cancel: a wait whose record a host holds (read out of the
 * port's queue by the multishot read or at an EPOLLPRI) has completed and
 * its record is queued, so -EALREADY, as gpuar_cancel() promises.
 */
static int hp_cancel(struct gpuar_port *port, u64 user_data)
{
	struct host_port *hp = hp_of(port);
	struct gpuar_uring_host *h;
	int ret = hp->engine->cancel(port, user_data);

	if (ret != -ENOENT)
		return ret;
	pthread_mutex_lock(&hp->lock);
	for (h = hp->hosts; h && ret == -ENOENT; h = h->next)
		if (host_holds(h, user_data))
			ret = -EALREADY;
	pthread_mutex_unlock(&hp->lock);
	return ret;
}

/*
 * The port closes before its hosts: each one's operations on the port end
 * (none keeps its file, and with it the module's port, alive), its
 * records go with the port, and its later reaps answer -EBADF.
 */
static void host_detach(struct gpuar_uring_host *h)
{
	bool ended = ops_end(h, h->port_fd) == 0;

	if (ended && h->ms_fd == h->port_fd) {
		pthread_mutex_lock(&h->lock);
		h->stash_len = 0;
		recycle(h);
		pthread_mutex_unlock(&h->lock);
		h->ms_fd = -1;
	}
	h->port = NULL;
	h->port_fd = -1;
	h->port_closed = true;
	h->hp = NULL;
}

static void hp_close(struct gpuar_port *port)
{
	struct host_port *hp = hp_of(port);
	struct gpuar_uring_host *h;

	/* In a forked child the hosts and their rings are the parent's. */
	if (!port_forked(port)) {
		pthread_mutex_lock(&hp->lock);
		for (h = hp->hosts; h; h = h->next)
			host_detach(h);
		hp->hosts = NULL;
		pthread_mutex_unlock(&hp->lock);
		pthread_mutex_destroy(&hp->lock);
	}
	port->ops = hp->engine;
	hp->engine->close(port);
	free(hp);
}

static int port_bind(struct gpuar_uring_host *h, struct gpuar_port *port)
{
	struct host_port *hp;

	pthread_mutex_lock(&bind_lock);
	if (port->ops->close == hp_close) {
		hp = hp_of(port);
	} else {
		hp = calloc(1, sizeof(*hp));
		if (!hp) {
			pthread_mutex_unlock(&bind_lock);
			return -ENOMEM;
		}
		hp->ops = *port->ops;
		hp->ops.cancel = hp_cancel;
		hp->ops.close = hp_close;
		hp->engine = port->ops;
		pthread_mutex_init(&hp->lock, NULL);
		__atomic_store_n(&port->ops, &hp->ops, __ATOMIC_RELEASE);
	}
	pthread_mutex_lock(&hp->lock);
	h->next = hp->hosts;
	hp->hosts = h;
	pthread_mutex_unlock(&hp->lock);
	pthread_mutex_unlock(&bind_lock);
	h->hp = hp;
	return 0;
}

static void port_unbind(struct gpuar_uring_host *h)
{
	struct gpuar_uring_host **pp;

	if (!h->hp)
		return;
	pthread_mutex_lock(&h->hp->lock);
	for (pp = &h->hp->hosts; *pp; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	pthread_mutex_unlock(&h->hp->lock);
	h->hp = NULL;
}

/* ------------------------------------------------------------- the host */

GPUAR_EXPORT int gpuar_uring_host_new(struct gpuar_uring_host **out,
				      struct gpuar_port *port)
{
	struct gpuar_uring_host *h;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	/* A port opened before a fork is the parent's (lib/process.c). */
	if (port && port_forked(port))
		return -EPERM;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->stash = calloc(STASH_RECORDS, sizeof(*h->stash));
	h->rd_buf = calloc(RD_RECORDS, sizeof(*h->rd_buf));
	ret = h->stash && h->rd_buf ? io_uring_queue_init(8, &h->ring, 0) : -ENOMEM;
	if (ret < 0) {
		free(h->rd_buf);
		free(h->stash);
		free(h);
		return ret;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->port = port;
	h->port_fd = port ? port->fd : -1;
	h->ms_fd = -1;
	h->fork_gen = gpuar_fork_generation();
	ms_setup(h);
	ret = port ? port_bind(h, port) : 0;
	if (ret < 0) {
		gpuar_uring_host_free(h);
		return ret;
	}
	*out = h;
	return 0;
}

/*
 * Every operation ends before the buffers go, the port's polls included:
 * closing the ring would not end them while another process (a forked
 * child) holds the ring fd, and they would keep the port's file, or copy
 * records into freed memory. Where the ring cannot wait for that, the
 * buffers an operation may still write are left allocated.
 */
GPUAR_EXPORT void gpuar_uring_host_free(struct gpuar_uring_host *h)
{
	bool ended = true;

	if (!h)
		return;
	/* A forked child's ring and binding are its parent's: nothing to end. */
	if (!gpuar_forked_since(h->fork_gen)) {
		port_unbind(h);
		ended = ops_end(h, -1) == 0;
		if (ended && h->br)
			io_uring_unregister_buf_ring(&h->ring, MS_BGID);
		pthread_mutex_destroy(&h->lock);
	}
	io_uring_queue_exit(&h->ring);
	if (ended) {
		free(h->bufs);
		free(h->br);
		free(h->rd_buf);
	}
	free(h->stash);
	free(h);
}

GPUAR_EXPORT void gpuar_uring_host_stats(const struct gpuar_uring_host *h,
					 struct gpuar_uring_host_stats *stats)
{
	if (stats) {
		if (h)
			*stats = h->st;
		else
			memset(stats, 0, sizeof(*stats));
	}
}
