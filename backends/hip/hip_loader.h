/* SPDX-License-Identifier: MIT */
/*
 * Loading the HIP runtime at run time: dlopen libamdhip64.so.8, .so.7,
 * .so.6, .so.5, then plain libamdhip64.so (or $GPUAR_HIP_LIBRARY), check
 * its version and resolve the entry points the backend uses.
 */
#ifndef GPUAR_BACKENDS_HIP_LOADER_H
#define GPUAR_BACKENDS_HIP_LOADER_H

#include "hip_decls.h"
#include "vendor.h"

struct ghip_api {
	ghip_fn_hipInit hipInit;
	ghip_fn_hipDriverGetVersion hipDriverGetVersion;
	ghip_fn_hipGetErrorName hipGetErrorName;
	ghip_fn_hipGetDeviceCount hipGetDeviceCount;
	ghip_fn_hipGetDevice hipGetDevice;
	ghip_fn_hipSetDevice hipSetDevice;
	ghip_fn_hipHostRegister hipHostRegister;
	ghip_fn_hipHostUnregister hipHostUnregister;
	ghip_fn_hipHostGetDevicePointer hipHostGetDevicePointer;
	ghip_fn_hipStreamCreateWithFlags hipStreamCreateWithFlags;
	ghip_fn_hipStreamDestroy hipStreamDestroy;
	ghip_fn_hipStreamQuery hipStreamQuery;
	ghip_fn_hipStreamSynchronize hipStreamSynchronize;
	ghip_fn_hipStreamWriteValue64 hipStreamWriteValue64;
	ghip_fn_hipStreamWaitValue64 hipStreamWaitValue64;
	ghip_fn_hipStreamIsCapturing hipStreamIsCapturing;
	ghip_fn_hipRuntimeGetVersion hipRuntimeGetVersion;
	ghip_fn_hipDeviceGetAttribute hipDeviceGetAttribute;
	ghip_fn_hipStreamWaitEvent hipStreamWaitEvent;
	ghip_fn_hipStreamGetDevice hipStreamGetDevice;	/* optional */
	ghip_fn_hipStreamGetId hipStreamGetId;		/* optional */
	/* optional: without it, calls run in the caller's capture mode */
	ghip_fn_hipThreadExchangeStreamCaptureMode hipThreadExchangeStreamCaptureMode;
};

struct ghip_loaded {
	void *dl;
	struct ghip_api api;
	int driver_version;
	int runtime_version;	/* HIP_VERSION */
	char library[256];
};

/* 0, or -err with *@why filled. On success the caller owns ->dl. */
int ghip_load(struct ghip_loaded *out, struct gv_load_error *why);
void ghip_unload(struct ghip_loaded *l);
const char *ghip_status_name(const struct ghip_api *api, ghip_error status);

#endif /* GPUAR_BACKENDS_HIP_LOADER_H */
