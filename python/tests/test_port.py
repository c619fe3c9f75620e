# SPDX-License-Identifier: MIT
"""Plans, ports, lines, records, statistics and the soft producer, called
directly (no event loop)."""
import asyncio
import errno
import os
import select

import pytest

import gpuar
from conftest import ENGINE

FAST = "flag:park_us=100,backstop_us=1000000"


def test_plan_text_round_trips():
    text = ("flag:park_us=100,backstop_us=1000+predict:margin_us=150,"
            "min_sleep_us=20,max_sleep_us=50000,window=8")
    assert gpuar.Plan(text).text == text
    assert gpuar.Plan("poll") == gpuar.Plan("poll")
    assert gpuar.Plan("poll") != gpuar.Plan(FAST)


def test_a_bad_plan_raises_its_code_and_errno():
    with pytest.raises(gpuar.GpuarError) as info:
        gpuar.Plan("flag:park_us=")
    assert info.value.code == gpuar.E_INVALID_PLAN
    assert info.value.code_name == "invalid-plan"
    assert info.value.errno == errno.EINVAL
    assert "flag:park_us=" in str(info.value)


def test_a_strict_kernel_port_without_the_module_says_so():
    with pytest.raises(gpuar.GpuarError) as info:
        gpuar.Port("kernel", strict=True, device_path="/nonexistent/gpuar")
    assert info.value.code == gpuar.E_ENGINE_UNAVAILABLE
    assert info.value.errno == errno.ENOENT


def test_port_reports_its_engine_and_a_pollable_fd(port):
    assert port.engine in ("user", "kernel")
    poller = select.poll()
    poller.register(port.fd, select.POLLIN)
    assert poller.poll(0) == []


def test_the_port_fd_is_close_on_exec(port):
    assert not os.get_inheritable(port.fd)


