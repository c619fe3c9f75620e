# SPDX-License-Identifier: MIT
"""The example server runs, both ways, and reports its numbers: on the
soft producer, and on CUDA kernels (the CUDA test double here)."""
import os
import re
import subprocess
import sys

import pytest

from conftest import DOUBLES, TESTS


@pytest.mark.parametrize("gpu", ["soft", "cuda"])
def test_example_server_reports_cpu_per_request_both_ways(gpu):
    env = dict(os.environ, PYTHONPATH=str(TESTS.parent))
    args = []
    if gpu == "cuda":
        env.setdefault("GPUAR_CUDA_LIBRARY",
                       str(DOUBLES / "cuda" / "libcuda.so.1"))
        args = ["--cuda"]
    out = subprocess.run([sys.executable,
                          str(TESTS.parent / "examples" / "server.py"),
                          "--requests", "40", "--work-us", "1000", *args],
                         env=env, check=True, capture_output=True,
                         text=True, timeout=60).stdout
    for mode in ("gpuar", "poll"):
        assert re.search(rf"^{mode} *: 40 requests .* CPU \d+ us/request",
                         out, re.M), out
    assert "polling costs" in out
