// SPDX-License-Identifier: MIT
//! The bindings with the blocking host: plans, ports of both engines,
//! lines, word waits, cancel, records, statistics, the soft producer,
//! errors carrying gpuar's code and errno.
mod common;

use std::time::Duration;

use gpuar::{Code, Engine, Outcome, Plan, PortOptions, SoftProducer, WordWait};

#[test]
fn plans_parse_once_and_print_back() {
    let p: Plan = "flag:park_us=50,backstop_us=2000+predict:margin_us=10,min_sleep_us=5,max_sleep_us=900,window=4"
        .parse()
        .unwrap();
    let again: Plan = p.to_string().parse().unwrap();
    assert_eq!(p, again);
    assert_eq!(p.raw().park_ns, 50_000);
    assert_eq!(p.raw().window, 4);
    assert!("block".parse::<Plan>().unwrap().is_block());
}

#[test]
fn a_bad_plan_is_refused_with_its_code_and_errno() {
    let e = "flag:park_us=abc".parse::<Plan>().unwrap_err();
    assert_eq!(e.code(), Code::INVALID_PLAN);
    assert_eq!(e.errno(), libc::EINVAL);
    assert_eq!(e.code().name(), Some("invalid-plan"));
    assert!(e.message().contains("park_us"), "{}", e.message());
    let e = "poll\0".parse::<Plan>().unwrap_err();
    assert_eq!(e.code(), Code::INVALID_PLAN);
}

#[test]
fn the_user_engine_runs_and_says_so() {
    let port = PortOptions::new(Engine::User).open().unwrap();
    assert_eq!(port.engine(), Engine::User);
    assert!(port.warning().is_none());
    assert!(std::os::unix::io::AsRawFd::as_raw_fd(&port) >= 0);
}

#[test]
fn auto_reports_the_engine_and_its_fallback() {
    let port = PortOptions::new(Engine::Auto).open().unwrap();
    if std::path::Path::new("/dev/gpuar").exists() {
        assert_eq!(port.engine(), Engine::Kernel);
    } else {
        assert_eq!(port.engine(), Engine::User);
        let w = port.warning().expect("a fallback warning");
        assert_eq!(w.code, Code::ENGINE_FALLBACK);
        assert!(w.code.is_warning());
    }
}

#[test]
fn an_explicit_kernel_engine_without_its_device_is_refused() {
    let e = PortOptions::new(Engine::Kernel).device_path("/nonexistent/gpuar").open().unwrap_err();
    assert_eq!(e.code(), Code::ENGINE_UNAVAILABLE);
    assert_eq!(e.errno(), libc::ENOENT);
    assert_eq!(std::io::Error::from(e).kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn a_word_wait_completes_when_the_producer_stores() {
    let port = common::port();
    let line = port.line().unwrap();
    assert!(line.id() > 0);
    let producer = SoftProducer::new().unwrap();
    let start = gpuar::now_ns();
    producer.store_after(&line, 3, 7, 3_000_000).unwrap();
    let rec = port.wait_blocking(&line, 3, 7, &common::plan(), |_| panic!("no other wait")).unwrap();
    assert_eq!(rec.value, 7);
    assert_eq!(rec.status, 0);
    assert!(matches!(rec.outcome, Outcome::Exact | Outcome::Late), "{:?}", rec.outcome);
    let stored = producer.stored_at(&line, 3, 7).unwrap().expect("the store was made");
    assert!(stored >= start + 3_000_000 && rec.complete_ns >= stored);
    assert_eq!(line.load(3).unwrap(), 7);
    let st = port.stats().unwrap();
    assert_eq!(st.submitted, 1);
    assert_eq!(st.outcomes[rec.outcome.raw() as usize], 1);
    assert_eq!(port.point_stats(1).unwrap().samples, 1);
}

#[test]
fn a_done_word_completes_at_once_and_a_batch_is_all_or_nothing() {
    let port = common::port();
    let line = port.line().unwrap();
    line.store(0, 5).unwrap();
    let ok = WordWait::new(&line, 0, 5).unwrap().plan(&common::plan()).user_data(10);
    port.submit_word_waits(&[ok]).unwrap();
    let rec = port.reap_one(Some(Duration::from_secs(5))).unwrap().unwrap();
    assert_eq!((rec.user_data, rec.outcome), (10, Outcome::Immediate));
    // The second entry names a line the port no longer has.
    let gone = port.line().unwrap();
    let bad = WordWait::new(&gone, 0, 1).unwrap().plan(&common::plan()).user_data(12);
    drop(gone);
    let e = port.submit_word_waits(&[ok.user_data(11), bad]).unwrap_err();
    assert_eq!(e.errno(), libc::ENOENT);
    assert!(e.message().contains("entry 1"), "{}", e.message());
    assert!(port.reap_ready().unwrap().is_empty(), "nothing of a refused batch was submitted");
}

#[test]
fn a_bad_slot_and_a_block_plan_are_refused() {
    let port = common::port();
    let line = port.line().unwrap();
    assert_eq!(WordWait::new(&line, 8, 1).unwrap_err().errno(), libc::EINVAL);
    let e = port.wait_blocking(&line, 0, 1, &"block".parse().unwrap(), |_| {}).unwrap_err();
    assert_eq!(e.code(), Code::INVALID_PLAN);
}

#[test]
fn cancel_gives_a_cancelled_record_and_then_enoent() {
    let port = common::port();
    let line = port.line().unwrap();
    port.submit(&WordWait::new(&line, 1, 1).unwrap().plan(&common::plan()).user_data(42)).unwrap();
    assert_eq!(port.cancel(42).unwrap(), 1);
    let rec = port.reap_one(Some(Duration::from_secs(5))).unwrap().unwrap();
    assert_eq!((rec.user_data, rec.outcome, rec.status), (42, Outcome::Cancelled, -libc::ECANCELED));
    assert_eq!(port.cancel(42).unwrap_err().errno(), libc::ENOENT);
}

#[test]
fn a_reap_with_a_timeout_returns_none_when_nothing_comes() {
    let port = common::port();
    let t = std::time::Instant::now();
    assert!(port.reap_one(Some(Duration::from_millis(20))).unwrap().is_none());
    assert!(t.elapsed() >= Duration::from_millis(19));
}

#[test]
fn a_word_wait_from_many_threads() {
    let port = std::sync::Arc::new(common::port());
    let line = port.line().unwrap();
    let producer = SoftProducer::new().unwrap();
    for slot in 0..8 {
        producer.store_after(&line, slot, 1, 1_000_000 + u64::from(slot) * 500_000).unwrap();
        port.submit(&WordWait::new(&line, slot, 1).unwrap().plan(&common::plan()).user_data(100 + u64::from(slot)))
            .unwrap();
    }
    let got: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let port = port.clone();
                s.spawn(move || {
                    let mut mine = Vec::new();
                    while let Some(r) = port.reap_one(Some(Duration::from_millis(200))).unwrap() {
                        mine.push(r.user_data);
                    }
                    mine
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let mut got = got;
    got.sort_unstable();
    assert_eq!(got, (100..108).collect::<Vec<_>>());
}

#[test]
fn a_fence_wait_needs_a_sync_file() {
    let port = common::port();
    assert_eq!(port.submit_fence(-1, 1).unwrap_err().errno(), libc::EBADF);
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let e = port.submit_fence(fds[0], 2).unwrap_err();
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    assert_eq!(e.errno(), libc::EINVAL, "{e}");
    assert!(port.reap_ready().unwrap().is_empty());
}
