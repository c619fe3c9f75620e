// SPDX-License-Identifier: MIT
/*
 * Deadline waits without timer slack: the thread's slack tightened around
 * a sleep, and an fd waited on until readable or a deadline.
 */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <sys/prctl.h>
#include <time.h>

/*
 * Sleep to an absolute time with the thread's timer slack at 1 ns (0 would
 * mean "the default" to prctl), restored afterwards: the default 50 us
 * slack would make every deadline sleep late by up to that much.
 */
int gpuar_slack_tighten(void)
{
	int old = GPUAR_SYS(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));

	if (old > 1)
		GPUAR_SYS(prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0));
	return old;
}

void gpuar_slack_restore(int old)
{
	if (old > 1)
		GPUAR_SYS(prctl(PR_SET_TIMERSLACK, (unsigned long)old, 0, 0, 0));
}

/*
 * A deadline past the clock's range (INT64_MAX ns, as a kernel ktime_t
 * counts) is forever: GPUAR_U64_MAX, which every waiter, the module's
 * WAIT_READY included, reads as "no deadline". now + INT64_MAX is such a
 * sum, and sent as it is a module before 0.2 armed a timer in the past.
 */
u64 gpuar_deadline_in(int64_t timeout_ns)
{
	u64 deadline;

	if (timeout_ns < 0)
		return GPUAR_U64_MAX;
	deadline = gpuar_add_sat(gpuar_now_ns(), (u64)timeout_ns);
	return deadline > (u64)INT64_MAX ? GPUAR_U64_MAX : deadline;
}

int gpuar_fd_wait_interruptible(int fd, int intr_fd, u64 deadline_ns)
{
	struct pollfd pfd[2] = {
		{ .fd = fd, .events = POLLIN },
		{ .fd = intr_fd, .events = POLLIN },
	};
	struct timespec ts, *tsp = NULL;
	u64 now;
	int n, old, err;

	if (deadline_ns != GPUAR_U64_MAX) {
		now = gpuar_now_ns();
		if (now >= deadline_ns)
			deadline_ns = now;
		ts.tv_sec = (time_t)((deadline_ns - now) / 1000000000ULL);
		ts.tv_nsec = (long)((deadline_ns - now) % 1000000000ULL);
		tsp = &ts;
	}
	old = gpuar_slack_tighten();
	n = GPUAR_SYS(ppoll(pfd, intr_fd >= 0 ? 2 : 1, tsp, NULL));
	err = errno;
	gpuar_slack_restore(old);
	if (n < 0)
		return -err;
	if (intr_fd >= 0 && (pfd[1].revents & POLLIN))
		return -EINTR;
	return n > 0;
}

int gpuar_fd_wait_readable(int fd, u64 deadline_ns)
{
	return gpuar_fd_wait_interruptible(fd, -1, deadline_ns);
}
