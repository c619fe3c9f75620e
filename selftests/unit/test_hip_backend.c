// SPDX-License-Identifier: MIT
/*
 * The HIP backend against the test double of the HIP runtime
 * ($(BUILD)/doubles/hip/libamdhip64.so.6): the shared cases of
 * selftests/doubles/vendor_cases.h, plus what differs from CUDA: the
 * soname order, a runtime lacking an entry point, devices instead of
 * contexts, hipStreamWaitValue64's plain (non-wrapping) comparison and
 * its capability attribute, the ROCm 7 soname and the version range.
 */
#include <gpuar/hip.h>

#include "vendor_cases.h"
#include "vendor_fail_cases.h"

typedef unsigned int (*fn_u_p_u64)(void *, uint64_t);
typedef unsigned int (*fn_u_p_u)(void *, unsigned int);
typedef unsigned int (*fn_u_p_i)(void *, int);
typedef unsigned int (*fn_u_i)(int);
typedef unsigned int (*fn_u_pi)(int *);
typedef unsigned int (*fn_u_v)(void);
typedef int (*fn_i_v)(void);
typedef uint64_t (*fn_u64_v)(void);
typedef unsigned int (*fn_create)(void **, unsigned int);
typedef unsigned int (*fn_destroy)(void *);

#define HIP_STREAM_PER_THREAD_HANDLE ((void *)0x2)

/*
 * The test plays the program: its own work on the legacy stream goes to
 * the null stream, 0, as a program built without
 * -fgpu-default-stream=per-thread writes it; the backend gets
 * GPUAR_HIP_STREAM_LEGACY. The double knows no handle 1.
 */
static void *hip_program_stream(void *s)
{
	return s == GPUAR_HIP_STREAM_LEGACY ? NULL : s;
}
#define HIP_LAUNCH_FAILURE 719u

#define SYM(type, name) ((type)vt_sym(name))

VT_BACKEND_CALLS(hip, struct gpuar_hip, struct ihipStream_t, struct ihipEvent_t)

/* A stream of @device, made through the runtime; device 0 current after. */
static void *hip_stream_new(int device)
{
	void *s = NULL;

	ck_assert_uint_eq(SYM(fn_u_i, "hipSetDevice")(device), 0);
	ck_assert_uint_eq(SYM(fn_create, "hipStreamCreateWithFlags")(&s, 1), 0);
	ck_assert_uint_eq(SYM(fn_u_i, "hipSetDevice")(0), 0);
	return s;
}

static void hip_stream_free(void *s)
{
	ck_assert_uint_eq(SYM(fn_destroy, "hipStreamDestroy")(s), 0);
}

static void hip_work(void *s, uint64_t ns)
{
	fn_u_p_u64 work = SYM(fn_u_p_u64, "gpuar_fake_hip_work");

	ck_assert_uint_eq(work(hip_program_stream(s), ns), 0);
}

static void hip_fault_with(void *s, unsigned int code)
{
	fn_u_p_u fault = SYM(fn_u_p_u, "gpuar_fake_hip_fault");

	ck_assert_uint_eq(fault(hip_program_stream(s), code), 0);
}

static void hip_fault(void *s)
{
	hip_fault_with(s, HIP_LAUNCH_FAILURE);
}

static void hip_capture(void *s, int on)
{
	fn_u_p_i capture = SYM(fn_u_p_i, "gpuar_fake_hip_capture");

	ck_assert_uint_eq(capture(hip_program_stream(s), on), 0);
}

static int hip_registered_pages(void)
{
	return SYM(fn_i_v, "gpuar_fake_hip_registered_pages")();
}

static uint64_t hip_unsafe_unregisters(void)
{
	return SYM(fn_u64_v, "gpuar_fake_hip_unsafe_unregisters")();
}

typedef unsigned int (*fn_event_record)(void *, void *);

