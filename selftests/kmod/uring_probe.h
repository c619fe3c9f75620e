/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * What an io_uring test asks of the process and the ring: how many io-wq
 * workers it has (a request the kernel could not finish with a poll was
 * handed to one), and the next completion within a time. Include after
 * port_harness.h.
 */
#ifndef GPUAR_SELFTEST_URING_PROBE_H
#define GPUAR_SELFTEST_URING_PROBE_H

#include <dirent.h>
#include <liburing.h>
#include <stdio.h>

/* Threads of this process that are io-wq workers ("iou-wrk-<pid>"). */
static inline int iowq_workers(void)
{
	char path[300], comm[64];
	struct dirent *de;
	int n = 0;
	DIR *d = opendir("/proc/self/task");

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    !strncmp(comm, "iou-wrk", 7))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* The next completion within @ms, or NULL. */
static inline struct io_uring_cqe *cqe_within(struct io_uring *ring, int ms)
{
	struct __kernel_timespec ts = { ms / 1000, (ms % 1000) * 1000000LL };
	struct io_uring_cqe *cqe = NULL;

	if (io_uring_wait_cqe_timeout(ring, &cqe, &ts))
		return NULL;
	return cqe;
}

#endif /* GPUAR_SELFTEST_URING_PROBE_H */
