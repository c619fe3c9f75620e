// SPDX-License-Identifier: MIT
/*
 * Every public function, given NULL for its object (or for an out
 * pointer it must write, or a text it must read), refuses with -EINVAL or
 * answers its documented neutral value (a NULL pointer, 0, false, the
 * value a header names), and never crashes: one case per function, each
 * in its own process (Check's fork mode), so a crash fails that case
 * alone. The 1.0 names the library keeps are called too, and behave as
 * their new names do. gpuar(7) states the rule.
 */
#define GPUAR_DISABLE_DEPRECATION_WARNINGS	/* the 1.0 names, on purpose */
#include <gpuar/gpuar.h>
#include <gpuar/cuda.h>
#include <gpuar/hip.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#define EINV(call) ck_assert_int_eq((call), -EINVAL)

/* A diag the call must fill with the refusal's code. */
#define EINV_DIAG(call)                                                 \
	do {                                                            \
		struct gpuar_error d_ = { .code = 12345 };              \
		struct gpuar_error *diag = &d_;                         \
		ck_assert_int_eq((call), -EINVAL);                      \
		ck_assert_uint_ne(d_.code, GPUAR_OK);                   \
		ck_assert_int_eq(d_.sys_errno, EINVAL);                 \
	} while (0)

static struct gpuar_record rec;
static struct gpuar_vendor_completion vc;
static uint64_t u64;

/* ------------------------------------------------------- ports, lines */

static void port_calls(void)
{
	struct gpuar_word_wait ww = { 0 };
	struct gpuar_fence_wait fw = { .fd = -1 };
	struct gpuar_port_stats ps = { 0 };
	struct gpuar_point_stats pts = { 0 };
	struct gpuar_claim_entry ce;
	struct gpuar_line *line = NULL;

	EINV_DIAG(gpuar_port_open(NULL, NULL, diag));
	gpuar_port_close(NULL);
	ck_assert_int_eq(gpuar_port_engine(NULL), GPUAR_ENGINE_AUTO);
	EINV(gpuar_port_fd(NULL));
	EINV(gpuar_port_process(NULL));
	ck_assert_uint_eq(gpuar_port_next_check_ns(NULL), UINT64_MAX);
	ck_assert(!gpuar_port_imminent(NULL));
	EINV(gpuar_line_alloc(NULL, &line));
	EINV(gpuar_line_free(NULL, NULL));
	ck_assert_ptr_null(gpuar_line_words(NULL));
	ck_assert_uint_eq(gpuar_line_id(NULL), 0);
	EINV(gpuar_submit_word_waits(NULL, &ww, 1, NULL));
	EINV(gpuar_submit_fence_waits(NULL, &fw, 1, NULL));
	EINV(gpuar_port_await_word(NULL, NULL, 0, 1, 1, NULL));
	EINV(gpuar_cancel(NULL, 1));
	EINV_DIAG(gpuar_port_claim(NULL, &ce, 1, 0, diag));
	EINV(gpuar_port_reap(NULL, &rec, 1, 0));
	EINV(gpuar_reap(NULL, &rec, 1, 0));
	EINV(gpuar_port_reap_interruptible(NULL, &rec, 1, 0, NULL));
	EINV(gpuar_reap_interruptible(NULL, &rec, 1, 0, NULL));
	EINV(gpuar_port_stats(NULL, &ps));
	EINV(gpuar_point_stats(NULL, &pts));
}

/* A port, for the calls whose other pointers are NULL. */
static void port_null_arguments(void)
{
	struct gpuar_port_options o = { .engine = GPUAR_ENGINE_USER };
	struct gpuar_port *port;
	struct gpuar_line *line;

	ck_assert_int_eq(gpuar_port_open(&port, &o, NULL), 0);
	EINV(gpuar_line_alloc(port, NULL));
	EINV(gpuar_line_free(port, NULL));
	EINV(gpuar_port_await_word(port, NULL, 0, 1, 1, NULL));
	EINV(gpuar_port_reap(port, NULL, 1, 0));
	EINV(gpuar_port_stats(port, NULL));
	EINV(gpuar_point_stats(port, NULL));
	ck_assert_int_eq(gpuar_line_alloc(port, &line), 0);
	ck_assert_int_eq(gpuar_submit_word_waits(port, NULL, 1, NULL), -EFAULT);
	EINV_DIAG(gpuar_vendor_resolve(port, NULL, &vc, diag));
	gpuar_port_close(port);
}

/* ------------------------------------------------------ plans, errors */

