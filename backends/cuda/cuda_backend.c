// SPDX-License-Identifier: MIT
/*
 * The CUDA backend: the vendor calls behind the shared line, await and
 * source logic (backends/vendor), all made under the device's retained
 * primary context.
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

/* Make the primary context current for one call; pop it after. */
static gcu_result gcu_enter(struct gpuar_cuda *cu)
{
	return cu->drv.api.cuCtxPushCurrent(cu->ctx);
}

static void gcu_leave(struct gpuar_cuda *cu)
{
	gcu_context popped;

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

static int gcu_stream_admit(struct gv_backend *b, void *stream,
			    struct gpuar_error *diag)
{
	struct gpuar_cuda *cu = gcu_of(b);
	gcu_context owner = NULL;
	unsigned int capture = GCU_STREAM_CAPTURE_STATUS_NONE;
	gcu_result rc;

	if (!stream)
		return gv_fail(b, diag, EINVAL, GV_NO_VENDOR_STATUS,
			       "bare stream 0 refused: it is the legacy or the "
			       "per-thread default stream depending on how the "
			       "caller was compiled; pass CU_STREAM_LEGACY or "
			       "CU_STREAM_PER_THREAD");
	rc = gcu_enter(cu);
	if (rc)
		return gv_vendor_fail(b, diag, rc, "cuCtxPushCurrent");
	rc = cu->drv.api.cuStreamGetCtx(stream, &owner);
	if (!rc && owner == cu->ctx)
		rc = cu->drv.api.cuStreamIsCapturing(stream, &capture);
	gcu_leave(cu);
	if (rc)
		return gv_vendor_fail(b, diag, rc, "cuStreamGetCtx/IsCapturing");
	if (owner != cu->ctx)
		return gv_fail(b, diag, EXDEV, GV_NO_VENDOR_STATUS,
			       "stream %p belongs to another context, not device "
			       "%d's primary context", stream, b->device);
	if (capture != GCU_STREAM_CAPTURE_STATUS_NONE)
		return gv_fail(b, diag, EBUSY, GV_NO_VENDOR_STATUS,
			       "stream %p is being captured into a graph "
			       "(cuStreamIsCapturing: %s); record after the "
			       "capture ends", stream,
			       capture == GCU_STREAM_CAPTURE_STATUS_ACTIVE ?
			       "active" : "invalidated");
	return 0;
}

static unsigned int gcu_stream_call(struct gv_backend *b, enum gv_stream_op op,
				    void *stream, uint64_t devaddr,
				    uint64_t value)
{
	struct gpuar_cuda *cu = gcu_of(b);
	const struct gcu_api *api = &cu->drv.api;
	gcu_result rc = gcu_enter(cu);

	if (rc)
		return rc;
	switch (op) {
	case GV_WRITE_VALUE:
		/* The default flags keep the memory barrier: never
		 * NO_MEMORY_BARRIER. */
		rc = api->cuStreamWriteValue64(stream, devaddr, value,
					       GCU_STREAM_WRITE_VALUE_DEFAULT);
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
	}
	gcu_leave(cu);
	return rc;
}

static const char *gcu_name(struct gv_backend *b, unsigned int status)
{
	return gcu_status_name(b ? &gcu_of(b)->drv.api : NULL, status);
}

/* The device-side failures after which the context is unusable. */
static bool gcu_sticky(unsigned int status)
{
	switch (status) {
	case GCU_ERROR_ECC_UNCORRECTABLE:
	case GCU_ERROR_ILLEGAL_ADDRESS:
	case GCU_ERROR_LAUNCH_TIMEOUT:
	case GCU_ERROR_HARDWARE_STACK_ERROR:
	case GCU_ERROR_ILLEGAL_INSTRUCTION:
	case GCU_ERROR_MISALIGNED_ADDRESS:
	case GCU_ERROR_INVALID_ADDRESS_SPACE:
	case GCU_ERROR_INVALID_PC:
	case GCU_ERROR_LAUNCH_FAILED:
		return true;
	default:
		return false;
	}
}

static const struct gv_ops gcu_ops = {
	.name = "cuda",
	.domain = "context",
	.not_ready = GCU_ERROR_NOT_READY,
	.wait_wraps = true,
	.domain_stream = GCU_STREAM_LEGACY,
	.line_hold = gcu_line_hold,
	.line_release = gcu_line_release,
	.page_register = gcu_page_register,
	.page_unregister = gcu_page_unregister,
	.stream_admit = gcu_stream_admit,
	.stream_call = gcu_stream_call,
	.status_name = gcu_name,
	.status_sticky = gcu_sticky,
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
	cu->drv.api.cuDevicePrimaryCtxRelease(cu->device);
	/* A leaked line still points into the driver: keep it loaded. */
	if (!cu->gv.leaked_lines)
		gcu_unload(&cu->drv);
	gv_backend_destroy(&cu->gv);
	free(cu);
}

GPUAR_EXPORT int gpuar_cuda_driver_version(const struct gpuar_cuda *cu)
{
	return cu->drv.driver_version;
}

GPUAR_EXPORT const char *gpuar_cuda_library(const struct gpuar_cuda *cu)
{
	return cu->drv.library;
}

GPUAR_EXPORT const char *gpuar_cuda_resolver(const struct gpuar_cuda *cu)
{
	return cu->drv.resolver;
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
