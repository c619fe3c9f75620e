# SPDX-License-Identifier: MIT
"""Plans, ports, lines, records, statistics and the soft producer, called
directly (no event loop)."""
import errno
import os
import select

import pytest

import gpuar

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


def test_a_forked_child_is_refused_its_parents_port(port):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            port.process()
        except gpuar.GpuarError as err:
            code = 0 if err.errno == errno.EPERM else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    port.process()


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
    assert rec.latency_ns >= 3_000_000
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
    # L3-16: ctypes releases the GIL around gpuar_reap, so another thread's
    # reap can run between this reap's C call and its reading of the
    # records. Forced here: the first reap lets a second thread reap one
    # record before it returns. With one buffer per port, the first reap
    # read the second's record and its own was lost.
    from gpuar._lib import lib
    import threading
    line = port.line()
    ids = [port.submit(line, 0, 0, plan=FAST) for _ in range(2)]
    real, other, raced = lib.gpuar_reap, [], []

    def reap_while_another_thread_reaps(*args):
        ret = real(*args)
        if not raced:
            raced.append(True)
            thread = threading.Thread(
                target=lambda: other.extend(port.reap(1)))
            thread.start()
            thread.join()
        return ret

    monkeypatch.setattr(lib, "gpuar_reap", reap_while_another_thread_reaps)
    mine = port.reap(1)
    assert [r.user_data for r in mine] == ids[:1]
    assert [r.user_data for r in other] == ids[1:]
