//! Views for the governor tests: the Exynos 5422 OPP tables with hand-set loads.

use super::{CpuSample, PolicyView};
use crate::counters::{CciPortSample, ThreadSample};

/// Scheduler tick of the Exynos 5422 kernels (CONFIG_HZ=200), µs.
pub const EXYNOS5422_TICK_US: u64 = 5_000;

/// Exynos 5422 LITTLE (Cortex-A7) table: 200000..=1400000 kHz in 100000 kHz steps.
pub fn little_opps() -> Vec<u32> {
    (2..=14).map(|m| m * 100_000).collect()
}

/// Exynos 5422 big (Cortex-A15) table: 200000..=2000000 kHz in 100000 kHz steps.
pub fn big_opps() -> Vec<u32> {
    (2..=20).map(|m| m * 100_000).collect()
}

/// A LITTLE policy (policy 0) at `cur_khz`, 140 µs transition latency (Exynos 5422 DT), HZ=200,
/// no caps.
pub fn little_view(cur_khz: u32) -> PolicyView {
    view_with(little_opps(), cur_khz, 0)
}

pub fn big_view(cur_khz: u32) -> PolicyView {
    view_with(big_opps(), cur_khz, 1)
}

fn view_with(opps_khz: Vec<u32>, cur_khz: u32, policy: usize) -> PolicyView {
    let min = opps_khz[0];
    let max = *opps_khz.last().unwrap();
    PolicyView {
        policy,
        cpuinfo_min_khz: min,
        cpuinfo_max_khz: max,
        policy_min_khz: min,
        policy_max_khz: max,
        thermal_cap_khz: max,
        cur_khz,
        transition_latency_ns: 140_000,
        tick_us: EXYNOS5422_TICK_US,
        cpu_capacity: 1024,
        opps_khz,
        ..Default::default()
    }
}

/// One CPU per `(wall_us, idle_us)` pair.
pub fn with_cpus(mut v: PolicyView, times_us: &[(u64, u64)]) -> PolicyView {
    v.cpus = times_us
        .iter()
        .enumerate()
        .map(|(cpu, &(wall_us, idle_us))| CpuSample {
            cpu,
            wall_us,
            idle_us,
            was_idle: idle_us > 0,
            ..Default::default()
        })
        .collect();
    v
}

/// One CPU busy `load`% of a 10000 µs period.
pub fn with_load(v: PolicyView, load: u64) -> PolicyView {
    with_cpus(v, &[(10_000, 10_000 - load * 100)])
}

pub fn port(cluster: usize, hs_any: u64, stall: u64) -> CciPortSample {
    CciPortSample { port: 3 + cluster as u8, cluster, si_rrq_hs_any: hs_any, si_rrq_stall_tt_full: stall }
}

pub fn thread(cluster: usize, cycles: u64, bus_access: u64) -> ThreadSample {
    let mut t = ThreadSample { tid: 100 + cluster as u32, cluster, ..Default::default() };
    t.pmu.cpu_cycles = cycles;
    t.pmu.bus_access = bus_access;
    t
}
