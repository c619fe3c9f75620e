// SPDX-License-Identifier: MIT
/*
 * libgpuar ports: every call and error path, engine-agnostic (the engine
 * comes from GPUAR_TEST_ENGINE, see engine_fixture.h). Tests that depend on
 * timing use 10-50 ms of work and assert order and outcome, not durations.
 */
#include <gpuar/gpuar.h>

#include "engine_fixture.h"
#include "unit_tap.h"
#include "unit_interrupt.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <dirent.h>
#include <signal.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLAG "flag:park_us=100,backstop_us=1000"
#define FLAG_PREDICT FLAG "+predict:margin_us=150,min_sleep_us=20,max_sleep_us=50000,window=8"

/* ------------------------------------------------------ opening */

START_TEST(open_user_engine_reports_user)
{
	struct gpuar_port_options o = { .engine = GPUAR_ENGINE_USER };
	struct gpuar_port *p;
	struct gpuar_error err;

	ck_assert_int_eq(gpuar_port_open(&p, &o, &err), 0);
	ck_assert_uint_eq(err.code, GPUAR_OK);
	ck_assert_int_eq(gpuar_port_engine(p), GPUAR_ENGINE_USER);
	ck_assert_str_eq(gpuar_engine_name(gpuar_port_engine(p)), "user");
	ck_assert_int_ge(gpuar_port_fd(p), 0);
	gpuar_port_close(p);
}
END_TEST

START_TEST(open_auto_without_module_falls_back_with_warning)
{
	struct gpuar_port_options o = { .device_path = "/nonexistent/gpuar" };
	struct gpuar_port *p;
	struct gpuar_error err;

	ck_assert_int_eq(gpuar_port_open(&p, &o, &err), 0);
	ck_assert_int_eq(gpuar_port_engine(p), GPUAR_ENGINE_USER);
	ck_assert_uint_eq(err.code, GPUAR_W_ENGINE_FALLBACK);
	ck_assert(gpuar_code_is_warning(err.code));
	ck_assert_ptr_nonnull(strstr(err.message, "'kernel'"));
	ck_assert_ptr_nonnull(strstr(err.message, "'user'"));
	/* The device, the error and the likely cause, in words. */
	ck_assert_ptr_nonnull(strstr(err.message, "/nonexistent/gpuar: No such file"));
	ck_assert_ptr_nonnull(strstr(err.message, "module not loaded"));
	gpuar_port_close(p);
}
END_TEST

START_TEST(open_strict_without_module_is_refused)
{
	struct gpuar_port_options o = {
		.engine = _i ? GPUAR_ENGINE_KERNEL : GPUAR_ENGINE_AUTO,
		.flags = GPUAR_PORT_STRICT,
		.device_path = "/nonexistent/gpuar",
	};
	struct gpuar_port *p = (void *)1;
	struct gpuar_error err;

	ck_assert_int_eq(gpuar_port_open(&p, &o, &err), -ENOENT);
	ck_assert_ptr_null(p);
	ck_assert_uint_eq(err.code, GPUAR_E_ENGINE_UNAVAILABLE);
	ck_assert_int_eq(err.sys_errno, ENOENT);
	ck_assert_ptr_nonnull(strstr(err.message, "/nonexistent/gpuar"));
}
END_TEST

/* An explicit KERNEL request is honoured or refused, never swapped. */
START_TEST(open_kernel_without_module_is_refused_without_strict)
{
	struct gpuar_port_options o = {
		.engine = GPUAR_ENGINE_KERNEL,
		.device_path = "/nonexistent/gpuar",
	};
	struct gpuar_port *p = (void *)1;
	struct gpuar_error err;

	ck_assert_int_eq(gpuar_port_open(&p, &o, &err), -ENOENT);
	ck_assert_ptr_null(p);
	ck_assert_uint_eq(err.code, GPUAR_E_ENGINE_UNAVAILABLE);
}
END_TEST

/* Each bounded option, one below its floor and one above its ceiling. */
static const struct {
	const char *name;
	struct gpuar_port_options o;
} out_of_range[] = {
	{ "max_waits", { .max_waits = 1048577 } },
	{ "max_lines", { .max_lines = 65537 } },
	{ "max_points", { .max_points = 4097 } },
	{ "max_points", { .max_points = UINT32_MAX } },
	{ "poll_interval_ns", { .poll_interval_ns = 999 } },
	{ "poll_interval_ns", { .poll_interval_ns = UINT64_MAX / 2 } },
	/* Wraps "now + interval" into the past: a check always due. */
	{ "poll_interval_ns", { .poll_interval_ns = UINT64_MAX - 1000000 } },
	{ "poll_backstop_ns", { .poll_backstop_ns = 999 } },
	{ "poll_backstop_ns", { .poll_backstop_ns = UINT64_MAX } },
};

/* As the module bounds its parameters (core/defaults.h), for both engines. */
START_TEST(open_refuses_options_out_of_range)
{
	struct gpuar_port_options o = out_of_range[_i].o;
	struct gpuar_port *p = (void *)1;
	struct gpuar_error err;

	o.engine = test_engine();
	ck_assert_int_eq(gpuar_port_open(&p, &o, &err), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_ARGUMENT);
	ck_assert_msg(strstr(err.message, out_of_range[_i].name), "%s",
		      err.message);
}
END_TEST

START_TEST(open_accepts_options_at_their_bounds)
{
	struct gpuar_port_options o = {
		.max_points = 4096,
		.poll_interval_ns = 10000 * 1000ULL,
		.poll_backstop_ns = 1000000 * 1000ULL,
	};
	struct gpuar_port *p = open_opts(&o);

	gpuar_port_close(p);
}
END_TEST

/*
 * What a child started with fork and exec holds: the test binary re-runs
 * itself (report_fds() below) and prints every anonymous-inode fd it
 * finds open, the kind every gpuar fd is (the module's port, the user
 * engine's epoll, eventfd and timerfd).
 */
static char *exec_child_fds(void)
{
	static char out[4096];
	int pipefd[2];
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		setenv("GPUAR_TEST_REPORT_FDS", "1", 1);
		execl("/proc/self/exe", "report_fds", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(pipefd[0]);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	return out;
}

static int report_fds(void)
{
	char path[64], target[256];
	int fd;

	for (fd = 0; fd < 1024; fd++) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strstr(target, "anon_inode"))
			printf("%d %s\n", fd, target);
	}
	/* Before any exit handler (a sanitizer's) can end the process. */
	fflush(stdout);
	return 0;
}

