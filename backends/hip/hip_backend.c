// SPDX-License-Identifier: MIT
/*
 * The HIP backend: the vendor calls behind the shared line, await and
 * source logic (backends/vendor), each made with the backend's device
 * current and the caller's current device restored afterwards, and in
 * the relaxed capture mode where the runtime has
 * hipThreadExchangeStreamCaptureMode (vendor_capture.c says why).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gpuar/hip.h>

#include "hip_loader.h"
#include "vendor.h"

#ifndef __clang__	/* clang does not fold pointer casts in _Static_assert */
_Static_assert(GPUAR_HIP_STREAM_LEGACY == GHIP_STREAM_LEGACY,
	       "the public legacy handle is the one the backend resolves");
#endif

struct gpuar_hip {
	struct gv_backend gv;	/* first: the ops get it back by a cast */
	struct ghip_loaded rt;
	int device;
	bool can_wait_value;	/* hipDeviceAttributeCanUseStreamWaitValue */
};

static struct gpuar_hip *ghip_of(struct gv_backend *b)
{
	return (struct gpuar_hip *)b;
}

/* Make the backend's device current; *saved gets the caller's. */
static ghip_error ghip_enter(struct gpuar_hip *h, int *saved)
{
	ghip_error rc = h->rt.api.hipGetDevice(saved);

	if (!rc && *saved != h->device)
		rc = h->rt.api.hipSetDevice(h->device);
	if (!rc)
		gv_capture_relax(h->rt.api.hipThreadExchangeStreamCaptureMode);
	return rc;
}

static void ghip_leave(struct gpuar_hip *h, int saved)
{
	gv_capture_restore(h->rt.api.hipThreadExchangeStreamCaptureMode);
	if (saved != h->device)
		h->rt.api.hipSetDevice(saved);
}

/* HIP has no context to retain: registration lives with the device. */
static unsigned int ghip_line_hold(struct gv_backend *b)
{
	(void)b;
	return GHIP_SUCCESS;
}

static void ghip_line_release(struct gv_backend *b)
{
	(void)b;
}

static unsigned int ghip_page_register(struct gv_backend *b, void *page,
				       size_t bytes, uint64_t *devaddr)
{
	struct gpuar_hip *h = ghip_of(b);
	void *dptr = NULL;
	int saved;
	ghip_error rc = ghip_enter(h, &saved);

	if (rc)
		return rc;
	/* Fine-grained (coherent): no hipExtHostRegisterCoarseGrained. */
	rc = h->rt.api.hipHostRegister(page, bytes, GHIP_HOST_REGISTER_MAPPED |
				       GHIP_HOST_REGISTER_PORTABLE);
	if (!rc) {
		rc = h->rt.api.hipHostGetDevicePointer(&dptr, page, 0);
		if (rc)
			h->rt.api.hipHostUnregister(page);
	}
	ghip_leave(h, saved);
	*devaddr = (uint64_t)(uintptr_t)dptr;
	return rc;
}

/* With the device current: hipHostGetDevicePointer of @page into *@dptr,
 * or (@dptr NULL) hipHostUnregister. */
static ghip_error ghip_page_call(struct gv_backend *b, void *page, void **dptr)
{
	struct gpuar_hip *h = ghip_of(b);
	int saved;
	ghip_error rc = ghip_enter(h, &saved);

	if (rc)
		return rc;
	rc = dptr ? h->rt.api.hipHostGetDevicePointer(dptr, page, 0) :
		    h->rt.api.hipHostUnregister(page);
	ghip_leave(h, saved);
	return rc;
}

static unsigned int ghip_page_unregister(struct gv_backend *b, void *page)
{
	return ghip_page_call(b, page, NULL);
}

static unsigned int ghip_page_registered(struct gv_backend *b, void *page,
					 uint64_t devaddr)
{
	void *dptr = NULL;
	ghip_error rc = ghip_page_call(b, page, &dptr);

	if (!rc && (uint64_t)(uintptr_t)dptr != devaddr)
		return GV_NO_VENDOR_STATUS;
	return rc;
}

/* What a graph capture forbade or broke (900-908, as CUDA's). */
static bool ghip_not_now(unsigned int status)
{
	return status >= GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED &&
	       status <= GHIP_ERROR_STREAM_CAPTURE_WRONG_THREAD;
}

