// SPDX-License-Identifier: MIT
//! Every struct of `gpuar::sys` against the C compiler's layout: a C
//! program generated here prints sizeof of each struct and the offset and
//! size of each field as the headers define them, and the Rust side must
//! agree, so a header change that moves a field fails here instead of
//! corrupting memory through the bindings.
use std::mem::{size_of, MaybeUninit};
use std::process::Command;

use gpuar::sys;

/// (struct, field, offset, size) rows of the Rust side, plus a
/// (struct, "sizeof", size, 0) row per struct.
macro_rules! layout {
    ($rows:ident, $t:ident { $($f:ident),* $(,)? }) => {{
        let u = MaybeUninit::<sys::$t>::uninit();
        let base = u.as_ptr() as usize;
        $rows.push((stringify!($t), "sizeof".to_string(), size_of::<sys::$t>(), 0));
        $(
            // SAFETY: addr_of! on an uninitialised struct reads nothing.
            let p = unsafe { std::ptr::addr_of!((*u.as_ptr()).$f) };
            $rows.push((stringify!($t), stringify!($f).to_string(), p as usize - base, size_of_val_ptr(p)));
        )*
    }};
}

fn size_of_val_ptr<T>(_: *const T) -> usize {
    size_of::<T>()
}

fn rust_rows() -> Vec<(&'static str, String, usize, usize)> {
    let mut rows = Vec::new();
    layout!(rows, gpuar_error { code, sys_errno, message });
    layout!(rows, gpuar_plan { park, flags, park_ns, backstop_ns, margin_ns, min_sleep_ns, max_sleep_ns, window, pad });
    layout!(rows, gpuar_record {
        user_data, start_ns, complete_ns, slept_ns, point, value, status, checks, version, source, outcome, pad
    });
    layout!(rows, gpuar_word_wait { user_data, target, point, start_ns, line, slot, flags, pad, plan });
    layout!(rows, gpuar_fence_wait { user_data, fd, flags, reserved });
    layout!(rows, gpuar_port_options {
        size, engine, flags, max_waits, device_path, poll_interval_ns, poll_backstop_ns, max_lines, max_points,
        busy_read_us, reserved
    });
    layout!(rows, gpuar_port_stats {
        size, pad, submitted, checks, sleeps, timer_fires, busy_read_checks, pending, queued, lines, points,
        wakeup_latency_ns, outcomes, imminent, claims, lease_expiries, budget_stretched
    });
    layout!(rows, gpuar_point_stats { size, flags, point, samples, predicted_ns, outcomes });
    layout!(rows, gpuar_vendor_completion { record, vendor_status, pad, vendor_name });
    layout!(rows, gpuar_exec_options { size, kind, clock, park_bound_ns, reserved });
    layout!(rows, gpuar_exec_stats { polls, wakes, sleeps, parks, idle_ns, uring_fallbacks, reserved });
    rows
}

fn c_program(rows: &[(&'static str, String, usize, usize)]) -> String {
    let mut s = String::from(
        "#include <gpuar/gpuar.h>\n#include <gpuar/vendor.h>\n#include <stddef.h>\n#include <stdio.h>\nint main(void)\n{\n",
    );
    for (t, f, _, _) in rows {
        if f == "sizeof" {
            s += &format!("\tprintf(\"{t} sizeof %zu 0\\n\", sizeof(struct {t}));\n");
        } else {
            s += &format!(
                "\tprintf(\"{t} {f} %zu %zu\\n\", offsetof(struct {t}, {f}), sizeof(((struct {t} *)0)->{f}));\n"
            );
        }
    }
    s + "\treturn 0;\n}\n"
}

#[test]
fn sys_structs_match_the_c_headers() {
    let includes = env!("GPUAR_LAYOUT_INCLUDE_DIRS");
    assert!(
        !includes.is_empty(),
        "no C headers to compare with: set GPUAR_INCLUDE_DIRS when building outside the gpuar tree"
    );
    let rows = rust_rows();
    let dir = std::env::temp_dir().join(format!("gpuar-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&src, c_program(&rows)).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let mut cmd = Command::new(&cc);
    cmd.args(["-std=c11", "-Wall", "-Werror", "-o"]).arg(&exe).arg(&src);
    for inc in std::env::split_paths(includes) {
        cmd.arg(format!("-I{}", inc.display()));
    }
    let out = cmd.output().expect("run the C compiler");
    assert!(out.status.success(), "{cc} failed: {}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(&exe).output().expect("run the layout program");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8(out.stdout).unwrap();
    let c: Vec<(String, String, usize, usize)> = text
        .lines()
        .map(|l| {
            let v: Vec<&str> = l.split_whitespace().collect();
            (v[0].to_owned(), v[1].to_owned(), v[2].parse().unwrap(), v[3].parse().unwrap())
        })
        .collect();
    assert_eq!(c.len(), rows.len());
    for (r, c) in rows.iter().zip(&c) {
        assert_eq!((r.0, r.1.as_str(), r.2, r.3), (c.0.as_str(), c.1.as_str(), c.2, c.3), "struct {} field {}", r.0, r.1);
    }
}
