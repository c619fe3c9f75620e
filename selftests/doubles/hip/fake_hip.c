// SPDX-License-Identifier: MIT
/*
 * TEST DOUBLE of the HIP runtime, built as
 * $(BUILD)/doubles/hip/libamdhip64.so.6 and loaded by the HIP backend's
 * tests through GPUAR_HIP_LIBRARY. It is not HIP and drives no GPU: it
 * implements only the entry points the backend resolves (hip_decls.h), on
 * top of fake_queue.c. Built a second time with
 * -DFAKE_HIP_WITHOUT_WRITE_VALUE as libamdhip64-nowrite.so, a runtime that
 * lacks hipStreamWriteValue64, for the missing-entry-point test; with
 * -DFAKE_HIP_VERSION=7xxxxxxx as libamdhip64.so.7 (ROCm 7); and with
 * -DFAKE_HIP_5 as libamdhip64.so.5, a HIP 5.2 runtime (Debian bookworm's)
 * that lacks hipStreamGetDevice and hipStreamGetId.
 *
 * Model: devices 0 and 1, each a fault domain (HIP errors are sticky per
 * device); the current device is per thread (default 0); the null stream
 * (0, taken by these non-_spt entry points as the legacy null stream) is
 * one stream per device, the current device's: work on it completes in
 * order like any stream's, hipStreamGetDevice(0) answers the current
 * device and hipStreamGetId(0) that null stream's id (the HIP runtime API
 * reference: the null stream is the current device's, and calls on it
 * "follow standard null-stream semantics", hipStreamSynchronize; its
 * serialisation with the device's other blocking streams is not
 * modelled, no test depends on it); handle 1, which HIP 5.2 does not
 * know (newer runtimes call theirs hipStreamLegacy), is
 * hipErrorInvalidHandle, so a backend that passed gpuar's
 * GPUAR_HIP_STREAM_LEGACY through instead of 0 fails here;
 * hipStreamPerThread is one stream per device *and
 * thread* (HIP documents it as CUDA's cudaStreamPerThread: "a different
 * stream in each host thread"); each stream has an id (hipStreamGetId,
 * "Queries the Id of a stream"); registered host pages as fake_memory.h (a
 * device address that differs from the host address);
 * hipStreamWaitValue64 compares (*word & mask) >= value as plain numbers,
 * as HIP does, and fails with hipErrorNotSupported on a device whose
 * hipDeviceAttributeCanUseStreamWaitValue is 0 ("Support for
 * hipStreamWaitValue64 can be queried using hipDeviceGetAttribute() and
 * hipDeviceAttributeCanUseStreamWaitValue", hip_runtime_api.h);
 * hipRuntimeGetVersion reports FAKE_HIP_VERSION. Events, and capture
 * modes (hipThreadExchangeStreamCaptureMode: queries, synchronizes and
 * host registration are the prohibited calls), as fake_queue.h.
 * Environment: GPUAR_FAKE_HIP_NO_DEVICE=1 (hipInit fails),
 * GPUAR_FAKE_HIP_NO_WAIT_VALUE=1 (the attribute is 0),
 * GPUAR_FAKE_HIP_RUNTIME_VERSION=N (the version reported).
 * Double-only entry points are gpuar_fake_hip_*.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../../backends/hip/hip_decls.h"
#include "../common/fake_memory.h"
#include "../common/fake_queue.h"

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_DEVICES 2
_Static_assert(FAKE_DEVICES <= FQ_THREAD_STREAM_DEVICES, "per-thread slots");
#ifndef FAKE_HIP_VERSION
#ifdef FAKE_HIP_5
#define FAKE_HIP_VERSION 50222000
#else
#define FAKE_HIP_VERSION 60443483
#endif
#endif

struct ihipStream_t {
	struct fq_stream q;
	int device;
	unsigned long long id;
	struct ihipStream_t *all_next;	/* every stream made, never freed */
};

/* The handle; the event itself outlives it while queued ops hold it. */
struct ihipEvent_t {
	struct fq_event *e;
};

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fq_domain fake_dev[FAKE_DEVICES];
static struct ihipStream_t *fake_default[FAKE_DEVICES];
static unsigned long long fake_next_id = 100;
static bool fake_initialised;
static FQ_THREAD_LOCAL int cur_device;
/* Every stream ever made: a destroyed or reset stream's handle stays safe
 * to pass (it answers hipErrorInvalidHandle). */
