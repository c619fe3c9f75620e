# SPDX-License-Identifier: MIT
"""CUDA streams (and events, where the library has event awaits) as
awaitables: `await gpuar.cuda.stream_done(torch_stream.cuda_stream)`.

The driver is loaded by libgpuar at run time (GPUAR_CUDA_LIBRARY names
another library, e.g. the test double). Streams are raw CUstream handles
as integers; 0 is refused (pass CU_STREAM_LEGACY, 1, or
CU_STREAM_PER_THREAD, 2).
"""
from ._vendor import Backend, DefaultBackend
from .port import DEFAULT_PLAN

STREAM_LEGACY = 1
STREAM_PER_THREAD = 2


class Cuda(Backend):
    prefix = "gpuar_cuda"
    handle_attr = "cuda_stream"


_default = DefaultBackend(Cuda)


async def stream_done(stream, *, plan=DEFAULT_PLAN, point=None):
    """The work enqueued on @stream so far is done (device 0's backend)."""
    return await _default.get().stream_done(stream, plan=plan, point=point)


async def event_done(event, *, plan=DEFAULT_PLAN, point=None):
    """@event has completed (where the library has gpuar_cuda_await_event)."""
    return await _default.get().event_done(event, plan=plan, point=point)


def close_default():
    """Close the module-level backend (its port, lines and context)."""
    _default.reset()
