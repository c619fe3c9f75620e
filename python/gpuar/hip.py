# SPDX-License-Identifier: MIT
"""HIP streams (and events, where the library has event awaits) as
awaitables, as gpuar.cuda. GPUAR_HIP_LIBRARY names another runtime.
0 is refused: pass STREAM_PER_THREAD or a created stream."""
from ._vendor import Backend, DefaultBackend
from .port import DEFAULT_PLAN

STREAM_PER_THREAD = 2


class Hip(Backend):
    prefix = "gpuar_hip"
    handle_attr = "hip_stream"


_default = DefaultBackend(Hip)


async def stream_done(stream, *, plan=DEFAULT_PLAN, point=None):
    return await _default.get().stream_done(stream, plan=plan, point=point)


async def event_done(event, *, plan=DEFAULT_PLAN, point=None):
    return await _default.get().event_done(event, plan=plan, point=point)


def close_default():
    _default.reset()
