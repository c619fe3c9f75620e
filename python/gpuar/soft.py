# SPDX-License-Identifier: MIT
"""The soft producer: a CPU thread that stores values into line words at
given times, standing in for a GPU stream (tests, demos, CPU stages)."""
from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING

from ._lib import lib
from .errors import check, in_range

if TYPE_CHECKING:
    from .port import Line


class SoftProducer:
    """Stores land in a line's page: close the producer (dropping stores
    not yet made) before closing the port whose lines it stores into."""

    def __init__(self) -> None:
        handle = ctypes.c_void_p()
        check(lib.gpuar_soft_producer_new(ctypes.byref(handle)),
              "gpuar_soft_producer_new")
        self._handle = handle

    def store_at(self, line: Line, slot: int, value: int,
                 at_ns: int) -> None:
        """Store @value into @slot of @line at CLOCK_MONOTONIC @at_ns."""
        check(lib.gpuar_soft_store_at(self._handle, line.word(slot),
                                      in_range("value", value),
                                      in_range("at_ns", at_ns)),
              "gpuar_soft_store_at")

    def store_after(self, line: Line, slot: int, value: int,
                    delay_ns: int) -> None:
        check(lib.gpuar_soft_store_after(self._handle, line.word(slot),
                                         in_range("value", value),
                                         in_range("delay_ns", delay_ns)),
              "gpuar_soft_store_after")

    def stored_at(self, line: Line, slot: int, value: int) -> int:
        """When @value was stored into @slot (ns), or 0 if not yet."""
        return lib.gpuar_soft_stored_at(self._handle, line.word(slot),
                                        in_range("value", value))

    @property
    def stores(self) -> int:
        return lib.gpuar_soft_stores(self._handle)

    def close(self) -> None:
        """Stop the thread; stores not yet made are dropped."""
        if self._handle:
            lib.gpuar_soft_producer_free(self._handle)
            self._handle = None

    def __enter__(self) -> SoftProducer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self):
        self.close()
