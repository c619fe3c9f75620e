/* SPDX-License-Identifier: MIT */
/*
 * The few CUDA driver API types, constants and entry-point signatures the
 * CUDA backend uses, declared here so the backend builds without the CUDA
 * toolkit. Names carry a gcu_/GCU_ prefix so this header can share a
 * translation unit with the real <cuda.h>: cuda_decl_check.c does exactly
 * that and asserts that every declaration below matches the toolkit's
 * (values, sizes and function-pointer types).
 *
 * The signatures are those of the CUDA 12.0 ABI, the version the loader
 * asks cuGetProcAddress_v2 for (GCU_ABI_VERSION). The opaque handle types
 * reuse the toolkit's incomplete struct tags (struct CUctx_st, ...), which
 * is what makes the function-pointer types compatible with the real ones.
 */
#ifndef GPUAR_BACKENDS_CUDA_DECLS_H
#define GPUAR_BACKENDS_CUDA_DECLS_H

#include <stddef.h>
#include <stdint.h>

/* The driver API version whose entry-point ABI the backend is written to. */
#define GCU_ABI_VERSION 12000

/* CUresult is an enum with no negative values: unsigned int on Linux. */
typedef unsigned int gcu_result;
typedef int gcu_device;
typedef unsigned long long gcu_deviceptr;
typedef uint64_t gcu_u64;
typedef struct CUctx_st *gcu_context;
typedef struct CUstream_st *gcu_stream;
typedef struct CUmod_st *gcu_module;
typedef struct CUfunc_st *gcu_function;
typedef struct CUevent_st *gcu_event;
typedef struct CUgraph_st *gcu_graph;
typedef struct CUgraphNode_st *gcu_graph_node;
typedef struct CUgraphExec_st *gcu_graph_exec;

/* CUresult values the backend branches on or names. */
enum {
	GCU_SUCCESS = 0,
	GCU_ERROR_INVALID_VALUE = 1,
	GCU_ERROR_OUT_OF_MEMORY = 2,
	GCU_ERROR_NOT_INITIALIZED = 3,
	GCU_ERROR_DEINITIALIZED = 4,
	GCU_ERROR_STUB_LIBRARY = 34,
	GCU_ERROR_NO_DEVICE = 100,
	GCU_ERROR_INVALID_DEVICE = 101,
	GCU_ERROR_ECC_UNCORRECTABLE = 214,
	GCU_ERROR_NVLINK_UNCORRECTABLE = 220,
	GCU_ERROR_INVALID_CONTEXT = 201,
	GCU_ERROR_INVALID_IMAGE = 200,
	GCU_ERROR_NO_BINARY_FOR_GPU = 209,
	GCU_ERROR_INVALID_PTX = 218,
	GCU_ERROR_UNSUPPORTED_PTX_VERSION = 222,
	GCU_ERROR_INVALID_HANDLE = 400,
	GCU_ERROR_ILLEGAL_STATE = 401,
	GCU_ERROR_NOT_FOUND = 500,
	GCU_ERROR_NOT_READY = 600,
	GCU_ERROR_ILLEGAL_ADDRESS = 700,
	GCU_ERROR_LAUNCH_TIMEOUT = 702,
	GCU_ERROR_CONTEXT_IS_DESTROYED = 709,
	GCU_ERROR_ASSERT = 710,
	GCU_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
	GCU_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
	GCU_ERROR_HARDWARE_STACK_ERROR = 714,
	GCU_ERROR_ILLEGAL_INSTRUCTION = 715,
	GCU_ERROR_MISALIGNED_ADDRESS = 716,
	GCU_ERROR_INVALID_ADDRESS_SPACE = 717,
	GCU_ERROR_INVALID_PC = 718,
	GCU_ERROR_LAUNCH_FAILED = 719,
	/* What a host function's own CUDA call may get (cuLaunchHostFunc). */
	GCU_ERROR_NOT_PERMITTED = 800,
	GCU_ERROR_NOT_SUPPORTED = 801,
	GCU_ERROR_MPS_CLIENT_TERMINATED = 810,
	/* 900-908: what a graph capture forbids or breaks. */
	GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
	GCU_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
	GCU_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
	GCU_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
	GCU_ERROR_EXTERNAL_DEVICE = 911,
	GCU_ERROR_UNKNOWN = 999,
};

