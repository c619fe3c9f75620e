// SPDX-License-Identifier: MIT
/*
 * The CUDA backend: the vendor calls behind the shared line, await and
 * source logic (backends/vendor), all made under the device's retained
 * primary context and, where the driver has cuThreadExchangeStreamCaptureMode,
 * in the relaxed capture mode: the library calls the driver from its own
 * and the caller's threads at any time, and in the default global mode
 * such a call during another thread's graph capture would invalidate that
 * capture (the mode is per thread; the caller's is restored after).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gpuar/cuda.h>

#include "cuda_loader.h"
#include "vendor.h"

struct gpuar_cuda {
	struct gv_backend gv;	/* first: the ops get it back by a cast */
	struct gcu_loaded drv;
	gcu_device device;
	gcu_context ctx;	/* the handle's own primary-context reference */
};

static struct gpuar_cuda *gcu_of(struct gv_backend *b)
{
	return (struct gpuar_cuda *)b;
}

/*
 * Make the primary context current for one call and the thread's capture
 * mode relaxed ("not prohibited from potentially unsafe API calls", CUDA
 * Driver API, cuThreadExchangeStreamCaptureMode); undo both after.
 */
static gcu_result gcu_enter(struct gpuar_cuda *cu)
{
	gcu_result rc = cu->drv.api.cuCtxPushCurrent(cu->ctx);

	if (!rc)
		gv_capture_relax(cu->drv.api.cuThreadExchangeStreamCaptureMode);
	return rc;
}

static void gcu_leave(struct gpuar_cuda *cu)
{
	gcu_context popped;

	gv_capture_restore(cu->drv.api.cuThreadExchangeStreamCaptureMode);
	cu->drv.api.cuCtxPopCurrent(&popped);
}

static unsigned int gcu_line_hold(struct gv_backend *b)
{
	struct gpuar_cuda *cu = gcu_of(b);
	gcu_context ctx;

	return cu->drv.api.cuDevicePrimaryCtxRetain(&ctx, cu->device);
}

static void gcu_line_release(struct gv_backend *b)
{
	struct gpuar_cuda *cu = gcu_of(b);

	cu->drv.api.cuDevicePrimaryCtxRelease(cu->device);
}

static unsigned int gcu_page_register(struct gv_backend *b, void *page,
				      size_t bytes, uint64_t *devaddr)
{
	struct gpuar_cuda *cu = gcu_of(b);
	gcu_deviceptr dptr = 0;
	gcu_result rc = gcu_enter(cu);

	if (rc)
		return rc;
	rc = cu->drv.api.cuMemHostRegister(page, bytes,
					   GCU_MEMHOSTREGISTER_DEVICEMAP |
					   GCU_MEMHOSTREGISTER_PORTABLE);
	if (!rc) {
		rc = cu->drv.api.cuMemHostGetDevicePointer(&dptr, page, 0);
		if (rc)
			cu->drv.api.cuMemHostUnregister(page);
	}
	gcu_leave(cu);
	*devaddr = dptr;
	return rc;
}

static unsigned int gcu_page_unregister(struct gv_backend *b, void *page)
{
	struct gpuar_cuda *cu = gcu_of(b);
	gcu_result rc = gcu_enter(cu);

	if (rc)
		return rc;
	rc = cu->drv.api.cuMemHostUnregister(page);
	gcu_leave(cu);
	return rc;
}

static unsigned int gcu_page_registered(struct gv_backend *b, void *page,
					uint64_t devaddr)
{
	struct gpuar_cuda *cu = gcu_of(b);
	gcu_deviceptr dptr = 0;
	gcu_result rc = gcu_enter(cu);

	if (rc)
		return rc;
	rc = cu->drv.api.cuMemHostGetDevicePointer(&dptr, page, 0);
	gcu_leave(cu);
	if (!rc && dptr != devaddr)
		return GV_NO_VENDOR_STATUS;
	return rc;
}

/* What a graph capture forbade or broke (CUDA_ERROR_STREAM_CAPTURE_*,
 * 900-908): neither done nor failed, ask again later. */
