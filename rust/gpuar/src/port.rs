// SPDX-License-Identifier: MIT
//! Completion ports, lines, waits and the blocking host.
use std::ffi::CString;
use std::os::unix::io::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::error::{self, check, cstr, Code, Error, Result, Warning};
use crate::plan::Plan;
use crate::record::{Outcome, Record};
use crate::sys;

/// Which engine runs a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    /// The kernel engine when /dev/gpuar opens, else the user engine (with
    /// the warning [`Code::ENGINE_FALLBACK`]).
    Auto,
    /// The gpuar module's port.
    Kernel,
    /// A port run by the library in this process.
    User,
}

impl Engine {
    fn raw(self) -> u32 {
        match self {
            Engine::Auto => sys::GPUAR_ENGINE_AUTO,
            Engine::Kernel => sys::GPUAR_ENGINE_KERNEL,
            Engine::User => sys::GPUAR_ENGINE_USER,
        }
    }

    /// "kernel", "user" (the library's names; "auto" for Auto).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Auto => "auto",
            _ => cstr(unsafe { sys::gpuar_engine_name(self.raw()) }),
        }
    }
}

impl std::str::FromStr for Engine {
    type Err = Error;
    fn from_str(s: &str) -> Result<Engine> {
        match s {
            "auto" => Ok(Engine::Auto),
            "kernel" => Ok(Engine::Kernel),
            "user" => Ok(Engine::User),
            _ => Err(Error::coded(
                "engine",
                libc::EINVAL,
                Code::INVALID_ARGUMENT,
                &format!("unknown engine {s:?} (auto, kernel or user)"),
            )),
        }
    }
}

/// How to open a port (`struct gpuar_port_options`). Zero values are the
/// library's defaults.
#[derive(Clone, Debug)]
pub struct PortOptions {
    pub engine: Engine,
    /// Auto: refuse instead of falling back to the user engine.
    pub strict: bool,
    /// User engine: run the engine on a watcher thread.
    pub watcher: bool,
    /// Imminent readiness (`GPUAR_PORT_IMMINENT`): the port turns ready at
    /// a predicted wait's early wake, and the host that reaps it watches
    /// the word itself, for a spin's latency.
    pub imminent: bool,
    pub max_waits: u32,
    pub device_path: Option<String>,
    pub poll_interval_ns: u64,
    pub poll_backstop_ns: u64,
    pub max_lines: u32,
    pub max_points: u32,
    /// Busy-read budget in us (0: the default; `u32::MAX`: off).
    pub busy_read_us: u32,
}

impl Default for PortOptions {
    fn default() -> Self {
        PortOptions::new(Engine::Auto)
    }
}

impl PortOptions {
    pub fn new(engine: Engine) -> PortOptions {
        PortOptions {
            engine,
            strict: false,
            watcher: false,
            imminent: false,
            max_waits: 0,
            device_path: None,
            poll_interval_ns: 0,
            poll_backstop_ns: 0,
            max_lines: 0,
            max_points: 0,
            busy_read_us: 0,
        }
    }

    pub fn strict(mut self, on: bool) -> Self {
        self.strict = on;
        self
    }

    pub fn watcher(mut self, on: bool) -> Self {
        self.watcher = on;
        self
    }

    pub fn imminent(mut self, on: bool) -> Self {
        self.imminent = on;
        self
    }

    pub fn max_waits(mut self, n: u32) -> Self {
        self.max_waits = n;
        self
    }

    pub fn device_path(mut self, path: &str) -> Self {
        self.device_path = Some(path.to_owned());
        self
    }

    pub fn busy_read_us(mut self, us: u32) -> Self {
        self.busy_read_us = us;
        self
    }

    /// Open the port.
    pub fn open(&self) -> Result<Port> {
        Port::open(self)
    }
}

pub(crate) struct PortInner {
    pub(crate) raw: *mut sys::gpuar_port,
}

// SAFETY: a port is thread-safe (it has its own lock), and it is closed
// only when the last Arc goes, so no call runs on a closed port.
unsafe impl Send for PortInner {}
unsafe impl Sync for PortInner {}

impl Drop for PortInner {
    fn drop(&mut self) {
        unsafe { sys::gpuar_port_close(self.raw) };
    }
}