/* Each CUresult above with the name cuGetErrorName gives it (for the
 * backend's own table, where the driver cannot name a status, and the
 * test double's cuGetErrorName). */
#define GCU_STATUS_NAMES(X) \
	X(GCU_SUCCESS, "CUDA_SUCCESS") \
	X(GCU_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE") \
	X(GCU_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY") \
	X(GCU_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED") \
	X(GCU_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED") \
	X(GCU_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY") \
	X(GCU_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE") \
	X(GCU_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE") \
	X(GCU_ERROR_ECC_UNCORRECTABLE, "CUDA_ERROR_ECC_UNCORRECTABLE") \
	X(GCU_ERROR_NVLINK_UNCORRECTABLE, "CUDA_ERROR_NVLINK_UNCORRECTABLE") \
	X(GCU_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT") \
	X(GCU_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE") \
	X(GCU_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU") \
	X(GCU_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX") \
	X(GCU_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION") \
	X(GCU_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE") \
	X(GCU_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE") \
	X(GCU_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND") \
	X(GCU_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY") \
	X(GCU_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS") \
	X(GCU_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT") \
	X(GCU_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED") \
	X(GCU_ERROR_ASSERT, "CUDA_ERROR_ASSERT") \
	X(GCU_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED") \
	X(GCU_ERROR_HOST_MEMORY_NOT_REGISTERED, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED") \
	X(GCU_ERROR_HARDWARE_STACK_ERROR, "CUDA_ERROR_HARDWARE_STACK_ERROR") \
	X(GCU_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION") \
	X(GCU_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS") \
	X(GCU_ERROR_INVALID_ADDRESS_SPACE, "CUDA_ERROR_INVALID_ADDRESS_SPACE") \
	X(GCU_ERROR_INVALID_PC, "CUDA_ERROR_INVALID_PC") \
	X(GCU_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED") \
	X(GCU_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED") \
	X(GCU_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED") \
	X(GCU_ERROR_MPS_CLIENT_TERMINATED, "CUDA_ERROR_MPS_CLIENT_TERMINATED") \
	X(GCU_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED") \
	X(GCU_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED") \
	X(GCU_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT") \
	X(GCU_ERROR_STREAM_CAPTURE_WRONG_THREAD, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD") \
	X(GCU_ERROR_EXTERNAL_DEVICE, "CUDA_ERROR_EXTERNAL_DEVICE") \
	X(GCU_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN")

/* CUdevice_attribute */
enum { GCU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS = 122 };

/* Special stream handles (CU_STREAM_LEGACY, CU_STREAM_PER_THREAD). */
#define GCU_STREAM_LEGACY ((gcu_stream)0x1)
#define GCU_STREAM_PER_THREAD ((gcu_stream)0x2)

/* cuStreamCreate flags */
enum { GCU_STREAM_DEFAULT = 0x0, GCU_STREAM_NON_BLOCKING = 0x1 };

/* cuMemHostRegister flags */
#define GCU_MEMHOSTREGISTER_PORTABLE 0x01
#define GCU_MEMHOSTREGISTER_DEVICEMAP 0x02

/* CUstreamWaitValue_flags: GEQ compares in wrapping order,
 * (int64_t)(*addr - value) >= 0, the same rule as gpuar_reached(). */
enum { GCU_STREAM_WAIT_VALUE_GEQ = 0x0 };
/* CUstreamWriteValue_flags. The v2 API supports only the default:
 * CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER "is not supported in the v2
 * API", and v2 promises no fence of its own (see gcu_mem_op). */
enum { GCU_STREAM_WRITE_VALUE_DEFAULT = 0x0 };

/* CUstreamBatchMemOpType and CUstreamMemoryBarrier_flags */
enum {
	GCU_STREAM_MEM_OP_WAIT_VALUE_64 = 4,
	GCU_STREAM_MEM_OP_WRITE_VALUE_64 = 5,
	GCU_STREAM_MEM_OP_BARRIER = 6,
};
enum { GCU_STREAM_MEMORY_BARRIER_TYPE_SYS = 0x0 };

/*
 * CUstreamBatchMemOpParams (48 bytes; cuda_decl_check.c asserts the
 * layout). The backend's store is a batch of two: a system-scope
 * CU_STREAM_MEM_OP_BARRIER ("only supported in the _v2 API"), then the
 * 64-bit write, so the stream's earlier writes are visible before the word
 * is (the v1 write's implicit fence is not documented for v2).
 */
typedef union {
	unsigned int operation;
	struct {
		unsigned int operation;
		gcu_deviceptr address;
		gcu_u64 value64;
		unsigned int flags;
		gcu_deviceptr alias;
	} write_value;		/* also the layout of waitValue */
	struct {
		unsigned int operation;
		unsigned int flags;
	} memory_barrier;
	gcu_u64 pad[6];
} gcu_mem_op;

/* CUDA_BATCH_MEM_OP_NODE_PARAMS (v1: cuGraphAddBatchMemOpNode) */
typedef struct {
	gcu_context ctx;
	unsigned int count;
	gcu_mem_op *ops;
	unsigned int flags;
} gcu_mem_op_node_params;

/* CUstreamCaptureMode */
enum {
	GCU_STREAM_CAPTURE_MODE_GLOBAL = 0,
	GCU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
	GCU_STREAM_CAPTURE_MODE_RELAXED = 2,
};

/* CUstreamCaptureStatus */
enum {
	GCU_STREAM_CAPTURE_STATUS_NONE = 0,
	GCU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
	GCU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
};

/* CUdriverProcAddress_flags and CUdriverProcAddressQueryResult */
enum { GCU_GET_PROC_ADDRESS_DEFAULT = 0 };
enum {
	GCU_GET_PROC_ADDRESS_SUCCESS = 0,
	GCU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
	GCU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
};

/* CUctx_flags: the scheduling policy of a thread waiting in a sync call. */
enum { GCU_CTX_SCHED_BLOCKING_SYNC = 0x04, GCU_CTX_SCHED_MASK = 0x07 };

/* CUevent_flags */
enum { GCU_EVENT_BLOCKING_SYNC = 0x1, GCU_EVENT_DISABLE_TIMING = 0x2 };

/* Entry points, as function-pointer types (CUDAAPI is empty on Linux). */
typedef gcu_result (*gcu_fn_cuGetProcAddress_v2)(const char *symbol,
						  void **pfn, int version,
						  gcu_u64 flags,
						  unsigned int *status);
typedef gcu_result (*gcu_fn_cuInit)(unsigned int flags);
typedef gcu_result (*gcu_fn_cuDriverGetVersion)(int *version);
typedef gcu_result (*gcu_fn_cuGetErrorName)(gcu_result error,
					     const char **name);
typedef gcu_result (*gcu_fn_cuDeviceGet)(gcu_device *device, int ordinal);
typedef gcu_result (*gcu_fn_cuDeviceGetCount)(int *count);
typedef gcu_result (*gcu_fn_cuDeviceGetAttribute)(int *value,
						   unsigned int attribute,
						   gcu_device device);
typedef gcu_result (*gcu_fn_cuDevicePrimaryCtxRetain)(gcu_context *ctx,
						       gcu_device device);
typedef gcu_result (*gcu_fn_cuDevicePrimaryCtxRelease_v2)(gcu_device device);
typedef gcu_result (*gcu_fn_cuCtxPushCurrent_v2)(gcu_context ctx);
typedef gcu_result (*gcu_fn_cuCtxPopCurrent_v2)(gcu_context *ctx);
typedef gcu_result (*gcu_fn_cuCtxGetCurrent)(gcu_context *ctx);
typedef gcu_result (*gcu_fn_cuMemHostRegister_v2)(void *p, size_t bytes,
						   unsigned int flags);
typedef gcu_result (*gcu_fn_cuMemHostUnregister)(void *p);
typedef gcu_result (*gcu_fn_cuMemHostGetDevicePointer_v2)(gcu_deviceptr *dptr,
							   void *p,
							   unsigned int flags);
typedef gcu_result (*gcu_fn_cuStreamCreate)(gcu_stream *stream,
					     unsigned int flags);
typedef gcu_result (*gcu_fn_cuStreamDestroy_v2)(gcu_stream stream);
typedef gcu_result (*gcu_fn_cuStreamGetCtx)(gcu_stream stream,
					     gcu_context *ctx);
typedef gcu_result (*gcu_fn_cuStreamIsCapturing)(gcu_stream stream,
						  unsigned int *status);
typedef gcu_result (*gcu_fn_cuStreamWriteValue64_v2)(gcu_stream stream,
						      gcu_deviceptr addr,
						      gcu_u64 value,
						      unsigned int flags);
typedef gcu_result (*gcu_fn_cuStreamWaitValue64_v2)(gcu_stream stream,
						     gcu_deviceptr addr,
						     gcu_u64 value,
						     unsigned int flags);
typedef gcu_result (*gcu_fn_cuStreamQuery)(gcu_stream stream);
typedef gcu_result (*gcu_fn_cuStreamSynchronize)(gcu_stream stream);
/* The batch takes gcu_mem_op (CUstreamBatchMemOpParams) elements. */
typedef gcu_result (*gcu_fn_cuStreamBatchMemOp_v2)(gcu_stream stream,
						    unsigned int count,
						    void *ops,
						    unsigned int flags);
typedef gcu_result (*gcu_fn_cuStreamWaitEvent)(gcu_stream stream,
					        gcu_event event,
					        unsigned int flags);
/* CUDA 12.0: an id unique for the life of the process, resolving
 * CU_STREAM_PER_THREAD to the calling thread's stream. */
typedef gcu_result (*gcu_fn_cuStreamGetId)(gcu_stream stream,
					    unsigned long long *id);
typedef gcu_result (*gcu_fn_cuThreadExchangeStreamCaptureMode)(unsigned int *mode);
/* Graph memop nodes (CUDA 11.7); params are gcu_mem_op_node_params. */
typedef gcu_result (*gcu_fn_cuGraphAddBatchMemOpNode)(gcu_graph_node *node,
						       gcu_graph graph,
						       const gcu_graph_node *deps,
						       size_t ndeps,
						       const void *params);
typedef gcu_result (*gcu_fn_cuGraphExecBatchMemOpNodeSetParams)(
	gcu_graph_exec exec, gcu_graph_node node, const void *params);
typedef gcu_result (*gcu_fn_cuGraphLaunch)(gcu_graph_exec exec,
					    gcu_stream stream);

/*
 * Entry points the backend does not use, resolved for gpuar-bench's CUDA
 * producer (a timed kernel per job, a blocking-sync event wait).
 */
typedef gcu_result (*gcu_fn_cuDeviceGetName)(char *name, int len,
					      gcu_device device);
typedef gcu_result (*gcu_fn_cuDevicePrimaryCtxSetFlags_v2)(gcu_device device,
							    unsigned int flags);
typedef gcu_result (*gcu_fn_cuModuleLoadData)(gcu_module *module,
					       const void *image);
typedef gcu_result (*gcu_fn_cuModuleUnload)(gcu_module module);
typedef gcu_result (*gcu_fn_cuModuleGetFunction)(gcu_function *function,
						  gcu_module module,
						  const char *name);
typedef gcu_result (*gcu_fn_cuLaunchKernel)(gcu_function f,
					     unsigned int grid_x,
					     unsigned int grid_y,
					     unsigned int grid_z,
					     unsigned int block_x,
					     unsigned int block_y,
					     unsigned int block_z,
					     unsigned int shared_bytes,
					     gcu_stream stream,
					     void **params, void **extra);
typedef gcu_result (*gcu_fn_cuEventCreate)(gcu_event *event,
					    unsigned int flags);
typedef gcu_result (*gcu_fn_cuEventRecord)(gcu_event event, gcu_stream stream);
typedef gcu_result (*gcu_fn_cuEventSynchronize)(gcu_event event);
typedef gcu_result (*gcu_fn_cuEventDestroy_v2)(gcu_event event);
/* gpuar-bench's cuda-scanner polls its events. */
typedef gcu_result (*gcu_fn_cuEventQuery)(gcu_event event);
/*
 * gpuar-bench's cuda-hostfunc (CUDA 10.0): CUhostFn, and the entry point
 * that enqueues one on a stream, to run on a driver thread once the
 * stream's preceding work is complete.
 */
typedef void (*gcu_host_fn)(void *user_data);
typedef gcu_result (*gcu_fn_cuLaunchHostFunc)(gcu_stream stream,
					       gcu_host_fn fn,
					       void *user_data);

#endif /* GPUAR_BACKENDS_CUDA_DECLS_H */
