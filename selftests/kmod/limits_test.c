// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Limits: each per-port and per-user limit (module parameters, read from
 * /sys/module/gpuar/parameters) is hit and refused cleanly, changes
 * nothing, and frees up again; pinned lines count against RLIMIT_MEMLOCK
 * for a process without CAP_IPC_LOCK: each folio once per port, however
 * many lines it holds and however large it is, summed over every process
 * of the user.
 *
 *   lines past max_lines ..................... ENOSPC
 *   waits past max_waits (pending + unread) .. ENOSPC, error_index = count,
 *                                               before a wait is allocated
 *   a new point past max_points .............. ENOSPC, error_index = count,
 *                                               while pending waits hold
 *                                               every point; else the one
 *                                               idle longest goes
 *   point lookups after much churn ........... a few index slots each
 *                                               (fdinfo point_visits)
 *   every limit readable by an unprivileged user (the ABI header's list)
 *   ports past max_ports for one user ........ EMFILE (as inotify's
 *                                              per-user instance limit)
 *   a pin past RLIMIT_MEMLOCK ................ ENOMEM (as io_uring, RDMA)
 *   a creator that passes its port on and exits
 *                           ................ keeps its pins charged until
 *                                            the port's last fd closes,
 *                                            on either charging path
 */
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#include "port_harness.h"
#include "testfence_fixture.h"

static long long param(struct __test_metadata *_metadata, const char *name)
{
	long long v = t_param(name);

	EXPECT_LT(0, v) {
		TH_LOG("/sys/module/gpuar/parameters/%s unreadable", name);
	}
	return v;
}

/* The ABI header promises these to any user, as the module's limits. */
static const char *const public_params[] = {
	"max_waits", "max_lines", "max_points", "max_ports",
	"check_floor_us", "poll_interval_us", "poll_backstop_us",
	"checks_per_fire", "busy_read_us", "wakelat_max_us",
};

TEST(limits_readable_by_an_unprivileged_user)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		unsigned int i;

		if (setgid(65534) || setuid(65534))
			_exit(100);
		for (i = 0; i < sizeof(public_params) / sizeof(*public_params);
		     i++)
			if (t_param(public_params[i]) < 0) {
				fprintf(stderr, "# %s as uid %d: %s\n",
					public_params[i], (int)getuid(),
					strerror(errno));
				_exit(1 + i);
			}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_NE(100, WEXITSTATUS(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("%s unreadable as nobody",
		       public_params[WEXITSTATUS(status) - 1]);
	}
}

TEST_F(port, line_limit_enospc)
{
	long long max = param(_metadata, "max_lines");
	unsigned int i, pages;
	__u64 *mem;
	__u32 id;

	ASSERT_LT(0, max);
	ASSERT_GE(65536, max);
	pages = (unsigned int)(max + 64) / 64;
	mem = lines_map(pages);
	ASSERT_NE(NULL, mem);
	/* The fixture registered one already. */
	for (i = 1; i < max; i++) {
		ASSERT_EQ(0, line_register(self->port, line_at(mem, i), &id)) {
			TH_LOG("line %u of %lld: %s", i, max, strerror(errno));
		}
	}
	EXPECT_EQ(-1, line_register(self->port, line_at(mem, 0), &id));
	EXPECT_EQ(ENOSPC, errno);
	/* Refused cleanly: a freed slot takes a line again. */
	ASSERT_EQ(0, line_unregister(self->port, self->line));
	EXPECT_EQ(0, line_register(self->port, line_at(mem, 0), &id));
	EXPECT_EQ(-1, line_register(self->port, line_at(mem, 0), &id));
	EXPECT_EQ(ENOSPC, errno);
	lines_unmap(mem, pages);
}

TEST_F_TIMEOUT(port, wait_limit_enospc, 120)
{
	long long max = param(_metadata, "max_waits");
	struct gpuar_word_wait w[256];
	struct gpuar_port_stats st;
	struct gpuar_record r;
	long long done = 0;
	__u32 idx;
	int i, ret;

	ASSERT_LT(0, max);
	ASSERT_GE(1 << 20, max);
	for (i = 0; i < 256; i++)
		w[i] = word_wait(self->line, i % 8, 1, 1, i, plan_poll());
	while (done < max) {
		int c = max - done < 256 ? (int)(max - done) : 256;

		for (i = 0; i < c; i++)
			w[i].user_data = done + i;
		ASSERT_EQ(c, submit_words(self->port, w, c, NULL)) {
			TH_LOG("after %lld: %s", done, strerror(errno));
		}
		done += c;
	}
	/* Full: one more is refused, and so is a whole batch. */
	EXPECT_EQ(-1, submit_words(self->port, w, 1, &idx));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(1U, idx);
	EXPECT_EQ(-1, submit_words(self->port, w, 4, &idx));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(4U, idx);
	ASSERT_EQ(0, port_stats(self->port, &st));
	/* Waits that reached their backstop meanwhile still hold slots. */
	EXPECT_EQ((__u64)max, st.pending + st.queued);
	EXPECT_EQ((__u64)max, st.submitted);

	/*
	 * A cancelled wait keeps its slot until its record is read. (Unless
	 * TCG stalled past the poll backstop: then it timed out, EALREADY.)
	 */
	ret = port_cancel(self->port, max - 1);
	EXPECT_TRUE(ret == 1 || (ret == -1 && errno == EALREADY));
	EXPECT_EQ(-1, submit_words(self->port, w, 1, NULL));
	EXPECT_EQ(ENOSPC, errno);
	ASSERT_ONE_RECORD(self->port, r);
	EXPECT_EQ(1, submit_words(self->port, w, 1, NULL));
}

#define TRACEFS "/sys/kernel/tracing"

/* kmem:kmalloc events in the trace buffer, or -1. */
static int kmallocs_traced(void)
{
	static char buf[1 << 20];
	int fd = open(TRACEFS "/trace", O_RDONLY), n = 0;
	size_t len = 0;
	ssize_t got;
	char *at;

	if (fd < 0)
		return -1;
	while (len < sizeof(buf) - 1 &&
	       (got = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += got;
	close(fd);
	buf[len] = 0;
	for (at = buf; (at = strstr(at, " kmalloc:")); at++)
		n++;
	return n;
}

/*
 * The kmallocs this thread makes in @count refused submissions of a
 * valid @n-entry batch (kmem:kmalloc, traced for this pid only), or -1.
 */
static int kmallocs_in_refused_submits(int port, unsigned long req,
				       const void *entries, __u32 entry_size,
				       __u32 n, int count)
{
	char pid[32];
	int i, traced = -1;

	snprintf(pid, sizeof(pid), "%d", (int)syscall(SYS_gettid));
	if (write_file(TRACEFS "/set_event_pid", pid) ||
	    write_file(TRACEFS "/trace", "") ||
	    write_file(TRACEFS "/events/kmem/kmalloc/enable", "1"))
		goto out;
	for (i = 0; i < count; i++) {
		struct gpuar_submit s;

		memset(&s, 0, sizeof(s));
		s.size = sizeof(s);
		s.count = n;
		s.entry_size = entry_size;
		s.entries = (__u64)(uintptr_t)entries;
		if (ioctl(port, req, &s) != -1 || errno != ENOSPC ||
		    s.error_index != n)
			goto out;
	}
	write_file(TRACEFS "/events/kmem/kmalloc/enable", "0");
	traced = kmallocs_traced();
out:
	write_file(TRACEFS "/events/kmem/kmalloc/enable", "0");
	write_file(TRACEFS "/set_event_pid", "");
	return traced;
}

/*
 * A full port refuses a valid batch before it allocates a wait for each
 * entry: a few allocations (the batch's arrays) per refusal, not one per
 * entry. (Entries are still read and checked first: their faults come
 * before the limits.)
 */
TEST_F_TIMEOUT(port, full_port_allocates_no_waits, 120)
{
	long long max = param(_metadata, "max_waits");
	struct gpuar_word_wait w[256];
	long long done = 0;
	int i, tl, fence, got;
	struct gpuar_fence_wait f[256];

	ASSERT_LE(256, max);
	ASSERT_GE(1 << 20, max);
	if (access(TRACEFS "/events/kmem/kmalloc/enable", W_OK))
		SKIP(return, "no kmem:kmalloc tracepoint: %s", strerror(errno));
	for (i = 0; i < 256; i++)
		w[i] = word_wait(self->line, i % 8, 1, 1, i, plan_poll());
	while (done < max) {
		int c = max - done < 256 ? (int)(max - done) : 256;

		ASSERT_EQ(c, submit_words(self->port, w, c, NULL));
		done += c;
	}
	got = kmallocs_in_refused_submits(self->port, GPUAR_IOC_SUBMIT_WORD,
					  w, sizeof(w[0]), 256, 4);
	ASSERT_LE(0, got);
	EXPECT_GT(4 * 16, got) {
		TH_LOG("%d kmallocs in 4 refused 256-entry word batches", got);
	}

	tl = testfence_timeline();
	ASSERT_LE(0, tl);
	fence = testfence_fence(tl, 1);
	ASSERT_LE(0, fence);
	for (i = 0; i < 256; i++)
		f[i] = fence_wait(fence, i);
	got = kmallocs_in_refused_submits(self->port, GPUAR_IOC_SUBMIT_FENCE,
					  f, sizeof(f[0]), 256, 4);
	ASSERT_LE(0, got);
	EXPECT_GT(4 * 16, got) {
		TH_LOG("%d kmallocs in 4 refused 256-entry fence batches", got);
	}
	close(fence);
	close(tl);
}

/* Fence waits count against the same limit. */
TEST_F_TIMEOUT(port, wait_limit_counts_fences, 120)
{
	long long max = param(_metadata, "max_waits");
	struct gpuar_word_wait w[256];
	long long done = 0;
	int i, tl, fence;
	__u32 idx;

	ASSERT_LT(1, max);
	ASSERT_GE(1 << 20, max);
	tl = testfence_timeline();
	ASSERT_LE(0, tl);
	fence = testfence_fence(tl, 1);
	ASSERT_LE(0, fence);
	for (i = 0; i < 256; i++)
		w[i] = word_wait(self->line, i % 8, 1, 1, i, plan_poll());
	while (done < max - 1) {
		int c = max - 1 - done < 256 ? (int)(max - 1 - done) : 256;

		ASSERT_EQ(c, submit_words(self->port, w, c, NULL));
		done += c;
	}
	EXPECT_EQ(1, submit_fence(self->port, fence, 1));
	EXPECT_EQ(-1, submit_fence(self->port, fence, 2));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(-1, submit_words(self->port, w, 1, &idx));
	EXPECT_EQ(ENOSPC, errno);
	close(fence);
	close(tl);
}

/*
 * Room for max_points + 1 waits (*@w) and max_points records (*@r), one
 * batch that fills the point table and one more; max_points.
 */
static long long point_batch(struct __test_metadata *_metadata,
			     struct gpuar_word_wait **w, struct gpuar_record **r)
{
	long long max = param(_metadata, "max_points");

	*w = NULL;
	*r = NULL;
	EXPECT_LT(0, max);
	EXPECT_GE(4096, max);
	EXPECT_LE(max + 1, param(_metadata, "max_waits"));
	if (max <= 0 || max > 4096)
		return 0;
	*w = calloc(max + 1, sizeof(**w));
	*r = calloc(max, sizeof(**r));
	EXPECT_NE(NULL, *w);
	EXPECT_NE(NULL, *r);
	return *w && *r ? max : 0;
}

/*
 * Points pending waits hold fill the table: a new point is refused. Once
 * they are idle, a new point takes the place of the one idle longest,
 * whose statistics go: a long-lived port with ever new points never fills
 * up for good.
 */
TEST_F(port, point_limit_enospc_while_held_then_evicts_idle)
{
	struct gpuar_point_stats ps;
	struct gpuar_word_wait *w;
	struct gpuar_record *r;
	long long max = point_batch(_metadata, &w, &r);
	__u32 idx;
	long long p;

	ASSERT_LT(0, max);
	for (p = 0; p <= max; p++)
		w[p] = word_wait(self->line, 0, 1, 1000 + p, p, plan_poll());
	ASSERT_EQ(max, submit_words(self->port, w, max, NULL));
	/* Every point held by a pending wait: a new one does not fit. */
	EXPECT_EQ(-1, submit_words(self->port, &w[max], 1, &idx));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(1U, idx);
	word_store(self->lines, 1);
	ASSERT_EQ(max, collect_records(self->port, r, max, RECORD_TIMEOUT_MS));
	/*
	 * Idle now: the new point evicts the one idle longest, whose wait
	 * ended first (records come in the order the waits ended).
	 */
	EXPECT_EQ(1, submit_words(self->port, &w[max], 1, NULL));
	EXPECT_EQ(-1, point_stats(self->port, 1000 + r[0].user_data, &ps));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0, point_stats(self->port, 1000 + max, &ps));
	EXPECT_EQ(0, point_stats(self->port, 1000 + r[max - 1].user_data,
				 &ps));
	free(w);
	free(r);
}

/*
 * Submit @n waits at points @first, @first + 64, ... on the fixture's
 * line, whose word already reached their target: each ends at its commit
 * and lets its point go idle. Their records are read.
 */
static void submit_points(struct __test_metadata *_metadata,
			  FIXTURE_DATA(port) *self, __u64 first, int n)
{
	struct gpuar_word_wait w[64];
	struct gpuar_record r[64];
	int i;

	ASSERT_GE(64, n);
	for (i = 0; i < n; i++)
		w[i] = word_wait(self->line, 0, 1, first + i, first + i * 64ULL,
				 plan_poll());
	ASSERT_EQ(n, submit_words(self->port, w, n, NULL));
	ASSERT_EQ(n, collect_records(self->port, r, n, RECORD_TIMEOUT_MS));
}

/* Index slots the port's table read during @what (fdinfo point_visits). */
#define VISITS_DURING(what)						\
	({								\
		long long before_ = t_fdinfo(self->port, "point_visits");	\
		ASSERT_LE(0, before_);					\
		what;							\
		t_fdinfo(self->port, "point_visits") - before_;		\
	})

/*
 * A port that keeps seeing new points (K3-4): with max_points 64 (128
 * index slots) and ten tables' worth of points come and gone, 64 new
 * points, 64 known ones and 64 POINT_STATS of evicted points each read a
 * few index slots per point. The tombstone table read all 128 slots per
 * new point (three times, counting its LRU scan: 24576 for 64) and per
 * miss (8192), with interrupts off. Counts, not times.
 */
TEST_F(port, point_lookups_read_a_few_slots_after_churn)
{
	struct gpuar_point_stats ps;
	long long fresh, known, unknown;
	__u64 p;
	int i;

	if (param(_metadata, "max_points") != 64)
		SKIP(return, "max_points is not 64");
	word_store(self->lines, 1);
	for (p = 0; p < 10; p++)
		submit_points(_metadata, self, 0x10000 + p * 64 * 64, 64);
	fresh = VISITS_DURING(submit_points(_metadata, self,
					    0x10000 + 10 * 64 * 64, 64));
	known = VISITS_DURING(submit_points(_metadata, self,
					    0x10000 + 10 * 64 * 64, 64));
	unknown = VISITS_DURING(for (i = 0; i < 64; i++) {
		EXPECT_EQ(-1, point_stats(self->port, 0x10000 + i * 64ULL,
					  &ps));
		EXPECT_EQ(ENOENT, errno);
	});
	TH_LOG("index slots read: 64 new points %lld, 64 known %lld, 64 unknown POINT_STATS %lld",
	       fresh, known, unknown);
	EXPECT_GE(64 * 16, fresh);
	EXPECT_GE(64 * 4, known);
	EXPECT_GE(64 * 4, unknown);
	EXPECT_LE(64, known);	/* counted at all */
}

/*
 * The point evicted is the one idle longest, not the one held longest
 * ago: the last of 64 points goes idle first, so a new point takes its
 * place while the first stays.
 */
TEST_F(port, new_point_evicts_the_longest_idle)
{
	struct gpuar_point_stats ps;
	struct gpuar_word_wait *w;
	struct gpuar_record *r;
	long long max = point_batch(_metadata, &w, &r);
	long long p;

	ASSERT_LT(1, max);
	/* Point 2000 + max - 1 on target 1, the others on target 2. */
	for (p = 0; p <= max; p++)
		w[p] = word_wait(self->line, 0, p == max - 1 ? 1 : 2, 2000 + p,
				 2000 + p, plan_poll());
	ASSERT_EQ(max, submit_words(self->port, w, max, NULL));
	word_store(self->lines, 1);
	ASSERT_EQ(1, collect_records(self->port, r, 1, RECORD_TIMEOUT_MS));
	EXPECT_EQ(2000 + max - 1, (long long)r[0].user_data);
	word_store(self->lines, 2);
	ASSERT_EQ(max - 1, collect_records(self->port, r, max - 1,
					   RECORD_TIMEOUT_MS));
	EXPECT_EQ(1, submit_words(self->port, &w[max], 1, NULL));
	EXPECT_EQ(-1, point_stats(self->port, 2000 + max - 1, &ps));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0, point_stats(self->port, 2000, &ps));
	EXPECT_EQ(0, point_stats(self->port, 2000 + max, &ps));
	free(w);
	free(r);
}

TEST(port_limit_per_user_emfile)
{
	long long max = param(_metadata, "max_ports");
	int dev = t_dev_open();
	int *ports, n = 0, i;
	struct rlimit nofile;

	ASSERT_LT(0, max);
	ASSERT_GE(4096, max);
	ASSERT_LE(0, dev);
	/* Room for the fds: the per-user limit must be what stops us. */
	nofile.rlim_cur = nofile.rlim_max = (rlim_t)max + 64;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &nofile));
	ports = calloc(max + 1, sizeof(*ports));
	ASSERT_NE(NULL, ports);
	for (i = 0; i <= max; i++) {
		ports[i] = t_port_create(dev, GPUAR_PORT_CLOEXEC);
		if (ports[i] < 0)
			break;
		n++;
	}
	EXPECT_EQ(max, n);
	EXPECT_EQ(-1, ports[n]);
	EXPECT_EQ(EMFILE, errno);
	/* Closing one makes room for one. */
	ASSERT_LT(0, n);
	close(ports[0]);
	ports[0] = t_port_create(dev, GPUAR_PORT_CLOEXEC);
	EXPECT_LE(0, ports[0]);
	for (i = 0; i < n; i++)
		close(ports[i]);
	free(ports);
	close(dev);
}

