// SPDX-License-Identifier: MIT
//! The FILL executor (`<gpuar/exec.h>`): one thread runs tasks whenever
//! they are ready and idles, parked on the earliest GPU wait, only when
//! none is. CPU work fills the time the GPU takes.
use std::ffi::CString;
use std::os::raw::{c_int, c_void};

use crate::error::{self, check, cstr, Code, Error, Result, Warning};
use crate::soft::Word;
use crate::sys;

/// Executor kinds, resolved through the fallback chain io-uring ->
/// gpu-reactor -> naive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExecKind {
    Naive,
    GpuReactor,
    IoUring,
}

impl ExecKind {
    fn raw(self) -> u32 {
        match self {
            ExecKind::Naive => sys::GPUAR_EXEC_NAIVE,
            ExecKind::GpuReactor => sys::GPUAR_EXEC_GPU_REACTOR,
            ExecKind::IoUring => sys::GPUAR_EXEC_IO_URING,
        }
    }

    fn from_raw(v: u32) -> ExecKind {
        match v {
            sys::GPUAR_EXEC_NAIVE => ExecKind::Naive,
            sys::GPUAR_EXEC_GPU_REACTOR => ExecKind::GpuReactor,
            _ => ExecKind::IoUring,
        }
    }

    /// "naive", "gpu-reactor", "io-uring".
    pub fn name(self) -> &'static str {
        cstr(unsafe { sys::gpuar_exec_kind_name(self.raw()) })
    }

    /// Parse a kind name (GPUAR_E_INVALID_EXECUTOR for an unknown one).
    pub fn parse(name: &str) -> Result<ExecKind> {
        let c = CString::new(name)
            .map_err(|_| Error::coded("gpuar_exec_kind_parse", libc::EINVAL, Code::INVALID_EXECUTOR, "NUL in name"))?;
        let mut kind = 0u32;
        let mut d = error::diag();
        check("gpuar_exec_kind_parse", unsafe { sys::gpuar_exec_kind_parse(c.as_ptr(), &mut kind, &mut d) }, Some(&d))?;
        Ok(ExecKind::from_raw(kind))
    }
}

/// What a task's step returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Finished.
    Done,
    /// Registered a wake-up (await_word, await_timer, yield_now).
    Pending,
}

/// A task's view of the executor during one step.
#[derive(Debug)]
pub struct Task<'a> {
    raw: *mut sys::gpuar_task,
    keep: &'a mut Vec<Word>,
}

impl Task<'_> {
    /// Wake when @word reaches @target (wrapping order).
    pub fn await_word(&mut self, word: &Word, target: u64) -> Result<()> {
        self.keep.push(word.clone());
        check("gpuar_task_await_word", unsafe { sys::gpuar_task_await_word(self.raw, word.ptr(), target) }, None)
            .map(drop)
    }

    /// Wake at @deadline_ns (CLOCK_MONOTONIC).
    pub fn await_timer(&mut self, deadline_ns: u64) -> Result<()> {
        check("gpuar_task_await_timer", unsafe { sys::gpuar_task_await_timer(self.raw, deadline_ns) }, None).map(drop)
    }

    /// Be ready again after the other ready tasks had their turn.
    pub fn yield_now(&mut self) -> Result<()> {
        check("gpuar_task_yield", unsafe { sys::gpuar_task_yield(self.raw) }, None).map(drop)
    }
}

type StepFn = Box<dyn FnMut(&mut Task<'_>) -> Result<Step>>;

struct Slot {
    step: StepFn,
    keep: Vec<Word>,
    error: Option<Error>,
}

/// Executor counters (`struct gpuar_exec_stats`).
pub type ExecStats = sys::gpuar_exec_stats;

/// A FILL executor. It and its tasks belong to the thread that made it.
pub struct Executor {
    raw: *mut sys::gpuar_exec,
    kind: ExecKind,
    warning: Option<Warning>,
    slots: Vec<Box<Slot>>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor").field("kind", &self.kind).field("tasks", &self.slots.len()).finish()
    }
}

unsafe extern "C" fn trampoline(task: *mut sys::gpuar_task, arg: *mut c_void) -> c_int {
    let slot = &mut *(arg as *mut Slot);
    let mut t = Task { raw: task, keep: &mut slot.keep };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (slot.step)(&mut t)));
    match r {
        Ok(Ok(Step::Done)) => sys::GPUAR_TASK_DONE,
        Ok(Ok(Step::Pending)) => sys::GPUAR_TASK_PENDING,
        Ok(Err(e)) => {
            let errno = e.errno().max(1);
            slot.error = Some(e);
            -errno
        }
        Err(_) => {
            slot.error = Some(Error::from_errno("task step panicked", libc::ECANCELED));
            -libc::ECANCELED
        }
    }
}

impl Executor {
    /// An executor of @kind, resolved through the fallback chain; with
    /// @strict an unavailable kind is refused instead
    /// ([`Code::EXECUTOR_REFUSED`]). A fallback's warning is kept.
    pub fn new(kind: ExecKind, strict: bool) -> Result<Executor> {
        let mut resolved = 0u32;
        let mut d = error::diag();
        let ret = unsafe { sys::gpuar_exec_resolve(kind.raw(), strict, std::ptr::null(), &mut resolved, &mut d) };
        check("gpuar_exec_resolve", ret, Some(&d))?;
        let warning = error::warning_of(&d);
        let opts = sys::gpuar_exec_options {
            size: std::mem::size_of::<sys::gpuar_exec_options>() as u32,
            kind: resolved,
            clock: std::ptr::null(),
            park_bound_ns: 0,
            reserved: [0; 12],
        };
        let mut raw = std::ptr::null_mut();
        let mut d = error::diag();
        check("gpuar_exec_new", unsafe { sys::gpuar_exec_new(&mut raw, &opts, &mut d) }, Some(&d))?;
        Ok(Executor { raw, kind: ExecKind::from_raw(resolved), warning, slots: Vec::new() })
    }

    /// The kind that runs.
    pub fn kind(&self) -> ExecKind {
        self.kind
    }

    /// The fallback's warning, if the asked kind could not run.
    pub fn warning(&self) -> Option<&Warning> {
        self.warning.as_ref()
    }

    /// Add a task; its first step runs in the next [`Executor::run`].
    pub fn spawn(&mut self, step: impl FnMut(&mut Task<'_>) -> Result<Step> + 'static) -> Result<()> {
        let mut slot = Box::new(Slot { step: Box::new(step), keep: Vec::new(), error: None });
        let arg = &mut *slot as *mut Slot as *mut c_void;
        check("gpuar_exec_spawn", unsafe { sys::gpuar_exec_spawn(self.raw, trampoline, arg, std::ptr::null_mut()) }, None)?;
        self.slots.push(slot);
        Ok(())
    }

    /// Run until every task finished, or one failed (its error), or the
    /// tasks left can never be woken ([`Code::STALLED`]).
    pub fn run(&mut self) -> Result<()> {
        let mut d = error::diag();
        let ret = unsafe { sys::gpuar_exec_run(self.raw, &mut d) };
        if ret >= 0 {
            return Ok(());
        }
        for s in &mut self.slots {
            if let Some(e) = s.error.take() {
                return Err(e);
            }
        }
        Err(Error::from_ret("gpuar_exec_run", ret, Some(&d)))
    }

    pub fn stats(&self) -> ExecStats {
        let mut st = ExecStats::default();
        unsafe { sys::gpuar_exec_stats(self.raw, &mut st) };
        st
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        // The executor goes first: it may still name the slots' words.
        unsafe { sys::gpuar_exec_free(self.raw) };
    }
}
