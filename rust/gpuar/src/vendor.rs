// SPDX-License-Identifier: MIT
//! CUDA and HIP stream and event awaits (`<gpuar/cuda.h>`, `<gpuar/hip.h>`).
//!
//! The driver is loaded at run time (GPUAR_CUDA_LIBRARY /
//! GPUAR_HIP_LIBRARY name another library, as the tests' doubles), so
//! this builds and runs on machines without a GPU: opening fails there
//! with [`Code::BACKEND`](crate::Code::BACKEND) and -ENOENT or -ENODEV.
//!
//! Streams and events are raw handles (`CUstream`/`cudaStream_t`,
//! `hipStream_t`, `CUevent`, `hipEvent_t`), as frameworks hand them
//! around. Each await records the store of a slot's next sequence number
//! behind the stream's work; a slot belongs to one stream until its
//! stores have landed, so give each stream a slot of its own.
use std::os::raw::c_void;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{self, check, cstr, Result};
use crate::plan::Plan;
use crate::port::{check_slot, Port, PortInner, EMPTY_RECORD, REAP_BATCH};
use crate::record::Record;
use crate::sys;

/// Which vendor a backend drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vendor {
    Cuda,
    Hip,
}

/// `CU_STREAM_PER_THREAD` / `hipStreamPerThread`: each thread's own
/// default stream.
pub const STREAM_PER_THREAD: *mut c_void = 2 as *mut c_void;
/// `CU_STREAM_LEGACY`: the legacy default stream of the caller's current
/// device (the backend's device, else `EXDEV`).
pub const CUDA_STREAM_LEGACY: *mut c_void = 1 as *mut c_void;
/// `GPUAR_HIP_STREAM_LEGACY`: HIP's legacy null stream of the caller's
/// current device (the backend's device, else `EXDEV`), which the backend
/// hands the runtime as stream 0. A bare null pointer stays refused: what
/// 0 means depends on how the caller was compiled.
pub const HIP_STREAM_LEGACY: *mut c_void = 1 as *mut c_void;

struct BackendInner {
    vendor: Vendor,
    raw: *mut c_void,
}

// SAFETY: the backends' calls are thread-safe (<gpuar/cuda.h>).
unsafe impl Send for BackendInner {}
unsafe impl Sync for BackendInner {}

impl Drop for BackendInner {
    fn drop(&mut self) {
        match self.vendor {
            Vendor::Cuda => unsafe { sys::gpuar_cuda_close(self.raw as *mut sys::gpuar_cuda) },
            Vendor::Hip => unsafe { sys::gpuar_hip_close(self.raw as *mut sys::gpuar_hip) },
        }
    }
}

/// One device of a vendor backend. Clones share it; it closes when the
/// last clone and the last of its lines are gone.
#[derive(Clone)]
pub struct Backend {
    inner: Arc<BackendInner>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend").field("vendor", &self.inner.vendor).field("library", &self.library()).finish()
    }
}

impl Backend {
    /// Load the vendor's driver and open device @ordinal. Blocks (driver
    /// init, often hundreds of ms): in async code, open it before the
    /// runtime or in `spawn_blocking`.
    pub fn open(vendor: Vendor, ordinal: i32) -> Result<Backend> {
        let mut raw: *mut c_void = std::ptr::null_mut();
        let mut d = error::diag();
        let (ret, call) = match vendor {
            Vendor::Cuda => (
                unsafe { sys::gpuar_cuda_open(&mut raw as *mut *mut c_void as *mut *mut sys::gpuar_cuda, ordinal, &mut d) },
                "gpuar_cuda_open",
            ),
            Vendor::Hip => (
                unsafe { sys::gpuar_hip_open(&mut raw as *mut *mut c_void as *mut *mut sys::gpuar_hip, ordinal, &mut d) },
                "gpuar_hip_open",
            ),
        };
        check(call, ret, Some(&d))?;
        Ok(Backend { inner: Arc::new(BackendInner { vendor, raw }) })
    }

    pub fn vendor(&self) -> Vendor {
        self.inner.vendor
    }

    /// The driver library that was loaded.
    pub fn library(&self) -> &str {
        cstr(match self.inner.vendor {
            Vendor::Cuda => unsafe { sys::gpuar_cuda_library(self.inner.raw as *const sys::gpuar_cuda) },
            Vendor::Hip => unsafe { sys::gpuar_hip_library(self.inner.raw as *const sys::gpuar_hip) },
        })
    }

    /// The driver's version (CUDA: 12080 for 12.8; HIP: 0 if unknown).
    pub fn driver_version(&self) -> i32 {
        match self.inner.vendor {
            Vendor::Cuda => unsafe { sys::gpuar_cuda_driver_version(self.inner.raw as *const sys::gpuar_cuda) },
            Vendor::Hip => unsafe { sys::gpuar_hip_driver_version(self.inner.raw as *const sys::gpuar_hip) },
        }
    }