/*
 * The handle the runtime is called with: GPUAR_HIP_STREAM_LEGACY is the
 * null stream, 0, which the (non-_spt) entry points take as the legacy
 * null stream of the current device, the backend's during every call.
 */
static ghip_stream ghip_runtime_stream(void *stream)
{
	return stream == GHIP_STREAM_LEGACY ? NULL : stream;
}

/* The pseudo-handles, named as the caller spells them. */
static const char *ghip_pseudo_name(void *stream)
{
	return stream == GHIP_STREAM_LEGACY ? "GPUAR_HIP_STREAM_LEGACY" :
					      "hipStreamPerThread";
}

static int ghip_stream_admit(struct gv_backend *b, void *stream,
			     struct gv_stream_id *id, struct gpuar_error *diag)
{
	struct gpuar_hip *h = ghip_of(b);
	const struct ghip_api *api = &h->rt.api;
	unsigned int capture = GHIP_STREAM_CAPTURE_STATUS_NONE;
	unsigned long long sid = 0;
	ghip_stream rs = ghip_runtime_stream(stream);
	bool pseudo = stream == GHIP_STREAM_LEGACY ||
		      stream == GHIP_STREAM_PER_THREAD;
	int owner = h->device, saved;
	ghip_error rc;

	if (!stream)
		return gv_fail(b, diag, EINVAL, GV_NO_VENDOR_STATUS,
			       "bare stream 0 refused: the null stream is the "
			       "legacy or the per-thread default stream depending "
			       "on how the caller was compiled; pass "
			       "GPUAR_HIP_STREAM_LEGACY (the legacy null stream), "
			       "hipStreamPerThread or a created stream");
	/* One handle, a different stream in each thread: without stream ids
	 * two threads' stores into one slot could not be told apart. */
	if (stream == GHIP_STREAM_PER_THREAD && !api->hipStreamGetId)
		return gv_fail(b, diag, EINVAL, GV_NO_VENDOR_STATUS,
			       "hipStreamPerThread refused: the runtime has no "
			       "hipStreamGetId to tell one thread's stream from "
			       "another's; pass a created stream");
	rc = ghip_enter(h, &saved);
	if (rc)
		return gv_vendor_fail(b, diag, rc, "hipSetDevice");
	/* The pseudo-handles name a stream of the calling thread's current
	 * device (@saved, read before ours was made current). While another
	 * stream of the device is captured, asking about the null stream may
	 * answer hipErrorStreamCaptureImplicit (906, "an implicit dependency
	 * on a current capture sequence from hipStreamLegacy"): -EBUSY below,
	 * as every 900-908. */
	if (pseudo)
		owner = saved;
	else if (api->hipStreamGetDevice)
		rc = api->hipStreamGetDevice(rs, &owner);
	if (!rc && owner == h->device)
		rc = api->hipStreamIsCapturing(rs, &capture);
	if (!rc && owner == h->device && capture == GHIP_STREAM_CAPTURE_STATUS_NONE &&
	    api->hipStreamGetId)
		rc = api->hipStreamGetId(rs, &sid);
	ghip_leave(h, saved);
	if (rc && ghip_not_now(rc))
		return gv_fail(b, diag, EBUSY, rc,
			       "a graph capture in progress forbade asking "
			       "about stream %p; record after it ends", stream);
	if (rc)
		return gv_vendor_fail(b, diag, rc,
				      "hipStreamGetDevice/IsCapturing/GetId");
	if (owner != h->device && pseudo)
		return gv_fail(b, diag, EXDEV, GV_NO_VENDOR_STATUS,
			       "%s names a stream of the calling thread's "
			       "current device, %d, not device %d: "
			       "hipSetDevice(%d) first, or pass a created stream",
			       ghip_pseudo_name(stream), owner, h->device,
			       h->device);
	if (owner != h->device)
		return gv_fail(b, diag, EXDEV, GV_NO_VENDOR_STATUS,
			       "stream %p belongs to device %d, not device %d",
			       stream, owner, h->device);
	if (capture != GHIP_STREAM_CAPTURE_STATUS_NONE)
		return gv_fail(b, diag, EBUSY, GV_NO_VENDOR_STATUS,
			       "stream %p is being captured into a graph "
			       "(hipStreamIsCapturing: %s); record after the "
			       "capture ends", stream,
			       capture == GHIP_STREAM_CAPTURE_STATUS_ACTIVE ?
			       "active" : "invalidated");
	/* Without ids the handle is the key: 1 for the legacy stream, which
	 * no stream's address can be, one null stream per backend. */
	id->key = api->hipStreamGetId ? (uint64_t)sid : (uint64_t)(uintptr_t)stream;
	id->thread_relative = stream == GHIP_STREAM_PER_THREAD;
	return 0;
}