/*
 * A port opened with default options leaves a child that execs no gpuar
 * fd (so closing the port in the parent ends its waits); one opened with
 * GPUAR_PORT_INHERIT hands its port fd, and only that, across.
 */
START_TEST(exec_child_gets_no_gpuar_fd)
{
	struct gpuar_port_options o = {
		.flags = _i ? GPUAR_PORT_INHERIT : 0,
	};
	struct gpuar_port *p = open_opts(&o);
	char want[16], *fds;

	fds = exec_child_fds();
	if (!_i) {
		ck_assert_msg(fds[0] == '\0', "inherited: %s", fds);
	} else {
		snprintf(want, sizeof(want), "%d ", gpuar_port_fd(p));
		ck_assert_msg(strncmp(fds, want, strlen(want)) == 0 &&
			      !strchr(fds, '\n')[1], "inherited: %s", fds);
	}
	gpuar_port_close(p);
}
END_TEST

/*
 * A forked child that does not exec: every call on the parent's port is
 * refused, its line pages are not mapped, and its close leaves the
 * parent's wait (and watcher thread, _i == 1) working.
 */
START_TEST(forked_child_is_refused_and_parent_unharmed)
{
	struct gpuar_port_options o = {
		.flags = _i ? GPUAR_PORT_WATCHER : 0,
	};
	struct gpuar_port *p = open_opts(&o);
	struct gpuar_line *l, *l2;
	struct gpuar_word_wait w;
	struct gpuar_record rec;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int status;
	pid_t pid;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w = word_wait(l, 0, 1, 9, "flag:park_us=100,backstop_us=1000000");
	submit1(p, &w);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		unsigned char vec;
		int bad = 0;

		bad |= gpuar_port_reap(p, &rec, 1, 0) != -EPERM;
		bad |= (gpuar_cancel(p, 9) != -EPERM) << 1;
		bad |= (gpuar_submit_word_waits(p, &w, 1, NULL) != -EPERM) << 2;
		bad |= (gpuar_line_alloc(p, &l2) != -EPERM) << 3;
		bad |= (gpuar_line_free(p, l) != -EPERM) << 4;
		bad |= (gpuar_port_process(p) != -EPERM) << 5;
		/* Not mapped: mincore says ENOMEM for an unmapped range. */
		bad |= (mincore(gpuar_line_words(l), page, &vec) != -1 ||
			errno != ENOMEM) << 6;
		gpuar_port_close(p);
		_exit(bad);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child status %#x", status);
	__atomic_store_n(&gpuar_line_words(l)[0], 1, __ATOMIC_RELEASE);
	rec = reap1(p, 2000 * MS);
	ck_assert_uint_eq(rec.user_data, 9);
	ck_assert_uint_ne(rec.outcome, GPUAR_OUTCOME_TIMEOUT);
	ck_assert_uint_ne(rec.outcome, GPUAR_OUTCOME_CANCELLED);
	gpuar_port_close(p);
}
END_TEST

/* How many threads but the caller's block SIGINT and SIGTERM, of *@others. */
static int threads_blocking_signals(int *others)
{
	char path[300], line[256];
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");
	int blocking = 0;

	ck_assert_ptr_nonnull(dir);
	*others = 0;
	while ((d = readdir(dir))) {
		unsigned long long blk = 0;
		FILE *f;

		if (d->d_name[0] == '.' || atoi(d->d_name) == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status",
			 d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			sscanf(line, "SigBlk: %llx", &blk);
		fclose(f);
		(*others)++;
		if ((blk & (1ULL << (SIGINT - 1))) &&
		    (blk & (1ULL << (SIGTERM - 1))))
			blocking++;
	}
	closedir(dir);
	return blocking;
}

/* The library's threads take no process signal, whatever the caller's mask. */
START_TEST(library_threads_block_signals)
{
	struct gpuar_port_options o = { .flags = GPUAR_PORT_WATCHER };
	struct gpuar_soft_producer *prod;
	struct gpuar_port *p;
	sigset_t none;
	int others;

	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	p = open_opts(&o);
	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(threads_blocking_signals(&others), others);
	ck_assert_int_ge(others, 1);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

START_TEST(open_refuses_inherit_with_cloexec)
{
	struct gpuar_port_options o = {
		.engine = GPUAR_ENGINE_USER,
		.flags = GPUAR_PORT_INHERIT | GPUAR_PORT_CLOEXEC,
	};
	struct gpuar_port *p;

	ck_assert_int_eq(gpuar_port_open(&p, &o, NULL), -EINVAL);
}
END_TEST

START_TEST(open_refuses_bad_options)
{
	struct gpuar_port_options o = { .engine = 7 };
	struct gpuar_port *p;
	struct gpuar_error err;

	ck_assert_int_eq(gpuar_port_open(&p, &o, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_ARGUMENT);
	o.engine = GPUAR_ENGINE_USER;
	o.flags = 1U << 30;
	ck_assert_int_eq(gpuar_port_open(&p, &o, &err), -EINVAL);
	ck_assert_int_eq(gpuar_port_open(NULL, &o, &err), -EINVAL);
	/* Refused before any engine opens, so for both engines alike. */
	o.flags = 0;
	o.busy_read_us = GPUAR_BUSY_READ_MAX_US + 1;
	ck_assert_int_eq(gpuar_port_open(&p, &o, &err), -EINVAL);
	ck_assert_uint_eq(err.code, GPUAR_E_INVALID_ARGUMENT);
}
END_TEST

/* ------------------------------------------------------ lines */

START_TEST(lines_are_zeroed_pages_with_distinct_ids)
{
	struct gpuar_port *p = open_port();
	struct gpuar_line *a, *b;
	long page = sysconf(_SC_PAGESIZE);
	int i;

	ck_assert_int_eq(gpuar_line_alloc(p, &a), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &b), 0);
	ck_assert_uint_eq((uintptr_t)gpuar_line_words(a) % (uintptr_t)page, 0);
	ck_assert_ptr_ne(gpuar_line_words(a), gpuar_line_words(b));
	ck_assert_uint_ne(gpuar_line_id(a), gpuar_line_id(b));
	for (i = 0; i < GPUAR_LINE_SLOTS; i++)
		ck_assert_uint_eq(gpuar_line_words(a)[i], 0);
	ck_assert_int_eq(gpuar_line_free(p, a), 0);
	ck_assert_int_eq(gpuar_line_free(p, b), 0);
	gpuar_port_close(p);
}
END_TEST

START_TEST(line_free_refuses_foreign_and_busy_lines)
{
	struct gpuar_port *p = open_port(), *q = open_port();
	struct gpuar_line *a, *other;
	struct gpuar_word_wait w;

	ck_assert_int_eq(gpuar_line_alloc(p, &a), 0);
	ck_assert_int_eq(gpuar_line_alloc(q, &other), 0);
	ck_assert_int_eq(gpuar_line_free(p, other), -EINVAL);
	w = word_wait(a, 0, 1, 1, FLAG);
	w.plan.backstop_ns = 1000 * MS;	/* stays pending */
	submit1(p, &w);
	ck_assert_int_eq(gpuar_line_free(p, a), -EBUSY);
	ck_assert_int_eq(gpuar_cancel(p, 1), 1);
	ck_assert_int_eq(reap1(p, 0).outcome, GPUAR_OUTCOME_CANCELLED);
	ck_assert_int_eq(gpuar_line_free(p, a), 0);
	gpuar_port_close(p);
	gpuar_port_close(q);
}
END_TEST

START_TEST(line_limit_gives_enospc)
{
	struct gpuar_port_options o = { .max_lines = 2 };
	struct gpuar_port *p = open_opts(&o);
	struct gpuar_line *l[3];

	ck_assert_int_eq(gpuar_line_alloc(p, &l[0]), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l[1]), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l[2]), -ENOSPC);
	gpuar_port_close(p);	/* frees the lines */
}
END_TEST

