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
 * CU_STREAM_LEGACY names one default stream per context, and
 * CU_STREAM_PER_THREAD one stream per context *and thread* ("The
 * per-thread default stream is ... local to both the thread and the
 * CUcontext", CUDA Driver API, Stream synchronization behavior); every
 * stream has an id unique for the life of the process (cuStreamGetId). A
 * bare NULL stream is treated as the legacy stream.
 *
 * Graph capture (cuStreamBeginCapture_v2 ... cuStreamEndCapture): work
 * enqueued on a capturing stream becomes graph nodes, as the driver
 * does. Capture modes follow cuThreadExchangeStreamCaptureMode's
 * documentation (cuda.h): a thread in the GLOBAL mode is "prohibited from
 * potentially unsafe API calls" while any other thread has a GLOBAL
 * capture (or it has a non-RELAXED one itself), THREAD_LOCAL only while
 * it has one itself, RELAXED never. A prohibited call (here: stream and
 * event queries and synchronizes, host memory (un)registration) fails
 * with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the
 * captures that prohibited it, so their cuStreamEndCapture fails with
 * CUDA_ERROR_STREAM_CAPTURE_INVALIDATED.
 *
 * Stream memory operations: the v2 entry points, where
 * CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER "is not supported in the v2 API"
 * (flags other than 0 fail), and cuStreamBatchMemOp_v2 with
 * CU_STREAM_MEM_OP_BARRIER ("only supported in the _v2 API"). A 64-bit
 * write not preceded in its batch by a system-scope barrier is counted
 * (gpuar_fake_cuda_unfenced_writes): the v2 documentation promises no
 * fence of its own, so a backend that needs the work's results visible
 * must ask for the barrier. Graph memop nodes (cuGraphAddBatchMemOpNode)
 * run the same ops at each launch; cuGraphExecBatchMemOpNodeSetParams
 * may change only the address and value of writes and waits, never the
 * count, the context or the types ("Other fields, such as the context,
 * count or type of operations ... may not be modified"), and affects only
 * later launches.
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
 * Host functions (cuLaunchHostFunc), as the CUDA Driver API documents
 * them: "The function will be called after currently enqueued work and
 * will block work added after it", so the call is a stream op: the
 * stream's worker reaches it after the preceding work, hands the function
 * to the double's one host-function thread (a driver thread, never the
 * caller's) and waits for it to return before the stream goes on. One
 * thread runs every host function of the process, one at a time: "Host
 * functions without a mandated order (such as in independent streams)
 * execute in undefined order and may be serialized". "The host function
 * must not make any CUDA API calls. Attempting to use a CUDA API may
 * result in CUDA_ERROR_NOT_PERMITTED, but this is not required": the
 * double always refuses so, for every entry point that checks
 * initialisation, and counts the refusals (gpuar_fake_cuda_host_refused),
 * so a host function that calls CUDA fails in the tests, not on a GPU.
 * Nothing documents what becomes of a host function queued behind a fault
 * of its context: the double drops it with the rest of the dead context's
 * queued work (fake_queue.h), so a waiter that waits only for the call
 * would wait forever, as it may on a driver. Under graph capture it is
 * captured as any stream op (the docs name no capture error for it).
 *
 * Double-only entry points (gpuar_fake_cuda_*, below) let tests enqueue
 * timed work and faults, start and end a (global-mode) capture, hide
 * entry points, set the driver version, and read counters. Environment: GPUAR_FAKE_CUDA_NO_DEVICE=1
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
_Static_assert(FAKE_DEVICES_MAX <= FQ_THREAD_STREAM_DEVICES, "per-thread slots");
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

/* The handle; the event itself outlives it while queued ops hold it. */
struct CUevent_st {
	struct fq_event *e;
};

#define FAKE_GRAPH_NODES 64
#define FAKE_NODE_OPS 4

/* A node: the stream ops it runs at each launch (work captured from a
 * stream, or a batch memop). Launches run nodes in the order they were
 * added, which respects every dependency (a node's dependencies exist
 * before it). */
struct CUgraphNode_st {
	struct CUgraph_st *graph;
	bool memop;
	struct CUctx_st *ctx;		/* memop nodes */
	unsigned int nops;
	unsigned int nparams;
	gcu_mem_op params[FAKE_NODE_OPS];	/* memop nodes, as given */
	struct fq_op ops[FAKE_NODE_OPS];
};

struct CUgraph_st {
	unsigned int n;
	struct CUgraphNode_st *nodes[FAKE_GRAPH_NODES];
};

struct CUgraphExec_st {
	/* Launches whose node values another thread's SetParams replaced
	 * between this thread's SetParams and its launch (fake_lock). */
	pthread_t patched_by;
	bool patched;
	unsigned int n;
	struct CUgraphNode_st nodes[FAKE_GRAPH_NODES];	/* copies */
	const struct CUgraphNode_st *from[FAKE_GRAPH_NODES];
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
	struct CUstream_st *all_next;	/* every stream made, never freed */
	unsigned long long id;		/* cuStreamGetId */
	/* While captured: the graph its work goes to (the mode, thread and
	 * invalidation are the queue's, fake_queue.h). */
	struct CUgraph_st *capture;
};

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUctx_st fake_ctx[FAKE_DEVICES_MAX];
/* Every stream ever made: a destroyed or reset stream's handle stays
 * safe to pass (it answers CUDA_ERROR_INVALID_HANDLE), as a leak checker
 * sees. */
static pthread_mutex_t fake_streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUstream_st *fake_streams;
static uint64_t fake_exec_overlaps;
static int fake_devices = 2;
static int fake_driver_version = 12080;
static int fake_mem_ops_64 = 1;
static bool fake_initialised;
static char fake_hidden[FAKE_HIDDEN_MAX][64];
static uint64_t fake_unfenced_writes;
static unsigned long long fake_next_stream_id = 100;

static FQ_THREAD_LOCAL struct CUctx_st *ctx_stack[FAKE_CTX_STACK];
static FQ_THREAD_LOCAL int ctx_depth;
/* Set on the host-function thread only: its CUDA calls are refused. */
static FQ_THREAD_LOCAL bool fake_in_host_fn;

/* A host function handed to the host-function thread by a stream worker. */
struct fake_host_call {
	gcu_host_fn fn;
	void *data;
	bool done;
	struct fake_host_call *next;
};

static pthread_mutex_t fake_host_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fake_host_cond = PTHREAD_COND_INITIALIZER;
static struct fake_host_call *fake_host_head, *fake_host_tail;
static bool fake_host_started;
static uint64_t fake_host_calls, fake_host_refused;

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
FAKE_EXPORT uint64_t gpuar_fake_cuda_unfenced_writes(void);
FAKE_EXPORT void gpuar_fake_cuda_hold_queries(int on);
FAKE_EXPORT int gpuar_fake_cuda_held_queries(void);
FAKE_EXPORT uint64_t gpuar_fake_cuda_globaltimer_offset(void);
FAKE_EXPORT int gpuar_fake_cuda_primary_flags(int device);
FAKE_EXPORT gcu_result gpuar_fake_cuda_drop_writes(gcu_stream stream,
						   unsigned int n);
FAKE_EXPORT void gpuar_fake_cuda_hold_exec_updates(int on);
FAKE_EXPORT int gpuar_fake_cuda_held_exec_updates(void);
FAKE_EXPORT uint64_t gpuar_fake_cuda_exec_overlaps(void);
FAKE_EXPORT uint64_t gpuar_fake_cuda_host_calls(void);
FAKE_EXPORT uint64_t gpuar_fake_cuda_host_refused(void);

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

/*
 * While held, cuStreamQuery blocks (a driver call that takes long: the
 * driver's own locks, a busy PCIe link) until released; held_queries says
 * how many callers are blocked in it now.
 */
static pthread_mutex_t fake_hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fake_hold_cond = PTHREAD_COND_INITIALIZER;
static bool fake_hold;
static int fake_held;

/* Block while @hold is set, counted in *@held. */
static void fake_hold_while(const bool *hold, int *held)
{
	pthread_mutex_lock(&fake_hold_lock);
	(*held)++;
	while (*hold)
		pthread_cond_wait(&fake_hold_cond, &fake_hold_lock);
	(*held)--;
	pthread_cond_broadcast(&fake_hold_cond);
	pthread_mutex_unlock(&fake_hold_lock);
}

static void fake_set_hold(bool *hold, int on)
{
	pthread_mutex_lock(&fake_hold_lock);
	*hold = on != 0;
	pthread_cond_broadcast(&fake_hold_cond);
	pthread_mutex_unlock(&fake_hold_lock);
}

static int fake_get_held(const int *held)
{
	int n;

	pthread_mutex_lock(&fake_hold_lock);
	n = *held;
	pthread_mutex_unlock(&fake_hold_lock);
	return n;
}

void gpuar_fake_cuda_hold_queries(int on)
{
	fake_set_hold(&fake_hold, on);
}

int gpuar_fake_cuda_held_queries(void)
{
	return fake_get_held(&fake_held);
}

static void fake_query_hold(void)
{
	fake_hold_while(&fake_hold, &fake_held);
}

/*
 * While held, cuGraphExecBatchMemOpNodeSetParams blocks after changing
 * the node (a slow update), so a test can see whether a second thread
 * updates or launches the same executable graph meanwhile; held_exec_updates
 * says how many callers are blocked in it now.
 */
static bool fake_exec_hold;
static int fake_exec_held;

void gpuar_fake_cuda_hold_exec_updates(int on)
{
	fake_set_hold(&fake_exec_hold, on);
}

int gpuar_fake_cuda_held_exec_updates(void)
{
	return fake_get_held(&fake_exec_held);
}

/*
 * Launches of an executable graph whose node another thread changed
 * after this thread's own change and before its launch. Graph objects
 * are not synchronized internally, and calls on one must be serialized by
 * the caller (CUDA Driver API, "Graph object thread safety"): an
 * executable graph patched and launched from two threads without a lock
 * launches with the other thread's values.
 */
uint64_t gpuar_fake_cuda_exec_overlaps(void)
{
	return __atomic_load_n(&fake_exec_overlaps, __ATOMIC_RELAXED);
}

/* Host functions run so far (cuLaunchHostFunc). */
uint64_t gpuar_fake_cuda_host_calls(void)
{
	return __atomic_load_n(&fake_host_calls, __ATOMIC_ACQUIRE);
}

/* CUDA calls refused to a host function with CUDA_ERROR_NOT_PERMITTED. */
uint64_t gpuar_fake_cuda_host_refused(void)
{
	return __atomic_load_n(&fake_host_refused, __ATOMIC_ACQUIRE);
}

/* 64-bit writes enqueued without a system-scope barrier before them. */
uint64_t gpuar_fake_cuda_unfenced_writes(void)
{
	return __atomic_load_n(&fake_unfenced_writes, __ATOMIC_RELAXED);
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

/* Whether a CUDA call may proceed: initialised, and not from a host function. */
static gcu_result fake_ready(void)
{
	if (fake_in_host_fn) {
		__atomic_fetch_add(&fake_host_refused, 1, __ATOMIC_RELEASE);
		return GCU_ERROR_NOT_PERMITTED;
	}
	return fake_initialised ? GCU_SUCCESS : GCU_ERROR_NOT_INITIALIZED;
}

/* Return fake_ready()'s refusal from the calling entry point. */
#define FAKE_READY_OR_RETURN() \
	do { \
		gcu_result ready_ = fake_ready(); \
		if (ready_) \
			return ready_; \
	} while (0)

static struct CUstream_st *fake_stream_new(struct CUctx_st *ctx)
{
	struct CUstream_st *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->ctx = ctx;
	s->id = __atomic_fetch_add(&fake_next_stream_id, 1, __ATOMIC_RELAXED);
	if (fq_stream_start(&s->q, &ctx->domain, ctx->device)) {
		free(s);
		return NULL;
	}
	pthread_mutex_lock(&fake_streams_lock);
	s->all_next = fake_streams;
	fake_streams = s;
	pthread_mutex_unlock(&fake_streams_lock);
	return s;
}

/* The stream a handle names; special handles need a current context. */
static gcu_result fake_stream(gcu_stream handle, struct CUstream_st **out)
{
	struct CUctx_st *ctx;
	struct CUstream_st **slot;

	FAKE_READY_OR_RETURN();
	if (handle && handle != GCU_STREAM_LEGACY &&
	    handle != GCU_STREAM_PER_THREAD) {
		*out = handle;
		return fq_stream_gone(&handle->q);
	}
	ctx = fake_current();
	if (!ctx)
		return GCU_ERROR_INVALID_CONTEXT;
	/* Legacy: one per context. Per-thread: one per context and thread. */
	slot = handle == GCU_STREAM_PER_THREAD ?
	       (struct CUstream_st **)fq_thread_stream_slot(ctx->device) :
	       &ctx->legacy;
	if (!slot)
		return GCU_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&fake_lock);
	/* A reset destroyed it: the context makes a new one on next use. */
	if (*slot && fq_stream_gone(&(*slot)->q))
		*slot = NULL;
	if (!*slot && !(*slot = fake_stream_new(ctx))) {
		pthread_mutex_unlock(&fake_lock);
		return GCU_ERROR_OUT_OF_MEMORY;
	}
	*out = *slot;
	pthread_mutex_unlock(&fake_lock);
	return GCU_SUCCESS;
}

static struct CUgraphNode_st *fake_graph_node(struct CUgraph_st *g);

/*
 * Enqueue on a stream; on a capturing stream the op becomes a graph node
 * instead (the driver captures stream work into the graph).
 */
static gcu_result fake_push(struct CUstream_st *s, const struct fq_op *op)
{
	struct CUgraphNode_st *n;
	gcu_result rc = GCU_SUCCESS;

	pthread_mutex_lock(&fake_lock);
	if (s->capture) {
		if (fq_capture_invalidated(&s->q)) {
			rc = GCU_ERROR_STREAM_CAPTURE_INVALIDATED;
		} else if (!(n = fake_graph_node(s->capture))) {
			rc = GCU_ERROR_OUT_OF_MEMORY;
		} else {
			n->ops[0] = *op;
			n->nops = 1;
		}
		pthread_mutex_unlock(&fake_lock);
		return rc;
	}
	pthread_mutex_unlock(&fake_lock);
	return fq_stream_enqueue(&s->q, op, GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED,
				 GCU_ERROR_OUT_OF_MEMORY);
}

/* A "potentially unsafe" call during a capture (fake_queue.h has the
 * rule): CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED when prohibited. */
static gcu_result fake_capture_check(void)
{
	return fq_capture_permits_unsafe_call() ? GCU_SUCCESS :
	       GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
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
FAKE_EXPORT gcu_result cuCtxGetCurrent(gcu_context *ctx);
FAKE_EXPORT gcu_result cuDevicePrimaryCtxReset_v2(gcu_device device);
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
FAKE_EXPORT gcu_result cuEventQuery(gcu_event event);
FAKE_EXPORT gcu_result cuLaunchHostFunc(gcu_stream stream, gcu_host_fn fn,
					void *user_data);
FAKE_EXPORT gcu_result cuStreamGetId(gcu_stream stream, unsigned long long *id);
FAKE_EXPORT gcu_result cuThreadExchangeStreamCaptureMode(unsigned int *mode);
FAKE_EXPORT gcu_result cuStreamBatchMemOp_v2(gcu_stream stream,
					     unsigned int count, void *ops,
					     unsigned int flags);
FAKE_EXPORT gcu_result cuStreamWaitEvent(gcu_stream stream, gcu_event event,
					 unsigned int flags);
FAKE_EXPORT gcu_result cuStreamBeginCapture_v2(gcu_stream stream,
					       unsigned int mode);
FAKE_EXPORT gcu_result cuStreamEndCapture(gcu_stream stream, gcu_graph *graph);
FAKE_EXPORT gcu_result cuGraphCreate(gcu_graph *graph, unsigned int flags);
FAKE_EXPORT gcu_result cuGraphDestroy(gcu_graph graph);
FAKE_EXPORT gcu_result cuGraphGetNodes(gcu_graph graph, gcu_graph_node *nodes,
				       size_t *count);
FAKE_EXPORT gcu_result cuGraphAddBatchMemOpNode(gcu_graph_node *node,
						gcu_graph graph,
						const gcu_graph_node *deps,
						size_t ndeps,
						const void *params);
FAKE_EXPORT gcu_result cuGraphInstantiateWithFlags(gcu_graph_exec *exec,
						   gcu_graph graph,
						   unsigned long long flags);
FAKE_EXPORT gcu_result cuGraphExecBatchMemOpNodeSetParams(gcu_graph_exec exec,
							  gcu_graph_node node,
							  const void *params);
FAKE_EXPORT gcu_result cuGraphLaunch(gcu_graph_exec exec, gcu_stream stream);
FAKE_EXPORT gcu_result cuGraphExecDestroy(gcu_graph_exec exec);

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
	{ "cuCtxGetCurrent", (void *)cuCtxGetCurrent, 4000 },
	{ "cuDevicePrimaryCtxReset", (void *)cuDevicePrimaryCtxReset_v2, 11000 },
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
	{ "cuEventQuery", (void *)cuEventQuery, 2000 },
	{ "cuLaunchHostFunc", (void *)cuLaunchHostFunc, 10000 },
	{ "cuStreamGetId", (void *)cuStreamGetId, 12000 },
	{ "cuThreadExchangeStreamCaptureMode",
	  (void *)cuThreadExchangeStreamCaptureMode, 10010 },
	{ "cuStreamBatchMemOp", (void *)cuStreamBatchMemOp_v2, 11070 },
	{ "cuStreamWaitEvent", (void *)cuStreamWaitEvent, 2000 },
	{ "cuStreamBeginCapture", (void *)cuStreamBeginCapture_v2, 10010 },
	{ "cuStreamEndCapture", (void *)cuStreamEndCapture, 10000 },
	{ "cuGraphCreate", (void *)cuGraphCreate, 10000 },
	{ "cuGraphDestroy", (void *)cuGraphDestroy, 10000 },
	{ "cuGraphGetNodes", (void *)cuGraphGetNodes, 10000 },
	{ "cuGraphAddBatchMemOpNode", (void *)cuGraphAddBatchMemOpNode, 11070 },
	{ "cuGraphInstantiate", (void *)cuGraphInstantiateWithFlags, 12000 },
	{ "cuGraphExecBatchMemOpNodeSetParams",
	  (void *)cuGraphExecBatchMemOpNodeSetParams, 11070 },
	{ "cuGraphLaunch", (void *)cuGraphLaunch, 10000 },
	{ "cuGraphExecDestroy", (void *)cuGraphExecDestroy, 10000 },
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
#define GCU_NAME(code, name) { code, name },
		GCU_STATUS_NAMES(GCU_NAME)
#undef GCU_NAME
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
	FAKE_READY_OR_RETURN();
	if (!device)
		return GCU_ERROR_INVALID_VALUE;
	if (ordinal < 0 || ordinal >= fake_devices)
		return GCU_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return GCU_SUCCESS;
}

gcu_result cuDeviceGetCount(int *count)
{
	FAKE_READY_OR_RETURN();
	if (!count)
		return GCU_ERROR_INVALID_VALUE;
	*count = fake_devices;
	return GCU_SUCCESS;
}

gcu_result cuDeviceGetAttribute(int *value, unsigned int attribute,
				gcu_device device)
{
	FAKE_READY_OR_RETURN();
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
	FAKE_READY_OR_RETURN();
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

	FAKE_READY_OR_RETURN();
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
	FAKE_READY_OR_RETURN();
	if (!ctx || ctx_depth == FAKE_CTX_STACK)
		return GCU_ERROR_INVALID_VALUE;
	ctx_stack[ctx_depth++] = ctx;
	return GCU_SUCCESS;
}

gcu_result cuCtxPopCurrent_v2(gcu_context *ctx)
{
	FAKE_READY_OR_RETURN();
	if (!ctx_depth)
		return GCU_ERROR_INVALID_CONTEXT;
	ctx_depth--;
	if (ctx)
		*ctx = ctx_stack[ctx_depth];
	return GCU_SUCCESS;
}

gcu_result cuCtxGetCurrent(gcu_context *ctx)
{
	FAKE_READY_OR_RETURN();
	if (!ctx)
		return GCU_ERROR_INVALID_VALUE;
	*ctx = fake_current();	/* NULL: none is current */
	return GCU_SUCCESS;
}

/*
 * "Destroy all allocations and reset all state on the primary context"
 * (CUDA Driver API, cuDevicePrimaryCtxReset), from whichever thread calls
 * it: every stream of the context is destroyed with its queued work
 * (nothing it would have stored lands, and its handle answers
 * CUDA_ERROR_INVALID_HANDLE from then on), every host registration made
 * under it is gone, and the legacy and per-thread streams are made afresh
 * on next use. "Resetting the primary context does not release it": the
 * retains stand. A sticky error stays ("To continue using CUDA, the
 * process must be terminated and relaunched", CUresult descriptions).
 */
gcu_result cuDevicePrimaryCtxReset_v2(gcu_device device)
{
	struct CUctx_st *ctx;

	FAKE_READY_OR_RETURN();
	if (device < 0 || device >= fake_devices)
		return GCU_ERROR_INVALID_DEVICE;
	ctx = &fake_ctx[device];
	pthread_mutex_lock(&fake_lock);
	ctx->legacy = NULL;
	pthread_mutex_unlock(&fake_lock);
	pthread_mutex_lock(&fake_streams_lock);
	for (struct CUstream_st *s = fake_streams; s; s = s->all_next)
		if (s->ctx == ctx && !fq_stream_gone(&s->q))
			fq_stream_kill(&s->q, GCU_ERROR_INVALID_HANDLE);
	pthread_mutex_unlock(&fake_streams_lock);
	fm_drop_owner(&ctx->domain);
	return GCU_SUCCESS;
}

gcu_result cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags)
{
	FAKE_READY_OR_RETURN();
	if (!fake_current())
		return GCU_ERROR_INVALID_CONTEXT;
	if (!p || !bytes || (flags & ~0xfu))
		return GCU_ERROR_INVALID_VALUE;
	if (fake_capture_check())
		return GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	switch (fm_register(p, bytes, &fake_current()->domain)) {
	case FM_REGISTERED: return GCU_SUCCESS;
	case FM_OVERLAPS: return GCU_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	default: return GCU_ERROR_OUT_OF_MEMORY;
	}
}

gcu_result cuMemHostUnregister(void *p)
{
	FAKE_READY_OR_RETURN();
	if (!fake_current())
		return GCU_ERROR_INVALID_CONTEXT;
	if (fake_capture_check())
		return GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return fm_unregister(p) ? GCU_SUCCESS :
				  GCU_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

gcu_result cuMemHostGetDevicePointer_v2(gcu_deviceptr *dptr, void *p,
					unsigned int flags)
{
	FAKE_READY_OR_RETURN();
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

	FAKE_READY_OR_RETURN();
	if (!ctx)
		return GCU_ERROR_INVALID_CONTEXT;
	if (!stream || flags > GCU_STREAM_NON_BLOCKING)
		return GCU_ERROR_INVALID_VALUE;
	s = fake_stream_new(ctx);
	if (!s)
		return GCU_ERROR_OUT_OF_MEMORY;
	*stream = s;
	return GCU_SUCCESS;
}

gcu_result cuStreamDestroy_v2(gcu_stream stream)
{
	FAKE_READY_OR_RETURN();
	if (!stream || stream == GCU_STREAM_LEGACY ||
	    stream == GCU_STREAM_PER_THREAD || fq_stream_gone(&stream->q))
		return GCU_ERROR_INVALID_HANDLE;
	/*
	 * "In case the device is still doing work in the stream hStream when
	 * cuStreamDestroy() is called, the function will return immediately
	 * and the resources associated with hStream will be released
	 * automatically once the device has completed all work in hStream"
	 * (CUDA Driver API, cuStreamDestroy): the queue still runs (or is
	 * dropped when the context is dead); the handle is invalid at once.
	 */
	fq_stream_close_handle(&stream->q, GCU_ERROR_INVALID_HANDLE);
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

gcu_result cuStreamGetId(gcu_stream stream, unsigned long long *id)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (!id)
		return GCU_ERROR_INVALID_VALUE;
	/* CCCL: "querying the driver stream ID is not permitted" while the
	 * stream is captured. */
	if (s->capture)
		return GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	*id = s->id;
	return GCU_SUCCESS;
}

gcu_result cuThreadExchangeStreamCaptureMode(unsigned int *mode)
{
	if (!mode || *mode > GCU_STREAM_CAPTURE_MODE_RELAXED)
		return GCU_ERROR_INVALID_VALUE;
	*mode = fq_capture_exchange_mode(*mode);
	return GCU_SUCCESS;
}

gcu_result cuGraphCreate(gcu_graph *graph, unsigned int flags)
{
	FAKE_READY_OR_RETURN();
	if (!graph || flags)
		return GCU_ERROR_INVALID_VALUE;
	*graph = calloc(1, sizeof(**graph));
	return *graph ? GCU_SUCCESS : GCU_ERROR_OUT_OF_MEMORY;
}

/* A new node at the end of @g, or NULL when full. Under fake_lock or
 * with @g private to the caller. */
static struct CUgraphNode_st *fake_graph_node(struct CUgraph_st *g)
{
	struct CUgraphNode_st *n;

	if (g->n == FAKE_GRAPH_NODES || !(n = calloc(1, sizeof(*n))))
		return NULL;
	n->graph = g;
	g->nodes[g->n++] = n;
	return n;
}

gcu_result cuGraphDestroy(gcu_graph graph)
{
	if (!graph)
		return GCU_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < graph->n; i++)
		free(graph->nodes[i]);
	free(graph);
	return GCU_SUCCESS;
}

gcu_result cuGraphGetNodes(gcu_graph graph, gcu_graph_node *nodes,
			   size_t *count)
{
	if (!graph || !count)
		return GCU_ERROR_INVALID_VALUE;
	if (nodes)
		for (size_t i = 0; i < *count && i < graph->n; i++)
			nodes[i] = graph->nodes[i];
	*count = graph->n;
	return GCU_SUCCESS;
}

gcu_result cuStreamBeginCapture_v2(gcu_stream stream, unsigned int mode)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	/* The legacy stream cannot be captured. */
	if (stream == GCU_STREAM_LEGACY || !stream)
		return GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	if (mode > GCU_STREAM_CAPTURE_MODE_RELAXED)
		return GCU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fake_lock);
	if (s->capture || !(s->capture = calloc(1, sizeof(*s->capture)))) {
		pthread_mutex_unlock(&fake_lock);
		return GCU_ERROR_ILLEGAL_STATE;
	}
	if (!fq_capture_begin(&s->q, mode)) {
		free(s->capture);
		s->capture = NULL;
		rc = GCU_ERROR_ILLEGAL_STATE;
	}
	pthread_mutex_unlock(&fake_lock);
	return rc;
}