static void *hip_event_new(void)
{
	void *e = NULL;

	ck_assert_uint_eq(SYM(fn_create, "hipEventCreateWithFlags")(&e, 2), 0);
	return e;
}

static void hip_event_record(void *e, void *s)
{
	fn_event_record record = SYM(fn_event_record, "hipEventRecord");

	ck_assert_uint_eq(record(e, hip_program_stream(s)), 0);
}

static void hip_event_free(void *e)
{
	ck_assert_uint_eq(SYM(fn_destroy, "hipEventDestroy")(e), 0);
}

/* HIP 5.2 (Debian bookworm's) has no hipStreamGetId. */
static void hip_without_stream_ids(void)
{
	vt_point_at_double("hip/libamdhip64.so.5");
}

/* hipDeviceReset resets the calling thread's current device. */
static void hip_reset_device(int device)
{
	ck_assert_uint_eq(SYM(fn_u_i, "hipSetDevice")(device), 0);
	ck_assert_uint_eq(SYM(fn_u_v, "hipDeviceReset")(), 0);
}

static void hip_caller_on(int device)
{
	ck_assert_uint_eq(SYM(fn_u_i, "hipSetDevice")(device), 0);
}

static void hip_caller_off(int device)
{
	(void)device;
	ck_assert_uint_eq(SYM(fn_u_i, "hipSetDevice")(0), 0);
}

static void hip_drop_writes(void *s, unsigned int n)
{
	fn_u_p_u drop = SYM(fn_u_p_u, "gpuar_fake_hip_drop_writes");

	ck_assert_uint_eq(drop(hip_program_stream(s), n), 0);
}

/* Each hipError_t after which the device never stores again. */
static const unsigned int hip_sticky[] = {
	4,	/* hipErrorDeinitialized */
	214,	/* hipErrorECCNotCorrectable */
	700,	/* hipErrorIllegalAddress */
	702,	/* hipErrorLaunchTimeOut */
	709,	/* hipErrorContextIsDestroyed */
	710,	/* hipErrorAssert */
	719,	/* hipErrorLaunchFailure */
	999,	/* hipErrorUnknown */
};

static const struct vt hip_vt = {
	.name = "hip",
	.library_env = "GPUAR_HIP_LIBRARY",
	.double_path = "hip/libamdhip64.so.6",
	.fault_code = HIP_LAUNCH_FAILURE,
	.fault_name = "hipErrorLaunchFailure",
	VT_BACKEND_FIELDS(hip),
	.stream_new = hip_stream_new,
	.stream_free = hip_stream_free,
	.work = hip_work,
	.fault = hip_fault,
	.capture = hip_capture,
	.registered_pages = hip_registered_pages,
	.unsafe_unregisters = hip_unsafe_unregisters,
	.default_stream = GPUAR_HIP_STREAM_LEGACY,
	.event_new = hip_event_new,
	.event_record = hip_event_record,
	.event_free = hip_event_free,
	.per_thread_stream = HIP_STREAM_PER_THREAD_HANDLE,
	.without_stream_ids = hip_without_stream_ids,
	.fault_with = hip_fault_with,
	.sticky_codes = hip_sticky,
	.nsticky = (int)(sizeof(hip_sticky) / sizeof(hip_sticky[0])),
	.reset_device = hip_reset_device,
	.drop_writes = hip_drop_writes,
	.caller_on = hip_caller_on,
	.caller_off = hip_caller_off,
};

/* -------------------------------------------------- HIP-only cases */

START_TEST(runtime_lacking_an_entry_point_is_named)
{
	struct gpuar_hip *h = NULL;
	struct gpuar_error d;

	vt_point_at_double("hip/libamdhip64-nowrite.so");
	ck_assert_int_eq(gpuar_hip_open(&h, 0, &d), -ENOSYS);
	ck_assert_uint_eq(d.code, GPUAR_E_BACKEND);
	ck_assert_msg(strstr(d.message, "hipStreamWriteValue64"), "%s", d.message);
	ck_assert_ptr_null(h);
}
END_TEST