/// A completion port: a pollable fd that yields completion records.
///
/// Thread-safe: every method may be called from several threads at once.
/// Dropping it closes the port (cancelling its pending waits) once the
/// last [`Line`] made from it is gone too.
pub struct Port {
    pub(crate) inner: Arc<PortInner>,
    engine: Engine,
    warning: Option<Warning>,
    next_id: AtomicU64,
}

/// Port statistics (`struct gpuar_port_stats`, v2).
pub type PortStats = sys::gpuar_port_stats;

/// Per-point statistics (`struct gpuar_point_stats`).
#[derive(Clone, Copy, Debug)]
pub struct PointStats {
    pub samples: u64,
    /// The estimator's prediction for the point, when it has one.
    pub predicted_ns: Option<u64>,
    pub outcomes: [u64; sys::GPUAR_OUTCOME_SLOTS],
}

impl Port {
    /// Open a port; see [`PortOptions`].
    pub fn open(opts: &PortOptions) -> Result<Port> {
        let path = match &opts.device_path {
            Some(p) => Some(CString::new(p.as_str()).map_err(|_| {
                Error::coded("gpuar_port_open", libc::EINVAL, Code::INVALID_ARGUMENT, "device path holds a NUL byte")
            })?),
            None => None,
        };
        let mut flags = sys::GPUAR_PORT_CLOEXEC;
        if opts.strict {
            flags |= sys::GPUAR_PORT_STRICT;
        }
        if opts.watcher {
            flags |= sys::GPUAR_PORT_WATCHER;
        }
        if opts.imminent {
            flags |= sys::GPUAR_PORT_IMMINENT;
        }
        let raw_opts = sys::gpuar_port_options {
            size: std::mem::size_of::<sys::gpuar_port_options>() as u32,
            engine: opts.engine.raw(),
            flags,
            max_waits: opts.max_waits,
            device_path: path.as_ref().map_or(std::ptr::null(), |p| p.as_ptr()),
            poll_interval_ns: opts.poll_interval_ns,
            poll_backstop_ns: opts.poll_backstop_ns,
            max_lines: opts.max_lines,
            max_points: opts.max_points,
            busy_read_us: opts.busy_read_us,
            claim_slice_us: 0,
            reserved: [0; 12],
        };
        let mut raw = std::ptr::null_mut();
        let mut d = error::diag();
        let ret = unsafe { sys::gpuar_port_open(&mut raw, &raw_opts, &mut d) };
        check("gpuar_port_open", ret, Some(&d))?;
        let inner = Arc::new(PortInner { raw });
        let engine = match unsafe { sys::gpuar_port_engine(raw) } {
            sys::GPUAR_ENGINE_KERNEL => Engine::Kernel,
            _ => Engine::User,
        };
        Ok(Port { inner, engine, warning: error::warning_of(&d), next_id: AtomicU64::new(1) })
    }

    /// A user-engine port with default options.
    pub fn user() -> Result<Port> {
        PortOptions::new(Engine::User).open()
    }

    pub(crate) fn raw(&self) -> *mut sys::gpuar_port {
        self.inner.raw
    }

    /// The engine that runs (Kernel or User, never Auto).
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// The warning the open gave: an engine fallback
    /// ([`Code::ENGINE_FALLBACK`]) or a feature fallback
    /// ([`Code::FEATURE_FALLBACK`], imminent readiness unavailable).
    pub fn warning(&self) -> Option<&Warning> {
        self.warning.as_ref()
    }

    /// True when the port runs imminent readiness.
    pub fn imminent(&self) -> bool {
        unsafe { sys::gpuar_port_imminent(self.raw()) }
    }

