// SPDX-License-Identifier: MIT
/*
 * libgpuar's DRM backend. Without a DRM device: sync_file queries and
 * syncobj calls refuse what is not theirs with the right errno, and an fd
 * source follows its fd. With the devices of the test VMs: a vgem fence
 * waited through a port (GPUAR_TEST_ENGINE: the user engine polls the
 * sync_file, the module waits on its dma_fence), and, where a driver with
 * drm_syncobj timelines is present (virtio-gpu on 6.12 and 7.x), timeline
 * points reaching a port as sync_files. Each device test skips, with the
 * reason, where its device is missing.
 */
#include <gpuar/gpuar.h>

#include "unit_tap.h"
/* vgem fences as the kernel selftests make them (helpers, no harness). */
#include "../kmod/vgem_fixture.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MS 1000000LL

START_TEST(sync_file_info_refuses_other_fds)
{
	int fds[2], signalled = 7;

	ck_assert_int_eq(gpuar_sync_file_info(-1, &signalled, NULL, NULL), -EBADF);
	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(gpuar_sync_file_info(fds[0], &signalled, NULL, NULL), -ENOTTY);
	ck_assert_int_eq(signalled, 7);	/* untouched on failure */
	close(fds[0]);
	close(fds[1]);
}
END_TEST

START_TEST(syncobj_calls_refuse_a_non_drm_fd)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC), out = 5;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_lt(gpuar_drm_point_export(fd, 1, 3, &out), 0);
	ck_assert_int_eq(out, -1);
	ck_assert_int_lt(gpuar_drm_point_export(fd, 1, 0, &out), 0);
	/* No eventfd ioctl on a non-DRM fd: reported as unsupported. */
	ck_assert_int_eq(gpuar_drm_point_available_fd(fd, 1, 3, &out), -EOPNOTSUPP);
	ck_assert_int_eq(out, -1);
	ck_assert_int_lt(gpuar_drm_point_wait_available(fd, 1, 3, 1000000), 0);
	ck_assert_int_eq(gpuar_drm_point_export(fd, 1, 3, NULL), -EINVAL);
	ck_assert_int_eq(gpuar_drm_point_available_fd(fd, 1, 3, NULL), -EINVAL);
	close(fd);
}
END_TEST

START_TEST(fd_source_follows_its_fd)
{
	struct gpuar_fd_source fs;
	const struct gpuar_src *src;
	uint64_t v = 9;
	int fds[2];

	ck_assert_int_eq(pipe(fds), 0);
	src = gpuar_fd_source_init(&fs, fds[0]);
	ck_assert_int_eq(src->ops->check(src->ctx, &v), 0);
	ck_assert_int_eq(src->ops->fd(src->ctx), fds[0]);
	ck_assert_ptr_null(src->ops->word);
	ck_assert_int_eq(write(fds[1], "x", 1), 1);
	ck_assert_int_eq(src->ops->check(src->ctx, &v), 1);
	ck_assert_uint_eq(v, 0);
	close(fds[1]);
	close(fds[0]);
	/* A closed fd is a source error, not "done". */
	ck_assert_int_eq(src->ops->check(src->ctx, &v), -EBADF);
}
END_TEST

/* ------------------------------------------------------ with devices */

static struct gpuar_port *test_port(void)
{
	const char *e = getenv("GPUAR_TEST_ENGINE");
	struct gpuar_port_options o = { .engine = GPUAR_ENGINE_USER };
	struct gpuar_port *p;
	struct gpuar_error err;

	if (e && !strcmp(e, "kernel")) {
		o.engine = GPUAR_ENGINE_KERNEL;
		o.flags = GPUAR_PORT_STRICT;
	}
	ck_assert_msg(gpuar_port_open(&p, &o, &err) == 0, "%s", err.message);
	return p;
}

/*
 * The syncobj ioctls, raw (<libdrm/drm.h> through the fixture): the test
 * drives the device the way a driver's submission would, independently of
 * the backend under test. Each returns 0 or a negative errno.
 */
