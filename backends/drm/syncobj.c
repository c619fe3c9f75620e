// SPDX-License-Identifier: MIT
/*
 * drm_syncobj timeline points as sync_files (libdrm), and waiting for a
 * point to materialise before it can be exported.
 */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <xf86drm.h>

/* DRM_IOCTL_SYNCOBJ_EVENTFD (Linux 6.6); libdrm 2.4.114 predates it. */
#ifndef DRM_IOCTL_SYNCOBJ_EVENTFD
struct drm_syncobj_eventfd {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__s32 fd;
	__u32 pad;
};
#define DRM_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct drm_syncobj_eventfd)
#endif

GPUAR_EXPORT int gpuar_drm_point_export(int drm_fd, uint32_t handle,
					uint64_t point, int *sync_file_fd)
{
	uint32_t tmp;
	int ret;

	if (!sync_file_fd)
		return -EINVAL;
	*sync_file_fd = -1;
	if (point == 0) {
		ret = drmSyncobjExportSyncFile(drm_fd, handle, sync_file_fd);
		return ret < 0 ? -errno : 0;
	}
	/* A timeline point exports through a binary syncobj holding its fence. */
	ret = drmSyncobjCreate(drm_fd, 0, &tmp);
	if (ret < 0)
		return -errno;
	ret = drmSyncobjTransfer(drm_fd, tmp, 0, handle, point, 0);
	if (ret == 0)
		ret = drmSyncobjExportSyncFile(drm_fd, tmp, sync_file_fd);
	if (ret < 0)
		ret = -errno;
	drmSyncobjDestroy(drm_fd, tmp);
	return ret;
}

GPUAR_EXPORT int gpuar_drm_point_available_fd(int drm_fd, uint32_t handle,
					      uint64_t point, int *event_fd)
{
	struct drm_syncobj_eventfd arg;
	int efd, ret;

	if (!event_fd)
		return -EINVAL;
	*event_fd = -1;
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return -errno;
	memset(&arg, 0, sizeof(arg));
	arg.handle = handle;
	arg.point = point;
	arg.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE;
	arg.fd = efd;
	ret = drmIoctl(drm_fd, DRM_IOCTL_SYNCOBJ_EVENTFD, &arg);
	if (ret < 0) {
		ret = errno;
		close(efd);
		/* Kernels before 6.6 do not know the ioctl. */
		return (ret == ENOTTY || ret == EINVAL) ? -EOPNOTSUPP : -ret;
	}
	*event_fd = efd;
	return 0;
}

GPUAR_EXPORT int gpuar_drm_point_wait_available(int drm_fd, uint32_t handle,
						uint64_t point,
						int64_t timeout_ns)
{
	u64 deadline = gpuar_deadline_in(timeout_ns);
	uint32_t first;
	int efd, ret;

	ret = gpuar_drm_point_available_fd(drm_fd, handle, point, &efd);
	if (ret == 0) {
		/*
		 * To the deadline in ns, so a timeout under a millisecond is
		 * waited, not rounded to "now"; a signal resumes the wait to
		 * the same deadline rather than restart it.
		 */
		do {
			ret = gpuar_fd_wait_readable(efd, deadline);
		} while (ret == -EINTR);
		ret = ret < 0 ? ret : ret == 0 ? -ETIME : 0;
		close(efd);
		return ret;
	}
	if (ret != -EOPNOTSUPP)
		return ret;
	/* Before 6.6: block in the timeline wait (absolute CLOCK_MONOTONIC). */
	ret = drmSyncobjTimelineWait(drm_fd, &handle, &point, 1,
				     deadline > (u64)INT64_MAX ? INT64_MAX :
				     (int64_t)deadline,
				     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE, &first);
	if (ret < 0)
		return errno == ETIME ? -ETIME : -errno;
	return 0;
}
