// SPDX-License-Identifier: MIT
/*
 * libgpuar's io_uring host: records read with IORING_OP_READ from an fd
 * that yields whole records (a pipe here, the module's port in the VMs),
 * and the port's records through the host, on the engine GPUAR_TEST_ENGINE
 * names (user, the default, or kernel: the module's port in the VMs, read
 * with the multishot read where the kernel has it, 6.7+). Skipped, with
 * the reason, where io_uring does not work.
 */
#include <gpuar/gpuar.h>

#include "port.h"
#include "unit_tap.h"

#include <check.h>
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MS 1000000ULL

static bool have_uring(void)
{
	if (gpuar_caps_probe()->io_uring)
		return true;
	fprintf(stderr, "skip: io_uring not usable on this host\n");
	return false;
}

static bool kernel_engine(void)
{
	const char *e = getenv("GPUAR_TEST_ENGINE");

	return e && !strcmp(e, "kernel");
}

static struct gpuar_port *test_port(void)
{
	struct gpuar_port_options o = { .engine = GPUAR_ENGINE_USER };
	struct gpuar_port *p;
	struct gpuar_error err;

	if (kernel_engine()) {
		o.engine = GPUAR_ENGINE_KERNEL;
		o.flags = GPUAR_PORT_STRICT;
	}
	ck_assert_msg(gpuar_port_open(&p, &o, &err) == 0, "%s", err.message);
	return p;
}

/* The kernel's enum io_uring_op value (6.7), absent from liburing 2.3. */
#define OP_READ_MULTISHOT 49

static bool kernel_has_multishot_read(void)
{
	struct io_uring_probe *probe = io_uring_get_probe();
	bool ok;

	if (!probe)
		return false;
	ok = io_uring_opcode_supported(probe, OP_READ_MULTISHOT);
	io_uring_free_probe(probe);
	return ok;
}

/*
 * A kernel-engine port whose engine the test plays (lib/port.h), so that
 * what the module does is set here: its fd one the test drives (a pipe's
 * read end, or an AF_UNIX socket holding out-of-band data, which polls
 * EPOLLPRI as the module's port does at an early wake), the records a reap
 * finds, what a claim answers. Its cancel finds nothing pending and
 * nothing queued: the module's answer once its records were read. Runs the
 * same on every engine the suite runs on, the VMs' included.
 */
static struct {
	struct gpuar_record queued[4];
	u32 nqueued;	/* what the next reaps hand out */
	int claim_ret;		/* a claim's answer */
	int claims;		/* claims asked for */
	int oob_fd;		/* a failing claim raises EPOLLPRI again here */
	int oob_left;
} fake;

/*
 * Wake the port's poll while its out-of-band byte is pending: EPOLLPRI.
 * (The wake of the out-of-band send itself may not carry EPOLLPRI, so a
 * poll for it alone does not hear it; a shutdown's wake carries no mask.)
 */
static void raise_pri(int peer)
{
	ck_assert_int_eq(shutdown(peer, SHUT_WR), 0);
}

static int fake_reap(struct gpuar_port *port, struct gpuar_record *records,
		     u32 max, int64_t timeout_ns, int intr_fd)
{
	u32 n = fake.nqueued < max ? fake.nqueued : max;

	(void)port;
	(void)timeout_ns;
	(void)intr_fd;
	if (!n)
		return -EAGAIN;
	memcpy(records, fake.queued, n * sizeof(*records));
	fake.nqueued -= n;
	memmove(fake.queued, fake.queued + n, fake.nqueued * sizeof(*records));
	return (int)n;
}

static int fake_claim(struct gpuar_port *port, struct gpuar_claim_entry *e,
		      u32 max, u64 lease_ns)
{
	(void)port;
	(void)e;
	(void)max;
	(void)lease_ns;
	fake.claims++;
	if (fake.claim_ret < 0 && fake.oob_left > 0) {
		fake.oob_left--;
		raise_pri(fake.oob_fd);
	}
	return fake.claim_ret;
}

static int fake_cancel(struct gpuar_port *port, u64 user_data)
{
	(void)port;
	(void)user_data;
	return -ENOENT;
}

static void fake_close(struct gpuar_port *port)
{
	close(port->fd);
}

static const struct gpuar_engine_ops fake_ops = {
	.reap = fake_reap,
	.claim = fake_claim,
	.cancel = fake_cancel,
	.close = fake_close,
};

/* Closed with gpuar_port_close(), which closes @fd. */
static struct gpuar_port *fake_port(int fd, bool imminent)
{
	struct gpuar_port *p = calloc(1, sizeof(*p));

	ck_assert_ptr_nonnull(p);
	memset(&fake, 0, sizeof(fake));
	fake.oob_fd = -1;
	p->engine = GPUAR_ENGINE_KERNEL;
	p->fd = fd;
	p->ops = &fake_ops;
	p->imminent = imminent;
	p->fork_gen = gpuar_fork_generation();
	pthread_mutex_init(&p->lines_lock, NULL);
	return p;
}