START_TEST(reports_the_library_it_loaded)
{
	struct gpuar_hip *h;
	struct gpuar_error d;

	vt_point_at_double(hip_vt.double_path);
	ck_assert_msg(gpuar_hip_open(&h, 0, &d) == 0, "%s", d.message);
	ck_assert_ptr_nonnull(strstr(gpuar_hip_library(h), "libamdhip64.so.6"));
	ck_assert_int_gt(gpuar_hip_driver_version(h), 0);
	gpuar_hip_close(h);
}
END_TEST

START_TEST(calls_restore_the_callers_current_device)
{
	int dev = -1;
	void *s = hip_stream_new(1);	/* a device-1 stream, device 0 current */

	hip_stream_free(s);
	ck_assert_uint_eq(SYM(fn_u_i, "hipSetDevice")(1), 0);
	/* the backend works on device 0 and puts device 1 back */
	s = hip_stream_new(0);
	ck_assert_uint_eq(SYM(fn_u_i, "hipSetDevice")(1), 0);
	ck_assert_int_eq(gpuar_hip_record(vline, 0, s, NULL, &vdiag), 0);
	ck_assert_uint_eq(SYM(fn_u_pi, "hipGetDevice")(&dev), 0);
	ck_assert_int_eq(dev, 1);
	ck_assert_uint_eq(SYM(fn_u_i, "hipSetDevice")(0), 0);
	hip_stream_free(s);
}
END_TEST

START_TEST(reverse_wait_across_2_64_refused)
{
	void *s = hip_stream_new(0);

	/* plain >= would release at once (MAX-1 >= 1): refuse instead */
	ck_assert_int_eq(gpuar_vendor_line_set_sequence(vline, 7, UINT64_MAX - 1), 0);
	ck_assert_int_eq(gpuar_hip_stream_wait_word(vline, 7, s, 1, &vdiag), -ERANGE);
	ck_assert_uint_eq(vdiag.code, GPUAR_E_BACKEND);
	ck_assert_msg(strstr(vdiag.message, "2^64"), "%s", vdiag.message);
	/* plain >= would never release (1 >= MAX is false): refuse too */
	ck_assert_int_eq(gpuar_vendor_line_set_sequence(vline, 6, 1), 0);
	ck_assert_int_eq(gpuar_hip_stream_wait_word(vline, 6, s, UINT64_MAX, &vdiag),
			 -ERANGE);
	ck_assert_uint_eq(gpuar_vendor_line_words(vline)[6], 1);
	hip_stream_free(s);
}
END_TEST

START_TEST(reverse_wait_up_to_2_64_works)
{
	void *s = hip_stream_new(0);
	uint64_t *w = gpuar_vendor_line_words(vline);
	uint64_t target;

	/* the numbers agree in both orders right up to UINT64_MAX */
	ck_assert_int_eq(gpuar_vendor_line_set_sequence(vline, 7, UINT64_MAX - 3), 0);
	ck_assert_int_eq(gpuar_hip_stream_wait_word(vline, 7, s, UINT64_MAX, &vdiag), 0);
	ck_assert_int_eq(gpuar_hip_record(vline, 0, s, &target, &vdiag), 0);
	__atomic_store_n(&w[7], UINT64_MAX - 1, __ATOMIC_RELEASE);
	vt_sleep_ms(20);
	ck_assert(!vt_word_reached(vline, 0, target));
	__atomic_store_n(&w[7], UINT64_MAX, __ATOMIC_RELEASE);
	ck_assert_int_eq(gpuar_hip_line_free(vline, 1000 * MS, &vdiag), 0);
	vline = NULL;
	hip_stream_free(s);
}
END_TEST

