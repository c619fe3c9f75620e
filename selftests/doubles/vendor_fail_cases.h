/* SPDX-License-Identifier: MIT */
/*
 * Test cases shared by the CUDA and HIP backend tests: how the backends
 * behave when the device, the driver or the caller fails them, as the
 * doubles fail like the vendors' libraries do (each failure the doubles
 * model is cited to the vendor's documentation where it is modelled).
 * Included after vendor_cases.h, whose fixture and helpers they use.
 *
 * Ordering is by gate words (a stream waits on a word the test stores),
 * never by sleeps; what "at once" means here is "long before the
 * timeout the old behaviour waited out", asserted by the outcome (an
 * error, not -ETIMEDOUT or a hang that Check's timeout ends).
 */
#ifndef GPUAR_VENDOR_FAIL_CASES_H
#define GPUAR_VENDOR_FAIL_CASES_H

#include <sys/mman.h>

#include "vendor_cases.h"

/* Whether [@p, @p + one page) is mapped in this process. */
static bool vt_page_mapped(void *p)
{
	return msync(p, (size_t)sysconf(_SC_PAGESIZE), MS_ASYNC) == 0;
}

/*
 * A line line_free keeps (its store still pending) is detached from its
 * port: closing the port neither unmaps the page nor lets the address be
 * reused, so the late store lands in the kept page, not in whatever the
 * process maps there next, and the next line gets a page of its own.
 */
START_TEST(kept_line_outlives_its_port)
{
	void *s = V->stream_new(0), *reuse;
	struct gpuar_vendor_line *kept = vline, *next;
	uint64_t *w = gpuar_vendor_line_words(kept);
	uint64_t target;

	/* the store waits behind a gate nobody opens before the close */
	ck_assert_int_eq(V->wait_word(kept, 6, s, 1, &vdiag), 0);
	ck_assert_int_eq(V->record(kept, 0, s, &target, &vdiag), 0);
	ck_assert_int_eq(V->line_free(kept, 20 * MS, &vdiag), -ETIMEDOUT);
	vline = NULL;
	gpuar_port_close(vport);
	vport = NULL;
	ck_assert_msg(vt_page_mapped(w), "the port unmapped a kept line");
	reuse = mmap(w, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ck_assert_ptr_ne(reuse, w);	/* EEXIST: the range is still taken */
	if (reuse != MAP_FAILED)	/* a kernel before 4.17 placed it elsewhere */
		munmap(reuse, (size_t)sysconf(_SC_PAGESIZE));
	__atomic_store_n(&w[6], 1, __ATOMIC_RELEASE);	/* the gate opens */
	vt_wait_reached(kept, 0, target);	/* the late store lands there */
	/* a new port's line is registered afresh, in a page of its own */
	vt_open_port(&vport);
	ck_assert_msg(V->line_alloc(vb, vport, &next, &vdiag) == 0, "%s",
		      vdiag.message);
	ck_assert_ptr_ne(gpuar_vendor_line_words(next), w);
	vline = next;
	V->stream_free(s);
	ck_assert_uint_eq(V->unsafe_unregisters(), 0);
}
END_TEST

/*
 * Freeing the fixture's line ends at once with -EIO, whatever the
 * timeout: the line is kept (the message says so, and @why), and nothing
 * was unregistered under the device.
 */
static void vt_free_keeps_line(const char *why)
{
	ck_assert_int_eq(V->line_free(vline, UINT64_MAX, &vdiag), -EIO);
	ck_assert_msg(strstr(vdiag.message, "leaked") &&
		      strstr(vdiag.message, why), "%s", vdiag.message);
	vline = NULL;
	ck_assert_uint_eq(V->unsafe_unregisters(), 0);
}

/* Open the gate word (slot 6 of the fixture's line) streams wait on. */
static void vt_open_gate(uint64_t value)
{
	__atomic_store_n(&gpuar_vendor_line_words(vline)[6], value,
			 __ATOMIC_RELEASE);
}

/*
 * A fault with a status after which the context (device) never stores
 * again: freeing a line whose store was pending ends at once with -EIO
 * (the line kept), even without a deadline, not when the timeout runs
 * out, nor never. One process per code (a loop test).
 */
START_TEST(sticky_fault_ends_line_free_at_once)
{
	unsigned int code = V->sticky_codes[_i];
	void *s = V->stream_new(0);

	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	V->fault_with(s, code);
	ck_assert_int_eq(V->record(vline, 0, s, NULL, &vdiag), 0);
	vt_open_gate(1);
	vt_free_keeps_line("failed");
}
END_TEST

/* The same fault under an await: an error record naming the code, and
 * the context poisoned by it from then on. */
START_TEST(sticky_fault_ends_await_and_poisons)
{
	unsigned int code = V->sticky_codes[_i];
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	struct gpuar_vendor_completion c;
	void *s = V->stream_new(0);

	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	V->fault_with(s, code);
	ck_assert_int_eq(V->await(vline, 0, s, &plan, 4, 91, NULL, &vdiag), 0);
	vt_open_gate(1);
	c = vt_reap_one(vb);
	ck_assert_int_eq(c.record.status, -EIO);
	ck_assert_int_eq(c.vendor_status, (int32_t)code);
	ck_assert_msg(strstr(vdiag.message, "poisoned"), "%u: %s", code,
		      vdiag.message);
	vt_free_keeps_line("failed");
}
END_TEST

struct vt_reset_arg {
	int device;
};

static void *vt_reset_in_thread(void *p)
{
	V->reset_device(((struct vt_reset_arg *)p)->device);
	return NULL;
}

/*
 * Another thread resets the device (its primary context) under live
 * awaits: the reset destroys their streams and their pending stores, so
 * each await ends with -EIO at its next look (a created stream, and the
 * per-thread stream whose status only its domain's stream answers), and
 * freeing the line ends with -EIO at once: the line is kept, since only
 * the driver knows what the device still does.
 */
START_TEST(device_reset_ends_awaits_and_line_free)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	struct vt_reset_arg arg = { .device = 0 };
	void *s = V->stream_new(0), *pt = V->per_thread_stream;
	pthread_t t;

	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	ck_assert_int_eq(V->wait_word(vline, 6, pt, 1, &vdiag), 0);
	ck_assert_int_eq(V->await(vline, 0, s, &plan, 4, 92, NULL, &vdiag), 0);
	ck_assert_int_eq(V->await(vline, 1, pt, &plan, 4, 93, NULL, &vdiag), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, vt_reset_in_thread, &arg), 0);
	pthread_join(t, NULL);
	for (int i = 0; i < 2; i++) {
		struct gpuar_vendor_completion c = vt_reap_one(vb);

		ck_assert_uint_ge(c.record.user_data, 92);
		ck_assert_int_eq(c.record.status, -EIO);
		ck_assert_uint_eq(vdiag.code, GPUAR_E_BACKEND);
	}
	vt_free_keeps_line("reset");
}
END_TEST

