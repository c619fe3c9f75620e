# SPDX-License-Identifier: MIT
"""The soft producer: a CPU thread that stores values into line words at
given times, standing in for a GPU stream (tests, demos, CPU stages)."""
import ctypes

from ._lib import lib
from .errors import check


class SoftProducer:
    """Stores land in a line's page: close the producer (dropping stores
    not yet made) before closing the port whose lines it stores into."""

    def __init__(self):
        handle = ctypes.c_void_p()
        check(lib.gpuar_soft_producer_new(ctypes.byref(handle)),
              "gpuar_soft_producer_new")
        self._handle = handle

    def store_at(self, line, slot, value, at_ns):
        """Store @value into @slot of @line at CLOCK_MONOTONIC @at_ns."""
        check(lib.gpuar_soft_store_at(self._handle, line.word(slot), value,
                                      at_ns), "gpuar_soft_store_at")

    def store_after(self, line, slot, value, delay_ns):
        check(lib.gpuar_soft_store_after(self._handle, line.word(slot), value,
                                         delay_ns), "gpuar_soft_store_after")

    def stored_at(self, line, slot, value):
        """When @value was stored into @slot (ns), or 0 if not yet."""
        return lib.gpuar_soft_stored_at(self._handle, line.word(slot), value)

    @property
    def stores(self):
        return lib.gpuar_soft_stores(self._handle)

    def close(self):
        """Stop the thread; stores not yet made are dropped."""
        if self._handle:
            lib.gpuar_soft_producer_free(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
