// SPDX-License-Identifier: MIT
/*
 * The kernel engine: the module's port. Every call is one ioctl or read()
 * on the port fd; the module validates, runs the waits and queues records.
 * Where the module shares a completion area (GPUAR_FEATURE_AREA), records
 * are taken from its ring first, with no call (lib/port_area.c).
 */
#include "port.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

static int xioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = GPUAR_SYS(ioctl(fd, req, arg));
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

static int k_line_register(struct gpuar_port *port, struct gpuar_line *line)
{
	struct gpuar_line_register r = {
		.size = sizeof(r),
		.addr = (u64)(uintptr_t)line->words,
	};
	int ret = xioctl(port->fd, GPUAR_IOC_LINE_REGISTER, &r);

	if (ret < 0)
		return ret;
	line->id = r.id;
	return 0;
}

static int k_line_unregister(struct gpuar_port *port, struct gpuar_line *line)
{
	struct gpuar_line_unregister u = { .size = sizeof(u), .id = line->id };
	int ret = xioctl(port->fd, GPUAR_IOC_LINE_UNREGISTER, &u);

	return ret < 0 ? ret : 0;
}

static int k_submit(struct gpuar_port *port, unsigned long req,
		    const void *entries, u32 count, u32 entry_size,
		    u32 *error_index)
{
	struct gpuar_submit s = {
		.size = sizeof(s),
		.count = count,
		.entry_size = entry_size,
		.entries = (u64)(uintptr_t)entries,
	};
	int ret = xioctl(port->fd, req, &s);

	if (ret < 0)
		*error_index = s.error_index;
	return ret;
}

static int k_submit_word(struct gpuar_port *port,
			 const struct gpuar_word_wait *waits, u32 count,
			 u32 *error_index)
{
	return k_submit(port, GPUAR_IOC_SUBMIT_WORD, waits, count,
			sizeof(*waits), error_index);
}

static int k_submit_fence(struct gpuar_port *port,
			  const struct gpuar_fence_wait *waits, u32 count,
			  u32 *error_index)
{
	return k_submit(port, GPUAR_IOC_SUBMIT_FENCE, waits, count,
			sizeof(*waits), error_index);
}

static int k_cancel(struct gpuar_port *port, u64 user_data)
{
	struct gpuar_cancel c = { .size = sizeof(c), .user_data = user_data };

	return xioctl(port->fd, GPUAR_IOC_CANCEL, &c);
}

/*
 * A read that never blocks, whatever the port fd's O_NONBLOCK (the
 * caller's choice, GPUAR_PORT_NONBLOCK): RWF_NOWAIT, which the module
 * honours (FMODE_NOWAIT). A plain read() on a blocking port fd would sleep
 * past the reaper's deadline, forever for a zero timeout with nothing
 * queued. Where RWF_NOWAIT is refused, read() only when poll says
 * readable now.
 */
static ssize_t read_nowait(int fd, void *buf, size_t len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	ssize_t n;

	do {
		n = GPUAR_SYS(preadv2(fd, &iov, 1, -1, RWF_NOWAIT));
	} while (n < 0 && errno == EINTR);
	if (n >= 0 || errno != EOPNOTSUPP)
		return n;
	if (gpuar_fd_wait_readable(fd, 0) <= 0) {
		errno = EAGAIN;
		return -1;
	}
	do {
		n = GPUAR_SYS(read(fd, buf, len));
	} while (n < 0 && errno == EINTR);
	return n;
}

/* A record is queued, or -ETIME at @deadline: the module's WAIT_READY. */
static int wait_ready(int fd, u64 deadline)
{
	struct gpuar_wait_ready r = { .size = sizeof(r), .deadline_ns = deadline };

	return xioctl(fd, GPUAR_IOC_WAIT_READY, &r);
}

/*
 * A reap that may block, as a blocked read() of the module's port: the
 * module busy-reads while the reader waits, so the store is seen at about
 * a spin's latency. Forever: a plain read() (a NONBLOCK port fd answers
 * EAGAIN, and the reaper waits as below). With a deadline: the
 * module's WAIT_READY where it has it (the same wait, bounded), then a
 * read that never blocks, so a reaper racing another for the record never
 * blocks past its deadline; else poll, which does not busy-read. An
 * interruptible reap always waits in poll, on the port's fd and the
 * interrupt's eventfd together, so it does not busy-read either.
 */
