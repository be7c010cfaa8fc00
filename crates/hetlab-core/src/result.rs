//! What a simulation run reports: a summary that serialises to JSON, the per-sample time
//! series and, on request, the trace events.

use crate::counters::{ClusterCounters, CorePmu};
use crate::trace::{TraceEvent, TraceThreads};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub platform: String,
    pub workload: String,
    pub seed: u64,
    pub scheduler: String,
    /// Governor per cluster, in cluster order.
    pub governors: Vec<String>,
    /// Which cores the logical CPUs ran on (`sched::switching`: gts, iks, cluster-switching).
    pub switching: String,
    /// Times the switcher moved a logical CPU to its partner core.
    pub cpu_switches: u64,
    /// Times a CPU's RT tasks were throttled for using their runtime (`sched::rt`).
    pub rt_throttles: u64,
    /// Whether every task finished before the time limit.
    pub completed: bool,
    /// Makespan: time until the last task finished, s.
    pub time_s: f64,
    pub energy: Energy,
    pub clusters: Vec<ClusterReport>,
    pub cpus: Vec<CpuReport>,
    pub cci_ports: Vec<CciPortReport>,
    pub cci_cycles: u64,
    pub dram_lines: f64,
    pub threads: Vec<ThreadReport>,
    pub governor_samples: u64,
    /// CPU time governors spent reading PMCs (charged to the CPUs that ran them), s.
    pub governor_overhead_s: f64,
    /// Engine events processed (for the speed benchmarks).
    pub events: u64,
    /// Every time a thread entered a phase with a `mark`, in time order.
    pub marks: Vec<Mark>,
    /// RCU's work and options (`kernel::rcu`), when RCU had callbacks or options were given.
    pub rcu: Option<crate::kernel::rcu::RcuReport>,
    /// Where the board's interrupt work ran, per source and CPU (`kernel::irq`), when the
    /// platform describes its kernel (`[kernel]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupts: Option<crate::kernel::irq::InterruptReport>,
    /// Set when every thread left waits on something only another of them could give (rt-app
    /// `wait` nobody signals, a lock cycle): the run can go no further. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlock: Option<Deadlock>,
    /// The task groups (`sched::group`) of a run that has some, the root left out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub taskgroups: Vec<TaskGroupReport>,
    #[serde(skip)]
    pub series: Vec<SampleRow>,
    #[serde(skip)]
    pub trace: Vec<TraceEvent>,
    #[serde(skip)]
    pub trace_threads: TraceThreads,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct Energy {
    /// Everything: clusters, DRAM and the rest of the board.
    pub total_j: f64,
    /// What the board's power sensors cover (CPU clusters and DRAM), integrated exactly.
    pub sensors_j: f64,
    /// The seed paper's measurement of the same rails: a reading every `sensors.period_us`,
    /// accumulated as power x period, up to the first reading after the run ends.
    pub sensor_readings_j: f64,
    /// Per cluster, in cluster order (dynamic + static).
    pub clusters_j: Vec<f64>,
    pub dram_j: f64,
    pub board_j: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClusterReport {
    pub name: String,
    pub governor: String,
    /// Mean clock over the time it was online.
    pub avg_freq_khz: f64,
    /// (kHz, seconds at that frequency while online), every OPP listed: a cluster no CPU is
    /// online on (hotplugged off, or switched out) has no policy clocking it and counts none.
    pub residency: Vec<(u32, f64)>,
    pub dynamic_j: f64,
    pub static_j: f64,
    pub transitions: u64,
    pub peak_temp_c: f64,
    pub min_thermal_cap_khz: u32,
    pub online: bool,
    /// Times cpuidle powered the cluster down (and back up).
    pub power_downs: u64,
    /// Time the cluster spent powered down, s.
    pub off_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CpuReport {
    pub cpu: usize,
    pub cluster: String,
    pub busy_s: f64,
    /// Times the CPU left idle (a thread, a tick, a timer or an interrupt woke it).
    pub wakeups: u64,
    pub pmu: CorePmu,
}

#[derive(Debug, Clone, Serialize)]
pub struct CciPortReport {
    pub port: u8,
    pub cluster: String,
    pub si_rrq_hs_any: u64,
    pub si_rrq_stall_tt_full: u64,
    pub cci_congestion: f64,
    /// This port's speculative fetches discarded and retried because the snoop response came
    /// after the DRAM data (the CCI counts them at its master interface to memory).
    pub mi_retry_speculative_fetch: u64,
}

/// Every thread left blocked forever: when, and what each waits on.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Deadlock {
    pub time_s: f64,
    /// "THREAD waits on KIND 'NAME'", one per blocked thread.
    pub waits: Vec<String>,
}

/// A task group of the run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TaskGroupReport {
    pub path: String,
    /// `cpu.shares`.
    pub shares: u64,
    /// CPU time of its threads while in it or in a group below it, s (`cpuacct.usage`).
    pub cpu_time_s: f64,
}

/// A thread entered a marked phase.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Mark {
    pub time_s: f64,
    pub tid: u32,
    pub name: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ThreadReport {
    pub tid: u32,
    pub name: String,
    pub cpu_time_s: f64,
    /// CPU time on each CPU, s (a task's residency per CPU).
    pub cpu_time_on_s: Vec<f64>,
    pub finish_s: f64,
    pub migrations: u64,
    pub pmu: CorePmu,
    /// Cache lines it took from other cores' caches (cache-to-cache transfers: shared
    /// updates and data other threads wrote), within its cluster or across the CCI.
    pub peer_lines_in: u64,
    /// Its task group at the end of the run, unless the root group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taskgroup: Option<String>,
}

/// One governor sample of one cluster.
#[derive(Debug, Clone, Serialize)]
pub struct SampleRow {
    pub time_s: f64,
    pub cluster: usize,
    /// Frequency in force during the sampled period, kHz.
    pub freq_khz: u32,
    /// Frequency the governor asked for, kHz.
    pub target_khz: u32,
    /// Max per-CPU load over the period, % (ondemand's definition).
    pub load_pct: f64,
    pub power_mw: f64,
    pub temp_c: f64,
    /// The paper's features measured on this cluster's CCI port and threads.
    pub cci_congestion: f64,
    pub memory_access: f64,
    /// Latency of a snoop served by this cluster at its current frequency, ns (0 when off).
    pub snoop_latency_ns: f64,
    /// Length of the sampled period, s.
    pub period_s: f64,
    /// CCI cycle counter delta over the period.
    pub cci_cycles: u64,
    /// Raw counter deltas over the period, per cluster (in cluster order): that cluster's CCI
    /// port and the threads that ran on it. This is what the training sweep records.
    pub counters: PerCluster,
}

pub use crate::platform::MAX_CLUSTERS;

/// One value per cluster, stored inline (a sample row allocates nothing).
#[derive(Debug, Clone, Copy, Default)]
pub struct PerCluster {
    values: [ClusterCounters; MAX_CLUSTERS],
    len: usize,
}

impl std::ops::Deref for PerCluster {
    type Target = [ClusterCounters];
    fn deref(&self) -> &[ClusterCounters] {
        &self.values[..self.len]
    }
}

impl FromIterator<ClusterCounters> for PerCluster {
    fn from_iter<I: IntoIterator<Item = ClusterCounters>>(items: I) -> Self {
        let mut out = PerCluster::default();
        for v in items {
            assert!(out.len < MAX_CLUSTERS, "at most {MAX_CLUSTERS} clusters (checked with the platform)");
            out.values[out.len] = v;
            out.len += 1;
        }
        out
    }
}

impl Serialize for PerCluster {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}
