// SPDX-License-Identifier: MIT
/*
 * The kernel engine: the module's port. Every call is one ioctl or read()
 * on the port fd; the module validates, runs the waits and queues records.
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
		ret = ioctl(fd, req, arg);
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
		n = preadv2(fd, &iov, 1, -1, RWF_NOWAIT);
	} while (n < 0 && errno == EINTR);
	if (n >= 0 || errno != EOPNOTSUPP)
		return n;
	if (gpuar_fd_wait_readable(fd, 0) <= 0) {
		errno = EAGAIN;
		return -1;
	}
	do {
		n = read(fd, buf, len);
	} while (n < 0 && errno == EINTR);
	return n;
}

static int k_reap(struct gpuar_port *port, struct gpuar_record *records,
		  u32 max, int64_t timeout_ns, int intr_fd)
{
	u64 deadline = gpuar_deadline_in(timeout_ns);
	ssize_t n;
	int ret;

	for (;;) {
		/*
		 * Wait in poll, then read without blocking, so a reaper racing
		 * another never blocks past its deadline in read().
		 */
		if (timeout_ns != 0) {
			ret = gpuar_fd_wait_interruptible(port->fd, intr_fd,
							  deadline);
			if (ret < 0)
				return ret;
			if (ret == 0)
				return -ETIME;
		}
		n = read_nowait(port->fd, records, (size_t)max * sizeof(*records));
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
	int ret = xioctl(port->fd, GPUAR_IOC_PORT_STATS, &st);

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

static void k_close(struct gpuar_port *port)
{
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
	.close = k_close,
};

/*
 * The module's abi is the oldest ABI it is compatible with: one above what
 * this library knows means the module broke it. Anything added since is a
 * feature bit; this engine needs only word and fence waits (busy-read is
 * the module's business, records version 1 are asked for by number).
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
		.flags = opts->flags & GPUAR_PORT_FLAGS_ALL,
		.record_version = GPUAR_RECORD_VERSION_1,
	};
	int dev, fd;

	dev = open(path, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	fd = xioctl(dev, GPUAR_IOC_VERSION, &v);
	if (fd == 0 && !kernel_abi_usable(&v))
		fd = -EPROTO;
	if (fd == 0)
		fd = xioctl(dev, GPUAR_IOC_PORT_CREATE, &c);
	close(dev);
	if (fd < 0)
		return fd;
	port->engine = GPUAR_ENGINE_KERNEL;
	port->fd = fd;
	port->ops = &kernel_ops;
	return 0;
}
