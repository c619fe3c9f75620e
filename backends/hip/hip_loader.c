// SPDX-License-Identifier: MIT
/*
 * The HIP runtime is loaded at run time, newest soname first: ROCm 7
 * ships libamdhip64.so.7 and newer trees look for .so.8; plain
 * libamdhip64.so is what a development install (or a ROCm tree added to
 * the library path) provides. Its symbols carry version nodes (hip_4.2
 * ... hip_7.x); dlsym takes each symbol's default version, the one a
 * program linked against that runtime would get. The names are the plain
 * ones, never the _spt variants (hipStreamQuery_spt ...) that a program
 * built with -fgpu-default-stream=per-thread calls: so a null stream
 * passed here is the legacy null stream of the current device, which is
 * what the backend's GPUAR_HIP_STREAM_LEGACY relies on. The runtime's
 * hipRuntimeGetVersion must fall in the range the declarations were
 * written to (HIP 5.0 to 8.x). Entry points an older HIP lacks
 * (hipStreamGetDevice, hipStreamGetId) are optional and their absence
 * only disables what they serve.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_loader.h"

static const char *const ghip_sonames[] = {
	"libamdhip64.so.8",
	"libamdhip64.so.7",
	"libamdhip64.so.6",
	"libamdhip64.so.5",
	"libamdhip64.so",
};
#define GHIP_SONAMES (sizeof(ghip_sonames) / sizeof(ghip_sonames[0]))

/* Never unmapped, even once closed: the runtime runs threads and exit
 * handlers of its own after hipInit. */
#define GHIP_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)

static const struct ghip_entry {
	const char *symbol;
	size_t offset;
	int optional;
} ghip_entries[] = {
#define E(field, opt) { #field, offsetof(struct ghip_api, field), opt }
	E(hipInit, 0),
	E(hipDriverGetVersion, 0),
	E(hipGetErrorName, 0),
	E(hipGetDeviceCount, 0),
	E(hipGetDevice, 0),
	E(hipSetDevice, 0),
	E(hipHostRegister, 0),
	E(hipHostUnregister, 0),
	E(hipHostGetDevicePointer, 0),
	E(hipStreamCreateWithFlags, 0),
	E(hipStreamDestroy, 0),
	E(hipStreamQuery, 0),
	E(hipStreamSynchronize, 0),
	E(hipStreamWriteValue64, 0),
	E(hipStreamWaitValue64, 0),
	E(hipStreamIsCapturing, 0),
	E(hipRuntimeGetVersion, 0),
	E(hipDeviceGetAttribute, 0),
	E(hipStreamWaitEvent, 0),
	E(hipStreamGetDevice, 1),
	E(hipStreamGetId, 1),
	E(hipThreadExchangeStreamCaptureMode, 1),
#undef E
};