/* read_nowait's answer as records, -EIO for end of file, or -errno. */
static int read_records(struct gpuar_port *port, struct gpuar_record *records,
			u32 max)
{
	ssize_t n = read_nowait(port->fd, records, (size_t)max * sizeof(*records));

	if (n > 0)
		return (int)((size_t)n / sizeof(*records));
	return n == 0 ? -EIO : -errno;
}

/*
 * The area's records, with no system call; read() only where the module
 * keeps records in its queue (overflow) or the head is out of range, and
 * on a port with imminent readiness, whose claimed waits the module
 * checks when the port is read (a watch that saw a store leaves its
 * record to that read). -EAGAIN when none: the caller waits, or returns.
 */
static int area_reap(struct gpuar_port *port, struct gpuar_record *records,
		     u32 max)
{
	int n = gpuar_port_area_take(port, records, max);

	if (n > 0)
		return n;
	if (!gpuar_port_area_need_read(port) && !port->imminent)
		return -EAGAIN;
	return read_records(port, records, max);
}

static int k_reap(struct gpuar_port *port, struct gpuar_record *records,
		  u32 max, int64_t timeout_ns, int intr_fd)
{
	u64 deadline = gpuar_deadline_in(timeout_ns);
	size_t len = (size_t)max * sizeof(*records);
	bool block = intr_fd < 0 && timeout_ns < 0;
	bool ready = intr_fd < 0 && (port->features & GPUAR_FEATURE_WAIT_READY);
	ssize_t n;
	int ret;

	if (port->area) {
		ret = area_reap(port, records, max);
		if (ret != -EAGAIN || timeout_ns == 0)
			return ret;
	}
	for (;;) {
		if (block) {
			n = GPUAR_SYS(read(port->fd, records, len));
			if (n >= 0 || errno != EAGAIN)
				goto got;
		}
		if (timeout_ns != 0) {
			ret = ready ?
			      wait_ready(port->fd, deadline) :
			      gpuar_fd_wait_interruptible(port->fd, intr_fd,
							  deadline);
			if (ret == -ETIME || (!ready && ret == 0))
				return -ETIME;
			if (ret < 0)
				return ret;
			/* Woken for a record: the ring's, if it is there. */
			ret = gpuar_port_area_take(port, records, max);
			if (ret > 0)
				return ret;
		}
		n = read_nowait(port->fd, records, len);
got:
		if (n > 0)
			return (int)((size_t)n / sizeof(*records));
		if (n == 0)
			return -EIO;
		if (errno != EAGAIN)
			return -errno;
		if (timeout_ns == 0)
			return -EAGAIN;
	}
}

static int k_process(struct gpuar_port *port)
{
	struct gpuar_port_stats st = { .size = sizeof(st) };
	u32 ring = gpuar_port_area_count(port);
	int ret;

	/* Records in the ring: the caller reaps them without a call. */
	if (ring)
		return (int)ring;
	ret = xioctl(port->fd, GPUAR_IOC_PORT_STATS, &st);

	return ret < 0 ? ret : (int)st.queued;
}

static u64 k_next_check(struct gpuar_port *port)
{
	(void)port;
	return 0;
}

static int k_stats(struct gpuar_port *port, struct gpuar_port_stats *stats)
{
	int ret;

	stats->size = sizeof(*stats);
	ret = xioctl(port->fd, GPUAR_IOC_PORT_STATS, stats);
	return ret < 0 ? ret : 0;
}

static int k_claim(struct gpuar_port *port, struct gpuar_claim_entry *entries,
		   u32 max, u64 lease_ns)
{
	struct gpuar_claim c = {
		.size = sizeof(c),
		.entries = (u64)(uintptr_t)entries,
		.count = max,
		.entry_size = sizeof(*entries),
		.lease_ns = lease_ns ? lease_ns : port->claim_lease_ns,
	};

	return xioctl(port->fd, GPUAR_IOC_CLAIM, &c);
}

static int k_point_stats(struct gpuar_port *port,
			 struct gpuar_point_stats *stats)
{
	struct gpuar_point_stats in = { .size = sizeof(in), .point = stats->point };
	int ret;

