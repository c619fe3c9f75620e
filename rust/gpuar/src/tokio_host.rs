// SPDX-License-Identifier: MIT
//! The tokio host: a port's fd in `tokio::io::unix::AsyncFd`.
//!
//! Whichever task polls finds the fd ready, runs the engine
//! (`gpuar_port_process`) and reaps every record without blocking, then
//! hands each to the future awaiting its user_data, or to the
//! [`Records`] stream when none does. `AsyncFd` keeps the waker of the
//! last task that polled it; when that task's wait ends, another waiting
//! task is woken to take its place, so a pending wait always has a task
//! registered for the fd.
//!
//! Imminent readiness: the user engine's fd turns readable at an
//! imminent wait, which `AsyncFd`'s readable interest hears. The kernel
//! engine's port raises EPOLLPRI instead, which tokio 1.24 cannot ask for
//! (its `Interest` has no priority kind), so such a port is
//! watched through a private epoll fd of its own that asks for
//! EPOLLIN | EPOLLPRI, and that epoll fd is what `AsyncFd` registers.
use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::os::unix::io::{AsRawFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use crate::error::{self, Error, Result};
use crate::plan::Plan;
use crate::port::{record_result, Line, Port, WordWait, REAP_BATCH};
use crate::record::{Outcome, Record};
use crate::sys;

/// The fd AsyncFd registers: the port's own, or a private epoll fd over it.
#[derive(Debug)]
enum Watched {
    Port(RawFd),
    Epoll(RawFd),
}

impl AsRawFd for Watched {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Watched::Port(fd) | Watched::Epoll(fd) => *fd,
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Watched::Epoll(fd) = self {
            unsafe { libc::close(*fd) };
        }
    }
}

struct Pending {
    record: Option<Record>,
    waker: Option<Waker>,
    /// A word wait to resubmit (keeping its start) when its backstop ends it.
    resubmit: Option<WordWait>,
}

#[derive(Default)]
struct State {
    waits: HashMap<u64, Pending>,
    /// Waits whose future was dropped: their record is reaped and dropped.
    dropped: HashSet<u64>,
    unclaimed: VecDeque<Record>,
    stream_waker: Option<Waker>,
    /// Who AsyncFd will wake: a wait's user_data, or STREAM.
    driver: Option<u64>,
    failed: Option<Error>,
}

const STREAM: u64 = u64::MAX;

struct Shared {
    // Declared before the port: deregistered before the port closes.
    fd: AsyncFd<Watched>,
    port: Port,
    state: Mutex<State>,
    vendor: AtomicBool,
}

/// A port on a tokio runtime. Clones share the port.
///
/// `wait(...).await` completes with the wait's [`Record`]; dropping the
/// future cancels the wait (`gpuar_cancel`) and its record is reaped and
/// dropped. Records of waits submitted without a future
/// ([`AsyncPort::submit`]) come from [`AsyncPort::records`].
/// Create it inside a runtime (it registers with the runtime's reactor);
/// its futures belong to that runtime.
#[derive(Clone)]
pub struct AsyncPort {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for AsyncPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncPort").field("port", &self.shared.port).finish()
    }
}

