// SPDX-License-Identifier: MIT
#include "bench_vgem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libdrm/drm.h>
#include <linux/dma-buf.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/*
 * vgem's two driver ioctls (include/uapi/drm/vgem_drm.h in the kernel; the
 * header is not in Debian's userspace packages).
 */
struct bench_vgem_fence_attach {
	__u32 handle;
	__u32 flags;
	__u32 out_fence;
	__u32 pad;
};

struct bench_vgem_fence_signal {
	__u32 fence;
	__u32 flags;
};

#define BENCH_VGEM_FENCE_WRITE 0x1
#define BENCH_IOCTL_VGEM_FENCE_ATTACH \
	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct bench_vgem_fence_attach)
#define BENCH_IOCTL_VGEM_FENCE_SIGNAL \
	DRM_IOW(DRM_COMMAND_BASE + 0x2, struct bench_vgem_fence_signal)

static int driver_is_vgem(int fd)
{
	char name[32] = "";
	struct drm_version v = { .name_len = sizeof(name) - 1, .name = name };

	if (ioctl(fd, DRM_IOCTL_VERSION, &v))
		return 0;
	return !strcmp(name, "vgem");
}

int bench_vgem_open(char *why, size_t why_size)
{
	DIR *d = opendir("/dev/dri");
	struct dirent *e;
	int found = -1;

	if (!d) {
		snprintf(why, why_size, "vgem not loaded (no /dev/dri)");
		return -1;
	}
	while (found < 0 && (e = readdir(d))) {
		char path[300];
		int fd;

		if (strncmp(e->d_name, "card", 4))
			continue;
		snprintf(path, sizeof(path), "/dev/dri/%s", e->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (driver_is_vgem(fd))
			found = fd;
		else
			close(fd);
	}
	closedir(d);
	if (found < 0)
		snprintf(why, why_size, "vgem not loaded (no vgem card in /dev/dri)");
	return found;
}

int bench_vgem_bo(int vgem_fd, uint32_t *handle, int *dmabuf_fd)
{
	struct drm_mode_create_dumb dumb = { .width = 1024, .height = 1, .bpp = 32 };
	struct drm_prime_handle prime = { .flags = DRM_CLOEXEC | DRM_RDWR };

	if (ioctl(vgem_fd, DRM_IOCTL_MODE_CREATE_DUMB, &dumb))
		return -errno;
	prime.handle = dumb.handle;
	if (ioctl(vgem_fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime)) {
		int err = -errno;
		struct drm_mode_destroy_dumb destroy = { .handle = dumb.handle };

		ioctl(vgem_fd, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy);
		return err;
	}
	*handle = dumb.handle;
	*dmabuf_fd = prime.fd;
	return 0;
}

int bench_vgem_fence(int vgem_fd, uint32_t handle, int dmabuf_fd,
		     uint32_t *fence, int *sync_fd)
{
	struct bench_vgem_fence_attach att = {
		.handle = handle, .flags = BENCH_VGEM_FENCE_WRITE,
	};
	/* READ: the fences a reader waits for, i.e. the write fence. */
	struct dma_buf_export_sync_file exp = { .flags = DMA_BUF_SYNC_READ, .fd = -1 };

	if (ioctl(vgem_fd, BENCH_IOCTL_VGEM_FENCE_ATTACH, &att))
		return -errno;
	if (ioctl(dmabuf_fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &exp)) {
		int err = -errno;

		bench_vgem_signal(vgem_fd, att.out_fence);
		return err;
	}
	*fence = att.out_fence;
	*sync_fd = exp.fd;
	return 0;
}

int bench_vgem_signal(int vgem_fd, uint32_t fence)
{
	struct bench_vgem_fence_signal sig = { .fence = fence };

	return ioctl(vgem_fd, BENCH_IOCTL_VGEM_FENCE_SIGNAL, &sig);
}