/* Out-of-band data on an AF_UNIX stream polls EPOLLPRI (Linux 5.15). */
static bool have_unix_oob(void)
{
	int sv[2];
	bool ok;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return false;
	ok = send(sv[1], "!", 1, MSG_OOB) == 1;
	close(sv[0]);
	close(sv[1]);
	return ok;
}

static void put_record(int fd, uint64_t user_data, uint8_t outcome)
{
	struct gpuar_record r = { .user_data = user_data, .outcome = outcome };

	ck_assert_int_eq(write(fd, &r, sizeof(r)), (int)sizeof(r));
}

START_TEST(read_fd_returns_whole_records)
{
	struct gpuar_record out[2] = { { .user_data = 1 }, { .user_data = 2 } };
	struct gpuar_record in[4];
	struct gpuar_uring_host_stats st;
	struct gpuar_uring_host *h;
	int fds[2];

	if (!have_uring())
		return;
	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(gpuar_uring_host_new(&h, NULL), 0);
	ck_assert_int_eq(write(fds[1], out, sizeof(out)), (int)sizeof(out));
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, fds[0], in, 4, 1000 * MS), 2);
	ck_assert_uint_eq(in[0].user_data, 1);
	ck_assert_uint_eq(in[1].user_data, 2);
	gpuar_uring_host_stats(h, &st);
	ck_assert_uint_eq(st.reads, 1);
	/* Multishot where the kernel has it (6.7+), else a one-shot read. */
	ck_assert_uint_eq(st.multishot, gpuar_caps_probe()->multishot_read ? 1 : 0);
	ck_assert_uint_eq(st.records, 2);
	ck_assert_uint_eq(st.fallbacks, 0);
	gpuar_uring_host_free(h);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

START_TEST(records_beyond_max_wait_for_the_next_call)
{
	struct gpuar_record out[3] = { { .user_data = 1 }, { .user_data = 2 },
				       { .user_data = 3 } };
	struct gpuar_record in[2];
	struct gpuar_uring_host *h;
	int fds[2];

	if (!have_uring())
		return;
	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(gpuar_uring_host_new(&h, NULL), 0);
	ck_assert_int_eq(write(fds[1], out, sizeof(out)), (int)sizeof(out));
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, fds[0], in, 2, 1000 * MS), 2);
	ck_assert_uint_eq(in[0].user_data, 1);
	ck_assert_uint_eq(in[1].user_data, 2);
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, fds[0], in, 2, 1000 * MS), 1);
	ck_assert_uint_eq(in[0].user_data, 3);
	gpuar_uring_host_free(h);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

#define MANY 3000

static void *write_many(void *arg)
{
	struct gpuar_record chunk[10];
	int fd = *(int *)arg;

	for (int i = 0; i < MANY; i += 10) {
		for (int j = 0; j < 10; j++)
			chunk[j] = (struct gpuar_record){ .user_data = (uint64_t)(i + j) };
		ck_assert_int_eq(write(fd, chunk, sizeof(chunk)), (int)sizeof(chunk));
	}
	return NULL;
}

/* A slow reader loses nothing and sees every record in order. */
START_TEST(slow_reader_gets_every_record_in_order)
{
	struct gpuar_uring_host_stats st;
	struct gpuar_uring_host *h;
	struct gpuar_record in[7];
	uint64_t next = 0;
	pthread_t th;
	int fds[2];

	if (!have_uring())
		return;
	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(gpuar_uring_host_new(&h, NULL), 0);
	/* Arm the read, then stay away while the writer fills every buffer. */
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, fds[0], in, 7, 0), -ETIME);
	pthread_create(&th, NULL, write_many, &fds[1]);
	usleep(50000);
	while (next < MANY) {
		int n = gpuar_uring_host_read_fd(h, fds[0], in, 7, 5000 * MS);

		ck_assert_int_gt(n, 0);
		for (int i = 0; i < n; i++)
			ck_assert_uint_eq(in[i].user_data, next++);
	}
	pthread_join(th, NULL);
	gpuar_uring_host_stats(h, &st);
	ck_assert_uint_eq(st.records, MANY);
	gpuar_uring_host_free(h);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

/* The multishot read is bound to its first fd; another fd reads one-shot. */
START_TEST(second_fd_reads_one_shot)
{
	struct gpuar_record out = { .user_data = 4 }, in;
	struct gpuar_uring_host_stats st;
	struct gpuar_uring_host *h;
	int a[2], b[2];

	if (!have_uring())
		return;
	ck_assert_int_eq(pipe(a), 0);
	ck_assert_int_eq(pipe(b), 0);
	ck_assert_int_eq(gpuar_uring_host_new(&h, NULL), 0);
	ck_assert_int_eq(write(a[1], &out, sizeof(out)), (int)sizeof(out));
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, a[0], &in, 1, 1000 * MS), 1);
	out.user_data = 5;
	ck_assert_int_eq(write(b[1], &out, sizeof(out)), (int)sizeof(out));
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, b[0], &in, 1, 1000 * MS), 1);
	ck_assert_uint_eq(in.user_data, 5);
	gpuar_uring_host_stats(h, &st);
	ck_assert_uint_eq(st.reads, 2);
	ck_assert_uint_eq(st.multishot, gpuar_caps_probe()->multishot_read ? 1 : 0);
	gpuar_uring_host_free(h);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}
