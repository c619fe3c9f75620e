/* SPDX-License-Identifier: MIT */
/*
 * Test cases shared by the CUDA and HIP backend tests
 * (selftests/unit/test_cuda_backend.c, test_hip_backend.c). Each test file
 * fills a struct vt with its backend's calls and the test double's
 * controls, then adds these cases to its suite. Check runs every test in
 * its own process, so the double's state (sticky errors, hidden entry
 * points, environment) never leaks between tests.
 *
 * The port engine comes from GPUAR_TEST_ENGINE: "user" (default, the host)
 * or "kernel" (inside the VMs, where /dev/gpuar exists).
 *
 * Timing: work items are 10-50 ms; tests assert order and outcome, never
 * durations.
 */
#ifndef GPUAR_VENDOR_CASES_H
#define GPUAR_VENDOR_CASES_H

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gpuar/gpuar.h>
#include <gpuar/vendor.h>

#include "unit.h"
#include "unit_tap.h"

#define MS 1000000ull
#define REAP_TIMEOUT_NS ((int64_t)10000 * (int64_t)MS)	/* a hang, not a slow run */

/* The backend under test and its double, as plain functions. */
struct vt {
	const char *name;
	const char *library_env;	/* GPUAR_CUDA_LIBRARY */
	const char *double_path;	/* relative to the doubles dir */
	unsigned int fault_code;	/* the launch failure the double injects */
	const char *fault_name;
	int (*open)(void **b, int ordinal, struct gpuar_error *diag);
	void (*close)(void *b);
	int (*line_alloc)(void *b, struct gpuar_port *port,
			  struct gpuar_vendor_line **line, struct gpuar_error *diag);
	int (*line_free)(struct gpuar_vendor_line *line, uint64_t timeout_ns,
			 struct gpuar_error *diag);
	int (*record)(struct gpuar_vendor_line *line, uint32_t slot, void *s,
		      uint64_t *target, struct gpuar_error *diag);
	int (*await)(struct gpuar_vendor_line *line, uint32_t slot, void *s,
		     const struct gpuar_plan *plan, uint64_t point, uint64_t ud,
		     uint64_t *target, struct gpuar_error *diag);
	int (*reap)(void *b, struct gpuar_port *port,
		    struct gpuar_vendor_completion *out, uint32_t max,
		    int64_t timeout_ns, struct gpuar_error *diag);
	int (*wait_word)(struct gpuar_vendor_line *line, uint32_t slot, void *s,
			 uint64_t target, struct gpuar_error *diag);
	int (*source_init)(struct gpuar_vendor_source *src,
			   struct gpuar_vendor_line *line, uint32_t slot, void *s,
			   struct gpuar_error *diag);
	int (*wait)(struct gpuar_waiter *w, struct gpuar_vendor_source *src,
		    const struct gpuar_plan *plan, uint64_t point, uint64_t ud,
		    struct gpuar_record *rec, struct gpuar_error *diag);
	/* The double (or driver) directly. */
	void *(*stream_new)(int device);
	void (*stream_free)(void *s);
	void (*work)(void *s, uint64_t ns);
	void (*fault)(void *s);
	void (*capture)(void *s, int on);
	int (*registered_pages)(void);
	uint64_t (*unsafe_unregisters)(void);
	void *default_stream;	/* CU_STREAM_LEGACY, GPUAR_HIP_STREAM_LEGACY */
	int (*await_event)(struct gpuar_vendor_line *line, uint32_t slot,
			   void *event, const struct gpuar_plan *plan,
			   uint64_t point, uint64_t ud, uint64_t *target,
			   struct gpuar_error *diag);
	void *(*event_new)(void);
	void (*event_record)(void *event, void *s);
	void (*event_free)(void *event);
	/* CU_STREAM_PER_THREAD, hipStreamPerThread: a stream per thread. */
	void *per_thread_stream;
	/* Point the backend at a driver without stream ids (before open). */
	void (*without_stream_ids)(void);
	/*
	 * The double's failures (vendor_fail_cases.h; NULL under the real
	 * driver): a fault with @code (sticky_codes lists the vendor's codes
	 * after which the domain never stores again); a reset of @device (its
	 * context or device: cuDevicePrimaryCtxReset, hipDeviceReset) made by
	 * the calling thread; the next @n write-values on @s store nothing.
	 */
	void (*fault_with)(void *s, unsigned int code);
	const unsigned int *sticky_codes;
	int nsticky;
	void (*reset_device)(int device);
	void (*drop_writes)(void *s, unsigned int n);
	/* Make @device current on the calling thread as a program that works
	 * there would (CUDA: push its primary context; HIP: hipSetDevice);
	 * caller_off undoes it. */
	void (*caller_on)(int device);
	void (*caller_off)(int device);
	/* The queue (gpuar_cuda_queue_*, gpuar_hip_queue_*). */
	int (*queue_open)(void **q, int ordinal, struct gpuar_error *diag);
	int (*queue_await)(void *q, void *s, uint64_t *ud,
			   struct gpuar_error *diag);
	int (*queue_reap)(void *q, struct gpuar_vendor_completion *out,
			  uint32_t max, int64_t timeout_ns,
			  struct gpuar_error *diag);
	int (*queue_fd)(const void *q);
	int (*queue_close)(void *q, uint64_t timeout_ns,
			   struct gpuar_error *diag);
};

/*
 * The backend's own calls as the plain functions struct vt holds: the
 * public API differs between vendors only in its prefix and its handle
 * and stream types. VT_BACKEND_CALLS(cuda, struct gpuar_cuda,
 * struct CUstream_st) defines vt_cuda_open...; VT_BACKEND_FIELDS(cuda)
 * fills a struct vt with them.
 */
#define VT_BACKEND_CALLS(pfx, handle_t, stream_t, event_t)                     \
	static int vt_##pfx##_open(void **b, int ordinal,                      \
				   struct gpuar_error *d)                      \
	{                                                                      \
		return gpuar_##pfx##_open((handle_t **)b, ordinal, d);         \
	}                                                                      \
	static void vt_##pfx##_close(void *b)                                  \
	{                                                                      \
		gpuar_##pfx##_close(b);                                        \
	}                                                                      \
	static int vt_##pfx##_line_alloc(void *b, struct gpuar_port *p,        \
					 struct gpuar_vendor_line **l,         \
					 struct gpuar_error *d)                \
	{                                                                      \
		return gpuar_##pfx##_line_alloc(b, p, l, d);                   \
	}                                                                      \
	static int vt_##pfx##_record(struct gpuar_vendor_line *l,              \
				     uint32_t slot, void *s, uint64_t *t,      \
				     struct gpuar_error *d)                    \
	{                                                                      \
		return gpuar_##pfx##_record(l, slot, (stream_t *)s, t, d);     \
	}                                                                      \
	static int vt_##pfx##_await(struct gpuar_vendor_line *l,               \
				    uint32_t slot, void *s,                    \
				    const struct gpuar_plan *p,                \
				    uint64_t point, uint64_t ud, uint64_t *t,  \
				    struct gpuar_error *d)                     \
	{                                                                      \
		return gpuar_##pfx##_port_await(l, slot, (stream_t *)s, p,     \
						point, ud, t, d);              \
	}                                                                      \
	static int vt_##pfx##_reap(void *b, struct gpuar_port *p,              \
				   struct gpuar_vendor_completion *out,        \
				   uint32_t max, int64_t timeout,              \
				   struct gpuar_error *d)                      \
	{                                                                      \
		return gpuar_##pfx##_port_reap(b, p, out, max, timeout, d);    \
	}                                                                      \
	static int vt_##pfx##_wait_word(struct gpuar_vendor_line *l,           \
					uint32_t slot, void *s,                \
					uint64_t target,                       \
					struct gpuar_error *d)                 \
	{                                                                      \
		return gpuar_##pfx##_stream_wait_word(l, slot, (stream_t *)s,  \
						      target, d);              \
	}                                                                      \
	static int vt_##pfx##_source_init(struct gpuar_vendor_source *src,     \
					  struct gpuar_vendor_line *l,         \
					  uint32_t slot, void *s,              \
					  struct gpuar_error *d)               \
	{                                                                      \
		return gpuar_##pfx##_source_init(src, l, slot, (stream_t *)s,  \
						 d);                           \
	}                                                                      \
	static int vt_##pfx##_await_event(struct gpuar_vendor_line *l,         \
					  uint32_t slot, void *e,              \
					  const struct gpuar_plan *p,          \
					  uint64_t point, uint64_t ud,         \
					  uint64_t *t, struct gpuar_error *d)  \
	{                                                                      \
		return gpuar_##pfx##_port_await_event(l, slot, (event_t *)e, p,\
						      point, ud, t, d);        \
	}                                                                      \
	static int vt_##pfx##_queue_open(void **q, int ordinal,                \
					 struct gpuar_error *d)                \
	{                                                                      \
		return gpuar_##pfx##_queue_open(                               \
			(struct gpuar_##pfx##_queue **)q, ordinal, d);         \
	}                                                                      \
	static int vt_##pfx##_queue_await(void *q, void *s, uint64_t *ud,      \
					  struct gpuar_error *d)               \
	{                                                                      \
		return gpuar_##pfx##_queue_await(q, (stream_t *)s, ud, d);     \
	}                                                                      \
	static int vt_##pfx##_queue_reap(void *q,                              \
					 struct gpuar_vendor_completion *out,  \
					 uint32_t max, int64_t timeout,        \
					 struct gpuar_error *d)                \
	{                                                                      \
		return gpuar_##pfx##_queue_reap(q, out, max, timeout, d);      \
	}                                                                      \
	static int vt_##pfx##_queue_fd(const void *q)                          \
	{                                                                      \
		return gpuar_##pfx##_queue_fd(q);                              \
	}                                                                      \
	static int vt_##pfx##_queue_close(void *q, uint64_t timeout,           \
					  struct gpuar_error *d)               \
	{                                                                      \
		return gpuar_##pfx##_queue_close(q, timeout, d);               \
	}

