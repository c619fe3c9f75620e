# SPDX-License-Identifier: MIT
"""ctypes mirrors of the C structs the binding passes to libgpuar.

Each class names its C struct in ``c_name`` and its fields by their C
names, so tests/test_struct_layout.py can compile a program that prints the
C compiler's sizeof/offsetof for every field and compare: a header change
that moves a field fails that test instead of corrupting memory here.
"""
import ctypes

u8, u16, u32, s32, u64 = (ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32,
                          ctypes.c_int32, ctypes.c_uint64)

MESSAGE_MAX = 256        # GPUAR_MESSAGE_MAX
OUTCOME_SLOTS = 16       # GPUAR_OUTCOME_SLOTS
LINE_SLOTS = 8           # GPUAR_LINE_SLOTS


class Error(ctypes.Structure):
    c_name = "gpuar_error"
    _fields_ = [("code", u32), ("sys_errno", s32),
                ("message", ctypes.c_char * MESSAGE_MAX)]


class Plan(ctypes.Structure):
    c_name = "gpuar_plan"
    _fields_ = [("park", u32), ("flags", u32), ("park_ns", u64),
                ("backstop_ns", u64), ("margin_ns", u64),
                ("min_sleep_ns", u64), ("max_sleep_ns", u64),
                ("window", u32), ("pad", u32)]


class Record(ctypes.Structure):
    c_name = "gpuar_record"
    _fields_ = [("user_data", u64), ("start_ns", u64), ("complete_ns", u64),
                ("slept_ns", u64), ("point", u64), ("value", u64),
                ("status", s32), ("checks", u32), ("version", u16),
                ("source", u8), ("outcome", u8), ("pad", u32)]


class WordWait(ctypes.Structure):
    c_name = "gpuar_word_wait"
    _fields_ = [("user_data", u64), ("target", u64), ("point", u64),
                ("start_ns", u64), ("line", u32), ("slot", u32),
                ("flags", u32), ("pad", u32), ("plan", Plan)]


class FenceWait(ctypes.Structure):
    c_name = "gpuar_fence_wait"
    _fields_ = [("user_data", u64), ("fd", s32), ("flags", u32),
                ("reserved", u64 * 2)]


class PortOptions(ctypes.Structure):
    """Sized: ``size`` 0 means the 1.0 layout; ``reserved`` must stay zero."""
    c_name = "gpuar_port_options"
    _fields_ = [("size", u32), ("engine", u32), ("flags", u32),
                ("max_waits", u32), ("device_path", ctypes.c_char_p),
                ("poll_interval_ns", u64), ("poll_backstop_ns", u64),
                ("max_lines", u32), ("max_points", u32),
                ("busy_read_us", u32), ("claim_slice_us", u32),
                ("reserved", u32 * 12)]


class PortStats(ctypes.Structure):
    """``size`` must be set (to sizeof) before the call."""
    c_name = "gpuar_port_stats"
    _fields_ = [("size", u32), ("pad", u32), ("submitted", u64),
                ("checks", u64), ("sleeps", u64), ("timer_fires", u64),
                ("busy_read_checks", u64), ("pending", u64), ("queued", u64),
                ("lines", u64), ("points", u64), ("wakeup_latency_ns", u64),
                ("outcomes", u64 * OUTCOME_SLOTS),
                # imminent readiness and the timer budget (stats v2)
                ("imminent", u64), ("claims", u64), ("lease_expiries", u64),
                ("budget_stretched", u64)]


class PointStats(ctypes.Structure):
    c_name = "gpuar_point_stats"
    _fields_ = [("size", u32), ("flags", u32), ("point", u64),
                ("samples", u64), ("predicted_ns", u64),
                ("outcomes", u64 * OUTCOME_SLOTS)]


class VendorCompletion(ctypes.Structure):
    c_name = "gpuar_vendor_completion"
    _fields_ = [("record", Record), ("vendor_status", s32), ("pad", u32),
                ("vendor_name", ctypes.c_char_p)]


ALL = (Error, Plan, Record, WordWait, FenceWait, PortOptions, PortStats,
       PointStats, VendorCompletion)


def stats_fields(struct):
    """The counters of a stats struct as a dict (size and padding left out)."""
    out = {}
    for name, _ in struct._fields_:
        if name in ("size", "pad", "flags"):
            continue
        value = getattr(struct, name)
        out[name] = list(value) if name == "outcomes" else value
    return out