gcu_result cuStreamEndCapture(gcu_stream stream, gcu_graph *graph)
{
	struct CUstream_st *s;
	struct CUgraph_st *g;
	gcu_result rc = fake_stream(stream, &s);
	bool invalidated = false;

	if (rc)
		return rc;
	if (!graph)
		return GCU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fake_lock);
	g = s->capture;
	s->capture = NULL;
	fq_capture_end(&s->q, &invalidated);
	pthread_mutex_unlock(&fake_lock);
	*graph = NULL;
	if (!g)
		return GCU_ERROR_ILLEGAL_STATE;
	if (invalidated) {
		cuGraphDestroy(g);
		return GCU_ERROR_STREAM_CAPTURE_INVALIDATED;
	}
	*graph = g;
	return GCU_SUCCESS;
}

/* Begin (in the GLOBAL mode, as torch.cuda.graph does) or end a capture
 * of @stream, discarding its graph. */
gcu_result gpuar_fake_cuda_capture(gcu_stream stream, int on)
{
	gcu_graph g = NULL;
	gcu_result rc;

	if (on)
		return cuStreamBeginCapture_v2(stream, GCU_STREAM_CAPTURE_MODE_GLOBAL);
	rc = cuStreamEndCapture(stream, &g);
	if (g)
		cuGraphDestroy(g);
	return rc == GCU_ERROR_STREAM_CAPTURE_INVALIDATED ? GCU_SUCCESS : rc;
}

