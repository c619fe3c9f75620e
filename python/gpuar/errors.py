# SPDX-License-Identifier: MIT
"""GpuarError: a failed call, with gpuar's coded error and the errno."""
from __future__ import annotations

import errno
import os
from typing import Optional

from . import _structs as S
from ._lib import lib

# enum gpuar_code (<gpuar/codes.h>), the numbers GpuarError.code carries
E_INVALID_PLAN = 1
E_BACKEND = 8
E_ENGINE_UNAVAILABLE = 10
E_FEATURE_UNAVAILABLE = 14
E_INVALID_ARGUMENT = 13


class GpuarError(OSError):
    """A libgpuar call failed.

    .errno is the positive errno the call returned negated; .code is the
    coded error (gpuar's enum gpuar_code, 0 when the call gave none) and
    .code_name its registry name ("invalid-plan"). Branch on .code or
    .errno, never on the message.
    """

    def __init__(self, err: int, code: int = 0, message: Optional[str] = None,
                 call: Optional[str] = None) -> None:
        self.code = code
        name = lib.gpuar_code_name(code) if code else None
        self.code_name = name.decode() if name else None
        text = message or os.strerror(err)
        if call:
            text = f"{call}: {text}"
        super().__init__(err, text)


class PortClosedError(GpuarError):
    """The port is closed (errno EBADF): a call on it, or an await or
    `async for` step that was pending when it closed. Not CancelledError:
    the awaiting task itself was not cancelled."""

    def __init__(self, call: str = "port closed") -> None:
        super().__init__(errno.EBADF, call=call)


U64_MAX = (1 << 64) - 1


def in_range(name: str, value: int, high: int = U64_MAX) -> int:
    """@value, or ValueError when it is not an int in 0..@high (ctypes
    would store it modulo 2**64 or 2**32: 2**64 becomes 0)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not 0 <= value <= high:
        raise ValueError(f"{name} {value} not in 0..{high}")
    return value


def check(ret, call, diag=None):
    """Return @ret, or raise GpuarError for a negative return."""
    if ret >= 0:
        return ret
    code, message = 0, None
    if diag is not None and diag.code:
        code, message = diag.code, diag.message.decode(errors="replace")
    raise GpuarError(-ret, code, message, call)


def new_diag():
    return S.Error()


__all__ = ["GpuarError", "PortClosedError", "check", "in_range", "new_diag"]
