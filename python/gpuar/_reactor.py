# SPDX-License-Identifier: MIT
"""A port on an asyncio loop: the port fd in loop.add_reader.

When the fd turns readable the reactor runs the engine (the user engine's
process call: its fd is also readable when a check is due) and reaps the
records it counted without blocking, then hands each record to the task awaiting
its user_data, or to `async for` over the port when no task claimed it.
The reader is registered only while someone waits, so an idle port costs
the loop nothing. Nothing here blocks: every libgpuar call has timeout 0.
Closing ends what is pending: awaits raise PortClosedError, `async for`
ends.

Imminent readiness (Port(imminent=True), the default): the user engine's
fd turns readable at a predicted wait's early wake, and the same callback's
process and reap claim the wait and watch its word in the loop's thread
for at most the port's busy_read_us. The kernel engine's fd raises
EPOLLPRI instead, which add_reader (POLLIN) does not ask for: the reactor
puts the port fd in a private epoll for EPOLLIN | EPOLLPRI and gives the
loop that epoll fd, so any loop that takes an fd (asyncio's, uvloop's)
hears of both.
"""
import asyncio
import collections
import errno
import logging
import select

from .errors import GpuarError, PortClosedError
from .record import TIMEOUT

REAP_BATCH = 64             # Port.reap's most records per call

_log = logging.getLogger("gpuar")
_CLOSED = object()          # an `async for` step's result: the port closed


class _Await:
    __slots__ = ("future", "resubmit")

    def __init__(self, future, resubmit):
        self.future = future
        self.resubmit = resubmit


class Reactor:
    def __init__(self, port, watch_pri=False):
        self.port = port
        self.loop = None
        self.reading = False
        self.awaits = {}            # user_data -> _Await
        self.dropped = set()        # user_data of cancelled awaits
        self.unclaimed = collections.deque()
        self.listeners = []         # futures of `async for` steps
        self.closed = False
        self.epoll = None           # the kernel engine's EPOLLPRI watch
        self.fd = port.fd
        if watch_pri:
            self.epoll = select.epoll()
            self.epoll.register(port.fd, select.EPOLLIN | select.EPOLLPRI)
            self.fd = self.epoll.fileno()

    # ------------------------------------------------------------ the loop
    def _bind(self):
        loop = asyncio.get_running_loop()
        if loop is not self.loop:
            if self.awaits or self.listeners:
                raise RuntimeError("gpuar: a port serves one event loop at "
                                   "a time")
            self._stop_reading()
            self.loop = loop
        return loop

    def _start_reading(self):
        if not self.reading:
            self.loop.add_reader(self.fd, self._on_readable)
            self.reading = True

    def _stop_reading(self):
        if self.reading:
            if not self.loop.is_closed():
                self.loop.remove_reader(self.fd)
            self.reading = False

    def _idle(self):
        return not self.awaits and not self.listeners

    def _on_readable(self):
        try:
            if self.epoll is not None:
                self.epoll.poll(0)      # level-triggered: only to empty it
            # process() returns how many records are queued (after
            # claiming, on an imminent port, when none was). A reap of an
            # empty queue would claim again and spin a lease in the loop:
            # reap only what process() counted, until a short batch.
            queued = self.port.process()
            while queued > 0:
                records = self.port.reap()
                for rec in records:
                    self._dispatch(rec)
                if len(records) < REAP_BATCH:
                    break
        except GpuarError as exc:
            self._fail_all(exc)
        if self._idle() and not self.dropped:
            self._stop_reading()

    def _dispatch(self, rec):
        pending = self.awaits.pop(rec.user_data, None)
        if pending is None:
            if rec.user_data in self.dropped:
                self.dropped.discard(rec.user_data)
            else:
                self.unclaimed.append(rec)
                self._wake_listener()
            return
        fut = pending.future
        if fut.done():
            return
        if rec.outcome == TIMEOUT and pending.resubmit:
            try:
                pending.resubmit(rec.start_ns)
            except GpuarError as exc:
                fut.set_exception(exc)
                return
            self.awaits[rec.user_data] = pending
        elif rec.status < 0:
            exc = GpuarError(-rec.status, call=f"wait ({rec.outcome_name}"
                             + (f", {rec.vendor_name}" if rec.vendor_name
                                else "") + ")")
            exc.record = rec
            fut.set_exception(exc)
        else:
            fut.set_result(rec)

    def _wake_listener(self):
        while self.listeners and self.unclaimed:
            fut = self.listeners.pop(0)
            if not fut.done():
                fut.set_result(self.unclaimed.popleft())

    def _fail_all(self, exc):
        for pending in self.awaits.values():
            if not pending.future.done():
                pending.future.set_exception(exc)
        self.awaits.clear()
        for fut in self.listeners:
            if not fut.done():
                fut.set_exception(exc)
        self.listeners.clear()

    # -------------------------------------------------------------- awaits
    async def await_submitted(self, user_data, submit, resubmit=None):
        """Submit (a callable that submits a wait carrying @user_data) and
        await its record."""
        loop = self._bind()
        if self.closed:
            raise PortClosedError()
        submit()
        fut = loop.create_future()
        self.awaits[user_data] = _Await(fut, resubmit)
        self._start_reading()
        try:
            return await fut
        except asyncio.CancelledError:
            self._cancel(user_data)
            raise

    def _cancel(self, user_data):
        """The awaiting task is being cancelled: cancel its wait. Runs in
        an `except CancelledError`, so a failure is logged, never raised
        in the cancellation's place."""
        if self.awaits.pop(user_data, None) is None or not self.port._handle:
            return
        try:
            self.port.cancel(user_data)
        except GpuarError as exc:
            if exc.errno == errno.ENOENT:
                return          # nothing pending, no record will come
            if exc.errno != errno.EALREADY:
                _log.warning("gpuar: cancelling the wait of user_data %d "
                             "failed (its record is dropped if it comes): "
                             "%s", user_data, exc)
        # A CANCELLED record, or the completion that won the race, is queued
        # or on its way: the reader (still registered) reaps and drops it.
        self.dropped.add(user_data)

    async def records(self):
        """Records of waits no task awaits (Port.submit), in completion
        order, until the port closes: break out of the loop to stop."""
        loop = self._bind()
        while True:
            if self.unclaimed:
                yield self.unclaimed.popleft()
                continue
            if self.closed:
                return
            fut = loop.create_future()
            self.listeners.append(fut)
            self._start_reading()
            try:
                rec = await fut
            except asyncio.CancelledError:
                if fut in self.listeners:
                    self.listeners.remove(fut)
                if fut.done() and not fut.cancelled():
                    self.unclaimed.appendleft(fut.result())
                raise
            finally:
                if self._idle() and not self.dropped:
                    self._stop_reading()
            if rec is _CLOSED:
                return
            yield rec

    def close(self):
        """The port is closing (or its backend keeps it but is closed): its
        awaits raise PortClosedError, `async for` ends; later ones too."""
        self.closed = True
        for pending in self.awaits.values():
            if not pending.future.done():
                pending.future.set_exception(PortClosedError())
        self.awaits.clear()
        for fut in self.listeners:
            if not fut.done():
                fut.set_result(_CLOSED)
        self.listeners.clear()
        self.dropped.clear()
        if self.loop is not None:
            self._stop_reading()
        if self.epoll is not None:
            self.epoll.close()

