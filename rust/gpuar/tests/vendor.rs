// SPDX-License-Identifier: MIT
//! CUDA and HIP awaits against the vendor test doubles (selftests/doubles,
//! built by `make doubles`): a stream's work ends, a stream fails, an
//! event completes, an await is dropped; blocking and tokio hosts.
//! GPUAR_TEST_DOUBLES names the doubles' directory (default: the tree's
//! build/doubles).
mod common;

use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use gpuar::vendor::{Backend, Vendor};
use gpuar::{AsyncPort, Code, Plan};

type Fn1<A> = unsafe extern "C" fn(A) -> i32;
type Fn2<A, B> = unsafe extern "C" fn(A, B) -> i32;

/// The doubles keep process-wide state: one test at a time.
static DOUBLES: Mutex<()> = Mutex::new(());

const LAUNCH_FAILED: u32 = 719; // CUDA_ERROR_LAUNCH_FAILED, hipErrorLaunchFailure

struct Double {
    vendor: Vendor,
    lib: *mut c_void,
    _serial: MutexGuard<'static, ()>,
}

fn doubles_dir() -> PathBuf {
    match std::env::var_os("GPUAR_TEST_DOUBLES") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../build/doubles"),
    }
}

impl Double {
    fn load(vendor: Vendor) -> Double {
        let serial = DOUBLES.lock().unwrap_or_else(|e| e.into_inner());
        let (env, rel) = match vendor {
            Vendor::Cuda => ("GPUAR_CUDA_LIBRARY", "cuda/libcuda.so.1"),
            Vendor::Hip => ("GPUAR_HIP_LIBRARY", "hip/libamdhip64.so.6"),
        };
        let path = doubles_dir().join(rel);
        assert!(path.is_file(), "{} missing: run `make doubles` (or set GPUAR_TEST_DOUBLES)", path.display());
        std::env::set_var(env, &path);
        let c = CString::new(path.to_str().unwrap()).unwrap();
        let lib = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW) };
        assert!(!lib.is_null(), "dlopen {}", path.display());
        let d = Double { vendor, lib, _serial: serial };
        d.reset();
        d
    }

    fn sym<T: Copy>(&self, name: &str) -> T {
        let c = CString::new(name).unwrap();
        let p = unsafe { libc::dlsym(self.lib, c.as_ptr()) };
        assert!(!p.is_null(), "{name} missing from the double");
        unsafe { std::mem::transmute_copy(&p) }
    }

    fn prefix(&self) -> &'static str {
        match self.vendor {
            Vendor::Cuda => "gpuar_fake_cuda",
            Vendor::Hip => "gpuar_fake_hip",
        }
    }

    fn reset(&self) {
        let f: unsafe extern "C" fn() = self.sym(&format!("{}_reset", self.prefix()));
        unsafe { f() };
    }

    fn work(&self, stream: *mut c_void, ns: u64) {
        let f: Fn2<*mut c_void, u64> = self.sym(&format!("{}_work", self.prefix()));
        assert_eq!(unsafe { f(stream, ns) }, 0);
    }

    fn fault(&self, stream: *mut c_void) {
        let f: Fn2<*mut c_void, u32> = self.sym(&format!("{}_fault", self.prefix()));
        assert_eq!(unsafe { f(stream, LAUNCH_FAILED) }, 0);
    }

    /// Run @f with the primary context of device 0 current (CUDA).
    fn in_context<R>(&self, f: impl FnOnce() -> R) -> R {
        if self.vendor == Vendor::Hip {
            return f();
        }
        let retain: Fn2<*mut *mut c_void, i32> = self.sym("cuDevicePrimaryCtxRetain");
        let push: Fn1<*mut c_void> = self.sym("cuCtxPushCurrent_v2");
        let pop: Fn1<*mut *mut c_void> = self.sym("cuCtxPopCurrent_v2");
        let release: Fn1<i32> = self.sym("cuDevicePrimaryCtxRelease_v2");
        let mut ctx = std::ptr::null_mut();
        unsafe {
            assert_eq!(retain(&mut ctx, 0), 0);
            assert_eq!(push(ctx), 0);
        }
        let r = f();
        let mut popped = std::ptr::null_mut();
        unsafe {
            pop(&mut popped);
            release(0);
        }
        r
    }

    fn stream(&self) -> *mut c_void {
        let mut s = std::ptr::null_mut();
        let name = match self.vendor {
            Vendor::Cuda => "cuStreamCreate",
            Vendor::Hip => "hipStreamCreateWithFlags",
        };
        let create: Fn2<*mut *mut c_void, u32> = self.sym(name);
        assert_eq!(self.in_context(|| unsafe { create(&mut s, 1) }), 0);
        s
    }

    fn recorded_event(&self, stream: *mut c_void) -> *mut c_void {
        let (cname, rname) = match self.vendor {
            Vendor::Cuda => ("cuEventCreate", "cuEventRecord"),
            Vendor::Hip => ("hipEventCreateWithFlags", "hipEventRecord"),
        };
        let create: Fn2<*mut *mut c_void, u32> = self.sym(cname);
        let record: Fn2<*mut c_void, *mut c_void> = self.sym(rname);
        let mut e = std::ptr::null_mut();
        self.in_context(|| unsafe {
            assert_eq!(create(&mut e, 0), 0);
            assert_eq!(record(e, stream), 0);
        });
        e
    }
}

impl Drop for Double {
    fn drop(&mut self) {
        self.reset();
    }
}

const VENDORS: [Vendor; 2] = [Vendor::Cuda, Vendor::Hip];

