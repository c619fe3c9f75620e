// SPDX-License-Identifier: MIT
//! Safe bindings to libgpuar: GPU completion ports.
//!
//! A [`Port`] is a file descriptor that turns readable when GPU work
//! completes and yields completion [`Record`]s. Waits name a word of a
//! [`Line`] (eight u64 slots a device or a CPU producer stores sequence
//! numbers into) and a target; CUDA and HIP streams and events are
//! awaited through [`vendor`], which records the store behind the
//! stream's work.
//!
//! Two hosts run a port:
//! - blocking: [`Port::reap_into`], [`Port::wait_blocking`] (std only);
//! - tokio (feature `tokio`, default): [`AsyncPort`], whose `wait` futures
//!   complete from the port's fd through `tokio::io::unix::AsyncFd`, and
//!   whose records also come as a `futures_core::Stream`.
//!
//! Errors are [`Error`]: gpuar's coded error ([`Code`]) and the errno.
//!
//! ```no_run
//! let port = gpuar::PortOptions::new(gpuar::Engine::User).open()?;
//! let line = port.line()?;
//! let producer = gpuar::SoftProducer::new()?;
//! producer.store_after(&line, 0, 1, 2_000_000)?;
//! let plan: gpuar::Plan = "flag:park_us=50,backstop_us=100000".parse()?;
//! let rec = port.wait_blocking(&line, 0, 1, &plan, |_| {})?;
//! println!("{} after {} ns", rec.outcome.name(), rec.latency_ns());
//! # Ok::<(), gpuar::Error>(())
//! ```
#![warn(missing_debug_implementations)]

pub mod sys;

mod error;
pub mod exec;
mod plan;
mod port;
mod record;
mod soft;
pub mod vendor;

#[cfg(feature = "tokio")]
mod tokio_host;

pub use error::{Code, Error, Result, Warning};
pub use plan::{Plan, DEFAULT_PLAN};
pub use port::{now_ns, Engine, Line, PointStats, Port, PortOptions, PortStats, WordWait};
pub use record::{Outcome, Record};
pub use soft::{SoftProducer, Word};
#[cfg(feature = "tokio")]
pub use tokio_host::{AsyncPort, NextRecord, Records, Wait};

/// The library's version string ("0.1.0").
pub fn version() -> &'static str {
    error::cstr(unsafe { sys::gpuar_version() })
}
