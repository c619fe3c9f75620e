// SPDX-License-Identifier: MIT
/*
 * libgpuar's io_uring host: records read with IORING_OP_READ from an fd
 * that yields whole records (a pipe here, the module's port in the VMs),
 * and the port's records through the host. Skipped, with the reason, where
 * io_uring does not work.
 */
#include <gpuar/gpuar.h>

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MS 1000000ULL

static bool have_uring(void)
{
	if (gpuar_caps_probe()->io_uring)
		return true;
	fprintf(stderr, "skip: io_uring not usable on this host\n");
	return false;
}

static struct gpuar_port *user_port(void)
{
	struct gpuar_port_options o = { .engine = GPUAR_ENGINE_USER };
	struct gpuar_port *p;

	ck_assert_int_eq(gpuar_port_open(&p, &o, NULL), 0);
	return p;
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

START_TEST(host_reaps_a_user_port)
{
	struct gpuar_uring_host_stats st;
	struct gpuar_soft_producer *prod;
	struct gpuar_uring_host *h;
	struct gpuar_port *p = user_port();
	struct gpuar_word_wait w = { .user_data = 8, .target = 1 };
	struct gpuar_record rec;
	struct gpuar_line *l;

	if (!have_uring()) {
		gpuar_port_close(p);
		return;
	}
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
	ck_assert_uint_ge(st.polls, 1);
	ck_assert_uint_eq(st.records, 1);
	gpuar_uring_host_free(h);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib_uring");
	TCase *t = tcase_create("uring");
	SRunner *sr;
	int failed;

	tcase_set_timeout(t, 30);
	tcase_add_test(t, read_fd_returns_whole_records);
	tcase_add_test(t, read_fd_times_out_without_losing_later_records);
	tcase_add_test(t, records_beyond_max_wait_for_the_next_call);
	tcase_add_test(t, second_fd_reads_one_shot);
	tcase_add_test(t, slow_reader_gets_every_record_in_order);
	tcase_add_test(t, host_reaps_a_user_port);
	suite_add_tcase(s, t);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