/* ---------------------------------------------------- RLIMIT_MEMLOCK */

static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	data[CAP_TO_INDEX(CAP_IPC_LOCK)].permitted &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	data[CAP_TO_INDEX(CAP_IPC_LOCK)].inheritable &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	if (syscall(SYS_capset, &hdr, data))
		return -1;
	if (prctl(PR_CAPBSET_DROP, CAP_IPC_LOCK, 0, 0, 0))
		return -1;
	/* And become nobody, whose capabilities are none at all. */
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return -1;
	return 0;
}

static int cap_ipc_lock_effective(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	return !!(data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &
		  CAP_TO_MASK(CAP_IPC_LOCK));
}

#define MEMLOCK_PAGES 3

/*
 * A MEMLOCK_PAGES-page RLIMIT_MEMLOCK, then no CAP_IPC_LOCK and uid
 * nobody. 0, or the number of the failed step (2 or 3).
 */
static int become_limited_nobody(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct rlimit rl = { MEMLOCK_PAGES * page, MEMLOCK_PAGES * page };

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 2;
	if (drop_ipc_lock() || cap_ipc_lock_effective() != 0 || !getuid())
		return 3;
	return 0;
}

/*
 * The child: the device opened while still root, then no CAP_IPC_LOCK
 * (and uid nobody), a MEMLOCK_PAGES-page limit, a port, and lines in
 * distinct pages. Returns the
 * number of the first check that failed.
 */
