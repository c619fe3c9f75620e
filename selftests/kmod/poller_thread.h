/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A thread blocked in poll() on a port, and what the kernel says of it:
 * whether it sleeps, and how often it was woken (its voluntary context
 * switches), so a test can tell "not woken" from "woken and slept again".
 * Include after port_harness.h.
 */
#ifndef GPUAR_SELFTEST_POLLER_THREAD_H
#define GPUAR_SELFTEST_POLLER_THREAD_H

#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>

/* A thread blocked in poll(@events) on the port, and what it saw. */
struct poller {
	int port;
	short events;
	pthread_t thread;
	pid_t tid;
	int state;		/* 0 starting, 1 polling, 2 returned */
	short revents;
};

static inline void *poller_run(void *arg)
{
	struct poller *p = arg;
	struct pollfd pfd = { .fd = p->port, .events = p->events };

	p->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&p->state, 1, __ATOMIC_RELEASE);
	if (poll(&pfd, 1, -1) == 1)
		p->revents = pfd.revents;
	__atomic_store_n(&p->state, 2, __ATOMIC_RELEASE);
	return NULL;
}

/* A line of /proc/self/task/<tid>/<file>: the number after @key, or -1. */
static inline long task_field(pid_t tid, const char *file, const char *key)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tid, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key), NULL, 10);
	fclose(f);
	return v;
}

/* The thread is asleep ('S' in its stat), within @ms. */
static inline int task_sleeping(pid_t tid, unsigned int ms)
{
	char path[64], buf[256], *close_paren;
	unsigned int i;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	for (i = 0; i < ms; i++) {
		int fd = open(path, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = 0;
			close_paren = strrchr(buf, ')');
			if (close_paren && close_paren[1] == ' ' &&
			    close_paren[2] == 'S')
				return 1;
		}
		sleep_ms(1);
	}
	return 0;
}

/* Start @p and return once it sleeps in poll() (0), or -1. */
static inline int poller_start(struct poller *p, unsigned int ms)
{
	if (pthread_create(&p->thread, NULL, poller_run, p))
		return -1;
	while (!__atomic_load_n(&p->state, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	return task_sleeping(p->tid, ms) ? 0 : -1;
}

/* How many times @p was woken so far (voluntary switches), or -1. */
static inline long poller_switches(const struct poller *p)
{
	return task_field(p->tid, "status", "voluntary_ctxt_switches:");
}

#endif /* GPUAR_SELFTEST_POLLER_THREAD_H */
