// SPDX-License-Identifier: MIT
/*
 * TEST DOUBLE of the CUDA driver library, built as
 * $(BUILD)/doubles/cuda/libcuda.so.1 and loaded by the CUDA backend's
 * tests and gpuar-bench's --device cuda tests through GPUAR_CUDA_LIBRARY.
 * It is not CUDA and drives no GPU: it implements only the entry points
 * the loader resolves (cuda_loader.c, optional ones included), with the
 * CUDA 12.0 ABI (cuda_decls.h), on top of fake_queue.c.
 *
 * Model: one process-wide driver; devices 0..N-1 (default 2), each with a
 * primary context (reference counted); a thread-local current-context
 * stack; streams are in-order queues run by worker threads; host pages
 * are registered as fake_memory.h has it, with a device address that
 * differs from the host address, so a backend that stores to the host
 * address where the device address belongs is caught (the store faults
 * the context with CUDA_ERROR_ILLEGAL_ADDRESS).
 * CU_STREAM_LEGACY and CU_STREAM_PER_THREAD name one default stream per
 * context (a simplification: real CUDA has one per-thread stream per
 * thread). A bare NULL stream is treated as the legacy stream.
 *
 * Kernels: the double cannot run device code. cuModuleLoadData takes a
 * PTX text and notes which of the kernels it models the text declares
 * (an ".entry NAME(" with the modelled number of .u64 parameters); only
 * those resolve through cuModuleGetFunction, and cuLaunchKernel (one
 * thread, one block) runs their documented behaviour in C on the stream's
 * worker, in order with the rest of the stream:
 *   gpuar_bench_spin(duration_ns, stamp, seq): timed work of duration_ns
 *     (a sleep), then stamp[0] = %globaltimer, stamp[1] = seq (release);
 *   gpuar_bench_clock(flag, reply): reply[1] = 1 (running), spin until
 *     *flag != 0, then reply[0] = %globaltimer.
 * The fake %globaltimer is CLOCK_MONOTONIC + FAKE_GLOBALTIMER_OFFSET, a
 * large offset as a real GPU's (Unix-time) timer has, so a caller's clock
 * calibration is really exercised. Events are in-order markers; blocking
 * and spinning synchronisation are the same here (a condition variable).
 *
 * Double-only entry points (gpuar_fake_cuda_*, below) let tests enqueue
 * timed work and faults, start and end a capture, hide entry points, set
 * the driver version, and read counters. Environment: GPUAR_FAKE_CUDA_NO_DEVICE=1
 * makes cuInit fail with CUDA_ERROR_NO_DEVICE.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "../../../backends/cuda/cuda_decls.h"
#include "../common/fake_memory.h"
#include "../common/fake_queue.h"

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_DEVICES_MAX 4
#define FAKE_HIDDEN_MAX 32
#define FAKE_CTX_STACK 16
/* The fake %globaltimer runs this far ahead of CLOCK_MONOTONIC (ns). */
#define FAKE_GLOBALTIMER_OFFSET 1700000000123456789ull
/* A clock kernel whose flag never comes fails the launch after this. */
#define FAKE_CLOCK_KERNEL_TIMEOUT_NS 10000000000ull

enum fake_kernel { FAKE_KERNEL_SPIN, FAKE_KERNEL_CLOCK, FAKE_KERNELS };

/* The kernels the double models: entry name and its u64 parameters. */
static const struct {
	const char *name;
	unsigned int params;
} fake_kernel_model[FAKE_KERNELS] = {
	[FAKE_KERNEL_SPIN] = { "gpuar_bench_spin", 3 },
	[FAKE_KERNEL_CLOCK] = { "gpuar_bench_clock", 2 },
};

struct CUfunc_st {
	struct CUmod_st *module;
	enum fake_kernel kind;
	bool present;		/* the loaded text declares it as modelled */
};

struct CUmod_st {
	struct CUfunc_st fn[FAKE_KERNELS];
};

struct CUevent_st {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t recorded;	/* records made */
	uint64_t fired;		/* the latest record the stream reached */
	struct CUctx_st *ctx;	/* of the stream last recorded on */
};

struct CUctx_st {
	struct fq_domain domain;
	int device;
	int refs;
	unsigned int flags;	/* cuDevicePrimaryCtxSetFlags */
	struct CUstream_st *legacy;	/* created on first use */
};

struct CUstream_st {
	struct fq_stream q;
	struct CUctx_st *ctx;
	uint64_t no_barrier_writes;
};

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUctx_st fake_ctx[FAKE_DEVICES_MAX];
static int fake_devices = 2;
static int fake_driver_version = 12080;
static int fake_mem_ops_64 = 1;
static bool fake_initialised;
static char fake_hidden[FAKE_HIDDEN_MAX][64];
static uint64_t fake_no_barrier_writes;

