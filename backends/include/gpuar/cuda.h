/* SPDX-License-Identifier: MIT */
/*
 * The CUDA backend: await CUDA streams through gpuar ports.
 *
 * The driver (libcuda.so.1) is loaded at run time, never linked: one build
 * runs on NVIDIA, AMD and GPU-less machines. GPUAR_CUDA_LIBRARY, when set,
 * names the library to load instead (for tests, which load a test double,
 * and diagnostics). Entry points are resolved with cuGetProcAddress_v2 for
 * CUDA 12.0 (drivers of 12.0 and later), else by dlsym of the versioned
 * (_v2) symbols. A missing driver, device or entry point, or a device
 * without 64-bit stream memory operations
 * (CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS), is a coded
 * GPUAR_E_BACKEND error naming what is missing.
 *
 * Streams are CUstream / cudaStream_t handles (the same pointer), passed
 * as `struct CUstream_st *`. They must belong to the device's primary
 * context (what the runtime API uses). Streams are told apart by
 * cuStreamGetId (CUDA 12.0: an id "unique for the life of the program"),
 * so CU_STREAM_PER_THREAD, one handle for a different stream in each
 * thread, counts as each thread's own stream. Refused with
 * GPUAR_E_BACKEND:
 *  - a bare 0: it means the legacy or the per-thread default stream
 *    depending on how the caller was compiled; pass CU_STREAM_LEGACY
 *    (cudaStreamLegacy: it serialises with every blocking stream of the
 *    context) or CU_STREAM_PER_THREAD (cudaStreamPerThread);
 *  - CU_STREAM_PER_THREAD where the driver lacks cuStreamGetId (-EINVAL);
 *  - a stream of another context (-EXDEV), and CU_STREAM_LEGACY or
 *    CU_STREAM_PER_THREAD while the calling thread's current context
 *    (cuCtxGetCurrent, read before the backend makes its own current) is
 *    another one: they name that context's stream (with no context
 *    current, they name the primary context's);
 *  - a stream being captured into a graph (-EBUSY): the store would
 *    become a graph node storing one number on every replay; see
 *    gpuar_cuda_graph_add_completion for completion inside graphs.
 *
 * Graph captures elsewhere: the library calls the driver from the
 * caller's threads and its own at any time, always in the relaxed capture
 * mode (cuThreadExchangeStreamCaptureMode), so those calls never
 * invalidate a capture another thread runs in the global mode
 * (torch.cuda.graph). A status the driver still refuses during a capture
 * (CUDA_ERROR_STREAM_CAPTURE_*) means "ask again later": a backstop is
 * re-armed, never turned into an error record; a call that must act now
 * fails with -EBUSY. Allocate lines before a capture starts
 * (cuMemHostRegister is not a call a capture permits).
 *
 * CUDA errors are sticky per context: the first one poisons the context,
 * and every later error message names that first error. These statuses
 * mean the context never stores again, so every store pending in it is
 * lost: an await on it ends at once with an error record (-EIO, the
 * CUresult in the completion) and gpuar_cuda_line_free keeps the line
 * and returns -EIO at once, whatever its timeout. What the CUresult
 * descriptions of cuda.h say of each, in short:
 *   4   CUDA_ERROR_DEINITIALIZED: the driver is shutting down;
 *   201 CUDA_ERROR_INVALID_CONTEXT: the context handle is not (or no
 *       longer) valid, as after cuCtxDestroy;
 *   214 CUDA_ERROR_ECC_UNCORRECTABLE: an uncorrectable ECC error was
 *       detected while the device ran;
 *   220 CUDA_ERROR_NVLINK_UNCORRECTABLE: the same, of an NVLink;
 *   700 CUDA_ERROR_ILLEGAL_ADDRESS: a kernel accessed an invalid
 *       address; the process is left inconsistent, and CUDA is usable
 *       again only in a new process;
 *   702 CUDA_ERROR_LAUNCH_TIMEOUT: a kernel ran past the device's time
 *       limit (where one is set); the context is then unusable;
 *   709 CUDA_ERROR_CONTEXT_IS_DESTROYED: the current context was
 *       destroyed (cuCtxDestroy), or is a primary context not set up;
 *   710 CUDA_ERROR_ASSERT: an assert fired in device code (PyTorch's
 *       "device-side assert triggered"); the device cannot be used again
 *       and every allocation is invalid until the process restarts;
 *   714-718 CUDA_ERROR_HARDWARE_STACK_ERROR, _ILLEGAL_INSTRUCTION,
 *       _MISALIGNED_ADDRESS, _INVALID_ADDRESS_SPACE, _INVALID_PC: the
 *       device faulted in a kernel; a new process is needed;
 *   719 CUDA_ERROR_LAUNCH_FAILED: an exception on the device while a
 *       kernel ran (an invalid device pointer, out-of-bounds shared
 *       memory); a new process is needed;
 *   810 CUDA_ERROR_MPS_CLIENT_TERMINATED: the MPS server ended this
 *       client; a new process is needed;
 *   911 CUDA_ERROR_EXTERNAL_DEVICE: a device outside CUDA, whose signal
 *       CUDA waited for, reported an error; later work fails alike until
 *       the process restarts;
 *   999 CUDA_ERROR_UNKNOWN: an internal error the driver cannot name.
 * A reset of the context under the handle (cuDevicePrimaryCtxReset,
 * cudaDeviceReset) destroys its streams and the lines' registrations:
 * awaits end with -EIO at their next backstop and gpuar_cuda_line_free
 * returns -EIO at once. An await whose stream has gone idle while its
 * word is still short of the target at two backstops in a row ends with
 * -ENODATA ("store lost": the number never reached the host), not
 * resubmitted for ever; its slot is then free. An awaited stream
 * destroyed before its store landed (against the rule below) is asked no
 * more: the context's own stream answers for errors instead, and the
 * store, which the driver still runs, completes the await.
 *
 * All functions fill *diag (when non-NULL) with a coded error on failure
 * and return 0 or a negative errno, as <gpuar/gpuar.h>. Thread-safety:
 * everything here may be called from several threads at once, except
 * that one line must not be freed while another thread uses it.
 */
