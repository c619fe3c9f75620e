// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Fence waits on real dma_fences: vgem's (a DRM driver's fences reached
 * as sync_files) and gpuar_testfence's (pending as long as needed, or
 * signalled with an error). Every fence wait ends with one FENCE record
 * whose status is the fence's error (0 when it signalled cleanly), whose
 * complete_ns is the fence's signal timestamp and whose value is its seqno.
 */
#include "kselftest_harness.h"

#include "port_harness.h"
#include "testfence_fixture.h"
#include "vgem_fixture.h"

#define MANY 64

FIXTURE(vgem_port)
{
	int port;
	int drm;
	struct vgem_fence f[MANY];
	int nf;
};

FIXTURE_SETUP(vgem_port)
{
	self->port = t_port_open(GPUAR_PORT_CLOEXEC);
	ASSERT_LE(0, self->port);
	self->drm = vgem_open();
	ASSERT_LE(0, self->drm) {
		TH_LOG("vgem: %s", strerror(-self->drm));
	}
}

FIXTURE_TEARDOWN(vgem_port)
{
	int i;

	close(self->port);
	for (i = 0; i < self->nf; i++)
		vgem_fence_destroy(self->drm, &self->f[i]);
	close(self->drm);
}

static void expect_fence_record(struct __test_metadata *_metadata,
				const struct gpuar_record *r, __u64 user_data,
				int status)
{
	EXPECT_EQ(user_data, r->user_data);
	EXPECT_EQ(GPUAR_SOURCE_FENCE, r->source);
	EXPECT_EQ(GPUAR_OUTCOME_FENCE, r->outcome);
	EXPECT_EQ(status, r->status);
	EXPECT_EQ(0ULL, r->point);
	EXPECT_EQ(GPUAR_RECORD_VERSION_1, r->version);
}

TEST_F(vgem_port, signalled_later)
{
	struct gpuar_record r;
	__u64 before;

	ASSERT_EQ(0, vgem_fence_create(self->drm, &self->f[0]));
	self->nf = 1;
	ASSERT_EQ(1, submit_fence(self->port, self->f[0].sync_fd, 0x51));
	EXPECT_TRUE(port_quiet(self->port, 30));
	before = mono_ns();
	ASSERT_EQ(0, vgem_fence_signal(self->drm, &self->f[0]));
	ASSERT_ONE_RECORD(self->port, r);
	expect_fence_record(_metadata, &r, 0x51, 0);
	/* complete_ns is the fence's own signal time. */
	EXPECT_LE(before, r.complete_ns);
	EXPECT_LE(r.start_ns, r.complete_ns);
	EXPECT_GE(mono_ns(), r.complete_ns);
}

TEST_F(vgem_port, already_signalled)
{
	struct gpuar_record r;
	__u64 signalled;

	ASSERT_EQ(0, vgem_fence_create(self->drm, &self->f[0]));
	self->nf = 1;
	ASSERT_EQ(0, vgem_fence_signal(self->drm, &self->f[0]));
	signalled = mono_ns();
	ASSERT_EQ(1, sync_file_readable(self->f[0].sync_fd, 1000));
	ASSERT_EQ(1, submit_fence(self->port, self->f[0].sync_fd, 0x52));
	ASSERT_ONE_RECORD(self->port, r);
	expect_fence_record(_metadata, &r, 0x52, 0);
	/* It signalled before the wait began. */
	EXPECT_GE(signalled, r.complete_ns);
}

/* The port holds its own fence reference: closing the fd changes nothing. */
TEST_F(vgem_port, sync_file_closed_after_submit)
{
	struct gpuar_record r;

	ASSERT_EQ(0, vgem_fence_create(self->drm, &self->f[0]));
	self->nf = 1;
	ASSERT_EQ(1, submit_fence(self->port, self->f[0].sync_fd, 0x53));
	close(self->f[0].sync_fd);
	self->f[0].sync_fd = -1;
	EXPECT_TRUE(port_quiet(self->port, 20));
	ASSERT_EQ(0, vgem_fence_signal(self->drm, &self->f[0]));
	ASSERT_ONE_RECORD(self->port, r);
	expect_fence_record(_metadata, &r, 0x53, 0);
}

