// SPDX-License-Identifier: MIT
/*
 * GPUAR_PORT_WATCHER: a thread of the user engine's own sleeps in its
 * epoll set and runs the engine whenever it is readable (the timer, a
 * fence, a submit's record), so records come without the caller running
 * the engine; the port's fd is then the record eventfd alone.
 */
#include "engine_user.h"

#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void *watcher_main(void *arg)
{
	struct uport *u = arg;
	struct epoll_event evs[8];
	bool stop = false;
	int n, i;

	while (!stop) {
		n = epoll_wait(u->epfd, evs, 8, -1);
		for (i = 0; i < n; i++)
			stop |= evs[i].data.ptr == &u->stopfd;
		if (n < 0 && errno != EINTR)
			break;
		pthread_mutex_lock(&u->lock);
		uport_process_locked(u, true);
		pthread_mutex_unlock(&u->lock);
	}
	return NULL;
}

/*
 * Start the thread, with an eventfd in the epoll set to stop it by.
 * 0 or a negative errno; uport_watcher_stop() cleans up either way.
 */
int uport_watcher_start(struct uport *u)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	u->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ev.data.ptr = &u->stopfd;
	if (u->stopfd < 0 ||
	    epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->stopfd, &ev) < 0)
		return -errno;
	err = gpuar_thread_start(&u->thread, watcher_main, u);
	if (err)
		return -err;
	u->watcher = true;
	return 0;
}

void uport_watcher_stop(struct uport *u)
{
	if (u->watcher) {
		u64 one = 1;

		if (write(u->stopfd, &one, sizeof(one)) == sizeof(one))
			pthread_join(u->thread, NULL);
		u->watcher = false;
	}
	if (u->stopfd >= 0)
		close(u->stopfd);
	u->stopfd = -1;
}
