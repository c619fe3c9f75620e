// SPDX-License-Identifier: MIT
/*
 * The user engine's fence waits: the engine's own reference (a dup) to
 * each sync_file sits in the port's epoll set, so a signalled fence makes
 * the port readable, and the engine's run asks each one whether it has
 * signalled.
 */
#include "engine_user.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* The module's rules and errors for one entry (see <linux/gpuar.h>). */
static int validate_fence(const struct gpuar_fence_wait *f)
{
	int ret;

	if (f->flags || f->reserved[0] || f->reserved[1])
		return -EINVAL;
	if (f->fd < 0 || fcntl(f->fd, F_GETFD) < 0)
		return -EBADF;
	ret = gpuar_sync_file_info(f->fd, NULL, NULL, NULL);
	if (ret == -EBADF)
		return ret;
	return ret < 0 ? -EINVAL : 0;
}

/*
 * Take a reference to each entry's sync_file into the epoll set; all or
 * none: on failure the ones taken are dropped and *@error_index is the
 * entry that failed.
 */
static int take_fences(struct uport *u, const struct gpuar_fence_wait *waits,
		       u32 count, int *fds, u32 *error_index)
{
	u32 made;
	int ret = 0;

	for (made = 0; made < count; made++) {
		struct epoll_event ev = { .events = EPOLLIN };

		fds[made] = fcntl(waits[made].fd, F_DUPFD_CLOEXEC, 3);
		ev.data.fd = fds[made];
		if (fds[made] < 0) {
			ret = -errno;
			break;
		}
		if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, fds[made], &ev) < 0) {
			ret = -errno;
			close(fds[made]);
			break;
		}
	}
	if (!ret)
		return 0;
	*error_index = made;
	while (made--) {
		epoll_ctl(u->epfd, EPOLL_CTL_DEL, fds[made], NULL);
		close(fds[made]);
	}
	return ret;
}

int uport_submit_fence(struct gpuar_port *port,
		       const struct gpuar_fence_wait *waits, u32 count,
		       u32 *error_index)
{
	struct uport *u = uport_of(port);
	int fds[64], *dup_fds = count <= 64 ? fds : calloc(count, sizeof(int));
	u32 i;
	int ret = 0;
	u64 now;

	if (!dup_fds)
		return -ENOMEM;
	if (count > u->max_waits) {
		*error_index = count;
		ret = -E2BIG;
		goto out_free;
	}
	pthread_mutex_lock(&u->lock);
	for (i = 0; i < count; i++) {
		ret = validate_fence(&waits[i]);
		if (ret) {
			*error_index = i;
			goto out;
		}
	}
	if ((u64)u->npend + u->qlen + count > u->max_waits) {
		ret = -ENOSPC;
		*error_index = count;
		goto out;
	}
	ret = take_fences(u, waits, count, dup_fds, error_index);
	if (ret)
		goto out;
	now = gpuar_now_ns();
	for (i = 0; i < count; i++) {
		struct uwait *w = &u->pend[u->npend++];

		memset(w, 0, sizeof(*w));
		w->kind = UW_FENCE;
		w->user_data = waits[i].user_data;
		w->start_ns = now;
		w->fd = dup_fds[i];
	}
	u->st.submitted += count;
	ret = (int)count;
	uport_note_change(u);
	/* A fence already signalled completes now, as in the module. */
	uport_process_locked(u, true);
out:
	pthread_mutex_unlock(&u->lock);
out_free:
	if (dup_fds != fds)
		free(dup_fds);
	return ret;
}

/* End @w with @outcome: its record is queued, its reference dropped. */
void uport_fence_end(struct uport *u, struct uwait *w, u8 outcome,
		     int status, u64 complete_ns)
{
	struct gpuar_record rec = {
		.user_data = w->user_data,
		.start_ns = w->start_ns,
		.complete_ns = complete_ns,
		.status = status,
		.version = GPUAR_RECORD_VERSION_1,
		.source = GPUAR_SOURCE_FENCE,
		.outcome = outcome,
	};

	epoll_ctl(u->epfd, EPOLL_CTL_DEL, w->fd, NULL);
	close(w->fd);
	w->fd = -1;
	uport_enqueue(u, &rec);
	w->kind = UW_ENDED;
}

/* End @w if its fence has signalled, at the fence's own timestamp. */
void uport_fence_check(struct uport *u, struct uwait *w, u64 now)
{
	struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
	int signalled = 0, status = 0;
	uint64_t ts = 0;

	if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLIN | POLLERR)))
		return;
	if (gpuar_sync_file_info(w->fd, &signalled, &status, &ts) < 0 ||
	    !signalled)
		return;
	uport_fence_end(u, w, GPUAR_OUTCOME_FENCE, status, ts ? ts : now);
}