TEST_F(vgem_port, many_at_once)
{
	struct gpuar_fence_wait w[MANY];
	struct gpuar_record r[MANY];
	int i, got;

	for (i = 0; i < MANY; i++) {
		ASSERT_EQ(0, vgem_fence_create(self->drm, &self->f[i]));
		self->nf = i + 1;
		w[i] = fence_wait(self->f[i].sync_fd, 1000 + i);
	}
	ASSERT_EQ(MANY, submit_fences(self->port, w, MANY, NULL));
	EXPECT_TRUE(port_quiet(self->port, 20));
	/* Signal in reverse: records follow the signal order. */
	for (i = MANY - 1; i >= 0; i--) {
		ASSERT_EQ(0, vgem_fence_signal(self->drm, &self->f[i]));
	}
	got = collect_records(self->port, r, MANY, RECORD_TIMEOUT_MS);
	ASSERT_EQ(MANY, got);
	for (i = 0; i < MANY; i++) {
		EXPECT_EQ(1000ULL + MANY - 1 - i, r[i].user_data);
		EXPECT_EQ(GPUAR_OUTCOME_FENCE, r[i].outcome);
		if (i) {
			EXPECT_LE(r[i - 1].complete_ns, r[i].complete_ns);
		}
	}
	EXPECT_TRUE(port_quiet(self->port, 20));
}

/* One fence, two waits: each gets its record. */
TEST_F(vgem_port, two_waits_on_one_fence)
{
	struct gpuar_fence_wait w[2];
	struct gpuar_record r[2];

	ASSERT_EQ(0, vgem_fence_create(self->drm, &self->f[0]));
	self->nf = 1;
	w[0] = fence_wait(self->f[0].sync_fd, 1);
	w[1] = fence_wait(self->f[0].sync_fd, 2);
	ASSERT_EQ(2, submit_fences(self->port, w, 2, NULL));
	ASSERT_EQ(0, vgem_fence_signal(self->drm, &self->f[0]));
	ASSERT_EQ(2, collect_records(self->port, r, 2, RECORD_TIMEOUT_MS));
	EXPECT_NE(NULL, record_find(r, 2, 1));
	EXPECT_NE(NULL, record_find(r, 2, 2));
	EXPECT_EQ(r[0].complete_ns, r[1].complete_ns);
}

/* ---------------------------------------------------- test fences */

FIXTURE(tf_port)
{
	int port;
	int tl;
};

FIXTURE_SETUP(tf_port)
{
	self->port = t_port_open(GPUAR_PORT_CLOEXEC);
	ASSERT_LE(0, self->port);
	self->tl = testfence_timeline();
	ASSERT_LE(0, self->tl) {
		TH_LOG("%s: %s", GPUAR_TESTFENCE_PATH, strerror(errno));
	}
}

FIXTURE_TEARDOWN(tf_port)
{
	close(self->port);
	close(self->tl);
}

TEST_F(tf_port, signalled_with_error)
{
	struct gpuar_record r;
	int fd = testfence_fence(self->tl, 5);

	ASSERT_LE(0, fd);
	ASSERT_EQ(1, submit_fence(self->port, fd, 0x61));
	EXPECT_TRUE(port_quiet(self->port, 20));
	ASSERT_EQ(0, testfence_signal(self->tl, 5, -EIO));
	ASSERT_ONE_RECORD(self->port, r);
	expect_fence_record(_metadata, &r, 0x61, -EIO);
	EXPECT_EQ(5ULL, r.value);
	close(fd);
}

TEST_F(tf_port, already_signalled_with_error)
{
	struct gpuar_record r;
	int fd = testfence_fence(self->tl, 2);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, testfence_signal(self->tl, 2, -ENODEV));
	ASSERT_EQ(1, submit_fence(self->port, fd, 0x62));
	ASSERT_ONE_RECORD(self->port, r);
	expect_fence_record(_metadata, &r, 0x62, -ENODEV);
	close(fd);
}

TEST_F(tf_port, signalled_cleanly_status_zero)
{
	struct gpuar_record r;
	int fd = testfence_fence(self->tl, 3);

	ASSERT_LE(0, fd);
	ASSERT_EQ(1, submit_fence(self->port, fd, 0x63));
	ASSERT_EQ(0, testfence_signal(self->tl, 3, 0));
	ASSERT_ONE_RECORD(self->port, r);
	expect_fence_record(_metadata, &r, 0x63, 0);
	EXPECT_EQ(3ULL, r.value);
	close(fd);
}

/* Closing the timeline cancels its fences: the record says -ECANCELED. */
TEST_F(tf_port, timeline_close_ecanceled)
{
	struct gpuar_record r;
	int fd = testfence_fence(self->tl, 9);

	ASSERT_LE(0, fd);
	ASSERT_EQ(1, submit_fence(self->port, fd, 0x64));
	EXPECT_TRUE(port_quiet(self->port, 20));
	close(self->tl);
	self->tl = testfence_timeline();	/* for the teardown */
	ASSERT_ONE_RECORD(self->port, r);
	expect_fence_record(_metadata, &r, 0x64, -ECANCELED);
	close(fd);
}

/* References on gpuar_testfence.ko: one per live fence, one per open file. */
static long testfence_refs(void)
{
	return module_refcnt("gpuar_testfence");
}

/*
 * The count once earlier tests' fences are gone. A port may hand its last
 * fence reference to a work item, and the fence frees itself in an RCU
 * callback: wait for those callbacks (the barrier) until the count holds
 * still over three reads 50 ms apart, so a slow grace period on a loaded
 * emulated guest cannot pass for a steady count.
 */
