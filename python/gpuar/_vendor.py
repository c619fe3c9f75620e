# SPDX-License-Identifier: MIT
"""What the CUDA and HIP bindings share: a backend handle, a port whose
records are reaped through the backend (so a stream's failure becomes an
error with the vendor's code), and slots handed to streams."""
from __future__ import annotations

import asyncio
import ctypes
import errno
import functools
import threading
import warnings
from typing import Any, Optional, Tuple

from . import _structs as S
from ._lib import has, lib
from .errors import GpuarError, PortClosedError, check, new_diag
from .plan import PlanLike, await_plan
from .port import DEFAULT_PLAN, Port
from .record import Record

LINE_FREE_TIMEOUT_NS = 1_000_000_000
_LEAKED_PORTS = []


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def handle_of(obj: Any, attrs: Tuple[str, ...],
              kind: str = "stream") -> Tuple[int, bool]:
    """(raw handle, from an object) for @obj: an int as it is, or an
    object that carries one: the CUDA stream protocol (__cuda_stream__(),
    returning (version, handle)), then the attributes @attrs in order
    (torch's .cuda_stream / .cuda_event, CuPy's .ptr)."""
    if _int(obj):
        return obj, False
    proto = getattr(obj, "__cuda_stream__", None) if kind == "stream" \
        else None
    if proto is not None:
        value = proto() if callable(proto) else proto
        if not (isinstance(value, tuple) and len(value) == 2
                and _int(value[0]) and _int(value[1])):
            raise TypeError(f"{type(obj).__name__}.__cuda_stream__ gave "
                            f"{value!r}, not (version, handle)")
        return value[1], True
    for name in attrs:
        value = getattr(obj, name, None)
        if _int(value):
            return value, True
    names = (("__cuda_stream__()",) if kind == "stream" else ()) + \
        tuple("." + a for a in attrs)
    raise TypeError(f"expected a raw {kind} handle (int) or an object with "
                    f"{', '.join(names)}; got {type(obj).__name__}")


def device_of(obj: Any) -> Optional[int]:
    """The device ordinal a framework object says it belongs to, or None:
    .device_index (torch), .device_id (CuPy streams), .device as an int,
    or its .index (torch.device) or .id (cupy.cuda.Device)."""
    if _int(obj):
        return None
    for name in ("device_index", "device_id"):
        value = getattr(obj, name, None)
        if _int(value):
            return value
    dev = getattr(obj, "device", None)
    if _int(dev):
        return dev
    for name in ("index", "id"):
        value = getattr(dev, name, None)
        if _int(value):
            return value
    return None


class _VendorPort(Port):
    _reap_item = S.VendorCompletion

    def __init__(self, backend, **kw):
        self._backend = backend
        super().__init__(**kw)

    def _reap_into(self, items, count):
        diag = new_diag()
        call = self._backend.prefix + "_port_reap"
        ret = getattr(lib, call)(self._backend._handle, self._h, items,
                                 count, 0, ctypes.byref(diag))
        self._backend.last_diag = diag
        return ret, call, diag

    @staticmethod
    def _record_of(item):
        return Record.from_c(item.record, item.vendor_status, item.vendor_name)


class _Slot:
    __slots__ = ("line", "index", "pending")

    def __init__(self, line, index):
        self.line, self.index, self.pending = line, index, 0

    def landed(self):
        """The slot's word reached the last number recorded into it: no
        store of the stream it served is pending (gpuar_reached)."""
        word = lib.gpuar_vendor_line_words(self.line)[self.index]
        last = lib.gpuar_vendor_line_sequence(self.line, self.index)
        return (word - last) % (1 << 64) < (1 << 63)