    /// A line of @port whose page the device may store into.
    pub fn line(&self, port: &Port) -> Result<VendorLine> {
        let mut raw = std::ptr::null_mut();
        let mut d = error::diag();
        let (ret, call) = match self.inner.vendor {
            Vendor::Cuda => (
                unsafe { sys::gpuar_cuda_line_alloc(self.inner.raw as *mut sys::gpuar_cuda, port.raw(), &mut raw, &mut d) },
                "gpuar_cuda_line_alloc",
            ),
            Vendor::Hip => (
                unsafe { sys::gpuar_hip_line_alloc(self.inner.raw as *mut sys::gpuar_hip, port.raw(), &mut raw, &mut d) },
                "gpuar_hip_line_alloc",
            ),
        };
        check(call, ret, Some(&d))?;
        Ok(VendorLine { raw, backend: self.inner.clone(), _port: port.inner.clone(), freed: false })
    }

    /// Record, behind the work on @stream so far, the store of @slot's
    /// next number, and submit the word wait on the line's port under
    /// @plan at @point with @user_data (unique among the port's pending
    /// waits). Returns the number (the target). Reap with
    /// [`Backend::reap`] or await through [`Backend::stream_done`].
    ///
    /// # Safety
    /// @stream must be a live stream handle of the device's primary context
    /// (or [`STREAM_PER_THREAD`], [`CUDA_STREAM_LEGACY`], [`HIP_STREAM_LEGACY`]) and stay alive
    /// until the await is reaped; the driver is handed it as is.
    pub unsafe fn await_stream(
        &self,
        line: &VendorLine,
        slot: u32,
        stream: *mut c_void,
        plan: &Plan,
        point: u64,
        user_data: u64,
    ) -> Result<u64> {
        self.submit(line, slot, stream, plan, point, user_data, false)
    }

    /// As [`Backend::await_stream`], for an event the caller recorded: a
    /// private stream waits on it, then stores the number.
    ///
    /// # Safety
    /// @event must be a live event handle; it may be destroyed once this
    /// returns.
    pub unsafe fn await_event(
        &self,
        line: &VendorLine,
        slot: u32,
        event: *mut c_void,
        plan: &Plan,
        point: u64,
        user_data: u64,
    ) -> Result<u64> {
        self.submit(line, slot, event, plan, point, user_data, true)
    }

    #[allow(clippy::too_many_arguments)]
    unsafe fn submit(
        &self,
        line: &VendorLine,
        slot: u32,
        handle: *mut c_void,
        plan: &Plan,
        point: u64,
        user_data: u64,
        event: bool,
    ) -> Result<u64> {
        check_slot(slot)?;
        let mut target = 0u64;
        let mut d = error::diag();
        let p = plan.raw();
        let (ret, call) = match (self.inner.vendor, event) {
            (Vendor::Cuda, false) => {
                (sys::gpuar_cuda_port_await(line.raw, slot, handle, p, point, user_data, &mut target, &mut d), "gpuar_cuda_port_await")
            }
            (Vendor::Cuda, true) => (
                sys::gpuar_cuda_port_await_event(line.raw, slot, handle, p, point, user_data, &mut target, &mut d),
                "gpuar_cuda_port_await_event",
            ),
            (Vendor::Hip, false) => {
                (sys::gpuar_hip_port_await(line.raw, slot, handle, p, point, user_data, &mut target, &mut d), "gpuar_hip_port_await")
            }
            (Vendor::Hip, true) => (
                sys::gpuar_hip_port_await_event(line.raw, slot, handle, p, point, user_data, &mut target, &mut d),
                "gpuar_hip_port_await_event",
            ),
        };
        check(call, ret, Some(&d))?;
        Ok(target)
    }

    /// The blocking host for vendor awaits: reap up to `out.len()` records
    /// of @port, waiting at most @timeout (None: until one comes), with
    /// backstop timeouts resolved by asking the stream (a failed stream's
    /// record has status -EIO and the vendor's code). Returns how many (0:
    /// none in time).
    pub fn reap(&self, port: &Port, out: &mut [Record], timeout: Option<Duration>) -> Result<usize> {
        let max = out.len().min(REAP_BATCH);
        if max == 0 {
            return Ok(0);
        }
        let mut raw = [sys::gpuar_vendor_completion {
            record: sys::gpuar_record::default(),
            vendor_status: 0,
            pad: 0,
            vendor_name: std::ptr::null(),
        }; REAP_BATCH];
        let t = timeout.map_or(-1, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        let mut d = error::diag();
        let (ret, call) = match self.inner.vendor {
            Vendor::Cuda => (
                unsafe {
                    sys::gpuar_cuda_port_reap(self.inner.raw as *mut sys::gpuar_cuda, port.raw(), raw.as_mut_ptr(), max as u32, t, &mut d)
                },
                "gpuar_cuda_port_reap",
            ),
            Vendor::Hip => (
                unsafe {
                    sys::gpuar_hip_port_reap(self.inner.raw as *mut sys::gpuar_hip, port.raw(), raw.as_mut_ptr(), max as u32, t, &mut d)
                },
                "gpuar_hip_port_reap",
            ),
        };
        if ret == -libc::EAGAIN || ret == -libc::ETIME {
            return Ok(0);
        }
        let n = check(call, ret, Some(&d))? as usize;
        for (o, c) in out.iter_mut().zip(&raw[..n]) {
            *o = Record::from_vendor(c);
        }
        Ok(n)
    }

    /// Block until one record comes (None: @timeout passed).
    pub fn reap_one(&self, port: &Port, timeout: Option<Duration>) -> Result<Option<Record>> {
        let mut out = [EMPTY_RECORD; 1];
        Ok(match self.reap(port, &mut out, timeout)? {
            0 => None,
            _ => Some(out[0]),
        })
    }
}

#[cfg(feature = "tokio")]
impl Backend {
    /// Await, on a tokio runtime, the work enqueued on @stream so far: the
    /// record, or an [`Error`](crate::Error) with errno EIO and
    /// [`Code::BACKEND`](crate::Code::BACKEND) for a failed stream.
    /// Dropping the future cancels the wait.
    ///
    /// # Safety
    /// As [`Backend::await_stream`]; the line must be of @port's port.
    pub unsafe fn stream_done(
        &self,
        port: &crate::AsyncPort,
        line: &VendorLine,
        slot: u32,
        stream: *mut c_void,
        plan: &Plan,
    ) -> Result<crate::Wait> {
        self.async_await(port, line, slot, stream, plan, false)
    }

