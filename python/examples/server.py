#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A request server that awaits "GPU" work, two ways, and what each costs.

Each request on a loopback TCP socket ("work <us>\\n") starts work on the
"GPU" -- the soft producer, a thread that stores a word when the work is
done, as a stream's memory operation would, or with --cuda a kernel on a
CUDA stream (cuda_work.py) -- and answers when it is done. The server
awaits the work either

  gpuar  await port.wait(...) / stream_done(...): the loop sleeps in
         epoll on the port fd until the work is (nearly) done;
  poll   the common pattern: check the word (cuStreamQuery) and
         asyncio.sleep(0) until done, so the loop never sleeps,

and prints the process's CPU time per request for each. The client runs in
the same loop and the same process, so its CPU is in both numbers alike.
On the soft producer it also prints, for the awaits, where the time in
the wait went past the work: from the store to the record (the port's
detection: about a spin's latency with imminent readiness, the port's
default; up to the plan's park interval without it, since a wake-up that
comes after the store halves the point's prediction and later waits park
through the rest of the work) and from the record to the task (the
loop's dispatch).

    GPUAR_LIBRARY=build/lib/libgpuar.so.0 PYTHONPATH=python \\
        python3 python/examples/server.py --requests 200 --work-us 2000
"""
import argparse
import asyncio
import statistics
import time

import gpuar


class SoftGpu:
    """Work on the soft producer: slot i of a line per in-flight request."""

    def __init__(self, slots, args):
        self.plan = args.plan
        self.port = gpuar.Port(imminent=args.imminent)
        self.producer = gpuar.SoftProducer()
        self.lines = [self.port.line() for _ in range((slots + 7) // 8)]
        self.free = [(line, s) for line in self.lines for s in range(8)]
        self.seq = {}
        self.seen, self.resumed = [], []    # ns: store -> record -> task

    def start(self, us):
        line, slot = self.free.pop()
        target = self.seq.get((line.id, slot), 0) + 1
        self.seq[(line.id, slot)] = target
        self.producer.store_after(line, slot, target, us * 1000)
        return line, slot, target

    async def wait(self, job, mode):
        line, slot, target = job
        try:
            if mode == "gpuar":
                rec = await self.port.wait(line, slot, target, plan=self.plan)
                stored = self.producer.stored_at(line, slot, target)
                self.seen.append(rec.complete_ns - stored)
                self.resumed.append(gpuar.now_ns() - rec.complete_ns)
            else:
                while line[slot] < target:
                    await asyncio.sleep(0)
        finally:
            self.free.append((line, slot))

    def breakdown(self):
        """Where a request's time in the wait went, past the work."""
        if not self.seen:
            return ""
        return (f"; in the wait, p50: store to record "
                f"{statistics.median(self.seen) / 1e3:.0f} us, record to "
                f"task {statistics.median(self.resumed) / 1e3:.0f} us")

    def close(self):
        self.producer.close()       # before the port: it stores into its lines
        self.port.close()


class CudaGpu:
    """A CUDA kernel per request, awaited through gpuar.cuda."""

    def __init__(self, slots, args):
        from cuda_work import CudaWork
        import gpuar.cuda
        self.plan = args.plan
        self.work = CudaWork(slots)
        self.backend = gpuar.cuda.Cuda(0, imminent=args.imminent)

    def start(self, us):
        return self.work.start(us)

    async def wait(self, job, mode):
        try:
            if mode == "gpuar":
                await self.backend.stream_done(job[0], plan=self.plan)
            else:
                while not self.work.done(job):
                    await asyncio.sleep(0)
        finally:
            self.work.release(job)

    def breakdown(self):
        return ""

    def close(self):
        self.backend.close()
        self.work.close()


async def serve_and_load(mode, args):
    gpu = (CudaGpu if args.cuda else SoftGpu)(args.concurrency, args)

    async def handle(reader, writer):
        while line := await reader.readline():
            job = gpu.start(int(line.split()[1]))
            await gpu.wait(job, mode)
            writer.write(b"done\n")
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    addr = server.sockets[0].getsockname()
    latencies = []

    async def client(count):
        reader, writer = await asyncio.open_connection(*addr)
        for _ in range(count):
            start = time.monotonic()
            writer.write(f"work {args.work_us}\n".encode())
            await writer.drain()
            assert await reader.readline() == b"done\n"
            latencies.append(time.monotonic() - start)
        writer.close()

    per_client = args.requests // args.concurrency
    cpu0, wall0 = time.process_time(), time.monotonic()
    await asyncio.gather(*(client(per_client)
                           for _ in range(args.concurrency)))
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    server.close()
    await server.wait_closed()
    n = len(latencies)
    print(f"{mode:5}: {n} requests of {args.work_us} us work, "
          f"{args.concurrency} at a time, {wall:.2f} s: "
          f"CPU {cpu * 1e6 / n:.0f} us/request "
          f"({100 * cpu / wall:.0f}% of a core), "
          f"latency p50 {statistics.median(latencies) * 1e6:.0f} us"
          + gpu.breakdown(), flush=True)
    gpu.close()
    return cpu / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--work-us", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--cuda", action="store_true",
                    help="CUDA kernels on device 0 instead of the soft "
                    "producer (GPUAR_CUDA_LIBRARY: another driver library)")
    ap.add_argument("--plan", default=gpuar.DEFAULT_PLAN,
                    help="the awaits' wait plan (default: %(default)s)")
    ap.add_argument("--imminent", default=None,
                    action=argparse.BooleanOptionalAction,
                    help="imminent readiness (default: the port's)")
    args = ap.parse_args()
    costs = {mode: asyncio.run(serve_and_load(mode, args))
             for mode in ("gpuar", "poll")}
    print(f"polling costs {costs['poll'] / costs['gpuar']:.1f}x the CPU "
          "per request of awaiting the port")


if __name__ == "__main__":
    main()
