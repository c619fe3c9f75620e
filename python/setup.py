# SPDX-License-Identifier: MIT
"""The package carries its own libgpuar: the build runs the repository's
make for the shared library (the directory above this one is the source
tree) and puts libgpuar.so.0 into the package, so `pip install ./python`
works where no libgpuar is installed. liburing and libdrm stay the
system's (Debian: liburing2, libdrm2; building needs their -dev packages,
a C compiler and make). GPUAR_MAKE_JOBS sets make's -j (default: the CPUs
this process may run on)."""
import os
import pathlib
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = pathlib.Path(__file__).resolve().parent
TREE = HERE.parent
SONAME = "libgpuar.so.0"


class BuildWithLibrary(build_py):
    """build_py, then make's shared library into the built package."""

    def run(self):
        super().run()
        if not (TREE / "lib" / "lib.mk").is_file():
            raise SystemExit(f"gpuar: {TREE} is not the gpuar source tree "
                             "(install from the repository's python/)")
        out = pathlib.Path(self.build_lib).resolve().parent / "libgpuar"
        jobs = os.environ.get("GPUAR_MAKE_JOBS") or \
            str(len(os.sched_getaffinity(0)))
        subprocess.run(["make", "-s", f"-j{jobs}", "-C", str(TREE),
                        f"BUILD={out}", "lib"], check=True)
        dest = pathlib.Path(self.build_lib) / "gpuar" / SONAME
        dest.unlink(missing_ok=True)
        shutil.copyfile(out / "lib" / SONAME, dest)    # follows the links
        dest.chmod(0o755)


class BinaryDistribution(Distribution):
    """A shared library inside: the wheel is for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
