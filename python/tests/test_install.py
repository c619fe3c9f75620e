# SPDX-License-Identifier: MIT
"""The documented install step, offline, from a clean copy of the source
tree: a virtual environment that sees Debian's setuptools,
`pip install --no-index --no-build-isolation ./python`, which builds
libgpuar from the tree into the package; then `import gpuar` from
outside the tree, with no GPUAR_LIBRARY, loads the package's library."""
import os
import shutil
import subprocess
import sys

from conftest import TESTS, TREE


def clean_copy(dest):
    """The tree's files as a clone has them (tracked, and new files not
    ignored), without build outputs."""
    files = subprocess.run(
        ["git", "-C", str(TREE), "ls-files", "-z", "--cached", "--others",
         "--exclude-standard"], check=True, capture_output=True).stdout
    for name in filter(None, files.decode().split("\0")):
        src = TREE / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def test_pip_installs_the_package_with_its_own_library(tmp_path):
    tree = tmp_path / "gpuar"
    clean_copy(tree)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages",
                    str(venv)], check=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "GPUAR_LIBRARY", "LD_LIBRARY_PATH",
                        "BUILD", "MAKEFLAGS")}
    env["GPUAR_MAKE_JOBS"] = "2"
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet",
                    "--no-index", "--no-build-isolation", str(tree / "python")],
                   check=True, env=env)
    shutil.rmtree(tree)         # the install needs nothing left there
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import gpuar, gpuar.cuda, gpuar.hip\n"
         "print(gpuar.__file__, gpuar.library_path, gpuar.__version__, "
         "gpuar.library_version, gpuar.Plan('poll'))\n"
         "maps = open('/proc/self/maps').read()\n"
         "print(sorted({l.split()[-1] for l in maps.splitlines() "
         "if 'libgpuar' in l}))"],
        cwd=tmp_path, env=env, check=True, capture_output=True, text=True)
    first, mapped = out.stdout.splitlines()
    where, library, version, library_version, plan = first.split()
    package = os.path.dirname(where)
    assert package.startswith(str(venv))
    # The library the package carries, and no other libgpuar, is mapped.
    assert library == os.path.join(package, "libgpuar.so.0")
    assert mapped == repr([library])
    assert os.path.isfile(os.path.join(package, "py.typed"))
    assert version == "0.1.0" and library_version == "0.1.0"
    assert plan == "poll"


def test_a_missing_library_is_an_import_error_that_says_what_to_set():
    env = dict(os.environ, PYTHONPATH=str(TESTS.parent),
               GPUAR_LIBRARY="/nonexistent/libgpuar.so.0")
    out = subprocess.run([sys.executable, "-c", "import gpuar"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 1
    assert "ImportError" in out.stderr and "GPUAR_LIBRARY" in out.stderr
