# SPDX-License-Identifier: MIT
"""The example servers run, every way, and report their numbers: on the
soft producer, and on CUDA kernels (the CUDA test double here)."""
import os
import re
import subprocess
import sys

import pytest

from conftest import DOUBLES, TESTS


def example_env(gpu):
    """The environment and arguments of an example on @gpu."""
    env = dict(os.environ, PYTHONPATH=str(TESTS.parent))
    if gpu != "cuda":
        return env, []
    env.setdefault("GPUAR_CUDA_LIBRARY", str(DOUBLES / "cuda" / "libcuda.so.1"))
    return env, ["--cuda"]


@pytest.mark.parametrize("gpu", ["soft", "cuda"])
def test_example_server_reports_cpu_per_request_both_ways(gpu):
    env, args = example_env(gpu)
    out = subprocess.run([sys.executable,
                          str(TESTS.parent / "examples" / "server.py"),
                          "--requests", "40", "--work-us", "1000", *args],
                         env=env, check=True, capture_output=True,
                         text=True, timeout=60).stdout
    for mode in ("gpuar", "poll"):
        assert re.search(rf"^{mode} *: 40 requests .* CPU \d+ us/request",
                         out, re.M), out
    assert "polling costs" in out


@pytest.mark.parametrize("gpu", ["soft", "cuda"])
def test_token_server_reports_inter_token_latency_three_ways(gpu):
    pytest.importorskip("zmq", reason="python3-zmq (tools/deps.sh)")
    env, args = example_env(gpu)
    out = subprocess.run([sys.executable,
                          str(TESTS.parent / "examples" / "token_server.py"),
                          "--requests", "2", "--tokens", "16",
                          "--step-us", "1000", *args],
                         env=env, check=True, capture_output=True,
                         text=True, timeout=60).stdout
    for mode in ("gpuar", "poll", "thread"):
        found = re.search(rf"^{mode} *: 32 tokens of 1000 us steps, 2 "
                          r"requests at once, .* inter-token p50 \d+ us, "
                          r"p99 \d+ us; CPU \d+ us/token", out, re.M)
        assert found, out
