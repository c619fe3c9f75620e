/* SPDX-License-Identifier: MIT */
/*
 * The few HIP runtime types, constants and entry-point signatures the HIP
 * backend uses, declared here so the backend builds without ROCm. Names
 * carry a ghip_/GHIP_ prefix so this header can share a translation unit
 * with <hip/hip_runtime_api.h>; hip_decl_check.c does that and asserts
 * every declaration below against it (Debian's libamdhip64-dev, HIP 5.2).
 *
 * Two things differ from CUDA and shape the backend:
 *  - hipStreamWaitValue64 with hipStreamWaitValueGte compares
 *    (*ptr & mask) >= value as plain unsigned integers, not in CUDA's
 *    wrapping order: a counter that wraps past 2^64 stalls such a wait.
 *  - hipDeviceAttribute_t values are renumbered between HIP releases in
 *    the CUDA-compatible range; the backend asks one attribute only, from
 *    the AMD-specific range, whose value (10013) is the same in HIP 5.2's
 *    header (checked by hip_decl_check.c) and ROCm 6 and 7's.
 */
#ifndef GPUAR_BACKENDS_HIP_DECLS_H
#define GPUAR_BACKENDS_HIP_DECLS_H

#include <stddef.h>
#include <stdint.h>

/* hipError_t is an enum with no negative values: unsigned int on Linux. */
typedef unsigned int ghip_error;
typedef struct ihipStream_t *ghip_stream;
typedef struct ihipEvent_t *ghip_event;

enum {
	GHIP_SUCCESS = 0,
	GHIP_ERROR_INVALID_VALUE = 1,
	GHIP_ERROR_NOT_INITIALIZED = 3,
	GHIP_ERROR_DEINITIALIZED = 4,
	GHIP_ERROR_NO_DEVICE = 100,
	GHIP_ERROR_INVALID_DEVICE = 101,
	GHIP_ERROR_ECC_NOT_CORRECTABLE = 214,
	GHIP_ERROR_INVALID_HANDLE = 400,
	GHIP_ERROR_NOT_FOUND = 500,
	GHIP_ERROR_NOT_READY = 600,
	GHIP_ERROR_ILLEGAL_ADDRESS = 700,
	GHIP_ERROR_LAUNCH_TIMEOUT = 702,
	GHIP_ERROR_CONTEXT_IS_DESTROYED = 709,
	GHIP_ERROR_ASSERT = 710,
	GHIP_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
	GHIP_ERROR_LAUNCH_FAILURE = 719,
	GHIP_ERROR_NOT_SUPPORTED = 801,
	/* 900-908: what a graph capture forbids or breaks (as CUDA's). */
	GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
	GHIP_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
	GHIP_ERROR_UNKNOWN = 999,
};

/* hipDeviceAttributeCanUseStreamWaitValue: hipStreamWaitValue* works on
 * the device ("'1' if Device supports hipStreamWaitValue32() and
 * hipStreamWaitValue64()", hip_runtime_api.h). */
#define GHIP_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE 10013

/*
 * HIP_VERSION as hipRuntimeGetVersion reports it: major * 10000000 +
 * minor * 100000 + patch. The backend is written to HIP 5.0 to 8.x
 * (libamdhip64.so.5 to .so.8).
 */
#define GHIP_VERSION_MIN 50000000
#define GHIP_VERSION_END 90000000


/* hipStreamPerThread. */
#define GHIP_STREAM_PER_THREAD ((ghip_stream)2)
/*
 * gpuar's own handle for the legacy null stream, GPUAR_HIP_STREAM_LEGACY
 * in <gpuar/hip.h> (HIP 5.2's header has none). Never passed to the
 * runtime: the backend calls it with the null stream, 0, which its
 * non-_spt entry points (the ones hip_loader.c resolves) take as the
 * legacy null stream of the current device.
 */
#define GHIP_STREAM_LEGACY ((ghip_stream)1)