#define VT_BACKEND_FIELDS(pfx)                                                 \
	.open = vt_##pfx##_open, .close = vt_##pfx##_close,                    \
	.line_alloc = vt_##pfx##_line_alloc,                                   \
	.line_free = gpuar_##pfx##_line_free, .record = vt_##pfx##_record,     \
	.await = vt_##pfx##_await, .reap = vt_##pfx##_reap,                    \
	.wait_word = vt_##pfx##_wait_word,                                     \
	.source_init = vt_##pfx##_source_init,                                 \
	.wait = gpuar_##pfx##_wait_blocking,                                   \
	.await_event = vt_##pfx##_await_event,                                 \
	.queue_open = vt_##pfx##_queue_open,                                   \
	.queue_await = vt_##pfx##_queue_await,                                 \
	.queue_reap = vt_##pfx##_queue_reap, .queue_fd = vt_##pfx##_queue_fd,  \
	.queue_close = vt_##pfx##_queue_close

static const struct vt *V;	/* set by the test file's main */
/* Running against the vendor's real library, not the double. */
static bool vt_real_driver;

/* The double counts registered pages; the real driver cannot say. */
#define vt_assert_pages(n)                                              \
	do {                                                            \
		int pages_ = V->registered_pages();                     \
		if (pages_ >= 0)                                        \
			ck_assert_int_eq(pages_, (n));                  \
	} while (0)

/* ---------------------------------------------------------- fixture */

static void *vb;
static struct gpuar_port *vport;
static struct gpuar_vendor_line *vline;
static struct gpuar_error vdiag;

/* Where the doubles are: $GPUAR_TEST_DOUBLES, else next to this binary. */
static void vt_point_at_double(const char *rel)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	const char *env = getenv("GPUAR_TEST_DOUBLES");
	ssize_t n;

	if (getenv(V->library_env))	/* the caller chose (e.g. a real driver) */
		return;
	if (env && *env) {
		snprintf(dir, sizeof(dir), "%s", env);
	} else {
		n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
		ck_assert_int_gt(n, 0);
		dir[n] = '\0';
		*strrchr(dir, '/') = '\0';	/* .../selftests/unit */
		strncat(dir, "/../../doubles", sizeof(dir) - strlen(dir) - 1);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	setenv(V->library_env, path, 1);
}

/*
 * A symbol of the library the backend loads (the double's controls, raw
 * driver calls); NULL if absent. The handle stays open for the test's
 * life, so the library is the same instance the backend gets.
 */
