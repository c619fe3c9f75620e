// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* The tracepoints' definitions (trace.h declares them everywhere else). */
#define CREATE_TRACE_POINTS
#include "gpuar_trace.h"