/* ------------------------------------------------------ word waits */

START_TEST(word_already_reached_is_immediate)
{
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	struct gpuar_record rec;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	gpuar_line_words(l)[3] = 10;
	w = word_wait(l, 3, 9, 0xabc, "poll");
	submit1(p, &w);
	rec = reap1(p, 1000 * MS);
	ck_assert_uint_eq(rec.user_data, 0xabc);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_IMMEDIATE);
	ck_assert_uint_eq(rec.source, GPUAR_SOURCE_WORD);
	ck_assert_uint_eq(rec.checks, 1);
	ck_assert_uint_eq(rec.value, 10);
	ck_assert_uint_eq(rec.point, 7);
	ck_assert_int_eq(rec.status, 0);
	gpuar_port_close(p);
}
END_TEST

START_TEST(wrapping_target_is_reached)
{
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	gpuar_line_words(l)[0] = 2;	/* wrapped past UINT64_MAX */
	w = word_wait(l, 0, UINT64_MAX - 1, 1, "poll");
	submit1(p, &w);
	ck_assert_uint_eq(reap1(p, 1000 * MS).outcome, GPUAR_OUTCOME_IMMEDIATE);
	gpuar_port_close(p);
}
END_TEST

START_TEST(store_later_is_exact_for_poll_and_flag)
{
	const char *plans[] = { "poll", FLAG, FLAG_PREDICT };
	struct gpuar_soft_producer *prod;
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	struct gpuar_record rec;
	uint64_t stored;

	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w = word_wait(l, 1, 5, 42, plans[_i]);
	w.plan.backstop_ns = w.plan.park == GPUAR_PARK_FLAG ? 1000 * MS : 0;
	w.point = 100 + (uint64_t)_i;
	submit1(p, &w);
	ck_assert_int_eq(gpuar_soft_store_after(prod, &gpuar_line_words(l)[1], 5, 20 * MS), 0);
	rec = reap1(p, 2000 * MS);
	stored = gpuar_soft_stored_at(prod, &gpuar_line_words(l)[1], 5);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_uint_eq(rec.value, 5);
	ck_assert_uint_ge(rec.checks, 2);
	ck_assert_uint_ne(stored, 0);
	/* Never reported done before a check could have seen the store. */
	ck_assert_uint_ge(rec.complete_ns, stored);
	ck_assert_uint_gt(rec.complete_ns, rec.start_ns);
	ck_assert_uint_eq(rec.slept_ns, 0);	/* first wait at a point never sleeps */
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

/*
 * A timeout of INT64_MAX is forever, not a deadline past the clock's
 * range: the reap waits for the store and returns its record. On the
 * module's engine that is WAIT_READY with no deadline (the sum, sent as
 * it was, once made the kernel arm a timer in the past and WARN: the VM
 * runner fails a run whose kernel log has that).
 */
START_TEST(reap_with_the_largest_timeout_waits_for_the_record)
{
	struct gpuar_soft_producer *prod;
	struct gpuar_port *p = open_port();
	struct gpuar_record rec;
	struct gpuar_word_wait w;
	struct gpuar_line *l;

	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w = word_wait(l, 2, 9, 43, FLAG);
	w.plan.backstop_ns = 1000 * MS;
	submit1(p, &w);
	ck_assert_int_eq(gpuar_soft_store_after(prod, &gpuar_line_words(l)[2], 9, 20 * MS), 0);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, INT64_MAX), 1);
	ck_assert_uint_eq(rec.user_data, 43);
	ck_assert_uint_eq(rec.value, 9);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

START_TEST(early_store_after_prediction_is_late)
{
	struct gpuar_point_stats ps = { .point = 77 };
	struct gpuar_soft_producer *prod;
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	struct gpuar_record first, rec;
	uint64_t *word;

	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	word = &gpuar_line_words(l)[0];
	w = word_wait(l, 0, 1, 1, FLAG_PREDICT);
	w.point = 77;
	w.plan.backstop_ns = 1000 * MS;
	/* First wait: 40 ms of work teaches the point its residual. */
	submit1(p, &w);
	gpuar_soft_store_after(prod, word, 1, 40 * MS);
	first = reap1(p, 2000 * MS);
	ck_assert_uint_eq(first.outcome, GPUAR_OUTCOME_EXACT);
	/* Second: the work is done long before the predicted sleep ends. */
	w.target = 2;
	w.user_data = 2;
	submit1(p, &w);
	gpuar_soft_store_after(prod, word, 2, 5 * MS);
	rec = reap1(p, 2000 * MS);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_LATE);
	ck_assert_uint_gt(rec.slept_ns, 0);
	ck_assert_uint_eq(rec.checks, 2);
	ck_assert_int_eq(gpuar_point_stats(p, &ps), 0);
	ck_assert(ps.flags & GPUAR_POINT_HAS_PREDICTION);
	ck_assert_uint_eq(ps.samples, 2);
	/* A late wake lowers the prediction, never raises it. */
	ck_assert_uint_lt(ps.predicted_ns, first.complete_ns - first.start_ns);
	ck_assert_uint_eq(ps.outcomes[GPUAR_OUTCOME_EXACT], 1);
	ck_assert_uint_eq(ps.outcomes[GPUAR_OUTCOME_LATE], 1);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

