// SPDX-License-Identifier: MIT
/*
 * The CUDA and HIP calls under the names that say which path they are on
 * (lib/renamed.c has the library's): *_blocking blocks the calling thread
 * on one wait, *port* goes through a completion port. Each calls the
 * function of its 1.0 name (kept, exported at GPUAR_1.0, until 1.0).
 */
#include "vendor.h"

#include <gpuar/cuda.h>
#include <gpuar/hip.h>

GPUAR_EXPORT int gpuar_cuda_port_await(struct gpuar_vendor_line *line,
				       uint32_t slot, struct CUstream_st *stream,
				       const struct gpuar_plan *plan,
				       uint64_t point, uint64_t user_data,
				       uint64_t *target,
				       struct gpuar_error *diag)
{
	return gpuar_cuda_await(line, slot, stream, plan, point, user_data,
				target, diag);
}

GPUAR_EXPORT int gpuar_cuda_port_await_event(struct gpuar_vendor_line *line,
					     uint32_t slot,
					     struct CUevent_st *event,
					     const struct gpuar_plan *plan,
					     uint64_t point, uint64_t user_data,
					     uint64_t *target,
					     struct gpuar_error *diag)
{
	return gpuar_cuda_await_event(line, slot, event, plan, point,
				      user_data, target, diag);
}

GPUAR_EXPORT int gpuar_cuda_port_reap(struct gpuar_cuda *cuda,
				      struct gpuar_port *port,
				      struct gpuar_vendor_completion *out,
				      uint32_t max, int64_t timeout_ns,
				      struct gpuar_error *diag)
{
	return gpuar_cuda_reap(cuda, port, out, max, timeout_ns, diag);
}

GPUAR_EXPORT int gpuar_cuda_wait_blocking(struct gpuar_waiter *waiter,
					  struct gpuar_vendor_source *src,
					  const struct gpuar_plan *plan,
					  uint64_t point, uint64_t user_data,
					  struct gpuar_record *rec,
					  struct gpuar_error *diag)
{
	return gpuar_cuda_wait(waiter, src, plan, point, user_data, rec, diag);
}

GPUAR_EXPORT int gpuar_hip_port_await(struct gpuar_vendor_line *line,
				      uint32_t slot, struct ihipStream_t *stream,
				      const struct gpuar_plan *plan,
				      uint64_t point, uint64_t user_data,
				      uint64_t *target,
				      struct gpuar_error *diag)
{
	return gpuar_hip_await(line, slot, stream, plan, point, user_data,
			       target, diag);
}

GPUAR_EXPORT int gpuar_hip_port_await_event(struct gpuar_vendor_line *line,
					    uint32_t slot,
					    struct ihipEvent_t *event,
					    const struct gpuar_plan *plan,
					    uint64_t point, uint64_t user_data,
					    uint64_t *target,
					    struct gpuar_error *diag)
{
	return gpuar_hip_await_event(line, slot, event, plan, point,
				     user_data, target, diag);
}

GPUAR_EXPORT int gpuar_hip_port_reap(struct gpuar_hip *hip,
				     struct gpuar_port *port,
				     struct gpuar_vendor_completion *out,
				     uint32_t max, int64_t timeout_ns,
				     struct gpuar_error *diag)
{
	return gpuar_hip_reap(hip, port, out, max, timeout_ns, diag);
}

GPUAR_EXPORT int gpuar_hip_wait_blocking(struct gpuar_waiter *waiter,
					 struct gpuar_vendor_source *src,
					 const struct gpuar_plan *plan,
					 uint64_t point, uint64_t user_data,
					 struct gpuar_record *rec,
					 struct gpuar_error *diag)
{
	return gpuar_hip_wait(waiter, src, plan, point, user_data, rec, diag);
}