gcu_result cuStreamIsCapturing(gcu_stream stream, unsigned int *status)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (!status)
		return GCU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fake_lock);
	*status = !s->capture ? GCU_STREAM_CAPTURE_STATUS_NONE :
		  fq_capture_invalidated(&s->q) ? GCU_STREAM_CAPTURE_STATUS_INVALIDATED :
					   GCU_STREAM_CAPTURE_STATUS_ACTIVE;
	pthread_mutex_unlock(&fake_lock);
	return GCU_SUCCESS;
}

/* One 64-bit write counted when no system-scope barrier precedes it. */
static void fake_note_write(bool fenced)
{
	if (!fenced)
		__atomic_fetch_add(&fake_unfenced_writes, 1, __ATOMIC_RELAXED);
}

gcu_result cuStreamWriteValue64_v2(gcu_stream stream, gcu_deviceptr addr,
				   gcu_u64 value, unsigned int flags)
{
	struct CUstream_st *s;
	struct fq_op op;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	/* NO_MEMORY_BARRIER "is not supported in the v2 API". */
	if (flags || (addr & 7))
		return GCU_ERROR_INVALID_VALUE;
	fake_note_write(false);
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

/*
 * The stream ops of @count batch memops: 64-bit waits (GEQ), 64-bit
 * writes (flags 0 only) and barriers (SYS or GPU scope; a barrier is no
 * op of its own here, where every store is a release). 0, or
 * CUDA_ERROR_INVALID_VALUE for what the double does not model or v2 does
 * not support. @fenced counts writes without a SYS barrier before them.
 */
static gcu_result fake_mem_ops(const gcu_mem_op *in, unsigned int count,
			       struct fq_op *out, unsigned int *nout,
			       bool count_writes)
{
	bool sys_barrier = false;

	*nout = 0;
	if (!in || !count || count > FAKE_NODE_OPS)
		return GCU_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < count; i++) {
		const gcu_mem_op *m = &in[i];

		switch (m->operation) {
		case GCU_STREAM_MEM_OP_BARRIER:
			if (m->memory_barrier.flags > 1)
				return GCU_ERROR_INVALID_VALUE;
			sys_barrier |= m->memory_barrier.flags ==
				       GCU_STREAM_MEMORY_BARRIER_TYPE_SYS;
			break;
		case GCU_STREAM_MEM_OP_WRITE_VALUE_64:
			if (m->write_value.flags || (m->write_value.address & 7))
				return GCU_ERROR_INVALID_VALUE;
			if (count_writes)
				fake_note_write(sys_barrier);
			out[(*nout)++] = fm_word_op(FQ_WRITE, m->write_value.address,
						    m->write_value.value64, 0,
						    GCU_ERROR_ILLEGAL_ADDRESS);
			break;
		case GCU_STREAM_MEM_OP_WAIT_VALUE_64:
			if (m->write_value.flags != GCU_STREAM_WAIT_VALUE_GEQ ||
			    (m->write_value.address & 7))
				return GCU_ERROR_INVALID_VALUE;
			out[(*nout)++] = fm_word_op(FQ_WAIT_WRAPPING,
						    m->write_value.address,
						    m->write_value.value64, 0,
						    GCU_ERROR_ILLEGAL_ADDRESS);
			break;
		default:
			return GCU_ERROR_INVALID_VALUE;
		}
	}
	return GCU_SUCCESS;
}

