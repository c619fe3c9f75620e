# SPDX-License-Identifier: MIT
"""Completion ports and their lines."""
from __future__ import annotations

import ctypes
import errno
import itertools
import os
from typing import AsyncIterator, Dict, List, Optional

from . import _structs as S
from ._lib import lib
from ._reactor import REAP_BATCH, Reactor
from .errors import (E_FEATURE_UNAVAILABLE, GpuarError, PortClosedError,
                     check, in_range, new_diag)
from .plan import PlanLike, as_plan, await_plan
from .record import Record

ENGINES = {"auto": 0, "kernel": 1, "user": 2}
PORT_CLOEXEC = 1 << 0
PORT_IMMINENT = 1 << 2
PORT_STRICT = 1 << 16
PORT_WATCHER = 1 << 17
# The lease of an imminent wait a reap in the loop's thread claims: the
# most the loop spins on one wait's word when its work runs late.
LOOP_BUSY_READ_US = 200

# A plan for awaits that gives the user engine's loop few wake-ups: sleep
# on the estimator to just before the predicted completion, then check
# every 200 us. Word waits hit their backstop only when very late, and
# the binding resubmits them (the word itself cannot fail).
DEFAULT_PLAN = ("flag:park_us=200,backstop_us=1000000+predict:margin_us=200,"
                "min_sleep_us=50,max_sleep_us=100000,window=8")



# Forks so far, as this process counts them: a port remembers the count
# it was opened at, so a child forked since is told apart without a
# system call. Its lines' pages are not in the child (the library maps
# them so), and reading one there would kill it with SIGSEGV.
_forks = [0]
os.register_at_fork(after_in_child=lambda: _forks.__setitem__(
    0, _forks[0] + 1))


def _slot(slot):
    if isinstance(slot, bool) or not isinstance(slot, int) or \
            not 0 <= slot < S.LINE_SLOTS:
        raise ValueError(f"slot {slot!r} not in 0..{S.LINE_SLOTS - 1}")
    return slot


class Line:
    """Eight u64 words (slots) a producer stores sequence numbers into.
    In a child forked without exec the words are not there: reading or
    writing them raises GpuarError (EPERM), as every call on the port
    does."""

    def __init__(self, port: Port, handle: ctypes.c_void_p) -> None:
        self.port = port
        self._handle = handle
        self.id = lib.gpuar_line_id(handle)
        self._base = ctypes.cast(lib.gpuar_line_words(handle),
                                 ctypes.c_void_p).value

    def word(self, slot: int):
        """A ctypes pointer to @slot's word (for the soft producer)."""
        _slot(slot)
        if self.port._forks != _forks[0]:
            raise GpuarError(errno.EPERM, call=f"line {self.id}: opened "
                             "by the parent process; its words are not "
                             "in a forked child")
        if not self._handle:
            raise GpuarError(errno.EBADF, call=f"line {self.id}: freed")
        if not self.port._handle:
            raise PortClosedError()
        return ctypes.cast(self._base + 8 * slot,
                           ctypes.POINTER(ctypes.c_uint64))

    def __getitem__(self, slot: int) -> int:
        return self.word(slot).contents.value

    def __setitem__(self, slot: int, value: int) -> None:
        self.word(slot).contents.value = in_range("value", value)

    def free(self) -> None:
        if self._handle:
            check(lib.gpuar_line_free(self.port._handle, self._handle),
                  "gpuar_line_free")
            self._handle = None


