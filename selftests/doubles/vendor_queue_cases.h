/* SPDX-License-Identifier: MIT */
/*
 * The queue (gpuar_cuda_queue_*, gpuar_hip_queue_*) against the double:
 * one call per await, the slot, the user data and the plan chosen by the
 * queue, and a close that takes what is pending and frees its lines.
 * Included by vendor_cases.h (struct vt, its helpers).
 */
#ifndef GPUAR_VENDOR_QUEUE_CASES_H
#define GPUAR_VENDOR_QUEUE_CASES_H

#include <poll.h>

static void *vt_queue_open(void)
{
	struct gpuar_error d;
	void *q = NULL;

	vt_point_at_double(V->double_path);
	ck_assert_msg(V->queue_open(&q, 0, &d) == 0, "%s", d.message);
	ck_assert_ptr_nonnull(q);
	return q;
}

static struct gpuar_vendor_completion vt_queue_reap_one(void *q)
{
	struct gpuar_vendor_completion c;
	struct gpuar_error d;
	int n = V->queue_reap(q, &c, 1, REAP_TIMEOUT_NS, &d);

	ck_assert_msg(n == 1, "queue reap: %d %s", n, d.message);
	return c;
}

START_TEST(queue_awaits_a_stream_in_one_call)
{
	void *q = vt_queue_open();
	void *s = V->stream_new(0);
	struct gpuar_vendor_completion c;
	struct gpuar_error d;
	uint64_t id = 0;

	V->work(s, 20 * MS);
	ck_assert_msg(V->queue_await(q, s, &id, &d) == 0, "%s", d.message);
	ck_assert_uint_eq(id, 1);
	vt_assert_pages(1);
	c = vt_queue_reap_one(q);
	ck_assert_uint_eq(c.record.user_data, id);
	ck_assert_int_eq(c.record.status, 0);
	ck_assert_int_eq(c.vendor_status, 0);
	ck_assert_uint_eq(c.record.value, 1);
	/* the default plan predicts: the wait trained the stream's point */
	ck_assert_uint_ne(c.record.point, 0);
	ck_assert_int_eq(V->queue_close(q, 1000 * MS, &d), 0);
	vt_assert_pages(0);
	V->stream_free(s);
}
END_TEST

START_TEST(queue_gives_each_stream_its_slot)
{
	enum { STREAMS = GPUAR_LINE_SLOTS + 1 };
	void *q = vt_queue_open();
	void *s[STREAMS];
	bool seen[2 * STREAMS + 1] = { false };
	struct gpuar_error d;
	uint64_t id;

	/*
	 * Nine streams, each with stores pending: a slot belongs to one
	 * stream until they land, so the ninth needs a second line; a
	 * second await on a stream takes that stream's slot again.
	 */
	for (int i = 0; i < STREAMS; i++) {
		s[i] = V->stream_new(0);
		V->work(s[i], 2000 * MS);
		ck_assert_msg(V->queue_await(q, s[i], &id, &d) == 0, "%s",
			      d.message);
		ck_assert_uint_eq(id, (uint64_t)i + 1);
	}
	vt_assert_pages(2);
	for (int i = 0; i < STREAMS; i++) {
		ck_assert_msg(V->queue_await(q, s[i], &id, &d) == 0, "%s",
			      d.message);
		ck_assert_uint_eq(id, (uint64_t)(STREAMS + i) + 1);
	}
	vt_assert_pages(2);
	for (int n = 0; n < 2 * STREAMS; n++) {
		struct gpuar_vendor_completion c = vt_queue_reap_one(q);

		ck_assert_int_eq(c.record.status, 0);
		ck_assert_uint_ge(c.record.user_data, 1);
		ck_assert_uint_le(c.record.user_data, 2 * STREAMS);
		ck_assert(!seen[c.record.user_data]);
		seen[c.record.user_data] = true;
	}
	/* all landed: a new stream reuses a slot, no third line */
	void *late = V->stream_new(0);

	ck_assert_msg(V->queue_await(q, late, &id, &d) == 0, "%s", d.message);
	vt_assert_pages(2);
	vt_queue_reap_one(q);
	ck_assert_int_eq(V->queue_close(q, 1000 * MS, &d), 0);
	vt_assert_pages(0);
	V->stream_free(late);
	for (int i = 0; i < STREAMS; i++)
		V->stream_free(s[i]);
}
END_TEST