END_TEST

/* Records the multishot read stashed are its fd's: never another fd's. */
START_TEST(stashed_records_go_to_their_own_fd)
{
	struct gpuar_record out[2] = { { .user_data = 1 }, { .user_data = 2 } };
	struct gpuar_record b_rec = { .user_data = 5 }, in;
	struct gpuar_uring_host *h;
	int a[2], b[2];

	if (!have_uring())
		return;
	ck_assert_int_eq(pipe(a), 0);
	ck_assert_int_eq(pipe(b), 0);
	ck_assert_int_eq(gpuar_uring_host_new(&h, NULL), 0);
	ck_assert_int_eq(write(a[1], out, sizeof(out)), (int)sizeof(out));
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, a[0], &in, 1, 1000 * MS), 1);
	ck_assert_uint_eq(in.user_data, 1);
	ck_assert_int_eq(write(b[1], &b_rec, sizeof(b_rec)), (int)sizeof(b_rec));
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, b[0], &in, 1, 1000 * MS), 1);
	ck_assert_uint_eq(in.user_data, 5);
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, a[0], &in, 1, 1000 * MS), 1);
	ck_assert_uint_eq(in.user_data, 2);
	gpuar_uring_host_free(h);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}
END_TEST

/*
 * Freeing the host ends its multishot read even while a forked child
 * holds the ring: a record written afterwards stays in the pipe instead
 * of being copied into the freed buffers.
 */
START_TEST(free_ends_the_multishot_read_a_child_keeps_alive)
{
	struct gpuar_record out = { .user_data = 7 }, in;
	struct gpuar_uring_host *h;
	int fds[2], status;
	pid_t pid;

	if (!have_uring() || !gpuar_caps_probe()->multishot_read)
		return;
	ck_assert_int_eq(pipe2(fds, O_NONBLOCK), 0);
	ck_assert_int_eq(gpuar_uring_host_new(&h, NULL), 0);
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, fds[0], &in, 1, 0), -ETIME);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int ok = gpuar_uring_host_read_fd(h, fds[0], &in, 1, 0) == -EPERM;

		usleep(300000);	/* holds the ring fd meanwhile */
		_exit(ok ? 0 : 1);
	}
	gpuar_uring_host_free(h);
	ck_assert_int_eq(write(fds[1], &out, sizeof(out)), (int)sizeof(out));
	usleep(20000);
	ck_assert_int_eq(read(fds[0], &in, sizeof(in)), (int)sizeof(in));
	ck_assert_uint_eq(in.user_data, 7);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

START_TEST(read_fd_times_out_without_losing_later_records)
{
	struct gpuar_record out = { .user_data = 3 }, in;
	struct gpuar_uring_host *h;
	int fds[2];

	if (!have_uring())
		return;
	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(gpuar_uring_host_new(&h, NULL), 0);
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, fds[0], &in, 1, 10 * MS), -ETIME);
	/* The cancelled read must not have eaten what comes next. */
	ck_assert_int_eq(write(fds[1], &out, sizeof(out)), (int)sizeof(out));
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, fds[0], &in, 1, 1000 * MS), 1);
	ck_assert_uint_eq(in.user_data, 3);
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, fds[0], NULL, 1, 0), -EINVAL);
	gpuar_uring_host_free(h);
	close(fds[0]);
	close(fds[1]);
}
END_TEST

/*
 * A word wait reaped through the host: the user engine's epoll fd through
 * POLL_ADD, the module's port through reads of whole records.
 */