static __thread struct CUctx_st *ctx_stack[FAKE_CTX_STACK];
static __thread int ctx_depth;

/* ------------------------------------------------------ double-only */

FAKE_EXPORT void gpuar_fake_cuda_hide(const char *name);
FAKE_EXPORT void gpuar_fake_cuda_reset(void);
FAKE_EXPORT void gpuar_fake_cuda_set_driver_version(int version);
FAKE_EXPORT void gpuar_fake_cuda_set_mem_ops_64(int supported);
FAKE_EXPORT gcu_result gpuar_fake_cuda_work(gcu_stream stream, uint64_t ns);
FAKE_EXPORT gcu_result gpuar_fake_cuda_fault(gcu_stream stream,
					     gcu_result code);
FAKE_EXPORT gcu_result gpuar_fake_cuda_capture(gcu_stream stream, int on);
FAKE_EXPORT int gpuar_fake_cuda_registered_pages(void);
FAKE_EXPORT int gpuar_fake_cuda_primary_refs(int device);
FAKE_EXPORT uint64_t gpuar_fake_cuda_unsafe_unregisters(void);
FAKE_EXPORT uint64_t gpuar_fake_cuda_no_barrier_writes(void);
FAKE_EXPORT uint64_t gpuar_fake_cuda_globaltimer_offset(void);
FAKE_EXPORT int gpuar_fake_cuda_primary_flags(int device);

/* Hide an entry point from cuGetProcAddress_v2 (NULL or "" clears all). */
void gpuar_fake_cuda_hide(const char *name)
{
	pthread_mutex_lock(&fake_lock);
	if (!name || !*name) {
		memset(fake_hidden, 0, sizeof(fake_hidden));
	} else {
		for (int i = 0; i < FAKE_HIDDEN_MAX; i++) {
			if (!fake_hidden[i][0]) {
				strncpy(fake_hidden[i], name,
					sizeof(fake_hidden[i]) - 1);
				break;
			}
		}
	}
	pthread_mutex_unlock(&fake_lock);
}

/* Clear hidden entry points, sticky errors and settings (not refs/pages). */
void gpuar_fake_cuda_reset(void)
{
	gpuar_fake_cuda_hide(NULL);
	pthread_mutex_lock(&fake_lock);
	fake_driver_version = 12080;
	fake_mem_ops_64 = 1;
	for (int i = 0; i < FAKE_DEVICES_MAX; i++)
		fq_domain_clear(&fake_ctx[i].domain);
	pthread_mutex_unlock(&fake_lock);
}

void gpuar_fake_cuda_set_driver_version(int version)
{
	pthread_mutex_lock(&fake_lock);
	fake_driver_version = version;
	pthread_mutex_unlock(&fake_lock);
}

void gpuar_fake_cuda_set_mem_ops_64(int supported)
{
	pthread_mutex_lock(&fake_lock);
	fake_mem_ops_64 = supported;
	pthread_mutex_unlock(&fake_lock);
}

int gpuar_fake_cuda_registered_pages(void)
{
	return fm_registered_pages();
}

int gpuar_fake_cuda_primary_refs(int device)
{
	int refs;

	if (device < 0 || device >= FAKE_DEVICES_MAX)
		return -1;
	pthread_mutex_lock(&fake_lock);
	refs = fake_ctx[device].refs;
	pthread_mutex_unlock(&fake_lock);
	return refs;
}

uint64_t gpuar_fake_cuda_unsafe_unregisters(void)
{
	return fm_unsafe_unregisters();
}

uint64_t gpuar_fake_cuda_no_barrier_writes(void)
{
	return __atomic_load_n(&fake_no_barrier_writes, __ATOMIC_RELAXED);
}

/* What the fake %globaltimer reads minus CLOCK_MONOTONIC, in ns. */
uint64_t gpuar_fake_cuda_globaltimer_offset(void)
{
	return FAKE_GLOBALTIMER_OFFSET;
}

/* The flags cuDevicePrimaryCtxSetFlags set on @device's primary context. */
int gpuar_fake_cuda_primary_flags(int device)
{
	int flags;

	if (device < 0 || device >= FAKE_DEVICES_MAX)
		return -1;
	pthread_mutex_lock(&fake_lock);
	flags = (int)fake_ctx[device].flags;
	pthread_mutex_unlock(&fake_lock);
	return flags;
}

/* ------------------------------------------------------------ helpers */

static bool fake_hidden_name(const char *name)
{
	bool hidden = false;

	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < FAKE_HIDDEN_MAX && !hidden; i++)
		hidden = fake_hidden[i][0] && !strcmp(fake_hidden[i], name);
	pthread_mutex_unlock(&fake_lock);
	return hidden;
}

