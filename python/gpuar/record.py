# SPDX-License-Identifier: MIT
"""Completion records, as Python values."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Optional

from ._lib import lib

# enum gpuar_outcome (<linux/gpuar.h>)
IMMEDIATE, EXACT, LATE, FENCE, TIMEOUT, CANCELLED = range(1, 7)
# enum gpuar_source
SOURCE_WORD, SOURCE_FENCE = 1, 2


@dataclass(frozen=True)
class Record:
    """One completion (struct gpuar_record), plus the vendor's status when a
    CUDA/HIP backend resolved it (vendor_status 0 otherwise)."""
    user_data: int
    start_ns: int
    complete_ns: int
    slept_ns: int
    point: int
    value: int
    status: int
    checks: int
    source: int
    outcome: int
    vendor_status: int = 0
    vendor_name: Optional[str] = None

    @classmethod
    def from_c(cls, rec, vendor_status: int = 0,
               vendor_name: Optional[bytes] = None) -> Record:
        return cls(rec.user_data, rec.start_ns, rec.complete_ns, rec.slept_ns,
                   rec.point, rec.value, rec.status, rec.checks, rec.source,
                   rec.outcome, vendor_status,
                   vendor_name.decode() if vendor_name else None)

    @property
    def outcome_name(self) -> str:
        return lib.gpuar_outcome_name(self.outcome).decode()

    @property
    def wait_ns(self) -> int:
        """How long the wait lasted: from its start (its submission, or
        the start_ns it was given) to the check that saw it complete. Not
        the latency from the store to that check: the store's time is the
        producer's to know (SoftProducer.stored_at, a GPU timestamp)."""
        return self.complete_ns - self.start_ns

    @property
    def latency_ns(self) -> int:
        """Deprecated: wait_ns, under a name that read as the latency from
        the store to the check, which it is not."""
        warnings.warn("Record.latency_ns is the wait's length: use "
                      "Record.wait_ns", DeprecationWarning, stacklevel=2)
        return self.wait_ns
