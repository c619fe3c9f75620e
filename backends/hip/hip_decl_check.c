/* SPDX-License-Identifier: MIT */
/*
 * Build-time check of hip_decls.h against <hip/hip_runtime_api.h>
 * (Debian's libamdhip64-dev). Compiled, never linked, by backends.mk only
 * where that header exists; a mismatch is a compile error naming it.
 * hipStreamGetDevice is not in HIP 5.2 and is checked only where declared.
 */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include "hip_decls.h"

#define SAME_TYPE(a, b) __builtin_types_compatible_p(a, b)
#define CHECK_VALUE(mine, real) \
	_Static_assert((long long)(mine) == (long long)(real), #mine " != " #real)
#define CHECK_FN(name) \
	_Static_assert(SAME_TYPE(ghip_fn_##name, __typeof__(&name)), \
		       "signature of " #name " differs from the HIP headers")

_Static_assert(SAME_TYPE(ghip_error, hipError_t), "hipError_t");
_Static_assert(SAME_TYPE(ghip_stream, hipStream_t), "hipStream_t");
_Static_assert(SAME_TYPE(unsigned int, hipStreamCaptureStatus),
	       "hipStreamCaptureStatus");

CHECK_VALUE(GHIP_SUCCESS, hipSuccess);
CHECK_VALUE(GHIP_ERROR_INVALID_VALUE, hipErrorInvalidValue);
CHECK_VALUE(GHIP_ERROR_NOT_INITIALIZED, hipErrorNotInitialized);
CHECK_VALUE(GHIP_ERROR_DEINITIALIZED, hipErrorDeinitialized);
CHECK_VALUE(GHIP_ERROR_NO_DEVICE, hipErrorNoDevice);
CHECK_VALUE(GHIP_ERROR_INVALID_DEVICE, hipErrorInvalidDevice);
CHECK_VALUE(GHIP_ERROR_ECC_NOT_CORRECTABLE, hipErrorECCNotCorrectable);
CHECK_VALUE(GHIP_ERROR_INVALID_HANDLE, hipErrorInvalidHandle);
CHECK_VALUE(GHIP_ERROR_NOT_FOUND, hipErrorNotFound);
CHECK_VALUE(GHIP_ERROR_NOT_READY, hipErrorNotReady);
CHECK_VALUE(GHIP_ERROR_ILLEGAL_ADDRESS, hipErrorIllegalAddress);
CHECK_VALUE(GHIP_ERROR_LAUNCH_TIMEOUT, hipErrorLaunchTimeOut);
CHECK_VALUE(GHIP_ERROR_CONTEXT_IS_DESTROYED, hipErrorContextIsDestroyed);
CHECK_VALUE(GHIP_ERROR_ASSERT, hipErrorAssert);
CHECK_VALUE(GHIP_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
	    hipErrorHostMemoryAlreadyRegistered);
CHECK_VALUE(GHIP_ERROR_LAUNCH_FAILURE, hipErrorLaunchFailure);
CHECK_VALUE(GHIP_ERROR_NOT_SUPPORTED, hipErrorNotSupported);
CHECK_VALUE(GHIP_ERROR_STREAM_CAPTURE_UNSUPPORTED,
	    hipErrorStreamCaptureUnsupported);
CHECK_VALUE(GHIP_ERROR_UNKNOWN, hipErrorUnknown);
#ifndef __clang__	/* clang does not fold pointer casts in _Static_assert */
CHECK_VALUE(GHIP_STREAM_PER_THREAD, hipStreamPerThread);
#endif
CHECK_VALUE(GHIP_STREAM_DEFAULT, hipStreamDefault);
CHECK_VALUE(GHIP_STREAM_NON_BLOCKING, hipStreamNonBlocking);
CHECK_VALUE(GHIP_HOST_REGISTER_PORTABLE, hipHostRegisterPortable);
CHECK_VALUE(GHIP_HOST_REGISTER_MAPPED, hipHostRegisterMapped);
CHECK_VALUE(GHIP_EXT_HOST_REGISTER_COARSE_GRAINED,
	    hipExtHostRegisterCoarseGrained);
CHECK_VALUE(GHIP_STREAM_WAIT_VALUE_GTE, hipStreamWaitValueGte);
CHECK_VALUE(GHIP_STREAM_CAPTURE_STATUS_NONE, hipStreamCaptureStatusNone);
CHECK_VALUE(GHIP_STREAM_CAPTURE_STATUS_ACTIVE, hipStreamCaptureStatusActive);
CHECK_VALUE(GHIP_STREAM_CAPTURE_STATUS_INVALIDATED,
	    hipStreamCaptureStatusInvalidated);

CHECK_FN(hipInit);
CHECK_FN(hipDriverGetVersion);
CHECK_FN(hipGetErrorName);
CHECK_FN(hipGetDeviceCount);
CHECK_FN(hipGetDevice);
CHECK_FN(hipSetDevice);
CHECK_FN(hipHostRegister);
CHECK_FN(hipHostUnregister);
CHECK_FN(hipHostGetDevicePointer);
CHECK_FN(hipStreamCreateWithFlags);
CHECK_FN(hipStreamDestroy);
CHECK_FN(hipStreamQuery);
CHECK_FN(hipStreamSynchronize);
CHECK_FN(hipStreamWriteValue64);
CHECK_FN(hipStreamWaitValue64);
CHECK_FN(hipStreamIsCapturing);
CHECK_FN(hipRuntimeGetVersion);
CHECK_FN(hipStreamWaitEvent);
CHECK_FN(hipDeviceGetAttribute);
CHECK_FN(hipThreadExchangeStreamCaptureMode);
CHECK_VALUE(GHIP_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE,
	    hipDeviceAttributeCanUseStreamWaitValue);
CHECK_VALUE(GHIP_ERROR_STREAM_CAPTURE_WRONG_THREAD,
	    hipErrorStreamCaptureWrongThread);
_Static_assert(SAME_TYPE(ghip_event, hipEvent_t), "hipEvent_t");