START_TEST(flag_backstop_expiry_is_timeout)
{
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	struct gpuar_record rec;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w = word_wait(l, 0, 1, 9, "flag:park_us=1000,backstop_us=10000");
	submit1(p, &w);
	rec = reap1(p, 2000 * MS);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_TIMEOUT);
	ck_assert_int_eq(rec.status, -ETIME);
	ck_assert_uint_eq(rec.user_data, 9);
	gpuar_port_close(p);
}
END_TEST

/*
 * A resubmit (start_ns given, after a TIMEOUT record) found done at
 * submission: the checks before it saw the work pending, so it is EXACT,
 * not IMMEDIATE, and the point learns one sample from the original start.
 */
START_TEST(resubmission_done_at_submission_is_exact_from_its_start)
{
	struct gpuar_point_stats ps = { .point = 78 };
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	struct gpuar_record rec;
	uint64_t start = gpuar_now_ns() - 5 * MS;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	gpuar_line_words(l)[0] = 1;
	w = word_wait(l, 0, 1, 1, "poll");
	w.point = 78;
	w.start_ns = start;
	submit1(p, &w);
	rec = reap1(p, 1000 * MS);
	ck_assert_uint_eq(rec.start_ns, start);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_uint_eq(rec.checks, 1);
	ck_assert_uint_ge(rec.complete_ns - rec.start_ns, 5 * MS);
	ck_assert_int_eq(gpuar_point_stats(p, &ps), 0);
	ck_assert_uint_eq(ps.samples, 1);
	ck_assert_uint_eq(ps.outcomes[GPUAR_OUTCOME_EXACT], 1);
	ck_assert_uint_eq(ps.outcomes[GPUAR_OUTCOME_IMMEDIATE], 0);
	/* The same word on a first submit is immediate and teaches nothing. */
	w.start_ns = 0;
	submit1(p, &w);
	ck_assert_uint_eq(reap1(p, 1000 * MS).outcome, GPUAR_OUTCOME_IMMEDIATE);
	ck_assert_int_eq(gpuar_point_stats(p, &ps), 0);
	ck_assert_uint_eq(ps.samples, 1);
	ck_assert_uint_eq(ps.outcomes[GPUAR_OUTCOME_IMMEDIATE], 1);
	gpuar_port_close(p);
}
END_TEST

/*
 * A point's window only grows: a plan with a smaller window at the same
 * point keeps the samples the larger one gathered (here the smallest,
 * which the prediction is), instead of dropping all but its newest.
 */
START_TEST(point_window_grows_and_never_shrinks)
{
	static const uint64_t ago[] = { 5 * MS, 30 * MS, 30 * MS, 30 * MS };
	struct gpuar_point_stats ps = { .point = 79 };
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	size_t i;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	gpuar_line_words(l)[0] = 1;
	w = word_wait(l, 0, 1, 1, FLAG_PREDICT);	/* window=8 */
	w.point = 79;
	/* Resubmits found done: one EXACT sample each, of about ago[i]. */
	for (i = 0; i < sizeof(ago) / sizeof(ago[0]); i++) {
		if (i == 3)
			w.plan.window = 2;
		w.start_ns = gpuar_now_ns() - ago[i];
		submit1(p, &w);
		ck_assert_uint_eq(reap1(p, 1000 * MS).outcome,
				  GPUAR_OUTCOME_EXACT);
	}
	ck_assert_int_eq(gpuar_point_stats(p, &ps), 0);
	ck_assert_uint_eq(ps.samples, 4);
	ck_assert(ps.flags & GPUAR_POINT_HAS_PREDICTION);
	/* Shrunk to 2, the 5 ms sample would be gone (prediction >= 30 ms). */
	ck_assert_uint_ge(ps.predicted_ns, 5 * MS);
	ck_assert_uint_lt(ps.predicted_ns, 30 * MS);
	gpuar_port_close(p);
}
END_TEST

START_TEST(records_come_in_completion_order)
{
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w[2];
	struct gpuar_record rec;

	/*
	 * The second wait submitted completes first. The stores come one at
	 * a time, each after the previous record is read: two stores close
	 * together may be seen by one check, and a slow machine (the debug
	 * kernel under TCG) makes any fixed gap between them close.
	 */
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w[0] = word_wait(l, 0, 1, 100, "poll");
	w[1] = word_wait(l, 1, 1, 200, "poll");
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 2, NULL), 2);
	__atomic_store_n(&gpuar_line_words(l)[1], 1, __ATOMIC_RELEASE);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 2000 * MS), 1);
	ck_assert_uint_eq(rec.user_data, 200);
	/* The first is still pending: nothing more to read. */
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 0), -EAGAIN);
	__atomic_store_n(&gpuar_line_words(l)[0], 1, __ATOMIC_RELEASE);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 2000 * MS), 1);
	ck_assert_uint_eq(rec.user_data, 100);
	gpuar_port_close(p);
}
END_TEST

/* ------------------------------------------------------ validation */

START_TEST(bad_word_waits_are_refused_whole)
{
	struct gpuar_port_stats st = { .size = sizeof(st) };
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w[3];
	struct gpuar_record rec;
	uint32_t idx = 99;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	gpuar_line_words(l)[0] = 1;
	w[0] = word_wait(l, 0, 1, 1, "poll");
	w[2] = word_wait(l, 0, 1, 3, "poll");
	/* One bad field at a time in the middle entry. */
	for (int bad = 0; bad < 8; bad++) {
		int want = -EINVAL;

		w[1] = word_wait(l, 0, 1, 2, "poll");
		switch (bad) {
		case 0: w[1].slot = GPUAR_LINE_SLOTS; break;
		case 1: w[1].line = gpuar_line_id(l) + 1000; want = -ENOENT; break;
		case 2: w[1].flags = 1; break;
		case 3: w[1].pad = 1; break;
		case 4: w[1].plan = plan_of("block"); break;
		case 5: w[1].plan.window = 3; break;	/* unused field set */
		case 6: w[1].plan.park = 9; break;
		case 7: w[1].start_ns = gpuar_now_ns() + 1000 * MS; break;
		}
		ck_assert_int_eq(gpuar_submit_word_waits(p, w, 3, &idx), want);
		ck_assert_uint_eq(idx, 1);
	}
	ck_assert_int_eq(gpuar_port_stats(p, &st), 0);
	ck_assert_uint_eq(st.submitted, 0);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 0), -EAGAIN);
	ck_assert_int_eq(gpuar_submit_word_waits(p, NULL, 1, &idx), -EFAULT);
	gpuar_port_close(p);
}
END_TEST

