// SPDX-License-Identifier: MIT
//! The tokio host on a port of the engine GPUAR_TEST_ENGINE names
//! ("kernel" in the test VM, where tools/vm stages this program as
//! /tests/rust_tokio_test), printing TAP: awaits complete, many at once,
//! a dropped await is cancelled and its record consumed, and imminent
//! readiness (EPOLLPRI on the kernel engine, through the host's private
//! epoll fd) serves predicted awaits.
use std::time::Duration;

use gpuar::{AsyncPort, Engine, Outcome, Plan, PortOptions, SoftProducer};

const PLAN: &str = "flag:park_us=200,backstop_us=1000000";

type Check = fn(Engine) -> Result<(), String>;

fn main() {
    let engine: Engine = match std::env::var("GPUAR_TEST_ENGINE").unwrap_or_else(|_| "user".into()).parse() {
        Ok(e) => e,
        Err(e) => {
            println!("Bail out! {e}");
            std::process::exit(1);
        }
    };
    let checks: [(&str, Check); 4] = [
        ("an await completes on the store", one_await),
        ("200 concurrent awaits in one runtime", many_awaits),
        ("a dropped await is cancelled and its record consumed", dropped_await),
        ("imminent readiness serves predicted awaits", imminent_awaits),
    ];
    println!("TAP version 13");
    println!("1..{}", checks.len());
    let mut failed = 0;
    for (i, (name, check)) in checks.iter().enumerate() {
        match check(engine) {
            Ok(()) => println!("ok {} - {} ({} engine)", i + 1, name, engine.name()),
            Err(why) => {
                failed += 1;
                println!("not ok {} - {} ({} engine)\n# {}", i + 1, name, engine.name(), why);
            }
        }
    }
    std::process::exit(if failed == 0 { 0 } else { 1 });
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime")
}

fn port(engine: Engine, imminent: bool) -> Result<AsyncPort, String> {
    let port = PortOptions::new(engine).strict(true).imminent(imminent).open().map_err(|e| e.to_string())?;
    if port.engine() != engine {
        return Err(format!("asked for {}, got {}", engine.name(), port.engine().name()));
    }
    AsyncPort::new(port).map_err(|e| e.to_string())
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn one_await(engine: Engine) -> Result<(), String> {
    runtime().block_on(async {
        let port = port(engine, false)?;
        let line = port.port().line().map_err(err)?;
        let producer = SoftProducer::new().map_err(err)?;
        producer.store_after(&line, 0, 5, 5_000_000).map_err(err)?;
        let plan: Plan = PLAN.parse().map_err(err)?;
        let wait = port.wait(&line, 0, 5, &plan).map_err(err)?;
        let rec = tokio::time::timeout(Duration::from_secs(20), wait).await.map_err(err)?.map_err(err)?;
        if rec.value != 5 || rec.status != 0 {
            return Err(format!("record {rec:?}"));
        }
        Ok(())
    })
}

fn many_awaits(engine: Engine) -> Result<(), String> {
    runtime().block_on(async {
        let port = port(engine, false)?;
        let line = port.port().line().map_err(err)?;
        let producer = SoftProducer::new().map_err(err)?;
        let plan: Plan = PLAN.parse().map_err(err)?;
        let now = gpuar::now_ns();
        let mut tasks = Vec::new();
        for slot in 0..8u32 {
            for k in 1..=25u64 {
                producer.store_at(&line, slot, k, now + 5_000_000 + k * 1_000_000).map_err(err)?;
                tasks.push(tokio::spawn(port.wait(&line, slot, k, &plan).map_err(err)?));
            }
        }
        for t in tasks {
            tokio::time::timeout(Duration::from_secs(60), t).await.map_err(err)?.map_err(err)?.map_err(err)?;
        }
        let st = port.port().stats().map_err(err)?;
        if port.outstanding() != 0 || st.pending != 0 || st.queued != 0 || st.submitted != 200 {
            return Err(format!("left over: {} outstanding, stats {st:?}", port.outstanding()));
        }
        Ok(())
    })
}

fn dropped_await(engine: Engine) -> Result<(), String> {
    runtime().block_on(async {
        let port = port(engine, false)?;
        let line = port.port().line().map_err(err)?;
        let plan: Plan = PLAN.parse().map_err(err)?;
        let wait = port.wait(&line, 1, 1, &plan).map_err(err)?;
        if tokio::time::timeout(Duration::from_millis(20), wait).await.is_ok() {
            return Err("the wait completed with nothing stored".into());
        }
        let st = port.port().stats().map_err(err)?;
        if port.outstanding() != 0 || st.pending != 0 || st.queued != 0 || st.outcomes[Outcome::Cancelled.raw() as usize] != 1 {
            return Err(format!("left over: {} outstanding, stats {st:?}", port.outstanding()));
        }
        Ok(())
    })
}

fn imminent_awaits(engine: Engine) -> Result<(), String> {
    runtime().block_on(async {
        let port = port(engine, true)?;
        if !port.port().imminent() {
            return Err("the port runs no imminent readiness".into());
        }
        let line = port.port().line().map_err(err)?;
        let producer = SoftProducer::new().map_err(err)?;
        // The sleep stays below the 5 ms jobs: a store seen late (a watch
        // the loaded guest preempted) would otherwise teach the estimator
        // a sleep that passes every later store.
        let plan: Plan =
            "flag:park_us=1000,backstop_us=1000000+predict:margin_us=300,min_sleep_us=50,max_sleep_us=4000,window=4"
                .parse()
                .map_err(err)?;
        for i in 1..=12u64 {
            producer.store_after(&line, 2, i, 5_000_000).map_err(err)?;
            let wait = port.wait(&line, 2, i, &plan).map_err(err)?;
            let rec = tokio::time::timeout(Duration::from_secs(20), wait).await.map_err(err)?.map_err(err)?;
            if rec.value != i {
                return Err(format!("record {rec:?}"));
            }
        }
        let st = port.port().stats().map_err(err)?;
        if engine == Engine::Kernel && st.imminent == 0 {
            return Err(format!("no wait was raised imminent: {st:?}"));
        }
        Ok(())
    })
}