gcu_result cuStreamBatchMemOp_v2(gcu_stream stream, unsigned int count,
				 void *ops, unsigned int flags)
{
	struct fq_op q[FAKE_NODE_OPS];
	struct CUstream_st *s;
	unsigned int n;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (flags)
		return GCU_ERROR_INVALID_VALUE;
	rc = fake_mem_ops(ops, count, q, &n, true);
	for (unsigned int i = 0; !rc && i < n; i++)
		rc = fake_push(s, &q[i]);
	return rc;
}

gcu_result cuStreamWaitEvent(gcu_stream stream, gcu_event event,
			     unsigned int flags)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (!event)
		return GCU_ERROR_INVALID_HANDLE;
	if (flags)
		return GCU_ERROR_INVALID_VALUE;
	if (s->capture)	/* event waits are not captured by the double */
		return GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return fq_stream_wait_event(&s->q, event->e,
				    GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED,
				    GCU_ERROR_OUT_OF_MEMORY);
}

/* The node params of cuGraphAddBatchMemOpNode / ...SetParams. */
static gcu_result fake_memop_node(struct CUgraphNode_st *n, const void *params,
				  bool count_writes)
{
	const gcu_mem_op_node_params *p = params;
	bool known = false;

	if (!p || !p->ctx || p->flags)
		return GCU_ERROR_INVALID_VALUE;
	for (int i = 0; i < FAKE_DEVICES_MAX; i++)
		known |= p->ctx == &fake_ctx[i] && fake_ctx[i].refs > 0;
	if (!known)
		return GCU_ERROR_INVALID_CONTEXT;
	if (p->count > FAKE_NODE_OPS)
		return GCU_ERROR_INVALID_VALUE;
	n->memop = true;
	n->ctx = p->ctx;
	n->nparams = p->count;
	memcpy(n->params, p->ops, p->count * sizeof(p->ops[0]));
	return fake_mem_ops(p->ops, p->count, n->ops, &n->nops, count_writes);
}

