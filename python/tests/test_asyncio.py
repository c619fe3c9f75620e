# SPDX-License-Identifier: MIT
"""The port on an asyncio loop: awaits, `async for`, cancellation, many
awaits at once, a loop that never blocks, Ctrl-C."""
import asyncio
import errno
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import gpuar
from conftest import ENGINE, TESTS
from gpuar._reactor import Reactor

FAST = "flag:park_us=200,backstop_us=1000000"
pytestmark = pytest.mark.usefixtures("event_loop_kind")


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


@pytest.mark.parametrize("watcher", [False, True],
                         ids=["process-on-readable", "watcher-thread"])
def test_await_a_wait(producer, watcher):
    async def main(port):
        line = port.line()
        producer.store_after(line, 0, 1, 5_000_000)
        return await port.wait(line, 0, 1, plan=FAST), line

    with gpuar.Port(ENGINE, strict=True, watcher=watcher) as port:
        rec, line = run(main(port))
        assert rec.status == 0 and rec.value == 1
        assert rec.complete_ns >= producer.stored_at(line, 0, 1)
        assert port.stats()["pending"] == 0
        producer.close()    # before the port: its store went to the line


def test_async_for_yields_submitted_waits_in_completion_order(port, producer):
    async def main():
        line = port.line()
        ids = [port.submit(line, slot, 1, plan=FAST) for slot in range(4)]
        # Slot 3 finishes first. Each store waits for the previous record:
        # stores close together can land before one check that sees them
        # all, and records are queued in the order a check finds them.
        producer.store_after(line, 3, 1, 3_000_000)
        got = []
        async for rec in port:
            got.append(rec.user_data)
            if len(got) == 4:
                break
            assert port.stats()["pending"] == 4 - len(got)
            producer.store_after(line, 3 - len(got), 1, 3_000_000)
        return ids, got

    ids, got = run(main())
    assert got == ids[::-1]


def test_cancelling_the_task_cancels_the_wait(port, producer):
    async def main():
        line = port.line()
        task = asyncio.create_task(port.wait(line, 0, 1, plan=FAST))
        await asyncio.sleep(0.01)
        assert port.stats()["pending"] == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # the CANCELLED record is reaped and dropped, the port still works
        producer.store_after(line, 1, 1, 1_000_000)
        rec = await port.wait(line, 1, 1, plan=FAST)
        return rec

    rec = run(main())
    assert rec.status == 0
    stats = port.stats()
    assert stats["pending"] == 0 and stats["queued"] == 0
    assert stats["outcomes"][gpuar.CANCELLED] == 1


def test_a_timeout_around_the_await_cancels_the_wait(port):
    async def main():
        line = port.line()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(port.wait(line, 0, 1, plan=FAST), 0.02)
        await asyncio.sleep(0.01)

    run(main())
    assert port.stats()["pending"] == 0


