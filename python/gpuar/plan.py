# SPDX-License-Identifier: MIT
"""Wait plans: parsed once from text, kept in binary form."""
from __future__ import annotations

import ctypes
import errno
from typing import Union

from . import _structs as S
from ._lib import lib
from .errors import E_INVALID_PLAN, GpuarError, check, new_diag

PARK_BLOCK = 1      # GPUAR_PARK_BLOCK: the vendor's blocking wait


class Plan:
    """A wait plan ("flag:park_us=200", "poll", "...+predict:...").

    Parsing happens once, here; a bad text raises GpuarError with code
    GPUAR_E_INVALID_PLAN naming the first thing wrong. str() gives the
    canonical text back (parse -> text round-trips).
    """

    __slots__ = ("_c",)

    def __init__(self, text: str) -> None:
        self._c = S.Plan()
        diag = new_diag()
        check(lib.gpuar_plan_from_text(text.encode(), ctypes.byref(self._c),
                                       ctypes.byref(diag)),
              "gpuar_plan_from_text", diag)

    @property
    def text(self) -> str:
        need = lib.gpuar_plan_to_text(ctypes.byref(self._c), None, 0)
        buf = ctypes.create_string_buffer(need + 1)
        lib.gpuar_plan_to_text(ctypes.byref(self._c), buf, need + 1)
        return buf.value.decode()

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Plan({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Plan) and bytes(self._c) == bytes(other._c)

    def __hash__(self) -> int:
        return hash(bytes(self._c))


PlanLike = Union["Plan", str]


def as_plan(plan: PlanLike) -> Plan:
    """A Plan from a Plan or its text."""
    return plan if isinstance(plan, Plan) else Plan(plan)


def await_plan(plan: PlanLike, call: str) -> Plan:
    """as_plan for an await, which refuses block: it would synchronize in
    the calling thread, the event loop's."""
    plan = as_plan(plan)
    if plan._c.park == PARK_BLOCK:
        raise GpuarError(errno.EINVAL, E_INVALID_PLAN,
                         "plan block synchronizes in the calling thread, "
                         "which would stop the event loop: await with a "
                         "flag or poll plan", call)
    return plan