    /// A fresh user_data, unique among this port's (1, 2, ...).
    pub fn next_user_data(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Allocate a line (eight u64 slots on a page of their own).
    pub fn line(&self) -> Result<Line> {
        let mut raw = std::ptr::null_mut();
        let ret = unsafe { sys::gpuar_line_alloc(self.raw(), &mut raw) };
        check("gpuar_line_alloc", ret, None)?;
        Ok(Line::new(self.inner.clone(), raw))
    }

    /// Submit word waits, all or nothing. On failure the error names the
    /// first bad entry's index (or the whole batch).
    pub fn submit_word_waits(&self, waits: &[WordWait]) -> Result<()> {
        let raw: Vec<sys::gpuar_word_wait> = waits.iter().map(|w| w.raw).collect();
        let count = u32::try_from(raw.len()).map_err(|_| Error::from_errno("gpuar_submit_word_waits", libc::E2BIG))?;
        let mut index = 0u32;
        let ret = unsafe { sys::gpuar_submit_word_waits(self.raw(), raw.as_ptr(), count, &mut index) };
        batch_result("gpuar_submit_word_waits", ret, index, count)
    }

    /// Submit one word wait.
    pub fn submit(&self, wait: &WordWait) -> Result<()> {
        let ret = unsafe { sys::gpuar_submit_word_waits(self.raw(), &wait.raw, 1, std::ptr::null_mut()) };
        check("gpuar_submit_word_waits", ret, None).map(drop)
    }

    /// Wait for a sync_file @fd to signal (the port takes its own
    /// reference; the fd stays the caller's).
    pub fn submit_fence(&self, fd: RawFd, user_data: u64) -> Result<()> {
        let wait = sys::gpuar_fence_wait { user_data, fd, flags: 0, reserved: [0; 2] };
        let ret = unsafe { sys::gpuar_submit_fence_waits(self.raw(), &wait, 1, std::ptr::null_mut()) };
        check("gpuar_submit_fence_waits", ret, None).map(drop)
    }

    /// Cancel the pending waits carrying @user_data; returns how many (each
    /// gets a CANCELLED record). EALREADY: it completed first (its record is
    /// queued); ENOENT: none is pending.
    pub fn cancel(&self, user_data: u64) -> Result<u32> {
        check("gpuar_cancel", unsafe { sys::gpuar_cancel(self.raw(), user_data) }, None)
    }

    /// Run the user engine's due checks (and, with imminent readiness,
    /// watch the imminent waits); returns the records now queued.
    pub fn process(&self) -> Result<u32> {
        check("gpuar_port_process", unsafe { sys::gpuar_port_process(self.raw()) }, None)
    }

    /// When the user engine must run next (CLOCK_MONOTONIC ns), None when
    /// no word wait is pending; Some(0) on the kernel engine.
    pub fn next_check_ns(&self) -> Option<u64> {
        match unsafe { sys::gpuar_port_next_check_ns(self.raw()) } {
            u64::MAX => None,
            t => Some(t),
        }
    }

    /// The blocking host: reap up to `out.len()` records into @out, waiting
    /// at most @timeout (None: until one comes; `Duration::ZERO`: never
    /// blocks). Returns how many (0 when none came in time). The user
    /// engine runs, and busy-reads, in the calling thread meanwhile.
    pub fn reap_into(&self, out: &mut [Record], timeout: Option<Duration>) -> Result<usize> {
        if out.is_empty() {
            return Err(Error::coded("gpuar_port_reap", libc::EINVAL, Code::INVALID_ARGUMENT, "no room for a record"));
        }
        let max = out.len().min(REAP_BATCH);
        let mut raw = [sys::gpuar_record::default(); REAP_BATCH];
        let t = match timeout {
            None => -1,
            Some(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        };
        let ret = unsafe { sys::gpuar_port_reap(self.raw(), raw.as_mut_ptr(), max as u32, t) };
        if ret == -libc::EAGAIN || ret == -libc::ETIME {
            return Ok(0);
        }
        let n = check("gpuar_port_reap", ret, None)? as usize;
        for (o, r) in out.iter_mut().zip(&raw[..n]) {
            *o = Record::from_raw(r);
        }
        Ok(n)
    }

    /// The records ready now, without blocking (at most 64).
    pub fn reap_ready(&self) -> Result<Vec<Record>> {
        let mut out = [EMPTY_RECORD; REAP_BATCH];
        let n = self.reap_into(&mut out, Some(Duration::ZERO))?;
        Ok(out[..n].to_vec())
    }

    /// Block until one record comes (or @timeout passes: None).
    pub fn reap_one(&self, timeout: Option<Duration>) -> Result<Option<Record>> {
        let mut out = [EMPTY_RECORD; 1];
        Ok(match self.reap_into(&mut out, timeout)? {
            0 => None,
            _ => Some(out[0]),
        })
    }

    /// Submit a word wait on @slot of @line reaching @target and block
    /// until its record comes (records of other waits reaped meanwhile are
    /// handed to @others). A wait that fails becomes an error carrying its
    /// record's status.
    pub fn wait_blocking(
        &self,
        line: &Line,
        slot: u32,
        target: u64,
        plan: &Plan,
        mut others: impl FnMut(Record),
    ) -> Result<Record> {
        plan.refuse_block("wait_blocking")?;
        let user_data = self.next_user_data();
        let mut wait = WordWait::new(line, slot, target)?.plan(plan).user_data(user_data);
        self.submit(&wait)?;
        let mut buf = [EMPTY_RECORD; 16];
        loop {
            let n = self.reap_into(&mut buf, None)?;
            for rec in &buf[..n] {
                if rec.user_data != user_data {
                    others(*rec);
                } else if rec.outcome == Outcome::Timeout {
                    // A word cannot fail: resubmit, keeping the start.
                    wait = wait.start_ns(rec.start_ns);
                    self.submit(&wait)?;
                } else {
                    return record_result(*rec);
                }
            }
        }
    }

    /// Port statistics.
    pub fn stats(&self) -> Result<PortStats> {
        let mut st = sys::gpuar_port_stats {
            size: std::mem::size_of::<sys::gpuar_port_stats>() as u32,
            ..Default::default()
        };
        check("gpuar_port_stats", unsafe { sys::gpuar_port_stats(self.raw(), &mut st) }, None)?;
        Ok(st)
    }

    /// Statistics of estimator point @point (ENOENT: never used).
    pub fn point_stats(&self, point: u64) -> Result<PointStats> {
        let mut st = sys::gpuar_point_stats {
            size: std::mem::size_of::<sys::gpuar_point_stats>() as u32,
            point,
            ..Default::default()
        };
        check("gpuar_point_stats", unsafe { sys::gpuar_point_stats(self.raw(), &mut st) }, None)?;
        Ok(PointStats {
            samples: st.samples,
            predicted_ns: (st.flags & sys::GPUAR_POINT_HAS_PREDICTION != 0).then(|| st.predicted_ns),
            outcomes: st.outcomes,
        })
    }
}

impl AsRawFd for Port {
    /// The port's pollable fd, owned by the port: do not close or read it.
    fn as_raw_fd(&self) -> RawFd {
        unsafe { sys::gpuar_port_fd(self.raw()) }
    }
}

impl std::fmt::Debug for Port {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Port").field("engine", &self.engine).field("fd", &self.as_raw_fd()).finish()
    }
}

pub(crate) const REAP_BATCH: usize = 64;
pub(crate) const EMPTY_RECORD: Record = Record {
    user_data: 0,
    start_ns: 0,
    complete_ns: 0,
    slept_ns: 0,
    point: 0,
    value: 0,
    status: 0,
    checks: 0,
    source: 0,
    outcome: Outcome::Other(0),
    vendor_status: 0,
    vendor_name: None,
};

/// A record whose status is an error becomes that error (the record's
/// outcome in the message).
pub(crate) fn record_result(rec: Record) -> Result<Record> {
    if rec.status >= 0 {
        return Ok(rec);
    }
    let mut e = Error::from_errno(&format!("wait {} ({})", rec.user_data, rec.outcome.name()), -rec.status);
    if let Some(name) = rec.vendor_name {
        e = Error::coded(
            &format!("wait {} ({}, {name})", rec.user_data, rec.outcome.name()),
            -rec.status,
            Code::BACKEND,
            &format!("vendor status {}", rec.vendor_status),
        );
    }
    Err(e)
}

fn batch_result(call: &str, ret: i32, index: u32, count: u32) -> Result<()> {
    if ret >= 0 {
        return Ok(());
    }
    let what = if index < count { format!("entry {index}") } else { "the batch".to_owned() };
    Err(Error::coded(
        call,
        -ret,
        Code::OK,
        &format!("{what} refused: {}", std::io::Error::from_raw_os_error(-ret)),
    ))
}

pub(crate) struct LineInner {
    port: Arc<PortInner>,
    raw: *mut sys::gpuar_line,
    words: *const AtomicU64,
    id: u32,
}

// SAFETY: a line's calls are thread-safe; its words are atomics.
unsafe impl Send for LineInner {}
unsafe impl Sync for LineInner {}

impl Drop for LineInner {
    fn drop(&mut self) {
        // -EBUSY (waits still pending): the port frees it when it closes.
        unsafe { sys::gpuar_line_free(self.port.raw, self.raw) };
    }
}

/// A line: eight u64 words (slots) a producer stores sequence numbers
/// into, on a page of their own. Clones share the line; it is freed when
/// the last goes (or, while waits on it are pending, with its port).
#[derive(Clone)]
pub struct Line {
    pub(crate) inner: Arc<LineInner>,
}

impl Line {
    pub(crate) fn new(port: Arc<PortInner>, raw: *mut sys::gpuar_line) -> Line {
        let words = unsafe { sys::gpuar_line_words(raw) } as *const AtomicU64;
        let id = unsafe { sys::gpuar_line_id(raw) };
        Line { inner: Arc::new(LineInner { port, raw, words, id }) }
    }