static pthread_mutex_t fake_streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ihipStream_t *fake_streams;

FAKE_EXPORT ghip_error gpuar_fake_hip_work(ghip_stream s, uint64_t ns);
FAKE_EXPORT ghip_error gpuar_fake_hip_fault(ghip_stream s, ghip_error code);
FAKE_EXPORT ghip_error gpuar_fake_hip_capture(ghip_stream s, int on);
FAKE_EXPORT int gpuar_fake_hip_registered_pages(void);
FAKE_EXPORT uint64_t gpuar_fake_hip_unsafe_unregisters(void);
FAKE_EXPORT void gpuar_fake_hip_reset(void);
FAKE_EXPORT ghip_error gpuar_fake_hip_drop_writes(ghip_stream s, unsigned int n);
FAKE_EXPORT ghip_error hipDeviceReset(void);

FAKE_EXPORT ghip_error hipInit(unsigned int flags);
FAKE_EXPORT ghip_error hipDriverGetVersion(int *version);
FAKE_EXPORT const char *hipGetErrorName(ghip_error error);
FAKE_EXPORT ghip_error hipGetDeviceCount(int *count);
FAKE_EXPORT ghip_error hipGetDevice(int *device);
FAKE_EXPORT ghip_error hipSetDevice(int device);
FAKE_EXPORT ghip_error hipHostRegister(void *p, size_t bytes, unsigned int flags);
FAKE_EXPORT ghip_error hipHostUnregister(void *p);
FAKE_EXPORT ghip_error hipHostGetDevicePointer(void **dptr, void *p,
					       unsigned int flags);
FAKE_EXPORT ghip_error hipStreamCreateWithFlags(ghip_stream *s,
						unsigned int flags);
FAKE_EXPORT ghip_error hipStreamDestroy(ghip_stream s);
FAKE_EXPORT ghip_error hipStreamQuery(ghip_stream s);
FAKE_EXPORT ghip_error hipStreamSynchronize(ghip_stream s);
FAKE_EXPORT ghip_error hipStreamWaitValue64(ghip_stream s, void *ptr,
					    uint64_t value, unsigned int flags,
					    uint64_t mask);
FAKE_EXPORT ghip_error hipStreamIsCapturing(ghip_stream s, unsigned int *st);
FAKE_EXPORT ghip_error hipRuntimeGetVersion(int *version);
FAKE_EXPORT ghip_error hipThreadExchangeStreamCaptureMode(unsigned int *mode);
FAKE_EXPORT ghip_error hipDeviceGetAttribute(int *value, unsigned int attribute,
					     int device);
FAKE_EXPORT ghip_error hipStreamWaitEvent(ghip_stream s, ghip_event e,
					  unsigned int flags);
FAKE_EXPORT ghip_error hipEventCreateWithFlags(ghip_event *e, unsigned int flags);
FAKE_EXPORT ghip_error hipEventRecord(ghip_event e, ghip_stream s);
FAKE_EXPORT ghip_error hipEventSynchronize(ghip_event e);
FAKE_EXPORT ghip_error hipEventDestroy(ghip_event e);

static struct ihipStream_t *fake_stream_new(int dev)
{
	struct ihipStream_t *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->device = dev;
	s->id = __atomic_fetch_add(&fake_next_id, 1, __ATOMIC_RELAXED);
	if (fq_stream_start(&s->q, &fake_dev[dev], dev)) {
		free(s);
		return NULL;
	}
	pthread_mutex_lock(&fake_streams_lock);
	s->all_next = fake_streams;
	fake_streams = s;
	pthread_mutex_unlock(&fake_streams_lock);
	return s;
}