static void *vt_sym(const char *name)
{
	static void *dl;

	if (!dl)
		dl = dlopen(getenv(V->library_env), RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(dl, "cannot open %s", getenv(V->library_env));
	return dlsym(dl, name);
}

static enum gpuar_engine vt_engine(void)
{
	const char *e = getenv("GPUAR_TEST_ENGINE");

	if (e && !strcmp(e, "kernel"))
		return GPUAR_ENGINE_KERNEL;
	return GPUAR_ENGINE_USER;
}

static void vt_open_port(struct gpuar_port **port)
{
	struct gpuar_port_options o = { .engine = vt_engine(),
					.flags = GPUAR_PORT_STRICT };
	struct gpuar_error d;

	ck_assert_msg(gpuar_port_open(port, &o, &d) == 0, "%s", d.message);
}

static void vt_setup(void)
{
	vt_point_at_double(V->double_path);
	ck_assert_msg(V->open(&vb, 0, &vdiag) == 0, "%s", vdiag.message);
	vt_open_port(&vport);
	ck_assert_msg(V->line_alloc(vb, vport, &vline, &vdiag) == 0, "%s",
		      vdiag.message);
}

static void vt_teardown(void)
{
	if (vline)
		ck_assert_msg(V->line_free(vline, 5000 * MS, &vdiag) == 0, "%s",
			      vdiag.message);
	vline = NULL;
	gpuar_port_close(vport);
	vport = NULL;
	V->close(vb);
	vb = NULL;
}

static struct gpuar_plan vt_plan(const char *text)
{
	struct gpuar_plan p;
	struct gpuar_error d;

	ck_assert_msg(gpuar_plan_from_text(text, &p, &d) == 0, "%s", d.message);
	return p;
}

#define FLAG_PLAN "flag:park_us=100,backstop_us=1000"
#define PREDICT_PLAN FLAG_PLAN \
	"+predict:margin_us=150,min_sleep_us=20,max_sleep_us=50000,window=8"

static struct gpuar_vendor_completion vt_reap_one(void *b)
{
	struct gpuar_vendor_completion c;
	int n = V->reap(b, vport, &c, 1, REAP_TIMEOUT_NS, &vdiag);

	ck_assert_msg(n == 1, "reap: %d %s", n, vdiag.message);
	return c;
}

static bool vt_word_reached(const struct gpuar_vendor_line *l, uint32_t slot,
			    uint64_t target)
{
	uint64_t w = __atomic_load_n(&gpuar_vendor_line_words(l)[slot],
				     __ATOMIC_ACQUIRE);

	return (int64_t)(w - target) >= 0;
}

static void vt_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait (bounded: a hang, not a slow run) until the slot reaches @target. */
static void vt_wait_reached(const struct gpuar_vendor_line *l, uint32_t slot,
			    uint64_t target)
{
	for (int i = 0; i < 10000 && !vt_word_reached(l, slot, target); i++)
		vt_sleep_ms(1);
	ck_assert(vt_word_reached(l, slot, target));
}

/* ------------------------------------------------------------ cases */

START_TEST(line_page_is_registered_with_a_device_address)
{
	uint64_t *words = gpuar_vendor_line_words(vline);

	vt_assert_pages(1);
	ck_assert_ptr_nonnull(words);
	ck_assert_uint_eq((uintptr_t)words % (uintptr_t)sysconf(_SC_PAGESIZE), 0);
	ck_assert_uint_ne(gpuar_vendor_line_device_address(vline), 0);
	/* the doubles' device addresses differ from the host's, as they may */
	if (!vt_real_driver)
		ck_assert_uint_ne(gpuar_vendor_line_device_address(vline),
				  (uint64_t)(uintptr_t)words);
	ck_assert_int_eq(V->line_free(vline, 0, &vdiag), 0);
	vline = NULL;
	vt_assert_pages(0);
}
END_TEST

START_TEST(record_and_await_one_stream)
{
	void *s = V->stream_new(0);
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	struct gpuar_vendor_completion c;
	uint64_t target = 0;

	struct gpuar_port_stats st = { .size = sizeof(st) };
	uint64_t submitted;

	/* held on a gate until a backstop has expired, however loaded the
	 * machine (an unloaded one would see it expire during the work) */
	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	V->work(s, 30 * MS);
	ck_assert_msg(V->await(vline, 0, s, &plan, 7, 0xabc, &target, &vdiag) == 0,
		      "%s", vdiag.message);
	submitted = gpuar_now_ns();
	ck_assert_uint_eq(target, 1);
	ck_assert(!vt_word_reached(vline, 0, target));	/* behind the gate */
	/* the 1 ms backstop expires: the stream is asked, says pending, and
	 * the wait is re-armed keeping its original start */
	for (int i = 0; i < 500; i++) {
		ck_assert_int_eq(gpuar_port_stats(vport, &st), 0);
		if (st.submitted >= 2)
			break;
		ck_assert_int_eq(V->reap(vb, vport, &c, 1, 20 * (int64_t)MS, &vdiag),
				 -ETIME);
	}
	ck_assert_uint_ge(st.submitted, 2);
	__atomic_store_n(&gpuar_vendor_line_words(vline)[6], 1, __ATOMIC_RELEASE);
	c = vt_reap_one(vb);
	ck_assert_uint_le(c.record.start_ns, submitted);
	ck_assert_uint_eq(c.record.user_data, 0xabc);
	ck_assert_int_eq(c.record.status, 0);
	ck_assert_int_eq(c.vendor_status, 0);
	ck_assert_uint_eq(c.record.point, 7);
	ck_assert(c.record.outcome == GPUAR_OUTCOME_EXACT ||
		  c.record.outcome == GPUAR_OUTCOME_LATE);
	ck_assert(vt_word_reached(vline, 0, target));
	ck_assert_uint_eq(gpuar_vendor_line_sequence(vline, 0), 1);
	V->stream_free(s);
}
END_TEST

START_TEST(eight_streams_on_one_line)
{
	void *s[GPUAR_LINE_SLOTS];
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	bool seen[GPUAR_LINE_SLOTS] = { false };
	uint32_t pos[GPUAR_LINE_SLOTS];
	struct gpuar_vendor_line *gate;

	/*
	 * Every stream first waits on a gate word the CPU opens once all are
	 * queued, so their work starts together however slowly the queueing
	 * runs (TCG, a debug kernel): only the work's length orders them.
	 */
	ck_assert_msg(V->line_alloc(vb, vport, &gate, &vdiag) == 0, "%s",
		      vdiag.message);
	for (uint32_t i = 0; i < GPUAR_LINE_SLOTS; i++)
		s[i] = V->stream_new(0);
	for (uint32_t i = 0; i < GPUAR_LINE_SLOTS; i++) {
		ck_assert_int_eq(V->wait_word(gate, 0, s[i], 1, &vdiag), 0);
		/*
		 * slot 0 has the longest work (360 ms), slot 7 the shortest
		 * (10 ms): far enough apart that a loaded debug guest, which
		 * held a reaper 35 ms once, cannot reorder them
		 */
		V->work(s[i], (uint64_t)(10 + 50 * (GPUAR_LINE_SLOTS - 1 - i)) * MS);
		ck_assert_msg(V->await(vline, i, s[i], &plan, 1, 100 + i, NULL,
				       &vdiag) == 0, "%s", vdiag.message);
	}
	__atomic_store_n(&gpuar_vendor_line_words(gate)[0], 1, __ATOMIC_RELEASE);
	for (uint32_t n = 0; n < GPUAR_LINE_SLOTS; n++) {
		struct gpuar_vendor_completion c = vt_reap_one(vb);
		uint32_t i = (uint32_t)(c.record.user_data - 100);

		ck_assert_uint_lt(i, GPUAR_LINE_SLOTS);
		ck_assert(!seen[i]);
		seen[i] = true;
		pos[i] = n;
		ck_assert_int_eq(c.record.status, 0);
		ck_assert(vt_word_reached(vline, i, 1));
	}
	/* 350 ms apart: the shortest work is reaped before the longest */
	ck_assert_uint_lt(pos[GPUAR_LINE_SLOTS - 1], pos[0]);
	ck_assert_int_eq(V->line_free(gate, 1000 * MS, &vdiag), 0);
	for (uint32_t i = 0; i < GPUAR_LINE_SLOTS; i++)
		V->stream_free(s[i]);
}
END_TEST

START_TEST(many_lines_on_one_stream)
{
	enum { LINES = 24 };
	struct gpuar_vendor_line *l[LINES];
	void *s = V->stream_new(0);
	struct gpuar_plan plan = vt_plan("poll");
	uint64_t got = 0;

	for (int i = 0; i < LINES; i++) {
		ck_assert_msg(V->line_alloc(vb, vport, &l[i], &vdiag) == 0, "%s",
			      vdiag.message);
		V->work(s, 1 * MS);
		ck_assert_msg(V->await(l[i], 3, s, &plan, 2, (uint64_t)i, NULL,
				       &vdiag) == 0, "%s", vdiag.message);
	}
	vt_assert_pages(LINES + 1);
	for (int n = 0; n < LINES; n++) {
		struct gpuar_vendor_completion c = vt_reap_one(vb);

		ck_assert_int_eq(c.record.status, 0);
		ck_assert_uint_lt(c.record.user_data, LINES);
		got |= 1ull << c.record.user_data;
	}
	ck_assert_uint_eq(got, (1ull << LINES) - 1);
	for (int i = 0; i < LINES; i++) {
		ck_assert(vt_word_reached(l[i], 3, 1));
		ck_assert_int_eq(V->line_free(l[i], 1000 * MS, &vdiag), 0);
	}
	vt_assert_pages(1);
	V->stream_free(s);
}
END_TEST

START_TEST(sequence_numbers_wrap_around)
{
	void *s = V->stream_new(0);
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	const uint64_t expect[] = { UINT64_MAX - 1, UINT64_MAX, 0, 1, 2 };

	ck_assert_int_eq(gpuar_vendor_line_set_sequence(vline, 5, UINT64_MAX - 2), 0);
	for (int i = 0; i < 5; i++) {
		struct gpuar_vendor_completion c;
		uint64_t target;

		V->work(s, 10 * MS);
		ck_assert_msg(V->await(vline, 5, s, &plan, 3, (uint64_t)i, &target,
				       &vdiag) == 0, "%s", vdiag.message);
		ck_assert_uint_eq(target, expect[i]);
		c = vt_reap_one(vb);
		ck_assert_int_eq(c.record.status, 0);
		ck_assert_uint_eq(c.record.user_data, (uint64_t)i);
		ck_assert_uint_eq(gpuar_vendor_line_words(vline)[5], expect[i]);
	}
	V->stream_free(s);
}
END_TEST

static void vt_await_plan(const char *text, bool block)
{
	void *s = V->stream_new(0);
	struct gpuar_plan plan = vt_plan(text);
	struct gpuar_vendor_completion c;
	uint64_t target;

	for (int i = 0; i < 3; i++) {	/* predict needs samples to sleep */
		V->work(s, 40 * MS);
		ck_assert_msg(V->await(vline, 1, s, &plan, 9, 50 + (uint64_t)i,
				       &target, &vdiag) == 0, "%s", vdiag.message);
		/* block synchronized inside await: the work is already done */
		if (block)
			ck_assert(vt_word_reached(vline, 1, target));
		c = vt_reap_one(vb);
		ck_assert_uint_eq(c.record.user_data, 50 + (uint64_t)i);
		ck_assert_int_eq(c.record.status, 0);
		ck_assert(vt_word_reached(vline, 1, target));
		if (block)
			ck_assert_int_eq(c.record.outcome, GPUAR_OUTCOME_IMMEDIATE);
		else
			ck_assert(c.record.outcome == GPUAR_OUTCOME_EXACT ||
				  c.record.outcome == GPUAR_OUTCOME_LATE);
	}
	V->stream_free(s);
}

START_TEST(await_block_plan)
{
	vt_await_plan("block", true);
}
END_TEST

START_TEST(await_poll_plan)
{
	vt_await_plan("poll", false);
}
END_TEST

START_TEST(await_flag_plan)
{
	vt_await_plan(FLAG_PLAN, false);
}
END_TEST

START_TEST(await_flag_predict_plan)
{
	vt_await_plan(PREDICT_PLAN, false);
}
END_TEST

START_TEST(fault_becomes_error_record_with_vendor_code)
{
	void *s = V->stream_new(0);
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);	/* 1 ms backstop */
	struct gpuar_vendor_completion c;

	/*
	 * The stream is held on a gate word until the await is in: a fault
	 * that ran first would refuse the await itself (the error is sticky),
	 * which a loaded machine made happen.
	 */
	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	V->work(s, 10 * MS);
	V->fault(s);
	ck_assert_int_eq(V->await(vline, 0, s, &plan, 4, 77, NULL, &vdiag), 0);
	__atomic_store_n(&gpuar_vendor_line_words(vline)[6], 1, __ATOMIC_RELEASE);
	c = vt_reap_one(vb);
	ck_assert_uint_eq(c.record.user_data, 77);
	ck_assert_int_eq(c.record.status, -EIO);
	ck_assert_int_eq(c.vendor_status, (int32_t)V->fault_code);
	ck_assert_str_eq(c.vendor_name, V->fault_name);
	ck_assert_uint_eq(vdiag.code, GPUAR_E_BACKEND);
	ck_assert_msg(strstr(vdiag.message, V->fault_name), "%s", vdiag.message);
	ck_assert_msg(strstr(vdiag.message, "poisoned"), "%s", vdiag.message);
	/* its store never landed and never will: freeing must leak the line */
	ck_assert_int_eq(V->line_free(vline, 50 * MS, &vdiag), -EIO);
	ck_assert_msg(strstr(vdiag.message, "leaked"), "%s", vdiag.message);
	vline = NULL;
	vt_assert_pages(1);
	ck_assert_uint_eq(V->unsafe_unregisters(), 0);
}
END_TEST