class Port:
    """A completion port: a pollable fd that yields completion records.

    engine: "auto" (the kernel module when /dev/gpuar opens, else the user
    engine), "kernel" or "user"; strict refuses instead of falling back.
    watcher: the user engine runs on a thread of its own, so the fd is
    readable only while a record is queued.
    imminent (default: on, except with watcher): imminent readiness. At a
    predicted wait's early wake the fd turns ready (the kernel engine's
    with EPOLLPRI, which the asyncio side watches through an epoll of its
    own) and the loop's callback claims the wait and watches its word
    itself, for at most busy_read_us (200 here by default; None: that, 0:
    the library's or module's default): a completion is seen at about a
    spin's latency instead of the next timer check's, for up to
    busy_read_us of the loop's CPU per wait whose work runs late.
    .imminent says whether it runs (a module without it: not, with a
    warning in .warning; explicitly asked with strict: refused).
    max_waits, max_lines: the pending-wait and line limits (0: the
    defaults, 4096 and 64; the kernel engine's lines are the module's
    max_lines parameter).
    Use it from one asyncio loop at a time (await port.wait(...),
    async for record in port) or directly (submit/process/reap).

    Threads: the direct calls may come from several threads at once (each
    reap has its own buffer; the library serializes the port). A record
    is reaped once, by whichever call gets it: a thread reaping a port an
    asyncio loop awaits on takes records its tasks wait for. The asyncio
    side (wait, async for, close while tasks await) belongs to the loop's
    thread.
    The fd is close-on-exec; in a child forked without exec every call
    raises GpuarError (EPERM): the child opens its own ports.
    """

    def __init__(self, engine: str = "auto", *, strict: bool = False,
                 watcher: bool = False, imminent: Optional[bool] = None,
                 busy_read_us: Optional[int] = None, max_waits: int = 0,
                 max_lines: int = 0,
                 device_path: Optional[str] = None) -> None:
        auto_imminent = imminent is None
        if auto_imminent:
            # On wherever the port can run it: the watcher thread runs the
            # user engine itself, so it has no early wake to hand over.
            imminent = not watcher
        if busy_read_us is None:
            busy_read_us = LOOP_BUSY_READ_US if imminent else 0
        opts = S.PortOptions(engine=ENGINES[engine], max_waits=max_waits,
                             max_lines=max_lines, busy_read_us=busy_read_us,
                             flags=PORT_CLOEXEC |
                             (PORT_IMMINENT if imminent else 0) |
                             (PORT_STRICT if strict else 0) |
                             (PORT_WATCHER if watcher else 0))
        if device_path:
            opts.device_path = device_path.encode()
        handle = ctypes.c_void_p()
        diag = new_diag()
        ret = lib.gpuar_port_open(ctypes.byref(handle), ctypes.byref(opts),
                                  ctypes.byref(diag))
        if (ret == -errno.EOPNOTSUPP and auto_imminent and
                diag.code == E_FEATURE_UNAVAILABLE):
            # strict, and a module without imminent readiness: asked for
            # by default only, so open without it.
            opts.flags &= ~PORT_IMMINENT
            diag = new_diag()
            ret = lib.gpuar_port_open(ctypes.byref(handle),
                                      ctypes.byref(opts), ctypes.byref(diag))
        check(ret, "gpuar_port_open", diag)
        self._handle = handle
        self._forks = _forks[0]
        self.warning = diag.message.decode() if diag.code else None
        self.engine = lib.gpuar_engine_name(
            lib.gpuar_port_engine(handle)).decode()
        self.imminent = bool(lib.gpuar_port_imminent(handle))
        self.fd = lib.gpuar_port_fd(handle)
        self._ids = itertools.count(1)
        self._reactor = Reactor(self, watch_pri=self.imminent and
                                self.engine == "kernel")

    # ------------------------------------------------------------ plain calls
    def line(self) -> Line:
        handle = ctypes.c_void_p()
        ret = lib.gpuar_line_alloc(self._h, ctypes.byref(handle))
        if ret == -errno.ENOSPC:
            raise GpuarError(errno.ENOSPC, call="gpuar_line_alloc", message=(
                "the port's line limit is reached: free a line, or open "
                "the port with a larger Port(max_lines=...)" +
                (" (the kernel engine's is the module's max_lines "
                 "parameter)" if self.engine == "kernel" else "")))
        check(ret, "gpuar_line_alloc")
        return Line(self, handle)

    def next_user_data(self) -> int:
        return next(self._ids)

    def submit(self, line: Line, slot: int, target: int, *,
               plan: PlanLike = DEFAULT_PLAN, point: int = 1,
               user_data: Optional[int] = None, start_ns: int = 0) -> int:
        """Submit one word wait; returns its user_data (a fresh one unless
        given). The record comes from reap() or `async for` over the port."""
        wait = S.WordWait(user_data=self.next_user_data()
                          if user_data is None else
                          in_range("user_data", user_data),
                          target=in_range("target", target),
                          point=in_range("point", point),
                          start_ns=in_range("start_ns", start_ns),
                          line=line.id, slot=_slot(slot),
                          plan=as_plan(plan)._c)
        self._submit(wait)
        return wait.user_data

    def _submit(self, wait):
        check(lib.gpuar_submit_word_waits(self._h, ctypes.byref(wait), 1,
                                          None), "gpuar_submit_word_waits")

    def submit_fence(self, fd: int, *,
                     user_data: Optional[int] = None) -> int:
        """Wait for a sync_file fd to signal (the port takes its own
        reference); returns the user_data."""
        wait = S.FenceWait(user_data=self.next_user_data()
                           if user_data is None else
                           in_range("user_data", user_data),
                           fd=in_range("fd", fd, (1 << 31) - 1))
        check(lib.gpuar_submit_fence_waits(self._h, ctypes.byref(wait), 1,
                                           None), "gpuar_submit_fence_waits")
        return wait.user_data

    def cancel(self, user_data: int) -> int:
        """Cancel the pending waits carrying @user_data; returns how many.
        GpuarError EALREADY: it completed first (its record is queued);
        ENOENT: none pending."""
        return check(lib.gpuar_cancel(self._h, in_range("user_data",
                                                        user_data)),
                     "gpuar_cancel")

    def process(self) -> int:
        """Run the user engine's due checks; returns the records queued."""
        return check(lib.gpuar_port_process(self._h), "gpuar_port_process")

    def reap(self, max_records: int = REAP_BATCH) -> List[Record]:
        """The records ready now (never blocks); [] when none. Each call
        reaps into a buffer of its own (ctypes releases the GIL around the
        C call), so threads may reap one port at once."""
        count = min(max_records, REAP_BATCH)
        items = (self._reap_item * count)()
        ret, call, diag = self._reap_into(items, count)
        if ret == -errno.EAGAIN:
            return []
        check(ret, call, diag)
        return [self._record_of(item) for item in items[:ret]]

    _reap_item = S.Record

    def _reap_into(self, items, count):
        """Reap into @items: (return value, call name, diag or None)."""
        return lib.gpuar_port_reap(self._h, items, count, 0), "gpuar_port_reap", None

    @staticmethod
    def _record_of(item):
        return Record.from_c(item)

    def stats(self) -> Dict[str, object]:
        st = S.PortStats(size=ctypes.sizeof(S.PortStats))
        check(lib.gpuar_port_stats(self._h, ctypes.byref(st)),
              "gpuar_port_stats")
        return S.stats_fields(st)

    def point_stats(self, point: int) -> Dict[str, object]:
        st = S.PointStats(size=ctypes.sizeof(S.PointStats),
                          point=in_range("point", point))
        check(lib.gpuar_point_stats(self._h, ctypes.byref(st)),
              "gpuar_point_stats")
        out = S.stats_fields(st)
        out["has_prediction"] = bool(st.flags & 1)
        return out

    def close(self) -> None:
        """Cancel every pending wait and close the fd. Tasks awaiting the
        port get PortClosedError (errno EBADF), `async for` over it ends."""
        if self._handle:
            self._reactor.close()
            lib.gpuar_port_close(self._handle)
            self._handle = None

    @property
    def _h(self):
        if not self._handle:
            raise PortClosedError()
        return self._handle

    def __enter__(self) -> Port:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.gpuar_port_close(self._handle)

    # ---------------------------------------------------------------- asyncio
    async def wait(self, line: Line, slot: int, target: int, *,
                   plan: PlanLike = DEFAULT_PLAN, point: int = 1) -> Record:
        """Wait until @slot of @line reaches @target (wrapping order); returns
        the Record. Cancelling the awaiting task cancels the wait. A wait
        that outlives its plan's backstop is resubmitted with its original
        start (a word cannot fail: bound the wait with asyncio.wait_for)."""
        wait = S.WordWait(user_data=self.next_user_data(),
                          target=in_range("target", target),
                          point=in_range("point", point), line=line.id,
                          slot=_slot(slot), plan=await_plan(plan, "wait")._c)
        return await self._reactor.await_submitted(
            wait.user_data, lambda: self._submit(wait),
            resubmit=lambda start_ns: self._resubmit(wait, start_ns))

    def _resubmit(self, wait, start_ns):
        wait.start_ns = start_ns
        self._submit(wait)

    def __aiter__(self) -> AsyncIterator[Record]:
        return self._reactor.records()
