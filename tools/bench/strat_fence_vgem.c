// SPDX-License-Identifier: MIT
/*
 * fence-vgem: each job carries a vgem fence (a real dma_fence) that the
 * simulated device signals right after its store; the waiter submits the
 * fence's sync_file to the module's port and blocks in read(). The
 * device's signal ioctl is the producer's wake-up cost and counts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "bench_counts.h"
#include "bench_clock.h"
#include "bench_kport.h"
#include "bench_vgem.h"

struct fence_state {
	struct bench_kport kp;
	int vgem;
	uint32_t bo[BENCH_MAX_STREAMS];
	int dmabuf[BENCH_MAX_STREAMS];
};

static void fence_plan(const struct bench_strategy *st,
		       const struct bench_config *cfg, char *buf, size_t size)
{
	(void)st;
	(void)cfg;
	/* A fence wait has no plan: the fence's callback completes it. */
	snprintf(buf, size, "fence");
}

static int fence_probe(const struct bench_config *cfg, char *why, size_t size)
{
	int fd;

	if (bench_kport_probe(cfg->device_path, GPUAR_FEATURE_FENCE_WAIT, why, size))
		return -1;
	fd = bench_vgem_open(why, size);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void fence_close(void *state, struct bench_ctx *ctx)
{
	struct fence_state *fs = state;

	ctx->dev->vgem_fd = -1;
	bench_kport_close(&fs->kp);
	for (unsigned int i = 0; i < BENCH_MAX_STREAMS; i++)
		if (fs->dmabuf[i] >= 0)
			close(fs->dmabuf[i]);
	if (fs->vgem >= 0)
		close(fs->vgem);	/* frees the buffer objects */
	free(fs);
}

static int fence_open(const struct bench_strategy *st, struct bench_ctx *ctx,
		      void **state, char *why, size_t size)
{
	struct fence_state *fs = calloc(1, sizeof(*fs));
	int err;

	(void)st;
	if (!fs)
		return -ENOMEM;
	fs->kp.fd = -1;
	for (unsigned int i = 0; i < BENCH_MAX_STREAMS; i++)
		fs->dmabuf[i] = -1;
	fs->vgem = bench_vgem_open(why, size);
	if (fs->vgem < 0) {
		fence_close(fs, ctx);
		return -ENODEV;
	}
	for (unsigned int i = 0; i < ctx->dev->streams; i++) {
		err = bench_vgem_bo(fs->vgem, &fs->bo[i], &fs->dmabuf[i]);
		if (err) {
			snprintf(why, size, "vgem buffer: %s", strerror(-err));
			fence_close(fs, ctx);
			return err;
		}
	}
	err = bench_kport_open(&fs->kp, ctx, 0, 0, why, size);
	if (err) {
		fence_close(fs, ctx);
		return err;
	}
	ctx->dev->vgem_fd = fs->vgem;
	*state = fs;
	return 0;
}

static int fence_submit(void *state, struct bench_ctx *ctx, unsigned int stream,
			uint64_t seq)
{
	struct fence_state *fs = state;
	struct gpuar_fence_wait w = { .user_data = stream };
	struct gpuar_submit sub = {
		.size = sizeof(sub), .count = 1, .entry_size = sizeof(w),
		.entries = (uint64_t)(uintptr_t)&w,
	};
	uint32_t fence;
	int sync_fd, err;

	(void)seq;
	err = bench_vgem_fence(fs->vgem, fs->bo[stream], fs->dmabuf[stream],
			       &fence, &sync_fd);
	if (err)
		return err;
	w.fd = sync_fd;
	err = BENCH_SYS(ioctl(fs->kp.fd, GPUAR_IOC_SUBMIT_FENCE, &sub)) == 1 ? 0 : -errno;
	close(sync_fd);	/* the port holds its own reference */
	if (err) {
		bench_vgem_signal(fs->vgem, fence);
		return err;
	}
	atomic_store(&ctx->dev->stream[stream].fence, fence);
	return 0;
}

static int fence_wait(void *state, struct bench_ctx *ctx,
		      struct bench_done *done, unsigned int max)
{
	struct fence_state *fs = state;

	for (;;) {
		ssize_t r = BENCH_SYS(read(fs->kp.fd, fs->kp.rec, sizeof(fs->kp.rec)));
		uint64_t now = bench_now_ns();
		unsigned int n;

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		n = bench_kport_records(&fs->kp, ctx,
					(unsigned int)(r / (ssize_t)sizeof(fs->kp.rec[0])),
					now, done, max);
		if (n)
			return (int)n;
	}
}

const struct bench_strategy bench_strat_fence_vgem = {
	.name = "fence-vgem",
	.family = "fence-vgem",
	.engine = "kernel",
	.notify = BENCH_NOTIFY_VGEM,
	.probe = fence_probe,
	.plan = fence_plan,
	.open = fence_open,
	.submit = fence_submit,
	.wait = fence_wait,
	.close = fence_close,
	.port_stats = bench_kport_port_stats,
};