START_TEST(fault_under_poll_plan_becomes_error_record)
{
	void *s = V->stream_new(0);
	struct gpuar_plan plan = vt_plan("poll");	/* no backstop of its own */
	struct gpuar_vendor_completion c;

	/* held on a gate until the await is in (see the case above) */
	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	V->work(s, 10 * MS);
	V->fault(s);
	ck_assert_int_eq(V->await(vline, 0, s, &plan, 4, 78, NULL, &vdiag), 0);
	__atomic_store_n(&gpuar_vendor_line_words(vline)[6], 1, __ATOMIC_RELEASE);
	c = vt_reap_one(vb);
	ck_assert_uint_eq(c.record.user_data, 78);
	ck_assert_int_eq(c.record.status, -EIO);
	ck_assert_int_eq(c.vendor_status, (int32_t)V->fault_code);
	ck_assert_str_eq(c.vendor_name, V->fault_name);
	ck_assert_int_eq(V->line_free(vline, 10 * MS, &vdiag), -EIO);
	vline = NULL;
}
END_TEST

START_TEST(bare_stream_zero_refused)
{
	uint64_t target = 0;

	ck_assert_int_eq(V->record(vline, 0, NULL, &target, &vdiag), -EINVAL);
	ck_assert_uint_eq(vdiag.code, GPUAR_E_BACKEND);
	ck_assert_msg(strstr(vdiag.message, "bare stream 0"), "%s", vdiag.message);
	ck_assert_uint_eq(gpuar_vendor_line_sequence(vline, 0), 0);
}
END_TEST

START_TEST(explicit_default_stream_handle_accepted)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	struct gpuar_vendor_completion c;

	V->work(V->default_stream, 10 * MS);
	ck_assert_msg(V->await(vline, 2, V->default_stream, &plan, 1, 5, NULL,
			       &vdiag) == 0, "%s", vdiag.message);
	c = vt_reap_one(vb);
	ck_assert_int_eq(c.record.status, 0);
	ck_assert(vt_word_reached(vline, 2, 1));
}
END_TEST

START_TEST(foreign_stream_refused)
{
	void *s = V->stream_new(1);	/* device 1; the backend has device 0 */

	if (!s) {
		printf("foreign_stream_refused: one device only, not checked\n");
		return;
	}
	ck_assert_int_eq(V->record(vline, 0, s, NULL, &vdiag), -EXDEV);
	ck_assert_uint_eq(vdiag.code, GPUAR_E_BACKEND);
	ck_assert_uint_eq(gpuar_vendor_line_sequence(vline, 0), 0);
	V->stream_free(s);
}
END_TEST

START_TEST(capturing_stream_refused)
{
	void *s = V->stream_new(0);
	struct gpuar_plan plan = vt_plan("poll");

	V->capture(s, 1);
	ck_assert_int_eq(V->await(vline, 0, s, &plan, 1, 1, NULL, &vdiag), -EBUSY);
	ck_assert_uint_eq(vdiag.code, GPUAR_E_BACKEND);
	ck_assert_msg(strstr(vdiag.message, "captured"), "%s", vdiag.message);
	V->capture(s, 0);
	ck_assert_int_eq(V->record(vline, 0, s, NULL, &vdiag), 0);
	V->stream_free(s);
}
END_TEST

START_TEST(second_stream_cannot_take_a_busy_slot)
{
	void *a = V->stream_new(0), *b = V->stream_new(0);

	V->work(a, 30 * MS);
	ck_assert_int_eq(V->record(vline, 0, a, NULL, &vdiag), 0);
	ck_assert_int_eq(V->record(vline, 0, b, NULL, &vdiag), -EBUSY);
	ck_assert_int_eq(V->record(vline, 1, b, NULL, &vdiag), 0);
	vt_wait_reached(vline, 0, 1);	/* a's store landed: the slot is free */
	ck_assert_int_eq(V->record(vline, 0, b, NULL, &vdiag), 0);
	V->stream_free(a);
	V->stream_free(b);
}
END_TEST

START_TEST(free_line_waits_for_pending_work)
{
	void *s = V->stream_new(0);
	uint64_t target;

	V->work(s, 30 * MS);
	ck_assert_int_eq(V->record(vline, 4, s, &target, &vdiag), 0);
	ck_assert(!vt_word_reached(vline, 4, target));
	ck_assert_msg(V->line_free(vline, 5000 * MS, &vdiag) == 0, "%s",
		      vdiag.message);
	vline = NULL;
	vt_assert_pages(0);
	ck_assert_uint_eq(V->unsafe_unregisters(), 0);
	V->stream_free(s);
}
END_TEST

START_TEST(free_line_refused_while_awaits_unreaped)
{
	void *s = V->stream_new(0);
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);

	V->work(s, 10 * MS);
	ck_assert_int_eq(V->await(vline, 0, s, &plan, 1, 9, NULL, &vdiag), 0);
	ck_assert_int_eq(V->line_free(vline, 0, &vdiag), -EBUSY);
	vt_assert_pages(1);
	vt_reap_one(vb);
	V->stream_free(s);
	/* teardown frees it now */
}
END_TEST

START_TEST(free_line_times_out_and_leaks)
{
	void *s = V->stream_new(0);
	uint64_t *w = gpuar_vendor_line_words(vline);

	/* the stream waits on slot 6, which nobody stores in time */
	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	ck_assert_int_eq(V->record(vline, 0, s, NULL, &vdiag), 0);
	ck_assert_int_eq(V->line_free(vline, 20 * MS, &vdiag), -ETIMEDOUT);
	ck_assert_msg(strstr(vdiag.message, "leaked"), "%s", vdiag.message);
	vt_assert_pages(1);
	__atomic_store_n(&w[6], 1, __ATOMIC_RELEASE);	/* the page is still there */
	vt_wait_reached(vline, 0, 1);
	V->stream_free(s);
	ck_assert_uint_eq(V->unsafe_unregisters(), 0);
	vline = NULL;
}
END_TEST

/*
 * A line the port holds busy for a moment (a wait on it that the port's
 * watcher ends 20 ms later) is freed once it is idle, within the free's
 * timeout, not leaked at the first -EBUSY.
 */
START_TEST(free_line_waits_out_a_busy_moment)
{
	struct gpuar_port_options o = {
		.engine = GPUAR_ENGINE_USER, .flags = GPUAR_PORT_WATCHER,
	};
	struct gpuar_soft_producer *prod;
	struct gpuar_vendor_line *l;
	struct gpuar_word_wait w = { .user_data = 3, .target = 1, .point = 9 };
	struct gpuar_port *p;

	ck_assert_int_eq(gpuar_port_open(&p, &o, NULL), 0);
	ck_assert_int_eq(V->line_alloc(vb, p, &l, &vdiag), 0);
	ck_assert_int_eq(gpuar_plan_from_text("flag:park_us=1000,backstop_us=1000000",
					      &w.plan, NULL), 0);
	w.line = gpuar_line_id(gpuar_vendor_line_gpuar(l));
	w.slot = 5;
	ck_assert_int_eq(gpuar_submit_word_waits(p, &w, 1, NULL), 1);
	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(gpuar_soft_store_after(prod, &gpuar_vendor_line_words(l)[5],
						1, 20 * MS), 0);
	ck_assert_msg(V->line_free(l, 1000 * MS, &vdiag) == 0, "%s", vdiag.message);
	gpuar_soft_producer_free(prod);
	gpuar_port_close(p);
}
END_TEST

/* A refused argument sets the code: no stale one from an earlier call. */
START_TEST(refused_arguments_set_the_code)
{
	struct gpuar_vendor_completion c;
	struct gpuar_error d;

	d.code = GPUAR_E_BACKEND;
	ck_assert_int_eq(V->record(NULL, 0, NULL, NULL, &d), -EINVAL);
	ck_assert_uint_eq(d.code, GPUAR_E_INVALID_ARGUMENT);
	d.code = GPUAR_E_BACKEND;
	ck_assert_int_eq(V->wait_word(NULL, 0, NULL, 1, &d), -EINVAL);
	ck_assert_uint_eq(d.code, GPUAR_E_INVALID_ARGUMENT);
	d.code = GPUAR_E_BACKEND;
	ck_assert_int_eq(V->reap(NULL, vport, &c, 1, 0, &d), -EINVAL);
	ck_assert_uint_eq(d.code, GPUAR_E_INVALID_ARGUMENT);
}
END_TEST

/* UINT64_MAX is "no deadline": the free waits for the late store. */
START_TEST(free_line_without_deadline_waits)
{
	struct gpuar_soft_producer *prod;
	void *s = V->stream_new(0);
	uint64_t *w = gpuar_vendor_line_words(vline);

	ck_assert_int_eq(gpuar_soft_producer_new(&prod), 0);
	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	ck_assert_int_eq(V->record(vline, 0, s, NULL, &vdiag), 0);
	ck_assert_int_eq(gpuar_soft_store_after(prod, &w[6], 1, 30 * MS), 0);
	ck_assert_msg(V->line_free(vline, UINT64_MAX, &vdiag) == 0, "%s",
		      vdiag.message);
	vline = NULL;
	gpuar_soft_producer_free(prod);
	V->stream_free(s);
}
END_TEST

