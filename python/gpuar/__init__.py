# SPDX-License-Identifier: MIT
"""gpuar: GPU completion ports for Python (ctypes over libgpuar.so.0).

    import asyncio, gpuar

    async def main():
        with gpuar.Port() as port, gpuar.SoftProducer() as gpu:
            line = port.line()
            gpu.store_after(line, 0, 1, 2_000_000)    # "GPU work": 2 ms
            record = await port.wait(line, 0, 1)
            print(record.outcome_name, record.wait_ns)

    asyncio.run(main())

CUDA and HIP streams: gpuar.cuda.stream_done(handle),
gpuar.hip.stream_done(handle).
"""
from ._lib import lib as _lib
from ._lib import path as library_path
from ._version import __version__
from .errors import (E_BACKEND, E_ENGINE_UNAVAILABLE, E_INVALID_ARGUMENT,
                     E_INVALID_PLAN, GpuarError, PortClosedError)
from .plan import Plan
from .port import DEFAULT_PLAN, Line, Port
from .record import (CANCELLED, EXACT, FENCE, IMMEDIATE, LATE, TIMEOUT,
                     Record)
from .soft import SoftProducer

#: The loaded C library's version (the package's is __version__).
library_version: str = _lib.gpuar_version().decode()


def now_ns() -> int:
    """CLOCK_MONOTONIC now, in ns (the clock records and stores use)."""
    return _lib.gpuar_now_ns()


__all__ = ["GpuarError", "PortClosedError", "Plan", "Port", "Line", "Record", "SoftProducer",
           "DEFAULT_PLAN", "IMMEDIATE", "EXACT", "LATE", "FENCE", "TIMEOUT",
           "CANCELLED", "E_INVALID_PLAN", "E_BACKEND", "E_ENGINE_UNAVAILABLE",
           "E_INVALID_ARGUMENT", "now_ns", "library_version",
           "library_path"]