def test_a_thousand_awaits_in_one_loop(port, producer):
    count = 1000

    async def main():
        line = port.line()
        base = gpuar.now_ns() + 20_000_000
        # 1000 awaits on one word, each completing at its own value
        for value in range(1, count + 1):
            producer.store_at(line, value % 8, value // 8 + 1,
                              base + value * 20_000)
        return await asyncio.gather(*(
            port.wait(line, value % 8, value // 8 + 1, plan=FAST)
            for value in range(1, count + 1)))

    records = run(main())
    assert len(records) == count
    assert all(r.status == 0 for r in records)
    assert len({r.user_data for r in records}) == count
    assert port.stats()["pending"] == 0


def test_a_wait_past_its_backstop_is_resubmitted_not_failed(port, producer):
    stored_after = 0

    async def main():
        nonlocal stored_after
        line = port.line()
        stored_after = time.monotonic_ns() + 30_000_000
        producer.store_after(line, 0, 1, 30_000_000)
        return await port.wait(line, 0, 1,
                               plan="flag:park_us=1000,backstop_us=5000")

    rec = run(main())
    # The wait began after the store was scheduled: time it from there.
    assert rec.status == 0 and rec.complete_ns >= stored_after
    assert port.stats()["outcomes"][gpuar.TIMEOUT] >= 1


def test_the_loop_keeps_running_while_a_wait_is_pending(port, producer):
    # What is tested is that other tasks run while the wait is pending,
    # not how promptly the loop gets to them (a loaded machine stretches
    # any gap): the store comes only after a ticker task has run TICKS
    # times with the wait pending, so a loop blocked in the wait would
    # never make it. The fallback store, far later, ends such a run with
    # no ticks counted instead of a hang.
    ticks_needed = 20

    async def main():
        line = port.line()
        producer.store_after(line, 0, 1, 20_000_000_000)
        wait = asyncio.create_task(port.wait(line, 0, 1, plan=FAST))
        ticks = 0

        async def ticker():
            nonlocal ticks
            while not wait.done():
                await asyncio.sleep(0.002)
                if wait.done():
                    break
                ticks += 1
                if ticks == ticks_needed:
                    producer.store_after(line, 0, 1, 0)

        tick = asyncio.create_task(ticker())
        rec = await wait
        await tick
        return rec, ticks

    rec, ticks = run(main())
    assert rec.status == 0
    assert ticks >= ticks_needed


def test_closing_the_port_ends_awaiting_tasks(port):
    # L3-17: the awaiting task gets PortClosedError (a GpuarError, EBADF),
    # not CancelledError, which reads as the task itself being cancelled;
    # `async for` over the port ends.
    async def main():
        line = port.line()
        port.submit(line, 1, 1, plan=FAST)
        task = asyncio.create_task(port.wait(line, 0, 1, plan=FAST))

        async def listen():
            return [rec async for rec in port]
        listener = asyncio.create_task(listen())
        await asyncio.sleep(0.01)
        port.close()
        with pytest.raises(gpuar.PortClosedError) as info:
            await task
        assert info.value.errno == errno.EBADF
        assert await listener == []
        assert [rec async for rec in port] == []
        with pytest.raises(gpuar.PortClosedError):
            await port.wait(line, 0, 1)

    run(main())


def test_a_block_plan_is_refused_with_a_clear_error(port):
    # L3-15: block waits in the calling thread, the loop's.
    async def main():
        await port.wait(port.line(), 0, 1, plan="block")

    with pytest.raises(gpuar.GpuarError) as info:
        run(main())
    assert info.value.errno == errno.EINVAL
    assert info.value.code == gpuar.E_INVALID_PLAN
    assert "event loop" in str(info.value)


def test_a_failed_cancel_still_ends_the_task_cancelled(port, monkeypatch,
                                                        caplog):
    # L3-17: an error from gpuar_cancel while a task is being cancelled is
    # logged; it does not replace the CancelledError.
    def cancel(user_data):
        raise gpuar.GpuarError(errno.EIO, call="gpuar_cancel")

    async def main():
        line = port.line()
        task = asyncio.create_task(port.wait(line, 0, 1, plan=FAST))
        await asyncio.sleep(0.01)
        monkeypatch.setattr(port, "cancel", cancel)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main())
    assert "gpuar_cancel" in caplog.text


def test_one_port_serves_successive_loops(port, producer):
    line = port.line()
    for value in (1, 2):
        producer.store_after(line, 0, value, 1_000_000)
        assert run(port.wait(line, 0, value, plan=FAST)).value == value


@pytest.mark.skipif(ENGINE == "kernel", reason="the child opens its own port")
def test_ctrl_c_interrupts_a_loop_awaiting_a_wait():
    script = textwrap.dedent("""
        import asyncio, sys, gpuar
        async def main():
            with gpuar.Port("user") as port:
                line = port.line()
                print("waiting", flush=True)
                await port.wait(line, 0, 1)
        try:
            asyncio.run(main())
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
    """)
    env = dict(os.environ, PYTHONPATH=str(TESTS.parent))
    # As a terminal's program gets it: a suite started in the background
    # (nohup, `&` without job control) ignores SIGINT, the child would
    # inherit that, and Python then leaves Ctrl-C ignored.
    child = subprocess.Popen([sys.executable, "-c", script], env=env,
                             stdout=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                              signal.SIG_DFL))
    assert child.stdout.readline().strip() == "waiting"
    time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=10)
    assert child.returncode == 3 and "interrupted" in out