static struct CUctx_st *fake_current(void)
{
	return ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
}

static gcu_result fake_ready(void)
{
	return fake_initialised ? GCU_SUCCESS : GCU_ERROR_NOT_INITIALIZED;
}

/* The stream a handle names; special handles need a current context. */
static gcu_result fake_stream(gcu_stream handle, struct CUstream_st **out)
{
	struct CUctx_st *ctx;

	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (handle && handle != GCU_STREAM_LEGACY &&
	    handle != GCU_STREAM_PER_THREAD) {
		*out = handle;
		return GCU_SUCCESS;
	}
	ctx = fake_current();
	if (!ctx)
		return GCU_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&fake_lock);
	if (!ctx->legacy) {
		struct CUstream_st *s = calloc(1, sizeof(*s));

		if (!s || fq_stream_start(&s->q, &ctx->domain, ctx->device)) {
			pthread_mutex_unlock(&fake_lock);
			free(s);
			return GCU_ERROR_OUT_OF_MEMORY;
		}
		s->ctx = ctx;
		ctx->legacy = s;
	}
	*out = ctx->legacy;
	pthread_mutex_unlock(&fake_lock);
	return GCU_SUCCESS;
}

/* Capture turns enqueued work into graph nodes; the double refuses, so a
 * backend that forgot to check would see its store vanish, not run. */
static gcu_result fake_push(struct CUstream_st *s, const struct fq_op *op)
{
	return fq_stream_enqueue(&s->q, op, GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED,
				 GCU_ERROR_OUT_OF_MEMORY);
}

/* ------------------------------------------------------- driver API */

FAKE_EXPORT gcu_result cuInit(unsigned int flags);
FAKE_EXPORT gcu_result cuDriverGetVersion(int *version);
FAKE_EXPORT gcu_result cuGetProcAddress_v2(const char *symbol, void **pfn,
					   int version, gcu_u64 flags,
					   unsigned int *status);
FAKE_EXPORT gcu_result cuGetErrorName(gcu_result error, const char **name);
FAKE_EXPORT gcu_result cuDeviceGet(gcu_device *device, int ordinal);
FAKE_EXPORT gcu_result cuDeviceGetCount(int *count);
FAKE_EXPORT gcu_result cuDeviceGetAttribute(int *value, unsigned int attribute,
					    gcu_device device);
FAKE_EXPORT gcu_result cuDevicePrimaryCtxRetain(gcu_context *ctx,
						gcu_device device);
FAKE_EXPORT gcu_result cuDevicePrimaryCtxRelease_v2(gcu_device device);
FAKE_EXPORT gcu_result cuCtxPushCurrent_v2(gcu_context ctx);
FAKE_EXPORT gcu_result cuCtxPopCurrent_v2(gcu_context *ctx);
FAKE_EXPORT gcu_result cuMemHostRegister_v2(void *p, size_t bytes,
					    unsigned int flags);
FAKE_EXPORT gcu_result cuMemHostUnregister(void *p);
FAKE_EXPORT gcu_result cuMemHostGetDevicePointer_v2(gcu_deviceptr *dptr,
						    void *p, unsigned int flags);
FAKE_EXPORT gcu_result cuStreamCreate(gcu_stream *stream, unsigned int flags);
FAKE_EXPORT gcu_result cuStreamDestroy_v2(gcu_stream stream);
FAKE_EXPORT gcu_result cuStreamGetCtx(gcu_stream stream, gcu_context *ctx);
FAKE_EXPORT gcu_result cuStreamIsCapturing(gcu_stream stream,
					   unsigned int *status);
FAKE_EXPORT gcu_result cuStreamWriteValue64_v2(gcu_stream stream,
					       gcu_deviceptr addr,
					       gcu_u64 value,
					       unsigned int flags);
FAKE_EXPORT gcu_result cuStreamWaitValue64_v2(gcu_stream stream,
					      gcu_deviceptr addr, gcu_u64 value,
					      unsigned int flags);
FAKE_EXPORT gcu_result cuStreamQuery(gcu_stream stream);
FAKE_EXPORT gcu_result cuStreamSynchronize(gcu_stream stream);
FAKE_EXPORT gcu_result cuDeviceGetName(char *name, int len, gcu_device device);
FAKE_EXPORT gcu_result cuDevicePrimaryCtxSetFlags_v2(gcu_device device,
						     unsigned int flags);
FAKE_EXPORT gcu_result cuModuleLoadData(gcu_module *module, const void *image);
FAKE_EXPORT gcu_result cuModuleUnload(gcu_module module);
FAKE_EXPORT gcu_result cuModuleGetFunction(gcu_function *function,
					   gcu_module module, const char *name);
