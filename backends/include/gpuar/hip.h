/* SPDX-License-Identifier: MIT */
/*
 * The HIP backend: await HIP streams through gpuar ports. The same shape
 * as <gpuar/cuda.h>; what differs is said here.
 *
 * The runtime is loaded at run time: the first of libamdhip64.so.8,
 * .so.7 (ROCm 7), .so.6, .so.5 (Debian bookworm ships 5.2) and plain
 * libamdhip64.so, or GPUAR_HIP_LIBRARY when set (tests load a test double
 * through it; diagnostics). It is never unloaded once loaded. A missing
 * runtime, device or entry point, or a runtime outside HIP 5.0 to 8.x
 * (hipRuntimeGetVersion; -EOPNOTSUPP), is a coded GPUAR_E_BACKEND error.
 *
 * Line pages are registered with hipHostRegister(Mapped | Portable) and
 * *fine-grained* (no hipExtHostRegisterCoarseGrained): the mapping is
 * coherent, so a device store is visible to the host's acquire read
 * without a cache flush, and hipStreamWriteValue64 orders it after the
 * stream's earlier work. The device address comes from
 * hipHostGetDevicePointer. HIP has no contexts: a backend handle belongs to
 * one device and calls are made with that device current (the calling
 * thread's current device is restored after each call).
 *
 * Streams are told apart by hipStreamGetId where the runtime has it, so
 * hipStreamPerThread (one handle, a different stream in each thread)
 * counts as each thread's own stream; where it lacks it,
 * hipStreamPerThread is refused (-EINVAL). The legacy null stream is
 * GPUAR_HIP_STREAM_LEGACY (below). Streams refused (GPUAR_E_BACKEND): a
 * bare 0 (-EINVAL: the null stream is the legacy or the per-thread
 * default stream depending on how the caller was compiled; pass
 * GPUAR_HIP_STREAM_LEGACY, hipStreamPerThread or a created stream), a
 * stream of another device (-EXDEV; detected where the runtime has
 * hipStreamGetDevice, HIP 6 and later), GPUAR_HIP_STREAM_LEGACY or
 * hipStreamPerThread while the calling thread's current device is not
 * the backend's (-EXDEV), and a stream being captured (-EBUSY). As on
 * CUDA, the library's own calls run in the relaxed capture mode
 * (hipThreadExchangeStreamCaptureMode, where the runtime has it), and
 * a capture status (hipErrorStreamCapture*, 900-908) from a status query
 * means "ask again later", never an error record.
 *
 * Graphs: HIP offers no graph completion here (no counterpart of
 * gpuar_cuda_graph_add_completion). HIP 6.4 and later have
 * hipGraphAddBatchMemOpNode and hipGraphExecBatchMemOpNodeSetParams, but
 * both are marked beta ("still open to changes and may have outstanding
 * issues", HIP API reference) and take a HIP context, a deprecated
 * notion; a store captured into a graph stores one number on every
 * replay. Record on the launch stream after hipGraphLaunch instead
 * (gpuar_hip_record or gpuar_hip_await): it completes once that replay has
 * finished.
 *
 * The reverse direction (gpuar_hip_stream_wait_word) uses
 * hipStreamWaitValue64 with hipStreamWaitValueGte, which compares
 * (*word & mask) >= target as plain unsigned numbers, unlike CUDA's
 * wrapping comparison. Where the two disagree for the word's current value
 * — the way from the word to the target crosses 2^64 — the wait is refused
 * with -ERANGE rather than let the device go early or never; restart the
 * slot's sequence (gpuar_vendor_line_set_sequence) before it wraps.
 * Waits on the host side (records, awaits) compare in wrapping order as
 * everywhere in gpuar, so they are not affected.
 */
#ifndef GPUAR_HIP_H
#define GPUAR_HIP_H

#include <gpuar/gpuar.h>
#include <gpuar/vendor.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ihipStream_t;
struct ihipEvent_t;
struct gpuar_hip;

