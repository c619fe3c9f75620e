// SPDX-License-Identifier: MIT
/*
 * The CUDA backend against the test double of libcuda.so.1
 * ($(BUILD)/doubles/cuda/libcuda.so.1): loading and entry-point
 * resolution, line pages, recording, awaiting through a port, backstop
 * errors, refusals, freeing, the reverse direction and the wait-driver
 * source. The shared cases are in selftests/doubles/vendor_cases.h.
 *
 * With GPUAR_TEST_REAL_DRIVER=1 and GPUAR_CUDA_LIBRARY=libcuda.so.1
 * (the GPU bundle's run) the same cases run against the real driver on
 * device 0: work is a PTX spin kernel on %globaltimer, a fault is a PTX trap,
 * capture is cuStreamBeginCapture; the cases that need the double's
 * controls (hidden entry points, counters) are left out, and those that
 * need a second device pass without checking where there is one device
 * (they print so).
 */
#include <gpuar/cuda.h>

#include "vendor_cases.h"

/* The double's controls and the raw driver calls the tests make. */
typedef unsigned int (*fn_u_p_u64)(void *, uint64_t);
typedef unsigned int (*fn_u_p_u)(void *, unsigned int);
typedef unsigned int (*fn_u_p_i)(void *, int);
typedef int (*fn_i_v)(void);
typedef int (*fn_i_i)(int);
typedef uint64_t (*fn_u64_v)(void);
typedef void (*fn_v_s)(const char *);
typedef void (*fn_v_i)(int);
typedef unsigned int (*fn_retain)(void **, int);
typedef unsigned int (*fn_push)(void *);
typedef unsigned int (*fn_pop)(void **);
typedef unsigned int (*fn_create)(void **, unsigned int);
typedef unsigned int (*fn_destroy)(void *);
typedef unsigned int (*fn_u_pi)(int *);

#define CU_STREAM_LEGACY_HANDLE ((void *)0x1)
#define CU_LAUNCH_FAILED 719u

#define SYM(type, name) ((type)vt_sym(name))

static bool real_driver;

/* --------------------------------------------- real-driver stand-ins */

static const char spin_ptx[] =
	".version 7.0\n"
	".target sm_70\n"
	".address_size 64\n"
	".visible .entry gpuar_spin(.param .u64 gpuar_spin_ns)\n"
	"{\n"
	"	.reg .pred %p<2>;\n"
	"	.reg .b64 %rd<6>;\n"
	"	ld.param.u64 %rd1, [gpuar_spin_ns];\n"
	"	mov.u64 %rd2, %globaltimer;\n"
	"	add.u64 %rd3, %rd2, %rd1;\n"
	"$L_spin:\n"
	"	mov.u64 %rd4, %globaltimer;\n"
	"	setp.lt.u64 %p1, %rd4, %rd3;\n"
	"	@%p1 bra $L_spin;\n"
	"	ret;\n"
	"}\n"
	".visible .entry gpuar_trap()\n"
	"{\n"
	"	trap;\n"
	"}\n";

typedef unsigned int (*fn_module_load)(void **, const void *);
typedef unsigned int (*fn_get_function)(void **, void *, const char *);
typedef unsigned int (*fn_launch)(void *, unsigned int, unsigned int,
				  unsigned int, unsigned int, unsigned int,
				  unsigned int, unsigned int, void *, void **,
				  void **);
typedef unsigned int (*fn_begin_capture)(void *, unsigned int);
typedef unsigned int (*fn_end_capture)(void *, void **);
typedef unsigned int (*fn_graph_destroy)(void *);

static void cu_with_ctx0(bool enter);

/* Launch gpuar_spin (ns > 0) or gpuar_trap (ns == 0) on @s. */
static void real_launch(void *s, uint64_t ns)
{
	static void *module, *spin, *trap;
	void *args[] = { &ns };

	cu_with_ctx0(true);
	if (!module) {
		ck_assert_uint_eq(SYM(fn_module_load, "cuModuleLoadData")(&module,
									  spin_ptx), 0);
		ck_assert_uint_eq(SYM(fn_get_function, "cuModuleGetFunction")(
					  &spin, module, "gpuar_spin"), 0);
		ck_assert_uint_eq(SYM(fn_get_function, "cuModuleGetFunction")(
					  &trap, module, "gpuar_trap"), 0);
	}
	ck_assert_uint_eq(SYM(fn_launch, "cuLaunchKernel")(ns ? spin : trap,
		1, 1, 1, 1, 1, 1, 0, s, ns ? args : NULL, NULL), 0);
	cu_with_ctx0(false);
}

