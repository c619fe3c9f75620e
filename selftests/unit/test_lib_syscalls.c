// SPDX-License-Identifier: MIT
/*
 * The library's system-call count (gpuar_port_lib_stats' syscalls) and the
 * kernel engine's shared completion area, engine-agnostic (engine_fixture.h;
 * the VMs run it on the module's port).
 *
 * The count is checked against an independent one: this file defines the
 * libc functions the library makes its calls through (read, ioctl, ppoll,
 * ...), which the static library's references bind to, and counts each
 * call made from the test's thread while a sequence runs; the library's
 * count must move by exactly that. A call the library makes outside its
 * GPUAR_SYS wrappers, or one a wrapper counts twice, shows as a mismatch.
 *
 * The area (kernel engine, a module with GPUAR_FEATURE_AREA, else
 * skipped with the reason): completed records reaped with zero system
 * calls, each once; a small ring overflowing into the module's queue
 * still gives every record once, in completion order.
 */
#include <gpuar/gpuar.h>

#include "engine_fixture.h"
#include "port.h"
#include "unit_tap.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------ the independent count */

static _Thread_local bool counting;
static _Thread_local unsigned long calls;

#define COUNTED(expr) (calls += counting, (expr))

ssize_t read(int fd, void *buf, size_t n)
{
	return COUNTED(syscall(SYS_read, fd, buf, n));
}

ssize_t write(int fd, const void *buf, size_t n)
{
	return COUNTED(syscall(SYS_write, fd, buf, n));
}

ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	return COUNTED(syscall(SYS_preadv2, fd, iov, cnt, (long)off, 0L, flags));
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	return COUNTED((int)syscall(SYS_ioctl, fd, req, arg));
}

int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	int i;

	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	return COUNTED((int)syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]));
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
	  const sigset_t *mask)
{
	return COUNTED((int)syscall(SYS_ppoll, fds, n, ts, mask, _NSIG / 8));
}

int poll(struct pollfd *fds, nfds_t n, int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L };

	return COUNTED((int)syscall(SYS_ppoll, fds, n, ms < 0 ? NULL : &ts,
				    NULL, _NSIG / 8));
}

int epoll_wait(int epfd, struct epoll_event *evs, int max, int ms)
{
	return COUNTED((int)syscall(SYS_epoll_pwait, epfd, evs, max, ms, NULL,
				    _NSIG / 8));
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	return COUNTED((int)syscall(SYS_epoll_ctl, epfd, op, fd, ev));
}

int timerfd_settime(int fd, int flags, const struct itimerspec *new,
		    struct itimerspec *old)
{
	return COUNTED((int)syscall(SYS_timerfd_settime, fd, flags, new, old));
}

/* Calls the library must not make on these paths unwrapped: count them too. */
int clock_nanosleep(clockid_t clk, int flags, const struct timespec *t,
		    struct timespec *rem)
{
	long r = COUNTED(syscall(SYS_clock_nanosleep, clk, flags, t, rem));

	return r < 0 ? errno : 0;
}

int sched_yield(void)
{
	return COUNTED((int)syscall(SYS_sched_yield));
}

static uint64_t lib_syscalls(struct gpuar_port *p)
{
	struct gpuar_port_lib_stats st = { .size = sizeof(st) };

	ck_assert_int_eq(gpuar_port_lib_stats(p, &st), 0);
	return st.syscalls;
}

/* ------------------------------------------------------------ the count */

#define IMMEDIATE "flag:park_us=100,backstop_us=1000"

/*
 * A sequence touching every call that reaches the engine: submit a wait
 * already done and one that is not, reap (no wait, and a short wait that
 * times out), cancel, process, statistics. The library's count moves by
 * exactly what the libc functions saw from this thread, and by something.
 */
START_TEST(count_is_what_the_wrappers_made)
{
	struct gpuar_port *p = open_port();
	struct gpuar_point_stats ps = { .size = sizeof(ps), .point = 7 };
	struct gpuar_port_stats st = { .size = sizeof(st) };
	struct gpuar_record rec[4];
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	uint64_t before, after;
	int n;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	gpuar_line_words(l)[0] = 5;
	before = lib_syscalls(p);
	calls = 0;
	counting = true;
	w = word_wait(l, 0, 5, 1, IMMEDIATE);
	ck_assert_int_eq(gpuar_submit_word_waits(p, &w, 1, NULL), 1);
	do
		n = gpuar_port_reap(p, rec, 4, 0);
	while (n == -EAGAIN);
	ck_assert_int_eq(n, 1);
	w = word_wait(l, 1, 9, 2, "flag:park_us=100,backstop_us=500000");
	ck_assert_int_eq(gpuar_submit_word_waits(p, &w, 1, NULL), 1);
	ck_assert_int_eq(gpuar_port_reap(p, rec, 4, 0), -EAGAIN);
	ck_assert_int_eq(gpuar_port_reap(p, rec, 4, 2 * MS), -ETIME);
	ck_assert_int_eq(gpuar_cancel(p, 2), 1);
	ck_assert_int_ge(gpuar_port_process(p), 0);
	ck_assert_int_eq(gpuar_port_reap(p, rec, 4, 0), 1);
	ck_assert_int_eq(rec[0].status, -ECANCELED);
	ck_assert_int_eq(gpuar_port_stats(p, &st), 0);
	ck_assert_int_eq(gpuar_point_stats(p, &ps), 0);
	counting = false;
	after = lib_syscalls(p);
	ck_assert_uint_gt(calls, 0);
	ck_assert_uint_eq(after - before, calls);
	gpuar_port_close(p);
}
END_TEST

