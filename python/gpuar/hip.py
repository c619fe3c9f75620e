# SPDX-License-Identifier: MIT
"""HIP streams (and events, where the library has event awaits) as
awaitables, as gpuar.cuda. GPUAR_HIP_LIBRARY names another runtime.
Framework objects work as there (ROCm builds of torch keep the HIP stream
in .cuda_stream), except the default stream: HIP has no handle for the
legacy null stream, so an object's 0 raises ValueError and a raw 0 is
refused: pass STREAM_PER_THREAD or a created stream."""
from ._vendor import Backend, module_functions

STREAM_PER_THREAD = 2


class Hip(Backend):
    prefix = "gpuar_hip"
    stream_attrs = ("hip_stream", "cuda_stream", "ptr")
    event_attrs = ("hip_event", "cuda_event", "event", "ptr")


stream_done, event_done, close_default = module_functions(Hip)
