// SPDX-License-Identifier: MIT
/*
 * The relaxed graph-capture mode around the backends' own driver calls.
 * Capture modes are per thread (cuThreadExchangeStreamCaptureMode,
 * hipThreadExchangeStreamCaptureMode): in the default global mode a call
 * the driver deems unsafe (a stream query, a synchronize, a host
 * registration), made while any thread captures a graph in the global
 * mode, invalidates that capture. The library makes such calls from the
 * caller's threads and its own at any time, so it switches the calling
 * thread to the relaxed mode for them and puts the caller's mode back.
 */
#include "vendor.h"

static __thread unsigned int gv_saved_mode;
static __thread unsigned int gv_relaxed_depth;

void gv_capture_relax(gv_capture_exchange_fn exchange)
{
	if (!exchange || gv_relaxed_depth++)
		return;
	gv_saved_mode = GV_CAPTURE_MODE_RELAXED;
	exchange(&gv_saved_mode);
}

void gv_capture_restore(gv_capture_exchange_fn exchange)
{
	if (!exchange || --gv_relaxed_depth)
		return;
	exchange(&gv_saved_mode);
}
