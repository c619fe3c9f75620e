// SPDX-License-Identifier: MIT
//! The examples (built by `cargo test` beside the tests) run to the end
//! and say what they promise, as examples/check-examples.sh checks the C
//! ones.
use std::path::PathBuf;
use std::process::Command;

fn example(name: &str) -> Command {
    // target/<profile>/deps/<test> -> target/<profile>/examples/<name>
    let exe = std::env::current_exe().unwrap();
    let path: PathBuf = exe.parent().unwrap().parent().unwrap().join("examples").join(name);
    assert!(path.is_file(), "{} not built", path.display());
    Command::new(path)
}

fn doubles() -> PathBuf {
    match std::env::var_os("GPUAR_TEST_DOUBLES") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../build/doubles"),
    }
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{cmd:?} failed: {text}");
    text
}

#[test]
fn fill_executor_says_what_fill_saved() {
    let text = run(&mut example("fill_executor"));
    assert!(text.lines().any(|l| l.starts_with("FILL saved ") && l.contains("the run took")), "{text}");
    assert!(text.contains("10 CPU slices ran"), "{text}");
}

#[test]
fn cuda_await_skips_without_a_driver_and_awaits_the_doubles() {
    let text = run(example("cuda_await").env("GPUAR_CUDA_LIBRARY", "/nonexistent/libcuda.so.1"));
    assert!(text.starts_with("skipped: no cuda device here"), "{text}");
    let text = run(example("cuda_await").env("GPUAR_CUDA_LIBRARY", doubles().join("cuda/libcuda.so.1")));
    assert!(text.contains("await 2: sequence 3 reached") && !text.contains("status -"), "{text}");
    let text = run(example("cuda_await").arg("--hip").env("GPUAR_HIP_LIBRARY", doubles().join("hip/libamdhip64.so.6")));
    assert!(text.contains("await 2: sequence 3 reached") && !text.contains("status -"), "{text}");
}

#[test]
fn tokio_server_answers_requests_while_it_awaits() {
    let text = run(example("tokio_server").args(["--engine", "user", "--waits", "100", "--work-us", "500"]));
    assert!(text.contains("waits 100: latency p50"), "{text}");
    let answered: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("requests answered meanwhile: "))
        .expect("the answered line")
        .parse()
        .unwrap();
    assert!(answered > 0, "{text}");
    let e = example("tokio_server").arg("--waits").output().unwrap();
    assert_eq!(e.status.code(), Some(2), "a bad command line is refused");
}
