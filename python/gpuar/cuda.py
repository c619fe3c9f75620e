# SPDX-License-Identifier: MIT
"""CUDA streams (and events, where the library has event awaits) as
awaitables: `await gpuar.cuda.stream_done(torch_stream.cuda_stream)`.

The driver is loaded by libgpuar at run time (GPUAR_CUDA_LIBRARY names
another library, e.g. the test double). Streams are raw CUstream handles
as integers; 0 is refused (pass CU_STREAM_LEGACY, 1, or
CU_STREAM_PER_THREAD, 2).
"""
from ._vendor import Backend, module_functions

STREAM_LEGACY = 1
STREAM_PER_THREAD = 2


class Cuda(Backend):
    prefix = "gpuar_cuda"
    handle_attr = "cuda_stream"


stream_done, event_done, close_default = module_functions(Cuda)
