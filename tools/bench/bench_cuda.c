// SPDX-License-Identifier: MIT
#include "bench_cuda.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_clock.h"
#include "bench_clock_sync.h"
#include "bench_word.h"
#include "cuda_loader.h"

/* Generated at build time from bench_cuda_kernels.ptx (tools/tools.mk). */
#include "bench_cuda_kernels_ptx.h"

/*
 * The control page: per stream a 64-byte stamp slot {globaltimer, seq},
 * then the clock kernel's flag and its reply {globaltimer, running}, each
 * on a line of its own. Two pages hold 64 streams and the clock words.
 */
#define CTL_STAMP_WORDS 8
#define CTL_FLAG (BENCH_MAX_STREAMS * CTL_STAMP_WORDS)
#define CTL_REPLY (CTL_FLAG + 8)
#define CTL_WORDS (CTL_REPLY + 8)

/* How long the clock kernel may take to start, and to answer. */
#define CLOCK_START_TIMEOUT_NS 5000000000ULL
#define CLOCK_REPLY_TIMEOUT_NS 1000000000ULL
/* A store-time wait this long checks whether the stream died. */
#define STAMP_CHECK_NS 100000000ULL
/*
 * Host-function records per stream, used round robin by sequence number:
 * a stream's job seq + 2 is launched only after job seq + 1's write was
 * seen, which its stream runs after job seq's host function returned, so
 * two would do; four leave a margin.
 */
#define HOSTFN_RING 4

/* What one host function call is told: its job. */
struct hostfn_call {
	struct bench_cuda *c;
	unsigned int stream;
	uint64_t seq;
};

struct bench_cuda {
	struct bench_device *dev;
	struct gcu_loaded drv;
	const struct gcu_api *api;
	gcu_device device;
	gcu_context ctx;
	bool retained, pushed;
	gcu_module module;
	gcu_function spin, clock;
	size_t page;

	gcu_stream stream[BENCH_MAX_STREAMS];
	gcu_event event[BENCH_MAX_STREAMS];
	uint64_t *own_line[BENCH_MAX_STREAMS];	/* the device's own pages */
	gcu_deviceptr own_dev[BENCH_MAX_STREAMS];
	void *foreign[BENCH_MAX_STREAMS];	/* a strategy's page, registered */
	gcu_deviceptr line_dev[BENCH_MAX_STREAMS];	/* where launches write */

	uint64_t *ctl;
	size_t ctl_bytes;
	bool ctl_registered;
	gcu_deviceptr ctl_dev;

	struct bench_clock_sync sync;	/* the latest */
	unsigned int syncs;
	uint64_t worst_half_rtt_ns;
	int64_t min_offset_ns, max_offset_ns;

	char gpu[96];
	char sched[96];

	/* Host functions (BENCH_NOTIFY_HOSTFN); the counters are atomic. */
	struct hostfn_call hostfn[BENCH_MAX_STREAMS][HOSTFN_RING];
	int hostfn_fd[BENCH_MAX_STREAMS];	/* atomic; -1: none */
	uint64_t hostfn_calls, hostfn_early, hostfn_lost;
	/* The sequence number of each stream's latest event record (atomic). */
	uint64_t event_seq[BENCH_MAX_STREAMS];
};

static int fail(char *why, size_t size, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *why, size_t size, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return -err;
}

static int cu_fail(const struct bench_cuda *c, char *why, size_t size,
		   gcu_result rc, const char *what)
{
	return fail(why, size, rc == GCU_ERROR_OUT_OF_MEMORY ? ENOMEM : EIO,
		    "%s: %s", what, gcu_status_name(c->api, rc));
}

static int register_page(struct bench_cuda *c, void *page, size_t bytes,
			 gcu_deviceptr *dptr, char *why, size_t size)
{
	gcu_result rc = c->api->cuMemHostRegister(page, bytes,
						  GCU_MEMHOSTREGISTER_DEVICEMAP |
						  GCU_MEMHOSTREGISTER_PORTABLE);

	if (rc)
		return cu_fail(c, why, size, rc, "cuMemHostRegister");
	rc = c->api->cuMemHostGetDevicePointer(dptr, page, 0);
	if (rc) {
		c->api->cuMemHostUnregister(page);
		return cu_fail(c, why, size, rc, "cuMemHostGetDevicePointer");
	}
	return 0;
}