VT_BACKEND_CALLS(cuda, struct gpuar_cuda, struct CUstream_st)

/* A stream of @device's primary context, made through the driver. */
static void *cu_stream_new(int device)
{
	void *ctx = NULL, *s = NULL, *popped;
	int count = 0;

	ck_assert_uint_eq(SYM(fn_u_pi, "cuDeviceGetCount")(&count), 0);
	if (device >= count)
		return NULL;	/* the caller passes with a note */

	ck_assert_uint_eq(SYM(fn_retain, "cuDevicePrimaryCtxRetain")(&ctx, device), 0);
	ck_assert_uint_eq(SYM(fn_push, "cuCtxPushCurrent_v2")(ctx), 0);
	ck_assert_uint_eq(SYM(fn_create, "cuStreamCreate")(&s, 1), 0);
	ck_assert_uint_eq(SYM(fn_pop, "cuCtxPopCurrent_v2")(&popped), 0);
	ck_assert_uint_eq(SYM(fn_i_i, "cuDevicePrimaryCtxRelease_v2")(device), 0);
	return s;
}

static void cu_stream_free(void *s)
{
	ck_assert_uint_eq(SYM(fn_destroy, "cuStreamDestroy_v2")(s), 0);
}

/* The legacy stream is the current context's: make device 0's current. */
static void cu_with_ctx0(bool enter)
{
	static void *ctx;
	void *popped;

	if (enter) {
		SYM(fn_retain, "cuDevicePrimaryCtxRetain")(&ctx, 0);
		SYM(fn_push, "cuCtxPushCurrent_v2")(ctx);
	} else {
		SYM(fn_pop, "cuCtxPopCurrent_v2")(&popped);
		SYM(fn_i_i, "cuDevicePrimaryCtxRelease_v2")(0);
	}
}

static void cu_work(void *s, uint64_t ns)
{
	if (real_driver) {
		real_launch(s, ns);
		return;
	}
	if (s == CU_STREAM_LEGACY_HANDLE)
		cu_with_ctx0(true);
	ck_assert_uint_eq(SYM(fn_u_p_u64, "gpuar_fake_cuda_work")(s, ns), 0);
	if (s == CU_STREAM_LEGACY_HANDLE)
		cu_with_ctx0(false);
}

static void cu_fault(void *s)
{
	if (real_driver) {
		real_launch(s, 0);
		return;
	}
	ck_assert_uint_eq(SYM(fn_u_p_u, "gpuar_fake_cuda_fault")(s, CU_LAUNCH_FAILED), 0);
}

static void cu_capture(void *s, int on)
{
	void *graph = NULL;

	if (real_driver && on) {	/* CU_STREAM_CAPTURE_MODE_RELAXED */
		ck_assert_uint_eq(SYM(fn_begin_capture,
				      "cuStreamBeginCapture_v2")(s, 2), 0);
		return;
	}
	if (real_driver) {
		ck_assert_uint_eq(SYM(fn_end_capture, "cuStreamEndCapture")(s,
									 &graph), 0);
		if (graph)
			SYM(fn_graph_destroy, "cuGraphDestroy")(graph);
		return;
	}
	ck_assert_uint_eq(SYM(fn_u_p_i, "gpuar_fake_cuda_capture")(s, on), 0);
}

/* Only the double can count these: -1 / 0 under the real driver. */
static int cu_registered_pages(void)
{
	if (real_driver)
		return -1;
	return SYM(fn_i_v, "gpuar_fake_cuda_registered_pages")();
}

static uint64_t cu_unsafe_unregisters(void)
{
	if (real_driver)
		return 0;
	return SYM(fn_u64_v, "gpuar_fake_cuda_unsafe_unregisters")();
}

static const struct vt cuda_vt = {
	.name = "cuda",
	.library_env = "GPUAR_CUDA_LIBRARY",
	.double_path = "cuda/libcuda.so.1",
	.fault_code = CU_LAUNCH_FAILED,
	.fault_name = "CUDA_ERROR_LAUNCH_FAILED",
	VT_BACKEND_FIELDS(cuda),
	.stream_new = cu_stream_new,
	.stream_free = cu_stream_free,
	.work = cu_work,
	.fault = cu_fault,
	.capture = cu_capture,
	.registered_pages = cu_registered_pages,
	.unsafe_unregisters = cu_unsafe_unregisters,
	.default_stream = CU_STREAM_LEGACY_HANDLE,
};

