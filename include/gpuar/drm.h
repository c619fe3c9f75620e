/* SPDX-License-Identifier: MIT */
/*
 * The DRM backend (libdrm): fences as completion sources. Any DRM driver's
 * dma_fence reaches a port as a sync_file fd (gpuar_submit_fence_waits, or
 * gpuar_fd_source_init for the wait driver and executor). A drm_syncobj
 * timeline point is exported as a sync_file; a point not yet submitted has
 * no fence to export, so first wait for it to materialise:
 *
 *   Linux 6.6+   DRM_IOCTL_SYNCOBJ_EVENTFD with
 *                DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE: an eventfd that
 *                turns readable when the point materialises, pollable next
 *                to the port (gpuar_drm_point_available_fd).
 *   older (6.1)  no eventfd: gpuar_drm_point_available_fd fails with
 *                -EOPNOTSUPP, and gpuar_drm_point_wait_available blocks the
 *                calling thread in DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT with
 *                WAIT_AVAILABLE (a bounded timeout) instead.
 *
 * Include through <gpuar/gpuar.h>.
 */
#ifndef GPUAR_DRM_H
#define GPUAR_DRM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A sync_file's state: *@signalled 1 when signalled (0 pending),
 * *@status its error (0 or a negative errno), *@timestamp_ns the latest
 * signal time of its fences (CLOCK_MONOTONIC; 0 while pending). Any of the
 * out pointers may be NULL. Errors: -EBADF, -EINVAL/-ENOTTY (not a
 * sync_file), -ENOMEM. Thread-safe.
 */
int gpuar_sync_file_info(int fd, int *signalled, int *status,
			 uint64_t *timestamp_ns);

/*
 * Export timeline point @point of syncobj @handle (0 for a binary syncobj:
 * its current fence) as a new sync_file fd in *@sync_file_fd (O_CLOEXEC,
 * the caller's to close). Errors: -EINVAL or -ENOENT when the point has no
 * fence yet (not submitted: wait for it first), libdrm's errors.
 * Thread-safe.
 */
int gpuar_drm_point_export(int drm_fd, uint32_t handle, uint64_t point,
			   int *sync_file_fd);

/*
 * An eventfd (in *@event_fd, the caller's to close) that turns readable
 * when @point of @handle materialises (6.6+). Errors: -EOPNOTSUPP on
 * kernels without DRM_IOCTL_SYNCOBJ_EVENTFD, libdrm's errors. Thread-safe.
 */
int gpuar_drm_point_available_fd(int drm_fd, uint32_t handle, uint64_t point,
				 int *event_fd);

/*
 * Block until @point of @handle materialises or @timeout_ns passes
 * (< 0: forever): through the eventfd where the kernel has it, else the
 * timeline wait with WAIT_AVAILABLE. Errors: -ETIME, libdrm's errors.
 * Thread-safe.
 */
int gpuar_drm_point_wait_available(int drm_fd, uint32_t handle,
				   uint64_t point, int64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif /* GPUAR_DRM_H */