START_TEST(batch_submits_all)
{
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w[3];
	struct gpuar_record rec[3];
	uint32_t idx = 99;
	int n = 0, i;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	for (i = 0; i < 3; i++) {
		gpuar_line_words(l)[i] = 1;
		w[i] = word_wait(l, (uint32_t)i, 1, (uint64_t)i + 1, "poll");
	}
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 3, &idx), 3);
	while (n < 3) {
		int r = gpuar_port_reap(p, rec + n, (uint32_t)(3 - n), 1000 * MS);

		ck_assert_int_gt(r, 0);
		n += r;
	}
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(rec[i].user_data, (uint64_t)i + 1);
	gpuar_port_close(p);
}
END_TEST

START_TEST(wait_limit_gives_enospc)
{
	struct gpuar_port_options o = { .max_waits = 3 };
	struct gpuar_port *p = open_opts(&o);
	struct gpuar_line *l;
	struct gpuar_word_wait w[2];
	struct gpuar_record rec;
	uint32_t idx;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	gpuar_line_words(l)[1] = 1;
	w[0] = word_wait(l, 0, 1, 1, "poll");
	w[1] = word_wait(l, 1, 1, 2, "poll");	/* immediate: its record is queued */
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 2, &idx), 2);
	/* Pending + unread count: 2 + 2 > 3. */
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 2, &idx), -ENOSPC);
	ck_assert_uint_eq(idx, 2);
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 1, &idx), 1);
	/* Reading a record frees its slot. */
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 0), 1);
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 1, &idx), 1);
	gpuar_port_close(p);
}
END_TEST

START_TEST(batch_above_wait_limit_is_e2big)
{
	struct gpuar_port_options o = { .max_waits = 2 };
	struct gpuar_port *p = open_opts(&o);
	struct gpuar_fence_wait f[3] = { { .fd = 0 } };
	struct gpuar_line *l;
	struct gpuar_word_wait w[3];
	uint32_t idx;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	for (int i = 0; i < 3; i++)
		w[i] = word_wait(l, 0, 1, 1, "poll");
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 3, &idx), -E2BIG);
	ck_assert_uint_eq(idx, 3);
	ck_assert_int_eq(gpuar_submit_fence_waits(p, f, 3, &idx), -E2BIG);
	gpuar_port_close(p);
}
END_TEST

/* Poll plans (and flag plans with backstop_us=0) get the default backstop. */
START_TEST(poll_wait_times_out_at_the_default_backstop)
{
	struct gpuar_port_options o = { .poll_backstop_ns = 20 * MS };
	struct gpuar_port *p = open_opts(&o);
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	struct gpuar_record rec;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w = word_wait(l, 0, 1, 1, _i ? "flag:park_us=100,backstop_us=0" : "poll");
	submit1(p, &w);
	rec = reap1(p, 2000 * MS);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_TIMEOUT);
	ck_assert_int_eq(rec.status, -ETIME);
	/* Counted from submission. */
	ck_assert_uint_ge(rec.complete_ns - rec.start_ns, 20 * MS);
	gpuar_port_close(p);
}
END_TEST

/*
 * A timed reap with nothing completing returns at its deadline, however
 * often the engine has to run meanwhile (a poll wait checked every 50 us
 * keeps the user engine's fd turning readable without a record).
 */
START_TEST(timed_reap_returns_at_its_deadline)
{
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	struct gpuar_record rec;
	uint64_t t0, took;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w = word_wait(l, 0, 1, 1, _i ? "flag:park_us=10,backstop_us=0" : "poll");
	submit1(p, &w);
	t0 = gpuar_now_ns();
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 200 * MS), -ETIME);
	took = gpuar_now_ns() - t0;
	ck_assert_uint_ge(took, 200 * MS);
	/*
	 * A reap that began its timeout again at each turn of the engine (its
	 * fd turns readable every 50 us here) would never return; the bound
	 * is only that, with room for a debug kernel under emulation.
	 */
	ck_assert_msg(took < 1000 * MS, "returned after %llu ms",
		      (unsigned long long)(took / MS));
	gpuar_port_close(p);
}
END_TEST

/* -1 and INT64_MAX alike mean "no deadline", never "now". */
START_TEST(reap_without_deadline_waits_for_the_record)
{
	struct gpuar_port *p = open_port();
	struct gpuar_soft_producer *prod;
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	struct gpuar_record rec;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	w = word_wait(l, 0, 1, 5, "flag:park_us=100,backstop_us=1000000");
	submit1(p, &w);
	ck_assert_int_eq(gpuar_soft_store_after(prod, &gpuar_line_words(l)[0], 1,
						20 * MS), 0);
	rec = reap1(p, _i ? INT64_MAX : -1);
	ck_assert_uint_eq(rec.user_data, 5);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

/*
 * A reap or process that comes late (the caller's loop was busy) is not a
 * wake-up latency sample: only the engine's own sleeps are.
 */
START_TEST(late_reap_is_no_wakeup_sample)
{
	struct gpuar_port *p = open_port();
	struct gpuar_port_stats st = { .size = sizeof(st) };
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	struct gpuar_record rec;

	if (!user_engine(p)) {
		gpuar_port_close(p);
		return;		/* the module samples its own timer */
	}
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w = word_wait(l, 0, 1, 1, "poll");
	submit1(p, &w);
	for (int i = 0; i < 20; i++) {
		usleep(2000);	/* the 50 us check is long overdue */
		if (i % 2)
			ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 0), -EAGAIN);
		else
			ck_assert_int_eq(gpuar_port_process(p), 0);
	}
	ck_assert_int_eq(gpuar_port_stats(p, &st), 0);
	ck_assert_uint_eq(st.wakeup_latency_ns, 0);
	gpuar_port_close(p);
}
END_TEST

/*
 * A reap without deadline ends with -EINTR once its interrupt is set
 * from another thread (plain and watcher ports, both engines), and at
 * once while it stays set.
 */