static int memlock_child(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int dev = t_dev_open();
	__u64 *mem = lines_map(MEMLOCK_PAGES + 1);
	__u32 ids[MEMLOCK_PAGES + 1];
	int i, status, port, err;
	pid_t pid;

	if (dev < 0 || !mem)
		return 1;
	err = become_limited_nobody();
	if (err)
		return err;
	/* The device was opened as root; the port is nobody's. */
	port = t_port_create(dev, GPUAR_PORT_CLOEXEC);
	if (port < 0)
		return 4;
	for (i = 0; i < MEMLOCK_PAGES; i++)
		if (line_register(port, mem + i * page / 8, &ids[i]))
			return 10 + i;
	if (line_register(port, mem + MEMLOCK_PAGES * page / 8, &ids[i]) != -1)
		return 20;
	if (errno != ENOMEM)
		return 21;
	/* Unregistering returns the charge. */
	if (line_unregister(port, ids[0]))
		return 22;
	if (line_register(port, mem + MEMLOCK_PAGES * page / 8, &ids[0]))
		return 23;
	/* A second line in a charged page costs nothing more. */
	if (line_register(port, mem + MEMLOCK_PAGES * page / 8 + 8, &ids[1]))
		return 24;
	/*
	 * The limit is the user's, not one address space's: a new process
	 * of the same user (its own mm, nothing pinned in it) is refused.
	 */
	pid = fork();
	if (pid < 0)
		return 25;
	if (!pid) {
		int p2 = t_port_create(dev, GPUAR_PORT_CLOEXEC);
		__u64 *m2 = lines_map(1);
		__u32 id;

		if (p2 < 0 || !m2)
			_exit(1);
		if (line_register(p2, m2, &id) != -1)
			_exit(2);
		_exit(errno == ENOMEM ? 0 : 3);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 26;
	if (WEXITSTATUS(status))
		return 30 + WEXITSTATUS(status);
	/* Closing the port returns all of it. */
	close(port);
	return 0;
}

/*
 * Run @child in a forked process (it drops privileges, which this
 * process must keep) and expect it to exit 0; else log the number of
 * its failed check.
 */
static void run_child(struct __test_metadata *_metadata, int (*child)(void))
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("child check %d failed", WEXITSTATUS(status));
	}
}