gcu_result cuGraphAddBatchMemOpNode(gcu_graph_node *node, gcu_graph graph,
				    const gcu_graph_node *deps, size_t ndeps,
				    const void *params)
{
	struct CUgraphNode_st *n;
	gcu_result rc;

	FAKE_READY_OR_RETURN();
	if (!node || !graph || (ndeps && !deps))
		return GCU_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < ndeps; i++)
		if (!deps[i] || deps[i]->graph != graph)
			return GCU_ERROR_INVALID_VALUE;
	n = fake_graph_node(graph);
	if (!n)
		return GCU_ERROR_OUT_OF_MEMORY;
	rc = fake_memop_node(n, params, true);
	if (rc) {
		free(graph->nodes[--graph->n]);
		return rc;
	}
	*node = n;
	return GCU_SUCCESS;
}

gcu_result cuGraphInstantiateWithFlags(gcu_graph_exec *exec, gcu_graph graph,
				       unsigned long long flags)
{
	struct CUgraphExec_st *x;

	FAKE_READY_OR_RETURN();
	if (!exec || !graph || flags)
		return GCU_ERROR_INVALID_VALUE;
	x = calloc(1, sizeof(*x));
	if (!x)
		return GCU_ERROR_OUT_OF_MEMORY;
	x->n = graph->n;
	for (unsigned int i = 0; i < graph->n; i++) {
		x->nodes[i] = *graph->nodes[i];
		x->from[i] = graph->nodes[i];
	}
	*exec = x;
	return GCU_SUCCESS;
}