#ifndef GPUAR_CUDA_H
#define GPUAR_CUDA_H

#include <gpuar/gpuar.h>
#include <gpuar/vendor.h>

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphNode_st;
struct CUgraphExec_st;
struct gpuar_cuda;

/*
 * Load the driver, initialise it, check device @ordinal's 64-bit stream
 * memory operations and retain its primary context. Errors: -ENOENT (no
 * driver library), -ENOSYS (an entry point missing), -ENODEV (no such
 * device), -EOPNOTSUPP (no 64-bit stream memory operations), -EIO.
 */
int gpuar_cuda_open(struct gpuar_cuda **cuda, int ordinal,
		    struct gpuar_error *diag);

/*
 * Release the primary context and the library. Lines must be freed first
 * (a leaked line keeps its own context reference); a line still in use
 * after its handle closed is not detected. NULL is ignored. Teardown
 * order: reap a line's awaits, free the line, close the port, close the
 * handle (gpuar_cuda_queue_close does it all for a queue).
 */
void gpuar_cuda_close(struct gpuar_cuda *cuda);

/* The driver's version (e.g. 12080) and the library that was loaded. */
int gpuar_cuda_driver_version(const struct gpuar_cuda *cuda);
const char *gpuar_cuda_library(const struct gpuar_cuda *cuda);
/* "cuGetProcAddress_v2" or "dlsym": how entry points were resolved. */
const char *gpuar_cuda_resolver(const struct gpuar_cuda *cuda);

/*
 * A line for @port whose page is registered with cuMemHostRegister
 * (DEVICEMAP | PORTABLE) under the primary context, which the line retains
 * until it is freed. Errors: those of gpuar_line_alloc, -EIO and others
 * from CUDA.
 */
int gpuar_cuda_line_alloc(struct gpuar_cuda *cuda, struct gpuar_port *port,
			  struct gpuar_vendor_line **line,
			  struct gpuar_error *diag);

/*
 * Free a line once the device can no longer touch it: waits up to
 * @timeout_ns (UINT64_MAX: forever) for every store recorded into it to
 * land and every reverse
 * wait on it to end (both seen in the line's own page, never by asking a
 * stream: the streams may already be destroyed), then unregisters the
 * page, releases the context and frees the gpuar line. Errors: -EBUSY
 * (awaits on the line not yet reaped; nothing done). -EIO (the context is
 * poisoned, so pending stores never land) and -ETIMEDOUT (still pending):
 * the line is *kept* (leaked on purpose) — page, registration and context
 * reference are kept, never freed under the device — and must not be used
 * again. A kept line is detached from its port: gpuar_port_close neither
 * unmaps nor frees it, and its page stays mapped, its address range
 * reserved, for the life of the process, so a late store lands in it and
 * never in memory the process maps later (likewise when unregistering
 * the page fails).
 */
int gpuar_cuda_line_free(struct gpuar_vendor_line *line, uint64_t timeout_ns,
			 struct gpuar_error *diag);