START_TEST(interrupt_ends_a_blocked_reap)
{
	struct gpuar_port_options o = {
		.flags = _i ? GPUAR_PORT_WATCHER : 0,
	};
	struct gpuar_port *p = open_opts(&o);
	struct gpuar_interrupt *intr;
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	struct gpuar_record rec;
	pthread_t th;
	uint64_t t0;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w = word_wait(l, 0, 1, 1, "flag:park_us=1000,backstop_us=1000000");
	submit1(p, &w);
	ck_assert_int_eq(gpuar_interrupt_new(&intr), 0);
	ck_assert_int_ge(gpuar_interrupt_fd(intr), 0);
	t0 = gpuar_now_ns();
	pthread_create(&th, NULL, unit_interrupt_in_30ms, intr);
	ck_assert_int_eq(gpuar_port_reap_interruptible(p, &rec, 1, -1, intr), -EINTR);
	ck_assert_uint_lt(gpuar_now_ns() - t0, 500 * MS);
	pthread_join(th, NULL);
	ck_assert_int_eq(gpuar_port_reap_interruptible(p, &rec, 1, -1, intr), -EINTR);
	gpuar_interrupt_reset(intr);
	ck_assert_int_eq(gpuar_port_reap_interruptible(p, &rec, 1, 0, intr), -EAGAIN);
	gpuar_interrupt_free(intr);
	gpuar_port_close(p);
}
END_TEST

/*
 * A blocked reaper spends at most its busy_read_us on the CPU, whether
 * it spins or parks in the CPU's hardware word wait (umwait, mwaitx: the
 * CPU stays in C0, busy to the OS); then it sleeps on the fd. (Where the
 * CPU has no hardware word wait the reaper never parks so.)
 */
START_TEST(blocked_reap_stays_within_its_spin_budget)
{
	struct gpuar_port_options o = { .busy_read_us = 1000 };
	struct gpuar_port *p = open_opts(&o);
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	struct gpuar_record rec;
	struct timespec t0, t1;
	uint64_t cpu;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w = word_wait(l, 0, 1, 1, "flag:park_us=10000,backstop_us=1000000");
	submit1(p, &w);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 100 * MS), -ETIME);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	cpu = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ULL +
	      (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
	/* 1 ms of budget, ten wake-ups for the 10 ms checks, slack for a VM. */
	ck_assert_msg(cpu < 30 * MS, "%llu us of CPU in a 100 ms reap",
		      (unsigned long long)(cpu / 1000));
	gpuar_port_close(p);
}
END_TEST

START_TEST(point_limit_gives_enospc)
{
	struct gpuar_port_options o = { .max_points = 1 };
	struct gpuar_port *p = open_opts(&o);
	struct gpuar_line *l;
	struct gpuar_word_wait w[3];
	uint32_t idx;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	gpuar_line_words(l)[0] = 1;
	w[0] = word_wait(l, 0, 1, 1, "poll");
	w[1] = w[0];
	w[1].point = 8;
	/* A limit refuses the batch as a whole: error_index is the count. */
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 2, &idx), -ENOSPC);
	ck_assert_uint_eq(idx, 2);
	/* Every entry is validated first: a bad one after the overflowing
	 * point is named, not the limit. */
	w[2] = w[0];
	w[2].slot = GPUAR_LINE_SLOTS;
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 3, &idx), -EINVAL);
	ck_assert_uint_eq(idx, 2);
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 1, &idx), 1);
	gpuar_port_close(p);
}
END_TEST

/* ------------------------------------------------------ fences */

START_TEST(bad_fence_waits_are_refused)
{
	struct gpuar_port *p = open_port();
	struct gpuar_fence_wait f = { .user_data = 1, .fd = -1 };
	uint32_t idx = 99;
	int pipefd[2];

	ck_assert_int_eq(gpuar_submit_fence_waits(p, &f, 1, &idx), -EBADF);
	ck_assert_uint_eq(idx, 0);
	ck_assert_int_eq(pipe(pipefd), 0);
	f.fd = pipefd[0];	/* pollable, but not a sync_file */
	ck_assert_int_eq(gpuar_submit_fence_waits(p, &f, 1, &idx), -EINVAL);
	f.flags = 1;
	ck_assert_int_eq(gpuar_submit_fence_waits(p, &f, 1, &idx), -EINVAL);
	f.flags = 0;
	f.reserved[1] = 1;
	ck_assert_int_eq(gpuar_submit_fence_waits(p, &f, 1, &idx), -EINVAL);
	ck_assert_int_eq(gpuar_submit_fence_waits(p, NULL, 1, &idx), -EFAULT);
	ck_assert_int_eq(gpuar_submit_fence_waits(p, &f, 0, &idx), 0);
	close(pipefd[0]);
	close(pipefd[1]);
	gpuar_port_close(p);
}
END_TEST

/* ------------------------------------------------------ cancel */

START_TEST(cancel_pending_and_lost_races)
{
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w[3];
	struct gpuar_record rec[3];

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w[0] = word_wait(l, 0, 1, 5, "poll");
	w[1] = word_wait(l, 1, 1, 5, "poll");
	w[2] = word_wait(l, 2, 1, 6, "poll");
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 3, NULL), 3);
	ck_assert_int_eq(gpuar_cancel(p, 5), 2);
	ck_assert_int_eq(gpuar_port_reap(p, rec, 3, 1000 * MS), 2);
	ck_assert_uint_eq(rec[0].outcome, GPUAR_OUTCOME_CANCELLED);
	ck_assert_int_eq(rec[0].status, -ECANCELED);
	ck_assert_uint_eq(rec[1].outcome, GPUAR_OUTCOME_CANCELLED);
	ck_assert_int_eq(gpuar_cancel(p, 5), -ENOENT);
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 1, NULL), 1);
	ck_assert_int_eq(gpuar_cancel(p, 5), 1);
	/* Its CANCELLED record is queued: cancelling again finds nothing. */
	ck_assert_int_eq(gpuar_cancel(p, 5), -ENOENT);
	ck_assert_uint_eq(reap1(p, 0).outcome, GPUAR_OUTCOME_CANCELLED);
	/* Complete 6, leave its record queued: the cancel lost the race. */
	__atomic_store_n(&gpuar_line_words(l)[2], 1, __ATOMIC_RELEASE);
	while (gpuar_port_process(p) == 0)
		usleep(1000);
	ck_assert_int_eq(gpuar_cancel(p, 6), -EALREADY);
	ck_assert_uint_eq(reap1(p, 0).outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_int_eq(gpuar_cancel(p, 6), -ENOENT);
	gpuar_port_close(p);
}
END_TEST

/* ------------------------------------------------------ reaping */

START_TEST(reap_errors)
{
	struct gpuar_port *p = open_port();
	struct gpuar_record rec;
	uint64_t t0 = gpuar_now_ns();

	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 0), -EAGAIN);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 0, 0), -EINVAL);
	ck_assert_int_eq(gpuar_port_reap(p, NULL, 1, 0), -EINVAL);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 10 * MS), -ETIME);
	ck_assert_uint_ge(gpuar_now_ns() - t0, 10 * MS);
	gpuar_port_close(p);
}
END_TEST