/* ------------------------------------------------- CUDA-only cases */

START_TEST(resolves_with_cuGetProcAddress_v2_on_12x)
{
	struct gpuar_cuda *cu;
	struct gpuar_error d;

	vt_point_at_double(cuda_vt.double_path);
	ck_assert_int_eq(gpuar_cuda_open(&cu, 0, &d), 0);
	ck_assert_str_eq(gpuar_cuda_resolver(cu), "cuGetProcAddress_v2");
	ck_assert_int_eq(gpuar_cuda_driver_version(cu), 12080);
	ck_assert_ptr_nonnull(strstr(gpuar_cuda_library(cu), "libcuda.so.1"));
	/* the handle holds the primary context, and gives it back */
	ck_assert_int_eq(SYM(fn_i_i, "gpuar_fake_cuda_primary_refs")(0), 1);
	gpuar_cuda_close(cu);
}
END_TEST

START_TEST(falls_back_to_dlsym_on_old_driver)
{
	struct gpuar_cuda *cu;
	struct gpuar_error d;
	struct gpuar_vendor_line *l;
	struct gpuar_port *port;
	uint64_t target;
	void *s;

	vt_point_at_double(cuda_vt.double_path);
	SYM(fn_v_i, "gpuar_fake_cuda_set_driver_version")(11080);
	ck_assert_msg(gpuar_cuda_open(&cu, 0, &d) == 0, "%s", d.message);
	ck_assert_str_eq(gpuar_cuda_resolver(cu), "dlsym");
	vt_open_port(&port);
	ck_assert_int_eq(gpuar_cuda_line_alloc(cu, port, &l, &d), 0);
	s = cu_stream_new(0);
	ck_assert_int_eq(gpuar_cuda_record(l, 0, s, &target, &d), 0);
	cu_stream_free(s);
	ck_assert_uint_eq(gpuar_vendor_line_words(l)[0], target);
	ck_assert_int_eq(gpuar_cuda_line_free(l, 0, &d), 0);
	gpuar_port_close(port);
	gpuar_cuda_close(cu);
}
END_TEST

START_TEST(missing_entry_point_is_named)
{
	struct gpuar_cuda *cu = NULL;
	struct gpuar_error d;

	vt_point_at_double(cuda_vt.double_path);
	SYM(fn_v_s, "gpuar_fake_cuda_hide")("cuStreamWriteValue64");
	ck_assert_int_eq(gpuar_cuda_open(&cu, 0, &d), -ENOSYS);
	ck_assert_uint_eq(d.code, GPUAR_E_BACKEND);
	ck_assert_msg(strstr(d.message, "cuStreamWriteValue64"), "%s", d.message);
	ck_assert_msg(strstr(d.message, "CUDA_ERROR_NOT_FOUND"), "%s", d.message);
	ck_assert_ptr_null(cu);
}
END_TEST

START_TEST(device_without_64bit_stream_mem_ops_refused)
{
	struct gpuar_cuda *cu = NULL;
	struct gpuar_error d;

	vt_point_at_double(cuda_vt.double_path);
	SYM(fn_v_i, "gpuar_fake_cuda_set_mem_ops_64")(0);
	ck_assert_int_eq(gpuar_cuda_open(&cu, 0, &d), -EOPNOTSUPP);
	ck_assert_msg(strstr(d.message, "CAN_USE_64_BIT_STREAM_MEM_OPS"), "%s",
		      d.message);
	ck_assert_int_eq(SYM(fn_i_i, "gpuar_fake_cuda_primary_refs")(0), 0);
}
END_TEST

START_TEST(no_device_reported_by_cuInit)
{
	struct gpuar_cuda *cu = NULL;
	struct gpuar_error d;

	vt_point_at_double(cuda_vt.double_path);
	setenv("GPUAR_FAKE_CUDA_NO_DEVICE", "1", 1);
	ck_assert_int_eq(gpuar_cuda_open(&cu, 0, &d), -ENODEV);
	ck_assert_msg(strstr(d.message, "CUDA_ERROR_NO_DEVICE"), "%s", d.message);
}
END_TEST

