//! hetlab-core: the model of a big.LITTLE SoC — platform, workloads, engine, scheduler,
//! governors, power, thermal, PMCs and decision-tree evaluation. No I/O beyond parsing.

pub mod governor;
pub mod platform;
pub mod trace;
pub mod workload;
pub mod tree;