static int so_create(int drm, uint32_t *h)
{
	struct drm_syncobj_create c = { 0 };
	int ret = vgem_ioctl(drm, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	*h = c.handle;
	return ret;
}

static void so_destroy(int drm, uint32_t h)
{
	struct drm_syncobj_destroy d = { .handle = h };

	vgem_ioctl(drm, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

static int so_signal(int drm, uint32_t h, uint64_t point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&h,
		.points = (uintptr_t)&point,
		.count_handles = 1,
	};
	return vgem_ioctl(drm, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a);
}

/* Replace binary syncobj @h's fence with the sync_file's. */
static int so_import_sync_file(int drm, uint32_t h, int sync_fd)
{
	struct drm_syncobj_handle a = {
		.handle = h,
		.fd = sync_fd,
		.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
	};
	return vgem_ioctl(drm, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &a);
}

/* Attach @src's fence as point @point of timeline @dst: a submission. */
static int so_transfer(int drm, uint32_t dst, uint64_t point, uint32_t src)
{
	struct drm_syncobj_transfer t = {
		.src_handle = src,
		.dst_handle = dst,
		.dst_point = point,
	};
	return vgem_ioctl(drm, DRM_IOCTL_SYNCOBJ_TRANSFER, &t);
}

/* A DRM node whose driver has drm_syncobj timelines, or -ENODEV. */
static int syncobj_open(void)
{
	static const char *const fmt[] = { "/dev/dri/renderD%d", "/dev/dri/card%d" };
	char path[32];
	int i, k, fd;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < 16; i++) {
			snprintf(path, sizeof(path), fmt[k], k ? i : 128 + i);
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				continue;
			struct drm_get_cap c = { .capability = DRM_CAP_SYNCOBJ_TIMELINE };

			if (!vgem_ioctl(fd, DRM_IOCTL_GET_CAP, &c) && c.value)
				return fd;
			close(fd);
		}
	}
	return -ENODEV;
}

static void submit_fence(struct gpuar_port *p, int sync_fd, uint64_t ud)
{
	struct gpuar_fence_wait f = { .user_data = ud, .fd = sync_fd };

	ck_assert_int_eq(gpuar_submit_fence_waits(p, &f, 1, NULL), 1);
}

/* One record: the fence wait @ud ended with its fence signalled, no error. */
static void reap_fence(struct gpuar_port *p, uint64_t ud)
{
	struct gpuar_record rec;

	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 2000 * MS), 1);
	ck_assert_uint_eq(rec.user_data, ud);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_FENCE);
	ck_assert_int_eq(rec.status, 0);
}

/* Pending until vgem signals it from the CPU; then one FENCE record. */
START_TEST(vgem_fence_wait_completes_when_signalled)
{
	struct gpuar_port *p = test_port();
	struct gpuar_record rec;
	struct vgem_fence f;
	int drm = vgem_open(), signalled = 1;

	ck_assert_int_ge(drm, 0);
	ck_assert_int_eq(vgem_fence_create(drm, &f), 0);
	ck_assert_int_eq(gpuar_sync_file_info(f.sync_fd, &signalled, NULL, NULL), 0);
	ck_assert_int_eq(signalled, 0);
	submit_fence(p, f.sync_fd, 41);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 20 * MS), -ETIME);
	ck_assert_int_eq(vgem_fence_signal(drm, &f), 0);
	reap_fence(p, 41);
	ck_assert_int_eq(gpuar_sync_file_info(f.sync_fd, &signalled, NULL, NULL), 0);
	ck_assert_int_eq(signalled, 1);
	vgem_fence_destroy(drm, &f);
	gpuar_port_close(p);
	close(drm);
}
END_TEST

/* A fence signalled before submission completes at once; a cancel wins. */
START_TEST(vgem_signalled_fence_is_immediate_and_pending_one_cancels)
{
	struct gpuar_port *p = test_port();
	struct gpuar_record rec;
	struct vgem_fence a, b;
	int drm = vgem_open();

	ck_assert_int_ge(drm, 0);
	ck_assert_int_eq(vgem_fence_create(drm, &a), 0);
	ck_assert_int_eq(vgem_fence_create(drm, &b), 0);
	ck_assert_int_eq(vgem_fence_signal(drm, &a), 0);
	submit_fence(p, a.sync_fd, 1);
	reap_fence(p, 1);
	submit_fence(p, b.sync_fd, 2);
	ck_assert_int_eq(gpuar_cancel(p, 2), 1);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 2000 * MS), 1);
	ck_assert_uint_eq(rec.user_data, 2);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_CANCELLED);
	ck_assert_int_eq(rec.status, -ECANCELED);
	vgem_fence_destroy(drm, &b);
	vgem_fence_destroy(drm, &a);
	gpuar_port_close(p);
	close(drm);
}
END_TEST

/* A point signalled from the CPU exports as a signalled sync_file. */
START_TEST(syncobj_cpu_signalled_point_exports_and_completes)
{
	struct gpuar_port *p = test_port();
	uint64_t point = 5;
	uint32_t h;
	int drm = syncobj_open(), sf = -1, signalled = 0;

	ck_assert_int_ge(drm, 0);
	ck_assert_int_eq(so_create(drm, &h), 0);
	/* Not submitted yet: nothing to export. */
	ck_assert_int_lt(gpuar_drm_point_export(drm, h, point, &sf), 0);
	ck_assert_int_eq(sf, -1);
	ck_assert_int_eq(so_signal(drm, h, point), 0);
	ck_assert_int_eq(gpuar_drm_point_export(drm, h, point, &sf), 0);
	ck_assert_int_eq(gpuar_sync_file_info(sf, &signalled, NULL, NULL), 0);
	ck_assert_int_eq(signalled, 1);
	submit_fence(p, sf, 5);
	reap_fence(p, 5);
	close(sf);
	so_destroy(drm, h);
	gpuar_port_close(p);
	close(drm);
}
END_TEST