/*
 * A line whose port was closed first (against the order above) kept its
 * page: records, awaits and reverse waits on it fail with -EBADF, its
 * awaits were dropped with the port, and gpuar_cuda_line_free frees it
 * as above, unmapping the page itself. NULL: 0.
 */

/*
 * Enqueue, behind the work on @stream, the store of @slot's next
 * sequence number: one cuStreamBatchMemOp_v2 of a system-scope memory
 * barrier (CU_STREAM_MEM_OP_BARRIER, CU_STREAM_MEMORY_BARRIER_TYPE_SYS)
 * and the 64-bit write, so once the word reaches the number, the work's
 * results are visible to the host's acquire read (the v2 write alone
 * documents no fence). Stores the number in *@target. Errors: refused
 * streams (above), -EINVAL (slot), -EBUSY (slot owned by another stream
 * with stores still pending), CUDA errors. Keep a stream alive until its
 * stores into a slot have landed (an await needs it until it is reaped
 * anyway).
 */
int gpuar_cuda_record(struct gpuar_vendor_line *line, uint32_t slot,
		      struct CUstream_st *stream, uint64_t *target,
		      struct gpuar_error *diag);

/*
 * The event-loop path: record, then submit the word wait to the line's
 * port under @plan (NULL: the default plan, GPUAR_PLAN_DEFAULT_TEXT) with
 * @point and @user_data, in one call (either engine); the record comes
 * out of the port (its fd polls readable), reaped with
 * gpuar_cuda_port_reap. A "block" plan
 * synchronizes the stream (cuStreamSynchronize) first, then submits a poll
 * wait that completes at its first check, so every await yields exactly one
 * record. *@target (if non-NULL): the number.
 */
int gpuar_cuda_port_await(struct gpuar_vendor_line *line, uint32_t slot,
			  struct CUstream_st *stream,
			  const struct gpuar_plan *plan, uint64_t point,
			  uint64_t user_data, uint64_t *target,
			  struct gpuar_error *diag);
/* gpuar_cuda_port_await's 1.0 name, until 1.0. */
int gpuar_cuda_await(struct gpuar_vendor_line *line, uint32_t slot,
		     struct CUstream_st *stream, const struct gpuar_plan *plan,
		     uint64_t point, uint64_t user_data, uint64_t *target,
		     struct gpuar_error *diag)
	GPUAR_DEPRECATED_FOR(gpuar_cuda_port_await);

/*
 * @user_data must be unique among the port's pending waits: a record is
 * matched to its await (and a failed stream's wait cancelled) by it.
 * Keep @stream alive until the await is reaped (its status is asked).
 */

/*
 * gpuar_port_reap on @port, resolving backstop timeouts of the awaits on it
 * (this handle's and any other CUDA or HIP handle's: one registry per
 * port, see gpuar_vendor_resolve) by asking the stream: pending or
 * finished work is resubmitted (keeping the original start), a failed
 * stream becomes an error record (record.status -EIO, vendor_status the
 * CUresult, vendor_name its name; *@diag says what the error poisons).
 * Records of other waits pass through unchanged. Waits as gpuar_port_reap
 * for the first record, then takes every record already queued, up to
 * @max (any number: not capped at one batch). Returns the number of
 * completions, or -EAGAIN, -ETIME, -EINTR as gpuar_port_reap.
 */
int gpuar_cuda_port_reap(struct gpuar_cuda *cuda, struct gpuar_port *port,
			 struct gpuar_vendor_completion *out, uint32_t max,
			 int64_t timeout_ns, struct gpuar_error *diag);
/* gpuar_cuda_port_reap's 1.0 name, until 1.0. */
int gpuar_cuda_reap(struct gpuar_cuda *cuda, struct gpuar_port *port,
		    struct gpuar_vendor_completion *out, uint32_t max,
		    int64_t timeout_ns, struct gpuar_error *diag)
	GPUAR_DEPRECATED_FOR(gpuar_cuda_port_reap);

/*
 * The reverse direction: enqueue cuStreamWaitValue64 (GEQ, wrapping
 * order) on @stream so its later work waits until @slot of @line reaches
 * @target — a CPU stage storing the word releases GPU work. Behind the
 * wait the backend stores a fence number into the line's own page (past
 * its 64 bytes), so freeing the line knows the device stopped reading it
 * by looking at the page, never at the stream: streams may be destroyed
 * before or after the line, in any order (as streams that record). At
 * most 64 reverse waits may be pending on one line (-ENOSPC beyond).
 */
int gpuar_cuda_stream_wait_word(struct gpuar_vendor_line *line, uint32_t slot,
				struct CUstream_st *stream, uint64_t target,
				struct gpuar_error *diag);