/* A port is charged its own calls only, not another port's. */
START_TEST(count_is_per_port)
{
	struct gpuar_port *a = open_port(), *b = open_port();
	struct gpuar_record rec;
	uint64_t a0 = lib_syscalls(a), b0 = lib_syscalls(b);

	calls = 0;
	counting = true;
	ck_assert_int_eq(gpuar_port_reap(b, &rec, 1, 1 * MS), -ETIME);
	counting = false;
	ck_assert_uint_gt(calls, 0);
	ck_assert_uint_eq(lib_syscalls(b) - b0, calls);
	ck_assert_uint_eq(lib_syscalls(a), a0);
	gpuar_port_close(a);
	gpuar_port_close(b);
}
END_TEST

START_TEST(lib_stats_sizes)
{
	struct gpuar_port *p = open_port();
	struct gpuar_port_lib_stats st;

	memset(&st, 0xff, sizeof(st));
	st.size = 0;			/* 1.1's size */
	ck_assert_int_eq(gpuar_port_lib_stats(p, &st), 0);
	ck_assert_uint_eq(st.size, 0);
	ck_assert_uint_eq(st.reserved[4], 0);
	st.size = 8;			/* below it */
	ck_assert_int_eq(gpuar_port_lib_stats(p, &st), -EINVAL);
	ck_assert_int_eq(gpuar_port_lib_stats(NULL, &st), -EINVAL);
	ck_assert_int_eq(gpuar_port_lib_stats(p, NULL), -EINVAL);
	/* The user engine and a NO_AREA port read: no area. */
	st.size = sizeof(st);
	ck_assert_int_eq(gpuar_port_lib_stats(p, &st), 0);
	if (user_engine(p))
		ck_assert_uint_eq(st.flags & GPUAR_LIB_STATS_AREA, 0);
	ck_assert_uint_eq(st.area_records, 0);
	gpuar_port_close(p);
}
END_TEST

/* -------------------------------------------------- the area (kernel) */

/* Submit @n waits already done, one call each (completion order = ud order). */
static void submit_done(struct gpuar_port *p, struct gpuar_line *l, uint32_t n)
{
	struct gpuar_port_stats st = { .size = sizeof(st) };
	struct gpuar_word_wait w;
	uint32_t i;

	gpuar_line_words(l)[0] = 1;
	for (i = 0; i < n; i++) {
		w = word_wait(l, 0, 1, 100 + i, IMMEDIATE);
		ck_assert_int_eq(gpuar_submit_word_waits(p, &w, 1, NULL), 1);
	}
	/* Every record written (ring or queue) before the count starts. */
	do
		ck_assert_int_eq(gpuar_port_stats(p, &st), 0);
	while (st.pending);
	ck_assert_uint_eq(st.queued, n);
}

static struct gpuar_port *open_area_port(uint32_t ring)
{
	struct gpuar_port_lib_stats st = { .size = sizeof(st) };
	struct gpuar_port *p;

	gpuar_port_area_test_entries = ring;
	p = open_port();
	gpuar_port_area_test_entries = 0;
	ck_assert_int_eq(gpuar_port_lib_stats(p, &st), 0);
	ck_assert_msg(st.flags & GPUAR_LIB_STATS_AREA,
		      "the module has GPUAR_FEATURE_AREA, the port no area");
	return p;
}

/* Reap @n records with timeout 0, max @batch a call: each once, in order. */
static void reap_in_order(struct gpuar_port *p, uint32_t n, uint32_t batch)
{
	struct gpuar_record rec[16];
	uint32_t got = 0;
	int k, i;

	while (got < n) {
		k = gpuar_port_reap(p, rec, batch, 0);
		ck_assert_msg(k > 0, "reap: %d after %u of %u", k, got, n);
		for (i = 0; i < k; i++)
			ck_assert_uint_eq(rec[i].user_data, 100 + got++);
	}
	ck_assert_int_eq(gpuar_port_reap(p, rec, 1, 0), -EAGAIN);
}

