// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The device ioctls and the frozen ABI v1: every struct at its v1 size,
 * size-prefixed growth (older/smaller refused below the first version,
 * newer/larger accepted with a zero tail, E2BIG otherwise), zero
 * pad/reserved fields, ioctl numbers matched whole, port creation
 * options, record versions, unknown ioctls.
 *
 * Errnos (where the uapi header is silent, what eventfd/timerfd do):
 *   size below the first ABI version ............ EINVAL
 *   larger struct, non-zero tail ................ E2BIG (copy_struct_from_user)
 *   pad, reserved or unknown flag bits .......... EINVAL
 *   unreadable argument ......................... EFAULT
 *   ioctl the object does not answer ............ ENOTTY
 *   ioctl number with other size or direction ... ENOTTY
 *   record_version above GPUAR_RECORD_VERSION_MAX EINVAL
 */
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "port_harness.h"

/* The v1 layout, as the uapi header spells it in numbers. */
_Static_assert(sizeof(struct gpuar_version) == GPUAR_VERSION_SIZE_VER1, "");
_Static_assert(sizeof(struct gpuar_port_create) == GPUAR_PORT_CREATE_SIZE_VER1, "");
_Static_assert(sizeof(struct gpuar_line_register) == GPUAR_LINE_REGISTER_SIZE_VER1, "");
_Static_assert(sizeof(struct gpuar_line_unregister) == GPUAR_LINE_UNREGISTER_SIZE_VER1, "");
_Static_assert(sizeof(struct gpuar_submit) == GPUAR_SUBMIT_SIZE_VER1, "");
_Static_assert(sizeof(struct gpuar_cancel) == GPUAR_CANCEL_SIZE_VER1, "");
_Static_assert(sizeof(struct gpuar_port_stats) == GPUAR_PORT_STATS_SIZE_VER2, "");
_Static_assert(offsetof(struct gpuar_port_stats, imminent) == GPUAR_PORT_STATS_SIZE_VER1, "");
_Static_assert(sizeof(struct gpuar_claim) == GPUAR_CLAIM_SIZE_VER1, "");
_Static_assert(sizeof(struct gpuar_claim_entry) == GPUAR_CLAIM_ENTRY_SIZE_VER1, "");
_Static_assert(sizeof(struct gpuar_area) == GPUAR_AREA_SIZE_VER1, "");
_Static_assert(offsetof(struct gpuar_area, tail) == 64, "the module's cache line");
_Static_assert(offsetof(struct gpuar_area, head) == 128, "the consumers' cache line");
_Static_assert(sizeof(struct gpuar_wait_ready) == GPUAR_WAIT_READY_SIZE_VER1, "");
_Static_assert(sizeof(struct gpuar_point_stats) == GPUAR_POINT_STATS_SIZE_VER1, "");
_Static_assert(sizeof(struct gpuar_word_wait) == GPUAR_WORD_WAIT_SIZE_VER1, "");
_Static_assert(sizeof(struct gpuar_fence_wait) == GPUAR_FENCE_WAIT_SIZE_VER1, "");
/* The per-outcome arrays end the v1 stats, at their fixed size. */
_Static_assert(offsetof(struct gpuar_port_stats, outcomes) +
	       GPUAR_OUTCOME_SLOTS * 8 == GPUAR_PORT_STATS_SIZE_VER1, "");
_Static_assert(offsetof(struct gpuar_point_stats, outcomes) +
	       GPUAR_OUTCOME_SLOTS * 8 == GPUAR_POINT_STATS_SIZE_VER1, "");

/* @cmd with other size bits, as a caller that sized it itself would. */
static unsigned long ioc_sized(unsigned long cmd, size_t size)
{
	return _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), size);
}