START_TEST(host_reaps_the_ports_records)
{
	struct gpuar_uring_host_stats st;
	struct gpuar_soft_producer *prod;
	struct gpuar_uring_host *h;
	struct gpuar_port *p = test_port();
	struct gpuar_word_wait w = { .user_data = 8, .target = 1 };
	struct gpuar_record rec;
	struct gpuar_line *l;

	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	ck_assert_int_eq(gpuar_plan_from_text("poll", &w.plan, NULL), 0);
	w.line = gpuar_line_id(l);
	ck_assert_int_eq(gpuar_submit_word_waits(p, &w, 1, NULL), 1);
	ck_assert_int_eq(gpuar_uring_host_new(&h, p), 0);
	ck_assert_int_eq(gpuar_uring_host_reap(h, &rec, 1, 10 * MS), -ETIME);
	gpuar_soft_store_after(prod, &gpuar_line_words(l)[0], 1, 20 * MS);
	ck_assert_int_eq(gpuar_uring_host_reap(h, &rec, 1, 2000 * MS), 1);
	ck_assert_uint_eq(rec.user_data, 8);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	gpuar_uring_host_stats(h, &st);
	if (gpuar_port_engine(p) == GPUAR_ENGINE_USER)
		ck_assert_uint_ge(st.polls, 1);
	else
		ck_assert_uint_ge(st.reads, 1);
	ck_assert_uint_eq(st.fallbacks, 0);
	ck_assert_uint_eq(st.records, 1);
	gpuar_uring_host_free(h);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

/*
 * The user engine's fd is polled for POLLIN with one multishot poll that
 * stays armed across reaps, timed out or answered: no poll is cancelled
 * and submitted again for each call (two more trips into the kernel).
 */
START_TEST(user_port_poll_stays_armed_across_reaps)
{
	struct gpuar_port_options o = { .engine = GPUAR_ENGINE_USER };
	struct gpuar_soft_producer *prod;
	struct gpuar_port *p;
	struct gpuar_error err;
	struct gpuar_uring_host_stats st;
	struct gpuar_uring_host *h;
	struct gpuar_word_wait w = { .user_data = 9 };
	struct gpuar_record rec;
	struct gpuar_line *l;

	ck_assert_msg(gpuar_port_open(&p, &o, &err) == 0, "%s", err.message);
	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	ck_assert_int_eq(gpuar_plan_from_text("poll", &w.plan, NULL), 0);
	w.line = gpuar_line_id(l);
	ck_assert_int_eq(gpuar_uring_host_new(&h, p), 0);
	for (uint64_t seq = 1; seq <= 3; seq++) {
		w.target = seq;
		ck_assert_int_eq(gpuar_submit_word_waits(p, &w, 1, NULL), 1);
		ck_assert_int_eq(gpuar_uring_host_reap(h, &rec, 1, 5 * MS), -ETIME);
		gpuar_soft_store_after(prod, &gpuar_line_words(l)[0], seq, 10 * MS);
		ck_assert_int_eq(gpuar_uring_host_reap(h, &rec, 1, 2000 * MS), 1);
		ck_assert_uint_eq(rec.value, seq);
	}
	gpuar_uring_host_stats(h, &st);
	ck_assert_uint_eq(st.fallbacks, 0);
	ck_assert_uint_eq(st.records, 3);
	ck_assert_uint_eq(st.poll_arms, 1);
	gpuar_uring_host_free(h);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

/*
 * A port with imminent readiness through the host: the wait's store is
 * seen by the claim (the user engine: through gpuar_port_reap; the module's
 * port: the EPOLLPRI poll beside the read), not the timer's park checks.
 * A module without the feature runs the port without it, as before.
 */
START_TEST(host_serves_an_imminent_port)
{
	const char *plan = "flag:park_us=1000,backstop_us=1000000"
		"+predict:margin_us=3000,min_sleep_us=20,max_sleep_us=500000,window=4";
	struct gpuar_port_options o = {
		.engine = kernel_engine() ? GPUAR_ENGINE_KERNEL : GPUAR_ENGINE_USER,
		.flags = GPUAR_PORT_IMMINENT,
		.busy_read_us = 20000,
	};
	struct gpuar_port_stats before = { .size = sizeof(before) };
	struct gpuar_port_stats after = { .size = sizeof(after) };
	struct gpuar_word_wait w = { .point = 4 };
	struct gpuar_uring_host_stats st = { 0 };
	struct gpuar_soft_producer *prod;
	struct gpuar_uring_host *h;
	struct gpuar_record rec;
	struct gpuar_line *l;
	struct gpuar_error err;
	struct gpuar_port *p;
	uint64_t served_before = 0;
	bool served = false;

	ck_assert_msg(gpuar_port_open(&p, &o, &err) == 0, "%s", err.message);
	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	ck_assert_int_eq(gpuar_uring_host_new(&h, p), 0);
	ck_assert_int_eq(gpuar_plan_from_text(plan, &w.plan, NULL), 0);
	w.line = gpuar_line_id(l);
	/*
	 * Three to train the point, then predicted waits until one is
	 * served by the imminent path: its record EXACT, from the claimer's
	 * check (a reader's check, the only kind on this path) and, on the
	 * module's port, after an EPOLLPRI completion. A loaded machine can
	 * keep the waiter off its CPU past the store, or wake it so early
	 * that its lease runs out, and the timer's check gets there first:
	 * try again, a few times; a path that never serves still fails.
	 */
	for (w.target = 1; w.target <= 3 + 8 && !served; w.target++) {
		if (w.target >= 4) {
			ck_assert_int_eq(gpuar_port_stats(p, &before), 0);
			served_before = st.imminent;
		}
		w.user_data = 40 + w.target;
		ck_assert_int_eq(gpuar_submit_word_waits(p, &w, 1, NULL), 1);
		gpuar_soft_store_after(prod, &gpuar_line_words(l)[0], w.target,
				       20 * MS);
		ck_assert_int_eq(gpuar_uring_host_reap(h, &rec, 1, 2000 * MS), 1);
		ck_assert_uint_eq(rec.user_data, 40 + w.target);
		ck_assert_int_eq(rec.status, 0);
		ck_assert_int_eq(gpuar_port_stats(p, &after), 0);
		gpuar_uring_host_stats(h, &st);
		if (w.target < 4 || rec.outcome != GPUAR_OUTCOME_EXACT)
			continue;
		served = !gpuar_port_imminent(p) ||
			 (after.busy_read_checks > before.busy_read_checks &&
			  (gpuar_port_engine(p) == GPUAR_ENGINE_USER ||
			   st.imminent > served_before));
	}
	ck_assert_msg(served, "no predicted wait was served by the imminent path "
		      "(EPOLLPRI completions %llu, reader checks %llu)",
		      (unsigned long long)st.imminent,
		      (unsigned long long)after.busy_read_checks);
	ck_assert_uint_eq(rec.outcome, GPUAR_OUTCOME_EXACT);
	if (gpuar_port_engine(p) == GPUAR_ENGINE_USER) {
		ck_assert(gpuar_port_imminent(p));
		ck_assert_uint_ge(after.busy_read_checks, before.busy_read_checks + 1);
	} else if (gpuar_port_imminent(p)) {
		ck_assert_uint_ge(st.imminent, served_before + 1);
		ck_assert_uint_ge(after.claims, before.claims + 1);
		ck_assert_uint_ge(after.busy_read_checks, before.busy_read_checks + 1);
	} else {
		ck_assert_uint_eq(err.code, GPUAR_W_FEATURE_FALLBACK);
		ck_assert_uint_eq(st.imminent, 0);
	}
	ck_assert_uint_eq(st.fallbacks, 0);
	gpuar_uring_host_free(h);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

/*
 * The module's port on 6.7+: one multishot read armed once delivers
 * records of waits completing one after another, in order, and a burst of
 * immediate completions, without a fallback.
 */
START_TEST(kernel_port_uses_one_multishot_read)
{
	struct gpuar_uring_host_stats st;
	struct gpuar_soft_producer *prod;
	struct gpuar_uring_host *h;
	struct gpuar_port *p = test_port();
	struct gpuar_word_wait w[8];
	struct gpuar_record rec[8];
	struct gpuar_line *l;
	int i, got;

	ck_assert_int_eq(gpuar_port_engine(p), GPUAR_ENGINE_KERNEL);
	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	ck_assert_int_eq(gpuar_uring_host_new(&h, p), 0);
	memset(w, 0, sizeof(w));
	for (i = 0; i < 8; i++) {
		w[i].target = 1;
		w[i].line = gpuar_line_id(l);
		ck_assert_int_eq(gpuar_plan_from_text("poll", &w[i].plan, NULL), 0);
	}
	/* Stores 10 ms apart: three records, one at a time. */
	for (i = 0; i < 3; i++) {
		w[i].user_data = 10 + (uint64_t)i;
		w[i].slot = (uint32_t)i;
		gpuar_soft_store_after(prod, &gpuar_line_words(l)[i], 1,
				       (uint64_t)(10 + 10 * i) * MS);
	}
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 3, NULL), 3);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(gpuar_uring_host_reap(h, &rec[i], 1, 2000 * MS), 1);
		ck_assert_uint_eq(rec[i].user_data, 10 + (uint64_t)i);
	}
	/* Already reached: five records queued at once, reaped in order. */
	for (i = 0; i < 5; i++) {
		w[i].user_data = 20 + (uint64_t)i;
		w[i].slot = 3 + (uint32_t)i;
		gpuar_line_words(l)[3 + i] = 1;
	}
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 5, NULL), 5);
	for (got = 0; got < 5;) {
		int n = gpuar_uring_host_reap(h, rec + got, 8 - (uint32_t)got, 2000 * MS);

		ck_assert_int_gt(n, 0);
		got += n;
	}
	ck_assert_int_eq(got, 5);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(rec[i].user_data, 20 + (uint64_t)i);
	gpuar_uring_host_stats(h, &st);
	ck_assert_uint_ge(st.multishot, 1);
	ck_assert_uint_eq(st.fallbacks, 0);
	ck_assert_uint_eq(st.records, 8);
	gpuar_uring_host_free(h);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

