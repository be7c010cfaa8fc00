//! What a simulation run is asked to do: governors per cpufreq policy, placement, idle states,
//! hotplugged clusters, kernel threads, outputs and the seed.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use crate::kernel::perf_sampling::PerfSampling;
use crate::kernel::rcu::RcuOptions;
use crate::model::idle::CpuIdle;
use crate::platform::Platform;
use crate::sched::switching::SwitchingMode;
use crate::sched::SchedPolicy;
use crate::tree::AntiSnoopModel;
use crate::workload::Task;

/// How a policy's frequency is chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct GovernorSetting {
    pub name: String,
    pub tunables: Vec<(String, f64)>,
}

#[derive(Debug, Clone)]
pub struct SimConfig {
    pub seed: u64,
    pub scheduler: SchedPolicy,
    /// The placement policy's tunables (sysfs name, value), over its and the platform's defaults.
    pub sched_tunables: Vec<(String, f64)>,
    /// Which cores the logical CPUs run on (`sched::switching`): all (GTS), one per big/LITTLE
    /// pair (IKS) or one cluster's (cluster switching).
    pub switching: SwitchingMode,
    /// One per cluster, in platform order: under GTS each cluster's policy runs its own; under
    /// a switcher every policy runs the setting of cpu0's cluster.
    pub governors: Vec<GovernorSetting>,
    pub model: Option<AntiSnoopModel>,
    /// Clusters whose CPUs are hotplugged off (cluster powered down, CCI port disabled).
    pub offline_clusters: Vec<usize>,
    /// Restrict every task of the workload to this cluster's CPUs (like `taskset`).
    pub cluster: Option<usize>,
    /// Which idle states cpuidle may use.
    pub cpuidle: CpuIdle,
    /// The PM QoS `cpu_dma_latency` request, µs (what a process writes to /dev/cpu_dma_latency):
    /// cpuidle chooses no state whose exit latency exceeds it, and 0 keeps every CPU in WFI.
    /// `None`: no request (the kernel's default, 2000 s: no limit).
    pub cpu_dma_latency_us: Option<u32>,
    /// Kernel threads to run beside the workload (see `crate::kernel`).
    pub kernel_threads: Vec<Task>,
    /// `perf record -e instructions -C <cpus> -c <period>` running beside the workload
    /// (`crate::kernel::perf_sampling`); off by default.
    pub perf_sampling: Option<PerfSampling>,
    /// Each cluster's temperature at the start, °C, in platform order (empty: every cluster at
    /// ambient): a board warmed up before the run.
    pub start_temp_c: Vec<f64>,
    /// RCU's boot options (`rcu_nocbs=`, RCU_FAST_NO_HZ; `crate::kernel::rcu`).
    pub rcu: RcuOptions,
    /// Record trace events.
    pub trace: bool,
    /// Keep the per-sample time series (off: memory stays constant on long runs).
    pub series: bool,
    /// Stop after this much simulated time even if tasks remain.
    pub time_limit_s: f64,
    /// Events at one simulated instant after which the run ends as making no progress
    /// ([`MAX_EVENTS_WITHOUT_PROGRESS`](super::MAX_EVENTS_WITHOUT_PROGRESS) by default; a
    /// fuzzing harness, whose instrumented build is 30x slower per event, asks fewer).
    pub max_events_without_progress: u64,
    /// Set by the caller to abandon the run (Ctrl-C in Python): the engine looks at it every
    /// [`STOP_CHECK_EVENTS`](super::STOP_CHECK_EVENTS) events, which changes nothing else.
    pub stop: Option<Arc<AtomicBool>>,
    /// Where the engine publishes the simulated time it has reached (µs, as `f64::to_bits`) at
    /// the same checkpoints, for a caller that shows progress on a long run.
    pub progress_us: Option<Arc<AtomicU64>>,
}

/// The largest `cpu_dma_latency` request, µs: `PM_QOS_CPU_DMA_LAT_DEFAULT_VALUE` (2000 s;
/// include/linux/pm_qos.h, 3.10 and 5.10), the value of no request.
pub const MAX_CPU_DMA_LATENCY_US: u32 = 2_000_000_000;