/* An address that faults: a PROT_NONE page. */
static void *fault_addr(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

FIXTURE(dev)
{
	int dev;
};

FIXTURE_SETUP(dev)
{
	self->dev = t_dev_open();
	ASSERT_LE(0, self->dev) {
		TH_LOG("%s: %s", GPUAR_DEVICE_PATH, strerror(errno));
	}
}

FIXTURE_TEARDOWN(dev)
{
	close(self->dev);
}

TEST_F(dev, version_reports_abi_and_features)
{
	struct gpuar_version v;

	ASSERT_EQ(0, t_version(self->dev, &v));
	EXPECT_EQ((__u32)GPUAR_ABI_VERSION, v.abi);
	EXPECT_EQ((__u32)GPUAR_RECORD_VERSION_MAX, v.record_max);
	EXPECT_EQ(0U, v.pad);
	EXPECT_TRUE(!!(v.features & GPUAR_FEATURE_WORD_WAIT));
	EXPECT_TRUE(!!(v.features & GPUAR_FEATURE_FENCE_WAIT));
}

TEST_F(dev, version_size_below_first_abi_einval)
{
	struct gpuar_version v;

	memset(&v, 0, sizeof(v));
	v.size = offsetof(struct gpuar_version, features);
	EXPECT_EQ(-1, ioctl(self->dev, GPUAR_IOC_VERSION, &v));
	EXPECT_EQ(EINVAL, errno);
	v.size = 0;
	EXPECT_EQ(-1, ioctl(self->dev, GPUAR_IOC_VERSION, &v));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, version_newer_struct_zero_tail_accepted)
{
	struct {
		struct gpuar_version v;
		__u64 future[2];
	} big;

	memset(&big, 0, sizeof(big));
	big.v.size = sizeof(big);
	ASSERT_EQ(0, ioctl(self->dev, GPUAR_IOC_VERSION, &big));
	EXPECT_EQ((__u32)GPUAR_ABI_VERSION, big.v.abi);
	/* The kernel writes no field it does not know. */
	EXPECT_EQ(0ULL, big.future[0]);
	EXPECT_EQ(0ULL, big.future[1]);
}

TEST_F(dev, version_newer_struct_nonzero_tail_e2big)
{
	struct {
		struct gpuar_version v;
		__u64 future;
	} big;

	memset(&big, 0, sizeof(big));
	big.v.size = sizeof(big);
	big.future = 1;
	EXPECT_EQ(-1, ioctl(self->dev, GPUAR_IOC_VERSION, &big));
	EXPECT_EQ(E2BIG, errno);
}

TEST_F(dev, version_pad_nonzero_einval)
{
	struct gpuar_version v;

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	v.pad = 1;
	EXPECT_EQ(-1, ioctl(self->dev, GPUAR_IOC_VERSION, &v));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, bad_pointer_efault)
{
	void *bad = fault_addr();

	ASSERT_NE(NULL, bad);
	EXPECT_EQ(-1, ioctl(self->dev, GPUAR_IOC_VERSION, bad));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->dev, GPUAR_IOC_PORT_CREATE, bad));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->dev, GPUAR_IOC_VERSION, NULL));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(dev, port_ioctls_on_device_enotty)
{
	struct gpuar_cancel c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	EXPECT_EQ(-1, ioctl(self->dev, GPUAR_IOC_CANCEL, &c));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->dev, _IO(GPUAR_IOC_MAGIC, 0x7f), 0));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(dev, port_create_flags)
{
	int port;