static ghip_error fake_stream(ghip_stream handle, struct ihipStream_t **out)
{
	int dev = cur_device;

	if (!fake_initialised)
		return GHIP_ERROR_NOT_INITIALIZED;
	struct ihipStream_t **slot;

	if (handle == GHIP_STREAM_LEGACY)
		return GHIP_ERROR_INVALID_HANDLE;	/* not a HIP 5.2 handle */
	if (handle && handle != GHIP_STREAM_PER_THREAD) {
		*out = handle;
		return fq_stream_gone(&handle->q);
	}
	/* The null stream: one per device. Per-thread: per device and thread. */
	slot = handle ? (struct ihipStream_t **)fq_thread_stream_slot(dev) :
			&fake_default[dev];
	if (!slot)
		return GHIP_ERROR_UNKNOWN;
	pthread_mutex_lock(&fake_lock);
	/* A reset destroyed it: the device makes a new one on next use. */
	if (*slot && fq_stream_gone(&(*slot)->q))
		*slot = NULL;
	if (!*slot && !(*slot = fake_stream_new(dev))) {
		pthread_mutex_unlock(&fake_lock);
		return GHIP_ERROR_UNKNOWN;
	}
	*out = *slot;
	pthread_mutex_unlock(&fake_lock);
	return GHIP_SUCCESS;
}

static ghip_error fake_push(struct ihipStream_t *s, const struct fq_op *op)
{
	return fq_stream_enqueue(&s->q, op, GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED,
				 GHIP_ERROR_UNKNOWN);
}

ghip_error hipInit(unsigned int flags)
{
	if (flags)
		return GHIP_ERROR_INVALID_VALUE;
	if (fq_env_flag("GPUAR_FAKE_HIP_NO_DEVICE"))
		return GHIP_ERROR_NO_DEVICE;
	pthread_mutex_lock(&fake_lock);
	if (!fake_initialised) {
		for (int i = 0; i < FAKE_DEVICES; i++)
			fq_domain_init(&fake_dev[i]);
		fake_initialised = true;
	}
	pthread_mutex_unlock(&fake_lock);
	return GHIP_SUCCESS;
}

ghip_error hipDriverGetVersion(int *version)
{
	if (!version)
		return GHIP_ERROR_INVALID_VALUE;
	*version = 60032830;
	return GHIP_SUCCESS;
}

const char *hipGetErrorName(ghip_error error)
{
	switch (error) {
	case GHIP_SUCCESS: return "hipSuccess";
	case GHIP_ERROR_INVALID_VALUE: return "hipErrorInvalidValue";
	case GHIP_ERROR_NOT_INITIALIZED: return "hipErrorNotInitialized";
	case GHIP_ERROR_DEINITIALIZED: return "hipErrorDeinitialized";
	case GHIP_ERROR_ECC_NOT_CORRECTABLE: return "hipErrorECCNotCorrectable";
	case GHIP_ERROR_LAUNCH_TIMEOUT: return "hipErrorLaunchTimeOut";
	case GHIP_ERROR_CONTEXT_IS_DESTROYED: return "hipErrorContextIsDestroyed";
	case GHIP_ERROR_ASSERT: return "hipErrorAssert";
	case GHIP_ERROR_UNKNOWN: return "hipErrorUnknown";
	case GHIP_ERROR_NO_DEVICE: return "hipErrorNoDevice";
	case GHIP_ERROR_INVALID_DEVICE: return "hipErrorInvalidDevice";
	case GHIP_ERROR_INVALID_HANDLE: return "hipErrorInvalidHandle";
	case GHIP_ERROR_NOT_READY: return "hipErrorNotReady";
	case GHIP_ERROR_ILLEGAL_ADDRESS: return "hipErrorIllegalAddress";
	case GHIP_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
		return "hipErrorHostMemoryAlreadyRegistered";
	case GHIP_ERROR_LAUNCH_FAILURE: return "hipErrorLaunchFailure";
	case GHIP_ERROR_NOT_SUPPORTED: return "hipErrorNotSupported";
	case GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED:
		return "hipErrorStreamCaptureUnsupported";
	default: return "hipErrorUnknown";
	}
}

ghip_error hipGetDeviceCount(int *count)
{
	if (!fake_initialised)
		return GHIP_ERROR_NOT_INITIALIZED;
	if (!count)
		return GHIP_ERROR_INVALID_VALUE;
	*count = FAKE_DEVICES;
	return GHIP_SUCCESS;
}

ghip_error hipGetDevice(int *device)
{
	if (!device)
		return GHIP_ERROR_INVALID_VALUE;
	*device = cur_device;
	return GHIP_SUCCESS;
}

ghip_error hipSetDevice(int device)
{
	if (device < 0 || device >= FAKE_DEVICES)
		return GHIP_ERROR_INVALID_DEVICE;
	cur_device = device;
	return GHIP_SUCCESS;
}