/*
 * An imminent fake port on an AF_UNIX socket (sv[0]), its host with both
 * polls armed on it and the multishot read (6.7+) bound to the pipe q, so
 * that a read of the pipe r is a one-shot read while EPOLLPRI can come.
 */
struct pri_rig {
	int sv[2], q[2], r[2];
	struct gpuar_port *p;
	struct gpuar_uring_host *h;
};

static void pri_rig_open(struct pri_rig *g)
{
	struct gpuar_record in;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, g->sv), 0);
	ck_assert_int_eq(pipe(g->q), 0);
	ck_assert_int_eq(pipe(g->r), 0);
	g->p = fake_port(g->sv[0], true);
	ck_assert_int_eq(gpuar_uring_host_new(&g->h, g->p), 0);
	ck_assert_int_eq(gpuar_uring_host_read_fd(g->h, g->q[0], &in, 1, 0), -ETIME);
	ck_assert_int_eq(gpuar_uring_host_reap(g->h, &in, 1, 0), -ETIME);
	/* Pending out-of-band data: the port polls EPOLLPRI from now on. */
	ck_assert_int_eq(send(g->sv[1], "!", 1, MSG_OOB), 1);
}

static void pri_rig_close(struct pri_rig *g)
{
	gpuar_uring_host_free(g->h);
	gpuar_port_close(g->p);
	close(g->sv[1]);
	close(g->q[0]);
	close(g->q[1]);
	close(g->r[0]);
	close(g->r[1]);
}