/*
 * ROCm 7 ships libamdhip64.so.7: found by its soname. The double is
 * loaded by path first, so the backend's dlopen of the soname finds it
 * (the dynamic loader matches loaded objects by soname), whatever else
 * is installed.
 */
START_TEST(rocm7_soname_is_found)
{
	char path[PATH_MAX + 64];
	struct gpuar_hip *h;
	struct gpuar_error d;
	void *dl;

	vt_point_at_double("hip/libamdhip64.so.7");
	snprintf(path, sizeof(path), "%s", getenv("GPUAR_HIP_LIBRARY"));
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(dl, "%s", dlerror());
	unsetenv("GPUAR_HIP_LIBRARY");
	ck_assert_msg(gpuar_hip_open(&h, 0, &d) == 0, "%s", d.message);
	ck_assert_str_eq(gpuar_hip_library(h), "libamdhip64.so.7");
	gpuar_hip_close(h);
	dlclose(dl);
}
END_TEST

/* A runtime older than HIP 5 or newer than 8.x: refused, with its version. */
START_TEST(runtime_version_outside_the_range_refused)
{
	struct gpuar_hip *h = NULL;
	struct gpuar_error d;

	vt_point_at_double(hip_vt.double_path);
	setenv("GPUAR_FAKE_HIP_RUNTIME_VERSION", "40400000", 1);
	ck_assert_int_eq(gpuar_hip_open(&h, 0, &d), -EOPNOTSUPP);
	ck_assert_uint_eq(d.code, GPUAR_E_BACKEND);
	ck_assert_msg(strstr(d.message, "40400000"), "%s", d.message);
	setenv("GPUAR_FAKE_HIP_RUNTIME_VERSION", "90000000", 1);
	ck_assert_int_eq(gpuar_hip_open(&h, 0, &d), -EOPNOTSUPP);
	setenv("GPUAR_FAKE_HIP_RUNTIME_VERSION", "70151830", 1);
	ck_assert_msg(gpuar_hip_open(&h, 0, &d) == 0, "%s", d.message);
	gpuar_hip_close(h);
}
END_TEST

/* A device without hipDeviceAttributeCanUseStreamWaitValue: reverse
 * waits are refused up front, records still work. */
START_TEST(reverse_wait_refused_without_the_capability)
{
	struct gpuar_hip *h;
	struct gpuar_vendor_line *l;
	struct gpuar_port *port;
	struct gpuar_error d;
	void *s;

	vt_point_at_double(hip_vt.double_path);
	setenv("GPUAR_FAKE_HIP_NO_WAIT_VALUE", "1", 1);
	ck_assert_msg(gpuar_hip_open(&h, 0, &d) == 0, "%s", d.message);
	vt_open_port(&port);
	ck_assert_int_eq(gpuar_hip_line_alloc(h, port, &l, &d), 0);
	s = hip_stream_new(0);
	ck_assert_int_eq(gpuar_hip_stream_wait_word(l, 0, s, 1, &d), -EOPNOTSUPP);
	ck_assert_uint_eq(d.code, GPUAR_E_BACKEND);
	ck_assert_msg(strstr(d.message, "CanUseStreamWaitValue"), "%s", d.message);
	ck_assert_int_eq(gpuar_hip_record(l, 1, s, NULL, &d), 0);
	hip_stream_free(s);
	ck_assert_int_eq(gpuar_hip_line_free(l, 1000 * MS, &d), 0);
	gpuar_port_close(port);
	gpuar_hip_close(h);
}
END_TEST

typedef unsigned int (*fn_is_capturing)(void *, unsigned int *);

/*
 * A capture in the global mode on this very thread: the backend's own
 * status queries run in the relaxed mode, so the capture stays valid and
 * the waits complete as they would without it.
 */