static long testfence_refs_steady(void)
{
	long n, was = -1;
	int same = 0, tries = 100;

	while (same < 3 && tries--) {
		if (testfence_barrier())
			return -1;
		n = testfence_refs();
		same = n == was ? same + 1 : 0;
		was = n;
		sleep_ms(50);
	}
	return was;
}

/* Wait up to @ms (RCU frees the fence) for the count to reach @want. */
static long testfence_refs_settle(long want, int ms)
{
	long n = testfence_refs();

	while (n != want && ms-- > 0) {
		sleep_ms(1);
		n = testfence_refs();
	}
	return n;
}

/*
 * The port lets go of a fence when the wait completes, not when its
 * record is read: unread records pin no driver objects.
 */
TEST_F(tf_port, fence_dropped_at_completion_not_at_read)
{
	struct gpuar_record r;
	long before;
	int fd;

	before = testfence_refs_steady();
	ASSERT_LT(0, before);
	fd = testfence_fence(self->tl, 4);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, submit_fence(self->port, fd, 0x65));
	close(fd);
	ASSERT_EQ(before + 1, testfence_refs());
	ASSERT_EQ(0, testfence_signal(self->tl, 4, 0));
	ASSERT_EQ(1, fd_readable(self->port, RECORD_TIMEOUT_MS));
	EXPECT_EQ(before, testfence_refs_settle(before, 2000));
	ASSERT_ONE_RECORD(self->port, r);
	expect_fence_record(_metadata, &r, 0x65, 0);
	EXPECT_EQ(4ULL, r.value);
	EXPECT_EQ(before, testfence_refs_settle(before, 2000));
}

/* A fence that stays pending longer than vgem would allow (10 s). */
TEST_F_TIMEOUT(tf_port, stays_pending_until_signalled, 60)
{
	struct gpuar_record r;
	int fd = testfence_fence(self->tl, 1);

	ASSERT_LE(0, fd);
	ASSERT_EQ(1, submit_fence(self->port, fd, 0x65));
	EXPECT_TRUE(port_quiet(self->port, 11000));
	ASSERT_EQ(0, testfence_signal(self->tl, 1, 0));
	ASSERT_ONE_RECORD(self->port, r);
	expect_fence_record(_metadata, &r, 0x65, 0);
	close(fd);
}

/* A timeline signals in seqno order; so do the records. */
TEST_F(tf_port, timeline_order)
{
	struct gpuar_fence_wait w[3];
	struct gpuar_record r[3];
	int fd[3], i;

	for (i = 0; i < 3; i++) {
		fd[i] = testfence_fence(self->tl, i + 1);
		ASSERT_LE(0, fd[i]);
		w[i] = fence_wait(fd[i], i + 1);
	}
	ASSERT_EQ(3, submit_fences(self->port, w, 3, NULL));
	ASSERT_EQ(0, testfence_signal(self->tl, 1, 0));
	ASSERT_EQ(1, collect_records(self->port, r, 1, RECORD_TIMEOUT_MS));
	EXPECT_EQ(1ULL, r[0].user_data);
	EXPECT_TRUE(port_quiet(self->port, 20));
	ASSERT_EQ(0, testfence_signal(self->tl, 3, 0));
	ASSERT_EQ(2, collect_records(self->port, r + 1, 2, RECORD_TIMEOUT_MS));
	EXPECT_NE(NULL, record_find(r, 3, 2));
	EXPECT_NE(NULL, record_find(r, 3, 3));
	for (i = 0; i < 3; i++)
		close(fd[i]);
}

/* Word and fence waits share one port and one record stream. */
TEST_F(tf_port, mixed_with_word_waits)
{
	__u64 *lines = lines_map(1);
	struct gpuar_record r[2];
	int fd = testfence_fence(self->tl, 1);
	__u32 id;

	ASSERT_NE(NULL, lines);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, line_register(self->port, lines, &id));
	ASSERT_EQ(1, submit_fence(self->port, fd, 1));
	ASSERT_EQ(1, submit_word(self->port, word_wait(id, 0, 1, 1, 2,
						       plan_poll())));
	word_store(lines, 1);
	ASSERT_EQ(1, collect_records(self->port, r, 1, RECORD_TIMEOUT_MS));
	EXPECT_EQ(2ULL, r[0].user_data);
	ASSERT_EQ(0, testfence_signal(self->tl, 1, 0));
	ASSERT_EQ(1, collect_records(self->port, r + 1, 1, RECORD_TIMEOUT_MS));
	EXPECT_EQ(1ULL, r[1].user_data);
	EXPECT_EQ(GPUAR_SOURCE_FENCE, r[1].source);
	close(fd);
	lines_unmap(lines, 1);
}

TEST_HARNESS_MAIN