static void plan_calls(void)
{
	struct gpuar_plan plan;
	struct gpuar_wait_bands bands;
	char buf[8] = "x";

	EINV_DIAG(gpuar_plan_from_text(NULL, &plan, diag));
	EINV_DIAG(gpuar_plan_from_text("poll", NULL, diag));
	ck_assert_uint_eq(gpuar_plan_to_text(NULL, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	EINV_DIAG(gpuar_bands_from_text(NULL, &bands, diag));
	EINV_DIAG(gpuar_bands_from_text("poll", NULL, diag));
	buf[0] = 'x';
	ck_assert_uint_eq(gpuar_bands_to_text(NULL, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	ck_assert_ptr_null(gpuar_bands_for_rows(NULL, 1));
	ck_assert_ptr_null(gpuar_bands_current(NULL, NULL));
	gpuar_rows_publish(NULL, 1);
	ck_assert_uint_eq(gpuar_rows_read(NULL), 0);
	ck_assert_ptr_null(gpuar_code_name(0xffffffffu));
	ck_assert_str_eq(gpuar_outcome_name(0), "?");
}

/* ------------------------------------------------ interrupts, waiters */

static void interrupt_calls(void)
{
	EINV(gpuar_interrupt_new(NULL));
	gpuar_interrupt_free(NULL);
	EINV(gpuar_interrupt_trigger(NULL));
	gpuar_interrupt_reset(NULL);
	ck_assert(!gpuar_interrupt_triggered(NULL));
	EINV(gpuar_interrupt_fd(NULL));
}

static void waiter_calls(void)
{
	struct gpuar_waiter_stats st;
	struct gpuar_word_source ws;
	struct gpuar_waiter *w;

	EINV_DIAG(gpuar_waiter_new(NULL, NULL, diag));
	gpuar_waiter_free(NULL);
	EINV_DIAG(gpuar_wait_blocking(NULL, gpuar_word_source_init(&ws, &u64, 0),
				      NULL, 1, 1, &rec, diag));
	EINV_DIAG(gpuar_wait(NULL, NULL, NULL, 1, 1, &rec, diag));
	gpuar_waiter_set_interrupt(NULL, NULL);
	memset(&st, 0xff, sizeof(st));
	gpuar_waiter_stats(NULL, &st);
	ck_assert_uint_eq(st.waits, 0);
	EINV(gpuar_waiter_prediction(NULL, 1, &u64));
	ck_assert_int_eq(gpuar_waiter_new(&w, NULL, NULL), 0);
	EINV_DIAG(gpuar_wait_blocking(w, NULL, NULL, 1, 1, &rec, diag));
	EINV_DIAG(gpuar_wait_blocking(w, gpuar_word_source_init(&ws, &u64, 0),
				      NULL, 1, 1, NULL, diag));
	gpuar_waiter_stats(w, NULL);
	/* an optional out pointer: NULL asks only whether the point exists */
	ck_assert_int_eq(gpuar_waiter_prediction(w, 1, NULL), -ENOENT);
	gpuar_waiter_free(w);
}

/* ---------------------------------------------------- sources, clocks */

static void source_calls(void)
{
	ck_assert_ptr_null(gpuar_word_source_init(NULL, &u64, 1));
	ck_assert_ptr_null(gpuar_fd_source_init(NULL, 0));
	ck_assert_ptr_null(gpuar_soft_source_init(NULL, NULL, &u64, 1));
	EINV(gpuar_hw_word_wait(NULL, 1, 0, 0));
	ck_assert_ptr_nonnull(gpuar_clock_monotonic());
	ck_assert_ptr_null(gpuar_vclock_clock(NULL));
	ck_assert_uint_eq(gpuar_vclock_now(NULL), 0);
	ck_assert_uint_eq(gpuar_vclock_sleeps(NULL), 0);
	gpuar_vclock_advance(NULL, 1);
	EINV(gpuar_vclock_store_at(NULL, 1, &u64, 1));
	gpuar_vclock_free(NULL);
}

static void soft_calls(void)
{
	EINV(gpuar_soft_producer_new(NULL));
	gpuar_soft_producer_free(NULL);
	EINV(gpuar_soft_store_at(NULL, &u64, 1, 0));
	EINV(gpuar_soft_store_after(NULL, &u64, 1, 0));
	gpuar_soft_fail_at(NULL, -EIO, 0);
	ck_assert_uint_eq(gpuar_soft_stores(NULL), 0);
	ck_assert_uint_eq(gpuar_soft_stored_at(NULL, &u64, 1), 0);
}

/* -------------------------------------------------- executor, io_uring */

static int no_task(struct gpuar_task *task, void *arg)
{
	(void)task;
	(void)arg;
	return 0;
}

static void exec_calls(void)
{
	struct gpuar_exec_stats st;
	struct gpuar_uring_host_stats hs;
	struct gpuar_task *task;
	enum gpuar_exec_kind kind;

	EINV_DIAG(gpuar_exec_new(NULL, NULL, diag));
	gpuar_exec_free(NULL);
	EINV_DIAG(gpuar_exec_run(NULL, diag));
	EINV(gpuar_exec_spawn(NULL, no_task, NULL, &task));
	gpuar_exec_set_interrupt(NULL, NULL);
	memset(&st, 0xff, sizeof(st));
	gpuar_exec_stats(NULL, &st);
	ck_assert_uint_eq(st.polls, 0);
	ck_assert_ptr_null(gpuar_exec_clock(NULL));
	EINV_DIAG(gpuar_exec_kind_parse(NULL, &kind, diag));
	/* Their out pointers are optional: NULL only checks. */
	ck_assert_int_eq(gpuar_exec_kind_parse("naive", NULL, NULL), 0);
	ck_assert_int_eq(gpuar_exec_resolve(GPUAR_EXEC_NAIVE, false, NULL, NULL,
					    NULL), 0);
	ck_assert_ptr_nonnull(gpuar_park_resolve(NULL, NULL));
	EINV(gpuar_task_await_word(NULL, &u64, 1));
	EINV(gpuar_task_await_fence(NULL, 0));
	EINV(gpuar_task_await_source(NULL, NULL));
	EINV(gpuar_task_await_timer(NULL, 0));
	EINV(gpuar_task_yield(NULL));
	EINV(gpuar_task_source_error(NULL));
	ck_assert_uint_eq(gpuar_task_woke(NULL), 0);
	ck_assert_ptr_null(gpuar_task_exec(NULL));
	EINV(gpuar_uring_host_new(NULL, NULL));
	gpuar_uring_host_free(NULL);
	EINV(gpuar_uring_host_reap(NULL, &rec, 1, 0));
	EINV(gpuar_uring_host_read_fd(NULL, 0, &rec, 1, 0));
	memset(&hs, 0xff, sizeof(hs));
	gpuar_uring_host_stats(NULL, &hs);
	ck_assert_uint_eq(hs.reads, 0);
}

static void drm_calls(void)
{
	ck_assert_int_lt(gpuar_sync_file_info(-1, NULL, NULL, NULL), 0);
	EINV(gpuar_drm_point_export(-1, 1, 1, NULL));
	EINV(gpuar_drm_point_available_fd(-1, 1, 1, NULL));
	ck_assert_int_lt(gpuar_drm_point_wait_available(-1, 1, 1, 0), 0);
}

/* -------------------------------------------------------- vendors */

static void vendor_calls(void)
{
	struct gpuar_vendor_source src;

	ck_assert_ptr_null(gpuar_vendor_line_words(NULL));
	ck_assert_uint_eq(gpuar_vendor_line_device_address(NULL), 0);
	ck_assert_ptr_null(gpuar_vendor_line_gpuar(NULL));
	ck_assert_uint_eq(gpuar_vendor_line_sequence(NULL, 0), 0);
	EINV(gpuar_vendor_line_set_sequence(NULL, 0, 1));
	EINV_DIAG(gpuar_vendor_resolve(NULL, &rec, &vc, diag));

	EINV_DIAG(gpuar_cuda_open(NULL, 0, diag));
	gpuar_cuda_close(NULL);
	ck_assert_int_eq(gpuar_cuda_driver_version(NULL), 0);
	ck_assert_ptr_null(gpuar_cuda_library(NULL));
	ck_assert_ptr_null(gpuar_cuda_resolver(NULL));
	EINV_DIAG(gpuar_cuda_line_alloc(NULL, NULL, NULL, diag));
	ck_assert_int_eq(gpuar_cuda_line_free(NULL, 0, NULL), 0);
	EINV_DIAG(gpuar_cuda_record(NULL, 0, NULL, &u64, diag));
	EINV_DIAG(gpuar_cuda_port_await(NULL, 0, NULL, NULL, 1, 1, &u64, diag));
	EINV_DIAG(gpuar_cuda_await(NULL, 0, NULL, NULL, 1, 1, &u64, diag));
	EINV_DIAG(gpuar_cuda_port_await_event(NULL, 0, NULL, NULL, 1, 1, &u64, diag));
	EINV_DIAG(gpuar_cuda_await_event(NULL, 0, NULL, NULL, 1, 1, &u64, diag));
	EINV_DIAG(gpuar_cuda_port_reap(NULL, NULL, &vc, 1, 0, diag));
	EINV_DIAG(gpuar_cuda_reap(NULL, NULL, &vc, 1, 0, diag));
	EINV_DIAG(gpuar_cuda_stream_wait_word(NULL, 0, NULL, 1, diag));
	EINV_DIAG(gpuar_cuda_source_init(&src, NULL, 0, NULL, diag));
	EINV_DIAG(gpuar_cuda_source_init(NULL, NULL, 0, NULL, diag));
	EINV_DIAG(gpuar_cuda_wait_blocking(NULL, NULL, NULL, 1, 1, &rec, diag));
	EINV_DIAG(gpuar_cuda_wait(NULL, NULL, NULL, 1, 1, &rec, diag));
	EINV_DIAG(gpuar_cuda_graph_add_completion(NULL, 0, NULL, NULL, 0, NULL, diag));
	EINV_DIAG(gpuar_cuda_graph_launch(NULL, 0, NULL, NULL, NULL, NULL, 1, 1,
					  &u64, diag));
	EINV_DIAG(gpuar_cuda_queue_open(NULL, 0, diag));
	EINV_DIAG(gpuar_cuda_queue_await(NULL, NULL, &u64, diag));
	EINV_DIAG(gpuar_cuda_queue_reap(NULL, &vc, 1, 0, diag));
	EINV(gpuar_cuda_queue_fd(NULL));
	ck_assert_int_eq(gpuar_cuda_queue_close(NULL, 0, NULL), 0);

	EINV_DIAG(gpuar_hip_open(NULL, 0, diag));
	gpuar_hip_close(NULL);
	ck_assert_int_eq(gpuar_hip_driver_version(NULL), 0);
	ck_assert_ptr_null(gpuar_hip_library(NULL));
	EINV_DIAG(gpuar_hip_line_alloc(NULL, NULL, NULL, diag));
	ck_assert_int_eq(gpuar_hip_line_free(NULL, 0, NULL), 0);
	EINV_DIAG(gpuar_hip_record(NULL, 0, NULL, &u64, diag));
	EINV_DIAG(gpuar_hip_port_await(NULL, 0, NULL, NULL, 1, 1, &u64, diag));
	EINV_DIAG(gpuar_hip_await(NULL, 0, NULL, NULL, 1, 1, &u64, diag));
	EINV_DIAG(gpuar_hip_port_await_event(NULL, 0, NULL, NULL, 1, 1, &u64, diag));
	EINV_DIAG(gpuar_hip_await_event(NULL, 0, NULL, NULL, 1, 1, &u64, diag));
	EINV_DIAG(gpuar_hip_port_reap(NULL, NULL, &vc, 1, 0, diag));
	EINV_DIAG(gpuar_hip_reap(NULL, NULL, &vc, 1, 0, diag));
	EINV_DIAG(gpuar_hip_stream_wait_word(NULL, 0, NULL, 1, diag));
	EINV_DIAG(gpuar_hip_source_init(&src, NULL, 0, NULL, diag));
	EINV_DIAG(gpuar_hip_source_init(NULL, NULL, 0, NULL, diag));
	EINV_DIAG(gpuar_hip_wait_blocking(NULL, NULL, NULL, 1, 1, &rec, diag));
	EINV_DIAG(gpuar_hip_wait(NULL, NULL, NULL, 1, 1, &rec, diag));
	EINV_DIAG(gpuar_hip_queue_open(NULL, 0, diag));
	EINV_DIAG(gpuar_hip_queue_await(NULL, NULL, &u64, diag));
	EINV_DIAG(gpuar_hip_queue_reap(NULL, &vc, 1, 0, diag));
	EINV(gpuar_hip_queue_fd(NULL));
	ck_assert_int_eq(gpuar_hip_queue_close(NULL, 0, NULL), 0);
}

/* ------------------------------------------------------------ cases */

static void (*const cases[])(void) = {
	port_calls, port_null_arguments, plan_calls, interrupt_calls,
	waiter_calls, source_calls, soft_calls, exec_calls, drm_calls,
	vendor_calls,
};

START_TEST(null_is_refused_or_neutral)
{
	cases[_i]();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("null_objects");
	TCase *tc = tcase_create("null");

	tcase_add_loop_test(tc, null_is_refused_or_neutral, 0,
			    (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	return unit_run(s);
}