    /// The id word waits name the line by.
    pub fn id(&self) -> u32 {
        self.inner.id
    }

    /// The word of @slot (0..8).
    pub fn word(&self, slot: u32) -> Result<&AtomicU64> {
        check_slot(slot)?;
        // SAFETY: the page stays mapped while the line lives.
        Ok(unsafe { &*self.inner.words.add(slot as usize) })
    }

    /// Load @slot's word (acquire).
    pub fn load(&self, slot: u32) -> Result<u64> {
        Ok(self.word(slot)?.load(Ordering::Acquire))
    }

    /// Store @value into @slot's word (release): a CPU producer's store.
    pub fn store(&self, slot: u32, value: u64) -> Result<()> {
        self.word(slot)?.store(value, Ordering::Release);
        Ok(())
    }

    pub(crate) fn word_ptr(&self, slot: u32) -> Result<*mut u64> {
        Ok(self.word(slot)? as *const AtomicU64 as *mut u64)
    }
}

impl std::fmt::Debug for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Line").field("id", &self.inner.id).finish()
    }
}

pub(crate) fn check_slot(slot: u32) -> Result<()> {
    if slot as usize >= sys::GPUAR_LINE_SLOTS {
        return Err(Error::coded(
            "slot",
            libc::EINVAL,
            Code::INVALID_ARGUMENT,
            &format!("slot {slot} not in 0..{}", sys::GPUAR_LINE_SLOTS - 1),
        ));
    }
    Ok(())
}

