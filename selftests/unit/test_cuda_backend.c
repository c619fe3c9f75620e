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
#include "vendor_fail_cases.h"

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
#define CU_STREAM_PER_THREAD_HANDLE ((void *)0x2)
#define CU_CAPTURE_MODE_GLOBAL 0u
#define CU_CAPTURE_MODE_RELAXED 2u
#define CU_CAPTURE_INVALIDATED 901u
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

VT_BACKEND_CALLS(cuda, struct gpuar_cuda, struct CUstream_st, struct CUevent_st)

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
	/* The special handles name the current context's streams. */
	if ((uintptr_t)s <= 2)
		cu_with_ctx0(true);
	ck_assert_uint_eq(SYM(fn_u_p_u64, "gpuar_fake_cuda_work")(s, ns), 0);
	if ((uintptr_t)s <= 2)
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

typedef unsigned int (*fn_event_record)(void *, void *);

static void *cu_event_new(void)
{
	void *e = NULL;

	cu_with_ctx0(true);
	ck_assert_uint_eq(SYM(fn_create, "cuEventCreate")(&e, 2), 0);
	cu_with_ctx0(false);
	return e;
}

static void cu_event_record(void *e, void *s)
{
	cu_with_ctx0(true);
	ck_assert_uint_eq(SYM(fn_event_record, "cuEventRecord")(e, s), 0);
	cu_with_ctx0(false);
}

static void cu_event_free(void *e)
{
	ck_assert_uint_eq(SYM(fn_destroy, "cuEventDestroy_v2")(e), 0);
}