	port = t_port_create(self->dev, 0);
	ASSERT_LE(0, port);
	EXPECT_EQ(0, fcntl(port, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(0, fcntl(port, F_GETFL) & O_NONBLOCK);
	close(port);

	port = t_port_create(self->dev, GPUAR_PORT_CLOEXEC);
	ASSERT_LE(0, port);
	EXPECT_EQ(FD_CLOEXEC, fcntl(port, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(0, fcntl(port, F_GETFL) & O_NONBLOCK);
	close(port);

	port = t_port_create(self->dev, GPUAR_PORT_NONBLOCK);
	ASSERT_LE(0, port);
	EXPECT_EQ(0, fcntl(port, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_NONBLOCK, fcntl(port, F_GETFL) & O_NONBLOCK);
	close(port);
}

TEST_F(dev, port_create_unknown_flag_einval)
{
	EXPECT_EQ(-1, t_port_create(self->dev, GPUAR_PORT_FLAGS_ALL + 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, t_port_create(self->dev, 1U << 31));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, port_create_pad_nonzero_einval)
{
	struct gpuar_port_create c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.pad = 1;
	EXPECT_EQ(-1, ioctl(self->dev, GPUAR_IOC_PORT_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
}

/* The record version a port made with @record_version produces. */
static int record_version_of(int dev, __u32 record_version)
{
	struct gpuar_port_create c;
	struct gpuar_record r;
	__u64 *lines = lines_map(1);
	int port, version = -1;
	__u32 id;

	if (!lines)
		return -1;
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.record_version = record_version;
	port = ioctl(dev, GPUAR_IOC_PORT_CREATE, &c);
	if (port >= 0 && line_register(port, lines, &id) == 0) {
		word_store(lines, 1);
		if (submit_word(port, word_wait(id, 0, 1, 1, 1, plan_poll())) == 1 &&
		    collect_records(port, &r, 1, RECORD_TIMEOUT_MS) == 1)
			version = r.version;
	}
	if (port >= 0)
		close(port);
	lines_unmap(lines, 1);
	return version;
}

TEST_F(dev, port_create_record_version)
{
	struct gpuar_port_create c;

	EXPECT_EQ(GPUAR_RECORD_VERSION_1,
		  record_version_of(self->dev, GPUAR_RECORD_VERSION_1));
	/* 0 means version 1 forever, whatever the newest version becomes. */
	EXPECT_EQ(GPUAR_RECORD_VERSION_1, record_version_of(self->dev, 0));

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.record_version = GPUAR_RECORD_VERSION_MAX + 1;
	EXPECT_EQ(-1, ioctl(self->dev, GPUAR_IOC_PORT_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * An ioctl number is matched whole: each of @cmds with other size bits (a
 * caller that sized it from a newer struct itself) or another direction,
 * and under the magic gpuar had before the ABI froze, is ENOTTY on @fd
 * although the argument is valid.
 */
static void expect_numbers_matched_whole(struct __test_metadata *_metadata,
					 int fd, const unsigned long *cmds,
					 size_t n)
{
	__u64 arg[64];
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned long cmd = cmds[i], size = _IOC_SIZE(cmd);
		unsigned long wrong[] = {
			ioc_sized(cmd, size + 8),
			ioc_sized(cmd, size - 8),
			_IOC(_IOC_DIR(cmd) ^ _IOC_READ, _IOC_TYPE(cmd),
			     _IOC_NR(cmd), size),
			_IOC(_IOC_DIR(cmd), 0xB6, _IOC_NR(cmd), size),
		};
		size_t k;

		memset(arg, 0, sizeof(arg));
		arg[0] = size;	/* size: the v1 struct */
		for (k = 0; k < ARRAY_SIZE(wrong); k++) {
			EXPECT_EQ(-1, ioctl(fd, wrong[k], arg));
			EXPECT_EQ(ENOTTY, errno) {
				TH_LOG("nr 0x%x, variant %zu", _IOC_NR(cmd), k);
			}
		}
	}
}

TEST_F(dev, device_numbers_are_matched_whole)
{
	static const unsigned long cmds[] = {
		GPUAR_IOC_VERSION, GPUAR_IOC_PORT_CREATE,
	};
	__u64 arg[GPUAR_VERSION_SIZE_VER1 / 8] = { GPUAR_VERSION_SIZE_VER1 };

	expect_numbers_matched_whole(_metadata, self->dev, cmds,
				     ARRAY_SIZE(cmds));
	/* The number itself, with such an argument, is answered. */
	EXPECT_EQ(0, ioctl(self->dev, GPUAR_IOC_VERSION, arg));
}

TEST_F(dev, port_create_newer_struct)
{
	struct {
		struct gpuar_port_create c;
		__u32 future[2];
	} big;
	unsigned long cmd = GPUAR_IOC_PORT_CREATE;
	int port;

	memset(&big, 0, sizeof(big));
	big.c.size = sizeof(big);
	port = ioctl(self->dev, cmd, &big);
	ASSERT_LE(0, port);
	close(port);

	big.future[1] = 7;
	EXPECT_EQ(-1, ioctl(self->dev, cmd, &big));
	EXPECT_EQ(E2BIG, errno);
}

TEST_F(dev, port_is_not_a_device_handle)
{
	struct gpuar_port_create c;
	int port = t_port_create(self->dev, GPUAR_PORT_CLOEXEC);

	ASSERT_LE(0, port);
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	EXPECT_EQ(-1, ioctl(port, GPUAR_IOC_PORT_CREATE, &c));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(port, _IO(GPUAR_IOC_MAGIC, 0x7f), 0));
	EXPECT_EQ(ENOTTY, errno);
	close(port);
}

TEST_F(dev, ports_are_independent)
{
	int a = t_port_create(self->dev, GPUAR_PORT_CLOEXEC);
	int b = t_port_create(self->dev, GPUAR_PORT_CLOEXEC);
	__u64 *lines = lines_map(1);
	struct gpuar_record r;
	__u32 id;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_NE(NULL, lines);
	ASSERT_EQ(0, line_register(a, lines, &id));
	word_store(lines, 1);
	ASSERT_EQ(1, submit_word(a, word_wait(id, 0, 1, 1, 42, plan_poll())));
	ASSERT_EQ(1, collect_records(a, &r, 1, RECORD_TIMEOUT_MS));
	EXPECT_EQ(42ULL, r.user_data);
	/* b saw nothing, and a's line id means nothing on b. */
	EXPECT_TRUE(port_quiet(b, 20));
	EXPECT_EQ(-1, submit_word(b, word_wait(id, 0, 1, 1, 43, plan_poll())));
	EXPECT_EQ(ENOENT, errno);
	close(a);
	close(b);
	lines_unmap(lines, 1);
}

/* ---------------------------------------------- port ioctl size prefix */

TEST_F(port, cancel_size_rules)
{
	struct {
		struct gpuar_cancel c;
		__u64 future;
	} big;
	unsigned long cmd = GPUAR_IOC_CANCEL;

	memset(&big, 0, sizeof(big));
	big.c.size = sizeof(big.c) - 8;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_CANCEL, &big.c));
	EXPECT_EQ(EINVAL, errno);

	/* Newer caller, zero tail: understood, and nothing to cancel. */
	big.c.size = sizeof(big);
	big.c.user_data = 99;
	EXPECT_EQ(-1, ioctl(self->port, cmd, &big));
	EXPECT_EQ(ENOENT, errno);

	big.future = 1;
	EXPECT_EQ(-1, ioctl(self->port, cmd, &big));
	EXPECT_EQ(E2BIG, errno);
}

TEST_F(port, port_stats_newer_struct)
{
	struct {
		struct gpuar_port_stats s;
		__u64 future[4];
	} big;
	unsigned long cmd = GPUAR_IOC_PORT_STATS;

	memset(&big, 0, sizeof(big));
	big.s.size = sizeof(big);
	ASSERT_EQ(0, ioctl(self->port, cmd, &big));
	EXPECT_EQ(1ULL, big.s.lines);
	EXPECT_EQ(0ULL, big.future[0]);
	EXPECT_EQ(0ULL, big.future[3]);

	big.future[3] = 1;
	EXPECT_EQ(-1, ioctl(self->port, cmd, &big));
	EXPECT_EQ(E2BIG, errno);

	memset(&big, 0, sizeof(big));
	big.s.size = 4;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_PORT_STATS, &big.s));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(port, records_carry_version_1)
{
	struct gpuar_record r;

	word_store(self->lines, 3);
	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(self->line, 0, 3, 5, 7, plan_poll())));
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(GPUAR_RECORD_VERSION_1, r.version);
	EXPECT_EQ(0U, r.pad);
	EXPECT_EQ(64U, sizeof(r));
}

/* As device_numbers_are_matched_whole, for every port ioctl. */
TEST_F(port, port_numbers_are_matched_whole)
{
	static const unsigned long cmds[] = {
		GPUAR_IOC_LINE_REGISTER, GPUAR_IOC_LINE_UNREGISTER,
		GPUAR_IOC_SUBMIT_WORD, GPUAR_IOC_SUBMIT_FENCE,
		GPUAR_IOC_CANCEL, GPUAR_IOC_PORT_STATS, GPUAR_IOC_POINT_STATS,
	};

	expect_numbers_matched_whole(_metadata, self->port, cmds,
				     ARRAY_SIZE(cmds));
}

/*
 * A binary built against the v1 header passes every struct at its
 * GPUAR_*_SIZE_VER1, batch entries included, and gets v1 answers: the
 * statistics' outcome slots past the defined outcomes read zero.
 */
TEST_F(port, every_struct_at_its_v1_size)
{
	struct gpuar_word_wait w = word_wait(self->line, 0, 2, 9, 21, plan_poll());
	struct gpuar_fence_wait f = fence_wait(-1, 22);
	struct gpuar_line_unregister lu;
	struct gpuar_line_register lr;
	struct gpuar_point_stats ps;
	struct gpuar_port_stats st;
	struct gpuar_cancel c;
	struct gpuar_record r;
	struct gpuar_submit s;
	__u32 o;

	memset(&lr, 0, sizeof(lr));
	lr.size = GPUAR_LINE_REGISTER_SIZE_VER1;
	lr.addr = (__u64)(uintptr_t)line_at(self->lines, 1);
	ASSERT_EQ(0, ioctl(self->port, GPUAR_IOC_LINE_REGISTER, &lr));

	word_store(self->lines, 2);
	memset(&s, 0, sizeof(s));
	s.size = GPUAR_SUBMIT_SIZE_VER1;
	s.count = 1;
	s.entry_size = GPUAR_WORD_WAIT_SIZE_VER1;
	s.entries = (__u64)(uintptr_t)&w;
	ASSERT_EQ(1, ioctl(self->port, GPUAR_IOC_SUBMIT_WORD, &s));
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(GPUAR_RECORD_VERSION_1, r.version);
	EXPECT_EQ(21ULL, r.user_data);

	/* A bad fence fd, not a bad entry size: the v1 entry was read. */
	s.entry_size = GPUAR_FENCE_WAIT_SIZE_VER1;
	s.entries = (__u64)(uintptr_t)&f;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_SUBMIT_FENCE, &s));
	EXPECT_EQ(EBADF, errno);

	memset(&st, 0xff, sizeof(st));
	st.size = GPUAR_PORT_STATS_SIZE_VER1;
	st.pad = 0;
	ASSERT_EQ(0, ioctl(self->port, GPUAR_IOC_PORT_STATS, &st));
	EXPECT_EQ(1ULL, st.submitted);
	EXPECT_EQ(2ULL, st.lines);
	EXPECT_EQ(1ULL, st.outcomes[r.outcome]);
	for (o = GPUAR_OUTCOME_COUNT; o < GPUAR_OUTCOME_SLOTS; o++)
		EXPECT_EQ(0ULL, st.outcomes[o]);
	EXPECT_EQ(0ULL, st.outcomes[0]);

	memset(&ps, 0, sizeof(ps));
	ps.size = GPUAR_POINT_STATS_SIZE_VER1;
	ps.point = 9;
	ps.outcomes[GPUAR_OUTCOME_SLOTS - 1] = 5;	/* in-struct garbage */
	ASSERT_EQ(0, ioctl(self->port, GPUAR_IOC_POINT_STATS, &ps));
	EXPECT_EQ(1ULL, ps.outcomes[r.outcome]);
	EXPECT_EQ(0ULL, ps.outcomes[GPUAR_OUTCOME_SLOTS - 1]);

	memset(&c, 0, sizeof(c));
	c.size = GPUAR_CANCEL_SIZE_VER1;
	c.user_data = 21;	/* completed and read: nothing to cancel */
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_CANCEL, &c));
	EXPECT_EQ(ENOENT, errno);