int ghip_load(struct ghip_loaded *l, struct gv_load_error *why)
{
	const char *name = getenv("GPUAR_HIP_LIBRARY");
	char tried[320] = "";
	ghip_error rc;

	memset(l, 0, sizeof(*l));
	if (name && *name) {
		l->dl = dlopen(name, GHIP_DLOPEN_FLAGS);
		snprintf(tried, sizeof(tried), "%s: %s", name,
			 l->dl ? "" : dlerror());
	} else {
		for (size_t i = 0; !l->dl && i < GHIP_SONAMES; i++) {
			name = ghip_sonames[i];
			l->dl = dlopen(name, GHIP_DLOPEN_FLAGS);
		}
		if (!l->dl)
			snprintf(tried, sizeof(tried), "none of %s, .so.7, .so.6, "
				 ".so.5, %s found", ghip_sonames[0],
				 ghip_sonames[GHIP_SONAMES - 1]);
	}
	if (!l->dl)
		return gv_load_fail(why, ENOENT, GV_NO_VENDOR_STATUS,
				    "cannot load the HIP runtime (%s)", tried);
	snprintf(l->library, sizeof(l->library), "%s", name);
	for (size_t i = 0; i < sizeof(ghip_entries) / sizeof(ghip_entries[0]); i++) {
		const struct ghip_entry *e = &ghip_entries[i];
		void *fn = dlsym(l->dl, e->symbol);

		if (!fn && !e->optional) {
			gv_load_fail(why, ENOSYS, GHIP_ERROR_NOT_FOUND,
				     "%s lacks entry point %s", l->library,
				     e->symbol);
			goto fail;
		}
		*(void **)((char *)&l->api + e->offset) = fn;
	}
	rc = l->api.hipInit(0);
	if (rc) {
		/* HIP 5.2 says hipErrorInvalidDevice where there is no GPU. */
		bool none = rc == GHIP_ERROR_NO_DEVICE ||
			    rc == GHIP_ERROR_INVALID_DEVICE;

		gv_load_fail(why, none ? ENODEV : EIO, rc,
			     "hipInit failed in %s%s", l->library,
			     none ? ": no usable HIP device" : "");
		goto fail;
	}
	rc = l->api.hipRuntimeGetVersion(&l->runtime_version);
	if (rc || l->runtime_version < GHIP_VERSION_MIN ||
	    l->runtime_version >= GHIP_VERSION_END) {
		gv_load_fail(why, rc ? EIO : EOPNOTSUPP, rc ? rc : GV_NO_VENDOR_STATUS,
			     "%s is HIP runtime version %d; the backend supports "
			     "%d to %d (HIP 5.0 to 8.x)", l->library,
			     l->runtime_version, GHIP_VERSION_MIN,
			     GHIP_VERSION_END - 1);
		goto fail;
	}
	if (l->api.hipDriverGetVersion(&l->driver_version))
		l->driver_version = 0;
	return 0;
fail:
	dlclose(l->dl);
	memset(l, 0, sizeof(*l));	/* no pointer into the unloaded library */
	return -why->err;
}

void ghip_unload(struct ghip_loaded *l)
{
	if (l->dl)
		dlclose(l->dl);
	l->dl = NULL;
}

const char *ghip_status_name(const struct ghip_api *api, ghip_error status)
{
	static const struct { ghip_error code; const char *name; } own[] = {
		{ GHIP_SUCCESS, "hipSuccess" },
		{ GHIP_ERROR_INVALID_VALUE, "hipErrorInvalidValue" },
		{ GHIP_ERROR_NOT_INITIALIZED, "hipErrorNotInitialized" },
		{ GHIP_ERROR_NO_DEVICE, "hipErrorNoDevice" },
		{ GHIP_ERROR_INVALID_DEVICE, "hipErrorInvalidDevice" },
		{ GHIP_ERROR_INVALID_HANDLE, "hipErrorInvalidHandle" },
		{ GHIP_ERROR_NOT_FOUND, "hipErrorNotFound" },
		{ GHIP_ERROR_NOT_READY, "hipErrorNotReady" },
		{ GHIP_ERROR_DEINITIALIZED, "hipErrorDeinitialized" },
		{ GHIP_ERROR_ECC_NOT_CORRECTABLE, "hipErrorECCNotCorrectable" },
		{ GHIP_ERROR_ILLEGAL_ADDRESS, "hipErrorIllegalAddress" },
		{ GHIP_ERROR_LAUNCH_TIMEOUT, "hipErrorLaunchTimeOut" },
		{ GHIP_ERROR_CONTEXT_IS_DESTROYED, "hipErrorContextIsDestroyed" },
		{ GHIP_ERROR_ASSERT, "hipErrorAssert" },
		{ GHIP_ERROR_LAUNCH_FAILURE, "hipErrorLaunchFailure" },
		{ GHIP_ERROR_UNKNOWN, "hipErrorUnknown" },
		{ GHIP_ERROR_NOT_SUPPORTED, "hipErrorNotSupported" },
	};
	const char *name;

	if (api && api->hipGetErrorName) {
		name = api->hipGetErrorName(status);
		if (name)
			return name;
	}
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (own[i].code == status)
			return own[i].name;
	return "hipErrorUnrecognized";
}