static void cu_without_stream_ids(void)
{
	vt_point_at_double("cuda/libcuda.so.1");
	SYM(fn_v_s, "gpuar_fake_cuda_hide")("cuStreamGetId");
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

static void cu_fault_with(void *s, unsigned int code)
{
	ck_assert_uint_eq(SYM(fn_u_p_u, "gpuar_fake_cuda_fault")(s, code), 0);
}

static void cu_reset_device(int device)
{
	ck_assert_uint_eq(SYM(fn_i_i, "cuDevicePrimaryCtxReset_v2")(device), 0);
}

static void cu_caller_on(int device)
{
	void *ctx = NULL;

	ck_assert_uint_eq(SYM(fn_retain, "cuDevicePrimaryCtxRetain")(&ctx, device), 0);
	ck_assert_uint_eq(SYM(fn_push, "cuCtxPushCurrent_v2")(ctx), 0);
}

static void cu_caller_off(int device)
{
	void *ctx = NULL;

	ck_assert_uint_eq(SYM(fn_pop, "cuCtxPopCurrent_v2")(&ctx), 0);
	ck_assert_uint_eq(SYM(fn_i_i, "cuDevicePrimaryCtxRelease_v2")(device), 0);
}

static void cu_drop_writes(void *s, unsigned int n)
{
	ck_assert_uint_eq(SYM(fn_u_p_u, "gpuar_fake_cuda_drop_writes")(s, n), 0);
}

/* Each CUresult after which the context never stores again. */
static const unsigned int cu_sticky[] = {
	4,	/* CUDA_ERROR_DEINITIALIZED */
	214,	/* CUDA_ERROR_ECC_UNCORRECTABLE */
	220,	/* CUDA_ERROR_NVLINK_UNCORRECTABLE */
	700,	/* CUDA_ERROR_ILLEGAL_ADDRESS */
	709,	/* CUDA_ERROR_CONTEXT_IS_DESTROYED */
	710,	/* CUDA_ERROR_ASSERT */
	719,	/* CUDA_ERROR_LAUNCH_FAILED */
	911,	/* CUDA_ERROR_EXTERNAL_DEVICE */
	999,	/* CUDA_ERROR_UNKNOWN */
};

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
	.event_new = cu_event_new,
	.event_record = cu_event_record,
	.event_free = cu_event_free,
	.per_thread_stream = CU_STREAM_PER_THREAD_HANDLE,
	.without_stream_ids = cu_without_stream_ids,
	.fault_with = cu_fault_with,
	.sticky_codes = cu_sticky,
	.nsticky = (int)(sizeof(cu_sticky) / sizeof(cu_sticky[0])),
	.reset_device = cu_reset_device,
	.drop_writes = cu_drop_writes,
	.caller_on = cu_caller_on,
	.caller_off = cu_caller_off,
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
	cu_stream_free(s);	/* returns at once; the store still lands */
	vt_wait_reached(l, 0, target);
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

typedef unsigned int (*fn_write_value)(void *, uint64_t, uint64_t, unsigned int);

/*
 * Every store is preceded by an explicit system-scope barrier: the v2
 * write documents no fence of its own, and v2 refuses the flag that
 * v1 used to drop it.
 */
START_TEST(stores_come_behind_an_explicit_barrier)
{
	void *s = cu_stream_new(0);
	uint64_t dev = gpuar_vendor_line_device_address(vline);

	for (uint32_t i = 0; i < 4; i++)
		ck_assert_int_eq(gpuar_cuda_record(vline, i, s, NULL, &vdiag), 0);
	ck_assert_int_eq(gpuar_cuda_stream_wait_word(vline, 7, s, 0, &vdiag), 0);
	cu_stream_free(s);
	ck_assert_uint_eq(SYM(fn_u64_v, "gpuar_fake_cuda_unfenced_writes")(), 0);
	/* the double is as strict as v2: NO_MEMORY_BARRIER (1) is refused */
	s = cu_stream_new(0);
	ck_assert_uint_eq(SYM(fn_write_value, "cuStreamWriteValue64_v2")(s, dev, 1, 1),
			  1 /* CUDA_ERROR_INVALID_VALUE */);
	cu_stream_free(s);
}
END_TEST

typedef unsigned int (*fn_begin_capture_mode)(void *, unsigned int);

/*
 * A capture in the global mode (torch.cuda.graph) on this very thread:
 * the backend's own status queries (an unguarded poll wait, a flag wait's
 * backstop) run in the relaxed mode, so the capture stays valid and the
 * waits complete as they would without it.
 */
START_TEST(global_capture_survives_the_backends_queries)
{
	const char *plans[] = { "poll", FLAG_PLAN };
	void *c = cu_stream_new(0), *s = cu_stream_new(0), *graph = NULL;

	for (uint32_t i = 0; i < 2; i++) {
		struct gpuar_plan plan = vt_plan(plans[i]);
		struct gpuar_vendor_completion out;

		cu_work(s, 30 * MS);
		ck_assert_uint_eq(SYM(fn_begin_capture_mode, "cuStreamBeginCapture_v2")(
					  c, CU_CAPTURE_MODE_GLOBAL), 0);
		ck_assert_msg(gpuar_cuda_port_await(vline, 0, s, &plan, 1, 80 + i, NULL,
					       &vdiag) == 0, "%s", vdiag.message);
		out = vt_reap_one(vb);
		ck_assert_uint_eq(out.record.user_data, 80 + i);
		ck_assert_int_eq(out.record.status, 0);
		ck_assert_uint_eq(SYM(fn_end_capture, "cuStreamEndCapture")(c, &graph), 0);
		ck_assert_ptr_nonnull(graph);
		SYM(fn_graph_destroy, "cuGraphDestroy")(graph);
	}
	cu_stream_free(c);
	cu_stream_free(s);
}
END_TEST

/*
 * A driver without cuThreadExchangeStreamCaptureMode: a backstop query
 * during a capture fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, which
 * says nothing about the awaited work: "ask again", never an error record.
 */
START_TEST(capture_errors_mean_not_now)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);	/* 1 ms backstop */
	struct gpuar_vendor_completion out;
	struct gpuar_cuda *cu;
	struct gpuar_vendor_line *l;
	struct gpuar_port *port;
	struct gpuar_error d;
	void *c, *s, *graph = NULL;

	vt_point_at_double(cuda_vt.double_path);
	SYM(fn_v_s, "gpuar_fake_cuda_hide")("cuThreadExchangeStreamCaptureMode");
	ck_assert_msg(gpuar_cuda_open(&cu, 0, &d) == 0, "%s", d.message);
	vt_open_port(&port);
	ck_assert_int_eq(gpuar_cuda_line_alloc(cu, port, &l, &d), 0);
	c = cu_stream_new(0);
	s = cu_stream_new(0);
	cu_work(s, 30 * MS);
	ck_assert_uint_eq(SYM(fn_begin_capture_mode, "cuStreamBeginCapture_v2")(
				  c, CU_CAPTURE_MODE_GLOBAL), 0);
	ck_assert_msg(gpuar_cuda_port_await(l, 0, s, &plan, 1, 90, NULL, &d) == 0, "%s",
		      d.message);
	ck_assert_int_eq(gpuar_cuda_port_reap(cu, port, &out, 1, REAP_TIMEOUT_NS, &d), 1);
	ck_assert_uint_eq(out.record.user_data, 90);
	ck_assert_int_eq(out.record.status, 0);
	ck_assert_int_eq(out.vendor_status, 0);
	/* without the relaxed mode the queries did break the capture */
	ck_assert_uint_eq(SYM(fn_end_capture, "cuStreamEndCapture")(c, &graph),
			  CU_CAPTURE_INVALIDATED);
	ck_assert_int_eq(gpuar_cuda_line_free(l, 1000 * MS, &d), 0);
	gpuar_port_close(port);
	gpuar_cuda_close(cu);
	cu_stream_free(c);
	cu_stream_free(s);
}
END_TEST

