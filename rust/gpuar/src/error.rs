// SPDX-License-Identifier: MIT
//! Errors: gpuar's coded error number and the errno of the failed call.
use std::ffi::CStr;
use std::fmt;
use std::io;

use crate::sys;

/// A coded error or warning number (`enum gpuar_code`, `<gpuar/codes.h>`).
/// Stable and append-only: branch on it, never on a message's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Code(pub u32);

impl Code {
    pub const OK: Code = Code(0);
    pub const INVALID_PLAN: Code = Code(1);
    pub const PARK_FALLBACK: Code = Code(2);
    pub const EXECUTOR_FALLBACK: Code = Code(3);
    pub const EXECUTOR_REFUSED: Code = Code(4);
    pub const INVALID_EXECUTOR: Code = Code(5);
    pub const PENDED_INLINE: Code = Code(6);
    pub const STALLED: Code = Code(7);
    pub const BACKEND: Code = Code(8);
    pub const INVALID_BANDS: Code = Code(9);
    pub const ENGINE_UNAVAILABLE: Code = Code(10);
    pub const ENGINE_FALLBACK: Code = Code(11);
    pub const SYSTEM: Code = Code(12);
    pub const INVALID_ARGUMENT: Code = Code(13);
    pub const FEATURE_UNAVAILABLE: Code = Code(14);
    pub const FEATURE_FALLBACK: Code = Code(15);

    /// The registry's name ("invalid-plan"), or None if unassigned.
    pub fn name(self) -> Option<&'static str> {
        // SAFETY: gpuar_code_name returns NULL or a static string.
        let p = unsafe { sys::gpuar_code_name(self.0) };
        if p.is_null() {
            None
        } else {
            unsafe { CStr::from_ptr(p) }.to_str().ok()
        }
    }

    /// True when the code is a warning (the call went ahead).
    pub fn is_warning(self) -> bool {
        unsafe { sys::gpuar_code_is_warning(self.0) }
    }
}

/// A coded warning a call gave while succeeding (an engine or feature
/// fallback, an executor fallback).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub code: Code,
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A failed libgpuar call: the positive errno the call returned negated,
/// gpuar's coded error (`Code::OK` when the call gave none), and a message
/// naming the call.
#[derive(Clone, Debug)]
pub struct Error {
    errno: i32,
    code: Code,
    message: String,
}

/// `std::result::Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error of @call with @errno (positive) and no coded diagnosis.
    pub fn from_errno(call: &str, errno: i32) -> Error {
        Error {
            errno,
            code: Code::OK,
            message: format!("{call}: {}", io::Error::from_raw_os_error(errno)),
        }
    }

    /// An error with a code and a message of its own (refusals the binding
    /// makes before calling the library).
    pub fn coded(call: &str, errno: i32, code: Code, message: &str) -> Error {
        Error { errno, code, message: format!("{call}: {message}") }
    }

    pub(crate) fn from_ret(call: &str, ret: i32, diag: Option<&sys::gpuar_error>) -> Error {
        let errno = -ret;
        match diag {
            Some(d) if d.code != 0 => Error {
                errno,
                code: Code(d.code),
                message: format!("{call}: {}", diag_message(d)),
            },
            _ => Error::from_errno(call, errno),
        }
    }

    /// The positive errno (`libc::EINVAL`, ...).
    pub fn errno(&self) -> i32 {
        self.errno
    }

    /// gpuar's coded error, `Code::OK` when the call gave none.
    pub fn code(&self) -> Code {
        self.code
    }

    /// The message: the call, then the library's text.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The errno as a `std::io::ErrorKind`.
    pub fn kind(&self) -> io::ErrorKind {
        io::Error::from_raw_os_error(self.errno).kind()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        io::Error::new(io::Error::from_raw_os_error(e.errno).kind(), e)
    }
}

pub(crate) fn diag() -> sys::gpuar_error {
    sys::gpuar_error { code: 0, sys_errno: 0, message: [0; sys::GPUAR_MESSAGE_MAX] }
}

pub(crate) fn diag_message(d: &sys::gpuar_error) -> String {
    let bytes: Vec<u8> = d.message.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

pub(crate) fn warning_of(d: &sys::gpuar_error) -> Option<Warning> {
    if d.code == 0 {
        None
    } else {
        Some(Warning { code: Code(d.code), message: diag_message(d) })
    }
}

/// `Ok(ret)` for a non-negative return, else the error.
pub(crate) fn check(call: &str, ret: i32, diag: Option<&sys::gpuar_error>) -> Result<u32> {
    if ret >= 0 {
        Ok(ret as u32)
    } else {
        Err(Error::from_ret(call, ret, diag))
    }
}

pub(crate) fn cstr(p: *const libc::c_char) -> &'static str {
    if p.is_null() {
        return "";
    }
    // SAFETY: the library's names are static NUL-terminated strings.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("?")
}