	/*
	 * Only the point is input: the module refuses a non-zero flags field,
	 * which a caller reusing a filled-in struct would otherwise pass back.
	 */
	*stats = in;
	ret = xioctl(port->fd, GPUAR_IOC_POINT_STATS, stats);
	return ret < 0 ? ret : 0;
}

/*
 * The area goes first: its mapping holds the port's file, so closing the
 * fd while it is mapped would leave the port (its waits, its pinned
 * lines) alive until the unmap.
 */
static void k_close(struct gpuar_port *port)
{
	gpuar_port_area_close(port);
	close(port->fd);
}

static const struct gpuar_engine_ops kernel_ops = {
	.line_register = k_line_register,
	.line_unregister = k_line_unregister,
	.submit_word = k_submit_word,
	.submit_fence = k_submit_fence,
	.cancel = k_cancel,
	.reap = k_reap,
	.process = k_process,
	.next_check = k_next_check,
	.stats = k_stats,
	.point_stats = k_point_stats,
	.claim = k_claim,
	.close = k_close,
};

/*
 * The module's abi is the oldest ABI it is compatible with: one above what
 * this library knows means the module broke it. Anything added since is a
 * feature bit; this engine needs only word and fence waits (busy-read is
 * the module's business, records version 1 are asked for by number) and
 * uses imminent readiness and WAIT_READY where the module has them.
 */
#define KERNEL_FEATURES_NEEDED (GPUAR_FEATURE_WORD_WAIT | GPUAR_FEATURE_FENCE_WAIT)

static bool kernel_abi_usable(const struct gpuar_version *v)
{
	return v->abi >= 1 && v->abi <= GPUAR_ABI_VERSION &&
	       v->record_max >= GPUAR_RECORD_VERSION_1 &&
	       (v->features & KERNEL_FEATURES_NEEDED) == KERNEL_FEATURES_NEEDED;
}

int gpuar_port_kernel_open(struct gpuar_port *port,
			   const struct gpuar_port_options *opts)
{
	const char *path = opts->device_path ? opts->device_path :
			   GPUAR_DEVICE_PATH;
	struct gpuar_version v = { .size = sizeof(v) };
	struct gpuar_port_create c = {
		.size = sizeof(c),
		/* IMMINENT only where the module has it: below. */
		.flags = opts->flags & GPUAR_PORT_FLAGS_ALL &
			 ~GPUAR_PORT_IMMINENT,
		.record_version = GPUAR_RECORD_VERSION_1,
	};
	int dev, fd;

	dev = open(path, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	fd = xioctl(dev, GPUAR_IOC_VERSION, &v);
	if (fd == 0 && !kernel_abi_usable(&v))
		fd = -EPROTO;
	/* A module without the feature: the caller decides (port.c). */
	if ((opts->flags & GPUAR_PORT_IMMINENT) &&
	    (v.features & GPUAR_FEATURE_IMMINENT))
		c.flags |= GPUAR_PORT_IMMINENT;
	/* The area, where the module has it; the library decides (not the caller). */
	c.flags &= ~GPUAR_PORT_AREA;
	if ((v.features & GPUAR_FEATURE_AREA) &&
	    !(opts->flags & GPUAR_PORT_NO_AREA)) {
		c.flags |= GPUAR_PORT_AREA;
		c.ring_entries = gpuar_port_area_test_entries;
	}
	if (fd == 0)
		fd = xioctl(dev, GPUAR_IOC_PORT_CREATE, &c);
	close(dev);
	if (fd < 0)
		return fd;
	port->engine = GPUAR_ENGINE_KERNEL;
	port->features = v.features;
	/*
	 * A claim that asks for no lease (gpuar_reap's, gpuar_port_process's)
	 * is leased for the port's busy-read budget, as on the user engine,
	 * where one is set; else for the module's default (its busy_read_us,
	 * or lease_us where that is 0).
	 */
	if (opts->busy_read_us && opts->busy_read_us != GPUAR_BUSY_READ_OFF)
		port->claim_lease_ns = (u64)opts->busy_read_us *
				       GPUAR_NSEC_PER_USEC;
	port->fd = fd;
	port->ops = &kernel_ops;
	if (c.flags & GPUAR_PORT_AREA)
		gpuar_port_area_open(port);
	return 0;
}
