// SPDX-License-Identifier: MIT
//! The FILL executor: one task waits for the "GPU" (the soft producer
//! stores the word after 30 ms) while another keeps the CPU busy with
//! ready work; the executor idles only when nothing is ready. At the end
//! it prints what that saved against waiting for the GPU first and doing
//! the CPU work after. The kind is resolved through the fallback chain
//! (io-uring -> gpu-reactor -> naive): on a host without io_uring it says
//! what runs instead.
//!
//!   fill_executor [io-uring|gpu-reactor|naive]
use std::cell::Cell;
use std::rc::Rc;

use gpuar::exec::{ExecKind, Executor, Step};
use gpuar::{now_ns, SoftProducer, Word};

fn main() {
    if let Err(e) = run() {
        eprintln!("fill_executor: {e}");
        std::process::exit(1);
    }
}

fn run() -> gpuar::Result<()> {
    let kind = match std::env::args().nth(1) {
        Some(name) => ExecKind::parse(&name)?,
        None => ExecKind::IoUring,
    };
    let mut ex = Executor::new(kind, false)?;
    if let Some(w) = ex.warning() {
        println!("note: {w}");
    }
    let device = SoftProducer::new()?;
    let word = Word::new(0);
    let start = now_ns();
    device.store_word_at(&word, 1, start + 30_000_000)?; // GPU: 30 ms

    let gpu_done_at = Rc::new(Cell::new(0u64));
    {
        let (word, done) = (word.clone(), gpu_done_at.clone());
        ex.spawn(move |t| {
            if word.load() >= 1 {
                done.set(now_ns());
                return Ok(Step::Done);
            }
            t.await_word(&word, 1)?;
            Ok(Step::Pending)
        })?;
    }
    const SLICES: u32 = 10;
    let slices_done = Rc::new(Cell::new(0u32));
    let busy_ns = Rc::new(Cell::new(0u64));
    {
        let (done, busy) = (slices_done.clone(), busy_ns.clone());
        ex.spawn(move |t| {
            let from = now_ns();
            while now_ns() < from + 1_000_000 {} // 1 ms of "work"
            busy.set(busy.get() + now_ns() - from);
            done.set(done.get() + 1);
            if done.get() == SLICES {
                return Ok(Step::Done);
            }
            t.yield_now()?;
            Ok(Step::Pending)
        })?;
    }
    ex.run()?;
    let total = now_ns() - start;
    let gpu = gpu_done_at.get() - start;
    let st = ex.stats();
    println!(
        "executor {}: GPU wait done after {} us, {} CPU slices ran",
        ex.kind().name(),
        gpu / 1000,
        slices_done.get()
    );
    let serial = gpu + busy_ns.get();
    println!(
        "FILL saved {} us: the run took {} us, waiting first and working after would take {} us (GPU {} + CPU {})",
        serial.saturating_sub(total) / 1000,
        total / 1000,
        serial / 1000,
        gpu / 1000,
        busy_ns.get() / 1000
    );
    println!(
        "polls {}, wakes {}, sleeps {}, parks {}, idle {} us",
        st.polls,
        st.wakes,
        st.sleeps,
        st.parks,
        st.idle_ns / 1000
    );
    Ok(())
}