/* The entry points the producer needs beyond the backend's own. */
static int check_entry_points(const struct gcu_api *api, char *why, size_t size)
{
	const struct { const void *fn; const char *name; } need[] = {
		{ (const void *)api->cuModuleLoadData, "cuModuleLoadData" },
		{ (const void *)api->cuModuleUnload, "cuModuleUnload" },
		{ (const void *)api->cuModuleGetFunction, "cuModuleGetFunction" },
		{ (const void *)api->cuLaunchKernel, "cuLaunchKernel" },
		{ (const void *)api->cuEventCreate, "cuEventCreate" },
		{ (const void *)api->cuEventRecord, "cuEventRecord" },
		{ (const void *)api->cuEventSynchronize, "cuEventSynchronize" },
		{ (const void *)api->cuEventDestroy, "cuEventDestroy" },
	};

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!need[i].fn)
			return fail(why, size, ENOSYS, "the CUDA driver lacks %s",
				    need[i].name);
	return 0;
}

/* Blocking sync, so the event strategy's thread sleeps in the driver. */
static void set_blocking_sync(struct bench_cuda *c)
{
	gcu_result rc;

	if (!c->api->cuDevicePrimaryCtxSetFlags) {
		snprintf(c->sched, sizeof(c->sched),
			 "default (the driver lacks cuDevicePrimaryCtxSetFlags)");
		return;
	}
	rc = c->api->cuDevicePrimaryCtxSetFlags(c->device,
						GCU_CTX_SCHED_BLOCKING_SYNC);
	if (rc)
		snprintf(c->sched, sizeof(c->sched), "default (blocking sync: %s)",
			 gcu_status_name(c->api, rc));
	else
		snprintf(c->sched, sizeof(c->sched), "blocking_sync");
}

static int open_device(struct bench_cuda *c, char *why, size_t size)
{
	struct gv_load_error lerr = { 0 };
	int mem_ops = 0, err;
	gcu_result rc;

	err = gcu_load(&c->drv, &lerr);
	if (err)
		return fail(why, size, -err, "%s", lerr.detail);
	c->api = &c->drv.api;
	err = check_entry_points(c->api, why, size);
	if (err)
		return err;
	rc = c->api->cuDeviceGet(&c->device, 0);
	if (rc)
		return cu_fail(c, why, size, rc, "no CUDA device 0 (cuDeviceGet)");
	rc = c->api->cuDeviceGetAttribute(&mem_ops,
		GCU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, c->device);
	if (rc || !mem_ops)
		return fail(why, size, EOPNOTSUPP, "device 0 lacks 64-bit stream "
			    "memory operations (cuStreamWriteValue64)%s%s",
			    rc ? ": " : "", rc ? gcu_status_name(c->api, rc) : "");
	if (!c->api->cuDeviceGetName ||
	    c->api->cuDeviceGetName(c->gpu, (int)sizeof(c->gpu), c->device))
		snprintf(c->gpu, sizeof(c->gpu), "unknown");
	set_blocking_sync(c);
	rc = c->api->cuDevicePrimaryCtxRetain(&c->ctx, c->device);
	if (rc)
		return cu_fail(c, why, size, rc, "cuDevicePrimaryCtxRetain");
	c->retained = true;
	rc = c->api->cuCtxPushCurrent(c->ctx);
	if (rc)
		return cu_fail(c, why, size, rc, "cuCtxPushCurrent");
	c->pushed = true;
	return 0;
}

static int load_kernels(struct bench_cuda *c, char *why, size_t size)
{
	gcu_result rc = c->api->cuModuleLoadData(&c->module, bench_cuda_kernels_ptx);

	if (rc)
		return cu_fail(c, why, size, rc,
			       "cuModuleLoadData (JIT of the benchmark's PTX)");
	rc = c->api->cuModuleGetFunction(&c->spin, c->module, "gpuar_bench_spin");
	if (!rc)
		rc = c->api->cuModuleGetFunction(&c->clock, c->module,
						 "gpuar_bench_clock");
	if (rc)
		return cu_fail(c, why, size, rc, "cuModuleGetFunction");
	return 0;
}

