#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An inference-style token server over ZeroMQ, and its inter-token latency
for three ways of waiting for the "GPU".

Clients (DEALER sockets) send "generate <tokens> <step_us>"; the server (a
ROUTER socket on loopback TCP, zmq.asyncio in the server's asyncio loop)
runs one "decode step" of <step_us> per token on the GPU -- the soft
producer, a thread that stores a word when the step is done, or with
--cuda a kernel on a CUDA stream (cuda_work.py) -- and streams each token
back as soon as its step is done. Between steps it waits in one of three
ways:

  gpuar   await port.wait(...) / stream_done(...): the loop sleeps in
          epoll on the port fd (imminent readiness: it is woken just
          before the predicted end and watches the word);
  poll    check the word (cuStreamQuery) and asyncio.sleep(0) until done:
          the loop never sleeps;
  thread  a blocking wait in the loop's executor (cuStreamSynchronize,
          or a thread checking the word and yielding, as a spinning
          synchronize does), which wakes the loop through its self-pipe.

For each it prints the inter-token latency the clients saw (the gap
between consecutive tokens of one request: the step, plus what waiting
and sending cost) and the server's CPU time per token. The clients run in
a process of their own (spawned), so neither their CPU nor the GIL they
would hold is the server's.

    GPUAR_LIBRARY=build/lib/libgpuar.so.0 PYTHONPATH=python \\
        python3 python/examples/token_server.py --requests 8 --tokens 64
"""
import argparse
import asyncio
import multiprocessing
import statistics
import time

import zmq
import zmq.asyncio

import gpuar

MODES = ("gpuar", "poll", "thread")


class SoftGpu:
    """Decode steps on the soft producer: one slot per request."""

    def __init__(self, slots):
        self.port, self.producer = gpuar.Port(), gpuar.SoftProducer()
        self.lines = [self.port.line() for _ in range((slots + 7) // 8)]
        self.free = [(line, s) for line in self.lines for s in range(8)]

    def stream(self):
        return self.free.pop()

    def release(self, stream):
        self.free.append(stream)

    def step(self, stream, us):
        """The next step on @stream: its slot holds the last one's number
        (each step waits for the one before)."""
        line, slot = stream
        target = line[slot] + 1
        self.producer.store_after(line, slot, target, us * 1000)
        return line, slot, target

    async def wait(self, job, mode):
        line, slot, target = job
        if mode == "gpuar":
            await self.port.wait(line, slot, target, point=slot + 1)
        elif mode == "poll":
            while line[slot] < target:
                await asyncio.sleep(0)
        else:
            await asyncio.get_running_loop().run_in_executor(
                None, self._block, line, slot, target)

    @staticmethod
    def _block(line, slot, target):
        while line[slot] < target:
            time.sleep(0)           # yield, as a spinning synchronize does

    def close(self):
        self.producer.close()       # before the port: it stores into its lines
        self.port.close()


class CudaGpu:
    """A CUDA kernel per decode step, one stream per request."""

    def __init__(self, slots):
        from cuda_work import CudaWork
        import gpuar.cuda
        self.work = CudaWork(slots)
        self.backend = gpuar.cuda.Cuda(0)

    def stream(self):
        return None                 # a stream per step: CudaWork's pool

    def release(self, stream):
        pass

    def step(self, stream, us):
        return self.work.start(us)

    async def wait(self, job, mode):
        try:
            if mode == "gpuar":
                await self.backend.stream_done(job[0])
            elif mode == "poll":
                while not self.work.done(job):
                    await asyncio.sleep(0)
            else:
                await asyncio.get_running_loop().run_in_executor(
                    None, self.work.synchronize, job)
        finally:
            self.work.release(job)

    def close(self):
        self.backend.close()
        self.work.close()


async def serve(sock, gpu, mode, requests):
    """Answer @requests generate requests, each streamed token by token."""

    async def generate(ident, tokens, step_us):
        stream = gpu.stream()
        try:
            for i in range(tokens):
                await gpu.wait(gpu.step(stream, step_us), mode)
                await sock.send_multipart([ident, b"token %d" % i])
            await sock.send_multipart([ident, b"end"])
        finally:
            gpu.release(stream)

    tasks = []
    for _ in range(requests):
        ident, msg = await sock.recv_multipart()
        _, tokens, step_us = msg.split()
        tasks.append(asyncio.create_task(
            generate(ident, int(tokens), int(step_us))))
    await asyncio.gather(*tasks)


def clients(addr, requests, tokens, step_us, out):
    """The clients, in a process of their own: each request's gaps between
    consecutive tokens, in seconds, are sent back through @out."""
    gaps = []

    async def one(ctx):
        sock = ctx.socket(zmq.DEALER)
        sock.connect(addr)
        await sock.send(f"generate {tokens} {step_us}".encode())
        last = None
        while (msg := await sock.recv()) != b"end":
            now = time.monotonic()
            if last is not None:
                gaps.append(now - last)
            last = now
        sock.close(linger=0)

    async def main():
        ctx = zmq.asyncio.Context()
        await asyncio.gather(*(one(ctx) for _ in range(requests)))
        ctx.term()

    asyncio.run(main())
    out.send(gaps)


async def run_mode(mode, args):
    gpu = (CudaGpu if args.cuda else SoftGpu)(args.requests)
    ctx = zmq.asyncio.Context()
    sock = ctx.socket(zmq.ROUTER)
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    spawn = multiprocessing.get_context("spawn")
    results, out = spawn.Pipe(duplex=False)
    client = spawn.Process(target=clients, args=(
        f"tcp://127.0.0.1:{port}", args.requests, args.tokens, args.step_us,
        out))
    client.start()
    try:
        # timed from the first request on: the client's start is not ours
        await sock.poll()
        cpu0, wall0 = time.process_time(), time.monotonic()
        await serve(sock, gpu, mode, args.requests)
        cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
        loop = asyncio.get_running_loop()
        gaps = await loop.run_in_executor(None, results.recv)
    finally:
        await asyncio.get_running_loop().run_in_executor(None, client.join)
        sock.close(linger=0)
        ctx.term()
        gpu.close()
    tokens = args.requests * args.tokens
    gaps.sort()
    print(f"{mode:6}: {tokens} tokens of {args.step_us} us steps, "
          f"{args.requests} requests at once, {wall:.2f} s: inter-token "
          f"p50 {statistics.median(gaps) * 1e6:.0f} us, "
          f"p99 {gaps[int(0.99 * (len(gaps) - 1))] * 1e6:.0f} us; "
          f"CPU {cpu * 1e6 / tokens:.0f} us/token", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=4,
                    help="requests generating at once")
    ap.add_argument("--tokens", type=int, default=64,
                    help="tokens per request")
    ap.add_argument("--step-us", type=int, default=2000,
                    help="one decode step's GPU time")
    ap.add_argument("--mode", choices=MODES, action="append",
                    help="waiting strategies to run (default: all)")
    ap.add_argument("--cuda", action="store_true",
                    help="CUDA kernels on device 0 instead of the soft "
                    "producer (GPUAR_CUDA_LIBRARY: another driver library)")
    args = ap.parse_args()
    for mode in args.mode or MODES:
        asyncio.run(run_mode(mode, args))


if __name__ == "__main__":
    main()