ghip_error hipHostRegister(void *p, size_t bytes, unsigned int flags)
{
	if (!fake_initialised)
		return GHIP_ERROR_NOT_INITIALIZED;
	if (!p || !bytes || (flags & ~0xfu))
		return GHIP_ERROR_INVALID_VALUE;
	if (!fq_capture_permits_unsafe_call())
		return GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	switch (fm_register(p, bytes, &fake_dev[cur_device])) {
	case FM_REGISTERED: return GHIP_SUCCESS;
	case FM_OVERLAPS: return GHIP_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	default: return GHIP_ERROR_UNKNOWN;
	}
}

ghip_error hipHostUnregister(void *p)
{
	if (!fq_capture_permits_unsafe_call())
		return GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return fm_unregister(p) ? GHIP_SUCCESS : GHIP_ERROR_INVALID_VALUE;
}

ghip_error hipHostGetDevicePointer(void **dptr, void *p, unsigned int flags)
{
	if (!dptr || !p || flags)
		return GHIP_ERROR_INVALID_VALUE;
	*dptr = (void *)(uintptr_t)fm_device_address(p);
	return *dptr ? GHIP_SUCCESS : GHIP_ERROR_INVALID_VALUE;
}

ghip_error hipStreamCreateWithFlags(ghip_stream *out, unsigned int flags)
{
	struct ihipStream_t *s;

	if (!fake_initialised)
		return GHIP_ERROR_NOT_INITIALIZED;
	if (!out || flags > GHIP_STREAM_NON_BLOCKING)
		return GHIP_ERROR_INVALID_VALUE;
	s = fake_stream_new(cur_device);
	if (!s)
		return GHIP_ERROR_UNKNOWN;
	*out = s;
	return GHIP_SUCCESS;
}

ghip_error hipStreamDestroy(ghip_stream s)
{
	if (!s || s == GHIP_STREAM_PER_THREAD || s == GHIP_STREAM_LEGACY ||
	    fq_stream_gone(&s->q))
		return GHIP_ERROR_INVALID_HANDLE;
	/*
	 * "The queue may be destroyed while some commands are still inflight,
	 * or may wait for all commands queued to the stream before destroying
	 * it" (HIP API, hipStreamDestroy): the double waits (or drops the
	 * queue of a failed device); the handle is invalid from then on.
	 */
	fq_stream_sync(&s->q);
	fq_stream_close_handle(&s->q, GHIP_ERROR_INVALID_HANDLE);
	return GHIP_SUCCESS;
}

/*
 * "Destroy all resources and reset all state on the current device in
 * the current process" (HIP API, hipDeviceReset), from whichever thread
 * calls it: every stream of the device is destroyed with its queued work
 * (nothing it would have stored lands; its handle answers
 * hipErrorInvalidHandle), every host registration made with the device
 * current is gone, and the null and per-thread streams are made afresh
 * on next use. A sticky error stays.
 */
ghip_error hipDeviceReset(void)
{
	int dev = cur_device;

	if (!fake_initialised)
		return GHIP_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&fake_lock);
	fake_default[dev] = NULL;
	pthread_mutex_unlock(&fake_lock);
	pthread_mutex_lock(&fake_streams_lock);
	for (struct ihipStream_t *s = fake_streams; s; s = s->all_next)
		if (s->device == dev && !fq_stream_gone(&s->q))
			fq_stream_kill(&s->q, GHIP_ERROR_INVALID_HANDLE);
	pthread_mutex_unlock(&fake_streams_lock);
	fm_drop_owner(&fake_dev[dev]);
	return GHIP_SUCCESS;
}

ghip_error hipStreamQuery(ghip_stream handle)
{
	struct ihipStream_t *s;
	ghip_error rc = fake_stream(handle, &s);

	if (rc)
		return rc;
	if (!fq_capture_permits_unsafe_call())
		return GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return fq_stream_query(&s->q, GHIP_ERROR_NOT_READY);
}

ghip_error hipStreamSynchronize(ghip_stream handle)
{
	struct ihipStream_t *s;
	ghip_error rc = fake_stream(handle, &s);

	if (rc)
		return rc;
	if (!fq_capture_permits_unsafe_call())
		return GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return fq_stream_sync(&s->q);
}

