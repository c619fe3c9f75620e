// SPDX-License-Identifier: MIT
/*
 * Interrupts: an eventfd a caller triggers (from any thread, or a signal
 * handler) to end blocking waits with -EINTR, so a binding can honour
 * Ctrl-C without a watchdog thread. The waits that take one poll its fd
 * together with what they wait for.
 */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct gpuar_interrupt {
	int fd;
};

GPUAR_EXPORT int gpuar_interrupt_new(struct gpuar_interrupt **out)
{
	struct gpuar_interrupt *in;

	if (!out)
		return -EINVAL;
	*out = NULL;
	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (in->fd < 0) {
		int err = errno;

		free(in);
		return -err;
	}
	*out = in;
	return 0;
}

GPUAR_EXPORT void gpuar_interrupt_free(struct gpuar_interrupt *in)
{
	if (!in)
		return;
	close(in->fd);
	free(in);
}

GPUAR_EXPORT int gpuar_interrupt_trigger(struct gpuar_interrupt *in)
{
	u64 one = 1;

	if (!in)
		return -EINVAL;
	/* write(2) alone: async-signal-safe. A full counter is still set. */
	if (write(in->fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

GPUAR_EXPORT void gpuar_interrupt_reset(struct gpuar_interrupt *in)
{
	u64 v;

	if (in && read(in->fd, &v, sizeof(v)) < 0)
		return;		/* EAGAIN: it was not set */
}

GPUAR_EXPORT bool gpuar_interrupt_triggered(const struct gpuar_interrupt *in)
{
	return in && gpuar_interrupt_fd_set(in->fd);
}

GPUAR_EXPORT int gpuar_interrupt_fd(const struct gpuar_interrupt *in)
{
	return in ? in->fd : -EINVAL;
}

int gpuar_interrupt_fd_of(const struct gpuar_interrupt *in)
{
	return in ? in->fd : -1;
}

/* A clock that is not the monotonic one looks for the interrupt this often. */
#define INTR_LOOK_NS 10000000ULL

void gpuar_sleep_interruptible(const struct gpuar_clock *c, u64 until,
			       int intr_fd)
{
	u64 now;

	if (intr_fd < 0) {
		c->ops->sleep_until(c->ctx, until);
		return;
	}
	if (c == gpuar_clock_monotonic()) {
		gpuar_fd_wait_readable(intr_fd, until);
		return;
	}
	now = c->ops->now(c->ctx);
	if (until > now && until - now > INTR_LOOK_NS)
		until = now + INTR_LOOK_NS;
	c->ops->sleep_until(c->ctx, until);
}

bool gpuar_interrupt_fd_set(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return fd >= 0 && GPUAR_SYS(poll(&pfd, 1, 0)) > 0;
}