START_TEST(reap_takes_at_most_max)
{
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w[2];
	struct gpuar_record rec[2];

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	gpuar_line_words(l)[0] = 1;
	w[0] = word_wait(l, 0, 1, 1, "poll");
	w[1] = word_wait(l, 0, 1, 2, "poll");
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 2, NULL), 2);
	ck_assert_int_eq(gpuar_port_reap(p, rec, 1, 1000 * MS), 1);
	ck_assert_uint_eq(rec[0].user_data, 1);
	ck_assert_int_eq(gpuar_port_reap(p, rec, 2, 1000 * MS), 1);
	ck_assert_uint_eq(rec[0].user_data, 2);
	gpuar_port_close(p);
}
END_TEST

/* An epoll loop: wait on the port fd, run the engine, read the record. */
START_TEST(port_fd_drives_an_epoll_loop)
{
	struct gpuar_soft_producer *prod;
	struct gpuar_port *p = open_port();
	struct epoll_event ev = { .events = EPOLLIN };
	struct gpuar_line *l;
	struct gpuar_word_wait w;
	struct gpuar_record rec;
	int ep = epoll_create1(EPOLL_CLOEXEC), wakes = 0, n = 0;

	ck_assert_int_ge(ep, 0);
	ck_assert_int_eq(epoll_ctl(ep, EPOLL_CTL_ADD, gpuar_port_fd(p), &ev), 0);
	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w = word_wait(l, 0, 1, 1, FLAG);
	w.plan.backstop_ns = 1000 * MS;
	submit1(p, &w);
	gpuar_soft_store_after(prod, &gpuar_line_words(l)[0], 1, 20 * MS);
	while (n == 0) {
		ck_assert_int_eq(epoll_wait(ep, &ev, 1, 2000), 1);
		wakes++;
		/* Readiness may be spurious: a check that found it pending. */
		if (gpuar_port_process(p) > 0)
			n = gpuar_port_reap(p, &rec, 1, 0);
	}
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	ck_assert_int_ge(wakes, 1);
	/* Nothing queued, nothing due: the fd is not readable. */
	ck_assert_int_eq(epoll_wait(ep, &ev, 1, 0), 0);
	close(ep);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

/* Watcher mode: the fd is readable only with a record; no process calls. */
START_TEST(watcher_port_fd_is_exact)
{
	struct gpuar_port_options o = { .flags = GPUAR_PORT_WATCHER };
	struct gpuar_soft_producer *prod;
	struct gpuar_port *p = open_opts(&o);
	struct epoll_event ev = { .events = EPOLLIN };
	struct gpuar_line *l;
	struct gpuar_word_wait w[2];
	struct gpuar_record rec;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ck_assert_int_eq(epoll_ctl(ep, EPOLL_CTL_ADD, gpuar_port_fd(p), &ev), 0);
	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w[0] = word_wait(l, 0, 1, 1, "poll");
	w[1] = word_wait(l, 1, 1, 2, "poll");
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 2, NULL), 2);
	gpuar_soft_store_after(prod, &gpuar_line_words(l)[0], 1, 20 * MS);
	/* Every wake-up has a record behind it. */
	ck_assert_int_eq(epoll_wait(ep, &ev, 1, 2000), 1);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 0), 1);
	ck_assert_uint_eq(rec.user_data, 1);
	ck_assert_int_eq(epoll_wait(ep, &ev, 1, 30), 0);
	/* A blocking reap is served by the watcher too. */
	gpuar_soft_store_after(prod, &gpuar_line_words(l)[1], 1, 10 * MS);
	ck_assert_int_eq(gpuar_port_reap(p, &rec, 1, 2000 * MS), 1);
	ck_assert_uint_eq(rec.user_data, 2);
	close(ep);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

START_TEST(port_fd_polls_readable_with_a_record)
{
	struct gpuar_port *p = open_port();
	struct pollfd pfd = { .fd = gpuar_port_fd(p), .events = POLLIN };
	struct gpuar_line *l;
	struct gpuar_word_wait w;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	gpuar_line_words(l)[0] = 1;
	w = word_wait(l, 0, 1, 1, "poll");
	submit1(p, &w);
	ck_assert_int_eq(poll(&pfd, 1, 1000), 1);
	reap1(p, 0);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	gpuar_port_close(p);
}
END_TEST

START_TEST(next_check_follows_pending_waits)
{
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w;

	if (!user_engine(p)) {
		ck_assert_uint_eq(gpuar_port_next_check_ns(p), 0);
		gpuar_port_close(p);
		return;
	}
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	ck_assert_uint_eq(gpuar_port_next_check_ns(p), UINT64_MAX);
	w = word_wait(l, 0, 1, 1, "poll");
	submit1(p, &w);
	ck_assert_uint_lt(gpuar_port_next_check_ns(p), gpuar_now_ns() + 1000 * MS);
	ck_assert_int_eq(gpuar_cancel(p, 1), 1);
	ck_assert_uint_eq(gpuar_port_next_check_ns(p), UINT64_MAX);
	gpuar_port_close(p);
}
END_TEST

/* ------------------------------------------------------ statistics */

START_TEST(stats_count_waits_and_outcomes)
{
	struct gpuar_point_stats ps = { .point = 12345 };
	struct gpuar_port_stats st = { .size = sizeof(st) };
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w[2];

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	ck_assert_int_eq(gpuar_point_stats(p, &ps), -ENOENT);
	gpuar_line_words(l)[0] = 1;
	w[0] = word_wait(l, 0, 1, 1, "poll");
	w[1] = word_wait(l, 1, 1, 2, "poll");
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 2, NULL), 2);
	ck_assert_int_eq(gpuar_port_stats(p, &st), 0);
	ck_assert_uint_eq(st.submitted, 2);
	ck_assert_uint_eq(st.outcomes[GPUAR_OUTCOME_IMMEDIATE], 1);
	ck_assert_uint_eq(st.pending, 1);
	ck_assert_uint_eq(st.queued, 1);
	ck_assert_uint_eq(st.lines, 1);
	ck_assert_uint_eq(st.points, 1);
	ck_assert_uint_ge(st.checks, 2);
	ck_assert_int_eq(gpuar_cancel(p, 2), 1);
	ck_assert_int_eq(gpuar_port_stats(p, &st), 0);
	ck_assert_uint_eq(st.outcomes[GPUAR_OUTCOME_CANCELLED], 1);
	ck_assert_uint_eq(st.pending, 0);
	ck_assert_uint_eq(st.queued, 2);
	ps.point = 7;
	ck_assert_int_eq(gpuar_point_stats(p, &ps), 0);
	ck_assert_uint_eq(ps.outcomes[GPUAR_OUTCOME_IMMEDIATE], 1);
	ck_assert_uint_eq(ps.outcomes[GPUAR_OUTCOME_CANCELLED], 1);
	ck_assert_int_eq(gpuar_port_stats(p, NULL), -EINVAL);
	gpuar_port_close(p);
}
END_TEST