gcu_result cuGraphExecBatchMemOpNodeSetParams(gcu_graph_exec exec,
					      gcu_graph_node node,
					      const void *params)
{
	const gcu_mem_op_node_params *p = params;
	struct CUgraphNode_st *n = NULL, copy;

	if (!exec || !node || !p)
		return GCU_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < exec->n; i++)
		if (exec->from[i] == node)
			n = &exec->nodes[i];
	if (!n || !n->memop)
		return GCU_ERROR_INVALID_VALUE;
	/* Only addresses and values may change: not the context, the count,
	 * the types, nor any barrier. */
	if (p->ctx != n->ctx || p->count != n->nparams)
		return GCU_ERROR_INVALID_VALUE;
	copy = *n;
	for (unsigned int i = 0; i < p->count && i < FAKE_NODE_OPS; i++) {
		if (!p->ops || p->ops[i].operation != n->params[i].operation)
			return GCU_ERROR_INVALID_VALUE;
		if (p->ops[i].operation == GCU_STREAM_MEM_OP_BARRIER &&
		    p->ops[i].memory_barrier.flags != n->params[i].memory_barrier.flags)
			return GCU_ERROR_INVALID_VALUE;
	}
	if (fake_memop_node(&copy, p, false))
		return GCU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fake_lock);
	*n = copy;
	exec->patched_by = pthread_self();
	exec->patched = true;
	pthread_mutex_unlock(&fake_lock);
	fake_hold_while(&fake_exec_hold, &fake_exec_held);
	return GCU_SUCCESS;
}

