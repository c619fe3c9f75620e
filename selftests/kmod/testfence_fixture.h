/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Fences from gpuar_testfence.ko: ones that stay pending as long as a test
 * needs, and ones that signal with an error. Helpers return the fd or 0,
 * or -1 with errno, as the system call did.
 */
#ifndef GPUAR_SELFTEST_TESTFENCE_FIXTURE_H
#define GPUAR_SELFTEST_TESTFENCE_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "testfence/gpuar_testfence.h"

/* A new timeline fd, or -1 with errno. */
static inline int testfence_timeline(void)
{
	struct gpuar_testfence_timeline t;
	int dev = open(GPUAR_TESTFENCE_PATH, O_RDWR | O_CLOEXEC);
	int fd, err;

	if (dev < 0)
		return -1;
	memset(&t, 0, sizeof(t));
	t.flags = GPUAR_TESTFENCE_CLOEXEC;
	fd = ioctl(dev, GPUAR_TESTFENCE_IOC_TIMELINE, &t);
	err = errno;
	close(dev);
	errno = err;
	return fd;
}

/* A sync_file fd holding the timeline's fence at @seqno. */
static inline int testfence_fence(int timeline, __u64 seqno)
{
	struct gpuar_testfence_fence f;

	memset(&f, 0, sizeof(f));
	f.seqno = seqno;
	f.fd = -1;
	if (ioctl(timeline, GPUAR_TESTFENCE_IOC_FENCE, &f))
		return -1;
	return f.fd;
}

/*
 * A new timeline, in *@timeline, and the fd of its fence at seqno 1, which
 * stays pending until signalled; -1 with errno, nothing left open.
 */
static inline int testfence_pending(int *timeline)
{
	int fd, err;

	*timeline = testfence_timeline();
	if (*timeline < 0)
		return -1;
	fd = testfence_fence(*timeline, 1);
	if (fd < 0) {
		err = errno;
		close(*timeline);
		*timeline = -1;
		errno = err;
	}
	return fd;
}

/* Signal every fence up to @seqno with @error (0 or a negative errno). */
static inline int testfence_signal(int timeline, __u64 seqno, int error)
{
	struct gpuar_testfence_signal s;

	memset(&s, 0, sizeof(s));
	s.seqno = seqno;
	s.error = error;
	return ioctl(timeline, GPUAR_TESTFENCE_IOC_SIGNAL, &s);
}

/* Wait until every released fence has been freed (rcu_barrier()). */
static inline int testfence_barrier(void)
{
	int dev = open(GPUAR_TESTFENCE_PATH, O_RDWR | O_CLOEXEC);
	int ret, err;

	if (dev < 0)
		return -1;
	ret = ioctl(dev, GPUAR_TESTFENCE_IOC_BARRIER, 0);
	err = errno;
	close(dev);
	errno = err;
	return ret;
}

#endif /* GPUAR_SELFTEST_TESTFENCE_FIXTURE_H */