/*
 * The legacy null stream of the calling thread's current device, which
 * must be the backend's device (else -EXDEV): what a null stream (0)
 * means in code compiled without -fgpu-default-stream=per-thread, and
 * what a framework's default stream is (torch's and CuPy's on ROCm). It
 * serialises with the device's blocking streams ("standard null-stream
 * semantics", HIP API reference). HIP 5 has no handle of its own for it;
 * gpuar's is 1, as CUDA's CU_STREAM_LEGACY, and the backend calls the
 * runtime with 0 in its place (with the device current, through the
 * entry points that take 0 as the legacy stream, never the _spt ones).
 * Streams are told apart by hipStreamGetId where the runtime has it (the
 * null stream's id); without it, by this handle.
 */
#define GPUAR_HIP_STREAM_LEGACY ((struct ihipStream_t *)1)

/*
 * The statuses after which the device never stores again, so an await on
 * it ends at once with an error record (-EIO) and gpuar_hip_line_free
 * keeps the line and returns -EIO at once, whatever its timeout (what the
 * hipError_t descriptions say of each, in short):
 *   4   hipErrorDeinitialized: the runtime has been deinitialized;
 *   214 hipErrorECCNotCorrectable: an uncorrectable ECC error was seen
 *       while the device ran;
 *   700 hipErrorIllegalAddress: a kernel accessed an illegal address (a
 *       memory access fault, one of the GPU's hardware exceptions);
 *   702 hipErrorLaunchTimeOut: a kernel ran too long;
 *   709 hipErrorContextIsDestroyed: the context is already destroyed;
 *   710 hipErrorAssert: an assert fired in device code;
 *   719 hipErrorLaunchFailure: an exception occurred on the device while
 *       a kernel ran (how the runtime reports the other hardware
 *       exceptions);
 *   999 hipErrorUnknown: an unknown error, when no other code applies
 *       (an unexpected failure inside the runtime or driver).
 * A hipDeviceReset under the handle, an idle stream whose store never
 * arrived (-ENODATA) and a stream destroyed while awaited end as in
 * <gpuar/cuda.h>.
 */

/* As gpuar_cuda_open, for HIP device @ordinal. */
int gpuar_hip_open(struct gpuar_hip **hip, int ordinal,
		   struct gpuar_error *diag);
void gpuar_hip_close(struct gpuar_hip *hip);
const char *gpuar_hip_library(const struct gpuar_hip *hip);
/* hipDriverGetVersion's value, or 0 where the call failed. */
int gpuar_hip_driver_version(const struct gpuar_hip *hip);

int gpuar_hip_line_alloc(struct gpuar_hip *hip, struct gpuar_port *port,
			 struct gpuar_vendor_line **line,
			 struct gpuar_error *diag);
/* As gpuar_cuda_line_free: a line kept after -EIO or -ETIMEDOUT is
 * detached from its port and stays mapped for the life of the process. */
int gpuar_hip_line_free(struct gpuar_vendor_line *line, uint64_t timeout_ns,
			struct gpuar_error *diag);
/* hipStreamWriteValue64 of the slot's next number behind the work. */
int gpuar_hip_record(struct gpuar_vendor_line *line, uint32_t slot,
		     struct ihipStream_t *stream, uint64_t *target,
		     struct gpuar_error *diag);
/* As gpuar_cuda_port_await; block is hipStreamSynchronize. */
int gpuar_hip_port_await(struct gpuar_vendor_line *line, uint32_t slot,
			 struct ihipStream_t *stream,
			 const struct gpuar_plan *plan, uint64_t point,
			 uint64_t user_data, uint64_t *target,
			 struct gpuar_error *diag);
/* gpuar_hip_port_await's 1.0 name, until 1.0. */
int gpuar_hip_await(struct gpuar_vendor_line *line, uint32_t slot,
		    struct ihipStream_t *stream, const struct gpuar_plan *plan,
		    uint64_t point, uint64_t user_data, uint64_t *target,
		    struct gpuar_error *diag)
	GPUAR_DEPRECATED_FOR(gpuar_hip_port_await);
/* As gpuar_cuda_port_reap; the backstop asks hipStreamQuery. */
int gpuar_hip_port_reap(struct gpuar_hip *hip, struct gpuar_port *port,
			struct gpuar_vendor_completion *out, uint32_t max,
			int64_t timeout_ns, struct gpuar_error *diag);