#ifndef FAKE_HIP_WITHOUT_WRITE_VALUE
FAKE_EXPORT ghip_error hipStreamWriteValue64(ghip_stream s, void *ptr,
					     uint64_t value, unsigned int flags);

ghip_error hipStreamWriteValue64(ghip_stream handle, void *ptr, uint64_t value,
				 unsigned int flags)
{
	struct ihipStream_t *s;
	struct fq_op op;
	ghip_error rc = fake_stream(handle, &s);

	(void)flags;
	if (rc)
		return rc;
	if ((uintptr_t)ptr & 7)
		return GHIP_ERROR_INVALID_VALUE;
	op = fm_word_op(FQ_WRITE, (uintptr_t)ptr, value, 0,
			GHIP_ERROR_ILLEGAL_ADDRESS);
	return fake_push(s, &op);
}
#endif

ghip_error hipStreamWaitValue64(ghip_stream handle, void *ptr, uint64_t value,
				unsigned int flags, uint64_t mask)
{
	struct ihipStream_t *s;
	struct fq_op op;
	ghip_error rc = fake_stream(handle, &s);

	if (rc)
		return rc;
	if (fq_env_flag("GPUAR_FAKE_HIP_NO_WAIT_VALUE"))
		return GHIP_ERROR_NOT_SUPPORTED;
	/* Only hipStreamWaitValueGte is modelled. */
	if (flags != GHIP_STREAM_WAIT_VALUE_GTE || ((uintptr_t)ptr & 7))
		return GHIP_ERROR_INVALID_VALUE;
	op = fm_word_op(FQ_WAIT_PLAIN, (uintptr_t)ptr, value, mask,
			GHIP_ERROR_ILLEGAL_ADDRESS);
	return fake_push(s, &op);
}

ghip_error hipStreamIsCapturing(ghip_stream handle, unsigned int *st)
{
	struct ihipStream_t *s;
	ghip_error rc = fake_stream(handle, &s);

	if (rc)
		return rc;
	if (!st)
		return GHIP_ERROR_INVALID_VALUE;
	*st = !fq_stream_capturing(&s->q) ? GHIP_STREAM_CAPTURE_STATUS_NONE :
	      fq_capture_invalidated(&s->q) ? GHIP_STREAM_CAPTURE_STATUS_INVALIDATED :
					      GHIP_STREAM_CAPTURE_STATUS_ACTIVE;
	return GHIP_SUCCESS;
}

/* hipThreadExchangeStreamCaptureMode (fake_queue.h has the rule). */
ghip_error hipThreadExchangeStreamCaptureMode(unsigned int *mode)
{
	if (!mode || *mode > FQ_CAPTURE_RELAXED)
		return GHIP_ERROR_INVALID_VALUE;
	*mode = fq_capture_exchange_mode(*mode);
	return GHIP_SUCCESS;
}

ghip_error hipRuntimeGetVersion(int *version)
{
	const char *env = getenv("GPUAR_FAKE_HIP_RUNTIME_VERSION");

	if (!version)
		return GHIP_ERROR_INVALID_VALUE;
	*version = env && *env ? atoi(env) : FAKE_HIP_VERSION;
	return GHIP_SUCCESS;
}

ghip_error hipDeviceGetAttribute(int *value, unsigned int attribute, int device)
{
	if (!fake_initialised)
		return GHIP_ERROR_NOT_INITIALIZED;
	if (!value || attribute != GHIP_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE)
		return GHIP_ERROR_INVALID_VALUE;
	if (device < 0 || device >= FAKE_DEVICES)
		return GHIP_ERROR_INVALID_DEVICE;
	*value = !fq_env_flag("GPUAR_FAKE_HIP_NO_WAIT_VALUE");
	return GHIP_SUCCESS;
}

ghip_error hipEventCreateWithFlags(ghip_event *out, unsigned int flags)
{
	struct ihipEvent_t *e;

	if (!fake_initialised)
		return GHIP_ERROR_NOT_INITIALIZED;
	if (!out || (flags & ~0x7u))
		return GHIP_ERROR_INVALID_VALUE;
	e = calloc(1, sizeof(*e));
	if (e)
		e->e = fq_event_new();
	if (!e || !e->e) {
		free(e);
		return GHIP_ERROR_UNKNOWN;
	}
	*out = e;
	return GHIP_SUCCESS;
}