static unsigned int ghip_stream_call(struct gv_backend *b, enum gv_stream_op op,
				     void *stream, uint64_t devaddr,
				     uint64_t value)
{
	struct gpuar_hip *h = ghip_of(b);
	const struct ghip_api *api = &h->rt.api;
	void *word = (void *)(uintptr_t)devaddr;
	int saved;
	ghip_error rc = ghip_enter(h, &saved);

	if (rc)
		return rc;
	stream = ghip_runtime_stream(stream);
	switch (op) {
	case GV_WRITE_VALUE:
		rc = api->hipStreamWriteValue64(stream, word, value, 0);
		break;
	case GV_WAIT_VALUE:
		/* A plain >=: see wait_wraps. */
		rc = api->hipStreamWaitValue64(stream, word, value,
					       GHIP_STREAM_WAIT_VALUE_GTE,
					       GHIP_WAIT_MASK_ALL);
		break;
	case GV_QUERY:
		rc = api->hipStreamQuery(stream);
		break;
	case GV_SYNCHRONIZE:
		rc = api->hipStreamSynchronize(stream);
		break;
	case GV_WAIT_EVENT:
		rc = api->hipStreamWaitEvent(stream, (ghip_event)(uintptr_t)value, 0);
		break;
	}
	ghip_leave(h, saved);
	return rc;
}

static unsigned int ghip_stream_create(struct gv_backend *b, void **stream)
{
	struct gpuar_hip *h = ghip_of(b);
	ghip_stream s = NULL;
	int saved;
	ghip_error rc = ghip_enter(h, &saved);

	if (rc)
		return rc;
	rc = h->rt.api.hipStreamCreateWithFlags(&s, GHIP_STREAM_NON_BLOCKING);
	ghip_leave(h, saved);
	*stream = s;
	return rc;
}

static void ghip_stream_destroy(struct gv_backend *b, void *stream)
{
	struct gpuar_hip *h = ghip_of(b);
	int saved;

	if (ghip_enter(h, &saved))
		return;
	h->rt.api.hipStreamDestroy(stream);
	ghip_leave(h, saved);
}

static const char *ghip_name(struct gv_backend *b, unsigned int status)
{
	return ghip_status_name(b ? &ghip_of(b)->rt.api : NULL, status);
}

/*
 * The statuses after which the device never stores again (the list and
 * what the hipError_t descriptions say of each are in <gpuar/hip.h>).
 */
static bool ghip_sticky(unsigned int status)
{
	switch (status) {
	case GHIP_ERROR_DEINITIALIZED:
	case GHIP_ERROR_ECC_NOT_CORRECTABLE:
	case GHIP_ERROR_ILLEGAL_ADDRESS:
	case GHIP_ERROR_LAUNCH_TIMEOUT:
	case GHIP_ERROR_CONTEXT_IS_DESTROYED:
	case GHIP_ERROR_ASSERT:
	case GHIP_ERROR_LAUNCH_FAILURE:
	case GHIP_ERROR_UNKNOWN:
		return true;
	default:
		return false;
	}
}

static const struct gv_ops ghip_ops = {
	.name = "hip",
	.domain = "device",
	.not_ready = GHIP_ERROR_NOT_READY,
	.invalid_handle = GHIP_ERROR_INVALID_HANDLE,
	.wait_wraps = false,
	.domain_stream = GHIP_STREAM_PER_THREAD,
	.line_hold = ghip_line_hold,
	.line_release = ghip_line_release,
	.page_register = ghip_page_register,
	.page_unregister = ghip_page_unregister,
	.page_registered = ghip_page_registered,
	.stream_admit = ghip_stream_admit,
	.stream_create = ghip_stream_create,
	.stream_destroy = ghip_stream_destroy,
	.stream_call = ghip_stream_call,
	.status_name = ghip_name,
	.status_sticky = ghip_sticky,
	.status_not_now = ghip_not_now,
};

