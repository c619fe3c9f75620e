/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * vgem fences for the gpuar selftests: real dma_fences from a real DRM
 * driver, reached the way applications reach any driver's fence, as a
 * sync_file.
 *
 * vgem attaches a fence to a GEM object's reservation object; exporting the
 * object as a dma-buf and asking for its sync_file (DMA_BUF_IOCTL_EXPORT_
 * SYNC_FILE, Linux 6.0+) gives an fd holding exactly that fence. vgem
 * signals every fence on its own about 10 s after attaching it, so a test
 * may rely on a vgem fence staying pending only for a few seconds; fences
 * that must stay pending come from gpuar_testfence.ko.
 *
 * Helpers return 0 or a negative errno and never assert, so they are usable
 * from any thread.
 */
#ifndef GPUAR_SELFTEST_VGEM_FIXTURE_H
#define GPUAR_SELFTEST_VGEM_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <libdrm/drm.h>
#include <linux/dma-buf.h>
#include <linux/sync_file.h>

/* vgem's uapi (include/uapi/drm/vgem_drm.h); libdrm does not ship it. */
#ifndef DRM_IOCTL_VGEM_FENCE_ATTACH
struct drm_vgem_fence_attach {
	__u32 handle;
	__u32 flags;
	__u32 out_fence;
	__u32 pad;
};

struct drm_vgem_fence_signal {
	__u32 fence;
	__u32 flags;
};

#define VGEM_FENCE_WRITE 0x1
#define DRM_VGEM_FENCE_ATTACH 0x1
#define DRM_VGEM_FENCE_SIGNAL 0x2
#define DRM_IOCTL_VGEM_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGEM_FENCE_ATTACH, \
		 struct drm_vgem_fence_attach)
#define DRM_IOCTL_VGEM_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VGEM_FENCE_SIGNAL, \
		struct drm_vgem_fence_signal)
#endif

/* One vgem fence: its buffer, its id for signalling, its sync_file. */
struct vgem_fence {
	__u32 bo;
	__u32 id;
	int sync_fd;
};

static inline int vgem_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret == -1 ? -errno : ret;
}

/* True when the DRM device open on @fd is vgem. */
static inline int vgem_is_vgem(int fd)
{
	char name[16] = "";
	struct drm_version v;

	memset(&v, 0, sizeof(v));
	v.name = name;
	v.name_len = sizeof(name) - 1;
	if (vgem_ioctl(fd, DRM_IOCTL_VERSION, &v))
		return 0;
	return strcmp(name, "vgem") == 0;
}

/*
 * Open vgem's primary node (dumb buffers are not allowed on render nodes).
 * Other DRM devices (virtio-gpu) may sit before it under /dev/dri.
 * Returns the fd or -ENODEV.
 */
static inline int vgem_open(void)
{
	char path[32];
	int i, fd;

	for (i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (vgem_is_vgem(fd))
			return fd;
		close(fd);
	}
	return -ENODEV;
}

/* A fresh buffer with an unsignalled write fence, exported as a sync_file. */
static inline int vgem_fence_create(int drm, struct vgem_fence *f)
{
	struct drm_mode_create_dumb dumb;
	struct drm_vgem_fence_attach attach;
	struct drm_prime_handle prime;
	struct dma_buf_export_sync_file exp;
	struct drm_gem_close gclose;
	int ret;

	memset(f, 0, sizeof(*f));
	f->sync_fd = -1;
	memset(&dumb, 0, sizeof(dumb));
	dumb.width = 16;
	dumb.height = 1;
	dumb.bpp = 32;
	ret = vgem_ioctl(drm, DRM_IOCTL_MODE_CREATE_DUMB, &dumb);
	if (ret)
		return ret;
	f->bo = dumb.handle;

	memset(&attach, 0, sizeof(attach));
	attach.handle = f->bo;
	attach.flags = VGEM_FENCE_WRITE;
	ret = vgem_ioctl(drm, DRM_IOCTL_VGEM_FENCE_ATTACH, &attach);
	if (ret)
		goto err_bo;
	f->id = attach.out_fence;

	memset(&prime, 0, sizeof(prime));
	prime.handle = f->bo;
	prime.flags = DRM_CLOEXEC;
	ret = vgem_ioctl(drm, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime);
	if (ret)
		goto err_signal;

	/* A reader waits for the writer: SYNC_READ yields the write fence. */
	memset(&exp, 0, sizeof(exp));
	exp.flags = DMA_BUF_SYNC_READ;
	ret = vgem_ioctl(prime.fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &exp);
	close(prime.fd);
	if (ret)
		goto err_signal;
	f->sync_fd = exp.fd;
	return 0;

err_signal:
	{
		struct drm_vgem_fence_signal sig = { .fence = f->id };

		vgem_ioctl(drm, DRM_IOCTL_VGEM_FENCE_SIGNAL, &sig);
	}
err_bo:
	memset(&gclose, 0, sizeof(gclose));
	gclose.handle = f->bo;
	vgem_ioctl(drm, DRM_IOCTL_GEM_CLOSE, &gclose);
	return ret;
}

/* Signal the fence (vgem forgets its id once signalled). */
static inline int vgem_fence_signal(int drm, const struct vgem_fence *f)
{
	struct drm_vgem_fence_signal sig;

	memset(&sig, 0, sizeof(sig));
	sig.fence = f->id;
	return vgem_ioctl(drm, DRM_IOCTL_VGEM_FENCE_SIGNAL, &sig);
}

/* Close the sync_file and the buffer; signal first if still pending. */
static inline void vgem_fence_destroy(int drm, struct vgem_fence *f)
{
	struct drm_gem_close gclose;

	if (f->sync_fd >= 0)
		close(f->sync_fd);
	f->sync_fd = -1;
	if (!f->bo)
		return;
	vgem_fence_signal(drm, f);	/* ENOENT when already signalled */
	memset(&gclose, 0, sizeof(gclose));
	gclose.handle = f->bo;
	vgem_ioctl(drm, DRM_IOCTL_GEM_CLOSE, &gclose);
	f->bo = 0;
}

/* 1 when the sync_file @fd polls readable within @timeout_ms, else 0. */
static inline int sync_file_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do {
		n = poll(&p, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	return n == 1 && (p.revents & POLLIN);
}

/* The sync_file's status: 1 signalled, 0 pending, negative: its error. */
static inline int sync_file_status(int fd)
{
	struct sync_file_info info;
	int ret;

	memset(&info, 0, sizeof(info));
	ret = vgem_ioctl(fd, SYNC_IOC_FILE_INFO, &info);
	if (ret)
		return ret;
	return info.status;
}

#endif /* GPUAR_SELFTEST_VGEM_FIXTURE_H */