START_TEST(lines_hold_the_primary_context_until_freed)
{
	/* fixture: one handle reference + one line reference */
	ck_assert_int_eq(SYM(fn_i_i, "gpuar_fake_cuda_primary_refs")(0), 2);
	ck_assert_int_eq(gpuar_cuda_line_free(vline, 0, &vdiag), 0);
	vline = NULL;
	ck_assert_int_eq(SYM(fn_i_i, "gpuar_fake_cuda_primary_refs")(0), 1);
}
END_TEST

START_TEST(stores_keep_the_memory_barrier)
{
	void *s = cu_stream_new(0);

	for (uint32_t i = 0; i < 4; i++)
		ck_assert_int_eq(gpuar_cuda_record(vline, i, s, NULL, &vdiag), 0);
	cu_stream_free(s);
	ck_assert_uint_eq(SYM(fn_u64_v, "gpuar_fake_cuda_no_barrier_writes")(), 0);
}
END_TEST

START_TEST(reverse_wait_compares_in_wrapping_order)
{
	void *s = cu_stream_new(0);
	uint64_t *w = gpuar_vendor_line_words(vline);
	uint64_t target;

	/* the CPU counter sits just below 2^64; the stream waits for 1 */
	ck_assert_int_eq(gpuar_vendor_line_set_sequence(vline, 7, UINT64_MAX - 1), 0);
	ck_assert_int_eq(gpuar_cuda_stream_wait_word(vline, 7, s, 1, &vdiag), 0);
	ck_assert_int_eq(gpuar_cuda_record(vline, 0, s, &target, &vdiag), 0);
	__atomic_store_n(&w[7], UINT64_MAX, __ATOMIC_RELEASE);
	vt_sleep_ms(20);
	ck_assert(!vt_word_reached(vline, 0, target));	/* still held */
	__atomic_store_n(&w[7], 1, __ATOMIC_RELEASE);	/* wrapped past 0 */
	ck_assert_int_eq(gpuar_cuda_line_free(vline, 1000 * MS, &vdiag), 0);
	vline = NULL;
	cu_stream_free(s);
}
END_TEST

START_TEST(sticky_error_names_the_first_failure)
{
	void *s = cu_stream_new(0), *t = cu_stream_new(0);
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	struct gpuar_vendor_completion c;

	cu_work(s, 10 * MS);
	cu_fault(s);
	ck_assert_int_eq(gpuar_cuda_await(vline, 0, s, &plan, 1, 1, NULL, &vdiag), 0);
	c = vt_reap_one(vb);
	ck_assert_int_eq(c.vendor_status, CU_LAUNCH_FAILED);
	/* another stream of the same context: refused with the first error */
	ck_assert_int_eq(gpuar_cuda_record(vline, 1, t, NULL, &vdiag), -EIO);
	ck_assert_msg(strstr(vdiag.message, "poisoned by CUDA_ERROR_LAUNCH_FAILED"),
		      "%s", vdiag.message);
	ck_assert_int_eq(gpuar_cuda_line_free(vline, 10 * MS, &vdiag), -EIO);
	vline = NULL;
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("cuda_backend");
	TCase *tc = tcase_create("loader");
	TCase *own = tcase_create("cuda");
	const char *r = getenv("GPUAR_TEST_REAL_DRIVER");

	V = &cuda_vt;
	real_driver = r && *r && strcmp(r, "0");
	vt_real_driver = real_driver;
	if (!real_driver) {	/* these drive the double's controls */
		tcase_add_test(tc, resolves_with_cuGetProcAddress_v2_on_12x);
		tcase_add_test(tc, falls_back_to_dlsym_on_old_driver);
		tcase_add_test(tc, missing_entry_point_is_named);
		tcase_add_test(tc, device_without_64bit_stream_mem_ops_refused);
		tcase_add_test(tc, no_device_reported_by_cuInit);
		suite_add_tcase(suite, tc);
	}
	tcase_add_checked_fixture(own, vt_setup, vt_teardown);
	tcase_set_timeout(own, 30);
	if (!real_driver) {
		tcase_add_test(own, lines_hold_the_primary_context_until_freed);
		tcase_add_test(own, stores_keep_the_memory_barrier);
	}
	tcase_add_test(own, reverse_wait_compares_in_wrapping_order);
	tcase_add_test(own, sticky_error_names_the_first_failure);
	suite_add_tcase(suite, own);
	vt_add_open_cases(suite);
	vt_add_cases(suite);
	/* Every case runs on both engines: nothing is left out. */
	return unit_run_tap(suite, &(struct unit_skips){ 0 });
}
