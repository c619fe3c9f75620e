// SPDX-License-Identifier: MIT
//! The soft producer: a CPU thread that stores values into line words at
//! given times, standing in for a GPU stream.
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{check, Result};
use crate::port::{check_slot, Line};
use crate::sys;

/// A word of the caller's on a cache line of its own, for a producer and
/// a task to share without a port (the FILL executor's waits).
#[derive(Clone, Debug, Default)]
pub struct Word(Arc<WordCell>);

#[repr(align(64))]
#[derive(Debug, Default)]
struct WordCell(AtomicU64);

impl Word {
    pub fn new(value: u64) -> Word {
        Word(Arc::new(WordCell(AtomicU64::new(value))))
    }

    pub fn load(&self) -> u64 {
        self.0 .0.load(Ordering::Acquire)
    }

    pub fn store(&self, value: u64) {
        self.0 .0.store(value, Ordering::Release)
    }

    pub(crate) fn ptr(&self) -> *mut u64 {
        &self.0 .0 as *const AtomicU64 as *mut u64
    }
}

enum Keep {
    Line(Line),
    Word(Word),
}

/// A producer thread (`struct gpuar_soft_producer`). It keeps every line
/// and word it was given a store for alive until it is dropped, so a
/// store it has yet to make never lands in freed memory. Dropping it stops
/// the thread; stores not yet made are dropped.
pub struct SoftProducer {
    raw: *mut sys::gpuar_soft_producer,
    keep: Mutex<HashMap<usize, Keep>>,
}

// SAFETY: the producer's calls are thread-safe except free, which Drop
// makes with the only reference.
unsafe impl Send for SoftProducer {}
unsafe impl Sync for SoftProducer {}

impl std::fmt::Debug for SoftProducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SoftProducer").field("stores", &self.stores()).finish()
    }
}

impl SoftProducer {
    pub fn new() -> Result<SoftProducer> {
        let mut raw = std::ptr::null_mut();
        check("gpuar_soft_producer_new", unsafe { sys::gpuar_soft_producer_new(&mut raw) }, None)?;
        Ok(SoftProducer { raw, keep: Mutex::new(HashMap::new()) })
    }

    fn hold(&self, ptr: *mut u64, keep: Keep) {
        self.keep.lock().unwrap_or_else(|e| e.into_inner()).entry(ptr as usize).or_insert(keep);
    }

    /// Store @value into @slot of @line at CLOCK_MONOTONIC @at_ns.
    pub fn store_at(&self, line: &Line, slot: u32, value: u64, at_ns: u64) -> Result<()> {
        check_slot(slot)?;
        let ptr = line.word_ptr(slot)?;
        self.hold(ptr, Keep::Line(line.clone()));
        check("gpuar_soft_store_at", unsafe { sys::gpuar_soft_store_at(self.raw, ptr, value, at_ns) }, None).map(drop)
    }

    /// Store @value into @slot of @line @delay_ns from now.
    pub fn store_after(&self, line: &Line, slot: u32, value: u64, delay_ns: u64) -> Result<()> {
        self.store_at(line, slot, value, crate::now_ns().saturating_add(delay_ns))
    }

    /// Store @value into @word at @at_ns.
    pub fn store_word_at(&self, word: &Word, value: u64, at_ns: u64) -> Result<()> {
        self.hold(word.ptr(), Keep::Word(word.clone()));
        check("gpuar_soft_store_at", unsafe { sys::gpuar_soft_store_at(self.raw, word.ptr(), value, at_ns) }, None)
            .map(drop)
    }

    /// Make the producer's status query fail with @errno (positive) from
    /// @at_ns on, as a device fault would.
    pub fn fail_at(&self, errno: i32, at_ns: u64) {
        unsafe { sys::gpuar_soft_fail_at(self.raw, -errno.abs(), at_ns) }
    }

    /// Stores made so far.
    pub fn stores(&self) -> u64 {
        unsafe { sys::gpuar_soft_stores(self.raw) }
    }

    /// When @value was stored into @slot of @line (ns), None if not (yet)
    /// or no longer in the producer's history.
    pub fn stored_at(&self, line: &Line, slot: u32, value: u64) -> Result<Option<u64>> {
        let ptr = line.word_ptr(slot)?;
        Ok(match unsafe { sys::gpuar_soft_stored_at(self.raw, ptr, value) } {
            0 => None,
            t => Some(t),
        })
    }
}

impl Drop for SoftProducer {
    fn drop(&mut self) {
        // The thread stops first; only then may the lines go.
        unsafe { sys::gpuar_soft_producer_free(self.raw) };
    }
}