struct cu_reaper {
	int n;
	struct gpuar_vendor_completion c;
};

static void *cu_reap_in_thread(void *p)
{
	struct cu_reaper *r = p;
	struct gpuar_error d;

	r->n = gpuar_cuda_port_reap(vb, vport, &r->c, 1, REAP_TIMEOUT_NS, &d);
	return NULL;
}

struct cu_awaiter {
	void *s;
	int rc;
	bool done;
};

static void *cu_await_in_thread(void *p)
{
	struct cu_awaiter *a = p;
	struct gpuar_plan plan = vt_plan("poll");
	struct gpuar_error d;

	a->rc = gpuar_cuda_port_await(vline, 1, a->s, &plan, 1, 101, NULL, &d);
	__atomic_store_n(&a->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A driver call that takes long (here: a stream query the double holds)
 * made by one thread's reap must not hold up another thread's await: the
 * backend never calls the driver while holding the lock awaits share.
 */
START_TEST(slow_driver_query_does_not_block_other_awaits)
{
	struct gpuar_plan plan = vt_plan("poll");	/* queried while reaping */
	struct cu_reaper r = { 0 };
	struct cu_awaiter a = { .s = cu_stream_new(0) };
	void *s = cu_stream_new(0);
	uint64_t *gate = &gpuar_vendor_line_words(vline)[7];
	pthread_t reaper, awaiter;
	int i;

	/* The stream holds until the gate opens, so the reaper's first slice
	 * runs out and it asks the stream however slow the machine (a timed
	 * piece of work could finish before a slow reaper's slice did). */
	ck_assert_int_eq(gpuar_cuda_stream_wait_word(vline, 7, s, 1, &vdiag), 0);
	ck_assert_int_eq(gpuar_cuda_port_await(vline, 0, s, &plan, 1, 100, NULL, &vdiag), 0);
	SYM(fn_v_i, "gpuar_fake_cuda_hold_queries")(1);
	ck_assert_int_eq(pthread_create(&reaper, NULL, cu_reap_in_thread, &r), 0);
	for (i = 0; i < 5000 && !SYM(fn_i_v, "gpuar_fake_cuda_held_queries")(); i++)
		vt_sleep_ms(1);
	ck_assert_msg(i < 5000, "the reaper never queried the stream");
	ck_assert_int_eq(pthread_create(&awaiter, NULL, cu_await_in_thread, &a), 0);
	for (i = 0; i < 5000 && !__atomic_load_n(&a.done, __ATOMIC_ACQUIRE); i++)
		vt_sleep_ms(1);
	ck_assert_msg(a.done, "an await waited for another thread's driver call");
	SYM(fn_v_i, "gpuar_fake_cuda_hold_queries")(0);
	__atomic_store_n(gate, 1, __ATOMIC_RELEASE);
	pthread_join(awaiter, NULL);
	pthread_join(reaper, NULL);
	ck_assert_int_eq(a.rc, 0);
	ck_assert_int_eq(r.n, 1);
	ck_assert_int_eq(r.c.record.status, 0);
	r.c = vt_reap_one(vb);
	ck_assert_int_eq(r.c.record.status, 0);
	cu_stream_free(s);
	cu_stream_free(a.s);
}
END_TEST

typedef unsigned int (*fn_get_nodes)(void *, void **, size_t *);
typedef unsigned int (*fn_instantiate)(void **, void *, unsigned long long);

/*
 * A gpuar completion inside a CUDA graph: each of 1,000 replays
 * completes its own wait, the waits reaching their numbers in launch
 * order.
 */
START_TEST(graph_replays_complete_their_own_waits)
{
	enum { REPLAYS = 1000 };
	struct gpuar_plan plan = vt_plan("poll");
	void *s = cu_stream_new(0), *graph = NULL, *exec = NULL, *done = NULL;
	void *nodes[4];
	size_t n = 4;
	static bool seen[REPLAYS];
	uint32_t reaped = 0;

	/* the replayed work: 100 us captured from a stream */
	ck_assert_uint_eq(SYM(fn_begin_capture_mode, "cuStreamBeginCapture_v2")(
				  s, CU_CAPTURE_MODE_RELAXED), 0);
	cu_work(s, 100000);
	ck_assert_uint_eq(SYM(fn_end_capture, "cuStreamEndCapture")(s, &graph), 0);
	ck_assert_uint_eq(SYM(fn_get_nodes, "cuGraphGetNodes")(graph, nodes, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_msg(gpuar_cuda_graph_add_completion(vline, 5, graph,
			(struct CUgraphNode_st *const *)nodes, 1,
			(struct CUgraphNode_st **)&done, &vdiag) == 0, "%s",
		      vdiag.message);
	cu_with_ctx0(true);
	ck_assert_uint_eq(SYM(fn_instantiate, "cuGraphInstantiateWithFlags")(
				  &exec, graph, 0), 0);
	cu_with_ctx0(false);
	for (uint32_t i = 0; i < REPLAYS; i++) {
		uint64_t target = 0;

		ck_assert_msg(gpuar_cuda_graph_launch(vline, 5, exec, done, s, &plan,
						      4, i, &target, &vdiag) == 0,
			      "replay %u: %s", i, vdiag.message);
		ck_assert_uint_eq(target, (uint64_t)i + 1);
	}
	while (reaped < REPLAYS) {
		struct gpuar_vendor_completion out[32];
		int got = gpuar_cuda_port_reap(vb, vport, out, 32, REAP_TIMEOUT_NS, &vdiag);

		ck_assert_msg(got > 0, "reap: %d %s", got, vdiag.message);
		for (int k = 0; k < got; k++) {
			uint64_t i = out[k].record.user_data;

			ck_assert_uint_lt(i, REPLAYS);
			ck_assert(!seen[i]);
			seen[i] = true;
			ck_assert_int_eq(out[k].record.status, 0);
			ck_assert(vt_word_reached(vline, 5, i + 1));
		}
		reaped += (uint32_t)got;
	}
	ck_assert_uint_eq(gpuar_vendor_line_words(vline)[5], REPLAYS);
	ck_assert_uint_eq(SYM(fn_destroy, "cuGraphExecDestroy")(exec), 0);
	SYM(fn_graph_destroy, "cuGraphDestroy")(graph);
	cu_stream_free(s);
}
END_TEST

struct cu_launcher {
	struct gpuar_vendor_line *line;
	void *exec, *node, *s;
	uint64_t user_data;
	bool started;
	int rc;
};

static void *cu_launch_in_thread(void *p)
{
	struct cu_launcher *l = p;
	struct gpuar_plan plan = vt_plan("poll");
	struct gpuar_error d;

	__atomic_store_n(&l->started, true, __ATOMIC_RELEASE);
	l->rc = gpuar_cuda_graph_launch(l->line, 0, l->exec, l->node, l->s, &plan,
					4, l->user_data, NULL, &d);
	return NULL;
}

/*
 * One executable graph launched through two lines from two threads: the
 * patch of its node and the launch are one step per graph, so the second
 * thread waits while the first one's patch is held in the driver (the
 * double holds cuGraphExecBatchMemOpNodeSetParams), and each launch
 * stores into its own line. Unlocked, the second patch would replace the
 * first before its launch, whose store would then go to the other line.
 * The check that the second thread stays out is bounded (500 ms): a
 * negative can only be waited for, and the locked code never needs it.
 */
START_TEST(graph_exec_launched_from_two_threads_is_serialized)
{
	void *graph = NULL, *exec = NULL, *node = NULL;
	struct cu_launcher a = { .line = vline, .s = cu_stream_new(0),
				 .user_data = 1 };
	struct cu_launcher b = { .s = cu_stream_new(0), .user_data = 2 };
	int held = 0, most = 0;
	pthread_t ta, tb;

	ck_assert_msg(gpuar_cuda_line_alloc(vb, vport, &b.line, &vdiag) == 0, "%s",
		      vdiag.message);
	ck_assert_uint_eq(SYM(fn_create, "cuGraphCreate")(&graph, 0), 0);
	ck_assert_msg(gpuar_cuda_graph_add_completion(vline, 0, graph, NULL, 0,
			(struct CUgraphNode_st **)&node, &vdiag) == 0, "%s",
		      vdiag.message);
	cu_with_ctx0(true);
	ck_assert_uint_eq(SYM(fn_instantiate, "cuGraphInstantiateWithFlags")(
				  &exec, graph, 0), 0);
	cu_with_ctx0(false);
	a.exec = b.exec = exec;
	a.node = b.node = node;
	SYM(fn_v_i, "gpuar_fake_cuda_hold_exec_updates")(1);
	ck_assert_int_eq(pthread_create(&ta, NULL, cu_launch_in_thread, &a), 0);
	for (int i = 0; i < 10000 && !held; i++) {
		held = SYM(fn_i_v, "gpuar_fake_cuda_held_exec_updates")();
		vt_sleep_ms(1);
	}
	ck_assert_int_eq(held, 1);
	ck_assert_int_eq(pthread_create(&tb, NULL, cu_launch_in_thread, &b), 0);
	while (!__atomic_load_n(&b.started, __ATOMIC_ACQUIRE))
		vt_sleep_ms(1);
	for (int i = 0; i < 500 && most < 2; i++) {
		held = SYM(fn_i_v, "gpuar_fake_cuda_held_exec_updates")();
		most = held > most ? held : most;
		vt_sleep_ms(1);
	}
	SYM(fn_v_i, "gpuar_fake_cuda_hold_exec_updates")(0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	ck_assert_int_eq(most, 1);
	ck_assert_int_eq(a.rc, 0);
	ck_assert_int_eq(b.rc, 0);
	ck_assert_uint_eq(SYM(fn_u64_v, "gpuar_fake_cuda_exec_overlaps")(), 0);
	for (int i = 0; i < 2; i++) {
		struct gpuar_vendor_completion c = vt_reap_one(vb);

		ck_assert_int_eq(c.record.status, 0);
	}
	vt_wait_reached(vline, 0, 1);
	vt_wait_reached(b.line, 0, 1);
	ck_assert_int_eq(gpuar_cuda_line_free(b.line, 1000 * MS, &vdiag), 0);
	ck_assert_uint_eq(SYM(fn_destroy, "cuGraphExecDestroy")(exec), 0);
	SYM(fn_graph_destroy, "cuGraphDestroy")(graph);
	cu_stream_free(a.s);
	cu_stream_free(b.s);
}
END_TEST

/* A driver without graph memop nodes: a coded refusal, not a crash. */
START_TEST(graph_completion_refused_without_memop_nodes)
{
	struct gpuar_cuda *cu;
	struct gpuar_vendor_line *l;
	struct gpuar_port *port;
	struct gpuar_error d;
	void *graph = NULL, *node = NULL;

	vt_point_at_double(cuda_vt.double_path);
	SYM(fn_v_s, "gpuar_fake_cuda_hide")("cuGraphExecBatchMemOpNodeSetParams");
	ck_assert_msg(gpuar_cuda_open(&cu, 0, &d) == 0, "%s", d.message);
	vt_open_port(&port);
	ck_assert_int_eq(gpuar_cuda_line_alloc(cu, port, &l, &d), 0);
	ck_assert_uint_eq(SYM(fn_create, "cuGraphCreate")(&graph, 0), 0);
	ck_assert_int_eq(gpuar_cuda_graph_add_completion(l, 0, graph, NULL, 0,
			(struct CUgraphNode_st **)&node, &d), -EOPNOTSUPP);
	ck_assert_uint_eq(d.code, GPUAR_E_BACKEND);
	ck_assert_msg(strstr(d.message, "cuGraphExecBatchMemOpNodeSetParams"), "%s",
		      d.message);
	SYM(fn_graph_destroy, "cuGraphDestroy")(graph);
	ck_assert_int_eq(gpuar_cuda_line_free(l, 0, &d), 0);
	gpuar_port_close(port);
	gpuar_cuda_close(cu);
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
	ck_assert_int_eq(gpuar_cuda_port_await(vline, 0, s, &plan, 1, 1, NULL, &vdiag), 0);
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

/*
 * The caller destroys the awaited stream before its work is done (the
 * header asks it not to): the driver returns at once and still runs the
 * work (cuStreamDestroy), so the store lands; the backstop, whose status
 * query now meets CUDA_ERROR_INVALID_HANDLE, asks the context's own
 * stream instead, and the await completes when the word arrives, not
 * with an error.
 */
START_TEST(awaited_stream_destroyed_before_its_store_lands)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);	/* 1 ms backstop */
	struct gpuar_port_stats st = { .size = sizeof(st) };
	struct gpuar_vendor_completion c;
	void *s = cu_stream_new(0);
	uint64_t before, target;

	ck_assert_int_eq(gpuar_cuda_stream_wait_word(vline, 6, s, 1, &vdiag), 0);
	ck_assert_int_eq(gpuar_cuda_port_await(vline, 0, s, &plan, 4, 95, &target,
					  &vdiag), 0);
	cu_stream_free(s);
	ck_assert_int_eq(gpuar_port_stats(vport, &st), 0);
	before = st.submitted;
	/* backstops resolved after the destroy: each asked the dead handle */
	for (int i = 0; i < 500 && st.submitted < before + 2; i++) {
		ck_assert_int_eq(gpuar_cuda_port_reap(vb, vport, &c, 1, 20 * (int64_t)MS,
						 &vdiag), -ETIME);
		ck_assert_int_eq(gpuar_port_stats(vport, &st), 0);
	}
	ck_assert_uint_ge(st.submitted, before + 2);
	__atomic_store_n(&gpuar_vendor_line_words(vline)[6], 1, __ATOMIC_RELEASE);
	c = vt_reap_one(vb);
	ck_assert_uint_eq(c.record.user_data, 95);
	ck_assert_msg(c.record.status == 0, "status %d: %s", c.record.status,
		      vdiag.message);
	ck_assert(vt_word_reached(vline, 0, target));
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
		tcase_add_test(tc, capture_errors_mean_not_now);
		tcase_add_test(tc, graph_completion_refused_without_memop_nodes);
		suite_add_tcase(suite, tc);
	}
	tcase_add_checked_fixture(own, vt_setup, vt_teardown);
	tcase_set_timeout(own, 30);
	if (!real_driver) {
		tcase_add_test(own, lines_hold_the_primary_context_until_freed);
		tcase_add_test(own, stores_come_behind_an_explicit_barrier);
		tcase_add_test(own, slow_driver_query_does_not_block_other_awaits);
		tcase_add_test(own, awaited_stream_destroyed_before_its_store_lands);
		tcase_add_test(own, graph_exec_launched_from_two_threads_is_serialized);
	}
	tcase_add_test(own, global_capture_survives_the_backends_queries);
	tcase_add_test(own, graph_replays_complete_their_own_waits);
	tcase_add_test(own, reverse_wait_compares_in_wrapping_order);
	tcase_add_test(own, sticky_error_names_the_first_failure);
	suite_add_tcase(suite, own);
	vt_add_open_cases(suite);
	vt_add_cases(suite);
	vt_add_fail_cases(suite);
	/* Every case runs on both engines: nothing is left out. */
	return unit_run_tap(suite, &(struct unit_skips){ 0 });
}