fn plan() -> Plan {
    "flag:park_us=200,backstop_us=1000000".parse().unwrap()
}

#[test]
fn a_stream_await_completes_after_the_work_blocking() {
    for v in VENDORS {
        let d = Double::load(v);
        let backend = Backend::open(v, 0).unwrap();
        assert!(backend.library().ends_with(if v == Vendor::Cuda { "libcuda.so.1" } else { "libamdhip64.so.6" }));
        let port = common::port();
        let line = backend.line(&port).unwrap();
        let s = d.stream();
        let ends = gpuar::now_ns() + 5_000_000;
        d.work(s, 5_000_000);
        let target = unsafe { backend.await_stream(&line, 0, s, &plan(), 1, 77) }.unwrap();
        let rec = backend.reap_one(&port, Some(Duration::from_secs(10))).unwrap().expect("a record");
        assert_eq!((rec.user_data, rec.status, rec.vendor_status), (77, 0, 0), "{v:?}");
        assert_eq!(rec.value, target);
        assert_eq!(line.sequence(0).unwrap(), target);
        assert!(rec.complete_ns >= ends, "{v:?} completed before its work ended");
        drop(line);
    }
}

#[test]
fn a_stream_await_completes_on_tokio_and_a_failed_stream_is_an_error() {
    for v in VENDORS {
        let d = Double::load(v);
        let backend = Backend::open(v, 0).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let port = AsyncPort::new(common::port()).unwrap();
            let line = backend.line(port.port()).unwrap();
            let (a, b) = (d.stream(), d.stream());
            d.work(a, 3_000_000);
            let rec = unsafe { backend.stream_done(&port, &line, 0, a, &plan()) }.unwrap().await.unwrap();
            assert_eq!(rec.status, 0);
            // A fault: the backstop asks the stream, which failed.
            d.work(b, 5_000_000);
            d.fault(b);
            let quick: Plan = "flag:park_us=200,backstop_us=2000".parse().unwrap();
            let e = unsafe { backend.stream_done(&port, &line, 1, b, &quick) }.unwrap().await.unwrap_err();
            assert_eq!(e.errno(), libc::EIO, "{v:?}: {e}");
            assert_eq!(e.code(), Code::BACKEND);
            assert!(e.message().contains("719"), "{}", e.message());
            assert_eq!(port.outstanding(), 0);
        });
    }
}

#[test]
fn an_event_await_and_a_dropped_stream_await() {
    for v in VENDORS {
        let d = Double::load(v);
        let backend = Backend::open(v, 0).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let port = AsyncPort::new(common::port()).unwrap();
            let line = backend.line(port.port()).unwrap();
            let s = d.stream();
            d.work(s, 2_000_000);
            let e = d.recorded_event(s);
            let rec = unsafe { backend.event_done(&port, &line, 0, e, &plan()) }.unwrap().await.unwrap();
            assert_eq!(rec.status, 0, "{v:?}");
            // Dropped before the stream's work ends: cancelled, reaped.
            let t = d.stream();
            d.work(t, 50_000_000);
            let wait = unsafe { backend.stream_done(&port, &line, 1, t, &plan()) }.unwrap();
            assert!(tokio::time::timeout(Duration::from_millis(10), wait).await.is_err());
            assert_eq!(port.outstanding(), 0);
            let st = port.port().stats().unwrap();
            assert_eq!(st.outcomes[gpuar::Outcome::Cancelled.raw() as usize], 1);
            // The stream's store still lands in slot 1, so the line waits
            // for it when it is freed.
            line.free(Duration::from_secs(5)).unwrap();
        });
    }
}

#[test]
fn stream_zero_is_refused_with_the_backend_code() {
    for v in VENDORS {
        let _d = Double::load(v);
        let backend = Backend::open(v, 0).unwrap();
        let port = common::port();
        let line = backend.line(&port).unwrap();
        let e = unsafe { backend.await_stream(&line, 0, std::ptr::null_mut(), &plan(), 1, 1) }.unwrap_err();
        assert_eq!(e.code(), Code::BACKEND, "{v:?}: {e}");
    }
}

/// The legacy default stream's pseudo handle (value 1 for both vendors:
/// CU_STREAM_LEGACY, GPUAR_HIP_STREAM_LEGACY) is admitted on the backend's
/// own device, and an await on it completes.
#[test]
fn the_legacy_stream_handle_is_awaited() {
    for v in VENDORS {
        let d = Double::load(v);
        let backend = Backend::open(v, 0).unwrap();
        let legacy = match v {
            Vendor::Cuda => gpuar::vendor::CUDA_STREAM_LEGACY,
            Vendor::Hip => gpuar::vendor::HIP_STREAM_LEGACY,
        };
        let port = common::port();
        let line = backend.line(&port).unwrap();
        let target = d.in_context(|| unsafe { backend.await_stream(&line, 0, legacy, &plan(), 1, 5) }).unwrap();
        let rec = backend.reap_one(&port, Some(Duration::from_secs(10))).unwrap().expect("a record");
        assert_eq!((rec.user_data, rec.status), (5, 0), "{v:?}");
        assert_eq!(rec.value, target, "{v:?}");
        drop(line);
    }
}

#[test]
fn a_missing_driver_is_a_backend_error() {
    let _serial = DOUBLES.lock().unwrap_or_else(|e| e.into_inner());
    std::env::set_var("GPUAR_CUDA_LIBRARY", "/nonexistent/libcuda.so.1");
    let e = Backend::open(Vendor::Cuda, 0).unwrap_err();
    assert_eq!(e.code(), Code::BACKEND);
    assert_eq!(e.errno(), libc::ENOENT);
}
