// SPDX-License-Identifier: MIT
//! Completion records.
use crate::error::cstr;
use crate::sys;

/// How a wait ended (`enum gpuar_outcome`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Done at submission.
    Immediate,
    /// A check saw it pending, a later one done.
    Exact,
    /// The first check after the estimator's sleep found it done.
    Late,
    /// A fence signalled; the record's status is its error.
    Fence,
    /// The backstop expired (status -ETIME).
    Timeout,
    /// Cancelled, its port closed (-ECANCELED) or its line died (-EFAULT).
    Cancelled,
    /// A number this crate does not know (a newer library).
    Other(u8),
}

impl Outcome {
    pub fn from_raw(v: u8) -> Outcome {
        match v {
            1 => Outcome::Immediate,
            2 => Outcome::Exact,
            3 => Outcome::Late,
            4 => Outcome::Fence,
            5 => Outcome::Timeout,
            6 => Outcome::Cancelled,
            n => Outcome::Other(n),
        }
    }

    pub fn raw(self) -> u8 {
        match self {
            Outcome::Immediate => 1,
            Outcome::Exact => 2,
            Outcome::Late => 3,
            Outcome::Fence => 4,
            Outcome::Timeout => 5,
            Outcome::Cancelled => 6,
            Outcome::Other(n) => n,
        }
    }

    /// "immediate", "exact", ... (the library's names).
    pub fn name(self) -> &'static str {
        cstr(unsafe { sys::gpuar_outcome_name(self.raw() as u32) })
    }
}

/// One completion (`struct gpuar_record`), plus the vendor's status when a
/// CUDA or HIP backend resolved it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub user_data: u64,
    pub start_ns: u64,
    pub complete_ns: u64,
    pub slept_ns: u64,
    pub point: u64,
    pub value: u64,
    /// 0, or a negative errno.
    pub status: i32,
    pub checks: u32,
    /// `enum gpuar_source`: 1 word, 2 fence.
    pub source: u8,
    pub outcome: Outcome,
    /// 0, or the CUresult / hipError_t of a failed stream.
    pub vendor_status: i32,
    /// The vendor status's name, when there is one.
    pub vendor_name: Option<&'static str>,
}

impl Record {
    pub(crate) fn from_raw(r: &sys::gpuar_record) -> Record {
        Record {
            user_data: r.user_data,
            start_ns: r.start_ns,
            complete_ns: r.complete_ns,
            slept_ns: r.slept_ns,
            point: r.point,
            value: r.value,
            status: r.status,
            checks: r.checks,
            source: r.source,
            outcome: Outcome::from_raw(r.outcome),
            vendor_status: 0,
            vendor_name: None,
        }
    }

    pub(crate) fn from_vendor(c: &sys::gpuar_vendor_completion) -> Record {
        let mut r = Record::from_raw(&c.record);
        r.vendor_status = c.vendor_status;
        r.vendor_name = if c.vendor_name.is_null() { None } else { Some(cstr(c.vendor_name)) };
        r
    }

    /// From the wait's start to the check that saw it complete (0 for a
    /// fence that had signalled before it was submitted).
    pub fn latency_ns(&self) -> u64 {
        self.complete_ns.saturating_sub(self.start_ns)
    }
}