GPUAR_EXPORT int gpuar_hip_open(struct gpuar_hip **out, int ordinal,
				struct gpuar_error *diag)
{
	struct gv_load_error why = { 0 };
	struct gpuar_hip *h;
	int count = 0, wait_value = 0;
	ghip_error rc;
	int err;

	gv_diag_clear(diag);
	if (!out)
		return gv_refuse(diag, "backend");
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	gv_backend_init(&h->gv, &ghip_ops, ordinal);
	h->device = ordinal;
	err = ghip_load(&h->rt, &why);
	if (err) {
		gv_fail(&h->gv, diag, why.err,
			why.status, "%s", why.detail);
		goto fail;
	}
	rc = h->rt.api.hipGetDeviceCount(&count);
	if (rc || ordinal < 0 || ordinal >= count) {
		err = gv_fail(&h->gv, diag, ENODEV,
			      rc ? rc : GV_NO_VENDOR_STATUS,
			      "no HIP device %d (%d found)", ordinal, count);
		ghip_unload(&h->rt);
		goto fail;
	}
	/* hipStreamWaitValue64 needs the device's support (HIP API,
	 * "Stream Memory Operations"); recording does not. */
	rc = h->rt.api.hipDeviceGetAttribute(&wait_value,
		GHIP_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE, ordinal);
	h->can_wait_value = !rc && wait_value;
	*out = h;
	return 0;
fail:
	gv_backend_destroy(&h->gv);
	free(h);
	return err;
}

GPUAR_EXPORT void gpuar_hip_close(struct gpuar_hip *h)
{
	if (!h)
		return;
	gv_event_streams_destroy(&h->gv);
	if (!h->gv.leaked_lines)
		ghip_unload(&h->rt);
	gv_backend_destroy(&h->gv);
	free(h);
}

GPUAR_EXPORT const char *gpuar_hip_library(const struct gpuar_hip *h)
{
	return h ? h->rt.library : NULL;
}

GPUAR_EXPORT int gpuar_hip_driver_version(const struct gpuar_hip *h)
{
	return h ? h->rt.driver_version : 0;
}

GPUAR_EXPORT int gpuar_hip_line_alloc(struct gpuar_hip *h, struct gpuar_port *port,
				      struct gpuar_vendor_line **line,
				      struct gpuar_error *diag)
{
	if (!h)
		return gv_refuse(diag, "backend");
	return gv_line_alloc(&h->gv, port, line, diag);
}

static bool ghip_line_ours(const struct gpuar_vendor_line *line)
{
	return line && line->b->ops == &ghip_ops;
}

#define GHIP_LINE_CHECK(line)                 \
	do {                                  \
		if (!ghip_line_ours(line))    \
			return gv_refuse(diag, "line"); \
	} while (0)

GPUAR_EXPORT int gpuar_hip_line_free(struct gpuar_vendor_line *line, uint64_t timeout_ns,
				     struct gpuar_error *diag)
{
	if (!line)
		return 0;
	GHIP_LINE_CHECK(line);
	return gv_line_free(line, timeout_ns, diag);
}

GPUAR_EXPORT int gpuar_hip_record(struct gpuar_vendor_line *line, uint32_t slot,
				  struct ihipStream_t *stream, uint64_t *target,
				  struct gpuar_error *diag)
{
	GHIP_LINE_CHECK(line);
	return gv_record(line, slot, stream, target, diag);
}

GPUAR_EXPORT int gpuar_hip_await(struct gpuar_vendor_line *line, uint32_t slot,
				 struct ihipStream_t *stream, const struct gpuar_plan *plan,
				 uint64_t point, uint64_t user_data, uint64_t *target,
				 struct gpuar_error *diag)
{
	GHIP_LINE_CHECK(line);
	return gv_await(line, slot, stream, plan, point, user_data, target, diag);
}