/*
 * Await a CUDA event the caller recorded (cuEventRecord, or an event a
 * framework hands around): a private stream of the backend handle waits
 * on @event (cuStreamWaitEvent), then stores @slot's next number, and the
 * word wait is submitted as gpuar_cuda_port_await's — the same plans, records,
 * error records and backstop (the private stream is the one asked). The
 * event may belong to any context; what it waits for is its latest record
 * at the time of this call, and the caller may destroy it as soon as this
 * returns (cuEventDestroy does not wait for the record). The private
 * stream comes from a pool of the handle's (up to 32, made as needed): the
 * one the slot's pending stores are on, so awaits on one slot of a line
 * complete in the order they were made; else an idle one, so an await
 * waits for its own event only, never for an unrelated earlier one (of
 * another slot or line) unless 32 event awaits are pending at once. The
 * private stream is the slot's stream for the one-stream-per-slot rule
 * (-EBUSY while another stream's stores into the slot are pending).
 * Errors: as gpuar_cuda_port_await, -EINVAL (no event).
 */
int gpuar_cuda_port_await_event(struct gpuar_vendor_line *line,
				uint32_t slot, struct CUevent_st *event,
				const struct gpuar_plan *plan, uint64_t point,
				uint64_t user_data, uint64_t *target,
				struct gpuar_error *diag);
/* gpuar_cuda_port_await_event's 1.0 name, until 1.0. */
int gpuar_cuda_await_event(struct gpuar_vendor_line *line, uint32_t slot,
			   struct CUevent_st *event,
			   const struct gpuar_plan *plan, uint64_t point,
			   uint64_t user_data, uint64_t *target,
			   struct gpuar_error *diag)
	GPUAR_DEPRECATED_FOR(gpuar_cuda_port_await_event);

/*
 * Completion inside a CUDA graph. A store captured into a graph would
 * store the same number on every replay, so the backend adds a node of
 * its own (a batch memop node: a system-scope barrier, then the 64-bit
 * write into @slot of @line, under the device's primary context) and
 * patches its number before each launch
 * (cuGraphExecBatchMemOpNodeSetParams, which affects only later launches:
 * launches already enqueued keep theirs). Each replay thus completes its
 * own wait, in launch order:
 *
 *	CUgraphNode done;
 *	gpuar_cuda_graph_add_completion(line, 0, graph, &last_kernel, 1,
 *					&done, &diag);
 *	cuGraphInstantiate(&exec, graph, 0);
 *	for (i = 0; i < n; i++)		// one record per replay
 *		gpuar_cuda_graph_launch(line, 0, exec, done, stream, &plan,
 *					point, i, NULL, &diag);
 *	// then gpuar_cuda_port_reap until the n records are in
 *
 * Launch such a graph only through gpuar_cuda_graph_launch (a plain
 * cuGraphLaunch would store a stale number). Graph objects are not
 * synchronized internally: gpuar_cuda_graph_launch patches and launches
 * under a lock of the executable graph's, so one exec may be launched
 * through several lines from several threads at once. Each executable graph
 * instantiated from @graph works, with the same node handle. (CUDA 13.1's
 * atomic-add memop could advance the word by one per replay without the
 * patch, but whether it reaches mapped host memory is unproven; the
 * patched write works on every driver from 11.7 and keeps one number per
 * record, as every other record.)
 *
 * gpuar_cuda_graph_add_completion: add the node to @graph after @deps
 * (@ndeps of them; 0 for a root node); *@node gets it.
 * gpuar_cuda_graph_launch: patch @node in @exec with @slot's next number
 * and cuGraphLaunch @exec on @stream, as one record (the slot's
 * one-stream rule applies); with a @plan, also submit the word wait as
 * gpuar_cuda_port_await does (reap with gpuar_cuda_port_reap); with @plan NULL,
 * only record (@point and @user_data unused). *@target: the number.
 * Errors: -EOPNOTSUPP (GPUAR_E_BACKEND) where the driver lacks graph
 * memop nodes (before CUDA 11.7), -EINVAL, the refusals of
 * gpuar_cuda_record, CUDA errors.
 */
int gpuar_cuda_graph_add_completion(struct gpuar_vendor_line *line,
				    uint32_t slot, struct CUgraph_st *graph,
				    struct CUgraphNode_st *const *deps,
				    size_t ndeps, struct CUgraphNode_st **node,
				    struct gpuar_error *diag);
