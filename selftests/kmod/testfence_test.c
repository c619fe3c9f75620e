// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * gpuar_testfence.ko itself, the fence source other suites rely on:
 * timelines hand out sync_files that stay pending until signalled, signal
 * up to a seqno with or without an error, and cancel on close.
 *
 *   unknown ioctl ............................. ENOTTY
 *   timeline flags/pad, fence flags ........... EINVAL
 *   signal error > 0 or < -4095, flags ........ EINVAL
 *   signal below the timeline's value ......... EINVAL
 *   barrier with an argument .................. EINVAL
 */
#include <sys/stat.h>

#include "kselftest_harness.h"

#include "port_fixture.h"
#include "testfence_fixture.h"
#include "vgem_fixture.h"

FIXTURE(timeline)
{
	int tl;
};

FIXTURE_SETUP(timeline)
{
	self->tl = testfence_timeline();
	ASSERT_LE(0, self->tl) {
		TH_LOG("%s: %s", GPUAR_TESTFENCE_PATH, strerror(errno));
	}
}

FIXTURE_TEARDOWN(timeline)
{
	close(self->tl);
}

TEST(device_node_exists)
{
	struct stat st;

	ASSERT_EQ(0, stat(GPUAR_TESTFENCE_PATH, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(timeline_bad_flags_einval)
{
	struct gpuar_testfence_timeline t;
	int dev = open(GPUAR_TESTFENCE_PATH, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, dev);
	memset(&t, 0, sizeof(t));
	t.flags = 2;
	EXPECT_EQ(-1, ioctl(dev, GPUAR_TESTFENCE_IOC_TIMELINE, &t));
	EXPECT_EQ(EINVAL, errno);
	t.flags = 0;
	t.pad = 1;
	EXPECT_EQ(-1, ioctl(dev, GPUAR_TESTFENCE_IOC_TIMELINE, &t));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(dev, GPUAR_TESTFENCE_IOC_FENCE, &t));
	EXPECT_EQ(ENOTTY, errno);
	close(dev);
}

TEST_F(timeline, timeline_is_cloexec)
{
	EXPECT_EQ(FD_CLOEXEC, fcntl(self->tl, F_GETFD) & FD_CLOEXEC);
}

TEST_F(timeline, fence_pending_until_signalled)
{
	int fd = testfence_fence(self->tl, 3);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, sync_file_status(fd));
	EXPECT_EQ(0, sync_file_readable(fd, 20));
	ASSERT_EQ(0, testfence_signal(self->tl, 2, 0));
	EXPECT_EQ(0, sync_file_readable(fd, 20));
	ASSERT_EQ(0, testfence_signal(self->tl, 3, 0));
	EXPECT_EQ(1, sync_file_readable(fd, 1000));
	EXPECT_EQ(1, sync_file_status(fd));
	close(fd);
}

TEST_F(timeline, signal_with_error)
{
	int a = testfence_fence(self->tl, 1);
	int b = testfence_fence(self->tl, 2);

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, testfence_signal(self->tl, 1, -EIO));
	EXPECT_EQ(-EIO, sync_file_status(a));
	EXPECT_EQ(0, sync_file_status(b));
	ASSERT_EQ(0, testfence_signal(self->tl, 2, 0));
	EXPECT_EQ(1, sync_file_status(b));
	close(a);
	close(b);
}

TEST_F(timeline, fence_at_reached_seqno_is_signalled)
{
	int fd;

	ASSERT_EQ(0, testfence_signal(self->tl, 5, 0));
	fd = testfence_fence(self->tl, 4);
	ASSERT_LE(0, fd);
	EXPECT_EQ(1, sync_file_status(fd));
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
}

TEST_F(timeline, close_cancels_pending)
{
	int done = testfence_fence(self->tl, 1);
	int pending = testfence_fence(self->tl, 2);

	ASSERT_LE(0, done);
	ASSERT_LE(0, pending);
	ASSERT_EQ(0, testfence_signal(self->tl, 1, 0));
	close(self->tl);
	self->tl = testfence_timeline();
	EXPECT_EQ(1, sync_file_readable(pending, 1000));
	EXPECT_EQ(-ECANCELED, sync_file_status(pending));
	EXPECT_EQ(1, sync_file_status(done));	/* keeps its own status */
	close(done);
	close(pending);
}