gcu_result cuGraphLaunch(gcu_graph_exec exec, gcu_stream stream)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (!exec)
		return GCU_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fake_lock);
	if (exec->patched && !pthread_equal(exec->patched_by, pthread_self()))
		__atomic_fetch_add(&fake_exec_overlaps, 1, __ATOMIC_RELAXED);
	exec->patched = false;
	pthread_mutex_unlock(&fake_lock);
	/* Each launch runs the ops as they are now: a later SetParams
	 * changes only later launches. */
	for (unsigned int i = 0; !rc && i < exec->n; i++)
		for (unsigned int k = 0; !rc && k < exec->nodes[i].nops; k++)
			rc = fake_push(s, &exec->nodes[i].ops[k]);
	return rc;
}

gcu_result cuGraphExecDestroy(gcu_graph_exec exec)
{
	if (!exec)
		return GCU_ERROR_INVALID_VALUE;
	free(exec);
	return GCU_SUCCESS;
}

gcu_result cuStreamQuery(gcu_stream stream)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (fake_capture_check())
		return GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	fake_query_hold();
	return fq_stream_query(&s->q, GCU_ERROR_NOT_READY);
}

gcu_result cuStreamSynchronize(gcu_stream stream)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (fake_capture_check())
		return GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
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

/* The next @n write-values that run on @stream store nothing. */
gcu_result gpuar_fake_cuda_drop_writes(gcu_stream stream, unsigned int n)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (!rc)
		fq_stream_drop_writes(&s->q, n);
	return rc;
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
	FAKE_READY_OR_RETURN();
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

	FAKE_READY_OR_RETURN();
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

	FAKE_READY_OR_RETURN();
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
	FAKE_READY_OR_RETURN();
	if (!module)
		return GCU_ERROR_INVALID_HANDLE;
	free(module);
	return GCU_SUCCESS;
}