GPUAR_EXPORT int gpuar_hip_reap(struct gpuar_hip *h, struct gpuar_port *port,
				struct gpuar_vendor_completion *out, uint32_t max,
				int64_t timeout_ns, struct gpuar_error *diag)
{
	if (!h)
		return gv_refuse(diag, "backend");
	return gv_reap(&h->gv, port, out, max, timeout_ns, diag);
}

GPUAR_EXPORT int gpuar_hip_stream_wait_word(struct gpuar_vendor_line *line, uint32_t slot,
					    struct ihipStream_t *stream, uint64_t target,
					    struct gpuar_error *diag)
{
	GHIP_LINE_CHECK(line);
	gv_diag_clear(diag);
	if (!ghip_of(line->b)->can_wait_value)
		return gv_fail(line->b, diag, EOPNOTSUPP, GV_NO_VENDOR_STATUS,
			       "device %d cannot wait on a value "
			       "(hipDeviceAttributeCanUseStreamWaitValue = 0)",
			       line->b->device);
	return gv_stream_wait_word(line, slot, stream, target, diag);
}

GPUAR_EXPORT int gpuar_hip_await_event(struct gpuar_vendor_line *line, uint32_t slot,
				       struct ihipEvent_t *event,
				       const struct gpuar_plan *plan, uint64_t point,
				       uint64_t user_data, uint64_t *target,
				       struct gpuar_error *diag)
{
	GHIP_LINE_CHECK(line);
	return gv_await_event(line, slot, event, plan, point, user_data, target,
			      diag);
}

GPUAR_EXPORT int gpuar_hip_source_init(struct gpuar_vendor_source *src,
				       struct gpuar_vendor_line *line, uint32_t slot,
				       struct ihipStream_t *stream, struct gpuar_error *diag)
{
	GHIP_LINE_CHECK(line);
	return gv_source_init(src, line, slot, stream, diag);
}

GPUAR_EXPORT int gpuar_hip_wait(struct gpuar_waiter *waiter,
				struct gpuar_vendor_source *src,
				const struct gpuar_plan *plan, uint64_t point,
				uint64_t user_data, struct gpuar_record *rec,
				struct gpuar_error *diag)
{
	if (!src || !ghip_line_ours(src->line))
		return gv_refuse(diag, "source");
	return gv_wait(waiter, src, plan, point, user_data, rec, diag);
}

/* ------------------------------------------------------------- queue */

/* A HIP queue is a vendor queue over a HIP handle (vendor_queue.c). */
static void ghip_queue_handle_close(void *handle)
{
	gpuar_hip_close(handle);
}

GPUAR_EXPORT int gpuar_hip_queue_open(struct gpuar_hip_queue **queue,
				      int ordinal, struct gpuar_error *diag)
{
	struct gpuar_hip *h;
	struct gv_queue *q;
	int rc;

	gv_diag_clear(diag);
	if (!queue)
		return gv_refuse(diag, "queue");
	rc = gpuar_hip_open(&h, ordinal, diag);
	if (rc)
		return rc;
	rc = gv_queue_open(&q, &h->gv, h, ghip_queue_handle_close, diag);
	if (rc)
		return rc;
	*queue = (struct gpuar_hip_queue *)q;
	return 0;
}

GPUAR_EXPORT int gpuar_hip_queue_await(struct gpuar_hip_queue *queue,
				       struct ihipStream_t *stream,
				       uint64_t *user_data,
				       struct gpuar_error *diag)
{
	return gv_queue_await(&ghip_ops, queue, stream, user_data, diag);
}

GPUAR_EXPORT int gpuar_hip_queue_reap(struct gpuar_hip_queue *queue,
				      struct gpuar_vendor_completion *out,
				      uint32_t max, int64_t timeout_ns,
				      struct gpuar_error *diag)
{
	return gv_queue_reap(&ghip_ops, queue, out, max, timeout_ns, diag);
}

GPUAR_EXPORT int gpuar_hip_queue_fd(const struct gpuar_hip_queue *queue)
{
	return gv_queue_fd(&ghip_ops, queue);
}

GPUAR_EXPORT int gpuar_hip_queue_close(struct gpuar_hip_queue *queue,
				       uint64_t timeout_ns,
				       struct gpuar_error *diag)
{
	return gv_queue_close(&ghip_ops, queue, timeout_ns, diag);
}