def predicted_waits(port, producer, count=24, work_ns=3_000_000):
    """@count awaits of @work_ns work each (every other one of the second
    half 1 ms longer, later than predicted), one point, the default plan
    (predicted flag waits): the estimator learns the work's length and
    sleeps to just before it. Returns the records and the stores' times."""
    async def main():
        line = port.line()
        records, stored = [], []
        for value in range(1, count + 1):
            late = value > count // 2 and value % 2
            producer.store_after(line, 0, value,
                                 work_ns + (1_000_000 if late else 0))
            records.append(await port.wait(line, 0, value, point=7))
            stored.append(producer.stored_at(line, 0, value))
        return records, stored
    return run(main())


def test_imminent_readiness_is_on_by_default(producer):
    # The user engine's fd turns readable at a predicted wait's early wake
    # (the kernel engine's raises EPOLLPRI), and the callback's process()
    # claims the wait and watches its word in the loop's thread.
    with gpuar.Port(ENGINE, strict=True) as port:
        assert port.imminent and port.warning is None
        records, stored = predicted_waits(port, producer)
        assert port.point_stats(7)["has_prediction"]
        producer.close()
    assert [r.value for r in records] == list(range(1, 25))
    assert all(r.status == 0 and r.complete_ns >= at
               for r, at in zip(records, stored))


def test_imminent_readiness_can_be_turned_off(producer):
    with gpuar.Port(ENGINE, strict=True, imminent=False) as port:
        assert not port.imminent
        records, _ = predicted_waits(port, producer, count=12)
        stats = port.stats()
        producer.close()
    assert all(r.status == 0 for r in records)
    # Nobody claimed: no claimer's check, no module claim.
    assert stats["busy_read_checks"] == 0 and stats["claims"] == 0


def test_a_watcher_port_runs_without_imminent_readiness_by_default():
    # The watcher thread runs the user engine: no early wake to hand over,
    # and no fallback warning for asking.
    with gpuar.Port(ENGINE, strict=True, watcher=True) as port:
        assert port.warning is None
        assert port.imminent == (ENGINE == "kernel")


def test_an_empty_queue_is_not_reaped_so_the_loop_does_not_spin(
        producer, monkeypatch):
    # On an imminent port a reap that finds no record claims and spins a
    # lease: the callback reaps only the records process() counted.
    with gpuar.Port(ENGINE, strict=True) as port:
        reaped = []
        reap = port.reap
        monkeypatch.setattr(port, "reap",
                            lambda: reaped.append(reap()) or reaped[-1])
        predicted_waits(port, producer, count=8)
        producer.close()
    assert reaped and all(reaped)


def test_the_epoll_that_watches_for_epollpri_drives_the_loop(producer):
    # The kernel engine's fd says "imminent" with EPOLLPRI, which
    # add_reader does not watch: the reactor hands the loop an epoll of
    # its own that watches the port fd for EPOLLIN | EPOLLPRI. Here that
    # epoll watches a user engine port: the loop wakes on it, runs the
    # engine and reaps, and closing the port closes it. (The kernel's
    # EPOLLPRI itself: selftests/unit/test_lib_loop_imminent.c, run in
    # the VMs.)
    with gpuar.Port(ENGINE, strict=True) as port:
        port._reactor = reactor = Reactor(port, watch_pri=True)
        assert reactor.fd != port.fd
        records, _ = predicted_waits(port, producer, count=16)
        assert [r.value for r in records] == list(range(1, 17))
        producer.close()
    assert reactor.epoll.closed