static bool gcu_not_now(unsigned int status)
{
	return status >= GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED &&
	       status <= GCU_ERROR_STREAM_CAPTURE_WRONG_THREAD;
}

static int gcu_stream_admit(struct gv_backend *b, void *stream,
			    struct gv_stream_id *id, struct gpuar_error *diag)
{
	struct gpuar_cuda *cu = gcu_of(b);
	const struct gcu_api *api = &cu->drv.api;
	gcu_context owner = NULL;
	unsigned int capture = GCU_STREAM_CAPTURE_STATUS_NONE;
	unsigned long long sid = 0;
	gcu_result rc;

	if (!stream)
		return gv_fail(b, diag, EINVAL, GV_NO_VENDOR_STATUS,
			       "bare stream 0 refused: it is the legacy or the "
			       "per-thread default stream depending on how the "
			       "caller was compiled; pass CU_STREAM_LEGACY or "
			       "CU_STREAM_PER_THREAD");
	/* One handle, a different stream in each thread: without stream ids
	 * two threads' stores into one slot could not be told apart. */
	if (stream == GCU_STREAM_PER_THREAD && !api->cuStreamGetId)
		return gv_fail(b, diag, EINVAL, GV_NO_VENDOR_STATUS,
			       "CU_STREAM_PER_THREAD refused: the driver has no "
			       "cuStreamGetId (CUDA 12.0) to tell one thread's "
			       "stream from another's; pass a created stream");
	/*
	 * The pseudo-handles name a stream of the calling thread's current
	 * context: read it before ours is pushed, or they would always
	 * resolve in ours. None current: nothing of the caller's is there,
	 * and they name our context's.
	 */
	if (stream == GCU_STREAM_LEGACY || stream == GCU_STREAM_PER_THREAD) {
		rc = api->cuCtxGetCurrent(&owner);
		if (rc)
			return gv_vendor_fail(b, diag, rc, "cuCtxGetCurrent");
		if (owner && owner != cu->ctx)
			return gv_fail(b, diag, EXDEV, GV_NO_VENDOR_STATUS,
				       "%s names a stream of the calling thread's "
				       "current context, which is not device %d's "
				       "primary context: make that current, or pass "
				       "a created stream",
				       stream == GCU_STREAM_LEGACY ?
				       "CU_STREAM_LEGACY" : "CU_STREAM_PER_THREAD",
				       b->device);
		owner = NULL;
	}
	rc = gcu_enter(cu);
	if (rc)
		return gv_vendor_fail(b, diag, rc, "cuCtxPushCurrent");
	rc = api->cuStreamGetCtx(stream, &owner);
	if (!rc && owner == cu->ctx)
		rc = api->cuStreamIsCapturing(stream, &capture);
	if (!rc && owner == cu->ctx && capture == GCU_STREAM_CAPTURE_STATUS_NONE &&
	    api->cuStreamGetId)
		rc = api->cuStreamGetId(stream, &sid);
	gcu_leave(cu);
	if (rc && gcu_not_now(rc))
		return gv_fail(b, diag, EBUSY, rc,
			       "a graph capture in progress forbade asking "
			       "about stream %p; record after it ends", stream);
	if (rc)
		return gv_vendor_fail(b, diag, rc,
				      "cuStreamGetCtx/IsCapturing/GetId");
	if (owner != cu->ctx)
		return gv_fail(b, diag, EXDEV, GV_NO_VENDOR_STATUS,
			       "stream %p belongs to another context, not device "
			       "%d's primary context", stream, b->device);
	if (capture != GCU_STREAM_CAPTURE_STATUS_NONE)
		return gv_fail(b, diag, EBUSY, GV_NO_VENDOR_STATUS,
			       "stream %p is being captured into a graph "
			       "(cuStreamIsCapturing: %s); record after the "
			       "capture ends, or put the completion in the graph "
			       "(gpuar_cuda_graph_add_completion)", stream,
			       capture == GCU_STREAM_CAPTURE_STATUS_ACTIVE ?
			       "active" : "invalidated");
	id->key = api->cuStreamGetId ? (uint64_t)sid : (uint64_t)(uintptr_t)stream;
	id->thread_relative = stream == GCU_STREAM_PER_THREAD;
	return 0;
}