START_TEST(reverse_direction_cpu_store_releases_stream)
{
	void *s = V->stream_new(0);
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	struct gpuar_vendor_completion c;
	uint64_t *w = gpuar_vendor_line_words(vline);

	ck_assert_int_eq(V->wait_word(vline, 7, s, 2, &vdiag), 0);
	ck_assert_int_eq(V->await(vline, 0, s, &plan, 1, 11, NULL, &vdiag), 0);
	vt_sleep_ms(20);
	ck_assert_int_eq(V->reap(vb, vport, &c, 1, 0, &vdiag), -EAGAIN);
	__atomic_store_n(&w[7], 1, __ATOMIC_RELEASE);	/* not yet: 1 < 2 */
	vt_sleep_ms(20);
	ck_assert(!vt_word_reached(vline, 0, 1));
	__atomic_store_n(&w[7], 2, __ATOMIC_RELEASE);
	c = vt_reap_one(vb);
	ck_assert_uint_eq(c.record.user_data, 11);
	ck_assert_int_eq(c.record.status, 0);
	/* a stream with a reverse wait outlives the line */
	ck_assert_int_eq(V->line_free(vline, 1000 * MS, &vdiag), 0);
	vline = NULL;
	V->stream_free(s);
}
END_TEST

/*
 * The order that once crashed: every stream destroyed before the line.
 * Freeing must judge the line from its own page, never by asking a
 * destroyed stream (ASan reports that use-after-free in the double).
 */
START_TEST(free_line_after_its_streams)
{
	void *waiter = V->stream_new(0);
	void *writer = V->stream_new(0);
	uint64_t *w = gpuar_vendor_line_words(vline);

	ck_assert_int_eq(V->wait_word(vline, 5, waiter, 1, &vdiag), 0);
	V->work(waiter, 10 * MS);
	ck_assert_int_eq(V->record(vline, 0, waiter, NULL, &vdiag), 0);
	V->work(writer, 10 * MS);
	ck_assert_int_eq(V->record(vline, 1, writer, NULL, &vdiag), 0);
	__atomic_store_n(&w[5], 1, __ATOMIC_RELEASE);
	V->stream_free(waiter);
	V->stream_free(writer);
	ck_assert_msg(V->line_free(vline, 1000 * MS, &vdiag) == 0, "%s",
		      vdiag.message);
	vline = NULL;
	vt_assert_pages(0);
	ck_assert_uint_eq(V->unsafe_unregisters(), 0);
}
END_TEST

/* Each reverse wait holds a fence until the device stops reading. */
START_TEST(reverse_waits_bounded_by_fences)
{
	void *s = V->stream_new(0);
	uint64_t *w = gpuar_vendor_line_words(vline);

	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(V->wait_word(vline, 4, s, 1, &vdiag), 0);
	ck_assert_int_eq(V->wait_word(vline, 4, s, 1, &vdiag), -ENOSPC);
	ck_assert_uint_eq(vdiag.code, GPUAR_E_BACKEND);
	__atomic_store_n(&w[4], 1, __ATOMIC_RELEASE);
	ck_assert_int_eq(V->record(vline, 0, s, NULL, &vdiag), 0);
	vt_wait_reached(vline, 0, 1);	/* every fence before it landed */
	ck_assert_int_eq(V->wait_word(vline, 4, s, 1, &vdiag), 0);
	V->stream_free(s);
	ck_assert_int_eq(V->line_free(vline, 1000 * MS, &vdiag), 0);
	vline = NULL;
}
END_TEST

START_TEST(wait_driver_source_each_plan)
{
	const char *plans[] = { "block", "poll", FLAG_PLAN, PREDICT_PLAN };
	struct gpuar_waiter *w;
	void *s = V->stream_new(0);

	ck_assert_int_eq(gpuar_waiter_new(&w, NULL, NULL), 0);
	for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); i++) {
		struct gpuar_plan plan = vt_plan(plans[i]);
		struct gpuar_vendor_source src;
		struct gpuar_record rec;

		V->work(s, 15 * MS);
		ck_assert_int_eq(V->source_init(&src, vline, 2, s, &vdiag), 0);
		ck_assert_msg(V->wait(w, &src, &plan, 5, i, &rec, &vdiag) == 0,
			      "%s: %s", plans[i], vdiag.message);
		ck_assert_int_eq(rec.status, 0);
		ck_assert(rec.outcome == GPUAR_OUTCOME_EXACT ||
			  rec.outcome == GPUAR_OUTCOME_LATE);
		/* the store recorded at init is there and reached */
		ck_assert(src.armed);
		ck_assert(vt_word_reached(vline, 2, src.target));
	}
	gpuar_waiter_free(w);
	V->stream_free(s);
}
END_TEST

START_TEST(wait_driver_source_reports_vendor_error)
{
	struct gpuar_waiter *w;
	struct gpuar_vendor_source src;
	struct gpuar_record rec;
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	struct gpuar_soft_producer *gate;
	void *s = V->stream_new(0);

	ck_assert_int_eq(gpuar_waiter_new(&w, NULL, NULL), 0);
	ck_assert_int_eq(gpuar_soft_producer_new(&gate), 0);
	/*
	 * Held on a gate until the source has recorded its store (a fault
	 * that ran first would refuse that); the gate opens while the wait
	 * runs, or before it starts: either way the wait sees the fault.
	 */
	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	V->work(s, 10 * MS);
	V->fault(s);
	ck_assert_int_eq(V->source_init(&src, vline, 2, s, &vdiag), 0);
	gpuar_soft_store_after(gate, &gpuar_vendor_line_words(vline)[6], 1, MS);
	ck_assert_int_lt(V->wait(w, &src, &plan, 5, 1, &rec, &vdiag), 0);
	gpuar_soft_producer_free(gate);
	ck_assert_uint_eq(vdiag.code, GPUAR_E_BACKEND);
	ck_assert_msg(strstr(vdiag.message, V->fault_name), "%s", vdiag.message);
	gpuar_waiter_free(w);
	/* its store never lands: the line must leak */
	ck_assert_int_eq(V->line_free(vline, 10 * MS, &vdiag), -EIO);
	vline = NULL;
}
END_TEST

/*
 * "The work enqueued so far": a source checks its own store, never
 * whether the whole stream is idle, so work enqueued after it (here a
 * stream held on a gate until the wait is over) does not hold the wait.
 */
START_TEST(wait_driver_source_ignores_work_enqueued_later)
{
	const char *plans[] = { "poll", FLAG_PLAN };
	struct gpuar_waiter *w;
	void *s = V->stream_new(0);

	ck_assert_int_eq(gpuar_waiter_new(&w, NULL, NULL), 0);
	for (uint32_t i = 0; i < 2; i++) {
		struct gpuar_plan plan = vt_plan(plans[i]);
		struct gpuar_vendor_source src;
		struct gpuar_record rec;

		V->work(s, 10 * MS);
		ck_assert_int_eq(V->source_init(&src, vline, 2, s, &vdiag), 0);
		ck_assert_int_eq(V->wait_word(vline, 6, s, i + 1, &vdiag), 0);
		ck_assert_msg(V->wait(w, &src, &plan, 5, i, &rec, &vdiag) == 0,
			      "%s: %s", plans[i], vdiag.message);
		ck_assert_int_eq(rec.status, 0);
		ck_assert(vt_word_reached(vline, 2, src.target));
		__atomic_store_n(&gpuar_vendor_line_words(vline)[6], i + 1,
				 __ATOMIC_RELEASE);
	}
	gpuar_waiter_free(w);
	V->stream_free(s);
}
END_TEST

/* Thread B records into the slot thread A's per-thread stream holds. */
struct vt_ptds_arg {
	uint32_t slot;
	uint64_t work_ns;
	int rc;
	uint64_t target;
};

static void *vt_ptds_record(void *p)
{
	struct vt_ptds_arg *a = p;
	struct gpuar_error d;

	if (a->work_ns)
		V->work(V->per_thread_stream, a->work_ns);
	a->rc = V->record(vline, a->slot, V->per_thread_stream, &a->target, &d);
	return NULL;
}

/*
 * One handle, one stream per thread: two threads storing into one slot
 * through CU_STREAM_PER_THREAD / hipStreamPerThread use two streams, and
 * the second must wait its turn (its store could land first and end the
 * first thread's wait while its work still runs).
 */