START_TEST(area_reap_of_completed_waits_makes_no_call)
{
	struct gpuar_port *p = open_area_port(0);
	struct gpuar_port_lib_stats st = { .size = sizeof(st) };
	struct gpuar_line *l;
	uint64_t before;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	submit_done(p, l, 12);
	before = lib_syscalls(p);
	calls = 0;
	counting = true;
	{
		struct gpuar_record rec[16];
		uint32_t got = 0;
		int k, i;

		while (got < 12) {
			k = gpuar_port_reap(p, rec, 5, 0);
			ck_assert_int_gt(k, 0);
			for (i = 0; i < k; i++)
				ck_assert_uint_eq(rec[i].user_data, 100 + got++);
		}
	}
	counting = false;
	ck_assert_uint_eq(calls, 0);
	ck_assert_uint_eq(lib_syscalls(p), before);
	ck_assert_int_eq(gpuar_port_lib_stats(p, &st), 0);
	ck_assert_uint_eq(st.area_records, 12);
	gpuar_port_close(p);
}
END_TEST

START_TEST(area_overflow_gives_every_record_once_in_order)
{
	struct gpuar_port *p = open_area_port(GPUAR_AREA_RING_MIN);
	struct gpuar_port_lib_stats st = { .size = sizeof(st) };
	struct gpuar_line *l;
	uint64_t before;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	submit_done(p, l, 5 * GPUAR_AREA_RING_MIN);
	before = lib_syscalls(p);
	reap_in_order(p, 5 * GPUAR_AREA_RING_MIN, 3);
	ck_assert_int_eq(gpuar_port_lib_stats(p, &st), 0);
	ck_assert_uint_ge(st.area_records, GPUAR_AREA_RING_MIN);
	ck_assert_uint_gt(st.syscalls, before);	/* the queue took read() */
	gpuar_port_close(p);
}
END_TEST

/* GPUAR_PORT_NO_AREA: the same records, read() as before. */
START_TEST(no_area_flag_reads)
{
	struct gpuar_port_options o = { .flags = GPUAR_PORT_NO_AREA };
	struct gpuar_port *p = open_opts(&o);
	struct gpuar_port_lib_stats st = { .size = sizeof(st) };
	struct gpuar_line *l;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	ck_assert_int_eq(gpuar_port_lib_stats(p, &st), 0);
	ck_assert_uint_eq(st.flags & GPUAR_LIB_STATS_AREA, 0);
	submit_done(p, l, 6);
	reap_in_order(p, 6, 4);
	ck_assert_int_eq(gpuar_port_lib_stats(p, &st), 0);
	ck_assert_uint_eq(st.area_records, 0);
	gpuar_port_close(p);
}
END_TEST

/* Why the area tests cannot run here, or NULL. */
static const char *area_missing(void)
{
	struct gpuar_version v = { .size = sizeof(v) };
	const char *path = getenv("GPUAR_DEVICE") ? getenv("GPUAR_DEVICE") :
			   GPUAR_DEVICE_PATH;
	int fd, ret;

	if (test_engine() != GPUAR_ENGINE_KERNEL)
		return "the shared area is the kernel engine's (GPUAR_TEST_ENGINE=kernel)";
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return "no module device";
	ret = (int)syscall(SYS_ioctl, fd, GPUAR_IOC_VERSION, &v);
	close(fd);
	if (ret < 0 || !(v.features & GPUAR_FEATURE_AREA))
		return "the module has no GPUAR_FEATURE_AREA (shared completion area)";
	return NULL;
}

int main(void)
{
	struct unit_skips skips = { 0 };
	const char *why = area_missing();
	Suite *s = suite_create("lib_syscalls");
	TCase *t = tcase_create("syscalls");
	int ret;

	if (test_engine() != GPUAR_ENGINE_USER)
		kparams_save();
	tcase_set_timeout(t, 30);
	tcase_add_test(t, count_is_what_the_wrappers_made);
	tcase_add_test(t, count_is_per_port);
	tcase_add_test(t, lib_stats_sizes);
	unit_add_or_skip(t, &skips, area_reap_of_completed_waits_makes_no_call, why);
	unit_add_or_skip(t, &skips, area_overflow_gives_every_record_once_in_order, why);
	/* Any module: the flag only keeps the library off the area. */
	unit_add_or_skip(t, &skips, no_area_flag_reads,
			 test_engine() == GPUAR_ENGINE_KERNEL ? NULL :
			 "the shared area is the kernel engine's (GPUAR_TEST_ENGINE=kernel)");
	suite_add_tcase(s, t);
	ret = unit_run_tap(s, &skips);
	if (test_engine() != GPUAR_ENGINE_USER)
		kparams_restore();
	return ret;
}
