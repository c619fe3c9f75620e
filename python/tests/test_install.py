# SPDX-License-Identifier: MIT
"""The documented install step, offline: a virtual environment that sees
Debian's setuptools, `pip install --no-index --no-build-isolation`, then
`import gpuar` from outside the source tree."""
import os
import shutil
import subprocess
import sys

from conftest import TESTS


def test_pip_installs_the_package_offline(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(TESTS.parent, src,
                    ignore=shutil.ignore_patterns("tests", "__pycache__",
                                                  "build", "*.egg-info"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages",
                    str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet",
                    "--no-index", "--no-build-isolation", str(src)],
                   check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import gpuar, gpuar.cuda, gpuar.hip; print(gpuar.__file__); "
         "print(gpuar.Plan('poll'))"],
        cwd=tmp_path, env=env, check=True, capture_output=True, text=True)
    where, plan = out.stdout.split()
    assert where.startswith(str(venv)) and plan == "poll"


def test_a_missing_library_is_an_import_error_that_says_what_to_set():
    env = dict(os.environ, PYTHONPATH=str(TESTS.parent),
               GPUAR_LIBRARY="/nonexistent/libgpuar.so.0")
    out = subprocess.run([sys.executable, "-c", "import gpuar"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert "ImportError" in out.stderr and "GPUAR_LIBRARY" in out.stderr
