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
    /// The DSU's clock, L3 lookups and energy (`None`: the platform has no DSU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dsu: Option<DsuReport>,
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
    /// rt-app's per-thread logs, when asked for (`SimConfig::rtapp_logs`): one per thread of an
    /// rt-app task, in thread order.
    #[serde(skip)]
    pub rtapp_logs: Vec<RtappLog>,
}

/// One rt-app thread's log: a row per loop it finished (`log_timing`, src/rt-app_utils.c).
#[derive(Debug, Clone, PartialEq)]
pub struct RtappLog {
    /// The thread's name (rt-app's `<task>-<index>`, hetlab's thread names).
    pub thread: String,
    /// rt-app's thread index (`idx`): its place among the run's threads.
    pub index: u32,
    pub rows: Vec<RtappLogRow>,
}

/// One loop as rt-app's log has it; times in µs from the run's start (rt-app's are
/// CLOCK_MONOTONIC's, whose origin is the board's boot).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RtappLogRow {
    /// Thousands of loops of calibrated work its `run`s asked (`perf`).
    pub perf: u64,
    /// Wall time in its `run` and `runtime` events (`run`).
    pub run_us: u64,
    /// The loop's wall time, start to end (`period`).
    pub period_us: u64,
    pub start_us: u64,
    pub end_us: u64,
    /// The last timer's expiry minus the time it was reached (or their sum, with
    /// `cumulative_slack`).
    pub slack_us: i64,
    /// What its `run`s and `runtime`s asked (`c_duration`).
    pub c_run_us: u64,
    /// Its timers' periods (`c_period`).
    pub c_period_us: u64,
    /// Its timers' wake-up latency (`wu_lat`).
    pub wu_lat_us: u64,
}

impl RtappLog {
    /// The log file rt-app writes (`<logdir>/<log_basename>-<thread>.log`): its header, then
    /// a row per loop, in `log_timing`'s columns and widths.
    pub fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = format!(
            "{} {:>8} {:>8} {:>8} {:>15} {:>15} {:>15} {:>10} {:>10} {:>10} {:>10}\n",
            "#idx", "perf", "run", "period", "start", "end", "rel_st", "slack", "c_duration", "c_period", "wu_lat"
        );
        for r in &self.rows {
            let _ = writeln!(
                out,
                "{:4} {:8} {:8} {:8} {:15} {:15} {:15} {:10} {:10} {:10} {:10}",
                self.index,
                r.perf,
                r.run_us,
                r.period_us,
                r.start_us,
                r.end_us,
                r.start_us,
                r.slack_us,
                r.c_run_us,
                r.c_period_us,
                r.wu_lat_us
            );
        }
        out
    }
}

/// Hottest a model's cluster may get, °C: far above any junction limit (125-150 °C in data
/// sheets), so a run beyond it is in thermal runaway (leakage heating the cluster faster than
/// its thermal resistance cools it), not a result.
pub const MAX_MODEL_TEMP_C: f64 = 500.0;

impl RunResult {
    /// A run whose temperatures ran away, or whose energies or times are not finite numbers,
    /// is an error naming the cluster and the platform fields that drive it, never a result with
    /// infinite (or, in JSON, null) energies.
    pub fn check_physical(&self) -> Result<(), String> {
        for c in &self.clusters {
            let energy = [c.dynamic_j, c.static_j];
            if c.peak_temp_c.is_nan() || c.peak_temp_c > MAX_MODEL_TEMP_C || energy.iter().any(|j| !j.is_finite()) {
                return Err(format!(
                    "cluster '{}' ran into thermal runaway (temperature {} °C, above {MAX_MODEL_TEMP_C} °C): its \
                     leakage_mw heats it faster than thermal_resistance_c_per_w lets it cool; check those values \
                     in the platform file",
                    c.name, c.peak_temp_c
                ));
            }
        }
        let e = &self.energy;
        let totals = [self.time_s, e.total_j, e.sensors_j, e.sensor_readings_j, e.dram_j, e.dsu_j, e.board_j];
        if totals.iter().chain(&e.clusters_j).any(|v| !v.is_finite()) {
            return Err("the run's time or energy is not a finite number: a platform or workload value is out of its \
                 physical range; check the files' powers and sizes"
                .into());
        }
        Ok(())
    }
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
    /// The DSU domain (its clock, leakage and L3 lookups); 0 without a DSU.
    pub dsu_j: f64,
    pub board_j: f64,
}

/// A DynamIQ Shared Unit over the run (`model::dsu`).
#[derive(Debug, Clone, Serialize, Default)]
pub struct DsuReport {
    /// Mean clock over the run, kHz.
    pub avg_khz: f64,
    /// L3 lookups that hit and that missed.
    pub l3_hits: f64,
    pub l3_misses: f64,
    pub energy_j: f64,
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
    /// Mean temperature over the run, and at its end (where a back-to-back run starts).
    pub mean_temp_c: f64,
    pub end_temp_c: f64,
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