TEST(rlimit_memlock_without_cap_ipc_lock)
{
	run_child(_metadata, memlock_child);
}

/* Send @fd over the unix socket @sock. */
static int send_fd(int sock, int fd)
{
	char byte = 0, cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

/* Receive one fd from the unix socket @sock, or -1. */
static int recv_fd(int sock)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * Take fd @fd of live process @pid (pidfd_getfd, as a debugger does): the
 * hand-over where the kernel has no unix sockets (the debug kernel is
 * built without networking). -1 on failure.
 */
static int take_fd(pid_t pid, int fd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), got;

	if (pidfd < 0)
		return -1;
	got = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	close(pidfd);
	return got;
}

/*
 * A port's pins are charged to its creator's user for as long as the
 * port lives: a creator that hands the port's fd on (SCM_RIGHTS, or where
 * the kernel has no unix sockets, pidfd_getfd) and exits, its address
 * space gone, takes no charge with it. Here the creator is a child that
 * pins MEMLOCK_PAGES pages and exits; this process (same user, nothing
 * pinned in its own address space) holds the port and must be refused
 * one page more until it closes it. Holds on either charging path
 * (fdinfo's pin_charge says which one the build took). Returns the
 * number of the failed check.
 */
static int memlock_handover_child(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int dev = t_dev_open(), sv[2] = { -1, -1 }, up[2], down[2], port, mine, i;
	int status, err, theirs;
	__u64 *mem = lines_map(MEMLOCK_PAGES + 1);
	bool unix_ok;
	pid_t creator;
	char byte = 0;
	__u32 id;

	if (dev < 0 || !mem)
		return 1;
	err = become_limited_nobody();
	if (err)
		return err;
	unix_ok = !socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
	if (!unix_ok && errno != EAFNOSUPPORT && errno != ENOSYS)
		return 4;
	/*
	 * Without a socket: the creator says its fd up one pipe and waits
	 * on another until it has been copied. Dropping to nobody made this
	 * process undumpable, which pidfd_getfd's ptrace check refuses.
	 */
	if (pipe(up) || pipe(down) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 5;
	creator = fork();
	if (creator < 0)
		return 6;
	if (!creator) {
		port = t_port_create(dev, GPUAR_PORT_CLOEXEC);
		if (port < 0)
			_exit(1);
		for (i = 0; i < MEMLOCK_PAGES; i++)
			if (line_register(port, mem + i * page / 8, NULL))
				_exit(2);
		if (unix_ok)
			_exit(send_fd(sv[0], port) ? 3 : 0);
		if (write(up[1], &port, sizeof(port)) != sizeof(port))
			_exit(4);
		/* Until the parent has its copy (EOF: it closed its end). */
		close(down[1]);
		while (read(down[0], &byte, 1) > 0)
			;
		_exit(0);
	}
	if (unix_ok) {
		port = -1;
	} else {
		if (read(up[0], &theirs, sizeof(theirs)) != sizeof(theirs))
			return 7;
		port = take_fd(creator, theirs);
		if (port < 0)
			return 8;
	}
	close(down[1]);
	if (waitpid(creator, &status, 0) != creator || !WIFEXITED(status))
		return 9;
	if (WEXITSTATUS(status))
		return 10 + WEXITSTATUS(status);
	/* The creator is gone; the port lives on in the message, then here. */
	if (unix_ok)
		port = recv_fd(sv[1]);
	if (port < 0)
		return 20;
	mine = t_port_create(dev, GPUAR_PORT_CLOEXEC);
	if (mine < 0)
		return 21;
	if (line_register(mine, mem + MEMLOCK_PAGES * page / 8, &id) != -1)
		return 22;
	if (errno != ENOMEM)
		return 23;
	/* The port's last fd closed: its charge is given back. */
	close(port);
	if (line_register(mine, mem + MEMLOCK_PAGES * page / 8, &id))
		return 24;
	close(mine);
	return 0;
}

TEST(rlimit_memlock_charge_outlives_the_creator)
{
	run_child(_metadata, memlock_handover_child);
}

/* fdinfo's pin_charge value, or "" when it shows none. */
static void pin_charge(int port, char out[32])
{
	char path[64], line[128];
	FILE *f;

	out[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", port);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "pin_charge: %31s", out) == 1)
			break;
	fclose(f);
}

/*
 * Where pins are charged is the build's choice (kmod/conftest.sh): the
 * user's locked_vm where the kernel exports free_uid, else the module's
 * own count. A build forced onto the fallback (VM_KMOD_WITHOUT) must
 * have taken it, or the suite above proved the wrong path.
 */
TEST(pin_charge_path_is_the_builds)
{
	const char *without = getenv("GPUAR_VM_KMOD_WITHOUT");
	int port = t_port_open(GPUAR_PORT_CLOEXEC);
	char how[32];

	ASSERT_LE(0, port);
	pin_charge(port, how);
	TH_LOG("pins charged to: %s", how);
	if (without && strstr(without, "free_uid_export")) {
		EXPECT_STREQ("module", how);
	} else {
		EXPECT_TRUE(!strcmp(how, "user") || !strcmp(how, "module"));
	}
	close(port);
}

/* VmPin counts each pinned page once per port, however many lines share it. */
TEST_F(port, lines_in_one_page_pin_it_once)
{
	long one;
	__u32 id;

	one = vm_pin_kb();
	ASSERT_LT(0, one);
	ASSERT_EQ(0, line_register(self->port, line_at(self->lines, 1), &id));
	ASSERT_EQ(0, line_register(self->port, line_at(self->lines, 63), &id));
	EXPECT_EQ(one, vm_pin_kb());
	ASSERT_EQ(0, line_unregister(self->port, self->line));
	EXPECT_EQ(one, vm_pin_kb());
}

#define THP_SIZE (2UL << 20)

/* A 2 MiB-aligned anonymous huge page, or NULL where none is to be had. */
static void *thp_map(void)
{
	char *m = mmap(NULL, 2 * THP_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *at, line[256];
	long kb = 0;
	FILE *f;

	if (m == MAP_FAILED)
		return NULL;
	at = (char *)(((uintptr_t)m + THP_SIZE - 1) & ~(THP_SIZE - 1));
	if (madvise(at, THP_SIZE, MADV_HUGEPAGE))
		return NULL;
	memset(at, 1, THP_SIZE);
	f = fopen("/proc/self/smaps_rollup", "r");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb >= (long)(THP_SIZE >> 10) ? at : NULL;
}

/*
 * A long-term pin holds the whole folio (it cannot be split while
 * pinned): a line in a huge page charges all of it, once.
 */
TEST_F(port, line_in_a_huge_page_charges_the_folio)
{
	long before;
	void *thp;
	__u32 id;

	thp = thp_map();
	if (!thp)
		SKIP(return, "no transparent huge page to be had");
	before = vm_pin_kb();
	ASSERT_EQ(0, line_register(self->port, thp, &id));
	EXPECT_EQ(before + (long)(THP_SIZE >> 10), vm_pin_kb());
	ASSERT_EQ(0, line_register(self->port, (char *)thp + 4096, &id));
	EXPECT_EQ(before + (long)(THP_SIZE >> 10), vm_pin_kb());
	close(self->port);
	self->port = -1;
	EXPECT_EQ(0, vm_pin_kb());
}

/* With CAP_IPC_LOCK (root) the same limit does not apply, as for mlock. */
TEST(rlimit_memlock_cap_ipc_lock_exempt)
{
	long page = sysconf(_SC_PAGESIZE);
	struct rlimit rl = { page, page };
	int port = t_port_open(GPUAR_PORT_CLOEXEC);
	__u64 *mem = lines_map(4);
	int i;

	ASSERT_LE(0, port);
	ASSERT_NE(NULL, mem);
	ASSERT_EQ(1, cap_ipc_lock_effective());
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, line_register(port, mem + i * page / 8, NULL));
	}
	close(port);
	lines_unmap(mem, 4);
}

/*
 * Parameters are range-checked (Kconfig's ranges): out-of-range values are
 * refused with EINVAL and leave the value as it was; a value at a bound is
 * taken.
 */
TEST(params_out_of_range_einval)
{
	long long waits = param(_metadata, "max_waits");
	long long floor_us = param(_metadata, "check_floor_us");
	char buf[32];

	EXPECT_EQ(EINVAL, t_param_write("max_waits", "0"));
	EXPECT_EQ(EINVAL, t_param_write("max_waits", "1048577"));
	EXPECT_EQ(EINVAL, t_param_write("max_waits", "-1"));
	EXPECT_EQ(waits, t_param("max_waits"));
	EXPECT_EQ(EINVAL, t_param_write("check_floor_us", "0"));
	EXPECT_EQ(EINVAL, t_param_write("checks_per_fire", "4097"));
	EXPECT_EQ(EINVAL, t_param_write("busy_read_us", "100001"));
	EXPECT_EQ(floor_us, t_param("check_floor_us"));
	ASSERT_EQ(0, t_param_write("check_floor_us", "10000"));
	EXPECT_EQ(10000, t_param("check_floor_us"));
	snprintf(buf, sizeof(buf), "%lld", floor_us);
	ASSERT_EQ(0, t_param_write("check_floor_us", buf));
	EXPECT_EQ(floor_us, t_param("check_floor_us"));
}

TEST_HARNESS_MAIN
