// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * First suite: the module is loaded and answers, a port opens and closes,
 * and vgem hands out fences as sync_files that signal on request (the
 * fixture every fence test stands on).
 */
#include <sys/stat.h>

#include "kselftest_harness.h"

#include "port_fixture.h"
#include "vgem_fixture.h"

TEST(module_loaded)
{
	struct stat st;

	ASSERT_EQ(0, stat("/sys/module/gpuar", &st)) {
		TH_LOG("gpuar.ko is not loaded: %s", strerror(errno));
	}
	ASSERT_TRUE(S_ISDIR(st.st_mode));
}

TEST(device_node_exists)
{
	struct stat st;

	ASSERT_EQ(0, stat(GPUAR_DEVICE_PATH, &st)) {
		TH_LOG("%s: %s", GPUAR_DEVICE_PATH, strerror(errno));
	}
	ASSERT_TRUE(S_ISCHR(st.st_mode));
}

TEST(version_query)
{
	struct gpuar_version v;
	int dev = t_dev_open();

	ASSERT_LE(0, dev);
	ASSERT_EQ(0, t_version(dev, &v));
	EXPECT_EQ((__u32)GPUAR_ABI_VERSION, v.abi);
	EXPECT_LE((__u32)GPUAR_RECORD_VERSION_1, v.record_max);
	EXPECT_EQ(GPUAR_FEATURE_WORD_WAIT | GPUAR_FEATURE_FENCE_WAIT,
		  v.features & (GPUAR_FEATURE_WORD_WAIT |
				GPUAR_FEATURE_FENCE_WAIT));
	EXPECT_EQ(0, close(dev));
}

TEST(port_opens_and_closes)
{
	struct gpuar_record r;
	int dev = t_dev_open();
	int port;

	ASSERT_LE(0, dev);
	port = t_port_create(dev, GPUAR_PORT_CLOEXEC | GPUAR_PORT_NONBLOCK);
	ASSERT_LE(0, port) {
		TH_LOG("PORT_CREATE: %s", strerror(errno));
	}
	EXPECT_NE(dev, port);
	EXPECT_EQ(FD_CLOEXEC, fcntl(port, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_NONBLOCK, fcntl(port, F_GETFL) & O_NONBLOCK);
	/* A new port has nothing to read. */
	EXPECT_TRUE(port_quiet(port, 0));
	EXPECT_EQ(-1, read(port, &r, sizeof(r)));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, close(port));
	EXPECT_EQ(0, close(dev));
}

FIXTURE(vgem)
{
	int drm;
	struct vgem_fence fence;
};

FIXTURE_SETUP(vgem)
{
	self->fence.sync_fd = -1;
	self->fence.bo = 0;
	self->drm = vgem_open();
	ASSERT_LE(0, self->drm) {
		TH_LOG("no vgem device under /dev/dri: %s",
		       strerror(-self->drm));
	}
}

FIXTURE_TEARDOWN(vgem)
{
	if (self->drm >= 0) {
		vgem_fence_destroy(self->drm, &self->fence);
		close(self->drm);
	}
}

TEST_F(vgem, fence_exports_as_sync_file_and_signals)
{
	int ret = vgem_fence_create(self->drm, &self->fence);

	ASSERT_EQ(0, ret) {
		TH_LOG("vgem fence: %s", strerror(-ret));
	}
	ASSERT_LE(0, self->fence.sync_fd);
	/* Pending: not readable, status 0. */
	EXPECT_EQ(0, sync_file_readable(self->fence.sync_fd, 20));
	EXPECT_EQ(0, sync_file_status(self->fence.sync_fd));

	ASSERT_EQ(0, vgem_fence_signal(self->drm, &self->fence));
	EXPECT_EQ(1, sync_file_readable(self->fence.sync_fd, 1000));
	EXPECT_EQ(1, sync_file_status(self->fence.sync_fd));
	/* vgem consumes the fence id when it signals. */
	EXPECT_EQ(-ENOENT, vgem_fence_signal(self->drm, &self->fence));
}

TEST_HARNESS_MAIN
