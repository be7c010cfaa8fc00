//! One governor interface, shared by the simulator and the real board.
//!
//! A governor owns one cpufreq policy (a cluster). Every sampling period the host (the
//! simulator's engine, or `hetlab-linux`'s daemon loop) fills a [`PolicyView`] with what Linux
//! offers — per-CPU busy/idle time since the last sample, PELT utilisation, the OPP table and
//! limits, the current frequency and PMC deltas — and the governor answers with a
//! [`Decision`]: the target frequency (kHz, one of the OPPs) and when to sample next.
//! Governors never know which host they run on.

use std::fmt;

use crate::counters::{CciPortSample, CorePmu, ThreadSample};
use crate::tree::AntiSnoopModel;
use tunables::{TunableInfo, Values};

/// Per-CPU accounting since the previous sample of this policy (what /proc/stat gives).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuSample {
    pub cpu: usize,
    /// Wall time since the previous sample of this CPU, µs.
    pub wall_us: u64,
    /// Idle time (incl. iowait, as ondemand with io_is_busy=0 counts it) since then, µs.
    pub idle_us: u64,
    /// Busy time of nice>0 tasks since then, µs (for `ignore_nice_load`).
    pub nice_us: u64,
    /// PELT utilisation of the CPU's CFS runqueue, 0..=1024 in the CPU's capacity scale
    /// (frequency- and capacity-invariant as in Linux 5.x), within its run queue's uclamp
    /// clamps (`sched::uclamp`), as schedutil reads it.
    pub util_avg: u32,
    /// Whether the CPU has been idle at all since the previous sample (schedutil's
    /// `sugov_cpu_is_busy` check).
    pub was_idle: bool,
    /// Core PMU deltas of this CPU since the previous sample.
    pub pmu: CorePmu,
}

/// Everything a governor may look at for one policy at one sample.
#[derive(Debug, Clone, Default)]
pub struct PolicyView {
    /// Monotonic time of this sample, µs.
    pub now_us: u64,
    /// Index of this policy (cluster) in the platform.
    pub policy: usize,
    /// Available frequencies, kHz, ascending (scaling_available_frequencies).
    pub opps_khz: Vec<u32>,
    pub cpuinfo_min_khz: u32,
    pub cpuinfo_max_khz: u32,
    /// scaling_min_freq / scaling_max_freq.
    pub policy_min_khz: u32,
    pub policy_max_khz: u32,
    /// Frequency cap from thermal management (cpufreq cooling), kHz.
    pub thermal_cap_khz: u32,
    /// Current frequency (scaling_cur_freq), kHz.
    pub cur_khz: u32,
    /// DVFS transition latency (cpuinfo_transition_latency), ns.
    pub transition_latency_ns: u32,
    /// Scheduler tick (one jiffy at the platform's CONFIG_HZ), µs: the dbs governors never
    /// sample faster than two ticks.
    pub tick_us: u64,
    /// Capacity of this policy's CPUs at their max frequency, 0..=1024.
    pub cpu_capacity: u32,
    /// The CPUs' `util_avg` is Linux 6.8+'s performance request (`sched::cpu_perf`: the 1.25
    /// headroom already applied to the actual utilisation), which schedutil maps to a frequency
    /// as it is; false: a utilisation (5.x), to which schedutil adds the headroom.
    pub util_is_perf: bool,
    /// One entry per CPU of the policy.
    pub cpus: Vec<CpuSample>,
    /// Threads that ran anywhere since this policy's previous sample.
    pub threads: Vec<ThreadSample>,
    /// CCI port counters, one per cluster port; empty when the CCI PMU is unavailable.
    pub cci_ports: Vec<CciPortSample>,
    /// CCI cycle counter delta.
    pub cci_cycles: u64,
}

impl PolicyView {
    /// Effective upper limit: min(policy max, thermal cap).
    pub fn upper_limit_khz(&self) -> u32 {
        self.policy_max_khz.min(self.thermal_cap_khz.max(self.policy_min_khz))
    }
}

/// A governor's answer to one sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Target frequency, kHz: an entry of `opps_khz` within the policy limits.
    pub target_khz: u32,
    /// Delay until the next sample, µs.
    pub next_sample_us: u64,
}

/// A DVFS policy: one instance manages one cluster.
pub trait Governor: Send {
    /// The name users type (`ondemand`, `anti-snoop`, ...).
    fn name(&self) -> &'static str;
    /// Called once before the first sample.
    fn start(&mut self, view: &PolicyView) -> Decision;
    /// Called every sampling period.
    fn sample(&mut self, view: &PolicyView) -> Decision;
    /// Whether each sample reads per-thread and interconnect PMCs (a simulator charges their
    /// cost, `Platform::governor_cost`).
    fn reads_pmcs(&self) -> bool {
        false
    }
    /// Whether it reads the CPUs' PELT utilisation (`CpuSample::util_avg`); hosts may leave
    /// it 0 otherwise.
    fn reads_util(&self) -> bool {
        false
    }
    /// Writes what the last full sample saw beyond load and frequency, as ` name=value` pairs,
    /// for a host's per-sample log (`hetlabd govern -v`). Most governors have nothing to add.
    fn explain(&self, _out: &mut dyn fmt::Write) -> fmt::Result {
        Ok(())
    }
}

/// What a host knows when it builds a governor for one policy.
#[derive(Debug, Clone, Copy)]
pub struct GovernorContext<'a> {
    /// The platform's name of the policy's cluster (anti-snoop picks its decision tree by it).
    pub cluster_name: &'a str,
    /// Scheduler tick of the platform (one jiffy at its CONFIG_HZ), µs.
    pub tick_us: u64,
    /// anti-snoop's trees; `None`: the paper's Figure 4.
    pub model: Option<&'a AntiSnoopModel>,
}

/// How a governor registers itself, as `struct cpufreq_governor` (and `dbs_governor` with its
/// `kobj_type.default_attrs`) do in the kernel: each governor's file defines one, and
/// [`registry`] lists them.
pub struct GovernorDescriptor {
    /// The name users type (`ondemand`, `anti-snoop`, ...); also [`Governor::name`].
    pub name: &'static str,
    /// One line for listings.
    pub summary: &'static str,
    /// Its tunables (sysfs attributes) on a platform whose tick is `tick_us`.
    pub tunables: fn(tick_us: u64) -> Vec<TunableInfo>,
    pub build: BuildFn,
}

/// A governor's constructor: an instance with the given tunables (already checked against its
/// declared ones) over the defaults; cross-checks between tunables fail here.
pub type BuildFn = fn(&Values, &GovernorContext) -> Result<Box<dyn Governor>, String>;

// The governors and the cpufreq-core pieces they share.
pub mod anti_snoop;
pub mod conservative;
pub mod dbs;
pub mod fixed;
pub mod freq_table;
pub mod interactive;
pub mod ondemand;
pub mod registry;
pub mod schedutil;
#[cfg(test)]
mod testutil;
pub mod tunables;