ghip_error hipEventRecord(ghip_event e, ghip_stream handle)
{
	struct ihipStream_t *s;
	ghip_error rc = fake_stream(handle, &s);

	if (rc)
		return rc;
	if (!e)
		return GHIP_ERROR_INVALID_HANDLE;
	return fq_event_record(e->e, &s->q, GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED,
			       GHIP_ERROR_UNKNOWN);
}

ghip_error hipEventSynchronize(ghip_event e)
{
	if (!e)
		return GHIP_ERROR_INVALID_HANDLE;
	if (!fq_capture_permits_unsafe_call())
		return GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return fq_event_sync(e->e);
}

ghip_error hipEventDestroy(ghip_event e)
{
	if (!e)
		return GHIP_ERROR_INVALID_HANDLE;
	fq_event_release(e->e);
	free(e);
	return GHIP_SUCCESS;
}

ghip_error hipStreamWaitEvent(ghip_stream handle, ghip_event e,
			      unsigned int flags)
{
	struct ihipStream_t *s;
	ghip_error rc = fake_stream(handle, &s);

	if (rc)
		return rc;
	if (!e)
		return GHIP_ERROR_INVALID_HANDLE;
	if (flags)
		return GHIP_ERROR_INVALID_VALUE;
	return fq_stream_wait_event(&s->q, e->e,
				    GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED,
				    GHIP_ERROR_UNKNOWN);
}

#ifndef FAKE_HIP_5
FAKE_EXPORT ghip_error hipStreamGetDevice(ghip_stream s, int *device);
FAKE_EXPORT ghip_error hipStreamGetId(ghip_stream s, unsigned long long *id);

ghip_error hipStreamGetId(ghip_stream handle, unsigned long long *id)
{
	struct ihipStream_t *s;
	ghip_error rc = fake_stream(handle, &s);

	if (rc)
		return rc;
	if (!id)
		return GHIP_ERROR_INVALID_VALUE;
	*id = s->id;
	return GHIP_SUCCESS;
}

ghip_error hipStreamGetDevice(ghip_stream handle, int *device)
{
	struct ihipStream_t *s;
	ghip_error rc = fake_stream(handle, &s);

	if (rc)
		return rc;
	if (!device)
		return GHIP_ERROR_INVALID_VALUE;
	*device = s->device;
	return GHIP_SUCCESS;
}
#endif

ghip_error gpuar_fake_hip_work(ghip_stream handle, uint64_t ns)
{
	struct ihipStream_t *s;
	struct fq_op op = { .kind = FQ_WORK, .ns = ns };
	ghip_error rc = fake_stream(handle, &s);

	return rc ? rc : fake_push(s, &op);
}

ghip_error gpuar_fake_hip_fault(ghip_stream handle, ghip_error code)
{
	struct ihipStream_t *s;
	struct fq_op op = { .kind = FQ_FAULT, .code = code };
	ghip_error rc = fake_stream(handle, &s);

	return rc ? rc : fake_push(s, &op);
}

/* The next @n write-values that run on @handle store nothing. */
ghip_error gpuar_fake_hip_drop_writes(ghip_stream handle, unsigned int n)
{
	struct ihipStream_t *s;
	ghip_error rc = fake_stream(handle, &s);

	if (!rc)
		fq_stream_drop_writes(&s->q, n);
	return rc;
}

ghip_error gpuar_fake_hip_capture(ghip_stream handle, int on)
{
	struct ihipStream_t *s;
	ghip_error rc = fake_stream(handle, &s);
	bool invalidated;

	if (rc)
		return rc;
	/* A capture in the global mode (as torch.cuda.graph begins on ROCm). */
	if (on)
		return fq_capture_begin(&s->q, FQ_CAPTURE_GLOBAL) ? GHIP_SUCCESS :
		       GHIP_ERROR_INVALID_VALUE;
	fq_capture_end(&s->q, &invalidated);
	return GHIP_SUCCESS;
}

int gpuar_fake_hip_registered_pages(void)
{
	return fm_registered_pages();
}

uint64_t gpuar_fake_hip_unsafe_unregisters(void)
{
	return fm_unsafe_unregisters();
}

/* Clear the devices' sticky errors. */
void gpuar_fake_hip_reset(void)
{
	for (int i = 0; i < FAKE_DEVICES; i++)
		fq_domain_clear(&fake_dev[i]);
}
