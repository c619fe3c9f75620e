// SPDX-License-Identifier: MIT
//! What the tests share: the engine under test (GPUAR_TEST_ENGINE, "user"
//! by default, as the C and Python tests) and a quick plan.
#![allow(dead_code)]
use gpuar::{Engine, Plan, Port, PortOptions};

pub const PLAN: &str = "flag:park_us=100,backstop_us=1000000";

pub fn engine() -> Engine {
    std::env::var("GPUAR_TEST_ENGINE").unwrap_or_else(|_| "user".into()).parse().expect("GPUAR_TEST_ENGINE")
}

pub fn port() -> Port {
    PortOptions::new(engine()).strict(true).open().expect("open a port")
}

pub fn plan() -> Plan {
    PLAN.parse().unwrap()
}
