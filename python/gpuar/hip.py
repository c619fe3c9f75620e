# SPDX-License-Identifier: MIT
"""HIP streams (and events, where the library has event awaits) as
awaitables, as gpuar.cuda. GPUAR_HIP_LIBRARY names another runtime.
0 is refused: pass STREAM_PER_THREAD or a created stream."""
from ._vendor import Backend, module_functions

STREAM_PER_THREAD = 2


class Hip(Backend):
    prefix = "gpuar_hip"
    handle_attr = "hip_stream"


stream_done, event_done, close_default = module_functions(Hip)