FAKE_EXPORT gcu_result cuLaunchKernel(gcu_function f, unsigned int grid_x,
				      unsigned int grid_y, unsigned int grid_z,
				      unsigned int block_x, unsigned int block_y,
				      unsigned int block_z,
				      unsigned int shared_bytes,
				      gcu_stream stream, void **params,
				      void **extra);
FAKE_EXPORT gcu_result cuEventCreate(gcu_event *event, unsigned int flags);
FAKE_EXPORT gcu_result cuEventRecord(gcu_event event, gcu_stream stream);
FAKE_EXPORT gcu_result cuEventSynchronize(gcu_event event);
FAKE_EXPORT gcu_result cuEventDestroy_v2(gcu_event event);

gcu_result cuInit(unsigned int flags)
{
	if (flags)
		return GCU_ERROR_INVALID_VALUE;
	if (fq_env_flag("GPUAR_FAKE_CUDA_NO_DEVICE"))
		return GCU_ERROR_NO_DEVICE;
	pthread_mutex_lock(&fake_lock);
	if (!fake_initialised) {
		for (int i = 0; i < FAKE_DEVICES_MAX; i++) {
			fq_domain_init(&fake_ctx[i].domain);
			fake_ctx[i].device = i;
		}
		fake_initialised = true;
	}
	pthread_mutex_unlock(&fake_lock);
	return GCU_SUCCESS;
}

gcu_result cuDriverGetVersion(int *version)
{
	if (!version)
		return GCU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fake_lock);
	*version = fake_driver_version;
	pthread_mutex_unlock(&fake_lock);
	return GCU_SUCCESS;
}

static const struct {
	const char *name;
	void *fn;
	int since;	/* CUDA version the entry point (this ABI) appeared in */
} fake_symbols[] = {
	{ "cuInit", (void *)cuInit, 2000 },
	{ "cuDriverGetVersion", (void *)cuDriverGetVersion, 2020 },
	{ "cuGetErrorName", (void *)cuGetErrorName, 6000 },
	{ "cuDeviceGet", (void *)cuDeviceGet, 2000 },
	{ "cuDeviceGetCount", (void *)cuDeviceGetCount, 2000 },
	{ "cuDeviceGetAttribute", (void *)cuDeviceGetAttribute, 2000 },
	{ "cuDevicePrimaryCtxRetain", (void *)cuDevicePrimaryCtxRetain, 7000 },
	{ "cuDevicePrimaryCtxRelease", (void *)cuDevicePrimaryCtxRelease_v2, 11000 },
	{ "cuCtxPushCurrent", (void *)cuCtxPushCurrent_v2, 4000 },
	{ "cuCtxPopCurrent", (void *)cuCtxPopCurrent_v2, 4000 },
	{ "cuMemHostRegister", (void *)cuMemHostRegister_v2, 6050 },
	{ "cuMemHostUnregister", (void *)cuMemHostUnregister, 4000 },
	{ "cuMemHostGetDevicePointer", (void *)cuMemHostGetDevicePointer_v2, 3020 },
	{ "cuStreamCreate", (void *)cuStreamCreate, 2000 },
	{ "cuStreamDestroy", (void *)cuStreamDestroy_v2, 4000 },
	{ "cuStreamGetCtx", (void *)cuStreamGetCtx, 9020 },
	{ "cuStreamIsCapturing", (void *)cuStreamIsCapturing, 10000 },
	{ "cuStreamWriteValue64", (void *)cuStreamWriteValue64_v2, 11070 },
	{ "cuStreamWaitValue64", (void *)cuStreamWaitValue64_v2, 11070 },
	{ "cuStreamQuery", (void *)cuStreamQuery, 2000 },
	{ "cuStreamSynchronize", (void *)cuStreamSynchronize, 2000 },
	{ "cuDeviceGetName", (void *)cuDeviceGetName, 2000 },
	{ "cuDevicePrimaryCtxSetFlags", (void *)cuDevicePrimaryCtxSetFlags_v2, 11000 },
	{ "cuModuleLoadData", (void *)cuModuleLoadData, 2000 },
	{ "cuModuleUnload", (void *)cuModuleUnload, 2000 },
	{ "cuModuleGetFunction", (void *)cuModuleGetFunction, 2000 },
	{ "cuLaunchKernel", (void *)cuLaunchKernel, 4000 },
	{ "cuEventCreate", (void *)cuEventCreate, 2000 },
	{ "cuEventRecord", (void *)cuEventRecord, 2000 },
	{ "cuEventSynchronize", (void *)cuEventSynchronize, 2000 },
	{ "cuEventDestroy", (void *)cuEventDestroy_v2, 4000 },
};

/*
 * Resolve a base name for a CUDA version, as the real driver does. A
 * driver older than 12.0 does not have this entry point at all: the
 * loader must fall back to dlsym of the versioned names.
 */