START_TEST(null_arguments_are_refused)
{
	struct gpuar_port *p = open_port();
	struct gpuar_point_stats ps = { .point = 1 };
	struct gpuar_word_wait w = { 0 };
	struct gpuar_line *l;

	ck_assert_int_eq(gpuar_line_alloc(p, NULL), -EINVAL);
	ck_assert_int_eq(gpuar_line_alloc(NULL, &l), -EINVAL);
	ck_assert_int_eq(gpuar_line_free(p, NULL), -EINVAL);
	ck_assert_int_eq(gpuar_submit_word_waits(NULL, &w, 1, NULL), -EINVAL);
	ck_assert_int_eq(gpuar_submit_word_waits(p, &w, 0, NULL), 0);
	ck_assert_int_eq(gpuar_cancel(NULL, 1), -EINVAL);
	ck_assert_int_eq(gpuar_port_process(NULL), -EINVAL);
	ck_assert_int_eq(gpuar_point_stats(NULL, &ps), -EINVAL);
	ck_assert_int_eq(gpuar_point_stats(p, NULL), -EINVAL);
	/* The accessors too (L3-12): no dereference of a NULL port. */
	ck_assert_int_eq(gpuar_port_fd(NULL), -EINVAL);
	ck_assert_int_eq(gpuar_port_engine(NULL), GPUAR_ENGINE_AUTO);
	ck_assert_uint_eq(gpuar_port_next_check_ns(NULL), UINT64_MAX);
	gpuar_port_close(p);
}
END_TEST

START_TEST(close_with_pending_waits_frees_everything)
{
	struct gpuar_port *p = open_port();
	struct gpuar_line *l;
	struct gpuar_word_wait w;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	w = word_wait(l, 0, 1, 1, "poll");
	submit1(p, &w);
	gpuar_port_close(p);	/* ASan reports anything left behind */
	gpuar_port_close(NULL);
}
END_TEST

int main(void)
{
	struct unit_skips skips = { 0 };
	TCase *open, *t;
	Suite *s;
	int ret;

	/* The exec'd child of exec_child_fds: before the suite's allocations. */
	if (getenv("GPUAR_TEST_REPORT_FDS"))
		return report_fds();
	s = suite_create("lib_port");
	open = tcase_create("open");
	t = tcase_create("port");
	if (test_engine() != GPUAR_ENGINE_USER)
		kparams_save();
	tcase_add_test(open, open_user_engine_reports_user);
	tcase_add_test(open, open_auto_without_module_falls_back_with_warning);
	tcase_add_loop_test(open, open_strict_without_module_is_refused, 0, 2);
	tcase_add_test(open, open_refuses_bad_options);
	tcase_add_test(open, open_kernel_without_module_is_refused_without_strict);
	tcase_add_loop_test(open, open_refuses_options_out_of_range, 0,
			    sizeof(out_of_range) / sizeof(out_of_range[0]));
	tcase_add_test(open, open_accepts_options_at_their_bounds);
	tcase_add_test(open, open_refuses_inherit_with_cloexec);
	tcase_add_loop_test(open, exec_child_gets_no_gpuar_fd, 0, 2);
	tcase_add_loop_test(open, forked_child_is_refused_and_parent_unharmed, 0, 2);
	tcase_add_test(open, library_threads_block_signals);
	suite_add_tcase(s, open);
	tcase_set_timeout(t, 30);
	tcase_add_test(t, lines_are_zeroed_pages_with_distinct_ids);
	tcase_add_test(t, line_free_refuses_foreign_and_busy_lines);
	tcase_add_test(t, line_limit_gives_enospc);
	tcase_add_test(t, word_already_reached_is_immediate);
	tcase_add_test(t, wrapping_target_is_reached);
	tcase_add_loop_test(t, store_later_is_exact_for_poll_and_flag, 0, 3);
	tcase_add_test(t, reap_with_the_largest_timeout_waits_for_the_record);
	tcase_add_test(t, early_store_after_prediction_is_late);
	tcase_add_test(t, flag_backstop_expiry_is_timeout);
	tcase_add_test(t, resubmission_done_at_submission_is_exact_from_its_start);
	tcase_add_test(t, point_window_grows_and_never_shrinks);
	tcase_add_test(t, records_come_in_completion_order);
	tcase_add_test(t, bad_word_waits_are_refused_whole);
	tcase_add_test(t, batch_submits_all);
	tcase_add_test(t, wait_limit_gives_enospc);
	tcase_add_test(t, point_limit_gives_enospc);
	tcase_add_test(t, batch_above_wait_limit_is_e2big);
	tcase_add_loop_test(t, poll_wait_times_out_at_the_default_backstop, 0, 2);
	tcase_add_loop_test(t, timed_reap_returns_at_its_deadline, 0, 2);
	tcase_add_test(t, late_reap_is_no_wakeup_sample);
	tcase_add_test(t, blocked_reap_stays_within_its_spin_budget);
	tcase_add_loop_test(t, interrupt_ends_a_blocked_reap, 0, 2);
	tcase_add_loop_test(t, reap_without_deadline_waits_for_the_record, 0, 2);
	tcase_add_test(t, bad_fence_waits_are_refused);
	tcase_add_test(t, cancel_pending_and_lost_races);
	tcase_add_test(t, reap_errors);
	tcase_add_test(t, reap_takes_at_most_max);
	tcase_add_test(t, port_fd_drives_an_epoll_loop);
	tcase_add_test(t, port_fd_polls_readable_with_a_record);
	tcase_add_test(t, watcher_port_fd_is_exact);
	tcase_add_test(t, next_check_follows_pending_waits);
	tcase_add_test(t, stats_count_waits_and_outcomes);
	tcase_add_test(t, null_arguments_are_refused);
	tcase_add_test(t, close_with_pending_waits_frees_everything);
	suite_add_tcase(s, t);
	ret = unit_run_tap(s, &skips);
	kparams_restore();
	return ret;
}