impl AsyncPort {
    /// Put @port on the current tokio runtime. Errors: not inside a
    /// runtime, or the fd cannot be registered (EPERM, ...).
    pub fn new(port: Port) -> Result<AsyncPort> {
        let fd = port.as_raw_fd();
        let watched = if port.imminent() && port.engine() == crate::Engine::Kernel {
            let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
            if ep < 0 {
                return Err(Error::from_errno("epoll_create1", last_errno()));
            }
            let watched = Watched::Epoll(ep);
            let mut ev = libc::epoll_event { events: (libc::EPOLLIN | libc::EPOLLPRI) as u32, u64: 0 };
            if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
                return Err(Error::from_errno("epoll_ctl", last_errno()));
            }
            watched
        } else {
            Watched::Port(fd)
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(Error::coded(
                "AsyncPort::new",
                libc::EINVAL,
                crate::Code::INVALID_ARGUMENT,
                "not inside a tokio runtime",
            ));
        }
        let fd = AsyncFd::with_interest(watched, Interest::READABLE)
            .map_err(|e| Error::from_errno("AsyncFd::new", e.raw_os_error().unwrap_or(libc::EIO)))?;
        Ok(AsyncPort {
            shared: Arc::new(Shared { fd, port, state: Mutex::new(State::default()), vendor: AtomicBool::new(false) }),
        })
    }

    /// The port (for lines, statistics, plain calls).
    pub fn port(&self) -> &Port {
        &self.shared.port
    }

    /// Submit a word wait on @slot of @line for @target and await its
    /// record. A wait whose backstop ends it is resubmitted with its
    /// original start (a word cannot fail: bound it with
    /// `tokio::time::timeout`, which drops, and so cancels, the wait).
    /// A record with an error status is an [`Error`].
    pub fn wait(&self, line: &Line, slot: u32, target: u64, plan: &Plan) -> Result<Wait> {
        plan.refuse_block("AsyncPort::wait")?;
        let user_data = self.shared.port.next_user_data();
        let wait = WordWait::new(line, slot, target)?.plan(plan).user_data(user_data);
        self.await_submitted(user_data, Some(wait), || self.shared.port.submit(&wait))
    }

    /// Submit a fence wait on the sync_file @fd (the port takes its own
    /// reference: the fd stays the caller's) and await its record; the
    /// fence's error status is an [`Error`].
    pub fn fence(&self, fd: RawFd) -> Result<Wait> {
        let user_data = self.shared.port.next_user_data();
        self.await_submitted(user_data, None, || self.shared.port.submit_fence(fd, user_data))
    }

    /// Await the record of a wait that @submit submits, carrying
    /// @user_data (unique among the port's pending waits).
    pub(crate) fn await_submitted(
        &self,
        user_data: u64,
        resubmit: Option<WordWait>,
        submit: impl FnOnce() -> Result<()>,
    ) -> Result<Wait> {
        let mut st = self.state();
        if st.waits.contains_key(&user_data) {
            return Err(Error::coded(
                "await",
                libc::EEXIST,
                crate::Code::INVALID_ARGUMENT,
                &format!("user_data {user_data} is already awaited"),
            ));
        }
        submit()?;
        st.waits.insert(user_data, Pending { record: None, waker: None, resubmit });
        drop(st);
        Ok(Wait { port: self.clone(), user_data, done: false })
    }

    /// Submit a word wait whose record comes from [`AsyncPort::records`].
    pub fn submit(&self, wait: &WordWait) -> Result<()> {
        self.shared.port.submit(wait)
    }

    /// The records of waits no future awaits, in completion order.
    pub fn records(&self) -> Records {
        Records { port: self.clone() }
    }

    /// Waits awaited or dropped whose record has not been reaped yet.
    pub fn outstanding(&self) -> usize {
        let st = self.state();
        st.waits.len() + st.dropped.len()
    }

    pub(crate) fn mark_vendor(&self) {
        self.shared.vendor.store(true, Ordering::Relaxed);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reap whatever is ready while the fd says so; leaves @me's waker
    /// registered with the fd when it returns, unless @me's record came:
    /// then it returns at once and another waiting task takes over the fd
    /// when @me leaves (hand_off).
    fn drive(&self, cx: &mut Context<'_>, me: u64) {
        loop {
            let mut guard = match self.shared.fd.poll_read_ready(cx) {
                Poll::Pending => {
                    self.state().driver = Some(me);
                    return;
                }
                Poll::Ready(Ok(g)) => g,
                Poll::Ready(Err(e)) => {
                    let e = Error::from_errno("AsyncFd::poll_read_ready", e.raw_os_error().unwrap_or(libc::EIO));
                    self.fail_all(e);
                    return;
                }
            };
            match self.drain(me) {
                Ok(true) => {
                    // Left before the reap that finds the queue empty,
                    // which settles the user engine's timer: readiness
                    // stays for the next task to poll, which makes it.
                    guard.retain_ready();
                    self.state().driver = Some(me);
                    return;
                }
                Ok(false) => guard.clear_ready(),
                Err(e) => {
                    self.fail_all(e);
                    return;
                }
            }
        }
    }

    /// Reap (gpuar_port_reap runs the engine first) until a reap finds nothing,
    /// as an edge-triggered loop must (that reap also settles the user
    /// engine's timer), or until @me's record came (true): the awaiting
    /// task returns with it at once, a reap sooner than otherwise.
    fn drain(&self, me: u64) -> Result<bool> {
        let port = &self.shared.port;
        let mut raw = [sys::gpuar_record::default(); REAP_BATCH];
        loop {
            let ret = unsafe { sys::gpuar_port_reap(port.raw(), raw.as_mut_ptr(), REAP_BATCH as u32, 0) };
            if ret == -libc::EAGAIN || ret == -libc::ETIME {
                return Ok(false);
            }
            let n = error::check("gpuar_port_reap", ret, None)? as usize;
            let mut mine = false;
            for r in &raw[..n] {
                if let Some(rec) = self.resolve(r)? {
                    mine |= self.dispatch(rec, me)?;
                }
            }
            if mine {
                return Ok(true);
            }
        }
    }

    /// A record as the vendor backends see it (a backstop of a stream
    /// await is resolved by asking the stream; None: resubmitted).
    fn resolve(&self, r: &sys::gpuar_record) -> Result<Option<Record>> {
        if !self.shared.vendor.load(Ordering::Relaxed) {
            return Ok(Some(Record::from_raw(r)));
        }
        let mut out = sys::gpuar_vendor_completion {
            record: sys::gpuar_record::default(),
            vendor_status: 0,
            pad: 0,
            vendor_name: std::ptr::null(),
        };
        let mut d = error::diag();
        let ret = unsafe { sys::gpuar_vendor_resolve(self.shared.port.raw(), r, &mut out, &mut d) };
        Ok(match error::check("gpuar_vendor_resolve", ret, Some(&d))? {
            0 => None,
            _ => Some(Record::from_vendor(&out)),
        })
    }

    /// Hand @rec to its await (or the stream); true when it is @me's.
    fn dispatch(&self, rec: Record, me: u64) -> Result<bool> {
        let mut st = self.state();
        if let Some(p) = st.waits.get_mut(&rec.user_data) {
            if rec.outcome == Outcome::Timeout {
                if let Some(w) = p.resubmit {
                    let w = w.start_ns(rec.start_ns);
                    p.resubmit = Some(w);
                    self.shared.port.submit(&w)?;
                    return Ok(false);
                }
            }
            p.record = Some(rec);
            if rec.user_data == me {
                return Ok(true);
            }
            if let Some(w) = p.waker.take() {
                w.wake();
            }
        } else if !st.dropped.remove(&rec.user_data) {
            st.unclaimed.push_back(rec);
            if me == STREAM {
                return Ok(true);
            }
            if let Some(w) = st.stream_waker.take() {
                w.wake();
            }
        }
        Ok(false)
    }

    fn fail_all(&self, e: Error) {
        let mut st = self.state();
        st.failed = Some(e);
        for p in st.waits.values_mut() {
            if let Some(w) = p.waker.take() {
                w.wake();
            }
        }
        if let Some(w) = st.stream_waker.take() {
            w.wake();
        }
    }

    /// The task AsyncFd would wake is leaving: wake another to take over.
    fn hand_off(st: &mut State, leaving: u64) {
        if st.driver != Some(leaving) {
            return;
        }
        st.driver = None;
        let next = st.waits.values_mut().find_map(|p| p.waker.take());
        if let Some(w) = next.or_else(|| st.stream_waker.take()) {
            w.wake();
        }
    }

    /// Reap what is ready now, without waiting for the fd (a dropped
    /// wait's CANCELLED record is queued at once).
    fn drain_now(&self) {
        if let Err(e) = self.drain(STREAM - 1) {
            self.fail_all(e);
        }
    }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// The future of one await: its record, or the error its record carries.
/// Dropping it before it completes cancels the wait.
#[must_use = "a Wait does nothing unless awaited; dropping it cancels the wait"]
#[derive(Debug)]
pub struct Wait {
    port: AsyncPort,
    user_data: u64,
    done: bool,
}

impl Wait {
    /// The wait's user_data.
    pub fn user_data(&self) -> u64 {
        self.user_data
    }

    fn take(&mut self) -> Option<Result<Record>> {
        let mut st = self.port.state();
        if let Some(e) = &st.failed {
            let e = e.clone();
            st.waits.remove(&self.user_data);
            return Some(Err(e));
        }
        let p = st.waits.get_mut(&self.user_data)?;
        let rec = p.record.take()?;
        st.waits.remove(&self.user_data);
        AsyncPort::hand_off(&mut st, self.user_data);
        Some(record_result(rec))
    }
}

impl Future for Wait {
    type Output = Result<Record>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Record>> {
        if self.done {
            panic!("Wait polled after it completed");
        }
        if let Some(r) = self.take() {
            self.done = true;
            return Poll::Ready(r);
        }
        {
            let mut st = self.port.state();
            if let Some(p) = st.waits.get_mut(&self.user_data) {
                p.waker = Some(cx.waker().clone());
            }
        }
        self.port.drive(cx, self.user_data);
        if let Some(r) = self.take() {
            self.done = true;
            return Poll::Ready(r);
        }
        Poll::Pending
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let mut st = self.port.state();
        let arrived = match st.waits.remove(&self.user_data) {
            Some(p) => p.record.is_some(),
            None => true,
        };
        AsyncPort::hand_off(&mut st, self.user_data);
        if arrived || st.failed.is_some() {
            return;
        }
        // Still pending in gpuar: cancel it. Its CANCELLED record (or the
        // completion that won the race, -EALREADY) is queued now; reap it
        // at once so nothing is left behind for the port.
        match self.port.shared.port.cancel(self.user_data) {
            Ok(_) => {
                st.dropped.insert(self.user_data);
            }
            Err(e) if e.errno() == libc::EALREADY => {
                st.dropped.insert(self.user_data);
            }
            Err(_) => return, // ENOENT: nothing pending, no record comes
        }
        drop(st);
        self.port.drain_now();
    }
}

/// The records of waits no future awaits, as a `futures_core::Stream`
/// (and [`Records::next`]). It never ends by itself; a failing port gives
/// its error. Keep one `Records` of a port at a time: a second takes the
/// first one's wake-ups.
#[derive(Debug)]
pub struct Records {
    port: AsyncPort,
}

impl Records {
    /// The next record.
    pub fn next(&mut self) -> NextRecord<'_> {
        NextRecord { records: self }
    }

    fn poll_record(&mut self, cx: &mut Context<'_>) -> Poll<Result<Record>> {
        for _ in 0..2 {
            {
                let mut st = self.port.state();
                if let Some(r) = st.unclaimed.pop_front() {
                    return Poll::Ready(Ok(r));
                }
                if let Some(e) = &st.failed {
                    return Poll::Ready(Err(e.clone()));
                }
                st.stream_waker = Some(cx.waker().clone());
            }
            self.port.drive(cx, STREAM);
        }
        Poll::Pending
    }
}

impl Drop for Records {
    fn drop(&mut self) {
        let mut st = self.port.state();
        st.stream_waker = None;
        AsyncPort::hand_off(&mut st, STREAM);
    }
}

impl futures_core::Stream for Records {
    type Item = Result<Record>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Record>>> {
        self.poll_record(cx).map(Some)
    }
}

/// The future of [`Records::next`].
#[derive(Debug)]
pub struct NextRecord<'a> {
    records: &'a mut Records,
}

impl Future for NextRecord<'_> {
    type Output = Result<Record>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Record>> {
        self.records.poll_record(cx)
    }
}
