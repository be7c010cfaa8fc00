//! What a simulation run is asked to do: governors per cpufreq policy, placement, idle states,
//! hotplugged clusters, kernel threads, outputs and the seed.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use crate::kernel::boot::BootOptions;
use crate::kernel::kthreads::kthread_tasks;
use crate::kernel::perf_sampling::PerfSampling;
use crate::kernel::rcu::rcuo_kthreads;
use crate::kernel::{FIRST_KERNEL_TID, FIRST_USER_TID};
use crate::model::idle::CpuIdle;
use crate::platform::Platform;
use crate::sched::switching::{Switcher, SwitchingMode};
use crate::sched::{CpuMask, Placement, SchedPolicy};
use crate::tree::AntiSnoopModel;
use crate::workload::{PhaseKind, SchedAttr, SyncOp, Task, Workload};

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
    /// Hold a DynamIQ platform's DSU clock at this kHz (one of its `[dsu] opps`): DSU DVFS off.
    /// `None`: the `[dsu]` governor sets it.
    pub dsu_khz: Option<u32>,
    /// How far (relative) the inputs one cluster's solution shares with the others — its L2
    /// miss latency, which the DRAM utilisation moves, and the bandwidth stretch — may move
    /// before a cluster whose own inputs are unchanged is re-solved: 0 (the default) re-solves
    /// at every change, bit for bit the exact model; at `t` every thread's speed, every CCI
    /// port's read rate and the DRAM's line rate stay within `t·(2+t)` (relative) of the exact
    /// solution's at the same instant (docs/performance.md), for fewer re-solutions.
    pub resolve_tolerance: f64,
    /// Kernel threads to run beside the workload (see `crate::kernel`).
    pub kernel_threads: Vec<Task>,
    /// `perf record -e instructions -C <cpus> -c <period>` running beside the workload
    /// (`crate::kernel::perf_sampling`); off by default.
    pub perf_sampling: Option<PerfSampling>,
    /// Each cluster's temperature at the start, °C, in platform order (empty: every cluster at
    /// ambient): a board warmed up before the run.
    pub start_temp_c: Vec<f64>,
    /// The kernel command line (`--kernel`: RCU's options, `irqaffinity=`, `nohz_full=`,
    /// `workqueue.unbound_cpus=`; `crate::kernel::boot`).
    pub kernel: BootOptions,
    /// Record trace events.
    pub trace: bool,
    /// Keep rt-app's per-thread log rows (one per loop of an rt-app task's thread).
    pub rtapp_logs: bool,
    /// Keep the per-sample time series (off: memory stays constant on long runs).
    pub series: bool,
    /// Stop after this much simulated time even if tasks remain.
    pub time_limit_s: f64,
    /// Events at one simulated instant after which the run ends as making no progress
    /// ([`MAX_EVENTS_WITHOUT_PROGRESS`](MAX_EVENTS_WITHOUT_PROGRESS) by default; a
    /// fuzzing harness, whose instrumented build is 30x slower per event, asks fewer).
    pub max_events_without_progress: u64,
    /// Set by the caller to abandon the run (Ctrl-C in Python): the engine looks at it every
    /// [`STOP_CHECK_EVENTS`](STOP_CHECK_EVENTS) events, which changes nothing else.
    pub stop: Option<Arc<AtomicBool>>,
    /// Where the engine publishes the simulated time it has reached (µs, as `f64::to_bits`) at
    /// the same checkpoints, for a caller that shows progress on a long run.
    pub progress_us: Option<Arc<AtomicU64>>,
}

/// Events at one simulated instant after which a run counts as making no progress (far above
/// any real burst: 15 for each of the most threads a workload may have, all at once), reported
/// within about a second.
pub const MAX_EVENTS_WITHOUT_PROGRESS: u64 = 1_000_000;

/// Events between two looks at `SimConfig::stop` (a load of an atomic: free at this spacing).
pub const STOP_CHECK_EVENTS: u64 = 4096;

/// The largest `cpu_dma_latency` request, µs: `PM_QOS_CPU_DMA_LAT_DEFAULT_VALUE` (2000 s;
/// include/linux/pm_qos.h, 3.10 and 5.10), the value of no request.
pub const MAX_CPU_DMA_LATENCY_US: u32 = 2_000_000_000;