int gpuar_cuda_graph_launch(struct gpuar_vendor_line *line, uint32_t slot,
			    struct CUgraphExec_st *exec,
			    struct CUgraphNode_st *node,
			    struct CUstream_st *stream,
			    const struct gpuar_plan *plan, uint64_t point,
			    uint64_t user_data, uint64_t *target,
			    struct gpuar_error *diag);

/*
 * The blocking path: a wait-driver source over @stream's work (see struct
 * gpuar_vendor_source), and gpuar_wait_blocking on it (the calling thread
 * blocks; no port) with the CUDA error in *@diag.
 */
int gpuar_cuda_source_init(struct gpuar_vendor_source *src,
			   struct gpuar_vendor_line *line, uint32_t slot,
			   struct CUstream_st *stream, struct gpuar_error *diag);
int gpuar_cuda_wait_blocking(struct gpuar_waiter *waiter,
			     struct gpuar_vendor_source *src,
			     const struct gpuar_plan *plan, uint64_t point,
			     uint64_t user_data, struct gpuar_record *rec,
			     struct gpuar_error *diag);
/* gpuar_cuda_wait_blocking's 1.0 name, until 1.0. */
int gpuar_cuda_wait(struct gpuar_waiter *waiter,
		    struct gpuar_vendor_source *src,
		    const struct gpuar_plan *plan, uint64_t point,
		    uint64_t user_data, struct gpuar_record *rec,
		    struct gpuar_error *diag)
	GPUAR_DEPRECATED_FOR(gpuar_cuda_wait_blocking);

/*
 * The quick way: a queue is a backend handle for device @ordinal, a port
 * of its own (the kernel's where the module is loaded, else the user
 * engine's; the fallback is a warning in *@diag with 0 returned) and the
 * lines it needs, so that awaiting a stream is one call:
 *
 *	gpuar_cuda_queue_open(&q, 0, &err);
 *	gpuar_cuda_queue_await(q, stream, &id, &err);	// behind the work
 *	gpuar_cuda_queue_reap(q, &done, 1, -1, &err);	// done.record.user_data == id
 *	gpuar_cuda_queue_close(q, 1000000000, &err);
 *
 * gpuar_cuda_queue_await: gpuar_cuda_port_await on @stream with
 * everything chosen for the caller: the slot (the stream's own while its
 * stores are pending, so its awaits complete in order; else one whose
 * stores have landed; else one of a new line), the user data (the queue's
 * next number, unique: nothing else submits to the queue's port; stored
 * in *@user_data when non-NULL), the default plan (GPUAR_PLAN_DEFAULT_TEXT)
 * and the estimator point (the stream's id: waits on one stream learn
 * together). Streams are refused as by gpuar_cuda_record (a bare 0: pass
 * CU_STREAM_LEGACY or CU_STREAM_PER_THREAD). Awaits through one queue
 * are made one at a time (a lock).
 * gpuar_cuda_queue_reap: gpuar_cuda_port_reap on the queue's port.
 * gpuar_cuda_queue_fd: the port's fd, for an event loop (poll it for
 * POLLIN, then reap with a zero timeout; see gpuar_port_fd), or -EINVAL.
 * gpuar_cuda_queue_close: reap what is still pending and free every
 * line, each within @timeout_ns in all (UINT64_MAX: forever), then close
 * the port and the handle. -EBUSY when awaits are still pending at the
 * deadline: nothing is closed, the queue stays usable (reap or wait,
 * then close again). Else the queue is gone, and the return is 0, or the
 * first line's -EIO or -ETIMEDOUT (gpuar_cuda_line_free: that line is
 * kept, safely, for the life of the process). NULL: 0.
 * Open's errors: gpuar_cuda_open's and gpuar_port_open's. All
 * thread-safe, except close against the others.
 */
struct gpuar_cuda_queue;

int gpuar_cuda_queue_open(struct gpuar_cuda_queue **queue, int ordinal,
			  struct gpuar_error *diag);
int gpuar_cuda_queue_await(struct gpuar_cuda_queue *queue,
			   struct CUstream_st *stream, uint64_t *user_data,
			   struct gpuar_error *diag);
int gpuar_cuda_queue_reap(struct gpuar_cuda_queue *queue,
			  struct gpuar_vendor_completion *out, uint32_t max,
			  int64_t timeout_ns, struct gpuar_error *diag);
int gpuar_cuda_queue_fd(const struct gpuar_cuda_queue *queue);
int gpuar_cuda_queue_close(struct gpuar_cuda_queue *queue,
			   uint64_t timeout_ns, struct gpuar_error *diag);

#ifdef __cplusplus
}
#endif

#endif /* GPUAR_CUDA_H */