/* The backend's store: a system-scope barrier, then the 64-bit write. */
static void gcu_store_ops(gcu_mem_op ops[2], uint64_t devaddr, uint64_t value)
{
	memset(ops, 0, 2 * sizeof(ops[0]));
	ops[0].memory_barrier.operation = GCU_STREAM_MEM_OP_BARRIER;
	ops[0].memory_barrier.flags = GCU_STREAM_MEMORY_BARRIER_TYPE_SYS;
	ops[1].write_value.operation = GCU_STREAM_MEM_OP_WRITE_VALUE_64;
	ops[1].write_value.address = devaddr;
	ops[1].write_value.value64 = value;
	ops[1].write_value.flags = GCU_STREAM_WRITE_VALUE_DEFAULT;
}

static unsigned int gcu_stream_call(struct gv_backend *b, enum gv_stream_op op,
				    void *stream, uint64_t devaddr,
				    uint64_t value)
{
	struct gpuar_cuda *cu = gcu_of(b);
	const struct gcu_api *api = &cu->drv.api;
	gcu_mem_op ops[2];
	gcu_result rc = gcu_enter(cu);

	if (rc)
		return rc;
	switch (op) {
	case GV_WRITE_VALUE:
		/* The v2 write documents no fence of its own: the barrier
		 * makes the stream's earlier writes visible first. */
		gcu_store_ops(ops, devaddr, value);
		rc = api->cuStreamBatchMemOp(stream, 2, ops, 0);
		break;
	case GV_WAIT_VALUE:
		rc = api->cuStreamWaitValue64(stream, devaddr, value,
					      GCU_STREAM_WAIT_VALUE_GEQ);
		break;
	case GV_QUERY:
		rc = api->cuStreamQuery(stream);
		break;
	case GV_SYNCHRONIZE:
		rc = api->cuStreamSynchronize(stream);
		break;
	case GV_WAIT_EVENT:
		rc = api->cuStreamWaitEvent(stream, (gcu_event)(uintptr_t)value, 0);
		break;
	}
	gcu_leave(cu);
	return rc;
}

static unsigned int gcu_stream_create(struct gv_backend *b, void **stream)
{
	struct gpuar_cuda *cu = gcu_of(b);
	gcu_stream s = NULL;
	gcu_result rc = gcu_enter(cu);

	if (rc)
		return rc;
	rc = cu->drv.api.cuStreamCreate(&s, GCU_STREAM_NON_BLOCKING);
	gcu_leave(cu);
	*stream = s;
	return rc;
}

static void gcu_stream_destroy(struct gv_backend *b, void *stream)
{
	struct gpuar_cuda *cu = gcu_of(b);

	if (gcu_enter(cu))
		return;
	cu->drv.api.cuStreamDestroy(stream);
	gcu_leave(cu);
}

static const char *gcu_name(struct gv_backend *b, unsigned int status)
{
	return gcu_status_name(b ? &gcu_of(b)->drv.api : NULL, status);
}

/*
 * The statuses after which the context never stores again (the list and
 * what the CUresult descriptions of cuda.h say of each are in
 * <gpuar/cuda.h>).
 */
static bool gcu_sticky(unsigned int status)
{
	switch (status) {
	case GCU_ERROR_DEINITIALIZED:
	case GCU_ERROR_INVALID_CONTEXT:
	case GCU_ERROR_ECC_UNCORRECTABLE:
	case GCU_ERROR_NVLINK_UNCORRECTABLE:
	case GCU_ERROR_ILLEGAL_ADDRESS:
	case GCU_ERROR_LAUNCH_TIMEOUT:
	case GCU_ERROR_CONTEXT_IS_DESTROYED:
	case GCU_ERROR_ASSERT:
	case GCU_ERROR_HARDWARE_STACK_ERROR:
	case GCU_ERROR_ILLEGAL_INSTRUCTION:
	case GCU_ERROR_MISALIGNED_ADDRESS:
	case GCU_ERROR_INVALID_ADDRESS_SPACE:
	case GCU_ERROR_INVALID_PC:
	case GCU_ERROR_LAUNCH_FAILED:
	case GCU_ERROR_MPS_CLIENT_TERMINATED:
	case GCU_ERROR_EXTERNAL_DEVICE:
	case GCU_ERROR_UNKNOWN:
		return true;
	default:
		return false;
	}
}