/*
 * A store that never reaches the host although its stream went idle
 * (the double drops it): the await ends with -ENODATA at its second look
 * instead of being resubmitted for ever, under a backstop (flag) and
 * under the reaper's unguarded checks (poll); the slot is then no
 * stream's, so the line frees.
 */
START_TEST(store_lost_on_an_idle_stream_ends_the_await)
{
	const char *plans[] = { FLAG_PLAN, "poll" };
	void *s = V->stream_new(0);

	for (uint32_t i = 0; i < 2; i++) {
		struct gpuar_plan plan = vt_plan(plans[i]);
		struct gpuar_vendor_completion c;

		V->drop_writes(s, 1);
		ck_assert_int_eq(V->await(vline, i, s, &plan, 4, 94 + i, NULL,
					  &vdiag), 0);
		c = vt_reap_one(vb);
		ck_assert_uint_eq(c.record.user_data, 94 + i);
		ck_assert_msg(c.record.status == -ENODATA, "%s: status %d",
			      plans[i], c.record.status);
		ck_assert_int_eq(c.vendor_status, 0);
		ck_assert_msg(strstr(vdiag.message, "store lost"), "%s",
			      vdiag.message);
	}
	ck_assert_msg(V->line_free(vline, 1000 * MS, &vdiag) == 0, "%s",
		      vdiag.message);
	vline = NULL;
	V->stream_free(s);
	ck_assert_uint_eq(V->unsafe_unregisters(), 0);
}
END_TEST

/*
 * The default-stream handles (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD,
 * hipStreamPerThread) name a stream of the calling thread's current
 * context or device: a caller working on device 1 that records through a
 * device-0 handle is refused (-EXDEV), not given device 0's idle stream,
 * whose store would complete the wait before the caller's work ran. With
 * device 0 current, the same handles record behind the caller's work.
 */
START_TEST(default_stream_of_the_callers_other_device_refused)
{
	void *pseudo[] = { V->default_stream, V->per_thread_stream };
	void *s1 = V->stream_new(1);
	uint64_t target = 0;

	if (!s1) {
		printf("default_stream_of_the_callers_other_device_refused: one "
		       "device only, not checked\n");
		return;
	}
	V->stream_free(s1);
	V->caller_on(1);
	for (uint32_t i = 0; i < 2; i++) {
		ck_assert_int_eq(V->record(vline, i, pseudo[i], NULL, &vdiag),
				 -EXDEV);
		ck_assert_uint_eq(vdiag.code, GPUAR_E_BACKEND);
		ck_assert_uint_eq(gpuar_vendor_line_sequence(vline, i), 0);
	}
	V->caller_off(1);
	V->caller_on(0);
	for (uint32_t i = 0; i < 2; i++) {
		V->work(pseudo[i], 10 * MS);
		ck_assert_msg(V->record(vline, i, pseudo[i], &target, &vdiag) == 0,
			      "%s", vdiag.message);
		vt_wait_reached(vline, i, target);
	}
	V->caller_off(0);
}
END_TEST

static void vt_add_fail_cases(Suite *suite)
{
	TCase *tc = vt_fixture_tcase("failures");

	tcase_add_test(tc, kept_line_outlives_its_port);
	tcase_add_test(tc, default_stream_of_the_callers_other_device_refused);
	if (!vt_real_driver) {	/* the double's faults, resets, lost stores */
		tcase_add_loop_test(tc, sticky_fault_ends_line_free_at_once, 0,
				    V->nsticky);
		tcase_add_loop_test(tc, sticky_fault_ends_await_and_poisons, 0,
				    V->nsticky);
		tcase_add_test(tc, device_reset_ends_awaits_and_line_free);
		tcase_add_test(tc, store_lost_on_an_idle_stream_ends_the_await);
	}
	suite_add_tcase(suite, tc);
}

#endif /* GPUAR_VENDOR_FAIL_CASES_H */