enum { GHIP_STREAM_DEFAULT = 0x0, GHIP_STREAM_NON_BLOCKING = 0x1 };

/*
 * hipHostRegister flags. Without hipExtHostRegisterCoarseGrained the
 * registration is fine-grained, i.e. coherent: the host sees a device
 * store without any cache flush, which the acquire read of a line needs.
 */
#define GHIP_HOST_REGISTER_PORTABLE 0x1
#define GHIP_HOST_REGISTER_MAPPED 0x2
#define GHIP_EXT_HOST_REGISTER_COARSE_GRAINED 0x8

/* hipStreamWaitValueGte: plain (*ptr & mask) >= value. */
#define GHIP_STREAM_WAIT_VALUE_GTE 0x0
#define GHIP_WAIT_MASK_ALL 0xFFFFFFFFFFFFFFFFull

/* hipStreamCaptureStatus */
enum {
	GHIP_STREAM_CAPTURE_STATUS_NONE = 0,
	GHIP_STREAM_CAPTURE_STATUS_ACTIVE = 1,
	GHIP_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
};

typedef ghip_error (*ghip_fn_hipInit)(unsigned int flags);
typedef ghip_error (*ghip_fn_hipDriverGetVersion)(int *version);
typedef const char *(*ghip_fn_hipGetErrorName)(ghip_error error);
typedef ghip_error (*ghip_fn_hipGetDeviceCount)(int *count);
typedef ghip_error (*ghip_fn_hipGetDevice)(int *device);
typedef ghip_error (*ghip_fn_hipSetDevice)(int device);
typedef ghip_error (*ghip_fn_hipHostRegister)(void *p, size_t bytes,
					      unsigned int flags);
typedef ghip_error (*ghip_fn_hipHostUnregister)(void *p);
typedef ghip_error (*ghip_fn_hipHostGetDevicePointer)(void **dptr, void *p,
						      unsigned int flags);
typedef ghip_error (*ghip_fn_hipStreamCreateWithFlags)(ghip_stream *stream,
						       unsigned int flags);
typedef ghip_error (*ghip_fn_hipStreamDestroy)(ghip_stream stream);
typedef ghip_error (*ghip_fn_hipStreamQuery)(ghip_stream stream);
typedef ghip_error (*ghip_fn_hipStreamSynchronize)(ghip_stream stream);
typedef ghip_error (*ghip_fn_hipStreamWriteValue64)(ghip_stream stream,
						    void *ptr, uint64_t value,
						    unsigned int flags);
typedef ghip_error (*ghip_fn_hipStreamWaitValue64)(ghip_stream stream,
						   void *ptr, uint64_t value,
						   unsigned int flags,
						   uint64_t mask);
typedef ghip_error (*ghip_fn_hipStreamIsCapturing)(ghip_stream stream,
						   unsigned int *status);
typedef ghip_error (*ghip_fn_hipRuntimeGetVersion)(int *version);
typedef ghip_error (*ghip_fn_hipDeviceGetAttribute)(int *value,
						    unsigned int attribute,
						    int device);
typedef ghip_error (*ghip_fn_hipStreamWaitEvent)(ghip_stream stream,
						 ghip_event event,
						 unsigned int flags);
/* The calling thread's capture mode (hipStreamCaptureMode), swapped. */
typedef ghip_error (*ghip_fn_hipThreadExchangeStreamCaptureMode)(unsigned int *mode);
/* Optional (HIP 6.2 and later): an id per stream, resolving
 * hipStreamPerThread to the calling thread's stream. */
typedef ghip_error (*ghip_fn_hipStreamGetId)(ghip_stream stream,
					     unsigned long long *id);
/* HIP 6 and later only; without it a foreign stream cannot be detected. */
typedef ghip_error (*ghip_fn_hipStreamGetDevice)(ghip_stream stream,
						 int *device);

#endif /* GPUAR_BACKENDS_HIP_DECLS_H */