static const struct gv_ops gcu_ops = {
	.name = "cuda",
	.domain = "context",
	.not_ready = GCU_ERROR_NOT_READY,
	.invalid_handle = GCU_ERROR_INVALID_HANDLE,
	.wait_wraps = true,
	.domain_stream = GCU_STREAM_LEGACY,
	.line_hold = gcu_line_hold,
	.line_release = gcu_line_release,
	.page_register = gcu_page_register,
	.page_unregister = gcu_page_unregister,
	.page_registered = gcu_page_registered,
	.stream_admit = gcu_stream_admit,
	.stream_create = gcu_stream_create,
	.stream_destroy = gcu_stream_destroy,
	.stream_call = gcu_stream_call,
	.status_name = gcu_name,
	.status_sticky = gcu_sticky,
	.status_not_now = gcu_not_now,
};

GPUAR_EXPORT int gpuar_cuda_open(struct gpuar_cuda **out, int ordinal,
				 struct gpuar_error *diag)
{
	struct gv_load_error why = { 0 };
	struct gpuar_cuda *cu;
	int mem_ops = 0;
	gcu_result rc;
	int err;

	gv_diag_clear(diag);
	if (!out)
		return gv_refuse(diag, "backend");
	cu = calloc(1, sizeof(*cu));
	if (!cu)
		return -ENOMEM;
	gv_backend_init(&cu->gv, &gcu_ops, ordinal);
	err = gcu_load(&cu->drv, &why);
	if (err) {
		gv_fail(&cu->gv, diag, why.err,
			why.status, "%s", why.detail);
		goto fail;
	}
	rc = cu->drv.api.cuDeviceGet(&cu->device, ordinal);
	if (rc) {
		err = gv_fail(&cu->gv, diag, ENODEV, rc,
			      "no CUDA device %d (cuDeviceGet)", ordinal);
		goto fail_unload;
	}
	rc = cu->drv.api.cuDeviceGetAttribute(&mem_ops,
		GCU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, cu->device);
	if (rc || !mem_ops) {
		err = gv_fail(&cu->gv, diag, EOPNOTSUPP, rc ? rc : GV_NO_VENDOR_STATUS,
			      "device %d lacks 64-bit stream memory operations "
			      "(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS "
			      "= %d)", ordinal, mem_ops);
		goto fail_unload;
	}
	rc = cu->drv.api.cuDevicePrimaryCtxRetain(&cu->ctx, cu->device);
	if (rc) {
		err = gv_vendor_fail(&cu->gv, diag, rc, "cuDevicePrimaryCtxRetain");
		goto fail_unload;
	}
	*out = cu;
	return 0;

fail_unload:
	gcu_unload(&cu->drv);
fail:
	gv_backend_destroy(&cu->gv);
	free(cu);
	return err;
}

GPUAR_EXPORT void gpuar_cuda_close(struct gpuar_cuda *cu)
{
	if (!cu)
		return;
	gv_event_streams_destroy(&cu->gv);
	cu->drv.api.cuDevicePrimaryCtxRelease(cu->device);
	/* A leaked line still points into the driver: keep it loaded. */
	if (!cu->gv.leaked_lines)
		gcu_unload(&cu->drv);
	gv_backend_destroy(&cu->gv);
	free(cu);
}

GPUAR_EXPORT int gpuar_cuda_driver_version(const struct gpuar_cuda *cu)
{
	return cu ? cu->drv.driver_version : 0;
}

