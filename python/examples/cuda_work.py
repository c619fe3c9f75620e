# SPDX-License-Identifier: MIT
"""Real CUDA work for the example server, without torch or a compiler.

The driver (libcuda.so.1, or GPUAR_CUDA_LIBRARY: the test double) through
ctypes, running gpuar-bench's hand-written PTX kernel gpuar_bench_spin
(tools/bench/bench_cuda_kernels.ptx): one thread that spins on the GPU's
timer for a given time, then stores into a registered host page. One
stream per request in flight.
"""
import ctypes
import mmap
import os
import pathlib

PTX = (pathlib.Path(__file__).resolve().parents[2] / "tools" / "bench" /
       "bench_cuda_kernels.ptx")
NOT_READY = 600                 # CUDA_ERROR_NOT_READY
HOST_REGISTER_PORTABLE_DEVICEMAP = 0x1 | 0x2
vp, u64 = ctypes.c_void_p, ctypes.c_uint64


class CudaWork:
    def __init__(self, streams, ptx=PTX):
        self.cu = ctypes.CDLL(os.environ.get("GPUAR_CUDA_LIBRARY",
                                             "libcuda.so.1"))
        self.ctx, self.module, self.spin = vp(), vp(), vp()
        self._ok(self.cu.cuInit(0), "cuInit")
        self._ok(self.cu.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), 0),
                 "cuDevicePrimaryCtxRetain")
        self._ok(self.cu.cuCtxPushCurrent_v2(self.ctx), "cuCtxPushCurrent")
        self._ok(self.cu.cuModuleLoadData(ctypes.byref(self.module),
                                          ctypes.c_char_p(ptx.read_bytes())),
                 "cuModuleLoadData")
        self._ok(self.cu.cuModuleGetFunction(ctypes.byref(self.spin),
                                             self.module, b"gpuar_bench_spin"),
                 "cuModuleGetFunction")
        # the kernel's stamp words: a registered page, 16 bytes a stream
        self.page = mmap.mmap(-1, mmap.PAGESIZE)
        self.host = ctypes.addressof(ctypes.c_char.from_buffer(self.page))
        self._ok(self.cu.cuMemHostRegister_v2(
            vp(self.host), ctypes.c_size_t(mmap.PAGESIZE),
            HOST_REGISTER_PORTABLE_DEVICEMAP), "cuMemHostRegister")
        self.device = u64()
        self._ok(self.cu.cuMemHostGetDevicePointer_v2(
            ctypes.byref(self.device), vp(self.host), 0),
            "cuMemHostGetDevicePointer")
        self.free = []
        for i in range(streams):
            s = vp()
            self._ok(self.cu.cuStreamCreate(ctypes.byref(s), 1),
                     "cuStreamCreate")
            self.free.append((s.value, i))
        self.all = list(self.free)
        self.seq = 0

    @staticmethod
    def _ok(rc, what):
        if rc:
            raise RuntimeError(f"{what}: CUresult {rc}")

    def start(self, us):
        """Launch @us of work on a free stream; returns (stream, index)."""
        stream, i = job = self.free.pop()
        self.seq += 1
        args = [u64(us * 1000), u64(self.device.value + 16 * i),
                u64(self.seq)]
        params = (vp * 3)(*(ctypes.cast(ctypes.byref(a), vp) for a in args))
        self._ok(self.cu.cuLaunchKernel(self.spin, 1, 1, 1, 1, 1, 1, 0,
                                        vp(stream), params, None),
                 "cuLaunchKernel")
        return job

    def done(self, job):
        """A status query, as a polling server makes it."""
        rc = self.cu.cuStreamQuery(vp(job[0]))
        if rc not in (0, NOT_READY):
            self._ok(rc, "cuStreamQuery")
        return rc == 0

    def synchronize(self, job):
        """A blocking synchronize, in the calling thread (an executor's:
        it makes the context current there first)."""
        popped = vp()
        self._ok(self.cu.cuCtxPushCurrent_v2(self.ctx), "cuCtxPushCurrent")
        try:
            self._ok(self.cu.cuStreamSynchronize(vp(job[0])),
                     "cuStreamSynchronize")
        finally:
            self.cu.cuCtxPopCurrent_v2(ctypes.byref(popped))

    def release(self, job):
        self.free.append(job)

    def close(self):
        for stream, _ in self.all:
            self.cu.cuStreamSynchronize(vp(stream))
            self.cu.cuStreamDestroy_v2(vp(stream))
        self.cu.cuMemHostUnregister(vp(self.host))
        self.cu.cuModuleUnload(self.module)
        popped = vp()
        self.cu.cuCtxPopCurrent_v2(ctypes.byref(popped))
        self.cu.cuDevicePrimaryCtxRelease_v2(0)