/// The largest `resolve_tolerance`: a tenth, where the speeds' bound (`t·(2+t)`) is 21 %.
pub const MAX_RESOLVE_TOLERANCE: f64 = 0.1;

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
            dsu_khz: None,
            resolve_tolerance: 0.0,
            kernel_threads: Vec::new(),
            perf_sampling: None,
            start_temp_c: Vec::new(),
            kernel: BootOptions::default(),
            trace: false,
            rtapp_logs: false,
            series: true,
            time_limit_s: 3600.0,
            max_events_without_progress: MAX_EVENTS_WITHOUT_PROGRESS,
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
        let tol = self.resolve_tolerance;
        if !(tol.is_finite() && (0.0..=MAX_RESOLVE_TOLERANCE).contains(&tol)) {
            return Err(format!(
                "resolve tolerance {tol} is out of range; give a relative change in [0, {MAX_RESOLVE_TOLERANCE}] (0: exact)"
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

/// What a run is, once its configuration is checked against the platform and the workload.
pub struct RunPlan {
    /// The big.LITTLE switcher, under IKS or cluster switching.
    pub switcher: Option<Switcher>,
    /// Per logical CPU at boot: online, and its cluster.
    pub online: Vec<bool>,
    pub cluster_of: Vec<usize>,
    /// Per cluster: online at boot (a switcher's other cluster has no core in use).
    pub clusters_online: Vec<bool>,
    /// The CPUs the workload's threads may be given (online, within `--cluster`).
    pub user_cpus: CpuMask,
    /// The workload's tasks, then the kernel threads' (`config.kernel_threads`, then RCU's rcuo
    /// kthreads); the first `user_tasks` are the workload's.
    pub tasks: Vec<Task>,
    pub user_tasks: usize,
    /// Per task: the CPUs its threads may use, and how many threads it runs (`threads = cpus`:
    /// one per allowed CPU).
    pub allowed: Vec<CpuMask>,
    pub threads: Vec<u32>,
    /// The cluster periodic phases' reference work is measured on.
    pub reference_cluster: usize,
}

impl SimConfig {
    /// `dsu_khz`: the platform has a DSU and the kHz is one of its operating points.
    fn check_dsu(&self, platform: &Platform) -> Result<(), String> {
        let Some(khz) = self.dsu_khz else { return Ok(()) };
        let Some(dsu) = &platform.dsu else {
            return Err(format!(
                "dsu_khz: platform {} has no [dsu] (no DynamIQ Shared Unit); remove it",
                platform.name
            ));
        };
        if !dsu.opps.iter().any(|o| o[0] == khz) {
            let known: Vec<String> = dsu.opps.iter().map(|o| o[0].to_string()).collect();
            return Err(format!(
                "dsu_khz: {khz} kHz is not one of {}'s DSU OPPs ({})",
                platform.name,
                known.join(", ")
            ));
        }
        Ok(())
    }

    /// Checks the run against `platform`, `workload` and `placement` and plans it: every
    /// cluster has a governor (the one the placement needs, if it needs one), the idle states
    /// and the switcher exist and fit the run, start temperatures are sane, some CPU is online,
    /// every task may run somewhere and its instruction mix is known to every core type it may
    /// meet, and the calibration CPU exists.
    pub fn check_for(
        &self,
        platform: &Platform,
        workload: &Workload,
        placement: &dyn Placement,
    ) -> Result<RunPlan, String> {
        self.check_governors(platform, placement)?;
        self.check_dsu(platform)?;
        if self.cpuidle == CpuIdle::ClusterOff && platform.clusters.iter().all(|c| c.cluster_off_us().is_none()) {
            return Err(format!(
                "cpuidle cluster-off: platform {} has no cluster power-down state (its cpuidle has WFI only); use wfi",
                platform.name
            ));
        }
        let switcher = Switcher::new(platform, self.switching)?;
        if let Some(sw) = &switcher {
            check_switcher_config(sw, self, placement)?;
        }
        let ncpus = platform.ncpus();
        // Logical CPU i runs on core i at start (platform CPU numbers).
        let cluster_of: Vec<usize> = (0..ncpus)
            .map(|cpu| platform.clusters.iter().position(|c| c.cpus.contains(&cpu)).expect("validated"))
            .collect();
        let online: Vec<bool> = (0..ncpus)
            .map(|cpu| {
                !self.offline_clusters.contains(&cluster_of[cpu])
                    && switcher.as_ref().is_none_or(|sw| sw.online_at_boot(cpu))
            })
            .collect();
        if !self.start_temp_c.is_empty()
            && (self.start_temp_c.len() != platform.clusters.len()
                || self.start_temp_c.iter().any(|t| !t.is_finite() || *t < -50.0 || *t > 150.0))
        {
            return Err(format!(
                "start temperatures: give one per cluster ({}), each within -50..=150 °C",
                platform.clusters.len()
            ));
        }
        if !online.iter().any(|&o| o) {
            return Err("every cluster is offline; keep at least one cluster online".into());
        }
        let user_cpus =
            CpuMask::of((0..ncpus).filter(|&c| online[c] && self.cluster.is_none_or(|k| cluster_of[c] == k)));
        let user_tasks = workload.tasks.len();
        check_irqs(platform, workload)?;
        let rcuo = rcuo_kthreads(platform, &self.kernel.rcu);
        let kthreads = kthread_tasks(platform, &self.kernel, &online);
        let tasks: Vec<Task> =
            workload.tasks.iter().chain(&self.kernel_threads).chain(&rcuo).chain(&kthreads).cloned().collect();
        let (mut allowed, mut threads) = (Vec::new(), Vec::new());
        for (ti, task) in tasks.iter().enumerate() {
            let mask = allowed_cpus(task, ti >= user_tasks, &online, &cluster_of, self.cluster, user_cpus)?;
            check_code_classes(platform, task)?;
            // `threads=cpus`: one thread per CPU the task may use (a program that starts as many
            // workers as it sees CPUs)
            threads.push(task.threads.for_allowed_cpus(mask.count()));
            allowed.push(mask);
        }
        let user_threads: u32 = threads[..user_tasks].iter().sum();
        if user_threads == 0 {
            return Err("the workload has no threads".into());
        }
        let kernel_threads: u32 = threads[user_tasks..].iter().sum();
        if kernel_threads > FIRST_USER_TID - FIRST_KERNEL_TID {
            return Err(format!("{kernel_threads} kernel threads; at most {}", FIRST_USER_TID - FIRST_KERNEL_TID));
        }
        let clusters_online = (0..platform.clusters.len())
            .map(|c| !self.offline_clusters.contains(&c) && switcher.as_ref().is_none_or(|sw| sw.first == c))
            .collect();
        let reference_cluster = reference_cluster(platform, workload, &cluster_of)?;
        Ok(RunPlan {
            switcher,
            online,
            cluster_of,
            clusters_online,
            user_cpus,
            tasks,
            user_tasks,
            allowed,
            threads,
            reference_cluster,
        })
    }

    /// One governor per cluster, and the one the placement needs on every online cluster.
    fn check_governors(&self, platform: &Platform, placement: &dyn Placement) -> Result<(), String> {
        let nclusters = platform.clusters.len();
        if self.governors.len() != nclusters {
            return Err(format!("{} governors given for {} policies", self.governors.len(), nclusters));
        }
        if let Some(needed) = placement.required_governor() {
            let online = |c: &usize| !self.offline_clusters.contains(c);
            if let Some(c) = (0..nclusters).filter(online).find(|&c| self.governors[c].name != needed) {
                return Err(format!(
                    "scheduler '{}' needs the {needed} governor on every cpufreq policy (the kernel runs it only \
                     then); cluster '{}' has '{}': choose governor {needed}",
                    placement.name(),
                    platform.clusters[c].name,
                    self.governors[c].name
                ));
            }
        }
        Ok(())
    }
}

/// The cluster periodic phases' reference work is measured on: the workload's calibration
/// CPU's, or the biggest core type's (at its top OPP, idle memory, no snoop penalty).
fn reference_cluster(platform: &Platform, workload: &Workload, cluster_of: &[usize]) -> Result<usize, String> {
    let ncpus = platform.ncpus();
    match workload.reference_cpu {
        Some(cpu) if cpu >= ncpus => Err(format!(
            "workload '{}': calibration CPU{cpu} is not on platform {} (cpu0-{})",
            workload.name,
            platform.name,
            ncpus - 1
        )),
        Some(cpu) => Ok(cluster_of[cpu]),
        None => Ok((0..platform.clusters.len()).max_by_key(|&c| platform.cpu_capacity(c)).unwrap_or(0)),
    }
}

/// A phase that declares its instruction mix needs every core type it may meet (a switcher or
/// a migration may move it to any cluster) to describe those classes (`model::code_class`).
fn check_code_classes(platform: &Platform, task: &Task) -> Result<(), String> {
    for (pi, phase) in task.phases.iter().enumerate() {
        let Some(mix) = &phase.mem.mix else { continue };
        for cluster in 0..platform.clusters.len() {
            let core = platform.core_type_of(cluster);
            let classes = core.code_classes.as_ref().ok_or_else(|| {
                format!(
                    "task '{}' phase {pi} declares an instruction mix, but core type '{}' of platform {} has no \
                     code_classes; give it one or use cpi",
                    task.name, core.name, platform.name
                )
            })?;
            crate::model::code_class::cpi(classes, mix).map_err(|e| {
                format!(
                    "task '{}' phase {pi} on core type '{}' of platform {}: {e}",
                    task.name, core.name, platform.name
                )
            })?;
        }
    }
    Ok(())
}

/// The CPUs `task` may run on: its affinity (`None`: every CPU), within `cluster` for the
/// workload's tasks (`kernel` false), online ones only; its phases' CPU sets checked too.
fn allowed_cpus(
    task: &Task,
    kernel: bool,
    online: &[bool],
    cluster_of: &[usize],
    cluster: Option<usize>,
    user_cpus: CpuMask,
) -> Result<CpuMask, String> {
    let ncpus = online.len();
    check_phase_affinity(task, ncpus, user_cpus)?;
    let mut allowed = match &task.affinity {
        Some(a) => {
            if let Some(bad) = a.iter().find(|&&c| c >= ncpus) {
                return Err(format!(
                    "task '{}': affinity names cpu{bad}, the platform has cpu0-{}",
                    task.name,
                    ncpus - 1
                ));
            }
            CpuMask::of(a.iter().copied())
        }
        None => CpuMask::of(0..ncpus),
    };
    if let (Some(c), false) = (cluster, kernel) {
        allowed.retain(|cpu| cluster_of[cpu] == c);
    }
    allowed.retain(|cpu| online[cpu]);
    if allowed.is_empty() {
        return Err(format!(
            "task '{}' has no online CPU it may run on (check affinity, --cluster and --offline)",
            task.name
        ));
    }
    Ok(allowed)
}

/// A phase's allowed CPUs (`PhaseKind::SetSched`) must exist and leave one the run may use.
fn check_phase_affinity(task: &Task, ncpus: usize, user_cpus: CpuMask) -> Result<(), String> {
    for phase in &task.phases {
        let PhaseKind::SetSched(SchedAttr { cpus: Some(cpus), .. }) = &phase.kind else { continue };
        if let Some(bad) = cpus.iter().find(|&&c| c >= ncpus) {
            return Err(format!(
                "task '{}': a phase's cpus name cpu{bad}, the platform has cpu0-{}",
                task.name,
                ncpus - 1
            ));
        }
        if !CpuMask::of(cpus.iter().copied()).intersects(user_cpus) {
            return Err(format!(
                "task '{}': a phase's cpus {cpus:?} has no online CPU it may run on (check --cluster and --offline)",
                task.name
            ));
        }
    }
    Ok(())
}

/// What a switcher cannot run with: hard affinity to a cluster or hotplugged clusters (the
/// switcher owns which cores are online) and a placement that reads the CPUs' asymmetry (the
/// OS sees one kind of logical CPU).
fn check_switcher_config(sw: &Switcher, config: &SimConfig, placement: &dyn Placement) -> Result<(), String> {
    let mode = sw.mode.name();
    if config.cluster.is_some() || !config.offline_clusters.is_empty() {
        return Err(format!(
            "switching mode {mode}: the switcher decides which cluster runs; drop --cluster and --offline (limit the \
             frequency instead: the virtual OPPs above the LITTLE range run on big cores)"
        ));
    }
    if placement.reads_asymmetry() {
        return Err(format!(
            "switching mode {mode} with scheduler {}: under a switcher the OS sees identical logical CPUs; use \
             pinned or smp",
            placement.name()
        ));
    }
    Ok(())
}

/// The workload's interrupt streams drive devices the platform's kernel has, and a semaphore a
/// stream posts is one some phase waits on (`sem_wait`).
fn check_irqs(platform: &Platform, workload: &Workload) -> Result<(), String> {
    for s in &workload.irqs {
        let Some(kernel) = &platform.kernel else {
            return Err(format!(
                "workload {} drives device '{}' but platform {} describes no kernel devices ([kernel]); run it on a \
                 platform that has them (e.g. tc2)",
                workload.name, s.device, platform.name
            ));
        };
        if kernel.device(&s.device).is_none() {
            let known: Vec<&str> = kernel.devices.iter().map(|d| d.name.as_str()).collect();
            return Err(format!(
                "workload {}: irqs device '{}' is not one of platform {}'s devices ({})",
                workload.name,
                s.device,
                platform.name,
                known.join(", ")
            ));
        }
        if let Some(sem) = &s.posts {
            let waited = workload
                .tasks
                .iter()
                .flat_map(|t| &t.phases)
                .any(|p| matches!(&p.kind, PhaseKind::Sync { op: SyncOp::SemWait, object } if object == sem));
            if !waited {
                return Err(format!(
                    "workload {}: irqs device '{}' posts '{sem}', which no phase waits on; add a phase with \
                     sem_wait = \"{sem}\"",
                    workload.name, s.device
                ));
            }
        }
    }
    Ok(())
}