gcu_result cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
			       gcu_u64 flags, unsigned int *status)
{
	if (!symbol || !pfn)
		return GCU_ERROR_INVALID_VALUE;
	*pfn = NULL;
	if (flags > 2)
		return GCU_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(fake_symbols) / sizeof(fake_symbols[0]); i++) {
		if (strcmp(fake_symbols[i].name, symbol))
			continue;
		if (fake_hidden_name(symbol))
			break;
		if (version < fake_symbols[i].since) {
			if (status)
				*status = GCU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
			return GCU_ERROR_NOT_FOUND;
		}
		*pfn = fake_symbols[i].fn;
		if (status)
			*status = GCU_GET_PROC_ADDRESS_SUCCESS;
		return GCU_SUCCESS;
	}
	if (status)
		*status = GCU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return GCU_ERROR_NOT_FOUND;
}

gcu_result cuGetErrorName(gcu_result error, const char **name)
{
	static const struct { gcu_result code; const char *name; } names[] = {
		{ GCU_SUCCESS, "CUDA_SUCCESS" },
		{ GCU_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE" },
		{ GCU_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY" },
		{ GCU_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED" },
		{ GCU_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE" },
		{ GCU_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE" },
		{ GCU_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT" },
		{ GCU_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE" },
		{ GCU_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT" },
		{ GCU_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE" },
		{ GCU_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND" },
		{ GCU_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY" },
		{ GCU_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS" },
		{ GCU_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
		  "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED" },
		{ GCU_ERROR_HOST_MEMORY_NOT_REGISTERED,
		  "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED" },
		{ GCU_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED" },
		{ GCU_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED" },
		{ GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED,
		  "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED" },
	};

	if (!name)
		return GCU_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].code == error) {
			*name = names[i].name;
			return GCU_SUCCESS;
		}
	}
	*name = NULL;
	return GCU_ERROR_INVALID_VALUE;
}

gcu_result cuDeviceGet(gcu_device *device, int ordinal)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!device)
		return GCU_ERROR_INVALID_VALUE;
	if (ordinal < 0 || ordinal >= fake_devices)
		return GCU_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return GCU_SUCCESS;
}

gcu_result cuDeviceGetCount(int *count)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!count)
		return GCU_ERROR_INVALID_VALUE;
	*count = fake_devices;
	return GCU_SUCCESS;
}

gcu_result cuDeviceGetAttribute(int *value, unsigned int attribute,
				gcu_device device)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!value)
		return GCU_ERROR_INVALID_VALUE;
	if (device < 0 || device >= fake_devices)
		return GCU_ERROR_INVALID_DEVICE;
	if (attribute != GCU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS)
		return GCU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fake_lock);
	*value = fake_mem_ops_64;
	pthread_mutex_unlock(&fake_lock);
	return GCU_SUCCESS;
}

gcu_result cuDevicePrimaryCtxRetain(gcu_context *ctx, gcu_device device)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!ctx)
		return GCU_ERROR_INVALID_VALUE;
	if (device < 0 || device >= fake_devices)
		return GCU_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&fake_lock);
	fake_ctx[device].refs++;
	pthread_mutex_unlock(&fake_lock);
	*ctx = &fake_ctx[device];
	return GCU_SUCCESS;
}

gcu_result cuDevicePrimaryCtxRelease_v2(gcu_device device)
{
	gcu_result rc = GCU_SUCCESS;

	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (device < 0 || device >= fake_devices)
		return GCU_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&fake_lock);
	if (fake_ctx[device].refs > 0)
		fake_ctx[device].refs--;
	else
		rc = GCU_ERROR_INVALID_CONTEXT;
	pthread_mutex_unlock(&fake_lock);
	return rc;
}

gcu_result cuCtxPushCurrent_v2(gcu_context ctx)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!ctx || ctx_depth == FAKE_CTX_STACK)
		return GCU_ERROR_INVALID_VALUE;
	ctx_stack[ctx_depth++] = ctx;
	return GCU_SUCCESS;
}

gcu_result cuCtxPopCurrent_v2(gcu_context *ctx)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!ctx_depth)
		return GCU_ERROR_INVALID_CONTEXT;
	ctx_depth--;
	if (ctx)
		*ctx = ctx_stack[ctx_depth];
	return GCU_SUCCESS;
}

gcu_result cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!fake_current())
		return GCU_ERROR_INVALID_CONTEXT;
	if (!p || !bytes || (flags & ~0xfu))
		return GCU_ERROR_INVALID_VALUE;
	switch (fm_register(p, bytes)) {
	case FM_REGISTERED: return GCU_SUCCESS;
	case FM_OVERLAPS: return GCU_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	default: return GCU_ERROR_OUT_OF_MEMORY;
	}
}

