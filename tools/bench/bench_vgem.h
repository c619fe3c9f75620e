/* SPDX-License-Identifier: MIT */
/*
 * vgem fences: real dma_fences, with no GPU, that the simulated device
 * signals. A fence is attached to a vgem buffer object, exported as a
 * sync_file (through the buffer's dma-buf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE,
 * Linux 6.0+) for the port to wait on, and signalled by id.
 */
#ifndef GPUAR_BENCH_VGEM_H
#define GPUAR_BENCH_VGEM_H

#include <stddef.h>
#include <stdint.h>

/*
 * Open the first DRM node driven by vgem. Returns the fd, or -1 with a
 * reason written to @why.
 */
int bench_vgem_open(char *why, size_t why_size);

/* A buffer object and its dma-buf; 0 or a negative errno. */
int bench_vgem_bo(int vgem_fd, uint32_t *handle, int *dmabuf_fd);

/*
 * Attach a new unsignalled write fence to @handle and export the fences of
 * @dmabuf_fd as a sync_file. Returns 0 with *@fence (the id to signal) and
 * *@sync_fd, or a negative errno.
 */
int bench_vgem_fence(int vgem_fd, uint32_t handle, int dmabuf_fd,
		     uint32_t *fence, int *sync_fd);

/* Signal fence @fence; 0 or -1 with errno. */
int bench_vgem_signal(int vgem_fd, uint32_t fence);

#endif /* GPUAR_BENCH_VGEM_H */