gcu_result cuModuleGetFunction(gcu_function *function, gcu_module module,
			       const char *name)
{
	FAKE_READY_OR_RETURN();
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

	FAKE_READY_OR_RETURN();
	if (!fake_current())
		return GCU_ERROR_INVALID_CONTEXT;
	if (!event || (flags & ~0x7u))
		return GCU_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (e)
		e->e = fq_event_new();
	if (!e || !e->e) {
		free(e);
		return GCU_ERROR_OUT_OF_MEMORY;
	}
	*event = e;
	return GCU_SUCCESS;
}

gcu_result cuEventRecord(gcu_event event, gcu_stream stream)
{
	struct CUstream_st *s;
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	if (!event)
		return GCU_ERROR_INVALID_HANDLE;
	if (s->capture)	/* records are not captured by the double */
		return GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return fq_event_record(event->e, &s->q,
			       GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED,
			       GCU_ERROR_OUT_OF_MEMORY);
}

gcu_result cuEventQuery(gcu_event event)
{
	FAKE_READY_OR_RETURN();
	if (!event)
		return GCU_ERROR_INVALID_HANDLE;
	if (fake_capture_check())
		return GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return fq_event_query(event->e, GCU_ERROR_NOT_READY);
}

gcu_result cuEventSynchronize(gcu_event event)
{
	FAKE_READY_OR_RETURN();
	if (!event)
		return GCU_ERROR_INVALID_HANDLE;
	if (fake_capture_check())
		return GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return fq_event_sync(event->e);
}

gcu_result cuEventDestroy_v2(gcu_event event)
{
	FAKE_READY_OR_RETURN();
	if (!event)
		return GCU_ERROR_INVALID_HANDLE;
	fq_event_release(event->e);
	free(event);
	return GCU_SUCCESS;
}

/* ------------------------------------------------------ host functions */

/* The driver thread that runs every host function, one at a time. */
static void *fake_host_main(void *arg)
{
	(void)arg;
	fake_in_host_fn = true;
	pthread_mutex_lock(&fake_host_lock);
	for (;;) {
		struct fake_host_call *c;

		while (!fake_host_head)
			pthread_cond_wait(&fake_host_cond, &fake_host_lock);
		c = fake_host_head;
		fake_host_head = c->next;
		if (!fake_host_head)
			fake_host_tail = NULL;
		pthread_mutex_unlock(&fake_host_lock);
		c->fn(c->data);
		__atomic_fetch_add(&fake_host_calls, 1, __ATOMIC_RELEASE);
		pthread_mutex_lock(&fake_host_lock);
		c->done = true;
		pthread_cond_broadcast(&fake_host_cond);
	}
	return NULL;
}

/* The stream op: run the function on the host thread, wait for its return. */
static unsigned int fake_run_host_fn(struct fq_stream *s, const uint64_t *args)
{
	struct fake_host_call c = {
		.fn = (gcu_host_fn)(uintptr_t)args[0],
		.data = (void *)(uintptr_t)args[1],
	};

	(void)s;
	pthread_mutex_lock(&fake_host_lock);
	if (fake_host_tail)
		fake_host_tail->next = &c;
	else
		fake_host_head = &c;
	fake_host_tail = &c;
	pthread_cond_broadcast(&fake_host_cond);
	while (!c.done)
		pthread_cond_wait(&fake_host_cond, &fake_host_lock);
	pthread_mutex_unlock(&fake_host_lock);
	return 0;
}

/* The host thread, started on first use; false when it cannot start. */
static bool fake_host_start(void)
{
	bool ok = true;

	pthread_mutex_lock(&fake_host_lock);
	if (!fake_host_started) {
		pthread_t t;

		ok = !pthread_create(&t, NULL, fake_host_main, NULL);
		if (ok)
			pthread_detach(t);
		fake_host_started = ok;
	}
	pthread_mutex_unlock(&fake_host_lock);
	return ok;
}

gcu_result cuLaunchHostFunc(gcu_stream stream, gcu_host_fn fn, void *user_data)
{
	struct CUstream_st *s;
	struct fq_op op = { .kind = FQ_CALL, .call = fake_run_host_fn };
	gcu_result rc = fake_stream(stream, &s);

	if (rc)
		return rc;
	/* Not in the documented list: refused so a test's bug fails here, not
	 * as a crash on the host thread. */
	if (!fn)
		return GCU_ERROR_INVALID_VALUE;
	if (!fake_host_start())
		return GCU_ERROR_OUT_OF_MEMORY;
	op.args[0] = (uint64_t)(uintptr_t)fn;
	op.args[1] = (uint64_t)(uintptr_t)user_data;
	return fake_push(s, &op);
}