START_TEST(per_thread_streams_of_two_threads_are_told_apart)
{
	struct vt_ptds_arg a = { .slot = 0, .work_ns = 40 * MS };
	struct vt_ptds_arg b = { .slot = 0 };
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, vt_ptds_record, &a), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(a.rc, 0);
	ck_assert_int_eq(pthread_create(&t, NULL, vt_ptds_record, &b), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(b.rc, -EBUSY);
	vt_wait_reached(vline, 0, a.target);
	/* the same thread's stream may go on recording */
	ck_assert_int_eq(V->record(vline, 1, V->per_thread_stream, NULL, &vdiag), 0);
	ck_assert_int_eq(V->record(vline, 1, V->per_thread_stream, NULL, &vdiag), 0);
}
END_TEST

/* An await on a per-thread stream, reaped on another thread's behalf. */
START_TEST(per_thread_stream_await_reaped)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	struct gpuar_vendor_completion c;

	V->work(V->per_thread_stream, 20 * MS);
	ck_assert_msg(V->await(vline, 3, V->per_thread_stream, &plan, 1, 33,
			       NULL, &vdiag) == 0, "%s", vdiag.message);
	c = vt_reap_one(vb);
	ck_assert_uint_eq(c.record.user_data, 33);
	ck_assert_int_eq(c.record.status, 0);
	ck_assert(vt_word_reached(vline, 3, 1));
}
END_TEST

/*
 * Two GPUs on one port, one backend handle each: whichever handle reaps
 * resolves every await on the port, so the other device's line is free
 * to go once its records are out.
 */
START_TEST(two_devices_on_one_port_reaped_through_either)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	struct gpuar_vendor_line *l1;
	void *b1 = NULL, *s0 = V->stream_new(0), *s1 = V->stream_new(1);
	bool seen[2] = { false, false };

	if (!s1) {
		printf("two_devices_on_one_port: one device only, not checked\n");
		V->stream_free(s0);
		return;
	}
	ck_assert_msg(V->open(&b1, 1, &vdiag) == 0, "%s", vdiag.message);
	ck_assert_msg(V->line_alloc(b1, vport, &l1, &vdiag) == 0, "%s",
		      vdiag.message);
	V->work(s0, 20 * MS);
	V->work(s1, 20 * MS);
	ck_assert_int_eq(V->await(vline, 0, s0, &plan, 1, 500, NULL, &vdiag), 0);
	ck_assert_int_eq(V->await(l1, 0, s1, &plan, 1, 501, NULL, &vdiag), 0);
	for (int i = 0; i < 2; i++) {	/* both through device 0's handle */
		struct gpuar_vendor_completion c = vt_reap_one(vb);

		ck_assert_uint_ge(c.record.user_data, 500);
		ck_assert_uint_le(c.record.user_data, 501);
		ck_assert_int_eq(c.record.status, 0);
		ck_assert_int_ne(c.record.outcome, GPUAR_OUTCOME_TIMEOUT);
		seen[c.record.user_data - 500] = true;
	}
	ck_assert(seen[0] && seen[1]);
	ck_assert_msg(V->line_free(l1, 1000 * MS, &vdiag) == 0, "%s",
		      vdiag.message);
	V->close(b1);
	V->stream_free(s0);
	V->stream_free(s1);
}
END_TEST

/*
 * A caller that reads records itself (gpuar_port_reap here; read() or an
 * io_uring read alike) hands each to gpuar_vendor_resolve: the backstop
 * timeouts of late work are resubmitted, and the completion comes out
 * once, resolved.
 */
START_TEST(raw_records_resolved_by_the_caller)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);	/* 1 ms backstop */
	struct gpuar_vendor_completion c;
	void *s = V->stream_new(0);
	int got = 0, resubmitted = 0;

	/* the stream is held on a gate until a backstop has been resolved */
	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	ck_assert_int_eq(V->await(vline, 1, s, &plan, 2, 42, NULL, &vdiag), 0);
	while (!got) {
		struct gpuar_record rec;
		int n = gpuar_port_reap(vport, &rec, 1, REAP_TIMEOUT_NS);

		ck_assert_int_eq(n, 1);
		got = gpuar_vendor_resolve(vport, &rec, &c, &vdiag);
		ck_assert_int_ge(got, 0);
		if (!got && !resubmitted++)
			__atomic_store_n(&gpuar_vendor_line_words(vline)[6], 1,
					 __ATOMIC_RELEASE);
	}
	ck_assert_int_gt(resubmitted, 0);
	ck_assert_uint_eq(c.record.user_data, 42);
	ck_assert_int_eq(c.record.status, 0);
	ck_assert_int_ne(c.record.outcome, GPUAR_OUTCOME_TIMEOUT);
	/* the await is gone: the line can be freed */
	ck_assert_msg(V->line_free(vline, 1000 * MS, &vdiag) == 0, "%s",
		      vdiag.message);
	vline = NULL;
	V->stream_free(s);
}
END_TEST

/*
 * A reap asked for more than 32 completions returns every queued one up
 * to @max in one call, not 32 at the most.
 */
START_TEST(reap_returns_up_to_max_in_one_call)
{
	enum { N = 100 };
	static struct gpuar_vendor_completion out[N + 1];
	struct gpuar_port_stats st = { .size = sizeof(st) };
	struct gpuar_plan plan = vt_plan("poll");
	void *s = V->stream_new(0);
	static bool got[N];
	uint64_t target = 0;
	int n, i;

	for (i = 0; i < N; i++)
		ck_assert_msg(V->await(vline, 0, s, &plan, 1, (uint64_t)i, &target,
				       &vdiag) == 0, "%s", vdiag.message);
	vt_wait_reached(vline, 0, target);
	/* every record queued, so the reap has them all at hand */
	for (i = 0; i < 10000; i++) {
		ck_assert_int_ge(gpuar_port_process(vport), 0);
		ck_assert_int_eq(gpuar_port_stats(vport, &st), 0);
		if (st.queued >= N)
			break;
		vt_sleep_ms(1);
	}
	ck_assert_uint_eq(st.queued, N);
	n = V->reap(vb, vport, out, N + 1, REAP_TIMEOUT_NS, &vdiag);
	ck_assert_msg(n == N, "reap: %d of %d (%s)", n, N, vdiag.message);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(out[i].record.status, 0);
		ck_assert_uint_lt(out[i].record.user_data, N);
		ck_assert(!got[out[i].record.user_data]);
		got[out[i].record.user_data] = true;
	}
	V->stream_free(s);
}
END_TEST

/*
 * The backends' await registry (backends/vendor/vendor_await.c, in the
 * static library the tests link): the awaits it holds, the lookups of a
 * record's await, and the entries those lookups have stepped over so far.
 */
uint64_t gv_registry_awaits(void);
uint64_t gv_registry_steps(void);
uint64_t gv_registry_lookups(void);

/*
 * A burst of awaits on one port: each reaped record finds its await in a
 * few steps, not by scanning every await still pending, so the burst
 * costs steps linear in its size (counted, never timed). Judged per
 * lookup: where the port's default backstop (1 s) passes before the
 * double's stream has made every store (the debug guest under TCG), a
 * timed-out await is resubmitted and its next record looked up again
 * (885 lookups for 500 awaits there).
 */
START_TEST(burst_of_awaits_finds_each_in_a_few_steps)
{
	/*
	 * Well under any port's limit on waits, and large enough that a scan
	 * of the pending awaits (N * N / 2 steps) is 60 times the bound.
	 */
	enum { N = 500 };
	static struct gpuar_vendor_completion out[256];
	struct gpuar_plan plan = vt_plan("poll");
	void *s = V->stream_new(0);
	uint64_t target = 0, steps, lookups;
	uint32_t reaped = 0;

	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	for (uint32_t i = 0; i < N; i++)
		ck_assert_msg(V->await(vline, 0, s, &plan, 1, i, &target,
				       &vdiag) == 0, "await %u: %s", i,
			      vdiag.message);
	ck_assert_uint_eq(gv_registry_awaits(), N);
	steps = gv_registry_steps();
	lookups = gv_registry_lookups();
	__atomic_store_n(&gpuar_vendor_line_words(vline)[6], 1, __ATOMIC_RELEASE);
	while (reaped < N) {
		int n = V->reap(vb, vport, out, 256, REAP_TIMEOUT_NS, &vdiag);

		ck_assert_msg(n > 0, "reap: %d %s", n, vdiag.message);
		for (int k = 0; k < n; k++)
			ck_assert_int_eq(out[k].record.status, 0);
		reaped += (uint32_t)n;
	}
	steps = gv_registry_steps() - steps;
	lookups = gv_registry_lookups() - lookups;
	ck_assert_msg(lookups >= N && steps <= 4 * lookups,
		      "%llu steps in %llu lookups to find %d awaits",
		      (unsigned long long)steps, (unsigned long long)lookups,
		      N);
	ck_assert_uint_eq(gv_registry_awaits(), 0);
	V->stream_free(s);
}
END_TEST

/*
 * Closing a port drops its awaits still unreaped, so none of them can
 * match a record of a port opened later, however alike (the same
 * user_data and point, and, where the allocator hands the closed port's
 * memory out again, the same address).
 */
