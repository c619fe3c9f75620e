// SPDX-License-Identifier: MIT
//! The raw C interface of libgpuar: every struct the crate passes and
//! every function it calls, declared once, here.
//!
//! The structs mirror `<gpuar/gpuar.h>`, `<linux/gpuar.h>`,
//! `<gpuar/exec.h>` and `<gpuar/vendor.h>`; `tests/layout.rs` compiles a
//! C program that prints the C compiler's `sizeof` and `offsetof` for each
//! field and compares them with these, so a header change that moves a
//! field fails a test instead of corrupting memory. Use the safe types of
//! the crate root unless you need a call they do not wrap.
#![allow(non_camel_case_types, missing_debug_implementations)]

use libc::{c_char, c_int, c_void, size_t};

pub const GPUAR_MESSAGE_MAX: usize = 256;
pub const GPUAR_OUTCOME_SLOTS: usize = 16;
pub const GPUAR_LINE_SLOTS: usize = 8;

pub const GPUAR_ENGINE_AUTO: u32 = 0;
pub const GPUAR_ENGINE_KERNEL: u32 = 1;
pub const GPUAR_ENGINE_USER: u32 = 2;

pub const GPUAR_PORT_CLOEXEC: u32 = 1 << 0;
pub const GPUAR_PORT_NONBLOCK: u32 = 1 << 1;
pub const GPUAR_PORT_IMMINENT: u32 = 1 << 2;
pub const GPUAR_PORT_IMMINENT_RDBAND: u32 = 1 << 3;
pub const GPUAR_PORT_STRICT: u32 = 1 << 16;
pub const GPUAR_PORT_WATCHER: u32 = 1 << 17;
pub const GPUAR_PORT_INHERIT: u32 = 1 << 18;
pub const GPUAR_BUSY_READ_OFF: u32 = u32::MAX;

pub const GPUAR_PARK_BLOCK: u32 = 1;
pub const GPUAR_PARK_POLL: u32 = 2;
pub const GPUAR_PARK_FLAG: u32 = 3;

pub const GPUAR_POINT_HAS_PREDICTION: u32 = 1 << 0;