/* gpuar_hip_port_reap's 1.0 name, until 1.0. */
int gpuar_hip_reap(struct gpuar_hip *hip, struct gpuar_port *port,
		   struct gpuar_vendor_completion *out, uint32_t max,
		   int64_t timeout_ns, struct gpuar_error *diag)
	GPUAR_DEPRECATED_FOR(gpuar_hip_port_reap);
/* hipStreamWaitValue64 (plain >=, see above). -ERANGE across 2^64.
 * Fenced as gpuar_cuda_stream_wait_word: @stream and the line may be
 * destroyed in either order. -EOPNOTSUPP where the device lacks
 * hipDeviceAttributeCanUseStreamWaitValue. The HIP documentation asks
 * for memory from hipExtMallocWithFlags(hipMallocSignalMemory); the line
 * page is hipHostRegister'ed host memory, which the GPU bundle's HIP probe
 * checks on the hardware it runs on. */
int gpuar_hip_stream_wait_word(struct gpuar_vendor_line *line, uint32_t slot,
			       struct ihipStream_t *stream, uint64_t target,
			       struct gpuar_error *diag);
/* As gpuar_cuda_port_await_event: a private stream waits on @event
 * (hipStreamWaitEvent), then stores the number. */
int gpuar_hip_port_await_event(struct gpuar_vendor_line *line,
			       uint32_t slot, struct ihipEvent_t *event,
			       const struct gpuar_plan *plan, uint64_t point,
			       uint64_t user_data, uint64_t *target,
			       struct gpuar_error *diag);
/* gpuar_hip_port_await_event's 1.0 name, until 1.0. */
int gpuar_hip_await_event(struct gpuar_vendor_line *line, uint32_t slot,
			  struct ihipEvent_t *event,
			  const struct gpuar_plan *plan, uint64_t point,
			  uint64_t user_data, uint64_t *target,
			  struct gpuar_error *diag)
	GPUAR_DEPRECATED_FOR(gpuar_hip_port_await_event);
int gpuar_hip_source_init(struct gpuar_vendor_source *src,
			  struct gpuar_vendor_line *line, uint32_t slot,
			  struct ihipStream_t *stream, struct gpuar_error *diag);
/* As gpuar_cuda_wait_blocking: the calling thread blocks, no port. */
int gpuar_hip_wait_blocking(struct gpuar_waiter *waiter,
			    struct gpuar_vendor_source *src,
			    const struct gpuar_plan *plan, uint64_t point,
			    uint64_t user_data, struct gpuar_record *rec,
			    struct gpuar_error *diag);
/* gpuar_hip_wait_blocking's 1.0 name, until 1.0. */
int gpuar_hip_wait(struct gpuar_waiter *waiter,
		   struct gpuar_vendor_source *src,
		   const struct gpuar_plan *plan, uint64_t point,
		   uint64_t user_data, struct gpuar_record *rec,
		   struct gpuar_error *diag)
	GPUAR_DEPRECATED_FOR(gpuar_hip_wait_blocking);

/* As gpuar_cuda_queue_* (<gpuar/cuda.h>), for HIP device @ordinal. */
struct gpuar_hip_queue;

int gpuar_hip_queue_open(struct gpuar_hip_queue **queue, int ordinal,
			 struct gpuar_error *diag);
int gpuar_hip_queue_await(struct gpuar_hip_queue *queue,
			  struct ihipStream_t *stream, uint64_t *user_data,
			  struct gpuar_error *diag);
int gpuar_hip_queue_reap(struct gpuar_hip_queue *queue,
			 struct gpuar_vendor_completion *out, uint32_t max,
			 int64_t timeout_ns, struct gpuar_error *diag);
int gpuar_hip_queue_fd(const struct gpuar_hip_queue *queue);
int gpuar_hip_queue_close(struct gpuar_hip_queue *queue, uint64_t timeout_ns,
			  struct gpuar_error *diag);

#ifdef __cplusplus
}
#endif

#endif /* GPUAR_HIP_H */
