// SPDX-License-Identifier: MIT
//! Wait plans: parsed once from text, kept in binary form.
use std::ffi::CString;
use std::fmt;
use std::str::FromStr;

use crate::error::{self, check, Code, Error, Result};
use crate::sys;

/// A wait plan ("flag:park_us=200", "poll", "...+predict:...").
///
/// Parsing happens once, in [`Plan::parse`] (or `str::parse`); a bad text
/// is an [`Error`] with [`Code::INVALID_PLAN`] naming the first thing
/// wrong. `Display` gives the canonical text back (parse, print, parse
/// round-trips).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Plan(pub(crate) sys::gpuar_plan);

/// The plan awaits use unless told otherwise: sleep on the estimator until
/// just before the predicted completion, then check every 200 us; the 1 s
/// backstop, then a resubmission, keeps a very late wait alive.
pub const DEFAULT_PLAN: &str =
    "flag:park_us=200,backstop_us=1000000+predict:margin_us=200,min_sleep_us=50,max_sleep_us=100000,window=8";

impl Plan {
    /// Parse @text.
    pub fn parse(text: &str) -> Result<Plan> {
        let c = CString::new(text).map_err(|_| {
            Error::coded("gpuar_plan_from_text", libc::EINVAL, Code::INVALID_PLAN, "plan text holds a NUL byte")
        })?;
        let mut plan = sys::gpuar_plan::default();
        let mut d = error::diag();
        let ret = unsafe { sys::gpuar_plan_from_text(c.as_ptr(), &mut plan, &mut d) };
        check("gpuar_plan_from_text", ret, Some(&d))?;
        Ok(Plan(plan))
    }

    /// The default await plan ([`DEFAULT_PLAN`]).
    pub fn default_await() -> Plan {
        Plan::parse(DEFAULT_PLAN).expect("the default plan parses")
    }

    /// True for "block" (the vendor's blocking wait: no port accepts it).
    pub fn is_block(&self) -> bool {
        self.0.park == sys::GPUAR_PARK_BLOCK
    }

    /// The binary plan, as the C API takes it.
    pub fn raw(&self) -> &sys::gpuar_plan {
        &self.0
    }

    pub(crate) fn refuse_block(&self, call: &str) -> Result<()> {
        if self.is_block() {
            return Err(Error::coded(
                call,
                libc::EINVAL,
                Code::INVALID_PLAN,
                "plan block synchronizes in the calling thread: await with a flag or poll plan",
            ));
        }
        Ok(())
    }
}

impl FromStr for Plan {
    type Err = Error;
    fn from_str(s: &str) -> Result<Plan> {
        Plan::parse(s)
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let need = unsafe { sys::gpuar_plan_to_text(&self.0, std::ptr::null_mut(), 0) };
        let mut buf = vec![0u8; need + 1];
        unsafe { sys::gpuar_plan_to_text(&self.0, buf.as_mut_ptr() as *mut libc::c_char, buf.len()) };
        buf.truncate(need);
        f.write_str(&String::from_utf8_lossy(&buf))
    }
}

impl fmt::Debug for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Plan({:?})", self.to_string())
    }
}