/*
 * L3-5: an EPOLLPRI completion whose serve fails (the claim's error) comes
 * while a one-shot read of another fd waits, and again while that read is
 * being cancelled (each failing claim raises EPOLLPRI anew). The call
 * returns the serve's error, and nothing reads into the caller's buffer
 * afterwards: a record written to the fd after the return stays there, the
 * buffer keeps its canary, and the next read gets the next record.
 */
START_TEST(failing_serve_leaves_no_read_behind)
{
	struct gpuar_record *buf, in;
	struct pri_rig g;
	size_t i;

	pri_rig_open(&g);
	fake.claim_ret = -EIO;
	fake.oob_fd = g.sv[1];
	fake.oob_left = 3;
	raise_pri(g.sv[1]);
	buf = malloc(4 * sizeof(*buf));
	ck_assert_ptr_nonnull(buf);
	memset(buf, 0xa5, 4 * sizeof(*buf));
	ck_assert_int_eq(gpuar_uring_host_read_fd(g.h, g.r[0], buf, 4, 1000 * MS), -EIO);
	/* The first failing claim raised EPOLLPRI again: served in the cancel. */
	ck_assert_int_ge(fake.claims, 2);
	put_record(g.r[1], 5, GPUAR_OUTCOME_EXACT);
	for (i = 0; i < 4 * sizeof(*buf); i++)
		ck_assert_uint_eq(((unsigned char *)buf)[i], 0xa5);
	free(buf);
	ck_assert_int_eq(fcntl(g.r[0], F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(read(g.r[0], &in, sizeof(in)), (int)sizeof(in));
	ck_assert_uint_eq(in.user_data, 5);
	fake.claim_ret = 0;
	put_record(g.r[1], 6, GPUAR_OUTCOME_EXACT);
	ck_assert_int_eq(gpuar_uring_host_read_fd(g.h, g.r[0], &in, 1, 1000 * MS), 1);
	ck_assert_uint_eq(in.user_data, 6);
	pri_rig_close(&g);
}
END_TEST

/*
 * Records EPOLLPRI brings while a one-shot read of another fd waits are
 * the port's: its reader gets them, not that fd's.
 */
START_TEST(imminent_records_stay_for_the_ports_reader)
{
	struct gpuar_record in;
	struct pri_rig g;

	pri_rig_open(&g);
	fake.queued[0] = (struct gpuar_record){ .user_data = 70 };
	fake.nqueued = 1;
	raise_pri(g.sv[1]);
	ck_assert_int_eq(gpuar_uring_host_read_fd(g.h, g.r[0], &in, 1, 0), -ETIME);
	put_record(g.r[1], 71, GPUAR_OUTCOME_EXACT);
	ck_assert_int_eq(gpuar_uring_host_read_fd(g.h, g.r[0], &in, 1, 1000 * MS), 1);
	ck_assert_uint_eq(in.user_data, 71);
	ck_assert_int_eq(gpuar_uring_host_reap(g.h, &in, 1, 0), 1);
	ck_assert_uint_eq(in.user_data, 70);
	pri_rig_close(&g);
}
END_TEST

/* The host hands out @user_data's record: a cancel finds it no more. */
static void hand_out(struct gpuar_uring_host *h, struct gpuar_port *p,
		     uint64_t user_data)
{
	struct gpuar_record in;

	ck_assert_int_eq(gpuar_uring_host_reap(h, &in, 1, 2000 * MS), 1);
	ck_assert_uint_eq(in.user_data, user_data);
	ck_assert_int_eq(gpuar_cancel(p, user_data), -ENOENT);
}

static void *cancel_in_thread(void *arg)
{
	return (void *)(intptr_t)gpuar_cancel(arg, 3);
}

/*
 * L3-6 (a): records the multishot read moved out of the module's queue,
 * into the host's stash or still in its completion queue, answer a cancel
 * with -EALREADY (the record is queued, the cancel lost the race), from any
 * thread; a cancellation's record does not, nor one already handed out.
 */
START_TEST(cancel_sees_the_records_the_host_holds)
{
	struct gpuar_uring_host *h;
	struct gpuar_record in;
	struct gpuar_port *p;
	pthread_t th;
	void *ret;
	int a[2];

	ck_assert_int_eq(pipe(a), 0);
	p = fake_port(a[0], false);
	ck_assert_int_eq(gpuar_uring_host_new(&h, p), 0);
	put_record(a[1], 1, GPUAR_OUTCOME_EXACT);
	put_record(a[1], 2, GPUAR_OUTCOME_EXACT);
	ck_assert_int_eq(gpuar_uring_host_reap(h, &in, 1, 1000 * MS), 1);
	ck_assert_uint_eq(in.user_data, 1);
	ck_assert_int_eq(gpuar_cancel(p, 2), -EALREADY);
	/* Read by the armed multishot read at the write, not yet handled. */
	put_record(a[1], 3, GPUAR_OUTCOME_EXACT);
	ck_assert_int_eq(gpuar_cancel(p, 3), -EALREADY);
	ck_assert_int_eq(pthread_create(&th, NULL, cancel_in_thread, p), 0);
	ck_assert_int_eq(pthread_join(th, &ret), 0);
	ck_assert_int_eq((int)(intptr_t)ret, -EALREADY);
	put_record(a[1], 4, GPUAR_OUTCOME_CANCELLED);
	ck_assert_int_eq(gpuar_cancel(p, 4), -ENOENT);
	ck_assert_int_eq(gpuar_cancel(p, 9), -ENOENT);
	hand_out(h, p, 2);
	gpuar_uring_host_free(h);
	gpuar_port_close(p);
	close(a[1]);
}
END_TEST

/*
 * The same on the suite's engine: a completed wait whose record the host
 * has not handed out yet is not cancelled (-EALREADY), wherever the host
 * keeps it (the module's queue, or the multishot read's buffers, 6.7+).
 */
START_TEST(cancel_of_a_record_not_handed_out_is_ealready)
{
	struct gpuar_word_wait w[2];
	struct gpuar_uring_host *h;
	struct gpuar_port *p = test_port();
	struct gpuar_record rec;
	struct gpuar_line *l;
	int i;

	ck_assert_int_eq(gpuar_line_alloc(p, &l), 0);
	ck_assert_int_eq(gpuar_uring_host_new(&h, p), 0);
	memset(w, 0, sizeof(w));
	for (i = 0; i < 2; i++) {
		w[i].user_data = 31 + (uint64_t)i;
		w[i].target = 1;
		w[i].slot = (uint32_t)i;
		w[i].line = gpuar_line_id(l);
		ck_assert_int_eq(gpuar_plan_from_text("poll", &w[i].plan, NULL), 0);
		gpuar_line_words(l)[i] = 1;
	}
	ck_assert_int_eq(gpuar_submit_word_waits(p, w, 2, NULL), 2);
	ck_assert_int_eq(gpuar_uring_host_reap(h, &rec, 1, 2000 * MS), 1);
	ck_assert_uint_eq(rec.user_data, 31);
	ck_assert_int_eq(gpuar_cancel(p, 32), -EALREADY);
	hand_out(h, p, 32);
	gpuar_uring_host_free(h);
	gpuar_port_close(p);
}
END_TEST

/*
 * L3-6 (b): the port closed before its host. The close ends the host's
 * operations on it (nothing holds the port's file: a pipe's read end,
 * here, so a write then fails with EPIPE), the host's reaps answer -EBADF,
 * other fds still read, and the host frees cleanly.
 */
START_TEST(port_closed_before_its_host_ends_the_hosts_ops)
{
	struct gpuar_uring_host *h;
	struct gpuar_record in;
	struct gpuar_port *p;
	int a[2], b[2];

	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(pipe(a), 0);
	ck_assert_int_eq(pipe(b), 0);
	p = fake_port(a[0], true);
	ck_assert_int_eq(gpuar_uring_host_new(&h, p), 0);
	/* EPOLLPRI poll, and the multishot read or the POLLIN poll, on a[0]. */
	ck_assert_int_eq(gpuar_uring_host_reap(h, &in, 1, 0), -ETIME);
	gpuar_port_close(p);
	ck_assert_int_eq(write(a[1], &in, sizeof(in)), -1);
	ck_assert_int_eq(errno, EPIPE);
	ck_assert_int_eq(gpuar_uring_host_reap(h, &in, 1, 0), -EBADF);
	put_record(b[1], 8, GPUAR_OUTCOME_EXACT);
	ck_assert_int_eq(gpuar_uring_host_read_fd(h, b[0], &in, 1, 1000 * MS), 1);
	ck_assert_uint_eq(in.user_data, 8);
	gpuar_uring_host_free(h);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}
END_TEST

/* The same on the suite's engine: a clear error, not a use of a freed port. */
START_TEST(port_closed_before_its_host_is_ebadf)
{
	struct gpuar_uring_host *h;
	struct gpuar_port *p = test_port();
	struct gpuar_record rec;

	ck_assert_int_eq(gpuar_uring_host_new(&h, p), 0);
	ck_assert_int_eq(gpuar_uring_host_reap(h, &rec, 1, 0), -ETIME);
	gpuar_port_close(p);
	ck_assert_int_eq(gpuar_uring_host_reap(h, &rec, 1, 0), -EBADF);
	gpuar_uring_host_free(h);
}
END_TEST

/*
 * L3-6 (c): a forked child that keeps its copy of the host's ring (and has
 * dropped its copy of the port, as gpuar_port_close() does in a child)
 * keeps none of the host's polls on the port once the parent freed the
 * host: the parent's close releases the port's file. The child cannot make
 * a host of its parent's port.
 */
START_TEST(a_child_keeps_no_poll_on_the_port)
{
	struct gpuar_uring_host *h, *h2;
	struct gpuar_record in;
	struct gpuar_port *p;
	int a[2], ready[2], gate[2], status;
	char c;
	pid_t pid;

	signal(SIGPIPE, SIG_IGN);
	ck_assert_int_eq(pipe(a), 0);
	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(gate), 0);
	p = fake_port(a[0], true);
	ck_assert_int_eq(gpuar_uring_host_new(&h, p), 0);
	ck_assert_int_eq(gpuar_uring_host_reap(h, &in, 1, 0), -ETIME);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int ok = gpuar_uring_host_new(&h2, p) == -EPERM;

		gpuar_port_close(p);
		close(a[1]);
		close(gate[1]);
		ok &= write(ready[1], "r", 1) == 1;
		ok &= read(gate[0], &c, 1) == 0;	/* until the parent is done */
		_exit(ok ? 0 : 1);
	}
	close(gate[0]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	gpuar_uring_host_free(h);
	gpuar_port_close(p);
	ck_assert_int_eq(write(a[1], &in, sizeof(in)), -1);
	ck_assert_int_eq(errno, EPIPE);
	close(gate[1]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(a[1]);
	close(ready[0]);
	close(ready[1]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_uring");
	TCase *t = tcase_create("uring");
	struct unit_skips skips = { 0 };
	const char *no_uring = gpuar_caps_probe()->io_uring ? NULL :
		"io_uring not usable on this machine";
	const char *no_ms = no_uring;
	const char *no_oob = no_uring ? no_uring : have_unix_oob() ? NULL :
		"no out-of-band data on AF_UNIX here (Linux 5.15, CONFIG_AF_UNIX_OOB)";
	const char *no_ms_here = no_uring ? no_uring : kernel_has_multishot_read() ? NULL :
		"this kernel has no IORING_OP_READ_MULTISHOT (6.7+)";

	if (!no_ms && !kernel_engine())
		no_ms = "the multishot read is the kernel engine's (GPUAR_TEST_ENGINE=kernel)";
	else if (!no_ms && !kernel_has_multishot_read())
		no_ms = "this kernel has no IORING_OP_READ_MULTISHOT (6.7+): one read per call";
	tcase_set_timeout(t, 30);
	unit_add_or_skip(t, &skips, read_fd_returns_whole_records, no_uring);
	unit_add_or_skip(t, &skips, read_fd_times_out_without_losing_later_records, no_uring);
	unit_add_or_skip(t, &skips, records_beyond_max_wait_for_the_next_call, no_uring);
	unit_add_or_skip(t, &skips, second_fd_reads_one_shot, no_uring);
	unit_add_or_skip(t, &skips, stashed_records_go_to_their_own_fd, no_uring);
	unit_add_or_skip(t, &skips, free_ends_the_multishot_read_a_child_keeps_alive,
			 no_uring);
	unit_add_or_skip(t, &skips, slow_reader_gets_every_record_in_order, no_uring);
	unit_add_or_skip(t, &skips, host_reaps_the_ports_records, no_uring);
	unit_add_or_skip(t, &skips, user_port_poll_stays_armed_across_reaps, no_uring);
	unit_add_or_skip(t, &skips, host_serves_an_imminent_port, no_uring);
	unit_add_or_skip(t, &skips, kernel_port_uses_one_multishot_read, no_ms);
	unit_add_or_skip(t, &skips, failing_serve_leaves_no_read_behind, no_oob);
	unit_add_or_skip(t, &skips, imminent_records_stay_for_the_ports_reader, no_oob);
	unit_add_or_skip(t, &skips, cancel_sees_the_records_the_host_holds, no_ms_here);
	unit_add_or_skip(t, &skips, cancel_of_a_record_not_handed_out_is_ealready,
			 no_uring);
	unit_add_or_skip(t, &skips, port_closed_before_its_host_ends_the_hosts_ops,
			 no_uring);
	unit_add_or_skip(t, &skips, port_closed_before_its_host_is_ebadf, no_uring);
	unit_add_or_skip(t, &skips, a_child_keeps_no_poll_on_the_port, no_uring);
	suite_add_tcase(s, t);
	return unit_run_tap(s, &skips);
}
