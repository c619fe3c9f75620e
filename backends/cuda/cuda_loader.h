/* SPDX-License-Identifier: MIT */
/*
 * Loading the CUDA driver at run time: dlopen libcuda.so.1 (or
 * $GPUAR_CUDA_LIBRARY) and resolve the entry points the backend uses.
 */
#ifndef GPUAR_BACKENDS_CUDA_LOADER_H
#define GPUAR_BACKENDS_CUDA_LOADER_H

#include "cuda_decls.h"
#include "vendor.h"

struct gcu_api {
	gcu_fn_cuInit cuInit;
	gcu_fn_cuDriverGetVersion cuDriverGetVersion;
	gcu_fn_cuGetErrorName cuGetErrorName;
	gcu_fn_cuDeviceGet cuDeviceGet;
	gcu_fn_cuDeviceGetCount cuDeviceGetCount;
	gcu_fn_cuDeviceGetAttribute cuDeviceGetAttribute;
	gcu_fn_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain;
	gcu_fn_cuDevicePrimaryCtxRelease_v2 cuDevicePrimaryCtxRelease;
	gcu_fn_cuCtxPushCurrent_v2 cuCtxPushCurrent;
	gcu_fn_cuCtxPopCurrent_v2 cuCtxPopCurrent;
	gcu_fn_cuCtxGetCurrent cuCtxGetCurrent;
	gcu_fn_cuMemHostRegister_v2 cuMemHostRegister;
	gcu_fn_cuMemHostUnregister cuMemHostUnregister;
	gcu_fn_cuMemHostGetDevicePointer_v2 cuMemHostGetDevicePointer;
	gcu_fn_cuStreamCreate cuStreamCreate;
	gcu_fn_cuStreamDestroy_v2 cuStreamDestroy;
	gcu_fn_cuStreamGetCtx cuStreamGetCtx;
	gcu_fn_cuStreamIsCapturing cuStreamIsCapturing;
	gcu_fn_cuStreamWriteValue64_v2 cuStreamWriteValue64;
	gcu_fn_cuStreamWaitValue64_v2 cuStreamWaitValue64;
	gcu_fn_cuStreamQuery cuStreamQuery;
	gcu_fn_cuStreamSynchronize cuStreamSynchronize;
	gcu_fn_cuStreamBatchMemOp_v2 cuStreamBatchMemOp;
	gcu_fn_cuStreamWaitEvent cuStreamWaitEvent;
	/*
	 * Optional, used by the backend where the driver has them (NULL
	 * otherwise): stream ids (12.0; without them the per-thread default
	 * stream handle is refused), the thread's capture mode, and graph
	 * memop nodes (gpuar_cuda_graph_* refuse without them).
	 */
	gcu_fn_cuStreamGetId cuStreamGetId;
	gcu_fn_cuThreadExchangeStreamCaptureMode cuThreadExchangeStreamCaptureMode;
	gcu_fn_cuGraphAddBatchMemOpNode cuGraphAddBatchMemOpNode;
	gcu_fn_cuGraphExecBatchMemOpNodeSetParams cuGraphExecBatchMemOpNodeSetParams;
	gcu_fn_cuGraphLaunch cuGraphLaunch;
	/*
	 * Optional: not used by the backend, resolved for gpuar-bench's CUDA
	 * producer; NULL where the driver lacks them (the user must check).
	 */
	gcu_fn_cuDeviceGetName cuDeviceGetName;
	gcu_fn_cuDevicePrimaryCtxSetFlags_v2 cuDevicePrimaryCtxSetFlags;
	gcu_fn_cuModuleLoadData cuModuleLoadData;
	gcu_fn_cuModuleUnload cuModuleUnload;
	gcu_fn_cuModuleGetFunction cuModuleGetFunction;
	gcu_fn_cuLaunchKernel cuLaunchKernel;
	gcu_fn_cuEventCreate cuEventCreate;
	gcu_fn_cuEventRecord cuEventRecord;
	gcu_fn_cuEventSynchronize cuEventSynchronize;
	gcu_fn_cuEventDestroy_v2 cuEventDestroy;
	gcu_fn_cuEventQuery cuEventQuery;
	gcu_fn_cuLaunchHostFunc cuLaunchHostFunc;
};

struct gcu_loaded {
	void *dl;
	struct gcu_api api;
	int driver_version;
	const char *resolver;	/* "cuGetProcAddress_v2" or "dlsym" */
	char library[256];
};

/*
 * 0, or -err with *@why filled (a required entry point missing is an
 * error; an optional one is left NULL). On success the caller owns ->dl.
 */
int gcu_load(struct gcu_loaded *out, struct gv_load_error *why);
void gcu_unload(struct gcu_loaded *l);

/* The CUresult's name from the driver, else the backend's own table. */
const char *gcu_status_name(const struct gcu_api *api, gcu_result status);

#endif /* GPUAR_BACKENDS_CUDA_LOADER_H */
