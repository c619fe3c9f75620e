// SPDX-License-Identifier: MIT
/*
 * TEST DOUBLE of the HIP runtime, built as
 * $(BUILD)/doubles/hip/libamdhip64.so.6 and loaded by the HIP backend's
 * tests through GPUAR_HIP_LIBRARY. It is not HIP and drives no GPU: it
 * implements only the entry points the backend resolves (hip_decls.h), on
 * top of fake_queue.c. Built a second time with
 * -DFAKE_HIP_WITHOUT_WRITE_VALUE as libamdhip64-nowrite.so, a runtime that
 * lacks hipStreamWriteValue64, for the missing-entry-point test.
 *
 * Model: devices 0 and 1, each a fault domain (HIP errors are sticky per
 * device); the current device is per thread (default 0); the null stream
 * and hipStreamPerThread name one default stream per device; registered
 * host pages get a device address that differs from the host address;
 * hipStreamWaitValue64 compares (*word & mask) >= value as plain numbers,
 * as HIP does. Double-only entry points are gpuar_fake_hip_*.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../../backends/hip/hip_decls.h"
#include "../common/fake_queue.h"

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_DEVICES 2
#define FAKE_PAGES_MAX 4096
#define FAKE_STREAMS_MAX 1024
#define FAKE_DEVICE_OFFSET 0x200000000000ull

struct ihipStream_t {
	struct fq_stream q;
	int device;
};

struct fake_page {
	uintptr_t host;
	size_t bytes;
};

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fq_domain fake_dev[FAKE_DEVICES];
static struct ihipStream_t *fake_default[FAKE_DEVICES];
static struct ihipStream_t *fake_streams[FAKE_STREAMS_MAX];
static struct fake_page fake_pages[FAKE_PAGES_MAX];
static bool fake_initialised;
static uint64_t fake_unsafe_unregisters;
static __thread int cur_device;

FAKE_EXPORT ghip_error gpuar_fake_hip_work(ghip_stream s, uint64_t ns);
FAKE_EXPORT ghip_error gpuar_fake_hip_fault(ghip_stream s, ghip_error code);
FAKE_EXPORT ghip_error gpuar_fake_hip_capture(ghip_stream s, int on);
FAKE_EXPORT int gpuar_fake_hip_registered_pages(void);
FAKE_EXPORT uint64_t gpuar_fake_hip_unsafe_unregisters(void);
FAKE_EXPORT void gpuar_fake_hip_reset(void);

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
FAKE_EXPORT ghip_error hipStreamGetDevice(ghip_stream s, int *device);

static ghip_error fake_stream(ghip_stream handle, struct ihipStream_t **out)
{
	int dev = cur_device;

	if (!fake_initialised)
		return GHIP_ERROR_NOT_INITIALIZED;
	if (handle && handle != GHIP_STREAM_PER_THREAD) {
		*out = handle;
		return GHIP_SUCCESS;
	}
	pthread_mutex_lock(&fake_lock);
	if (!fake_default[dev]) {
		struct ihipStream_t *s = calloc(1, sizeof(*s));

		if (!s || fq_stream_start(&s->q, &fake_dev[dev], dev)) {
			pthread_mutex_unlock(&fake_lock);
			free(s);
			return GHIP_ERROR_UNKNOWN;
		}
		s->device = dev;
		fake_default[dev] = s;
	}
	*out = fake_default[dev];
	pthread_mutex_unlock(&fake_lock);
	return GHIP_SUCCESS;
}

static uint64_t *fake_translate(void *dptr)
{
	uintptr_t host = (uintptr_t)dptr - (uintptr_t)FAKE_DEVICE_OFFSET;
	uint64_t *word = NULL;

	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < FAKE_PAGES_MAX && !word; i++) {
		struct fake_page *p = &fake_pages[i];

		if (p->host && host >= p->host && host + 8 <= p->host + p->bytes)
			word = (uint64_t *)host;
	}
	pthread_mutex_unlock(&fake_lock);
	return word;
}

static ghip_error fake_push(struct ihipStream_t *s, const struct fq_op *op)
{
	ghip_error sticky = fq_domain_error(s->q.domain);
	bool capturing;

	if (sticky)
		return sticky;
	pthread_mutex_lock(&s->q.lock);
	capturing = s->q.capturing;
	pthread_mutex_unlock(&s->q.lock);
	if (capturing && op->kind != FQ_FAULT)
		return GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return fq_stream_push(&s->q, op) ? GHIP_ERROR_UNKNOWN : GHIP_SUCCESS;
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
	case GHIP_ERROR_NO_DEVICE: return "hipErrorNoDevice";
	case GHIP_ERROR_INVALID_DEVICE: return "hipErrorInvalidDevice";
	case GHIP_ERROR_INVALID_HANDLE: return "hipErrorInvalidHandle";
	case GHIP_ERROR_NOT_READY: return "hipErrorNotReady";
	case GHIP_ERROR_ILLEGAL_ADDRESS: return "hipErrorIllegalAddress";
	case GHIP_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
		return "hipErrorHostMemoryAlreadyRegistered";
	case GHIP_ERROR_LAUNCH_FAILURE: return "hipErrorLaunchFailure";
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
	ghip_error rc = GHIP_ERROR_UNKNOWN;

	if (!fake_initialised)
		return GHIP_ERROR_NOT_INITIALIZED;
	if (!p || !bytes || (flags & ~0xfu))
		return GHIP_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < FAKE_PAGES_MAX; i++) {
		struct fake_page *pg = &fake_pages[i];

		if (pg->host && (uintptr_t)p < pg->host + pg->bytes &&
		    pg->host < (uintptr_t)p + bytes) {
			rc = GHIP_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
			break;
		}
	}
	for (int i = 0; rc == GHIP_ERROR_UNKNOWN && i < FAKE_PAGES_MAX; i++) {
		if (!fake_pages[i].host) {
			fake_pages[i] = (struct fake_page){ (uintptr_t)p, bytes };
			rc = GHIP_SUCCESS;
		}
	}
	pthread_mutex_unlock(&fake_lock);
	return rc;
}

ghip_error hipHostUnregister(void *p)
{
	ghip_error rc = GHIP_ERROR_INVALID_VALUE;
	size_t bytes = 0;

	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < FAKE_PAGES_MAX; i++) {
		if (fake_pages[i].host == (uintptr_t)p) {
			bytes = fake_pages[i].bytes;
			fake_pages[i] = (struct fake_page){ 0, 0 };
			rc = GHIP_SUCCESS;
			break;
		}
	}
	for (int i = 0; rc == GHIP_SUCCESS && i < FAKE_STREAMS_MAX; i++)
		if (fake_streams[i] && fq_stream_touches(&fake_streams[i]->q, p, bytes))
			fake_unsafe_unregisters++;
	for (int i = 0; rc == GHIP_SUCCESS && i < FAKE_DEVICES; i++)
		if (fake_default[i] && fq_stream_touches(&fake_default[i]->q, p, bytes))
			fake_unsafe_unregisters++;
	pthread_mutex_unlock(&fake_lock);
	return rc;
}

ghip_error hipHostGetDevicePointer(void **dptr, void *p, unsigned int flags)
{
	if (!dptr || !p || flags)
		return GHIP_ERROR_INVALID_VALUE;
	*dptr = (void *)((uintptr_t)p + (uintptr_t)FAKE_DEVICE_OFFSET);
	if (!fake_translate(*dptr)) {
		*dptr = NULL;
		return GHIP_ERROR_INVALID_VALUE;
	}
	return GHIP_SUCCESS;
}

ghip_error hipStreamCreateWithFlags(ghip_stream *out, unsigned int flags)
{
	struct ihipStream_t *s;
	int slot = -1;

	if (!fake_initialised)
		return GHIP_ERROR_NOT_INITIALIZED;
	if (!out || flags > GHIP_STREAM_NON_BLOCKING)
		return GHIP_ERROR_INVALID_VALUE;
	s = calloc(1, sizeof(*s));
	if (!s)
		return GHIP_ERROR_UNKNOWN;
	s->device = cur_device;
	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < FAKE_STREAMS_MAX && slot < 0; i++)
		if (!fake_streams[i])
			slot = i;
	if (slot >= 0)
		fake_streams[slot] = s;
	pthread_mutex_unlock(&fake_lock);
	if (slot < 0 || fq_stream_start(&s->q, &fake_dev[s->device], s->device)) {
		if (slot >= 0) {
			pthread_mutex_lock(&fake_lock);
			fake_streams[slot] = NULL;
			pthread_mutex_unlock(&fake_lock);
		}
		free(s);
		return GHIP_ERROR_UNKNOWN;
	}
	*out = s;
	return GHIP_SUCCESS;
}

ghip_error hipStreamDestroy(ghip_stream s)
{
	if (!s || s == GHIP_STREAM_PER_THREAD)
		return GHIP_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < FAKE_STREAMS_MAX; i++)
		if (fake_streams[i] == s)
			fake_streams[i] = NULL;
	pthread_mutex_unlock(&fake_lock);
	fq_stream_stop(&s->q);
	free(s);
	return GHIP_SUCCESS;
}

ghip_error hipStreamQuery(ghip_stream handle)
{
	struct ihipStream_t *s;
	ghip_error rc = fake_stream(handle, &s);

	if (rc)
		return rc;
	rc = fq_domain_error(s->q.domain);
	if (rc)
		return rc;
	return fq_stream_idle(&s->q) ? GHIP_SUCCESS : GHIP_ERROR_NOT_READY;
}

ghip_error hipStreamSynchronize(ghip_stream handle)
{
	struct ihipStream_t *s;
	ghip_error rc = fake_stream(handle, &s);

	return rc ? rc : fq_stream_sync(&s->q);
}

#ifndef FAKE_HIP_WITHOUT_WRITE_VALUE
FAKE_EXPORT ghip_error hipStreamWriteValue64(ghip_stream s, void *ptr,
					     uint64_t value, unsigned int flags);

ghip_error hipStreamWriteValue64(ghip_stream handle, void *ptr, uint64_t value,
				 unsigned int flags)
{
	struct ihipStream_t *s;
	struct fq_op op = { .kind = FQ_WRITE, .value = value };
	ghip_error rc = fake_stream(handle, &s);

	(void)flags;
	if (rc)
		return rc;
	if ((uintptr_t)ptr & 7)
		return GHIP_ERROR_INVALID_VALUE;
	op.word = fake_translate(ptr);
	if (!op.word)
		op = (struct fq_op){ .kind = FQ_FAULT,
				     .code = GHIP_ERROR_ILLEGAL_ADDRESS };
	return fake_push(s, &op);
}
#endif

ghip_error hipStreamWaitValue64(ghip_stream handle, void *ptr, uint64_t value,
				unsigned int flags, uint64_t mask)
{
	struct ihipStream_t *s;
	struct fq_op op = { .kind = FQ_WAIT_PLAIN, .value = value, .mask = mask };
	ghip_error rc = fake_stream(handle, &s);

	if (rc)
		return rc;
	/* Only hipStreamWaitValueGte is modelled. */
	if (flags != GHIP_STREAM_WAIT_VALUE_GTE || ((uintptr_t)ptr & 7))
		return GHIP_ERROR_INVALID_VALUE;
	op.word = fake_translate(ptr);
	if (!op.word)
		op = (struct fq_op){ .kind = FQ_FAULT,
				     .code = GHIP_ERROR_ILLEGAL_ADDRESS };
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
	pthread_mutex_lock(&s->q.lock);
	*st = s->q.capturing ? GHIP_STREAM_CAPTURE_STATUS_ACTIVE :
			       GHIP_STREAM_CAPTURE_STATUS_NONE;
	pthread_mutex_unlock(&s->q.lock);
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

ghip_error gpuar_fake_hip_capture(ghip_stream handle, int on)
{
	struct ihipStream_t *s;
	ghip_error rc = fake_stream(handle, &s);

	if (rc)
		return rc;
	pthread_mutex_lock(&s->q.lock);
	s->q.capturing = on != 0;
	pthread_mutex_unlock(&s->q.lock);
	return GHIP_SUCCESS;
}

int gpuar_fake_hip_registered_pages(void)
{
	int n = 0;

	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < FAKE_PAGES_MAX; i++)
		n += fake_pages[i].host != 0;
	pthread_mutex_unlock(&fake_lock);
	return n;
}

uint64_t gpuar_fake_hip_unsafe_unregisters(void)
{
	return __atomic_load_n(&fake_unsafe_unregisters, __ATOMIC_RELAXED);
}

/* Clear the devices' sticky errors. */
void gpuar_fake_hip_reset(void)
{
	for (int i = 0; i < FAKE_DEVICES; i++) {
		pthread_mutex_lock(&fake_dev[i].lock);
		fake_dev[i].sticky = 0;
		pthread_mutex_unlock(&fake_dev[i].lock);
	}
}
