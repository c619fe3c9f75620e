# SPDX-License-Identifier: MIT
"""The example server runs, both ways, and reports its numbers."""
import os
import re
import subprocess
import sys

from conftest import TESTS


def test_example_server_reports_cpu_per_request_both_ways():
    env = dict(os.environ, PYTHONPATH=str(TESTS.parent))
    out = subprocess.run([sys.executable,
                          str(TESTS.parent / "examples" / "server.py"),
                          "--requests", "40", "--work-us", "1000"],
                         env=env, check=True, capture_output=True,
                         text=True, timeout=60).stdout
    for mode in ("gpuar", "poll"):
        assert re.search(rf"^{mode} *: 40 requests .* CPU \d+ us/request",
                         out, re.M), out
    assert "polling costs" in out
