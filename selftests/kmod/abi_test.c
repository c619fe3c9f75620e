// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The device ioctls and the ABI's extensibility rules: size-prefixed
 * structs (older/smaller refused below the first version, newer/larger
 * accepted with a zero tail, E2BIG otherwise), zero pad/reserved fields,
 * port creation options, record version, unknown ioctls.
 *
 * Errnos (where the uapi header is silent, what eventfd/timerfd do):
 *   size below the first ABI version ............ EINVAL
 *   larger struct, non-zero tail ................ E2BIG (copy_struct_from_user)
 *   pad, reserved or unknown flag bits .......... EINVAL
 *   unreadable argument ......................... EFAULT
 *   ioctl the object does not answer ............ ENOTTY
 *   record_version above GPUAR_RECORD_VERSION_MAX EINVAL
 */
#include <sys/mman.h>

#include "kselftest_harness.h"

#include "port_harness.h"

/* The ioctl number a caller compiled with a @size-byte struct would use. */
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
	ASSERT_EQ(0, ioctl(self->dev, ioc_sized(GPUAR_IOC_VERSION,
						sizeof(big)), &big));
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
	EXPECT_EQ(-1, ioctl(self->dev, ioc_sized(GPUAR_IOC_VERSION,
						 sizeof(big)), &big));
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

TEST_F(dev, port_create_record_version)
{
	struct gpuar_port_create c;
	struct gpuar_record r;
	__u64 *lines;
	__u32 id;
	int port;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.record_version = GPUAR_RECORD_VERSION_1;
	port = ioctl(self->dev, GPUAR_IOC_PORT_CREATE, &c);
	ASSERT_LE(0, port);
	lines = lines_map(1);
	ASSERT_NE(NULL, lines);
	ASSERT_EQ(0, line_register(port, lines, &id));
	word_store(lines, 1);
	ASSERT_EQ(1, submit_word(port, word_wait(id, 0, 1, 1, 1, plan_poll())));
	ASSERT_EQ(1, collect_records(port, &r, 1, RECORD_TIMEOUT_MS));
	EXPECT_EQ(GPUAR_RECORD_VERSION_1, r.version);
	close(port);
	lines_unmap(lines, 1);

	c.record_version = GPUAR_RECORD_VERSION_MAX + 1;
	EXPECT_EQ(-1, ioctl(self->dev, GPUAR_IOC_PORT_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, port_create_newer_struct)
{
	struct {
		struct gpuar_port_create c;
		__u32 future[2];
	} big;
	unsigned long cmd = ioc_sized(GPUAR_IOC_PORT_CREATE, sizeof(big));
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
	unsigned long cmd = ioc_sized(GPUAR_IOC_CANCEL, sizeof(big));

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
	unsigned long cmd = ioc_sized(GPUAR_IOC_PORT_STATS, sizeof(big));

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

TEST_HARNESS_MAIN
