// SPDX-License-Identifier: MIT
/*
 * The library in a process that forks and takes signals.
 *
 * Threads: the library's own (a watcher port's, a soft producer's) start
 * with every signal blocked, as libuv's and GLib's pools do, so a process
 * signal never lands on them and a sigwait()ing program keeps its
 * signals.
 *
 * Fork: a child shares its parent's open file descriptions (the port fd,
 * the user engine's epoll set, eventfd and timerfd, an io_uring), so a
 * child that used them would steal the parent's records or disturb its
 * wake-ups. A fork handler bumps a generation that each port and host
 * remembers from its open; in the child every call on an object of an
 * earlier generation is refused (-EPERM) without touching shared state,
 * and closing it only drops the child's copies.
 */
#include "internal.h"

#include <pthread.h>
#include <signal.h>

static unsigned long fork_generation;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_child(void)
{
	__atomic_add_fetch(&fork_generation, 1, __ATOMIC_RELAXED);
}

static void fork_register(void)
{
	pthread_atfork(NULL, NULL, fork_child);
}

unsigned long gpuar_fork_generation(void)
{
	pthread_once(&fork_once, fork_register);
	return __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
}

bool gpuar_forked_since(unsigned long generation)
{
	return __atomic_load_n(&fork_generation, __ATOMIC_RELAXED) != generation;
}

int gpuar_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}