GPUAR_EXPORT const char *gpuar_cuda_library(const struct gpuar_cuda *cu)
{
	return cu ? cu->drv.library : NULL;
}

GPUAR_EXPORT const char *gpuar_cuda_resolver(const struct gpuar_cuda *cu)
{
	return cu ? cu->drv.resolver : NULL;
}

GPUAR_EXPORT int gpuar_cuda_line_alloc(struct gpuar_cuda *cu, struct gpuar_port *port,
				       struct gpuar_vendor_line **line,
				       struct gpuar_error *diag)
{
	if (!cu)
		return gv_refuse(diag, "backend");
	return gv_line_alloc(&cu->gv, port, line, diag);
}

static bool gcu_line_ours(const struct gpuar_vendor_line *line)
{
	return line && line->b->ops == &gcu_ops;
}

#define GCU_LINE_CHECK(line)                  \
	do {                                  \
		if (!gcu_line_ours(line))     \
			return gv_refuse(diag, "line"); \
	} while (0)

GPUAR_EXPORT int gpuar_cuda_line_free(struct gpuar_vendor_line *line, uint64_t timeout_ns,
				      struct gpuar_error *diag)
{
	if (!line)
		return 0;
	GCU_LINE_CHECK(line);
	return gv_line_free(line, timeout_ns, diag);
}

GPUAR_EXPORT int gpuar_cuda_record(struct gpuar_vendor_line *line, uint32_t slot,
				   struct CUstream_st *stream, uint64_t *target,
				   struct gpuar_error *diag)
{
	GCU_LINE_CHECK(line);
	return gv_record(line, slot, stream, target, diag);
}

GPUAR_EXPORT int gpuar_cuda_await(struct gpuar_vendor_line *line, uint32_t slot,
				  struct CUstream_st *stream, const struct gpuar_plan *plan,
				  uint64_t point, uint64_t user_data, uint64_t *target,
				  struct gpuar_error *diag)
{
	GCU_LINE_CHECK(line);
	return gv_await(line, slot, stream, plan, point, user_data, target, diag);
}

GPUAR_EXPORT int gpuar_cuda_reap(struct gpuar_cuda *cu, struct gpuar_port *port,
				 struct gpuar_vendor_completion *out, uint32_t max,
				 int64_t timeout_ns, struct gpuar_error *diag)
{
	if (!cu)
		return gv_refuse(diag, "backend");
	return gv_reap(&cu->gv, port, out, max, timeout_ns, diag);
}

GPUAR_EXPORT int gpuar_cuda_stream_wait_word(struct gpuar_vendor_line *line, uint32_t slot,
					     struct CUstream_st *stream, uint64_t target,
					     struct gpuar_error *diag)
{
	GCU_LINE_CHECK(line);
	return gv_stream_wait_word(line, slot, stream, target, diag);
}

GPUAR_EXPORT int gpuar_cuda_source_init(struct gpuar_vendor_source *src,
					struct gpuar_vendor_line *line, uint32_t slot,
					struct CUstream_st *stream, struct gpuar_error *diag)
{
	GCU_LINE_CHECK(line);
	return gv_source_init(src, line, slot, stream, diag);
}

GPUAR_EXPORT int gpuar_cuda_wait(struct gpuar_waiter *waiter,
				 struct gpuar_vendor_source *src,
				 const struct gpuar_plan *plan, uint64_t point,
				 uint64_t user_data, struct gpuar_record *rec,
				 struct gpuar_error *diag)
{
	if (!src || !gcu_line_ours(src->line))
		return gv_refuse(diag, "source");
	return gv_wait(waiter, src, plan, point, user_data, rec, diag);
}

GPUAR_EXPORT int gpuar_cuda_await_event(struct gpuar_vendor_line *line, uint32_t slot,
					struct CUevent_st *event,
					const struct gpuar_plan *plan, uint64_t point,
					uint64_t user_data, uint64_t *target,
					struct gpuar_error *diag)
{
	GCU_LINE_CHECK(line);
	return gv_await_event(line, slot, event, plan, point, user_data, target,
			      diag);
}

