// SPDX-License-Identifier: MIT
//! Await a GPU stream through a completion port on tokio: CUDA by
//! default, HIP with `--hip`. The driver is loaded at run time, so this
//! builds with nothing but libgpuar and, on a machine without a GPU, says
//! so and exits 0 ("skipped: ..."); GPUAR_CUDA_LIBRARY or
//! GPUAR_HIP_LIBRARY may name another library (the tests' doubles).
//!
//! Each await records the store of the slot's next sequence number behind
//! the stream's work and submits the word wait; the record comes through
//! the port's fd in the runtime's reactor, beside any socket. The stream
//! here is the per-thread default stream and no kernel is launched: in
//! your program, pass the raw handle of the stream your kernels run on.
//!
//!   cuda_await [--hip]
use std::time::Duration;

use gpuar::vendor::{Backend, Vendor, STREAM_PER_THREAD};
use gpuar::{AsyncPort, Plan, PortOptions};

const AWAITS: u64 = 3;

fn main() {
    let vendor = match std::env::args().nth(1).as_deref() {
        None => Vendor::Cuda,
        Some("--hip") => Vendor::Hip,
        Some(other) => {
            eprintln!("cuda_await: unknown option {other} (usage: cuda_await [--hip])");
            std::process::exit(2);
        }
    };
    let name = if vendor == Vendor::Cuda { "cuda" } else { "hip" };
    // Opening blocks (driver init): before the runtime.
    let backend = match Backend::open(vendor, 0) {
        Ok(b) => b,
        Err(e) => {
            println!("skipped: no {name} device here: {e}");
            return;
        }
    };
    println!("{name}: {} (driver version {})", backend.library(), backend.driver_version());
    // One thread: the per-thread default stream is this thread's.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    if let Err(e) = rt.block_on(run(&backend)) {
        eprintln!("cuda_await: {e}");
        std::process::exit(1);
    }
}

async fn run(backend: &Backend) -> gpuar::Result<()> {
    let port = PortOptions::default().open()?;
    println!("engine: {}", port.engine().name());
    if let Some(w) = port.warning() {
        println!("note: {w}");
    }
    let port = AsyncPort::new(port)?;
    let line = backend.line(port.port())?;
    let plan: Plan = "flag:park_us=50,backstop_us=100000".parse()?;
    for i in 0..AWAITS {
        // SAFETY: the per-thread default stream of this (the runtime's)
        // thread, which outlives the await.
        let wait = unsafe { backend.stream_done(&port, &line, 0, STREAM_PER_THREAD, &plan) }?;
        let rec = match tokio::time::timeout(Duration::from_secs(5), wait).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(gpuar::Error::from_errno("await", libc::ETIMEDOUT));
            }
        };
        println!(
            "await {i}: sequence {} reached, outcome {}, status {}, waited {} us",
            rec.value,
            rec.outcome.name(),
            rec.status,
            rec.latency_ns() / 1000
        );
    }
    line.free(Duration::from_secs(1))
}