/* A sync_file outlives its timeline fd. */
TEST_F(timeline, fence_outlives_timeline)
{
	int fd = testfence_fence(self->tl, 1);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, testfence_signal(self->tl, 1, 0));
	close(self->tl);
	self->tl = testfence_timeline();
	EXPECT_EQ(1, sync_file_status(fd));
	close(fd);
}

TEST_F(timeline, signal_bad_input_einval)
{
	struct gpuar_testfence_signal s;

	memset(&s, 0, sizeof(s));
	s.seqno = 1;
	s.error = 1;
	EXPECT_EQ(-1, ioctl(self->tl, GPUAR_TESTFENCE_IOC_SIGNAL, &s));
	EXPECT_EQ(EINVAL, errno);
	s.error = -4096;
	EXPECT_EQ(-1, ioctl(self->tl, GPUAR_TESTFENCE_IOC_SIGNAL, &s));
	EXPECT_EQ(EINVAL, errno);
	s.error = 0;
	s.flags = 1;
	EXPECT_EQ(-1, ioctl(self->tl, GPUAR_TESTFENCE_IOC_SIGNAL, &s));
	EXPECT_EQ(EINVAL, errno);
	s.flags = 0;
	s.seqno = 10;
	EXPECT_EQ(0, ioctl(self->tl, GPUAR_TESTFENCE_IOC_SIGNAL, &s));
	s.seqno = 9;	/* the timeline never goes back */
	EXPECT_EQ(-1, ioctl(self->tl, GPUAR_TESTFENCE_IOC_SIGNAL, &s));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(timeline, fence_bad_input)
{
	struct gpuar_testfence_fence f;

	memset(&f, 0, sizeof(f));
	f.flags = 1;
	EXPECT_EQ(-1, ioctl(self->tl, GPUAR_TESTFENCE_IOC_FENCE, &f));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->tl, GPUAR_TESTFENCE_IOC_FENCE, NULL));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->tl, GPUAR_TESTFENCE_IOC_TIMELINE, &f));
	EXPECT_EQ(ENOTTY, errno);
}

/* Many fences, released in any order, some never signalled by hand. */
TEST_F(timeline, many_fences_released)
{
	int fd[256], i;

	for (i = 0; i < 256; i++) {
		fd[i] = testfence_fence(self->tl, i + 1);
		ASSERT_LE(0, fd[i]);
	}
	for (i = 0; i < 256; i += 2)
		close(fd[i]);
	ASSERT_EQ(0, testfence_signal(self->tl, 100, -EIO));
	EXPECT_EQ(-EIO, sync_file_status(fd[99]));
	EXPECT_EQ(0, sync_file_status(fd[101]));
	for (i = 1; i < 256; i += 2)
		close(fd[i]);
}

/*
 * Released fences give their module references back in RCU callbacks;
 * the barrier returns only once they have all run, so a test can count
 * live fences by the module's refcount.
 */
TEST_F(timeline, barrier_waits_for_released_fences)
{
	int dev, fd[8], i;
	long before;

	ASSERT_EQ(0, testfence_barrier());
	before = module_refcnt("gpuar_testfence");
	ASSERT_LT(0, before);
	for (i = 0; i < 8; i++) {
		fd[i] = testfence_fence(self->tl, i + 1);
		ASSERT_LE(0, fd[i]);
	}
	EXPECT_EQ(before + 8, module_refcnt("gpuar_testfence"));
	for (i = 0; i < 8; i++)
		close(fd[i]);
	ASSERT_EQ(0, testfence_barrier());
	EXPECT_EQ(before, module_refcnt("gpuar_testfence"));

	dev = open(GPUAR_TESTFENCE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev);
	EXPECT_EQ(-1, ioctl(dev, GPUAR_TESTFENCE_IOC_BARRIER, 1));
	EXPECT_EQ(EINVAL, errno);
	close(dev);
}

TEST_HARNESS_MAIN
