# SPDX-License-Identifier: MIT
"""Every ctypes struct of the binding against the C compiler's layout.

A tiny C program, generated from the ctypes classes, prints sizeof of each
struct and the offset and size of each field as the headers define them; a
header change that moves, resizes or adds a field fails here rather than
corrupting memory through the binding.
"""
import ctypes
import os
import subprocess

from conftest import TREE

from gpuar import _structs as S

HEADERS = ("gpuar/gpuar.h", "gpuar/vendor.h")


def c_program():
    lines = [f"#include <{h}>" for h in HEADERS]
    lines += ["#include <stddef.h>", "#include <stdio.h>",
              "int main(void)", "{"]
    for cls in S.ALL:
        t = f"struct {cls.c_name}"
        lines.append(f'\tprintf("{cls.c_name} sizeof %zu\\n", sizeof({t}));')
        for name, _ in cls._fields_:
            lines.append(f'\tprintf("{cls.c_name} {name} %zu %zu\\n", '
                         f"offsetof({t}, {name}), "
                         f"sizeof((({t} *)0)->{name}));")
    lines += ["\treturn 0;", "}"]
    return "\n".join(lines) + "\n"


def python_layout():
    out = {}
    for cls in S.ALL:
        out[(cls.c_name, "sizeof")] = (ctypes.sizeof(cls),)
        for name, _ in cls._fields_:
            field = getattr(cls, name)
            out[(cls.c_name, name)] = (field.offset, field.size)
    return out


def test_ctypes_structs_match_the_c_headers(tmp_path):
    src = tmp_path / "layout.c"
    exe = tmp_path / "layout"
    src.write_text(c_program())
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-std=c11", "-Wall", "-Werror",
                    f"-I{TREE}/include", f"-I{TREE}/include/uapi",
                    f"-I{TREE}/backends/include", "-o", str(exe), str(src)],
                   check=True)
    c_layout = {}
    for row in subprocess.run([str(exe)], check=True, capture_output=True,
                              text=True).stdout.splitlines():
        struct, field, *values = row.split()
        c_layout[(struct, field)] = tuple(int(v) for v in values)
    assert python_layout() == c_layout


def test_the_checked_layout_covers_every_struct_the_binding_passes():
    passed = {obj for obj in vars(S).values()
              if isinstance(obj, type) and issubclass(obj, ctypes.Structure)}
    assert passed == set(S.ALL)