	memset(&lu, 0, sizeof(lu));
	lu.size = GPUAR_LINE_UNREGISTER_SIZE_VER1;
	lu.id = lr.id;
	EXPECT_EQ(0, ioctl(self->port, GPUAR_IOC_LINE_UNREGISTER, &lu));
}

/*
 * A binary built against a future header passes bigger structs through the
 * same numbers: accepted while the tail the module does not know is zero,
 * E2BIG otherwise, for the port ioctls not covered above.
 */
TEST_F(port, future_sizes_need_a_zero_tail)
{
	struct {
		__u64 arg[16];
		__u64 future[2];
	} big;
	struct gpuar_line_register *lr = (void *)big.arg;
	struct gpuar_line_unregister *lu = (void *)big.arg;
	struct gpuar_submit *s = (void *)big.arg;

	memset(&big, 0, sizeof(big));
	lr->size = GPUAR_LINE_REGISTER_SIZE_VER1 + 16;
	lr->addr = (__u64)(uintptr_t)line_at(self->lines, 2);
	EXPECT_EQ(0, ioctl(self->port, GPUAR_IOC_LINE_REGISTER, &big));
	big.arg[GPUAR_LINE_REGISTER_SIZE_VER1 / 8 + 1] = 1;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_LINE_REGISTER, &big));
	EXPECT_EQ(E2BIG, errno);

	memset(&big, 0, sizeof(big));
	lu->size = GPUAR_LINE_UNREGISTER_SIZE_VER1 + 16;
	lu->id = 999;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_LINE_UNREGISTER, &big));
	EXPECT_EQ(ENOENT, errno);
	big.arg[GPUAR_LINE_UNREGISTER_SIZE_VER1 / 8 + 1] = 1;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_LINE_UNREGISTER, &big));
	EXPECT_EQ(E2BIG, errno);

	memset(&big, 0, sizeof(big));
	s->size = GPUAR_SUBMIT_SIZE_VER1 + 16;
	s->entry_size = GPUAR_WORD_WAIT_SIZE_VER1;
	EXPECT_EQ(0, ioctl(self->port, GPUAR_IOC_SUBMIT_WORD, &big));
	big.arg[GPUAR_SUBMIT_SIZE_VER1 / 8 + 1] = 1;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_SUBMIT_WORD, &big));
	EXPECT_EQ(E2BIG, errno);
}

