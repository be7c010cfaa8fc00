//! The kernel's own work on the simulated CPUs.
//!
//! - [`jitter`]: housekeeping bursts (timers, softirqs, vmstat) charged to whichever CPU they
//!   hit — short enough to be charged as stolen time rather than scheduled.
//! - [`menu`]: the menu cpuidle governor's correction factors and exit-latency limits (the
//!   kernel's idle policy; the idle states themselves are hardware, `model::idle`).
//! - [`perf_sampling`]: counter-overflow interrupts of `perf record -c N` on chosen CPUs, charged
//!   the same way to the thread they interrupt.
//! - [`rcu`]: Tree RCU's callbacks, grace periods and the two options that move their cost
//!   (`rcu_nocbs=`, RCU_FAST_NO_HZ); with it the scheduling-clock tick of idle CPUs that RCU
//!   keeps (NO_HZ idle otherwise: an idle CPU takes no tick).
//! - Kernel threads ([`kthread`]): long-lived kernel work that the scheduler places like any
//!   task (per-CPU kworkers, RCU's callback-offload kthreads). They are ordinary [`Task`]s with
//!   the kernel's naming and no workload behind them; the engine runs them beside the
//!   workload's threads, with tids below the workload's.

pub mod boot;
pub mod irq;
pub mod jitter;
pub mod kthreads;
pub mod menu;
pub mod perf_sampling;
pub mod rcu;

use crate::workload::{Phase, Task};

/// First tid of kernel threads; the workload's threads start at `FIRST_USER_TID`.
pub const FIRST_KERNEL_TID: u32 = 100;
/// First tid of the workload's threads.
pub const FIRST_USER_TID: u32 = 1000;

/// A kernel thread named `name` (its comm, e.g. `rcuop/0`), allowed on `cpus` (`None`: every
/// CPU), running `phases` once.
pub fn kthread(name: &str, cpus: Option<Vec<usize>>, phases: Vec<Phase>) -> Task {
    Task { affinity: cpus, ..Task::new(name, phases) }
}

/// A CPU list as the kernel's cpulist parser reads it back (`0,1,3`).
pub fn cpulist(cpus: &[usize]) -> String {
    cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")
}