static int open_streams(struct bench_cuda *c, char *why, size_t size)
{
	unsigned int n = c->dev->streams;
	int err;

	c->ctl_bytes = ((CTL_WORDS * sizeof(uint64_t) + c->page - 1) / c->page) *
		       c->page;
	c->ctl = mmap(NULL, c->ctl_bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (c->ctl == MAP_FAILED) {
		c->ctl = NULL;
		return fail(why, size, errno, "control page: %s", strerror(errno));
	}
	err = register_page(c, c->ctl, c->ctl_bytes, &c->ctl_dev, why, size);
	if (err)
		return err;
	c->ctl_registered = true;
	for (unsigned int i = 0; i < n; i++) {
		gcu_result rc;

		c->own_line[i] = c->dev->stream[i].line;
		err = register_page(c, c->own_line[i], c->page, &c->own_dev[i],
				    why, size);
		if (err)
			return err;
		c->line_dev[i] = c->own_dev[i];
		rc = c->api->cuStreamCreate(&c->stream[i], GCU_STREAM_NON_BLOCKING);
		if (rc)
			return cu_fail(c, why, size, rc, "cuStreamCreate");
		rc = c->api->cuEventCreate(&c->event[i], GCU_EVENT_BLOCKING_SYNC |
					   GCU_EVENT_DISABLE_TIMING);
		if (rc)
			return cu_fail(c, why, size, rc, "cuEventCreate");
	}
	return 0;
}

int bench_cuda_open(struct bench_cuda **out, struct bench_device *dev,
		    char *why, size_t size)
{
	struct bench_cuda *c = calloc(1, sizeof(*c));
	int err;

	*out = NULL;
	if (!c)
		return fail(why, size, ENOMEM, "out of memory");
	c->dev = dev;
	c->page = (size_t)sysconf(_SC_PAGESIZE);
	for (unsigned int i = 0; i < BENCH_MAX_STREAMS; i++)
		c->hostfn_fd[i] = -1;
	bench_clock_sync_init(&c->sync);
	err = open_device(c, why, size);
	if (!err)
		err = load_kernels(c, why, size);
	if (!err)
		err = open_streams(c, why, size);
	/* The first sync also proves that both kernels run. */
	if (!err)
		err = bench_cuda_sync_clock(c, why, size);
	if (err) {
		bench_cuda_close(c);
		return err;
	}
	*out = c;
	return 0;
}

void bench_cuda_close(struct bench_cuda *c)
{
	if (!c)
		return;
	if (c->api) {
		bench_cuda_drain(c);
		bench_cuda_disarm(c);
		for (unsigned int i = 0; i < BENCH_MAX_STREAMS; i++) {
			if (c->event[i])
				c->api->cuEventDestroy(c->event[i]);
			if (c->stream[i])
				c->api->cuStreamDestroy(c->stream[i]);
			if (c->own_dev[i])
				c->api->cuMemHostUnregister(c->own_line[i]);
		}
		if (c->ctl_registered)
			c->api->cuMemHostUnregister(c->ctl);
		if (c->module)
			c->api->cuModuleUnload(c->module);
		if (c->pushed) {
			gcu_context popped;

			c->api->cuCtxPopCurrent(&popped);
		}
		if (c->retained)
			c->api->cuDevicePrimaryCtxRelease(c->device);
		gcu_unload(&c->drv);
	}
	if (c->ctl)
		munmap(c->ctl, c->ctl_bytes);
	free(c);
}

/*
 * The host function (BENCH_NOTIFY_HOSTFN). It runs on the driver's own
 * thread and must not make any CUDA API call (CUDA Driver API,
 * cuLaunchHostFunc: "The host function must not make any CUDA API calls.
 * Attempting to use a CUDA API may result in CUDA_ERROR_NOT_PERMITTED"):
 * it loads the job's word, counts, and writes the eventfd. The word must
 * be visible already: "The start of execution of the function has the
 * same effect as synchronizing an event recorded in the same stream
 * immediately prior to the function", and the write-value came before it.
 */
static void hostfn_main(void *data)
{
	const struct hostfn_call *k = data;
	struct bench_cuda *c = k->c;
	int fd = __atomic_load_n(&c->hostfn_fd[k->stream], __ATOMIC_ACQUIRE);
	uint64_t one = 1;

	if (!bench_word_reached(c->dev->stream[k->stream].line, k->seq))
		__atomic_fetch_add(&c->hostfn_early, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->hostfn_calls, 1, __ATOMIC_RELEASE);
	if (fd < 0 || write(fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		__atomic_fetch_add(&c->hostfn_lost, 1, __ATOMIC_RELEASE);
}

int bench_cuda_launch(struct bench_cuda *c, unsigned int i, uint64_t seq,
		      uint64_t duration_ns, enum bench_notify notify, char *why,
		      size_t size)
{
	uint64_t dur = duration_ns, seqv = seq;
	uint64_t stamp = c->ctl_dev + (uint64_t)i * CTL_STAMP_WORDS * sizeof(uint64_t);
	void *params[] = { &dur, &stamp, &seqv };
	struct hostfn_call *k;
	gcu_result rc;

	rc = c->api->cuLaunchKernel(c->spin, 1, 1, 1, 1, 1, 1, 0, c->stream[i],
				    params, NULL);
	if (rc)
		return cu_fail(c, why, size, rc, "cuLaunchKernel (spin)");
	/* Default flags: the write waits for the kernel's stores (barrier). */
	rc = c->api->cuStreamWriteValue64(c->stream[i], c->line_dev[i], seq,
					  GCU_STREAM_WRITE_VALUE_DEFAULT);
	if (rc)
		return cu_fail(c, why, size, rc, "cuStreamWriteValue64");
	if (notify == BENCH_NOTIFY_EVENT) {
		rc = c->api->cuEventRecord(c->event[i], c->stream[i]);
		if (rc)
			return cu_fail(c, why, size, rc, "cuEventRecord");
		/* A scanner queries the event only once this job's record is in. */
		__atomic_store_n(&c->event_seq[i], seq, __ATOMIC_RELEASE);
	}
	if (notify == BENCH_NOTIFY_HOSTFN) {
		if (!c->api->cuLaunchHostFunc)
			return fail(why, size, ENOSYS,
				    "the CUDA driver lacks cuLaunchHostFunc");
		k = &c->hostfn[i][seq % HOSTFN_RING];
		*k = (struct hostfn_call){ .c = c, .stream = i, .seq = seq };
		rc = c->api->cuLaunchHostFunc(c->stream[i], hostfn_main, k);
		if (rc)
			return cu_fail(c, why, size, rc, "cuLaunchHostFunc");
	}
	return 0;
}

int bench_cuda_stream_check(struct bench_cuda *c, unsigned int i, char *why,
			    size_t size)
{
	gcu_result rc = c->api->cuStreamQuery(c->stream[i]);

	if (!rc || rc == GCU_ERROR_NOT_READY)
		return 0;
	return fail(why, size, EIO, "stream %u failed: %s", i,
		    gcu_status_name(c->api, rc));
}

uint64_t bench_cuda_store_ns(struct bench_cuda *c, unsigned int i, uint64_t seq,
			     char *why, size_t size)
{
	const uint64_t *stamp = c->ctl + (size_t)i * CTL_STAMP_WORDS;
	uint64_t check = bench_now_ns() + STAMP_CHECK_NS;

	/* The kernel stores the time, fences, then the sequence number. */
	while (__atomic_load_n(&stamp[1], __ATOMIC_ACQUIRE) != seq) {
		char dead[BENCH_CUDA_WHY_MAX];

		bench_cpu_relax();
		if (bench_now_ns() < check)
			continue;
		if (bench_cuda_stream_check(c, i, dead, sizeof(dead))) {
			fail(why, size, EIO, "the spin kernel's stamp never came: %s",
			     dead);
			return 0;
		}
		check = bench_now_ns() + STAMP_CHECK_NS;
	}
	return bench_clock_sync_host_ns(&c->sync,
					__atomic_load_n(&stamp[0], __ATOMIC_RELAXED));
}

void bench_cuda_reset(struct bench_cuda *c)
{
	for (unsigned int i = 0; i < c->dev->streams; i++) {
		/* A repetition's sequence numbers start again at 1: no event
		 * record of the last one may pass for this one's. */
		__atomic_store_n(&c->event_seq[i], 0, __ATOMIC_RELEASE);
		__atomic_store_n(&c->ctl[i * CTL_STAMP_WORDS], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&c->ctl[i * CTL_STAMP_WORDS + 1], 0, __ATOMIC_RELEASE);
	}
}

/* Wait for *@word != 0; false after @timeout_ns. */
static bool wait_word(const uint64_t *word, uint64_t timeout_ns, uint64_t *value)
{
	uint64_t give_up = bench_now_ns() + timeout_ns;

	while (!(*value = __atomic_load_n(word, __ATOMIC_ACQUIRE))) {
		bench_cpu_relax();
		if (bench_now_ns() > give_up)
			return false;
	}
	return true;
}

/* One ping-pong: launch the clock kernel, wait until it runs, ping, time. */
static int clock_round(struct bench_cuda *c, struct bench_clock_sync *cs,
		       char *why, size_t size)
{
	uint64_t *flag = &c->ctl[CTL_FLAG], *reply = &c->ctl[CTL_REPLY];
	uint64_t flag_dev = c->ctl_dev + CTL_FLAG * sizeof(uint64_t);
	uint64_t reply_dev = c->ctl_dev + CTL_REPLY * sizeof(uint64_t);
	void *params[] = { &flag_dev, &reply_dev };
	uint64_t t0, t1, g, running;
	gcu_result rc;

	/* The previous round's kernel replied: it reads the flag no more. */
	__atomic_store_n(flag, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&reply[0], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&reply[1], 0, __ATOMIC_SEQ_CST);
	rc = c->api->cuLaunchKernel(c->clock, 1, 1, 1, 1, 1, 1, 0, c->stream[0],
				    params, NULL);
	if (rc)
		return cu_fail(c, why, size, rc, "cuLaunchKernel (clock)");
	if (!wait_word(&reply[1], CLOCK_START_TIMEOUT_NS, &running)) {
		__atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);	/* let it end */
		return fail(why, size, ETIMEDOUT,
			    "the clock kernel did not start within %llu s",
			    CLOCK_START_TIMEOUT_NS / 1000000000ULL);
	}
	t0 = bench_now_ns();
	/* Sequentially consistent: the store leaves the store buffer now. */
	__atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
	if (!wait_word(&reply[0], CLOCK_REPLY_TIMEOUT_NS, &g))
		return fail(why, size, ETIMEDOUT,
			    "the clock kernel did not answer within %llu ms",
			    CLOCK_REPLY_TIMEOUT_NS / 1000000ULL);
	t1 = bench_now_ns();
	bench_clock_sync_add(cs, t0, g, t1);
	return 0;
}

int bench_cuda_sync_clock(struct bench_cuda *c, char *why, size_t size)
{
	struct bench_clock_sync cs;
	gcu_result rc;
	int err = 0;

	bench_clock_sync_init(&cs);
	for (unsigned int k = 0; k < BENCH_CUDA_CLOCK_TRIES && !err; k++)
		err = clock_round(c, &cs, why, size);
	rc = c->api->cuStreamSynchronize(c->stream[0]);
	if (!err && rc)
		err = cu_fail(c, why, size, rc, "cuStreamSynchronize (clock)");
	if (err)
		return err;
	c->sync = cs;
	if (!c->syncs || cs.offset_ns < c->min_offset_ns)
		c->min_offset_ns = cs.offset_ns;
	if (!c->syncs || cs.offset_ns > c->max_offset_ns)
		c->max_offset_ns = cs.offset_ns;
	if (cs.half_rtt_ns > c->worst_half_rtt_ns)
		c->worst_half_rtt_ns = cs.half_rtt_ns;
	c->syncs++;
	return 0;
}

void bench_cuda_clock(const struct bench_cuda *c, int64_t *offset_ns,
		      uint64_t *uncertainty_ns)
{
	*offset_ns = c->sync.offset_ns;
	*uncertainty_ns = c->sync.half_rtt_ns;
}

int bench_cuda_arm(struct bench_cuda *c, char *why, size_t size)
{
	for (unsigned int i = 0; i < c->dev->streams; i++) {
		uint64_t *line = c->dev->stream[i].line;
		uintptr_t off = (uintptr_t)line % c->page;
		void *page = (char *)line - off;
		gcu_deviceptr dptr;
		int err;

		if (line == c->own_line[i])
			continue;
		/* A strategy's own line (user-predict: the port's page). */
		err = register_page(c, page, c->page, &dptr, why, size);
		if (err)
			return err;
		c->foreign[i] = page;
		c->line_dev[i] = dptr + off;
	}
	/* Every repetition: the two timers drift apart over a long run. */
	return bench_cuda_sync_clock(c, why, size);
}

void bench_cuda_disarm(struct bench_cuda *c)
{
	/* No queued write may target a page about to be unregistered. */
	bench_cuda_drain(c);
	for (unsigned int i = 0; i < BENCH_MAX_STREAMS; i++) {
		if (!c->foreign[i])
			continue;
		c->api->cuMemHostUnregister(c->foreign[i]);
		c->foreign[i] = NULL;
		c->line_dev[i] = c->own_dev[i];
	}
}

void bench_cuda_drain(struct bench_cuda *c)
{
	for (unsigned int i = 0; i < BENCH_MAX_STREAMS; i++)
		if (c->stream[i])
			c->api->cuStreamSynchronize(c->stream[i]);
}

int bench_cuda_event_wait(struct bench_cuda *c, unsigned int i, char *why,
			  size_t size)
{
	gcu_result rc = c->api->cuEventSynchronize(c->event[i]);

	return rc ? cu_fail(c, why, size, rc, "cuEventSynchronize") : 0;
}

int bench_cuda_event_query(struct bench_cuda *c, unsigned int i, uint64_t seq,
			   char *why, size_t size)
{
	gcu_result rc;

	if (__atomic_load_n(&c->event_seq[i], __ATOMIC_ACQUIRE) != seq)
		return 0;
	rc = c->api->cuEventQuery(c->event[i]);
	if (rc == GCU_ERROR_NOT_READY)
		return 0;
	return rc ? cu_fail(c, why, size, rc, "cuEventQuery") : 1;
}

int bench_cuda_attach(struct bench_cuda *c, char *why, size_t size)
{
	gcu_result rc = c->api->cuCtxPushCurrent(c->ctx);

	return rc ? cu_fail(c, why, size, rc, "cuCtxPushCurrent (helper thread)") : 0;
}

void bench_cuda_detach(struct bench_cuda *c)
{
	gcu_context popped;

	c->api->cuCtxPopCurrent(&popped);
}

/* The entry point @need names in @api, and its name. */
static const void *needed_entry(const struct gcu_api *api,
				enum bench_cuda_need need, const char **name)
{
	if (need == BENCH_CUDA_NEED_HOSTFN) {
		*name = "cuLaunchHostFunc";
		return (const void *)api->cuLaunchHostFunc;
	}
	*name = "cuEventQuery";
	return (const void *)api->cuEventQuery;
}

int bench_cuda_has(const struct bench_device *dev, enum bench_cuda_need need,
		   char *why, size_t size)
{
	const char *name;

	if (dev->kind != BENCH_DEVICE_CUDA)
		return fail(why, size, EINVAL, "waits through the CUDA driver: "
			    "needs --device cuda");
	if (needed_entry(dev->cuda->api, need, &name))
		return 0;
	return fail(why, size, ENOSYS, "the CUDA driver lacks %s", name);
}

int bench_cuda_probe(enum bench_device_kind kind, enum bench_cuda_need need,
		     char *why, size_t size)
{
	struct gv_load_error lerr = { 0 };
	struct gcu_loaded drv;
	const char *name;
	int err;

	if (kind != BENCH_DEVICE_CUDA)
		return 0;
	err = gcu_load(&drv, &lerr);
	if (err)
		return fail(why, size, -err, "%s", lerr.detail);
	if (!needed_entry(&drv.api, need, &name))
		err = fail(why, size, ENOSYS, "the CUDA driver lacks %s", name);
	gcu_unload(&drv);
	return err;
}

void bench_cuda_set_hostfn_fd(struct bench_cuda *c, unsigned int i, int fd)
{
	__atomic_store_n(&c->hostfn_fd[i], fd, __ATOMIC_RELEASE);
}

void bench_cuda_hostfn_stats(const struct bench_cuda *c,
			     struct bench_cuda_hostfn_stats *st)
{
	st->calls = __atomic_load_n(&c->hostfn_calls, __ATOMIC_ACQUIRE);
	st->early = __atomic_load_n(&c->hostfn_early, __ATOMIC_ACQUIRE);
	st->lost = __atomic_load_n(&c->hostfn_lost, __ATOMIC_ACQUIRE);
}

void bench_cuda_describe(const struct bench_cuda *c,
			 struct bench_device_info *info)
{
	snprintf(info->gpu, sizeof(info->gpu), "%s", c->gpu);
	snprintf(info->sched, sizeof(info->sched), "%s", c->sched);
	info->driver_version = c->drv.driver_version;
	info->clock_syncs = c->syncs;
	info->clock_sync_uncertainty_us = (double)c->worst_half_rtt_ns / 1000.0;
	info->clock_offset_drift_us =
		(double)(c->max_offset_ns - c->min_offset_ns) / 1000.0;
}