/* ------------------------------------------------------------- graphs */

static int gcu_graph_support(struct gpuar_cuda *cu, struct gpuar_error *diag)
{
	const struct gcu_api *api = &cu->drv.api;

	if (api->cuGraphAddBatchMemOpNode && api->cuGraphExecBatchMemOpNodeSetParams &&
	    api->cuGraphLaunch)
		return 0;
	return gv_fail(&cu->gv, diag, EOPNOTSUPP, GV_NO_VENDOR_STATUS,
		       "the driver lacks graph memop nodes "
		       "(cuGraphAddBatchMemOpNode, cuGraphExecBatchMemOpNodeSetParams, "
		       "cuGraphLaunch: CUDA 11.7); record after cuGraphLaunch");
}

GPUAR_EXPORT int gpuar_cuda_graph_add_completion(struct gpuar_vendor_line *line,
						 uint32_t slot, struct CUgraph_st *graph,
						 struct CUgraphNode_st *const *deps,
						 size_t ndeps,
						 struct CUgraphNode_st **node,
						 struct gpuar_error *diag)
{
	struct gpuar_cuda *cu;
	gcu_mem_op ops[2];
	gcu_mem_op_node_params params;
	gcu_result rc;

	gv_diag_clear(diag);
	GCU_LINE_CHECK(line);
	cu = gcu_of(line->b);
	if (slot >= GPUAR_LINE_SLOTS || !graph || !node || (ndeps && !deps))
		return gv_fail(&cu->gv, diag, EINVAL, GV_NO_VENDOR_STATUS,
			       "graph_add_completion needs a slot below %d, a "
			       "graph, a node pointer and its dependencies",
			       GPUAR_LINE_SLOTS);
	rc = gcu_graph_support(cu, diag);
	if (rc)
		return rc;
	/* The value is patched at every launch; until then the node would
	 * store the slot's current number, which moves nothing. */
	gcu_store_ops(ops, line->devaddr + slot * sizeof(uint64_t),
		      gpuar_vendor_line_sequence(line, slot));
	params = (gcu_mem_op_node_params){ .ctx = cu->ctx, .count = 2,
					   .ops = ops };
	rc = gcu_enter(cu);
	if (!rc) {
		rc = cu->drv.api.cuGraphAddBatchMemOpNode(node, graph,
			(const gcu_graph_node *)deps, ndeps, &params);
		gcu_leave(cu);
	}
	return rc ? gv_vendor_fail(&cu->gv, diag, rc, "cuGraphAddBatchMemOpNode") : 0;
}

struct gcu_graph_launch {
	gcu_graph_exec exec;
	gcu_graph_node node;
};

/*
 * Graph objects are not synchronized internally, and calls on one must be
 * serialized by the caller (CUDA Driver API, "Graph object thread
 * safety"): the patch and the launch of one executable graph run under a
 * lock of that graph's, whichever lines and threads launch it. Striped:
 * execs share GCU_EXEC_LOCKS locks by address.
 */
#define GCU_EXEC_LOCKS 64
static pthread_mutex_t gcu_exec_locks[GCU_EXEC_LOCKS];
static pthread_once_t gcu_exec_locks_once = PTHREAD_ONCE_INIT;

static void gcu_exec_locks_init(void)
{
	for (int i = 0; i < GCU_EXEC_LOCKS; i++)
		pthread_mutex_init(&gcu_exec_locks[i], NULL);
}

static pthread_mutex_t *gcu_exec_lock(gcu_graph_exec exec)
{
	uintptr_t k = (uintptr_t)exec;

	pthread_once(&gcu_exec_locks_once, gcu_exec_locks_init);
	return &gcu_exec_locks[(k >> 4 ^ k >> 12) % GCU_EXEC_LOCKS];
}

/* The record's store: patch the node of this executable graph with the
 * slot's next number, then launch it ("the modifications only affect
 * future launches"; launches already enqueued keep their own number). */