class Backend:
    """One device of a vendor backend, with its own port.

    Each stream (or event) being awaited gets a slot of a device-registered
    line; a slot returns to the pool once no await on it is pending and its
    word has reached the last number recorded into it, so any number of
    streams may come and go. An await cancelled before its store landed
    (asyncio.wait_for running out) leaves the slot bound to its stream
    until the store lands: another stream would be refused it (EBUSY).

    Keyword options past engine (imminent, busy_read_us, max_waits, ...)
    are the backend's Port's.

    Opening (the driver's init and the primary context's retain, often
    hundreds of ms) and closing (freeing lines: up to a second each) block:
    in a coroutine, `await Cuda.open(...)` and `await backend.aclose()`
    (or `async with`) run them in the loop's default executor.
    """

    prefix = None           # "gpuar_cuda" / "gpuar_hip"
    stream_attrs = ()       # where frameworks keep a stream's handle
    event_attrs = ()        # and an event's
    # What a framework's default stream (handle 0 in an object) is here:
    # the backend's handle for the legacy null stream of the device.
    legacy_stream = None

    def __init__(self, ordinal: int = 0, *, engine: str = "auto",
                 **port_options: Any) -> None:
        handle = ctypes.c_void_p()
        diag = new_diag()
        check(self._fn("open")(ctypes.byref(handle), ordinal,
                               ctypes.byref(diag)), self.prefix + "_open",
              diag)
        self._handle = handle
        self.device = ordinal
        self.last_diag = diag
        self.port = _VendorPort(self, engine=engine, **port_options)
        self._lines = []
        self._free = []
        self._busy = {}         # handle -> _Slot
        self._closed = False    # awaits ended; lines may be going
        self._closing = threading.Lock()    # close() in an executor

    @classmethod
    async def open(cls, ordinal: int = 0, *, engine: str = "auto",
                   **port_options: Any) -> Backend:
        """The backend, opened in the running loop's default executor.
        @port_options: Port's keyword options for the backend's port."""
        return await asyncio.get_running_loop().run_in_executor(
            None, functools.partial(cls, ordinal, engine=engine,
                                    **port_options))

    def _fn(self, name):
        return getattr(lib, f"{self.prefix}_{name}")

    @property
    def library(self) -> str:
        return self._fn("library")(self._handle).decode()

    @property
    def driver_version(self) -> int:
        return self._fn("driver_version")(self._handle)

    def _slot_for(self, handle):
        slot = self._busy.get(handle)
        if slot is None:
            if not self._free:
                self._reclaim()
            if not self._free:
                self._grow()
            slot = self._busy[handle] = self._free.pop()
        slot.pending += 1
        return slot

    def _release(self, handle, slot):
        slot.pending -= 1
        if slot.pending == 0 and not self._closed and slot.landed():
            del self._busy[handle]
            self._free.append(slot)

    def _reclaim(self):
        """Return the slots whose stores landed after their last await
        ended (a cancelled one) to the pool."""
        for handle, slot in list(self._busy.items()):
            if slot.pending == 0 and slot.landed():
                del self._busy[handle]
                self._free.append(slot)

    def _grow(self):
        line = ctypes.c_void_p()
        diag = new_diag()
        check(self._fn("line_alloc")(self._handle, self.port._h,
                                     ctypes.byref(line), ctypes.byref(diag)),
              self.prefix + "_line_alloc", diag)
        self._lines.append(line)
        self._free.extend(_Slot(line, i)
                          for i in reversed(range(S.LINE_SLOTS)))

    async def _await(self, call, handle, plan, point):
        if self._closed:
            raise PortClosedError(call=f"{self.prefix}: backend closed")
        plan_c = await_plan(plan, f"{self.prefix}_{call}")._c
        slot = self._slot_for(handle)
        user_data = self.port.next_user_data()

        def submit():
            diag = new_diag()
            check(self._fn(call)(slot.line, slot.index,
                                 ctypes.c_void_p(handle),
                                 ctypes.byref(plan_c),
                                 handle if point is None else point,
                                 user_data, None, ctypes.byref(diag)),
                  f"{self.prefix}_{call}", diag)
        try:
            return await self.port._reactor.await_submitted(user_data, submit)
        finally:
            self._release(handle, slot)

    def _resolve(self, obj, kind):
        """The raw handle to await for @obj, a handle or a framework's
        stream or event on this backend's device."""
        attrs = self.stream_attrs if kind == "stream" else self.event_attrs
        handle, from_object = handle_of(obj, attrs, kind)
        device = device_of(obj)
        if device is not None and device != self.device:
            raise GpuarError(errno.EXDEV, call=f"{self.prefix}: the {kind} "
                             f"is on device {device}, this backend is "
                             f"device {self.device}'s")
        if handle == 0 and from_object and kind == "stream":
            # A framework's default stream: the legacy null stream (torch
            # and CuPy build without the per-thread default stream).
            handle = self.legacy_stream
        return handle

    async def stream_done(self, stream: Any, *, plan: PlanLike = DEFAULT_PLAN,
                          point: Optional[int] = None) -> Record:
        """Complete when the work enqueued on @stream so far is done; the
        Record. @stream: a raw handle (an int; 0 is refused), or a
        framework's stream: an object with __cuda_stream__(), .cuda_stream
        (torch, ROCm builds too), .hip_stream or .ptr (CuPy), whose device
        (.device_index, .device_id, .device.index, .device.id) must be
        this backend's (GpuarError EXDEV), and whose handle 0 (the default
        stream) is the legacy stream of the device (CU_STREAM_LEGACY,
        GPUAR_HIP_STREAM_LEGACY), as a raw handle of that value is: where
        the calling thread's current context (CUDA) or device (HIP) is
        not this backend's, GpuarError EXDEV. A failed stream raises
        GpuarError (errno EIO, .record carrying the vendor's status and
        name). @point (the estimator's key) defaults to the stream
        handle."""
        return await self._await("port_await", self._resolve(stream, "stream"),
                                 plan, point)

    @property
    def has_event_await(self) -> bool:
        return has(self.prefix + "_port_await_event")

    async def event_done(self, event: Any, *, plan: PlanLike = DEFAULT_PLAN,
                         point: Optional[int] = None) -> Record:
        """Complete when @event has completed: a raw event handle, or an
        object with .cuda_event (torch.cuda.Event), .hip_event, .event or
        .ptr (CuPy). Only where the library has event awaits
        (has_event_await)."""
        if not self.has_event_await:
            raise NotImplementedError(
                f"{self.prefix}_port_await_event: not in this libgpuar")
        return await self._await("port_await_event",
                                 self._resolve(event, "event"), plan, point)

    def close(self) -> None:
        """Cancel what is pending, free the lines (each waits, up to a
        second, for the device to stop touching it), then the port and the
        backend. Lines go first: they belong to the port. Tasks awaiting
        the backend get PortClosedError, also where the port is kept.
        Blocks: in a coroutine, await aclose()."""
        with self._closing:
            if self._handle:
                self._close()

    def _close(self):
        self._end_awaits()
        leaked = []
        for line in self._lines:
            diag = new_diag()
            if self._fn("line_free")(line, LINE_FREE_TIMEOUT_NS,
                                     ctypes.byref(diag)) < 0:
                leaked.append(diag.message.decode(errors="replace"))
        self._lines.clear()
        if leaked:
            # The backend keeps a line the device may still store into
            # (a poisoned context, stores that never landed); closing the
            # port would unmap its page under the device. Keep the port.
            _LEAKED_PORTS.append(self.port)
            warnings.warn(f"{self.prefix}: port kept open for lines the "
                          f"device may still use: {'; '.join(leaked)}",
                          ResourceWarning, stacklevel=3)
        else:
            self.port.close()
        self._fn("close")(self._handle)
        self._handle = None

    def _end_awaits(self):
        """Fail the awaiting tasks (PortClosedError), cancel and drop their
        waits: in the loop's thread, before the lines go."""
        self._closed = True
        if not self.port._handle:
            return
        awaited = list(self.port._reactor.awaits)
        self.port._reactor.close()
        for user_data in awaited:
            try:
                self.port.cancel(user_data)
            except GpuarError:
                pass        # completed first; reaped below
        while self.port.reap():
            pass

    async def aclose(self) -> None:
        """close() from a coroutine: the awaits end here, in the loop; the
        lines, port and backend go in the loop's default executor."""
        if self._handle and not self._closed:
            self._end_awaits()
            await asyncio.get_running_loop().run_in_executor(None,
                                                             self.close)

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Backend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def module_functions(cls):
    """stream_done, event_done and close_default for gpuar.cuda and
    gpuar.hip: awaits on a backend per (device, event loop), each opened
    on first use in its loop's default executor (never in the loop). The
    device is the object's (a framework stream or event says which), else
    the device= argument, else 0. A port serves one loop, so two loops (in
    two threads) get backends of their own; a closed loop's backends are
    closed (in the executor) when another await opens a backend."""
    backends = {}           # (device, loop) -> Backend
    lock = threading.Lock()

    def open_for(key):
        with lock:
            if key not in backends:
                backends[key] = cls(key[0])
            return backends[key]

    def drop_closed_loops(loop):
        with lock:
            gone = [key for key in backends if key[1].is_closed()]
            closing = [backends.pop(key) for key in gone]
        for backend in closing:
            loop.run_in_executor(None, backend.close)

    async def backend_for(obj, device):
        loop = asyncio.get_running_loop()
        if device is None:
            device = device_of(obj)
        key = (0 if device is None else device, loop)
        backend = backends.get(key)
        if backend is None:
            drop_closed_loops(loop)
            backend = await loop.run_in_executor(None, open_for, key)
        return backend

    async def stream_done(stream: Any, *, plan: PlanLike = DEFAULT_PLAN,
                          point: Optional[int] = None,
                          device: Optional[int] = None) -> Record:
        """The work enqueued on @stream so far is done: Backend.stream_done
        on the backend of @stream's device (device=, else 0, for a raw
        handle) and the running loop."""
        return await (await backend_for(stream, device)).stream_done(
            stream, plan=plan, point=point)

    async def event_done(event: Any, *, plan: PlanLike = DEFAULT_PLAN,
                         point: Optional[int] = None,
                         device: Optional[int] = None) -> Record:
        """@event has completed (where the library has event awaits), on
        the backend of its device and the running loop."""
        return await (await backend_for(event, device)).event_done(
            event, plan=plan, point=point)

    def close_default() -> None:
        """Close every module-level backend (ports, lines and contexts, of
        every device and loop). Blocks (a second per line at most): call it
        outside the loop, or through loop.run_in_executor."""
        with lock:
            closing = list(backends.values())
            backends.clear()
        for backend in closing:
            backend.close()

    return stream_done, event_done, close_default
