# SPDX-License-Identifier: MIT
"""Loading libgpuar and declaring the prototypes the binding calls.

Which library: GPUAR_LIBRARY, when set (a build tree's
build/lib/libgpuar.so.0); else the one the installed package carries
(pip install builds it into the package, beside this file); else the
system's libgpuar.so.0, found the ordinary way (ld.so.cache,
LD_LIBRARY_PATH), as in a source tree on PYTHONPATH. `path` says which.
Every call the binding
makes from a coroutine is non-blocking (timeouts of 0), so ctypes
releasing the GIL around it never leaves a thread parked inside the
library; the vendor backends' open and line frees, which block, run in
the loop's executor (Backend.open, aclose, the module-level awaits).
"""
import ctypes
import os
import pathlib

from . import _structs as S

P = ctypes.POINTER
vp = ctypes.c_void_p
c_int, c_u32, c_u64, c_i64 = (ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64,
                              ctypes.c_int64)
c_str = ctypes.c_char_p
SONAME = "libgpuar.so.0"
PACKAGED = pathlib.Path(__file__).resolve().parent / SONAME


def _choose():
    named = os.environ.get("GPUAR_LIBRARY")
    if named:
        return named
    return str(PACKAGED) if PACKAGED.is_file() else SONAME


def _load(path):
    try:
        return ctypes.CDLL(path)
    except OSError as exc:
        raise ImportError(
            f"gpuar: cannot load {path} ({exc}); install the package with "
            "pip (it builds the library in), install libgpuar, or set "
            "GPUAR_LIBRARY to a build's build/lib/libgpuar.so.0") from exc


def _loaded_path(handle):
    """The file the dynamic loader mapped for @handle's library."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            name = line.split(maxsplit=5)[5:]
            if name and os.path.basename(name[0].strip()).startswith(
                    "libgpuar.so"):
                return name[0].strip()
    return handle._name


lib = _load(_choose())
path = _loaded_path(lib)

# name: (restype, argtypes)
_PROTOTYPES = {
    "gpuar_version": (c_str, []),
    "gpuar_code_name": (c_str, [c_u32]),
    "gpuar_code_is_warning": (ctypes.c_bool, [c_u32]),
    "gpuar_now_ns": (c_u64, []),
    "gpuar_plan_from_text": (c_int, [c_str, P(S.Plan), P(S.Error)]),
    "gpuar_plan_to_text": (ctypes.c_size_t, [P(S.Plan), ctypes.c_char_p,
                                             ctypes.c_size_t]),
    "gpuar_port_open": (c_int, [P(vp), P(S.PortOptions), P(S.Error)]),
    "gpuar_port_close": (None, [vp]),
    "gpuar_port_engine": (c_int, [vp]),
    "gpuar_engine_name": (c_str, [c_int]),
    "gpuar_port_fd": (c_int, [vp]),
    "gpuar_port_imminent": (ctypes.c_bool, [vp]),
    "gpuar_port_process": (c_int, [vp]),
    "gpuar_port_next_check_ns": (c_u64, [vp]),
    "gpuar_line_alloc": (c_int, [vp, P(vp)]),
    "gpuar_line_free": (c_int, [vp, vp]),
    "gpuar_line_words": (P(c_u64), [vp]),
    "gpuar_line_id": (c_u32, [vp]),
    "gpuar_submit_word_waits": (c_int, [vp, P(S.WordWait), c_u32, P(c_u32)]),
    "gpuar_submit_fence_waits": (c_int, [vp, P(S.FenceWait), c_u32,
                                         P(c_u32)]),
    "gpuar_cancel": (c_int, [vp, c_u64]),
    "gpuar_port_reap": (c_int, [vp, P(S.Record), c_u32, c_i64]),
    "gpuar_port_stats": (c_int, [vp, P(S.PortStats)]),
    "gpuar_point_stats": (c_int, [vp, P(S.PointStats)]),
    "gpuar_outcome_name": (c_str, [c_u32]),
    "gpuar_soft_producer_new": (c_int, [P(vp)]),
    "gpuar_soft_producer_free": (None, [vp]),
    "gpuar_soft_store_at": (c_int, [vp, P(c_u64), c_u64, c_u64]),
    "gpuar_soft_store_after": (c_int, [vp, P(c_u64), c_u64, c_u64]),
    "gpuar_soft_fail_at": (None, [vp, c_int, c_u64]),
    "gpuar_soft_stores": (c_u64, [vp]),
    "gpuar_soft_stored_at": (c_u64, [vp, P(c_u64), c_u64]),
    "gpuar_vendor_line_words": (P(c_u64), [vp]),
    "gpuar_vendor_line_sequence": (c_u64, [vp, c_u32]),
}

# The CUDA and HIP backends: the same calls under two prefixes.
_VENDOR_PROTOTYPES = {
    "{v}_open": (c_int, [P(vp), c_int, P(S.Error)]),
    "{v}_close": (None, [vp]),
    "{v}_library": (c_str, [vp]),
    "{v}_driver_version": (c_int, [vp]),
    "{v}_line_alloc": (c_int, [vp, vp, P(vp), P(S.Error)]),
    "{v}_line_free": (c_int, [vp, c_u64, P(S.Error)]),
    "{v}_port_await": (c_int, [vp, c_u32, vp, P(S.Plan), c_u64, c_u64, P(c_u64),
                          P(S.Error)]),
    "{v}_port_reap": (c_int, [vp, vp, P(S.VendorCompletion), c_u32, c_i64,
                         P(S.Error)]),
}

# Event awaits came after the 1.0 ABI: bound only where the library has
# them (the same shape as the stream await, an event handle for the stream).
_OPTIONAL_VENDOR_PROTOTYPES = {
    "{v}_port_await_event": _VENDOR_PROTOTYPES["{v}_port_await"],
}


def _declare(name, proto):
    fn = getattr(lib, name)
    fn.restype, fn.argtypes = proto
    return fn


for _name, _proto in _PROTOTYPES.items():
    _declare(_name, _proto)
for _vendor in ("gpuar_cuda", "gpuar_hip"):
    for _fmt, _proto in _VENDOR_PROTOTYPES.items():
        _declare(_fmt.format(v=_vendor), _proto)
    for _fmt, _proto in _OPTIONAL_VENDOR_PROTOTYPES.items():
        if hasattr(lib, _fmt.format(v=_vendor)):
            _declare(_fmt.format(v=_vendor), _proto)


def has(name):
    """True when the loaded library exports @name."""
    return hasattr(lib, name)
