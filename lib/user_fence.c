// SPDX-License-Identifier: MIT
/*
 * The user engine's fence waits: the engine's own reference (a dup) to
 * each sync_file sits in the port's epoll set, registered once with its
 * wait as the event's data, so a signalled fence makes the port readable
 * and the engine's run finds the signalled ones by asking the epoll set
 * (without blocking), never by polling every pending fence.
 */
#include "engine_user.h"

#include <errno.h>
#include <fcntl.h>
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
 * Take a reference to each entry's sync_file into the epoll set, with its
 * wait (a new slab entry) as the event's data; all or none: on failure
 * the ones taken are dropped and *@error_index is the entry that failed.
 */
static int take_fences(struct uport *u, const struct gpuar_fence_wait *waits,
		       u32 count, struct uwait **ws, u32 *error_index)
{
	u64 now = gpuar_now_ns();
	u32 made;
	int ret = 0;

	for (made = 0; made < count; made++) {
		struct epoll_event ev = { .events = EPOLLIN };
		struct uwait *w = uport_wait_alloc(u);

		w->kind = UW_FENCE;
		w->user_data = waits[made].user_data;
		w->start_ns = now;
		u->nfences++;
		ws[made] = w;
		w->fd = fcntl(waits[made].fd, F_DUPFD_CLOEXEC, 3);
		ev.data.ptr = w;
		if (w->fd < 0) {
			ret = -errno;
			made++;
			break;
		}
		if (GPUAR_SYS(epoll_ctl(u->epfd, EPOLL_CTL_ADD, w->fd, &ev)) < 0) {
			ret = -errno;
			close(w->fd);
			w->fd = -1;
			made++;
			break;
		}
	}
	if (!ret)
		return 0;
	*error_index = made - 1;
	while (made--) {
		if (ws[made]->fd >= 0) {
			GPUAR_SYS(epoll_ctl(u->epfd, EPOLL_CTL_DEL, ws[made]->fd, NULL));
			close(ws[made]->fd);
		}
		uport_wait_release(u, ws[made]);
	}
	return ret;
}

/*
 * Add @count fence waits, all or nothing, under the lock the caller holds
 * (it runs the engine next: a fence already signalled completes then, as
 * in the module). @ws: scratch room for @count wait pointers. Returns
 * @count or a negative errno, with *@error_index set as
 * gpuar_submit_fence_waits() says.
 */
int uport_fence_submit_locked(struct uport *u,
			      const struct gpuar_fence_wait *waits, u32 count,
			      struct uwait **ws, u32 *error_index)
{
	u32 i;
	int ret;

	for (i = 0; i < count; i++) {
		ret = validate_fence(&waits[i]);
		if (ret) {
			*error_index = i;
			return ret;
		}
	}
	if ((u64)u->npend + u->qlen + count > u->max_waits) {
		*error_index = count;
		return -ENOSPC;
	}
	ret = take_fences(u, waits, count, ws, error_index);
	if (ret)
		return ret;
	u->st.submitted += count;
	uport_note_change(u);
	return (int)count;
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

	GPUAR_SYS(epoll_ctl(u->epfd, EPOLL_CTL_DEL, w->fd, NULL));
	close(w->fd);
	w->fd = -1;
	uport_enqueue(u, &rec);
	uport_wait_release(u, w);
}

/* End @w, which polled ready, if its fence has signalled, at its own time. */
static bool fence_check(struct uport *u, struct uwait *w, u64 now)
{
	int signalled = 0, status = 0;
	uint64_t ts = 0;

	if (gpuar_sync_file_info(w->fd, &signalled, &status, &ts) < 0 ||
	    !signalled)
		return false;
	uport_fence_end(u, w, GPUAR_OUTCOME_FENCE, status, ts ? ts : now);
	return true;
}

#define HARVEST_BATCH 64

/*
 * End the fence waits whose fence signalled: ask the epoll set (it is
 * level-triggered, so asking consumes nothing the caller's loop would
 * miss) which fences are ready. Another batch only while the last one
 * was full and ended some, so a fence that polls ready without reading
 * signalled cannot keep the run here.
 */
void uport_fence_harvest(struct uport *u, u64 now)
{
	struct epoll_event evs[HARVEST_BATCH];
	int n, i;
	bool ended;

	do {
		ended = false;
		n = GPUAR_SYS(epoll_wait(u->epfd, evs, HARVEST_BATCH, 0));
		for (i = 0; i < n; i++) {
			struct uwait *w = evs[i].data.ptr;

			/* The timer, the record eventfd, the watcher's stop. */
			if (!w || (void *)w == &u->stopfd)
				continue;
			ended |= fence_check(u, w, now);
		}
	} while (n == HARVEST_BATCH && ended);
}
