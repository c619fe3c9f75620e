# SPDX-License-Identifier: MIT
"""CUDA streams (and events, where the library has event awaits) as
awaitables: `await gpuar.cuda.stream_done(torch.cuda.current_stream())`.

The driver is loaded by libgpuar at run time (GPUAR_CUDA_LIBRARY names
another library, e.g. the test double). Streams are framework objects
(__cuda_stream__(), torch's .cuda_stream, CuPy's .ptr; a default stream,
handle 0, is the legacy stream of its device) or raw CUstream handles as
integers, where 0 is refused (pass CU_STREAM_LEGACY, 1, or
CU_STREAM_PER_THREAD, 2).
"""
from ._vendor import Backend, module_functions

STREAM_LEGACY = 1
STREAM_PER_THREAD = 2


class Cuda(Backend):
    prefix = "gpuar_cuda"
    stream_attrs = ("cuda_stream", "ptr")
    event_attrs = ("cuda_event", "event", "ptr")
    legacy_stream = STREAM_LEGACY


stream_done, event_done, close_default = module_functions(Cuda)
