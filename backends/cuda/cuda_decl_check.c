/* SPDX-License-Identifier: MIT */
/*
 * Build-time check of cuda_decls.h against the CUDA toolkit's <cuda.h>.
 * Compiled (never linked) by backends.mk only where the toolkit header
 * exists; a mismatch in a value, a size or an entry point's signature is a
 * compile error naming the declaration. Nothing here runs.
 */
#include <cuda.h>

#include "cuda_decls.h"

#define SAME_TYPE(a, b) __builtin_types_compatible_p(a, b)
#define CHECK_VALUE(mine, real) \
	_Static_assert((long long)(mine) == (long long)(real), #mine " != " #real)
#define CHECK_FN(name, real) \
	_Static_assert(SAME_TYPE(gcu_fn_##name, __typeof__(&real)), \
		       "signature of " #name " differs from <cuda.h>")

_Static_assert(CUDA_VERSION >= GCU_ABI_VERSION,
	       "the toolkit is older than the ABI cuda_decls.h mirrors");

_Static_assert(SAME_TYPE(gcu_result, CUresult), "CUresult");
_Static_assert(SAME_TYPE(gcu_device, CUdevice), "CUdevice");
_Static_assert(SAME_TYPE(gcu_deviceptr, CUdeviceptr), "CUdeviceptr");
_Static_assert(SAME_TYPE(gcu_u64, cuuint64_t), "cuuint64_t");
_Static_assert(SAME_TYPE(gcu_context, CUcontext), "CUcontext");
_Static_assert(SAME_TYPE(gcu_stream, CUstream), "CUstream");
_Static_assert(SAME_TYPE(gcu_module, CUmodule), "CUmodule");
_Static_assert(SAME_TYPE(gcu_function, CUfunction), "CUfunction");
_Static_assert(SAME_TYPE(gcu_event, CUevent), "CUevent");
_Static_assert(SAME_TYPE(unsigned int, CUdevice_attribute), "CUdevice_attribute");
_Static_assert(SAME_TYPE(unsigned int, CUstreamCaptureStatus), "CUstreamCaptureStatus");
_Static_assert(SAME_TYPE(unsigned int, CUdriverProcAddressQueryResult),
	       "CUdriverProcAddressQueryResult");

CHECK_VALUE(GCU_SUCCESS, CUDA_SUCCESS);
CHECK_VALUE(GCU_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE);
CHECK_VALUE(GCU_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
CHECK_VALUE(GCU_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED);
CHECK_VALUE(GCU_ERROR_DEINITIALIZED, CUDA_ERROR_DEINITIALIZED);
CHECK_VALUE(GCU_ERROR_STUB_LIBRARY, CUDA_ERROR_STUB_LIBRARY);
CHECK_VALUE(GCU_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE);
CHECK_VALUE(GCU_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE);
CHECK_VALUE(GCU_ERROR_ECC_UNCORRECTABLE, CUDA_ERROR_ECC_UNCORRECTABLE);
CHECK_VALUE(GCU_ERROR_NVLINK_UNCORRECTABLE, CUDA_ERROR_NVLINK_UNCORRECTABLE);
CHECK_VALUE(GCU_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_CONTEXT);
CHECK_VALUE(GCU_ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_IMAGE);
CHECK_VALUE(GCU_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_NO_BINARY_FOR_GPU);
CHECK_VALUE(GCU_ERROR_INVALID_PTX, CUDA_ERROR_INVALID_PTX);
CHECK_VALUE(GCU_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
CHECK_VALUE(GCU_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_HANDLE);
CHECK_VALUE(GCU_ERROR_ILLEGAL_STATE, CUDA_ERROR_ILLEGAL_STATE);
CHECK_VALUE(GCU_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND);
CHECK_VALUE(GCU_ERROR_NOT_READY, CUDA_ERROR_NOT_READY);
CHECK_VALUE(GCU_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS);
CHECK_VALUE(GCU_ERROR_LAUNCH_TIMEOUT, CUDA_ERROR_LAUNCH_TIMEOUT);
CHECK_VALUE(GCU_ERROR_CONTEXT_IS_DESTROYED, CUDA_ERROR_CONTEXT_IS_DESTROYED);
CHECK_VALUE(GCU_ERROR_ASSERT, CUDA_ERROR_ASSERT);
CHECK_VALUE(GCU_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
	    CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
CHECK_VALUE(GCU_ERROR_HOST_MEMORY_NOT_REGISTERED,
	    CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
CHECK_VALUE(GCU_ERROR_HARDWARE_STACK_ERROR, CUDA_ERROR_HARDWARE_STACK_ERROR);
CHECK_VALUE(GCU_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_ILLEGAL_INSTRUCTION);
CHECK_VALUE(GCU_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_MISALIGNED_ADDRESS);
CHECK_VALUE(GCU_ERROR_INVALID_ADDRESS_SPACE, CUDA_ERROR_INVALID_ADDRESS_SPACE);
CHECK_VALUE(GCU_ERROR_INVALID_PC, CUDA_ERROR_INVALID_PC);
CHECK_VALUE(GCU_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_FAILED);
CHECK_VALUE(GCU_ERROR_NOT_PERMITTED, CUDA_ERROR_NOT_PERMITTED);
CHECK_VALUE(GCU_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED);
CHECK_VALUE(GCU_ERROR_MPS_CLIENT_TERMINATED, CUDA_ERROR_MPS_CLIENT_TERMINATED);
CHECK_VALUE(GCU_ERROR_EXTERNAL_DEVICE, CUDA_ERROR_EXTERNAL_DEVICE);
CHECK_VALUE(GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED,
	    CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
CHECK_VALUE(GCU_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN);
CHECK_VALUE(GCU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
	    CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS);
#ifndef __clang__	/* clang does not fold pointer casts in _Static_assert */
CHECK_VALUE(GCU_STREAM_LEGACY, CU_STREAM_LEGACY);
CHECK_VALUE(GCU_STREAM_PER_THREAD, CU_STREAM_PER_THREAD);
#endif
CHECK_VALUE(GCU_STREAM_DEFAULT, CU_STREAM_DEFAULT);
CHECK_VALUE(GCU_STREAM_NON_BLOCKING, CU_STREAM_NON_BLOCKING);
CHECK_VALUE(GCU_MEMHOSTREGISTER_PORTABLE, CU_MEMHOSTREGISTER_PORTABLE);
CHECK_VALUE(GCU_MEMHOSTREGISTER_DEVICEMAP, CU_MEMHOSTREGISTER_DEVICEMAP);
CHECK_VALUE(GCU_STREAM_WAIT_VALUE_GEQ, CU_STREAM_WAIT_VALUE_GEQ);
CHECK_VALUE(GCU_STREAM_WRITE_VALUE_DEFAULT, CU_STREAM_WRITE_VALUE_DEFAULT);
CHECK_VALUE(GCU_STREAM_CAPTURE_STATUS_NONE, CU_STREAM_CAPTURE_STATUS_NONE);
CHECK_VALUE(GCU_STREAM_CAPTURE_STATUS_ACTIVE, CU_STREAM_CAPTURE_STATUS_ACTIVE);
CHECK_VALUE(GCU_STREAM_CAPTURE_STATUS_INVALIDATED,
	    CU_STREAM_CAPTURE_STATUS_INVALIDATED);
CHECK_VALUE(GCU_CTX_SCHED_BLOCKING_SYNC, CU_CTX_SCHED_BLOCKING_SYNC);
CHECK_VALUE(GCU_CTX_SCHED_MASK, CU_CTX_SCHED_MASK);
CHECK_VALUE(GCU_EVENT_BLOCKING_SYNC, CU_EVENT_BLOCKING_SYNC);
CHECK_VALUE(GCU_EVENT_DISABLE_TIMING, CU_EVENT_DISABLE_TIMING);
CHECK_VALUE(GCU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_DEFAULT);
CHECK_VALUE(GCU_GET_PROC_ADDRESS_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS);
CHECK_VALUE(GCU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
	    CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
CHECK_VALUE(GCU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
	    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);

/* cuda.h maps the plain names onto the versioned ones (cuMemHostRegister
 * -> cuMemHostRegister_v2, ...), so naming the _v2 symbols checks the
 * entry points the loader resolves for GCU_ABI_VERSION. */
CHECK_FN(cuGetProcAddress_v2, cuGetProcAddress_v2);
CHECK_FN(cuInit, cuInit);
CHECK_FN(cuDriverGetVersion, cuDriverGetVersion);
CHECK_FN(cuGetErrorName, cuGetErrorName);
CHECK_FN(cuDeviceGet, cuDeviceGet);
CHECK_FN(cuDeviceGetCount, cuDeviceGetCount);
CHECK_FN(cuDeviceGetAttribute, cuDeviceGetAttribute);
CHECK_FN(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain);
CHECK_FN(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease_v2);
CHECK_FN(cuCtxPushCurrent_v2, cuCtxPushCurrent_v2);
CHECK_FN(cuCtxPopCurrent_v2, cuCtxPopCurrent_v2);
CHECK_FN(cuCtxGetCurrent, cuCtxGetCurrent);
CHECK_FN(cuMemHostRegister_v2, cuMemHostRegister_v2);
CHECK_FN(cuMemHostUnregister, cuMemHostUnregister);
CHECK_FN(cuMemHostGetDevicePointer_v2, cuMemHostGetDevicePointer_v2);
CHECK_FN(cuStreamCreate, cuStreamCreate);
CHECK_FN(cuStreamDestroy_v2, cuStreamDestroy_v2);
CHECK_FN(cuStreamGetCtx, cuStreamGetCtx);
CHECK_FN(cuStreamIsCapturing, cuStreamIsCapturing);
CHECK_FN(cuStreamWriteValue64_v2, cuStreamWriteValue64_v2);
CHECK_FN(cuStreamWaitValue64_v2, cuStreamWaitValue64_v2);
CHECK_FN(cuStreamQuery, cuStreamQuery);
CHECK_FN(cuStreamSynchronize, cuStreamSynchronize);
CHECK_FN(cuDeviceGetName, cuDeviceGetName);
CHECK_FN(cuDevicePrimaryCtxSetFlags_v2, cuDevicePrimaryCtxSetFlags_v2);
CHECK_FN(cuModuleLoadData, cuModuleLoadData);
CHECK_FN(cuModuleUnload, cuModuleUnload);
CHECK_FN(cuModuleGetFunction, cuModuleGetFunction);
CHECK_FN(cuLaunchKernel, cuLaunchKernel);
CHECK_FN(cuEventCreate, cuEventCreate);
CHECK_FN(cuEventRecord, cuEventRecord);
CHECK_FN(cuEventSynchronize, cuEventSynchronize);
CHECK_FN(cuEventDestroy_v2, cuEventDestroy_v2);
CHECK_FN(cuEventQuery, cuEventQuery);
CHECK_FN(cuLaunchHostFunc, cuLaunchHostFunc);
_Static_assert(SAME_TYPE(gcu_host_fn, CUhostFn), "CUhostFn");

CHECK_VALUE(GCU_ERROR_STREAM_CAPTURE_INVALIDATED,
	    CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
CHECK_VALUE(GCU_ERROR_STREAM_CAPTURE_IMPLICIT, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
CHECK_VALUE(GCU_ERROR_STREAM_CAPTURE_WRONG_THREAD,
	    CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
CHECK_VALUE(GCU_STREAM_MEM_OP_WAIT_VALUE_64, CU_STREAM_MEM_OP_WAIT_VALUE_64);
CHECK_VALUE(GCU_STREAM_MEM_OP_WRITE_VALUE_64, CU_STREAM_MEM_OP_WRITE_VALUE_64);
CHECK_VALUE(GCU_STREAM_MEM_OP_BARRIER, CU_STREAM_MEM_OP_BARRIER);
CHECK_VALUE(GCU_STREAM_MEMORY_BARRIER_TYPE_SYS, CU_STREAM_MEMORY_BARRIER_TYPE_SYS);
CHECK_VALUE(GCU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_GLOBAL);
CHECK_VALUE(GCU_STREAM_CAPTURE_MODE_THREAD_LOCAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
CHECK_VALUE(GCU_STREAM_CAPTURE_MODE_RELAXED, CU_STREAM_CAPTURE_MODE_RELAXED);
_Static_assert(SAME_TYPE(gcu_graph, CUgraph), "CUgraph");
_Static_assert(SAME_TYPE(gcu_graph_node, CUgraphNode), "CUgraphNode");
_Static_assert(SAME_TYPE(gcu_graph_exec, CUgraphExec), "CUgraphExec");

/* The batch-op union and node parameters are the backend's own types (so
 * the function-pointer types take void *): their layout must match. */
#define CHECK_AT(mine, real, field_m, field_r)                                \
	_Static_assert(__builtin_offsetof(mine, field_m) ==                    \
		       __builtin_offsetof(real, field_r), #field_m)
_Static_assert(sizeof(gcu_mem_op) == sizeof(CUstreamBatchMemOpParams),
	       "CUstreamBatchMemOpParams size");
CHECK_AT(gcu_mem_op, CUstreamBatchMemOpParams, write_value.address,
	 writeValue.address);
CHECK_AT(gcu_mem_op, CUstreamBatchMemOpParams, write_value.value64,
	 writeValue.value64);
CHECK_AT(gcu_mem_op, CUstreamBatchMemOpParams, write_value.flags,
	 writeValue.flags);
CHECK_AT(gcu_mem_op, CUstreamBatchMemOpParams, write_value.address,
	 waitValue.address);
CHECK_AT(gcu_mem_op, CUstreamBatchMemOpParams, write_value.value64,
	 waitValue.value64);
CHECK_AT(gcu_mem_op, CUstreamBatchMemOpParams, write_value.flags,
	 waitValue.flags);
CHECK_AT(gcu_mem_op, CUstreamBatchMemOpParams, memory_barrier.flags,
	 memoryBarrier.flags);
_Static_assert(sizeof(gcu_mem_op_node_params) ==
	       sizeof(CUDA_BATCH_MEM_OP_NODE_PARAMS), "node params size");
CHECK_AT(gcu_mem_op_node_params, CUDA_BATCH_MEM_OP_NODE_PARAMS, count, count);
CHECK_AT(gcu_mem_op_node_params, CUDA_BATCH_MEM_OP_NODE_PARAMS, ops, paramArray);
CHECK_AT(gcu_mem_op_node_params, CUDA_BATCH_MEM_OP_NODE_PARAMS, flags, flags);
CHECK_FN(cuStreamWaitEvent, cuStreamWaitEvent);
CHECK_FN(cuStreamGetId, cuStreamGetId);
CHECK_FN(cuThreadExchangeStreamCaptureMode, cuThreadExchangeStreamCaptureMode);
CHECK_FN(cuGraphLaunch, cuGraphLaunch);