/// The longest simulated run: ten days, far beyond any experiment (simulated time is kept in
/// f64 µs, exact to well below a nanosecond there).
pub const MAX_TIME_LIMIT_S: f64 = 864_000.0;

impl SimConfig {
    /// A run of `governors` with every other option at its default: pinned placement, WFI
    /// only, every cluster online, no restriction, no perf sampling, series kept, no trace, a
    /// 1-hour limit.
    pub fn new(governors: Vec<GovernorSetting>) -> SimConfig {
        SimConfig {
            seed: 1,
            scheduler: SchedPolicy::Pinned,
            sched_tunables: Vec::new(),
            switching: SwitchingMode::Gts,
            governors,
            model: None,
            offline_clusters: Vec::new(),
            cluster: None,
            cpuidle: CpuIdle::Wfi,
            cpu_dma_latency_us: None,
            kernel_threads: Vec::new(),
            perf_sampling: None,
            start_temp_c: Vec::new(),
            rcu: RcuOptions::default(),
            trace: false,
            series: true,
            time_limit_s: 3600.0,
            max_events_without_progress: super::MAX_EVENTS_WITHOUT_PROGRESS,
            stop: None,
            progress_us: None,
        }
    }

    /// Checks the run's bounds: the time limit is a positive, finite number of seconds no larger
    /// than [`MAX_TIME_LIMIT_S`] (a NaN or negative limit would run unbounded or not at all).
    pub fn check(&self) -> Result<(), String> {
        let t = self.time_limit_s;
        if !(t.is_finite() && t > 0.0 && t <= MAX_TIME_LIMIT_S) {
            return Err(format!(
                "time limit {t} s is out of range; give a number of simulated seconds in (0, {MAX_TIME_LIMIT_S}]"
            ));
        }
        if let Some(us) = self.cpu_dma_latency_us.filter(|&us| us > MAX_CPU_DMA_LATENCY_US) {
            return Err(format!(
                "cpu_dma_latency {us} µs is out of range; give a whole number of µs in 0..={MAX_CPU_DMA_LATENCY_US}"
            ));
        }
        Ok(())
    }

    /// Resolves a governor name for every policy. Besides the governors, two of the seed
    /// paper's comparison points are named configurations: `all-max` (performance everywhere)
    /// and `idle-min` (the active cluster at max, the others at min). `fixed_khz` pins a
    /// cluster's frequency as the userspace governor would (`--freq`).
    pub fn governor_plan(
        platform: &Platform,
        governor: &str,
        tunables: &[(String, f64)],
        active_cluster: Option<usize>,
        fixed_khz: &[(usize, u32)],
    ) -> Result<Vec<GovernorSetting>, String> {
        let n = platform.clusters.len();
        let setting =
            |name: &str, tunables: &[(String, f64)]| GovernorSetting { name: name.into(), tunables: tunables.to_vec() };
        let mut plan: Vec<GovernorSetting> = match governor {
            "all-max" => (0..n).map(|_| setting("performance", &[])).collect(),
            "idle-min" => {
                let active =
                    active_cluster.ok_or("governor idle-min needs --cluster to know which cluster is active")?;
                (0..n).map(|c| setting(if c == active { "performance" } else { "powersave" }, &[])).collect()
            }
            name => (0..n).map(|_| setting(name, tunables)).collect(),
        };
        for &(c, khz) in fixed_khz {
            let cluster = &platform.clusters[c];
            if !cluster.opps.iter().any(|o| o[0] == khz) {
                return Err(format!(
                    "--freq {}={khz}: not an OPP of cluster {}; available kHz: {}",
                    cluster.name,
                    cluster.name,
                    cluster.freqs_khz().iter().map(|f| f.to_string()).collect::<Vec<_>>().join(", ")
                ));
            }
            plan[c] = setting("userspace", &[("setspeed_khz".into(), khz as f64)]);
        }
        Ok(plan)
    }
}