gcu_result cuMemHostUnregister(void *p)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!fake_current())
		return GCU_ERROR_INVALID_CONTEXT;
	return fm_unregister(p) ? GCU_SUCCESS :
				  GCU_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

gcu_result cuMemHostGetDevicePointer_v2(gcu_deviceptr *dptr, void *p,
					unsigned int flags)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!fake_current())
		return GCU_ERROR_INVALID_CONTEXT;
	if (!dptr || !p || flags)
		return GCU_ERROR_INVALID_VALUE;
	*dptr = fm_device_address(p);
	return *dptr ? GCU_SUCCESS : GCU_ERROR_INVALID_VALUE;
}

gcu_result cuStreamCreate(gcu_stream *stream, unsigned int flags)
{
	struct CUctx_st *ctx = fake_current();
	struct CUstream_st *s;

	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!ctx)
		return GCU_ERROR_INVALID_CONTEXT;
	if (!stream || flags > GCU_STREAM_NON_BLOCKING)
		return GCU_ERROR_INVALID_VALUE;
	s = calloc(1, sizeof(*s));
	if (!s)
		return GCU_ERROR_OUT_OF_MEMORY;
	s->ctx = ctx;
	if (fq_stream_start(&s->q, &ctx->domain, ctx->device)) {
		free(s);
		return GCU_ERROR_OUT_OF_MEMORY;
	}
	*stream = s;
	return GCU_SUCCESS;
}

gcu_result cuStreamDestroy_v2(gcu_stream stream)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!stream || stream == GCU_STREAM_LEGACY ||
	    stream == GCU_STREAM_PER_THREAD)
		return GCU_ERROR_INVALID_HANDLE;
	/* The queue drains first (or is dropped when the context is dead). */
	fq_stream_stop(&stream->q);
	free(stream);
	return GCU_SUCCESS;
}

gcu_result cuStreamGetCtx(gcu_stream stream, gcu_context *ctx)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (!ctx)
		return GCU_ERROR_INVALID_VALUE;
	*ctx = s->ctx;
	return GCU_SUCCESS;
}

gcu_result gpuar_fake_cuda_capture(gcu_stream stream, int on)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	fq_stream_set_capturing(&s->q, on != 0);
	return GCU_SUCCESS;
}

gcu_result cuStreamIsCapturing(gcu_stream stream, unsigned int *status)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (!status)
		return GCU_ERROR_INVALID_VALUE;
	*status = fq_stream_capturing(&s->q) ? GCU_STREAM_CAPTURE_STATUS_ACTIVE :
					       GCU_STREAM_CAPTURE_STATUS_NONE;
	return GCU_SUCCESS;
}

gcu_result cuStreamWriteValue64_v2(gcu_stream stream, gcu_deviceptr addr,
				   gcu_u64 value, unsigned int flags)
{
	struct CUstream_st *s;
	struct fq_op op;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (flags > 1 || (addr & 7))
		return GCU_ERROR_INVALID_VALUE;
	if (flags)	/* CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER */
		__atomic_fetch_add(&fake_no_barrier_writes, 1, __ATOMIC_RELAXED);
	op = fm_word_op(FQ_WRITE, addr, value, 0, GCU_ERROR_ILLEGAL_ADDRESS);
	return fake_push(s, &op);
}

gcu_result cuStreamWaitValue64_v2(gcu_stream stream, gcu_deviceptr addr,
				  gcu_u64 value, unsigned int flags)
{
	struct CUstream_st *s;
	struct fq_op op;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	/* Only CU_STREAM_WAIT_VALUE_GEQ is modelled. */
	if (flags != GCU_STREAM_WAIT_VALUE_GEQ || (addr & 7))
		return GCU_ERROR_INVALID_VALUE;
	op = fm_word_op(FQ_WAIT_WRAPPING, addr, value, 0,
			GCU_ERROR_ILLEGAL_ADDRESS);
	return fake_push(s, &op);
}

gcu_result cuStreamQuery(gcu_stream stream)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	return rc ? rc : fq_stream_query(&s->q, GCU_ERROR_NOT_READY);
}

gcu_result cuStreamSynchronize(gcu_stream stream)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	return fq_stream_sync(&s->q);
}

/* Enqueue @ns of device work (a kernel of known duration). */
gcu_result gpuar_fake_cuda_work(gcu_stream stream, uint64_t ns)
{
	struct CUstream_st *s;
	struct fq_op op = { .kind = FQ_WORK, .ns = ns };
	gcu_result rc = fake_stream(stream, &s);

	return rc ? rc : fake_push(s, &op);
}