START_TEST(global_capture_survives_the_backends_queries)
{
	const char *plans[] = { "poll", FLAG_PLAN };
	void *c = hip_stream_new(0), *s = hip_stream_new(0);

	for (uint32_t i = 0; i < 2; i++) {
		struct gpuar_plan plan = vt_plan(plans[i]);
		struct gpuar_vendor_completion out;
		unsigned int status = 0;

		hip_work(s, 30 * MS);
		hip_capture(c, 1);
		ck_assert_msg(gpuar_hip_port_await(vline, 0, s, &plan, 1, 80 + i, NULL,
					      &vdiag) == 0, "%s", vdiag.message);
		out = vt_reap_one(vb);
		ck_assert_uint_eq(out.record.user_data, 80 + i);
		ck_assert_int_eq(out.record.status, 0);
		ck_assert_uint_eq(SYM(fn_is_capturing, "hipStreamIsCapturing")(c, &status), 0);
		ck_assert_uint_eq(status, 1);	/* active, not invalidated */
		hip_capture(c, 0);
	}
	hip_stream_free(c);
	hip_stream_free(s);
}
END_TEST

/* A bare 0 stays refused, and the refusal says what to pass instead. */
START_TEST(bare_zero_refusal_names_the_legacy_handle)
{
	ck_assert_int_eq(gpuar_hip_record(vline, 0, NULL, NULL, &vdiag), -EINVAL);
	ck_assert_msg(strstr(vdiag.message, "GPUAR_HIP_STREAM_LEGACY") &&
		      strstr(vdiag.message, "hipStreamPerThread"), "%s",
		      vdiag.message);
}
END_TEST

/*
 * The legacy handle means device 0's null stream wherever the backend
 * asks about it later: a thread with device 1 current reaps, and the
 * backstop's hipStreamQuery still sees device 0's null stream fail
 * (device 1's is idle and fine).
 */
START_TEST(legacy_stream_is_asked_on_the_backends_device)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	struct gpuar_vendor_completion c;
	void *legacy = GPUAR_HIP_STREAM_LEGACY;

	ck_assert_int_eq(gpuar_hip_stream_wait_word(vline, 6, legacy, 1, &vdiag), 0);
	hip_fault(legacy);
	ck_assert_msg(gpuar_hip_port_await(vline, 0, legacy, &plan, 4, 92, NULL,
					   &vdiag) == 0, "%s", vdiag.message);
	hip_caller_on(1);
	vt_open_gate(1);
	c = vt_reap_one(vb);
	hip_caller_off(1);
	ck_assert_int_eq(c.record.status, -EIO);
	ck_assert_int_eq(c.vendor_status, HIP_LAUNCH_FAILURE);
	vt_free_keeps_line("failed");
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("hip_backend");
	TCase *tc = tcase_create("loader");
	TCase *own = tcase_create("hip");

	V = &hip_vt;
	tcase_add_test(tc, runtime_lacking_an_entry_point_is_named);
	tcase_add_test(tc, reports_the_library_it_loaded);
	tcase_add_test(tc, rocm7_soname_is_found);
	tcase_add_test(tc, runtime_version_outside_the_range_refused);
	tcase_add_test(tc, reverse_wait_refused_without_the_capability);
	suite_add_tcase(suite, tc);
	tcase_add_checked_fixture(own, vt_setup, vt_teardown);
	tcase_set_timeout(own, 30);
	tcase_add_test(own, calls_restore_the_callers_current_device);
	tcase_add_test(own, reverse_wait_across_2_64_refused);
	tcase_add_test(own, reverse_wait_up_to_2_64_works);
	tcase_add_test(own, global_capture_survives_the_backends_queries);
	tcase_add_test(own, bare_zero_refusal_names_the_legacy_handle);
	tcase_add_test(own, legacy_stream_is_asked_on_the_backends_device);
	suite_add_tcase(suite, own);
	vt_add_open_cases(suite);
	vt_add_cases(suite);
	vt_add_fail_cases(suite);
	/* Every case runs on both engines: nothing is left out. */
	return unit_run_tap(suite, &(struct unit_skips){ 0 });
}