def refused_in_a_forked_child(call):
    """Run @call in a forked child: True when it raised GpuarError EPERM
    there (False for no error, another error or a signal)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            call()
        except gpuar.GpuarError as err:
            code = 0 if err.errno == errno.EPERM else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def test_a_forked_child_is_refused_its_parents_port(port):
    assert refused_in_a_forked_child(port.process)
    port.process()


def test_a_forked_child_reading_a_line_gets_an_error_not_sigsegv(port):
    # The line's page is not mapped in the child: reading it there killed
    # the child with SIGSEGV.
    line = port.line()
    line[2] = 5
    assert refused_in_a_forked_child(lambda: line[2])
    assert line[2] == 5


def test_numbers_out_of_range_raise_instead_of_wrapping(port, producer):
    # ctypes stores a number modulo 2**64 (2**32 for a slot): 2**64 became
    # target 0, which the word had reached, so the wait completed at once.
    line = port.line()
    for bad in (2**64, -1):
        with pytest.raises(ValueError, match="target"):
            port.submit(line, 0, bad)
        with pytest.raises(ValueError, match="value"):
            producer.store_after(line, 0, bad, 1000)
        with pytest.raises(ValueError, match="user_data"):
            port.submit(line, 0, 1, user_data=bad)
        with pytest.raises(ValueError, match="point"):
            port.submit(line, 0, 1, point=bad)
    for slot in (2**32, 8, -1):
        with pytest.raises(ValueError, match="slot"):
            port.submit(line, slot, 1)
    with pytest.raises(ValueError, match="target"):
        asyncio.run(port.wait(line, 0, 2**64))
    assert port.stats()["submitted"] == 0
    assert port.submit(line, 0, 2**64 - 1, plan="poll") >= 1


@pytest.mark.skipif(ENGINE == "kernel",
                    reason="the module's max_lines parameter sets it")
def test_the_line_limit_is_a_port_option(producer):
    with gpuar.Port(ENGINE, strict=True, max_lines=2) as port:
        port.line(), port.line()
        with pytest.raises(gpuar.GpuarError) as info:
            port.line()
        assert info.value.errno == errno.ENOSPC
        assert "max_lines" in str(info.value)
    with gpuar.Port(ENGINE, strict=True, max_lines=100) as port:
        assert len([port.line() for _ in range(100)]) == 100


def test_wait_ns_is_the_waits_length_and_latency_ns_is_deprecated():
    rec = gpuar.Record(user_data=1, start_ns=100, complete_ns=350,
                       slept_ns=0, point=1, value=1, status=0, checks=1,
                       source=1, outcome=gpuar.EXACT)
    assert rec.wait_ns == 250
    with pytest.warns(DeprecationWarning, match="wait_ns"):
        assert rec.latency_ns == 250


def test_line_words_start_zero_and_are_shared_with_the_port(port):
    line = port.line()
    assert [line[i] for i in range(8)] == [0] * 8
    line[3] = 7
    assert line.word(3).contents.value == 7
    with pytest.raises(ValueError):
        line.word(8)


def test_a_submitted_wait_completes_into_one_record(port, producer):
    line = port.line()
    user_data = port.submit(line, 2, 1, plan=FAST, point=9)
    producer.store_after(line, 2, 1, 3_000_000)
    records = []
    deadline = gpuar.now_ns() + 2_000_000_000
    while not records and gpuar.now_ns() < deadline:
        select.select([port.fd], [], [], 0.1)
        port.process()
        records = port.reap()
    (rec,) = records
    assert rec.user_data == user_data and rec.point == 9
    assert rec.status == 0 and rec.value == 1
    assert rec.outcome in (gpuar.EXACT, gpuar.LATE)
    assert rec.outcome_name in ("exact", "late")
    stored = producer.stored_at(line, 2, 1)
    assert 0 < stored <= rec.complete_ns
    assert rec.wait_ns == rec.complete_ns - rec.start_ns >= 3_000_000
    assert producer.stores == 1


def test_an_immediate_wait_and_cancel_errors(port):
    line = port.line()
    line[0] = 5
    done = port.submit(line, 0, 5, plan=FAST)
    pending = port.submit(line, 1, 1, plan=FAST)
    (rec,) = port.reap()
    assert rec.user_data == done and rec.outcome == gpuar.IMMEDIATE
    assert port.cancel(pending) == 1
    (rec,) = port.reap()
    assert rec.outcome == gpuar.CANCELLED and rec.status == -errno.ECANCELED
    with pytest.raises(gpuar.GpuarError) as info:
        port.cancel(pending)
    assert info.value.errno == errno.ENOENT
    assert port.reap() == []


def test_freeing_a_line_with_pending_waits_is_refused(port):
    line = port.line()
    user_data = port.submit(line, 0, 1, plan=FAST)
    with pytest.raises(gpuar.GpuarError) as info:
        line.free()
    assert info.value.errno == errno.EBUSY
    port.cancel(user_data)
    port.reap()
    line.free()


def test_statistics_count_waits_and_points(port, producer):
    line = port.line()
    line[0] = 1
    port.submit(line, 0, 1, plan=FAST, point=4)
    port.reap()
    stats = port.stats()
    assert stats["submitted"] == 1 and stats["lines"] == 1
    assert stats["outcomes"][gpuar.IMMEDIATE] == 1
    assert port.point_stats(4)["outcomes"][gpuar.IMMEDIATE] == 1
    with pytest.raises(gpuar.GpuarError) as info:
        port.point_stats(5)
    assert info.value.errno == errno.ENOENT


def test_a_closed_port_refuses_calls(port):
    port.close()
    with pytest.raises(gpuar.GpuarError) as info:
        port.line()
    assert info.value.errno == errno.EBADF


def test_a_fence_wait_on_an_fd_that_is_no_sync_file_is_refused(port):
    read_end, write_end = os.pipe()
    try:
        with pytest.raises(gpuar.GpuarError) as info:
            port.submit_fence(read_end)
        assert info.value.errno == errno.EINVAL
    finally:
        os.close(read_end)
        os.close(write_end)


def test_two_threads_reaping_one_port_each_get_their_own_records(
        port, monkeypatch):
    # L3-16: ctypes releases the GIL around gpuar_port_reap, so another thread's
    # reap can run between this reap's C call and its reading of the
    # records. Forced here: the first reap lets a second thread reap one
    # record before it returns. With one buffer per port, the first reap
    # read the second's record and its own was lost.
    from gpuar._lib import lib
    import threading
    line = port.line()
    ids = [port.submit(line, 0, 0, plan=FAST) for _ in range(2)]
    real, other, raced = lib.gpuar_port_reap, [], []

    def reap_while_another_thread_reaps(*args):
        ret = real(*args)
        if not raced:
            raced.append(True)
            thread = threading.Thread(
                target=lambda: other.extend(port.reap(1)))
            thread.start()
            thread.join()
        return ret

    monkeypatch.setattr(lib, "gpuar_port_reap", reap_while_another_thread_reaps)
    mine = port.reap(1)
    assert [r.user_data for r in mine] == ids[:1]
    assert [r.user_data for r in other] == ids[1:]
