# SPDX-License-Identifier: MIT
"""CUDA and HIP awaits against the vendor test doubles (selftests/doubles):
a stream's work ends, a stream fails, the task is cancelled, more streams
than a line has slots; event awaits where the library has them."""
import asyncio
import contextlib
import ctypes
import errno
import time
import os

import pytest

import gpuar
import gpuar.cuda
import gpuar.hip
from conftest import DOUBLES, ENGINE
from gpuar._lib import lib as libgpuar

PLAN = "flag:park_us=200,backstop_us=1000000"
pytestmark = pytest.mark.usefixtures("event_loop_kind")
vp = ctypes.c_void_p


class Double:
    """A vendor test double, loaded into this process (the backend's
    dlopen of the same path gets the same library): its streams, and its
    controls gpuar_fake_<name>_work/_fault/_reset."""
    name = env = path = None
    launch_failed = 719         # CUDA_ERROR_LAUNCH_FAILED, hipErrorLaunchFailure
    event_create = None         # the double's event constructor
    init = None                 # cuInit, hipInit

    def __init__(self, lib):
        self.lib = lib
        # As the program that made the streams would have: a test that
        # makes a stream before any backend is opened needs it.
        assert getattr(lib, self.init)(0) == 0
        self.fake = {op: getattr(lib, f"gpuar_fake_{self.name}_{op}")
                     for op in ("work", "fault", "reset")}
        self.fake["work"].argtypes = [vp, ctypes.c_uint64]
        self.fake["fault"].argtypes = [vp, ctypes.c_uint]

    def work(self, stream, ns):
        assert self.fake["work"](stream, ns) == 0

    def fault(self, stream):
        assert self.fake["fault"](stream, self.launch_failed) == 0

    def reset(self):
        self.fake["reset"]()

    @property
    def has_events(self):
        return hasattr(self.lib, self.event_create)


class CudaDouble(Double):
    name, env, path = "cuda", "GPUAR_CUDA_LIBRARY", "cuda/libcuda.so.1"
    event_create, init = "cuEventCreate", "cuInit"

    def __init__(self, lib):
        super().__init__(lib)
        for fn in ("cuStreamCreate", "cuEventCreate"):
            getattr(lib, fn).argtypes = [ctypes.POINTER(vp), ctypes.c_uint]
        lib.cuEventRecord.argtypes = [vp, vp]
        lib.cuCtxPushCurrent_v2.argtypes = [vp]

    def backend(self):
        return gpuar.cuda.Cuda(0, engine=ENGINE)

    def stream(self, device=0):
        s = vp()
        assert self._in_context(
            lambda: self.lib.cuStreamCreate(ctypes.byref(s), 1), device) == 0
        return s.value

    @contextlib.contextmanager
    def on_device(self, device):
        """@device's primary context current in the calling thread."""
        ctx, popped = vp(), vp()
        assert self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx),
                                                 device) == 0
        assert self.lib.cuCtxPushCurrent_v2(ctx) == 0
        try:
            yield
        finally:
            self.lib.cuCtxPopCurrent_v2(ctypes.byref(popped))
            self.lib.cuDevicePrimaryCtxRelease_v2(device)

    def _in_context(self, fn, device=0):
        with self.on_device(device):
            return fn()

    def legacy_work(self, ns, device=0):
        """Work on the legacy (null) stream of @device's primary context."""
        assert self._in_context(lambda: self.fake["work"](1, ns),
                                device) == 0

    def recorded_event(self, stream):
        e = vp()

        def make():
            assert self.lib.cuEventCreate(ctypes.byref(e), 0) == 0
            return self.lib.cuEventRecord(e, stream)
        assert self._in_context(make) == 0
        return e.value