START_TEST(closed_ports_awaits_never_match_a_new_port)
{
	static struct gpuar_vendor_line *orphan;	/* its port is gone */
	struct gpuar_plan plan = vt_plan("poll");
	struct gpuar_word_wait w = { .user_data = 7, .target = 1, .point = 1 };
	struct gpuar_vendor_completion c;
	struct gpuar_port *a, *b;
	struct gpuar_line *line;
	struct gpuar_record rec;
	void *s = V->stream_new(0);
	uint64_t target = 0;

	vt_open_port(&a);
	ck_assert_msg(V->line_alloc(vb, a, &orphan, &vdiag) == 0, "%s",
		      vdiag.message);
	ck_assert_int_eq(V->await(orphan, 0, s, &plan, 1, 7, &target, &vdiag), 0);
	vt_wait_reached(orphan, 0, target);	/* landed, never reaped */
	ck_assert_uint_eq(gv_registry_awaits(), 1);
	gpuar_port_close(a);
	ck_assert_uint_eq(gv_registry_awaits(), 0);
	/* a new port's record with the same user_data and point */
	vt_open_port(&b);
	if (b != a)
		printf("closed_ports_awaits_never_match_a_new_port: the new port "
		       "is elsewhere; only the drop is checked\n");
	ck_assert_int_eq(gpuar_line_alloc(b, &line), 0);
	w.line = gpuar_line_id(line);
	w.plan = plan;
	ck_assert_int_eq(gpuar_submit_word_waits(b, &w, 1, NULL), 1);
	__atomic_store_n(&gpuar_line_words(line)[0], 1, __ATOMIC_RELEASE);
	ck_assert_int_eq(gpuar_port_reap(b, &rec, 1, REAP_TIMEOUT_NS), 1);
	ck_assert_int_eq(gpuar_vendor_resolve(b, &rec, &c, &vdiag), 1);
	ck_assert_uint_eq(c.record.user_data, 7);
	ck_assert_int_eq(c.record.status, 0);
	ck_assert_int_eq(c.vendor_status, 0);
	ck_assert_int_eq(gpuar_line_free(b, line), 0);
	gpuar_port_close(b);
	V->stream_free(s);
}
END_TEST

/*
 * The port closed before its line, with an await unreaped and the store
 * still to land: the line keeps its page (the device stores into it, not
 * into memory mapped later), refuses new stores and waits with -EBADF,
 * and is freed as ever once the device is done with it.
 */
START_TEST(port_closed_before_its_line)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	struct gpuar_vendor_line *l;
	struct gpuar_port *p;
	struct gpuar_error d;
	void *s = V->stream_new(0);
	uint64_t target = 0, *words;

	vt_open_port(&p);
	ck_assert_msg(V->line_alloc(vb, p, &l, &d) == 0, "%s", d.message);
	words = gpuar_vendor_line_words(l);
	V->work(s, 50 * MS);
	ck_assert_int_eq(V->await(l, 2, s, &plan, 1, 5, &target, &d), 0);
	gpuar_port_close(p);
	vt_assert_pages(2);	/* the fixture's line and this one */
	ck_assert_int_eq(V->record(l, 2, s, NULL, &d), -EBADF);
	ck_assert_uint_eq(d.code, GPUAR_E_BACKEND);
	ck_assert_int_eq(V->await(l, 3, s, &plan, 1, 6, NULL, &d), -EBADF);
	/* the store lands in the kept page */
	vt_wait_reached(l, 2, target);
	ck_assert_uint_eq(__atomic_load_n(&words[2], __ATOMIC_ACQUIRE), target);
	ck_assert_msg(V->line_free(l, 5000 * MS, &d) == 0, "%s", d.message);
	vt_assert_pages(1);
	ck_assert_uint_eq(V->unsafe_unregisters(), 0);
	V->stream_free(s);
}
END_TEST

/* An event the caller recorded: the wait completes once it does. */
START_TEST(await_event_completes_when_the_event_does)
{
	const char *plans[] = { "poll", FLAG_PLAN, "block" };
	void *s = V->stream_new(0), *e = V->event_new();

	for (uint32_t i = 0; i < 3; i++) {
		struct gpuar_plan plan = vt_plan(plans[i]);
		struct gpuar_vendor_completion c;
		uint64_t target = 0;

		V->work(s, 30 * MS);
		V->event_record(e, s);
		/* held after the record: not awaited, so not waited for */
		ck_assert_int_eq(V->wait_word(vline, 6, s, i + 1, &vdiag), 0);
		ck_assert_msg(V->await_event(vline, 4, e, &plan, 3, 60 + i,
					     &target, &vdiag) == 0, "%s: %s",
			      plans[i], vdiag.message);
		ck_assert_uint_eq(target, i + 1);
		c = vt_reap_one(vb);
		ck_assert_uint_eq(c.record.user_data, 60 + i);
		ck_assert_int_eq(c.record.status, 0);
		ck_assert(vt_word_reached(vline, 4, target));
		__atomic_store_n(&gpuar_vendor_line_words(vline)[6], i + 1,
				 __ATOMIC_RELEASE);
	}
	V->event_free(e);
	V->stream_free(s);
}
END_TEST

/*
 * The event may be destroyed once the await is made, its record still
 * pending: the drivers release an event only when the work on it is done
 * ("the call does not block on completion of the event").
 */
START_TEST(await_event_outlives_the_destroyed_event)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	void *s = V->stream_new(0), *e = V->event_new();
	struct gpuar_vendor_completion c;
	uint64_t target = 0;

	/* held until the event is gone: its record cannot have fired */
	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	V->event_record(e, s);
	ck_assert_msg(V->await_event(vline, 4, e, &plan, 3, 80, &target,
				     &vdiag) == 0, "%s", vdiag.message);
	V->event_free(e);
	ck_assert(!vt_word_reached(vline, 4, target));
	__atomic_store_n(&gpuar_vendor_line_words(vline)[6], 1,
			 __ATOMIC_RELEASE);
	c = vt_reap_one(vb);
	ck_assert_uint_eq(c.record.user_data, 80);
	ck_assert_int_eq(c.record.status, 0);
	ck_assert(vt_word_reached(vline, 4, target));
	V->stream_free(s);
}
END_TEST

/*
 * Event awaits on the same slot index of two lines are unrelated: the
 * second event's await completes while the first event's stream is still
 * held, instead of queueing behind it on a shared private stream. A
 * further event await on the first line's slot follows its pending store
 * on the same private stream (in order), never refused as another stream.
 */
START_TEST(unrelated_event_awaits_complete_independently)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	void *s1 = V->stream_new(0), *s2 = V->stream_new(0);
	void *e1 = V->event_new(), *e2 = V->event_new(), *e3 = V->event_new();
	struct gpuar_vendor_completion c;
	struct gpuar_vendor_line *other;
	bool seen[2] = { false, false };

	ck_assert_msg(V->line_alloc(vb, vport, &other, &vdiag) == 0, "%s",
		      vdiag.message);
	ck_assert_int_eq(V->wait_word(vline, 6, s1, 1, &vdiag), 0);	/* held */
	V->event_record(e1, s1);
	V->event_record(e2, s2);
	V->event_record(e3, s2);
	ck_assert_int_eq(V->await_event(vline, 4, e1, &plan, 3, 1, NULL, &vdiag), 0);
	ck_assert_int_eq(V->await_event(other, 4, e2, &plan, 3, 2, NULL, &vdiag), 0);
	ck_assert_msg(V->await_event(vline, 4, e3, &plan, 3, 3, NULL, &vdiag) == 0,
		      "%s", vdiag.message);
	c = vt_reap_one(vb);
	ck_assert_uint_eq(c.record.user_data, 2);
	ck_assert_int_eq(c.record.status, 0);
	ck_assert(!vt_word_reached(vline, 4, 1));	/* e1 still held */
	__atomic_store_n(&gpuar_vendor_line_words(vline)[6], 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++) {
		c = vt_reap_one(vb);
		ck_assert_uint_ge(c.record.user_data, 1);
		ck_assert_uint_le(c.record.user_data, 3);
		ck_assert_uint_ne(c.record.user_data, 2);
		ck_assert_int_eq(c.record.status, 0);
		seen[c.record.user_data == 3] = true;
	}
	ck_assert(seen[0] && seen[1]);
	ck_assert(vt_word_reached(vline, 4, 2));
	ck_assert_msg(V->line_free(other, 1000 * MS, &vdiag) == 0, "%s",
		      vdiag.message);
	V->event_free(e1);
	V->event_free(e2);
	V->event_free(e3);
	V->stream_free(s1);
	V->stream_free(s2);
}
END_TEST

/*
 * The event's stream fails: an error record with the vendor's code. The
 * stream is held on a word until the record and the await are enqueued,
 * so the fault comes after both however slowly this thread runs.
 */
