// SPDX-License-Identifier: MIT
/*
 * The CUDA driver is loaded at run time so one build runs everywhere.
 *
 * Entry points are resolved the way current drivers expect: for drivers
 * of 12.0 and later, cuGetProcAddress_v2 with the CUDA version the
 * declarations mirror (GCU_ABI_VERSION) and its symbolStatus out-argument,
 * which picks the right versioned implementation of each base name; older
 * drivers lack it, and there the versioned symbols (_v2) are taken by
 * dlsym. Either way, a missing entry point is an error that names it,
 * except for the optional ones (newer than the backend's floor, or used by
 * gpuar-bench only), which are left NULL so the library never requires
 * more than it calls.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_loader.h"

#define GCU_DEFAULT_LIBRARY "libcuda.so.1"

static const struct gcu_entry {
	const char *base;	/* name for cuGetProcAddress_v2 */
	const char *symbol;	/* versioned name for dlsym */
	size_t offset;
	bool optional;
} gcu_entries[] = {
#define E(field, sym) { #field, sym, offsetof(struct gcu_api, field), false }
#define OPT(field, sym) { #field, sym, offsetof(struct gcu_api, field), true }
	E(cuInit, "cuInit"),
	E(cuDriverGetVersion, "cuDriverGetVersion"),
	E(cuGetErrorName, "cuGetErrorName"),
	E(cuDeviceGet, "cuDeviceGet"),
	E(cuDeviceGetCount, "cuDeviceGetCount"),
	E(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
	E(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	E(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
	E(cuCtxPushCurrent, "cuCtxPushCurrent_v2"),
	E(cuCtxPopCurrent, "cuCtxPopCurrent_v2"),
	E(cuCtxGetCurrent, "cuCtxGetCurrent"),
	E(cuMemHostRegister, "cuMemHostRegister_v2"),
	E(cuMemHostUnregister, "cuMemHostUnregister"),
	E(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"),
	E(cuStreamCreate, "cuStreamCreate"),
	E(cuStreamDestroy, "cuStreamDestroy_v2"),
	E(cuStreamGetCtx, "cuStreamGetCtx"),
	E(cuStreamIsCapturing, "cuStreamIsCapturing"),
	E(cuStreamWriteValue64, "cuStreamWriteValue64_v2"),
	E(cuStreamWaitValue64, "cuStreamWaitValue64_v2"),
	E(cuStreamQuery, "cuStreamQuery"),
	E(cuStreamSynchronize, "cuStreamSynchronize"),
	E(cuStreamBatchMemOp, "cuStreamBatchMemOp_v2"),
	E(cuStreamWaitEvent, "cuStreamWaitEvent"),
	OPT(cuStreamGetId, "cuStreamGetId"),
	OPT(cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode"),
	OPT(cuGraphAddBatchMemOpNode, "cuGraphAddBatchMemOpNode"),
	OPT(cuGraphExecBatchMemOpNodeSetParams, "cuGraphExecBatchMemOpNodeSetParams"),
	OPT(cuGraphLaunch, "cuGraphLaunch"),
	OPT(cuDeviceGetName, "cuDeviceGetName"),
	OPT(cuDevicePrimaryCtxSetFlags, "cuDevicePrimaryCtxSetFlags_v2"),
	OPT(cuModuleLoadData, "cuModuleLoadData"),
	OPT(cuModuleUnload, "cuModuleUnload"),
	OPT(cuModuleGetFunction, "cuModuleGetFunction"),
	OPT(cuLaunchKernel, "cuLaunchKernel"),
	OPT(cuEventCreate, "cuEventCreate"),
	OPT(cuEventRecord, "cuEventRecord"),
	OPT(cuEventSynchronize, "cuEventSynchronize"),
	OPT(cuEventDestroy, "cuEventDestroy_v2"),
	OPT(cuEventQuery, "cuEventQuery"),
	OPT(cuLaunchHostFunc, "cuLaunchHostFunc"),
#undef OPT
#undef E
};

static void **gcu_slot(struct gcu_api *api, const struct gcu_entry *e)
{
	return (void **)((char *)api + e->offset);
}

static const char *gcu_symbol_status(unsigned int st)
{
	switch (st) {
	case GCU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND:
		return "symbol not found";
	case GCU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT:
		return "version not sufficient";
	default:
		return "unexpected symbolStatus";
	}
}

static int gcu_resolve_proc(struct gcu_loaded *l, gcu_fn_cuGetProcAddress_v2 gpa,
			    struct gv_load_error *why)
{
	for (size_t i = 0; i < sizeof(gcu_entries) / sizeof(gcu_entries[0]); i++) {
		const struct gcu_entry *e = &gcu_entries[i];
		unsigned int st = GCU_GET_PROC_ADDRESS_SUCCESS;
		void *fn = NULL;
		gcu_result rc = gpa(e->base, &fn, GCU_ABI_VERSION,
				    GCU_GET_PROC_ADDRESS_DEFAULT, &st);

		if (e->optional && (rc || st != GCU_GET_PROC_ADDRESS_SUCCESS))
			fn = NULL;
		else if (rc || st != GCU_GET_PROC_ADDRESS_SUCCESS || !fn)
			return gv_load_fail(why, ENOSYS, rc ? rc : GCU_ERROR_NOT_FOUND,
					    "the driver lacks entry point %s for CUDA "
					    "12.0 (cuGetProcAddress_v2: %s)", e->base,
					    gcu_symbol_status(st));
		*gcu_slot(&l->api, e) = fn;
	}
	l->resolver = "cuGetProcAddress_v2";
	return 0;
}

static int gcu_resolve_dlsym(struct gcu_loaded *l, struct gv_load_error *why)
{
	for (size_t i = 0; i < sizeof(gcu_entries) / sizeof(gcu_entries[0]); i++) {
		const struct gcu_entry *e = &gcu_entries[i];
		void *fn = dlsym(l->dl, e->symbol);

		if (!fn && !e->optional)
			return gv_load_fail(why, ENOSYS, GCU_ERROR_NOT_FOUND,
					    "the driver lacks entry point %s (%s)",
					    e->symbol, "dlsym, driver older than 12.0");
		*gcu_slot(&l->api, e) = fn;
	}
	l->resolver = "dlsym";
	return 0;
}

int gcu_load(struct gcu_loaded *l, struct gv_load_error *why)
{
	const char *name = getenv("GPUAR_CUDA_LIBRARY");
	gcu_fn_cuGetProcAddress_v2 gpa;
	gcu_fn_cuDriverGetVersion version;
	gcu_fn_cuInit init;
	gcu_result rc;
	int err;

	memset(l, 0, sizeof(*l));
	if (!name || !*name)
		name = GCU_DEFAULT_LIBRARY;
	snprintf(l->library, sizeof(l->library), "%s", name);
	/* Never unmapped, even once closed: after cuInit the driver runs
	 * threads and exit handlers of its own, and error names it gave out
	 * stay in use. */
	l->dl = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!l->dl)
		return gv_load_fail(why, ENOENT, GV_NO_VENDOR_STATUS,
				    "cannot load the CUDA driver %s: %s", name,
				    dlerror());
	/* cuInit and cuDriverGetVersion predate every resolver. */
	init = (gcu_fn_cuInit)dlsym(l->dl, "cuInit");
	version = (gcu_fn_cuDriverGetVersion)dlsym(l->dl, "cuDriverGetVersion");
	if (!init || !version) {
		err = gv_load_fail(why, ENOSYS, GCU_ERROR_NOT_FOUND,
				   "%s lacks entry point %s", name,
				   init ? "cuDriverGetVersion" : "cuInit");
		goto fail;
	}
	rc = init(0);
	if (rc) {
		err = gv_load_fail(why, rc == GCU_ERROR_NO_DEVICE ? ENODEV : EIO, rc,
				   "cuInit failed in %s%s", name,
				   rc == GCU_ERROR_NO_DEVICE ? ": no CUDA device" : "");
		goto fail;
	}
	rc = version(&l->driver_version);
	if (rc) {
		err = gv_load_fail(why, EIO, rc, "cuDriverGetVersion failed in %s",
				   name);
		goto fail;
	}
	gpa = (gcu_fn_cuGetProcAddress_v2)dlsym(l->dl, "cuGetProcAddress_v2");
	if (gpa && l->driver_version >= GCU_ABI_VERSION)
		err = gcu_resolve_proc(l, gpa, why);
	else
		err = gcu_resolve_dlsym(l, why);
	if (err)
		goto fail;
	return 0;
fail:
	dlclose(l->dl);
	memset(l, 0, sizeof(*l));	/* no pointer into the unloaded library */
	return err;
}

void gcu_unload(struct gcu_loaded *l)
{
	if (l->dl)
		dlclose(l->dl);
	l->dl = NULL;
}

const char *gcu_status_name(const struct gcu_api *api, gcu_result status)
{
	static const struct { gcu_result code; const char *name; } own[] = {
#define GCU_NAME(code, name) { code, name },
		GCU_STATUS_NAMES(GCU_NAME)
#undef GCU_NAME
	};
	const char *name = NULL;

	if (api && api->cuGetErrorName &&
	    !api->cuGetErrorName(status, &name) && name)
		return name;
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (own[i].code == status)
			return own[i].name;
	return "CUDA_ERROR_UNRECOGNIZED";
}