    /// Await @event (a raw event handle) on a tokio runtime.
    ///
    /// # Safety
    /// As [`Backend::await_event`]; the line must be of @port's port.
    pub unsafe fn event_done(
        &self,
        port: &crate::AsyncPort,
        line: &VendorLine,
        slot: u32,
        event: *mut c_void,
        plan: &Plan,
    ) -> Result<crate::Wait> {
        self.async_await(port, line, slot, event, plan, true)
    }

    unsafe fn async_await(
        &self,
        port: &crate::AsyncPort,
        line: &VendorLine,
        slot: u32,
        handle: *mut c_void,
        plan: &Plan,
        event: bool,
    ) -> Result<crate::Wait> {
        plan.refuse_block(if event { "event_done" } else { "stream_done" })?;
        port.mark_vendor();
        let user_data = port.port().next_user_data();
        port.await_submitted(user_data, None, || {
            self.submit(line, slot, handle, plan, handle as u64, user_data, event).map(drop)
        })
    }
}

/// A line registered with the vendor's device. Dropping it frees it once
/// the device no longer touches it (waiting up to a second for pending
/// stores); the backend keeps a line whose stores never land (a poisoned
/// context) rather than free it under the device.
pub struct VendorLine {
    raw: *mut sys::gpuar_vendor_line,
    backend: Arc<BackendInner>,
    _port: Arc<PortInner>,
    freed: bool,
}

// SAFETY: vendor line calls are thread-safe; freeing takes &mut (Drop).
unsafe impl Send for VendorLine {}
unsafe impl Sync for VendorLine {}

impl std::fmt::Debug for VendorLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VendorLine").field("id", &self.id()).finish()
    }
}

impl VendorLine {
    /// The gpuar line id.
    pub fn id(&self) -> u32 {
        unsafe { sys::gpuar_line_id(sys::gpuar_vendor_line_gpuar(self.raw)) }
    }

    /// The last number recorded into @slot.
    pub fn sequence(&self, slot: u32) -> Result<u64> {
        check_slot(slot)?;
        Ok(unsafe { sys::gpuar_vendor_line_sequence(self.raw, slot) })
    }

    /// The word of @slot as the host sees it (acquire).
    pub fn load(&self, slot: u32) -> Result<u64> {
        check_slot(slot)?;
        let words = unsafe { sys::gpuar_vendor_line_words(self.raw) } as *const std::sync::atomic::AtomicU64;
        Ok(unsafe { &*words.add(slot as usize) }.load(std::sync::atomic::Ordering::Acquire))
    }

    /// Free the line now, waiting at most @timeout for the device; the
    /// error (EBUSY: awaits not yet reaped; EIO, ETIMEDOUT: kept by the
    /// backend) says why not.
    pub fn free(mut self, timeout: Duration) -> Result<()> {
        self.freed = true;
        self.free_raw(timeout)
    }

    fn free_raw(&self, timeout: Duration) -> Result<()> {
        let t = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        let mut d = error::diag();
        let (ret, call) = match self.backend.vendor {
            Vendor::Cuda => (unsafe { sys::gpuar_cuda_line_free(self.raw, t, &mut d) }, "gpuar_cuda_line_free"),
            Vendor::Hip => (unsafe { sys::gpuar_hip_line_free(self.raw, t, &mut d) }, "gpuar_hip_line_free"),
        };
        check(call, ret, Some(&d)).map(drop)
    }
}

impl Drop for VendorLine {
    fn drop(&mut self) {
        if self.freed {
            return;
        }
        // EBUSY leaves the line to its port (closing the port forgets its
        // awaits); EIO and ETIMEDOUT mean the backend kept it on purpose.
        let _ = self.free_raw(Duration::from_secs(1));
    }
}