pub const GPUAR_EXEC_NAIVE: u32 = 1;
pub const GPUAR_EXEC_GPU_REACTOR: u32 = 2;
pub const GPUAR_EXEC_IO_URING: u32 = 3;
pub const GPUAR_TASK_PENDING: c_int = 0;
pub const GPUAR_TASK_DONE: c_int = 1;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct gpuar_error {
    pub code: u32,
    pub sys_errno: i32,
    pub message: [c_char; GPUAR_MESSAGE_MAX],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct gpuar_plan {
    pub park: u32,
    pub flags: u32,
    pub park_ns: u64,
    pub backstop_ns: u64,
    pub margin_ns: u64,
    pub min_sleep_ns: u64,
    pub max_sleep_ns: u64,
    pub window: u32,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct gpuar_record {
    pub user_data: u64,
    pub start_ns: u64,
    pub complete_ns: u64,
    pub slept_ns: u64,
    pub point: u64,
    pub value: u64,
    pub status: i32,
    pub checks: u32,
    pub version: u16,
    pub source: u8,
    pub outcome: u8,
    pub pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct gpuar_word_wait {
    pub user_data: u64,
    pub target: u64,
    pub point: u64,
    pub start_ns: u64,
    pub line: u32,
    pub slot: u32,
    pub flags: u32,
    pub pad: u32,
    pub plan: gpuar_plan,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct gpuar_fence_wait {
    pub user_data: u64,
    pub fd: i32,
    pub flags: u32,
    pub reserved: [u64; 2],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gpuar_port_options {
    pub size: u32,
    pub engine: u32,
    pub flags: u32,
    pub max_waits: u32,
    pub device_path: *const c_char,
    pub poll_interval_ns: u64,
    pub poll_backstop_ns: u64,
    pub max_lines: u32,
    pub max_points: u32,
    pub busy_read_us: u32,
    pub claim_slice_us: u32,
    pub reserved: [u32; 12],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct gpuar_port_stats {
    pub size: u32,
    pub pad: u32,
    pub submitted: u64,
    pub checks: u64,
    pub sleeps: u64,
    pub timer_fires: u64,
    pub busy_read_checks: u64,
    pub pending: u64,
    pub queued: u64,
    pub lines: u64,
    pub points: u64,
    pub wakeup_latency_ns: u64,
    pub outcomes: [u64; GPUAR_OUTCOME_SLOTS],
    pub imminent: u64,
    pub claims: u64,
    pub lease_expiries: u64,
    pub budget_stretched: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct gpuar_point_stats {
    pub size: u32,
    pub flags: u32,
    pub point: u64,
    pub samples: u64,
    pub predicted_ns: u64,
    pub outcomes: [u64; GPUAR_OUTCOME_SLOTS],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gpuar_vendor_completion {
    pub record: gpuar_record,
    pub vendor_status: i32,
    pub pad: u32,
    pub vendor_name: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gpuar_exec_options {
    pub size: u32,
    pub kind: u32,
    pub clock: *const c_void,
    pub park_bound_ns: u64,
    pub reserved: [u32; 12],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct gpuar_exec_stats {
    pub polls: u64,
    pub wakes: u64,
    pub sleeps: u64,
    pub parks: u64,
    pub idle_ns: u64,
    pub uring_fallbacks: u64,
    pub reserved: [u64; 8],
}

/// Opaque handles.
#[repr(C)]
pub struct gpuar_port {
    _private: [u8; 0],
}
#[repr(C)]
pub struct gpuar_line {
    _private: [u8; 0],
}
#[repr(C)]
pub struct gpuar_soft_producer {
    _private: [u8; 0],
}
#[repr(C)]
pub struct gpuar_vendor_line {
    _private: [u8; 0],
}
#[repr(C)]
pub struct gpuar_cuda {
    _private: [u8; 0],
}
#[repr(C)]
pub struct gpuar_hip {
    _private: [u8; 0],
}
#[repr(C)]
pub struct gpuar_exec {
    _private: [u8; 0],
}
#[repr(C)]
pub struct gpuar_task {
    _private: [u8; 0],
}

pub type gpuar_task_fn = unsafe extern "C" fn(task: *mut gpuar_task, arg: *mut c_void) -> c_int;

extern "C" {
    pub fn gpuar_version() -> *const c_char;
    pub fn gpuar_code_name(code: u32) -> *const c_char;
    pub fn gpuar_code_is_warning(code: u32) -> bool;
    pub fn gpuar_now_ns() -> u64;
    pub fn gpuar_outcome_name(outcome: u32) -> *const c_char;

    pub fn gpuar_plan_from_text(
        text: *const c_char,
        plan: *mut gpuar_plan,
        diag: *mut gpuar_error,
    ) -> c_int;
    pub fn gpuar_plan_to_text(plan: *const gpuar_plan, buf: *mut c_char, size: size_t) -> size_t;

    pub fn gpuar_port_open(
        port: *mut *mut gpuar_port,
        opts: *const gpuar_port_options,
        diag: *mut gpuar_error,
    ) -> c_int;
    pub fn gpuar_port_close(port: *mut gpuar_port);
    pub fn gpuar_port_engine(port: *const gpuar_port) -> u32;
    pub fn gpuar_engine_name(engine: u32) -> *const c_char;
    pub fn gpuar_port_fd(port: *const gpuar_port) -> c_int;
    pub fn gpuar_port_process(port: *mut gpuar_port) -> c_int;
    pub fn gpuar_port_next_check_ns(port: *mut gpuar_port) -> u64;
    pub fn gpuar_port_imminent(port: *const gpuar_port) -> bool;
    pub fn gpuar_line_alloc(port: *mut gpuar_port, line: *mut *mut gpuar_line) -> c_int;
    pub fn gpuar_line_free(port: *mut gpuar_port, line: *mut gpuar_line) -> c_int;
    pub fn gpuar_line_words(line: *const gpuar_line) -> *mut u64;
    pub fn gpuar_line_id(line: *const gpuar_line) -> u32;
    pub fn gpuar_submit_word_waits(
        port: *mut gpuar_port,
        waits: *const gpuar_word_wait,
        count: u32,
        error_index: *mut u32,
    ) -> c_int;
    pub fn gpuar_submit_fence_waits(
        port: *mut gpuar_port,
        waits: *const gpuar_fence_wait,
        count: u32,
        error_index: *mut u32,
    ) -> c_int;
    pub fn gpuar_cancel(port: *mut gpuar_port, user_data: u64) -> c_int;
    pub fn gpuar_port_reap(
        port: *mut gpuar_port,
        records: *mut gpuar_record,
        max: u32,
        timeout_ns: i64,
    ) -> c_int;
    pub fn gpuar_port_stats(port: *mut gpuar_port, stats: *mut gpuar_port_stats) -> c_int;
    pub fn gpuar_point_stats(port: *mut gpuar_port, stats: *mut gpuar_point_stats) -> c_int;

    pub fn gpuar_soft_producer_new(producer: *mut *mut gpuar_soft_producer) -> c_int;
    pub fn gpuar_soft_producer_free(producer: *mut gpuar_soft_producer);
    pub fn gpuar_soft_store_at(
        producer: *mut gpuar_soft_producer,
        word: *mut u64,
        value: u64,
        at_ns: u64,
    ) -> c_int;
    pub fn gpuar_soft_fail_at(producer: *mut gpuar_soft_producer, error: c_int, at_ns: u64);
    pub fn gpuar_soft_stores(producer: *mut gpuar_soft_producer) -> u64;
    pub fn gpuar_soft_stored_at(
        producer: *mut gpuar_soft_producer,
        word: *const u64,
        value: u64,
    ) -> u64;

    pub fn gpuar_vendor_line_words(line: *const gpuar_vendor_line) -> *mut u64;
    pub fn gpuar_vendor_line_sequence(line: *const gpuar_vendor_line, slot: u32) -> u64;
    pub fn gpuar_vendor_line_gpuar(line: *const gpuar_vendor_line) -> *mut gpuar_line;

    pub fn gpuar_cuda_open(cuda: *mut *mut gpuar_cuda, ordinal: c_int, diag: *mut gpuar_error) -> c_int;
    pub fn gpuar_cuda_close(cuda: *mut gpuar_cuda);
    pub fn gpuar_cuda_driver_version(cuda: *const gpuar_cuda) -> c_int;
    pub fn gpuar_cuda_library(cuda: *const gpuar_cuda) -> *const c_char;
    pub fn gpuar_cuda_line_alloc(
        cuda: *mut gpuar_cuda,
        port: *mut gpuar_port,
        line: *mut *mut gpuar_vendor_line,
        diag: *mut gpuar_error,
    ) -> c_int;
    pub fn gpuar_cuda_line_free(
        line: *mut gpuar_vendor_line,
        timeout_ns: u64,
        diag: *mut gpuar_error,
    ) -> c_int;
    pub fn gpuar_cuda_port_await(
        line: *mut gpuar_vendor_line,
        slot: u32,
        stream: *mut c_void,
        plan: *const gpuar_plan,
        point: u64,
        user_data: u64,
        target: *mut u64,
        diag: *mut gpuar_error,
    ) -> c_int;
    pub fn gpuar_cuda_port_await_event(
        line: *mut gpuar_vendor_line,
        slot: u32,
        event: *mut c_void,
        plan: *const gpuar_plan,
        point: u64,
        user_data: u64,
        target: *mut u64,
        diag: *mut gpuar_error,
    ) -> c_int;
    pub fn gpuar_cuda_port_reap(
        cuda: *mut gpuar_cuda,
        port: *mut gpuar_port,
        out: *mut gpuar_vendor_completion,
        max: u32,
        timeout_ns: i64,
        diag: *mut gpuar_error,
    ) -> c_int;

    pub fn gpuar_hip_open(hip: *mut *mut gpuar_hip, ordinal: c_int, diag: *mut gpuar_error) -> c_int;
    pub fn gpuar_hip_close(hip: *mut gpuar_hip);
    pub fn gpuar_hip_driver_version(hip: *const gpuar_hip) -> c_int;
    pub fn gpuar_hip_library(hip: *const gpuar_hip) -> *const c_char;
    pub fn gpuar_hip_line_alloc(
        hip: *mut gpuar_hip,
        port: *mut gpuar_port,
        line: *mut *mut gpuar_vendor_line,
        diag: *mut gpuar_error,
    ) -> c_int;
    pub fn gpuar_hip_line_free(
        line: *mut gpuar_vendor_line,
        timeout_ns: u64,
        diag: *mut gpuar_error,
    ) -> c_int;
    pub fn gpuar_hip_port_await(
        line: *mut gpuar_vendor_line,
        slot: u32,
        stream: *mut c_void,
        plan: *const gpuar_plan,
        point: u64,
        user_data: u64,
        target: *mut u64,
        diag: *mut gpuar_error,
    ) -> c_int;
    pub fn gpuar_hip_port_await_event(
        line: *mut gpuar_vendor_line,
        slot: u32,
        event: *mut c_void,
        plan: *const gpuar_plan,
        point: u64,
        user_data: u64,
        target: *mut u64,
        diag: *mut gpuar_error,
    ) -> c_int;
    pub fn gpuar_hip_port_reap(
        hip: *mut gpuar_hip,
        port: *mut gpuar_port,
        out: *mut gpuar_vendor_completion,
        max: u32,
        timeout_ns: i64,
        diag: *mut gpuar_error,
    ) -> c_int;

    pub fn gpuar_exec_kind_name(kind: u32) -> *const c_char;
    pub fn gpuar_exec_kind_parse(name: *const c_char, kind: *mut u32, diag: *mut gpuar_error) -> c_int;
    pub fn gpuar_exec_resolve(
        requested: u32,
        strict: bool,
        caps: *const c_void,
        resolved: *mut u32,
        diag: *mut gpuar_error,
    ) -> c_int;
    pub fn gpuar_exec_new(
        exec: *mut *mut gpuar_exec,
        opts: *const gpuar_exec_options,
        diag: *mut gpuar_error,
    ) -> c_int;
    pub fn gpuar_exec_free(exec: *mut gpuar_exec);
    pub fn gpuar_exec_spawn(
        exec: *mut gpuar_exec,
        f: gpuar_task_fn,
        arg: *mut c_void,
        task: *mut *mut gpuar_task,
    ) -> c_int;
    pub fn gpuar_exec_run(exec: *mut gpuar_exec, diag: *mut gpuar_error) -> c_int;
    pub fn gpuar_exec_stats(exec: *const gpuar_exec, stats: *mut gpuar_exec_stats);
    pub fn gpuar_task_await_word(task: *mut gpuar_task, word: *const u64, target: u64) -> c_int;
    pub fn gpuar_task_await_timer(task: *mut gpuar_task, deadline_ns: u64) -> c_int;
    pub fn gpuar_task_yield(task: *mut gpuar_task) -> c_int;
}

extern "C" {
    pub fn gpuar_vendor_resolve(
        port: *mut gpuar_port,
        rec: *const gpuar_record,
        out: *mut gpuar_vendor_completion,
        diag: *mut gpuar_error,
    ) -> c_int;
}