/* Point statistics: the v1 struct ends at the outcome slots; more is future. */
TEST_F(port, point_stats_future_size)
{
	struct {
		struct gpuar_point_stats ps;
		__u64 future[2];
	} big;
	struct gpuar_record r;

	word_store(self->lines, 4);
	ASSERT_EQ(1, submit_word(self->port,
				 word_wait(self->line, 0, 4, 31, 1, plan_poll())));
	ASSERT_ONE_RECORD(self->port, r);

	memset(&big, 0, sizeof(big));
	big.ps.size = sizeof(big);
	big.ps.point = 31;
	ASSERT_EQ(0, ioctl(self->port, GPUAR_IOC_POINT_STATS, &big));
	EXPECT_EQ(1ULL, big.ps.outcomes[r.outcome]);
	EXPECT_EQ(0ULL, big.future[0]);
	EXPECT_EQ(0ULL, big.future[1]);

	big.future[1] = 1;
	EXPECT_EQ(-1, ioctl(self->port, GPUAR_IOC_POINT_STATS, &big));
	EXPECT_EQ(E2BIG, errno);
}

/* /proc/<pid>/fdinfo shows the port's state, as timerfd and eventfd do. */
TEST_F(port, fdinfo_shows_port_state)
{
	char path[64], buf[4096];
	int fd, lines = 0;
	ssize_t n, i;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", self->port);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ASSERT_LT(0, n);
	buf[n] = 0;
	for (i = 0; i < n; i++)
		lines += buf[i] == '\n';
	/* pos, flags, mnt_id and ino are the VFS's own; the port adds more. */
	EXPECT_LT(4, lines) {
		TH_LOG("fdinfo:\n%s", buf);
	}
}

/*
 * fdinfo names the port's creator as the reader sees it: a port made in
 * a child pid namespace (pid 1 there) shows, to a reader outside it, the
 * pid that reader knows the child by.
 */
static int fdinfo_creator(pid_t pid, int fd)
{
	char path[64], buf[4096], *at;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	at = strstr(buf, "creator:");
	return at ? atoi(at + strlen("creator:")) : -1;
}

TEST(fdinfo_creator_in_the_readers_pid_namespace)
{
	int ready[2], go[2], fd = -1, status;
	pid_t pid;
	char c = 0;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL,
			     NULL, NULL);
	if (pid < 0 && (errno == EPERM || errno == EINVAL))
		SKIP(return, "no new pid namespace here: %s", strerror(errno));
	ASSERT_LE(0, pid);
	if (!pid) {
		int port = t_port_open(0);

		if (write(ready[1], &port, sizeof(port)) != sizeof(port))
			_exit(1);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(getpid() == 1 ? 0 : 3);
	}
	ASSERT_EQ((ssize_t)sizeof(fd), read(ready[0], &fd, sizeof(fd)));
	ASSERT_LE(0, fd);
	EXPECT_EQ((int)pid, fdinfo_creator(pid, fd));
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

TEST_HARNESS_MAIN