class HipDouble(Double):
    name, env, path = "hip", "GPUAR_HIP_LIBRARY", "hip/libamdhip64.so.6"
    event_create, init = "hipEventCreateWithFlags", "hipInit"

    def __init__(self, lib):
        super().__init__(lib)
        lib.hipStreamCreateWithFlags.argtypes = [ctypes.POINTER(vp),
                                                 ctypes.c_uint]
        if self.has_events:
            lib.hipEventCreateWithFlags.argtypes = [ctypes.POINTER(vp),
                                                    ctypes.c_uint]
            lib.hipEventRecord.argtypes = [vp, vp]

    def recorded_event(self, stream):
        e = vp()
        assert self.lib.hipEventCreateWithFlags(ctypes.byref(e), 0) == 0
        assert self.lib.hipEventRecord(e, stream) == 0
        return e.value

    def backend(self):
        return gpuar.hip.Hip(0, engine=ENGINE)

    def stream(self, device=0):
        s = vp()
        assert self.lib.hipSetDevice(device) == 0
        try:
            assert self.lib.hipStreamCreateWithFlags(ctypes.byref(s), 1) == 0
        finally:
            self.lib.hipSetDevice(0)
        return s.value

    def legacy_work(self, ns, device=0):
        """Work on the null stream, 0, of @device as a program built for
        the legacy default stream enqueues it (the double knows no
        handle 1: that is gpuar's, which the backend turns into 0)."""
        with self.on_device(device):
            assert self.fake["work"](None, ns) == 0

    @contextlib.contextmanager
    def on_device(self, device):
        """@device current in the calling thread, as hipSetDevice (or
        torch.cuda.set_device on ROCm) makes it."""
        assert self.lib.hipSetDevice(device) == 0
        try:
            yield
        finally:
            self.lib.hipSetDevice(0)


@pytest.fixture(params=[CudaDouble, HipDouble], ids=["cuda", "hip"])
def double(request, monkeypatch):
    cls = request.param
    path = os.environ.get(cls.env) or str(DOUBLES / cls.path)
    monkeypatch.setenv(cls.env, path)
    d = cls(ctypes.CDLL(path))
    d.reset()
    yield d
    d.reset()


@pytest.fixture
def backend(double):
    b = double.backend()
    yield b
    b.close()


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_await_a_stream(double, backend):
    s = double.stream()
    work_ends = time.monotonic_ns() + 5_000_000
    double.work(s, 5_000_000)
    rec = run(backend.stream_done(s, plan=PLAN))
    assert rec.status == 0 and rec.vendor_status == 0
    # Timed from the work's start: the await itself begins later.
    assert rec.complete_ns >= work_ends
    assert backend.library.endswith(double.path.split("/")[1])


def gate(backend, stream):
    """Hold @stream's later work until the returned function is called:
    the stream waits (the backend's stream_wait_word) on a word of a slot
    taken from the backend's pool for good."""
    if not backend._free:
        backend._grow()
    slot = backend._free.pop(0)
    wait_word = getattr(libgpuar, backend.prefix + "_stream_wait_word")
    wait_word.restype = ctypes.c_int
    wait_word.argtypes = [vp, ctypes.c_uint32, vp, ctypes.c_uint64, vp]
    assert wait_word(slot.line, slot.index, stream, 1, None) == 0
    words = libgpuar.gpuar_vendor_line_words(slot.line)

    def open_gate():
        words[slot.index] = 1
    return open_gate


def test_a_failed_stream_raises_with_the_vendor_status(double, backend):
    # The fault runs only once the await is in: a fault that ran first
    # would fail the await's own store at submission, an error with no
    # record (what a loaded machine used to make of a 20 ms head start).
    s = double.stream()
    open_gate = gate(backend, s)
    double.fault(s)

    async def main():
        task = asyncio.create_task(backend.stream_done(
            s, plan="flag:park_us=200,backstop_us=2000"))
        while not task.done() and backend.port.stats()["pending"] == 0:
            await asyncio.sleep(0)
        open_gate()
        return await task

    with pytest.raises(gpuar.GpuarError) as info:
        run(main())
    assert info.value.errno == errno.EIO
    assert info.value.record.vendor_status == double.launch_failed