/*
 * A point waited for before it is submitted: the eventfd (6.6+, with
 * WAIT_AVAILABLE) stays quiet until a pending fence (vgem's) is attached
 * at the point, then the exported sync_file waits in the port until vgem
 * signals it.
 */
START_TEST(syncobj_point_materialises_then_waits_in_the_port)
{
	struct gpuar_port *p = test_port();
	struct gpuar_record rec;
	struct vgem_fence f;
	struct pollfd pfd = { .events = POLLIN };
	uint64_t point = 3, t0;
	uint32_t bin, tl;
	int drm = syncobj_open(), vg = vgem_open(), sf = -1, efd = -1;

	ck_assert_int_ge(drm, 0);
	ck_assert_int_ge(vg, 0);
	ck_assert_int_eq(so_create(drm, &tl), 0);
	ck_assert_int_eq(so_create(drm, &bin), 0);
	ck_assert_int_eq(gpuar_drm_point_available_fd(drm, tl, point, &efd), 0);
	pfd.fd = efd;
	ck_assert_int_eq(poll(&pfd, 1, 20), 0);
	ck_assert_int_eq(gpuar_drm_point_wait_available(drm, tl, point, 10 * MS), -ETIME);
	/* A timeout under a millisecond is waited in full, not rounded to 0. */
	t0 = gpuar_now_ns();
	ck_assert_int_eq(gpuar_drm_point_wait_available(drm, tl, point, MS / 2), -ETIME);
	ck_assert_uint_ge(gpuar_now_ns() - t0, MS / 2);
	/* Submit: vgem's pending fence becomes the point. */
	ck_assert_int_eq(vgem_fence_create(vg, &f), 0);
	ck_assert_int_eq(so_import_sync_file(drm, bin, f.sync_fd), 0);
	ck_assert_int_eq(so_transfer(drm, tl, point, bin), 0);
	ck_assert_int_eq(poll(&pfd, 1, 2000), 1);
	ck_assert(pfd.revents & POLLIN);
	ck_assert_int_eq(gpuar_drm_point_wait_available(drm, tl, point, 0), 0);
	ck_assert_int_eq(gpuar_drm_point_export(drm, tl, point, &sf), 0);
	submit_fence(p, sf, 3);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 20 * MS), -ETIME);
	ck_assert_int_eq(vgem_fence_signal(vg, &f), 0);
	reap_fence(p, 3);
	close(sf);
	close(efd);
	vgem_fence_destroy(vg, &f);
	so_destroy(drm, bin);
	so_destroy(drm, tl);
	gpuar_port_close(p);
	close(vg);
	close(drm);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_drm");
	TCase *t = tcase_create("drm"), *dev = tcase_create("devices");
	struct unit_skips skips = { 0 };
	const char *no_vgem = NULL, *no_syncobj = NULL, *no_both;
	int fd;

	fd = vgem_open();
	if (fd >= 0)
		close(fd);
	else
		no_vgem = "no vgem device (/dev/dri/card*: modprobe vgem; the VMs load it)";
	fd = syncobj_open();
	if (fd >= 0)
		close(fd);
	else
		no_syncobj = "no DRM driver with drm_syncobj timelines (vgem has none; "
			     "virtio-gpu is only in the 6.12 and 7.x VMs)";
	no_both = no_syncobj ? no_syncobj : no_vgem;
	tcase_add_test(t, sync_file_info_refuses_other_fds);
	tcase_add_test(t, syncobj_calls_refuse_a_non_drm_fd);
	tcase_add_test(t, fd_source_follows_its_fd);
	suite_add_tcase(s, t);
	tcase_set_timeout(dev, 30);
	unit_add_or_skip(dev, &skips, vgem_fence_wait_completes_when_signalled, no_vgem);
	unit_add_or_skip(dev, &skips, vgem_signalled_fence_is_immediate_and_pending_one_cancels,
			 no_vgem);
	unit_add_or_skip(dev, &skips, syncobj_cpu_signalled_point_exports_and_completes,
			 no_syncobj);
	unit_add_or_skip(dev, &skips, syncobj_point_materialises_then_waits_in_the_port,
			 no_both);
	suite_add_tcase(s, dev);
	return unit_run_tap(s, &skips);
}
