# SPDX-License-Identifier: MIT
"""Wait plans: parsed once from text, kept in binary form."""
import ctypes
import errno

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

    def __init__(self, text):
        self._c = S.Plan()
        diag = new_diag()
        check(lib.gpuar_plan_from_text(text.encode(), ctypes.byref(self._c),
                                       ctypes.byref(diag)),
              "gpuar_plan_from_text", diag)

    @property
    def text(self):
        need = lib.gpuar_plan_to_text(ctypes.byref(self._c), None, 0)
        buf = ctypes.create_string_buffer(need + 1)
        lib.gpuar_plan_to_text(ctypes.byref(self._c), buf, need + 1)
        return buf.value.decode()

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Plan({self.text!r})"

    def __eq__(self, other):
        return isinstance(other, Plan) and bytes(self._c) == bytes(other._c)

    def __hash__(self):
        return hash(bytes(self._c))


def as_plan(plan):
    """A Plan from a Plan or its text."""
    return plan if isinstance(plan, Plan) else Plan(plan)


def await_plan(plan, call):
    """as_plan for an await, which refuses block: it would synchronize in
    the calling thread, the event loop's."""
    plan = as_plan(plan)
    if plan._c.park == PARK_BLOCK:
        raise GpuarError(errno.EINVAL, E_INVALID_PLAN,
                         "plan block synchronizes in the calling thread, "
                         "which would stop the event loop: await with a "
                         "flag or poll plan", call)
    return plan
