//! hetlab-core: the model of a big.LITTLE SoC — platform, workloads, engine, scheduler,
//! governors, power, thermal, PMCs and decision-tree evaluation. No I/O beyond parsing.
//!
//! Map: `platform` (SoC description) and `workload` (what runs) feed `engine`, which asks
//! `memory` how fast each thread runs, `power` what it costs, `sched` where it runs and the
//! `governor`s at what frequency; it returns a `result::RunResult` and `trace` events.

pub mod counters;
pub mod engine;
pub mod governor;
pub mod input;
pub mod memory;
pub mod platform;
pub mod power;
pub mod result;
pub mod sched;
pub mod sweep;
pub mod trace;
pub mod tree;
pub mod workload;

/// The files of data/ embedded by build.rs.
mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
}