static unsigned int gcu_graph_store(struct gv_backend *b, void *stream,
				    uint64_t devaddr, uint64_t value, void *arg)
{
	struct gpuar_cuda *cu = gcu_of(b);
	struct gcu_graph_launch *g = arg;
	gcu_mem_op ops[2];
	gcu_mem_op_node_params params = { .ctx = cu->ctx, .count = 2, .ops = ops };
	gcu_result rc;

	gcu_store_ops(ops, devaddr, value);
	rc = gcu_enter(cu);
	if (rc)
		return rc;
	pthread_mutex_lock(gcu_exec_lock(g->exec));
	rc = cu->drv.api.cuGraphExecBatchMemOpNodeSetParams(g->exec, g->node,
							    &params);
	if (!rc)
		rc = cu->drv.api.cuGraphLaunch(g->exec, stream);
	pthread_mutex_unlock(gcu_exec_lock(g->exec));
	gcu_leave(cu);
	return rc;
}

GPUAR_EXPORT int gpuar_cuda_graph_launch(struct gpuar_vendor_line *line, uint32_t slot,
					 struct CUgraphExec_st *exec,
					 struct CUgraphNode_st *node,
					 struct CUstream_st *stream,
					 const struct gpuar_plan *plan, uint64_t point,
					 uint64_t user_data, uint64_t *target,
					 struct gpuar_error *diag)
{
	struct gcu_graph_launch g = { .exec = exec, .node = node };
	struct gv_store store = { .enqueue = gcu_graph_store, .arg = &g };
	int rc;

	gv_diag_clear(diag);
	GCU_LINE_CHECK(line);
	rc = gcu_graph_support(gcu_of(line->b), diag);
	if (rc)
		return rc;
	if (!exec || !node)
		return gv_fail(line->b, diag, EINVAL, GV_NO_VENDOR_STATUS,
			       "graph_launch needs an executable graph and its "
			       "completion node");
	if (!plan)
		return gv_record_store(line, slot, stream, &store, NULL, target,
				       diag);
	return gv_await_store(line, slot, stream, &store, plan, point,
			      user_data, target, diag);
}

/* ------------------------------------------------------------- queue */

/* A CUDA queue is a vendor queue over a CUDA handle (vendor_queue.c). */
static void gcu_queue_handle_close(void *handle)
{
	gpuar_cuda_close(handle);
}

GPUAR_EXPORT int gpuar_cuda_queue_open(struct gpuar_cuda_queue **queue,
				       int ordinal, struct gpuar_error *diag)
{
	struct gpuar_cuda *cu;
	struct gv_queue *q;
	int rc;

	gv_diag_clear(diag);
	if (!queue)
		return gv_refuse(diag, "queue");
	rc = gpuar_cuda_open(&cu, ordinal, diag);
	if (rc)
		return rc;
	rc = gv_queue_open(&q, &cu->gv, cu, gcu_queue_handle_close, diag);
	if (rc)
		return rc;
	*queue = (struct gpuar_cuda_queue *)q;
	return 0;
}

GPUAR_EXPORT int gpuar_cuda_queue_await(struct gpuar_cuda_queue *queue,
					struct CUstream_st *stream,
					uint64_t *user_data,
					struct gpuar_error *diag)
{
	return gv_queue_await(&gcu_ops, queue, stream, user_data, diag);
}

GPUAR_EXPORT int gpuar_cuda_queue_reap(struct gpuar_cuda_queue *queue,
				       struct gpuar_vendor_completion *out,
				       uint32_t max, int64_t timeout_ns,
				       struct gpuar_error *diag)
{
	return gv_queue_reap(&gcu_ops, queue, out, max, timeout_ns, diag);
}

GPUAR_EXPORT int gpuar_cuda_queue_fd(const struct gpuar_cuda_queue *queue)
{
	return gv_queue_fd(&gcu_ops, queue);
}

GPUAR_EXPORT int gpuar_cuda_queue_close(struct gpuar_cuda_queue *queue,
					uint64_t timeout_ns,
					struct gpuar_error *diag)
{
	return gv_queue_close(&gcu_ops, queue, timeout_ns, diag);
}
