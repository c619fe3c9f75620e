# SPDX-License-Identifier: MIT
"""In-tree runs: the package from python/, the library and the vendor test
doubles from the build tree (BUILD, default build/), unless the
environment names them (GPUAR_LIBRARY, GPUAR_TEST_DOUBLES). The port
engine comes from GPUAR_TEST_ENGINE ("user" by default; "kernel" where
/dev/gpuar exists), as the C tests'."""
import asyncio
import os
import pathlib
import sys

import pytest

TESTS = pathlib.Path(__file__).resolve().parent
TREE = TESTS.parent.parent
BUILD = pathlib.Path(os.environ.get("BUILD", TREE / "build"))
if not BUILD.is_absolute():
    BUILD = TREE / BUILD

if not os.environ.get("GPUAR_TEST_INSTALLED"):
    sys.path.insert(0, str(TESTS.parent))
    os.environ.setdefault("GPUAR_LIBRARY",
                          str(BUILD / "lib" / "libgpuar.so.0"))

DOUBLES = pathlib.Path(os.environ.get("GPUAR_TEST_DOUBLES",
                                      BUILD / "doubles"))
ENGINE = os.environ.get("GPUAR_TEST_ENGINE", "user")


@pytest.fixture
def port():
    import gpuar
    with gpuar.Port(ENGINE, strict=True) as p:
        yield p


@pytest.fixture
def producer():
    import gpuar
    with gpuar.SoftProducer() as p:
        yield p


LOOPS = ["asyncio", "uvloop"]


@pytest.fixture(params=LOOPS)
def event_loop_kind(request):
    """Run the test's asyncio.run calls (in any thread) on the default
    loop and on uvloop (libuv's loop, Debian's python3-uvloop)."""
    if request.param == "uvloop":
        try:
            import uvloop
        except ImportError:
            pytest.fail("uvloop is missing: install python3-uvloop "
                        "(tools/deps.sh)")
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    try:
        yield request.param
    finally:
        asyncio.set_event_loop_policy(None)