START_TEST(queue_refuses_a_stream_before_taking_a_slot)
{
	void *q = vt_queue_open();
	struct gpuar_error d;
	uint64_t id = 77;

	/* a bare 0 is refused by the backend, before any line is made */
	ck_assert_int_lt(V->queue_await(q, NULL, &id, &d), 0);
	ck_assert_uint_eq(d.code, GPUAR_E_BACKEND);
	ck_assert_uint_eq(id, 77);
	vt_assert_pages(0);
	ck_assert_int_eq(V->queue_close(q, 0, &d), 0);
}
END_TEST

START_TEST(queue_fd_turns_readable_for_the_record)
{
	void *q = vt_queue_open();
	void *s = V->stream_new(0);
	struct gpuar_vendor_completion c;
	struct gpuar_error d;
	uint64_t id;
	int n = -EAGAIN;

	ck_assert_int_ge(V->queue_fd(q), 0);
	V->work(s, 5 * MS);
	ck_assert_int_eq(V->queue_await(q, s, &id, &d), 0);
	/* an event loop: poll the fd, reap without blocking when readable
	 * (the user engine's fd may wake it with nothing to reap yet) */
	for (int i = 0; i < 10000 && n == -EAGAIN; i++) {
		struct pollfd pfd = { .fd = V->queue_fd(q), .events = POLLIN };

		ck_assert_int_ge(poll(&pfd, 1, 1000), 0);
		n = V->queue_reap(q, &c, 1, 0, &d);
	}
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(c.record.user_data, id);
	ck_assert_int_eq(V->queue_close(q, 1000 * MS, &d), 0);
	V->stream_free(s);
}
END_TEST

START_TEST(queue_close_takes_what_is_pending)
{
	void *q = vt_queue_open();
	void *s = V->stream_new(0);
	struct gpuar_error d;

	V->work(s, 30 * MS);
	ck_assert_int_eq(V->queue_await(q, s, NULL, &d), 0);
	ck_assert_int_eq(V->queue_await(q, s, NULL, &d), 0);
	/* nothing reaped: close takes both records, then frees the line */
	ck_assert_msg(V->queue_close(q, 5000 * MS, &d) == 0, "%s", d.message);
	vt_assert_pages(0);
	ck_assert_uint_eq(V->unsafe_unregisters(), 0);
	V->stream_free(s);
}
END_TEST

START_TEST(queue_close_busy_keeps_the_queue)
{
	void *q = vt_queue_open();
	void *s = V->stream_new(0);
	struct gpuar_error d;
	uint64_t id;

	V->work(s, 300 * MS);
	ck_assert_int_eq(V->queue_await(q, s, &id, &d), 0);
	/* the work outlasts the deadline: nothing closed, still usable */
	ck_assert_int_eq(V->queue_close(q, 10 * MS, &d), -EBUSY);
	ck_assert_uint_eq(d.code, GPUAR_E_BACKEND);
	vt_assert_pages(1);
	ck_assert_uint_eq(vt_queue_reap_one(q).record.user_data, id);
	ck_assert_int_eq(V->queue_close(q, 1000 * MS, &d), 0);
	vt_assert_pages(0);
	V->stream_free(s);
}
END_TEST

/*
 * On the CUDA suite only: the queue is the vendor layer's
 * (vendor_queue.c), the HIP calls forward to it as the CUDA ones do, and
 * the HIP suite sits at the number of forked tests past which
 * LeakSanitizer's tracer crashes on a child's dynamic TLS under
 * make check-sanitize (its later tests then fail at exit, whatever they
 * are; seen with plain empty tests too).
 */
static void vt_add_queue_cases(Suite *suite)
{
	TCase *tc;

	if (strcmp(V->name, "cuda"))
		return;
	tc = tcase_create("queue");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, queue_awaits_a_stream_in_one_call);
	tcase_add_test(tc, queue_gives_each_stream_its_slot);
	tcase_add_test(tc, queue_refuses_a_stream_before_taking_a_slot);
	tcase_add_test(tc, queue_fd_turns_readable_for_the_record);
	tcase_add_test(tc, queue_close_takes_what_is_pending);
	tcase_add_test(tc, queue_close_busy_keeps_the_queue);
	suite_add_tcase(suite, tc);
}

#endif /* GPUAR_VENDOR_QUEUE_CASES_H */