START_TEST(await_event_of_a_failed_stream_is_an_error_record)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	void *s = V->stream_new(0), *e = V->event_new();
	struct gpuar_vendor_completion c;

	ck_assert_int_eq(V->wait_word(vline, 6, s, 1, &vdiag), 0);
	V->fault(s);
	V->event_record(e, s);
	ck_assert_msg(V->await_event(vline, 4, e, &plan, 3, 70, NULL,
				     &vdiag) == 0, "%s", vdiag.message);
	__atomic_store_n(&gpuar_vendor_line_words(vline)[6], 1,
			 __ATOMIC_RELEASE);
	c = vt_reap_one(vb);
	ck_assert_uint_eq(c.record.user_data, 70);
	ck_assert_int_eq(c.record.status, -EIO);
	ck_assert_int_eq(c.vendor_status, (int32_t)V->fault_code);
	ck_assert_int_eq(V->line_free(vline, 10 * MS, &vdiag), -EIO);
	vline = NULL;
	V->event_free(e);
}
END_TEST

START_TEST(missing_library_is_a_coded_error)
{
	void *b = NULL;
	struct gpuar_error d;

	setenv(V->library_env, "/nonexistent/gpuar-no-such-driver.so", 1);
	ck_assert_int_eq(V->open(&b, 0, &d), -ENOENT);
	ck_assert_uint_eq(d.code, GPUAR_E_BACKEND);
	ck_assert_msg(strstr(d.message, "gpuar-no-such-driver"), "%s", d.message);
	ck_assert_ptr_null(b);
}
END_TEST

START_TEST(missing_device_is_a_coded_error)
{
	void *b = NULL;
	struct gpuar_error d;

	vt_point_at_double(V->double_path);
	ck_assert_int_eq(V->open(&b, 3, &d), -ENODEV);
	ck_assert_uint_eq(d.code, GPUAR_E_BACKEND);
}
END_TEST

/*
 * The vendor library stays mapped once closed (RTLD_NODELETE): after its
 * init the driver runs threads and exit handlers of its own.
 */
START_TEST(driver_stays_loaded_after_close)
{
	void *b = NULL, *dl;
	struct gpuar_error d;

	vt_point_at_double(V->double_path);
	ck_assert_msg(V->open(&b, 0, &d) == 0, "%s", d.message);
	V->close(b);
	dl = dlopen(getenv(V->library_env), RTLD_NOW | RTLD_NOLOAD);
	ck_assert_msg(dl != NULL, "%s was unloaded", getenv(V->library_env));
	dlclose(dl);
}
END_TEST

/* Without stream ids the per-thread handle cannot be told apart: refused. */
START_TEST(per_thread_handle_refused_without_stream_ids)
{
	struct gpuar_vendor_line *l;
	struct gpuar_port *port;
	void *b = NULL;
	struct gpuar_error d;

	V->without_stream_ids();
	ck_assert_msg(V->open(&b, 0, &d) == 0, "%s", d.message);
	vt_open_port(&port);
	ck_assert_msg(V->line_alloc(b, port, &l, &d) == 0, "%s", d.message);
	ck_assert_int_eq(V->record(l, 0, V->per_thread_stream, NULL, &d), -EINVAL);
	ck_assert_uint_eq(d.code, GPUAR_E_BACKEND);
	ck_assert_msg(strstr(d.message, "GetId"), "%s", d.message);
	ck_assert_int_eq(V->line_free(l, 0, &d), 0);
	gpuar_port_close(port);
	V->close(b);
}
END_TEST

/*
 * The legacy handle is one stream per device, not per thread: without
 * stream ids it is its own key, and awaits on it still complete.
 */
START_TEST(legacy_handle_admitted_without_stream_ids)
{
	struct gpuar_plan plan = vt_plan(FLAG_PLAN);
	struct gpuar_vendor_completion c;
	struct gpuar_vendor_line *l;
	struct gpuar_port *port;
	uint64_t target = 0;
	void *b = NULL;
	struct gpuar_error d;
	int n;

	V->without_stream_ids();
	ck_assert_msg(V->open(&b, 0, &d) == 0, "%s", d.message);
	vt_open_port(&port);
	ck_assert_msg(V->line_alloc(b, port, &l, &d) == 0, "%s", d.message);
	V->work(V->default_stream, 10 * MS);
	ck_assert_msg(V->await(l, 0, V->default_stream, &plan, 1, 9, &target,
			       &d) == 0, "%s", d.message);
	n = V->reap(b, port, &c, 1, REAP_TIMEOUT_NS, &d);
	ck_assert_msg(n == 1, "reap: %d %s", n, d.message);
	ck_assert_int_eq(c.record.status, 0);
	ck_assert(vt_word_reached(l, 0, target));
	ck_assert_int_eq(V->line_free(l, 1000 * MS, &d), 0);
	gpuar_port_close(port);
	V->close(b);
}
END_TEST

/* Cases that need nothing but the double's open path. */
#include "vendor_queue_cases.h"

static void vt_add_open_cases(Suite *suite)
{
	TCase *tc = tcase_create("open");

	tcase_add_checked_fixture(tc, NULL, NULL);
	tcase_add_test(tc, missing_library_is_a_coded_error);
	tcase_add_test(tc, missing_device_is_a_coded_error);
	tcase_add_test(tc, driver_stays_loaded_after_close);
	if (!vt_real_driver) {	/* hides an entry point of the double */
		tcase_add_test(tc, per_thread_handle_refused_without_stream_ids);
		tcase_add_test(tc, legacy_handle_admitted_without_stream_ids);
	}
	suite_add_tcase(suite, tc);
}

/* A test case of @name on the fixture (a handle, a port, a line). */
static TCase *vt_fixture_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, vt_setup, vt_teardown);
	tcase_set_timeout(tc, 30);
	return tc;
}

static void vt_add_cases(Suite *suite)
{
	TCase *tc = vt_fixture_tcase("streams");

	tcase_add_test(tc, line_page_is_registered_with_a_device_address);
	tcase_add_test(tc, record_and_await_one_stream);
	tcase_add_test(tc, eight_streams_on_one_line);
	tcase_add_test(tc, many_lines_on_one_stream);
	tcase_add_test(tc, sequence_numbers_wrap_around);
	tcase_add_test(tc, await_block_plan);
	tcase_add_test(tc, await_poll_plan);
	tcase_add_test(tc, await_flag_plan);
	tcase_add_test(tc, await_flag_predict_plan);
	tcase_add_test(tc, fault_becomes_error_record_with_vendor_code);
	tcase_add_test(tc, fault_under_poll_plan_becomes_error_record);
	tcase_add_test(tc, bare_stream_zero_refused);
	tcase_add_test(tc, explicit_default_stream_handle_accepted);
	tcase_add_test(tc, foreign_stream_refused);
	tcase_add_test(tc, capturing_stream_refused);
	tcase_add_test(tc, second_stream_cannot_take_a_busy_slot);
	tcase_add_test(tc, free_line_waits_for_pending_work);
	tcase_add_test(tc, free_line_refused_while_awaits_unreaped);
	tcase_add_test(tc, free_line_times_out_and_leaks);
	tcase_add_test(tc, free_line_without_deadline_waits);
	tcase_add_test(tc, refused_arguments_set_the_code);
	tcase_add_test(tc, free_line_waits_out_a_busy_moment);
	tcase_add_test(tc, reverse_direction_cpu_store_releases_stream);
	tcase_add_test(tc, free_line_after_its_streams);
	tcase_add_test(tc, reverse_waits_bounded_by_fences);
	tcase_add_test(tc, wait_driver_source_each_plan);
	tcase_add_test(tc, wait_driver_source_reports_vendor_error);
	tcase_add_test(tc, wait_driver_source_ignores_work_enqueued_later);
	tcase_add_test(tc, per_thread_streams_of_two_threads_are_told_apart);
	tcase_add_test(tc, per_thread_stream_await_reaped);
	tcase_add_test(tc, two_devices_on_one_port_reaped_through_either);
	tcase_add_test(tc, raw_records_resolved_by_the_caller);
	tcase_add_test(tc, reap_returns_up_to_max_in_one_call);
	tcase_add_test(tc, burst_of_awaits_finds_each_in_a_few_steps);
	tcase_add_test(tc, closed_ports_awaits_never_match_a_new_port);
	tcase_add_test(tc, port_closed_before_its_line);
	tcase_add_test(tc, await_event_completes_when_the_event_does);
	tcase_add_test(tc, await_event_outlives_the_destroyed_event);
	tcase_add_test(tc, await_event_of_a_failed_stream_is_an_error_record);
	tcase_add_test(tc, unrelated_event_awaits_complete_independently);
	suite_add_tcase(suite, tc);
	vt_add_queue_cases(suite);
}

#endif /* GPUAR_VENDOR_CASES_H */