/* Enqueue a launch that fails with @code when it runs (sticky). */
gcu_result gpuar_fake_cuda_fault(gcu_stream stream, gcu_result code)
{
	struct CUstream_st *s;
	struct fq_op op = { .kind = FQ_FAULT, .code = code };
	gcu_result rc = fake_stream(stream, &s);

	return rc ? rc : fake_push(s, &op);
}

/* ------------------------------------------------- kernels and events */

gcu_result cuDeviceGetName(char *name, int len, gcu_device device)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!name || len <= 0)
		return GCU_ERROR_INVALID_VALUE;
	if (device < 0 || device >= fake_devices)
		return GCU_ERROR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "gpuar fake CUDA device %d (test double)",
		 device);
	return GCU_SUCCESS;
}

gcu_result cuDevicePrimaryCtxSetFlags_v2(gcu_device device, unsigned int flags)
{
	unsigned int sched = flags & GCU_CTX_SCHED_MASK;

	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (device < 0 || device >= fake_devices)
		return GCU_ERROR_INVALID_DEVICE;
	/* One scheduling policy at most: auto 0, spin 1, yield 2, blocking 4. */
	if ((flags & ~0xffu) || (sched != 0 && sched != 1 && sched != 2 &&
				  sched != GCU_CTX_SCHED_BLOCKING_SYNC))
		return GCU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fake_lock);
	fake_ctx[device].flags = flags;
	pthread_mutex_unlock(&fake_lock);
	return GCU_SUCCESS;
}

static uint64_t fake_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t fake_globaltimer(void)
{
	return fake_now_ns() + FAKE_GLOBALTIMER_OFFSET;
}

/* Whether @text declares entry @k as modelled: ".entry NAME(" with exactly
 * the modelled number of ".param .u64" before the closing parenthesis. */
static bool fake_declares(const char *text, enum fake_kernel k)
{
	char head[80];
	const char *p, *end;
	unsigned int params = 0;

	snprintf(head, sizeof(head), ".entry %s(", fake_kernel_model[k].name);
	p = strstr(text, head);
	if (!p)
		return false;
	p += strlen(head);
	end = strchr(p, ')');
	if (!end)
		return false;
	while ((p = strstr(p, ".param .u64")) && p < end) {
		params++;
		p++;
	}
	return params == fake_kernel_model[k].params;
}

gcu_result cuModuleLoadData(gcu_module *module, const void *image)
{
	struct CUmod_st *m;

	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!fake_current())
		return GCU_ERROR_INVALID_CONTEXT;
	if (!module || !image)
		return GCU_ERROR_INVALID_VALUE;
	/* Only PTX text is modelled (no cubin, no fatbin). */
	if (!strstr(image, ".version") || !strstr(image, ".target"))
		return GCU_ERROR_INVALID_IMAGE;
	m = calloc(1, sizeof(*m));
	if (!m)
		return GCU_ERROR_OUT_OF_MEMORY;
	for (int k = 0; k < FAKE_KERNELS; k++) {
		m->fn[k].module = m;
		m->fn[k].kind = (enum fake_kernel)k;
		m->fn[k].present = fake_declares(image, (enum fake_kernel)k);
	}
	*module = m;
	return GCU_SUCCESS;
}

gcu_result cuModuleUnload(gcu_module module)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!module)
		return GCU_ERROR_INVALID_HANDLE;
	free(module);
	return GCU_SUCCESS;
}

gcu_result cuModuleGetFunction(gcu_function *function, gcu_module module,
			       const char *name)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!function || !module || !name)
		return GCU_ERROR_INVALID_VALUE;
	for (int k = 0; k < FAKE_KERNELS; k++) {
		if (module->fn[k].present &&
		    !strcmp(fake_kernel_model[k].name, name)) {
			*function = &module->fn[k];
			return GCU_SUCCESS;
		}
	}
	return GCU_ERROR_NOT_FOUND;
}

/* gpuar_bench_spin: args duration_ns, stamp device address, seq. */
static unsigned int fake_run_spin(struct fq_stream *s, const uint64_t *args)
{
	uint64_t end = fake_now_ns() + args[0];
	uint64_t *stamp = fm_host_word(args[1]);
	uint64_t *seq = fm_host_word(args[1] + 8);
	struct timespec ts = { .tv_sec = (time_t)(end / 1000000000ull),
			       .tv_nsec = (long)(end % 1000000000ull) };

	(void)s;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
	if (!stamp || !seq)
		return GCU_ERROR_ILLEGAL_ADDRESS;
	__atomic_store_n(stamp, fake_globaltimer(), __ATOMIC_RELAXED);
	__atomic_store_n(seq, args[2], __ATOMIC_RELEASE);
	return 0;
}