def test_stream_zero_is_refused_with_the_backend_code(backend):
    with pytest.raises(gpuar.GpuarError) as info:
        run(backend.stream_done(0))
    assert info.value.code == gpuar.E_BACKEND


def test_cancelling_a_stream_await(double, backend):
    s = double.stream()
    double.work(s, 50_000_000)

    async def main():
        task = asyncio.create_task(backend.stream_done(s, plan=PLAN))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # the slot is free again, the stream can be awaited once more
        return await backend.stream_done(s, plan=PLAN)

    assert run(main()).status == 0
    assert backend.port.stats()["outcomes"][gpuar.CANCELLED] == 1


def test_a_timed_out_await_keeps_its_slot_until_its_store_lands(double,
                                                                 backend):
    # L3-13: wait_for cancels A's await while A's store is still pending.
    # Handing A's slot to B would get B refused (EBUSY, "slot 0 still has
    # stores pending from another stream"); B gets another slot, and A's
    # slot returns to the pool once its store has landed.
    a, b = double.stream(), double.stream()
    double.work(a, 200_000_000)

    async def main():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(backend.stream_done(a, plan=PLAN), 0.02)
        rec_b = await backend.stream_done(b, plan=PLAN)
        await asyncio.sleep(0.3)        # A's work ends, its store lands
        rest = [double.stream() for _ in range(8)]
        return rec_b, await asyncio.gather(
            *(backend.stream_done(s, plan=PLAN) for s in rest))

    rec_b, records = run(main())
    assert rec_b.status == 0
    assert [r.status for r in records] == [0] * 8
    assert backend.port.stats()["lines"] == 1


def test_a_backend_closed_with_a_line_it_must_keep_ends_its_awaits(
        double, backend, monkeypatch):
    # L3-17: the line's store is pending past line_free's timeout, so
    # close() keeps the port (and the line) open; the task awaiting the
    # stream gets PortClosedError instead of waiting forever.
    import gpuar._vendor
    monkeypatch.setattr(gpuar._vendor, "LINE_FREE_TIMEOUT_NS", 1_000_000)
    s = double.stream()
    double.work(s, 200_000_000)

    async def main():
        task = asyncio.create_task(backend.stream_done(s, plan=PLAN))
        await asyncio.sleep(0.01)
        with pytest.warns(ResourceWarning):
            backend.close()
        with pytest.raises(gpuar.PortClosedError):
            await asyncio.wait_for(task, 1)
        with pytest.raises(gpuar.PortClosedError):
            await backend.stream_done(s)

    run(main())


def test_a_block_plan_is_refused_in_an_await(double, backend):
    # L3-15: "block" synchronizes the stream in the calling thread, which
    # in a coroutine is the loop's: refused before anything is enqueued.
    s = double.stream()
    double.work(s, 200_000_000)
    with pytest.raises(gpuar.GpuarError) as info:
        run(backend.stream_done(s, plan="block"))
    assert info.value.errno == errno.EINVAL
    assert info.value.code == gpuar.E_INVALID_PLAN
    assert "block" in str(info.value)


class OpenedIn:
    """Records the thread each Backend.__init__ and line_free runs in,
    and slows both down as a driver's cuInit can be: an open is held
    until the loop has turned TURNS times meanwhile (ticks_during counts
    them), so one made in the loop's thread would hold the loop and end
    after 10 s with no turns counted."""
    TURNS = 5

    def __init__(self, monkeypatch, prefix):
        import threading
        import gpuar._vendor
        from gpuar._lib import lib
        self.opens, self.frees = [], []
        self.turned = threading.Event()
        init = gpuar._vendor.Backend.__init__

        def slow_init(backend, *args, **kw):
            self.opens.append(threading.get_ident())
            self.turned.wait(10)
            init(backend, *args, **kw)
        monkeypatch.setattr(gpuar._vendor.Backend, "__init__", slow_init)
        free = getattr(lib, prefix + "_line_free")

        def slow_free(*args):
            self.frees.append(threading.get_ident())
            time.sleep(0.1)
            return free(*args)
        monkeypatch.setattr(lib, prefix + "_line_free", slow_free)