/// A word wait (`struct gpuar_word_wait`): @slot of a line reaching
/// @target in wrapping order, under a plan, at an estimator point.
#[derive(Clone, Copy, Debug)]
pub struct WordWait {
    pub(crate) raw: sys::gpuar_word_wait,
}

impl WordWait {
    /// A wait on @slot of @line for @target, under the default await plan
    /// at point 1, user_data 0.
    pub fn new(line: &Line, slot: u32, target: u64) -> Result<WordWait> {
        check_slot(slot)?;
        Ok(WordWait {
            raw: sys::gpuar_word_wait {
                line: line.id(),
                slot,
                target,
                point: 1,
                plan: Plan::default_await().0,
                ..Default::default()
            },
        })
    }

    pub fn plan(mut self, plan: &Plan) -> Self {
        self.raw.plan = plan.0;
        self
    }

    pub fn point(mut self, point: u64) -> Self {
        self.raw.point = point;
        self
    }

    pub fn user_data(mut self, user_data: u64) -> Self {
        self.raw.user_data = user_data;
        self
    }

    /// A resubmission's original start (0: now).
    pub fn start_ns(mut self, start_ns: u64) -> Self {
        self.raw.start_ns = start_ns;
        self
    }

    pub fn get_user_data(&self) -> u64 {
        self.raw.user_data
    }

    pub fn get_plan(&self) -> Plan {
        Plan(self.raw.plan)
    }
}

/// CLOCK_MONOTONIC now, in ns (the clock every record's times are on).
pub fn now_ns() -> u64 {
    unsafe { sys::gpuar_now_ns() }
}
