# SPDX-License-Identifier: MIT
"""Streams and events as frameworks hand them out, against the CUDA and
HIP test doubles. No framework is installed here: the stand-ins below
carry exactly the attributes torch's and CuPy's objects carry (torch:
Stream.cuda_stream, .device_index and .device.index, Event.cuda_event;
CuPy: Stream.ptr, .device_id, Event.ptr; the CUDA stream protocol's
__cuda_stream__() returning (version, handle)), and the handles are the
double's."""
import asyncio
import errno
import threading
import time

import pytest

import gpuar
import gpuar.cuda
import gpuar.hip
from test_vendor import PLAN, backend, double, run  # noqa: F401 (fixtures)
pytestmark = pytest.mark.usefixtures("event_loop_kind")


class TorchDevice:
    def __init__(self, index):
        self.type, self.index = "cuda", index


class TorchStream:
    def __init__(self, handle, device=0):
        self.cuda_stream = handle
        self.device_index = device
        self.device = TorchDevice(device)


class TorchEvent:
    def __init__(self, handle):
        self.cuda_event = handle


class CupyStream:
    def __init__(self, handle, device=0):
        self.ptr, self.device_id = handle, device


class CupyEvent:
    def __init__(self, handle):
        self.ptr = handle


class ProtocolStream:
    """An object speaking only the CUDA stream protocol."""

    def __init__(self, handle):
        self._handle = handle

    def __cuda_stream__(self):
        return (0, self._handle)


def module_of(double):
    return gpuar.cuda if double.name == "cuda" else gpuar.hip


@pytest.mark.parametrize("wrap", [TorchStream, CupyStream, ProtocolStream],
                         ids=["torch", "cupy", "protocol"])
def test_a_framework_stream_is_awaited(double, backend, wrap):
    s = double.stream()
    work_ends = time.monotonic_ns() + 5_000_000
    double.work(s, 5_000_000)
    rec = run(backend.stream_done(wrap(s), plan=PLAN))
    assert rec.status == 0 and rec.complete_ns >= work_ends
    assert rec.point == s       # the estimator's key: the raw handle


@pytest.mark.parametrize("wrap", [TorchEvent, CupyEvent],
                         ids=["torch", "cupy"])
def test_a_framework_event_is_awaited(double, backend, wrap):
    if not backend.has_event_await or not double.has_events:
        pytest.skip("no event awaits here")
    s = double.stream()
    work_ends = time.monotonic_ns() + 5_000_000
    double.work(s, 5_000_000)
    event = double.recorded_event(s)
    rec = run(backend.event_done(wrap(event), plan=PLAN))
    assert rec.status == 0 and rec.complete_ns >= work_ends


def test_something_else_is_a_type_error_naming_what_is_accepted(backend):
    with pytest.raises(TypeError, match="__cuda_stream__") as info:
        run(backend.stream_done(object()))
    assert ".ptr" in str(info.value)


def test_a_default_stream_is_the_legacy_stream_of_its_device(double,
                                                              backend):
    # torch.cuda.default_stream().cuda_stream and CuPy's Stream.null.ptr
    # are 0 (on ROCm builds too): the legacy null stream of the object's
    # device.
    work_ends = time.monotonic_ns() + 20_000_000
    double.legacy_work(20_000_000)
    rec = run(backend.stream_done(TorchStream(0), plan=PLAN))
    assert rec.status == 0 and rec.complete_ns >= work_ends
    assert rec.point == module_of(double).STREAM_LEGACY
    # A raw 0 stays refused: as a bare handle its meaning depends on how
    # the caller was compiled. The refusal names the handle to pass.
    with pytest.raises(gpuar.GpuarError) as info:
        run(backend.stream_done(0))
    assert info.value.code == gpuar.E_BACKEND
    assert "bare stream 0" in str(info.value)
    assert "STREAM_LEGACY" in str(info.value)


def test_a_default_stream_needs_its_device_current_in_the_loops_thread(
        double):
    # The legacy stream is the calling thread's current context's (CUDA)
    # or current device's (HIP): a device-1 object's 0 awaited while
    # device 0 is current would name device 0's legacy stream. Refused;
    # with device 1 current (torch.cuda.set_device) it is awaited.
    module = module_of(double)
    try:
        with double.on_device(0):
            with pytest.raises(gpuar.GpuarError) as info:
                run(module.stream_done(TorchStream(0, device=1), plan=PLAN))
        assert info.value.errno == errno.EXDEV
        assert "STREAM_LEGACY" in str(info.value)
        double.legacy_work(2_000_000, device=1)
        with double.on_device(1):
            rec = run(module.stream_done(TorchStream(0, device=1),
                                         plan=PLAN))
        assert rec.status == 0
    finally:
        module.close_default()


@pytest.mark.parametrize("wrap", [TorchStream, CupyStream],
                         ids=["torch", "cupy"])
def test_the_module_level_await_uses_the_objects_device(double, wrap):
    module = module_of(double)
    s = double.stream(device=1)
    double.work(s, 2_000_000)
    try:
        rec = run(module.stream_done(wrap(s, device=1), plan=PLAN))
        assert rec.status == 0
        # A raw handle names its device with device=.
        double.work(s, 1_000_000)
        assert run(module.stream_done(s, plan=PLAN, device=1)).status == 0
    finally:
        module.close_default()


def test_a_backend_refuses_another_devices_stream_before_the_driver(
        double, backend):
    s = double.stream(device=1)
    with pytest.raises(gpuar.GpuarError) as info:
        run(backend.stream_done(TorchStream(s, device=1), plan=PLAN))
    assert info.value.errno == errno.EXDEV
    assert "device 1" in str(info.value)


def test_the_module_level_await_serves_two_loops_at_once(double):
    # Two threads, each with its own loop, await at the same time: each
    # loop gets a backend (and a port) of its own.
    module = module_of(double)
    streams = [double.stream(), double.stream()]
    both_waiting = threading.Barrier(2)
    results = [None, None]

    def in_thread(i):
        async def main():
            double.work(streams[i], 50_000_000)
            task = asyncio.create_task(
                module.stream_done(streams[i], plan=PLAN))
            await asyncio.sleep(0.02)       # both awaits are pending
            await asyncio.get_running_loop().run_in_executor(
                None, both_waiting.wait, 5)
            return await task
        try:
            results[i] = run(main())
        except BaseException as exc:        # reported by the main thread
            results[i] = exc

    threads = [threading.Thread(target=in_thread, args=(i,))
               for i in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        module.close_default()
    for rec in results:
        assert isinstance(rec, gpuar.Record), rec
        assert rec.status == 0