async def ticks_during(coro, seen):
    """Await @coro while a task counts the loop's turns: a loop blocked in
    @coro counts none. @seen's held opens go on after OpenedIn.TURNS."""
    count = [0]
    seen.turned.clear()

    async def tick():
        while True:
            count[0] += 1
            if count[0] - before >= OpenedIn.TURNS:
                seen.turned.set()
            await asyncio.sleep(0.005)
    before = 0
    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0)
    before = count[0]
    try:
        result = await coro
    finally:
        ticker.cancel()
    return result, count[0] - before


def test_the_module_level_backend_opens_off_the_loop(double, monkeypatch):
    # L3-15: cuInit and the primary context's retain run in the loop's
    # executor, not in the loop; the loop keeps turning meanwhile.
    import threading
    module = gpuar.cuda if double.name == "cuda" else gpuar.hip
    seen = OpenedIn(monkeypatch, f"gpuar_{double.name}")
    s = double.stream()
    double.work(s, 1_000_000)
    try:
        rec, ticks = run(ticks_during(module.stream_done(s, plan=PLAN),
                                      seen))
        assert rec.status == 0
        assert seen.opens and threading.get_ident() not in seen.opens
        assert ticks >= OpenedIn.TURNS
    finally:
        module.close_default()


def test_a_backend_opens_and_closes_off_the_loop(double, monkeypatch):
    # L3-15: Backend.open() and aclose() (async with) run the blocking
    # parts in the executor: opening, and freeing lines (each may wait up
    # to a second for the device).
    import threading
    cls = gpuar.cuda.Cuda if double.name == "cuda" else gpuar.hip.Hip
    seen = OpenedIn(monkeypatch, cls.prefix)
    s = double.stream()
    double.work(s, 1_000_000)

    async def main():
        backend, ticks = await ticks_during(cls.open(0, engine=ENGINE),
                                            seen)
        assert ticks >= OpenedIn.TURNS
        async with backend:
            rec = await backend.stream_done(s, plan=PLAN)
        with pytest.raises(gpuar.PortClosedError):
            await backend.stream_done(s)
        return rec

    assert run(main()).status == 0
    loop_thread = threading.get_ident()
    assert len(seen.opens) == 1 and loop_thread not in seen.opens
    assert seen.frees and loop_thread not in seen.frees


def test_more_streams_than_a_line_has_slots(double, backend):
    streams = [double.stream() for _ in range(20)]
    for i, s in enumerate(streams):
        double.work(s, (20 - i) * 500_000)

    async def main():
        return await asyncio.gather(*(backend.stream_done(s, plan=PLAN)
                                      for s in streams))

    records = run(main())
    assert [r.status for r in records] == [0] * 20
    assert backend.port.stats()["lines"] == 3


def test_module_level_stream_done_uses_device_zero(double):
    module = gpuar.cuda if double.name == "cuda" else gpuar.hip
    s = double.stream()
    double.work(s, 1_000_000)
    try:
        assert run(module.stream_done(s, plan=PLAN)).status == 0
    finally:
        module.close_default()


def test_event_await_where_the_library_has_it(double, backend):
    if not backend.has_event_await:
        with pytest.raises(NotImplementedError):
            run(backend.event_done(1))
        pytest.skip(f"{backend.prefix}_await_event: not in this libgpuar")
    if not double.has_events:
        pytest.skip(f"the {double.name} double has no events")
    s = double.stream()
    work_ends = time.monotonic_ns() + 5_000_000
    double.work(s, 5_000_000)
    event = double.recorded_event(s)
    rec = run(backend.event_done(event, plan=PLAN))
    assert rec.status == 0 and rec.complete_ns >= work_ends
