# SPDX-License-Identifier: MIT
"""HIP streams (and events, where the library has event awaits) as
awaitables, as gpuar.cuda. GPUAR_HIP_LIBRARY names another runtime.
Framework objects work as there (ROCm builds of torch keep the HIP stream
in .cuda_stream); an object's default stream, handle 0, is the legacy
null stream of its device, which must be the current HIP device of the
thread running the event loop (else GpuarError EXDEV). Raw handles are
integers, where 0 is refused (its meaning depends on how the caller was
compiled): pass STREAM_LEGACY (1, gpuar's GPUAR_HIP_STREAM_LEGACY: the
legacy null stream), STREAM_PER_THREAD (2, hipStreamPerThread) or a
created stream."""
from ._vendor import Backend, module_functions

STREAM_LEGACY = 1
STREAM_PER_THREAD = 2


class Hip(Backend):
    prefix = "gpuar_hip"
    stream_attrs = ("hip_stream", "cuda_stream", "ptr")
    event_attrs = ("hip_event", "cuda_event", "event", "ptr")
    legacy_stream = STREAM_LEGACY


stream_done, event_done, close_default = module_functions(Hip)