/* gpuar_bench_clock: args flag and reply device addresses. */
static unsigned int fake_run_clock(struct fq_stream *s, const uint64_t *args)
{
	uint64_t *flag = fm_host_word(args[0]);
	uint64_t *reply = fm_host_word(args[1]);
	uint64_t *running = fm_host_word(args[1] + 8);
	uint64_t give_up = fake_now_ns() + FAKE_CLOCK_KERNEL_TIMEOUT_NS;
	unsigned int spins = 0;

	if (!flag || !reply || !running)
		return GCU_ERROR_ILLEGAL_ADDRESS;
	__atomic_store_n(running, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		/* A dead context or a host that never answers ends the spin. */
		if (!(++spins & 0xfff)) {
			if (fq_stream_error(s))
				return 0;
			if (fake_now_ns() > give_up)
				return GCU_ERROR_LAUNCH_TIMEOUT;
		}
	}
	__atomic_store_n(reply, fake_globaltimer(), __ATOMIC_RELEASE);
	return 0;
}

gcu_result cuLaunchKernel(gcu_function f, unsigned int grid_x,
			  unsigned int grid_y, unsigned int grid_z,
			  unsigned int block_x, unsigned int block_y,
			  unsigned int block_z, unsigned int shared_bytes,
			  gcu_stream stream, void **params, void **extra)
{
	struct CUstream_st *s;
	struct fq_op op = { .kind = FQ_CALL };
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (!f || !f->present)
		return GCU_ERROR_INVALID_HANDLE;
	/* The modelled kernels are single-threaded: one thread, one block. */
	if (grid_x != 1 || grid_y != 1 || grid_z != 1 || block_x != 1 ||
	    block_y != 1 || block_z != 1 || shared_bytes || extra || !params)
		return GCU_ERROR_INVALID_VALUE;
	/* Arguments are copied at launch, as the driver does. */
	for (unsigned int i = 0; i < fake_kernel_model[f->kind].params; i++) {
		if (!params[i])
			return GCU_ERROR_INVALID_VALUE;
		memcpy(&op.args[i], params[i], sizeof(op.args[i]));
	}
	op.call = f->kind == FAKE_KERNEL_SPIN ? fake_run_spin : fake_run_clock;
	return fake_push(s, &op);
}

gcu_result cuEventCreate(gcu_event *event, unsigned int flags)
{
	struct CUevent_st *e;

	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!fake_current())
		return GCU_ERROR_INVALID_CONTEXT;
	if (!event || (flags & ~0x7u))
		return GCU_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return GCU_ERROR_OUT_OF_MEMORY;
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	*event = e;
	return GCU_SUCCESS;
}

static unsigned int fake_event_fire(struct fq_stream *s, const uint64_t *args)
{
	struct CUevent_st *e = (struct CUevent_st *)(uintptr_t)args[0];

	(void)s;
	pthread_mutex_lock(&e->lock);
	if (args[1] > e->fired)
		e->fired = args[1];
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	return 0;
}

gcu_result cuEventRecord(gcu_event event, gcu_stream stream)
{
	struct CUstream_st *s;
	struct fq_op op = { .kind = FQ_CALL, .call = fake_event_fire };
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (!event)
		return GCU_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&event->lock);
	op.args[0] = (uint64_t)(uintptr_t)event;
	op.args[1] = ++event->recorded;
	event->ctx = s->ctx;
	rc = fake_push(s, &op);
	if (rc)
		event->recorded--;
	pthread_mutex_unlock(&event->lock);
	return rc;
}

/* Until the latest record is reached (or the recording context dies). */
static gcu_result fake_event_wait(struct CUevent_st *e)
{
	gcu_result rc = GCU_SUCCESS;
	uint64_t target;

	pthread_mutex_lock(&e->lock);
	target = e->recorded;
	while (e->fired < target) {
		struct timespec ts;

		if (e->ctx && (rc = fq_domain_error(&e->ctx->domain)))
			break;
		/* Timed, so a fault that drops the record is seen. */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&e->cond, &e->lock, &ts);
	}
	pthread_mutex_unlock(&e->lock);
	return rc;
}

gcu_result cuEventSynchronize(gcu_event event)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!event)
		return GCU_ERROR_INVALID_HANDLE;
	return fake_event_wait(event);
}

gcu_result cuEventDestroy_v2(gcu_event event)
{
	if (fake_ready())
		return GCU_ERROR_NOT_INITIALIZED;
	if (!event)
		return GCU_ERROR_INVALID_HANDLE;
	/* The double waits for pending records (real CUDA defers the free),
	 * so no queued call is left pointing at freed memory. */
	fake_event_wait(event);
	pthread_cond_destroy(&event->cond);
	pthread_mutex_destroy(&event->lock);
	free(event);
	return GCU_SUCCESS;
}
