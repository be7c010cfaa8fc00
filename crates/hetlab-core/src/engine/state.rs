//! The engine's state, one struct per thing the hardware or the kernel has: threads (their
//! progress, speed and counters), logical CPUs (their accounting and counters), cpufreq
//! policies (governor and DVFS requests) and hardware clusters (clock, power, temperature, CCI
//! port). The scheduler's share of threads and CPUs lives in `crate::sched`.

use crate::counters::CorePmu;
use crate::governor::Governor;
use crate::model::cache::MissRatios;
use crate::model::cci::CciPort;
use crate::model::energy::ClusterPower;
use crate::model::thermal::ThermalNode;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum ThreadState {
    Runnable,
    Running,
    Sleeping {
        wake_us: f64,
    },
    /// Waiting on a named object (`engine::sync`), or a forked thread not started yet.
    Suspended,
    Done,
}

/// Core PMU counts as the model accumulates them (fractional until read).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Pmu {
    pub cycles: f64,
    pub inst: f64,
    pub l2_refill: f64,
    pub bus_access: f64,
    pub mem_access: f64,
}

/// Nearest integer of a non-negative counter value (inlined; `f64::round` is a libm call;
/// through i64 because counts stay below 2^63 and the signed conversion is one instruction).
#[inline]
pub(super) fn count(x: f64) -> u64 {
    (x + 0.5) as i64 as u64
}

impl Pmu {
    pub fn to_counts(self) -> CorePmu {
        CorePmu {
            cpu_cycles: count(self.cycles),
            inst_retired: count(self.inst),
            l2d_cache_refill: count(self.l2_refill),
            bus_access: count(self.bus_access),
            mem_access: count(self.mem_access),
        }
    }
}

/// Where a thread is in its task's phases.
#[derive(Debug, Clone, Copy)]
pub(super) struct Progress {
    pub phase: usize,
    pub repeats_left: u32,
    /// Instructions left in the current job.
    pub work_left: f64,
    /// Time the kernel took from this thread (OS jitter, idle exit) not yet paid back, µs.
    pub stolen_us: f64,
    /// Periodic phases: jobs left and the next release time.
    pub jobs_left: u64,
    pub next_release_us: f64,
    /// A `runtime` phase: when its wall-clock time is up, µs.
    pub runtime_end_us: Option<f64>,
}

/// How fast a running thread goes and what it does to the memory system, from the last
/// re-solution of the model.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Speed {
    pub instr_per_us: f64,
    pub stall_share: f64,
    pub refills_per_instr: f64,
    pub bus_per_instr: f64,
    pub refs_per_instr: f64,
    /// Lines it takes from other cores' caches per instruction (`model::coherence`).
    pub peer_lines_per_instr: f64,
    /// Miss ratios for (phase, L2 bytes available), kept while both stay the same.
    pub cached_misses: Option<(usize, f64, MissRatios)>,
}

pub(super) struct Thread {
    pub tid: u32,
    /// Index into the engine's tasks (the workload's, then kernel threads').
    pub task: usize,
    pub kernel: bool,
    pub state: ThreadState,
    /// Placed at least once (later placements are wake-ups, the first a fork).
    pub placed: bool,
    pub progress: Progress,
    pub speed: Speed,
    pub pmu: Pmu,
    /// Lines taken from other cores' caches.
    pub peer_lines: f64,
    pub cpu_time_us: f64,
    /// Its CPU time when it joined its current task group (the rest is the group's).
    pub cpu_time_in_group_from_us: f64,
    /// Its CPU time on each logical CPU, µs.
    pub cpu_time_on_us: Vec<f64>,
    pub finish_us: f64,
    pub migrations: u64,
    /// Sequence number of its armed sleep timer (see `timers`).
    pub timer_seq: u32,
}

/// A logical CPU: its accounting since the governor's last sample and its counters.
pub(super) struct Cpu {
    pub idle_since_sample_us: f64,
    pub was_idle: bool,
    pub busy_us: f64,
    /// Idle exits.
    pub wakeups: u64,
    pub pmu: Pmu,
    pub pmu_at_sample: CorePmu,
    /// Kernel work charged at once on this idle CPU and not over yet (`charge_kernel_time`).
    pub kernel_burst: Option<KernelBurst>,
    /// Since when cpuidle has held this CPU's core powered down (its own state, not the
    /// cluster's); `None`: the core is powered.
    pub core_off_since_us: Option<f64>,
    /// When this CPU's current idle period began, while cpuidle may power it down.
    pub idle_since_us: Option<f64>,
    /// The distance to the next known wake-up when the current idle period began, µs (the
    /// menu governor's `next_timer_us`, which picks the correction factor's bucket).
    pub idle_next_timer_us: f64,
    /// Its recent idle periods, for the menu governor's prediction.
    pub idle_history: crate::model::idle::IdleHistory,
    /// The menu governor's correction factors of this CPU.
    pub menu: crate::kernel::menu::CorrectionFactors,
}

/// Kernel work charged in advance on an idle CPU: when it ends, and what each µs of it was
/// charged, so a thread switched in before the end can take the rest back.
#[derive(Debug, Clone, Copy)]
pub(super) struct KernelBurst {
    pub until_us: f64,
    pub khz: u32,
    pub mw: f64,
}

/// Threads that ran since a policy's previous sample, with their counters at that sample:
/// the per-task PMC reads cost what ran, not how many threads exist.
#[derive(Debug, Clone, Default)]
pub(super) struct RanSince {
    pub member: Vec<bool>,
    pub threads: Vec<usize>,
    pub pmu_at_sample: Vec<CorePmu>,
}

impl RanSince {
    pub fn new(nthreads: usize) -> RanSince {
        RanSince {
            member: vec![false; nthreads],
            threads: Vec::new(),
            pmu_at_sample: vec![CorePmu::default(); nthreads],
        }
    }

    /// `thread` starts running with counters `pmu` (unchanged since the sample if it had not
    /// run; read only when it joins the set).
    pub fn note(&mut self, thread: usize, pmu: impl FnOnce() -> CorePmu) {
        if !self.member[thread] {
            self.member[thread] = true;
            self.threads.push(thread);
            self.pmu_at_sample[thread] = pmu();
        }
    }
}

/// A cpufreq policy: a governor choosing one frequency for its CPUs.
pub(super) struct Policy {
    /// The hardware cluster its CPUs run on now (the clock it sets; a switcher changes it).
    pub cluster: usize,
    /// Its logical CPUs (`related_cpus`).
    pub cpus: Vec<usize>,
    /// How many of them run something now.
    pub busy_cpus: u32,
    pub governor: Box<dyn Governor>,
    pub governor_name: String,
    /// The OPP table its governor sees: its cluster's, or the switcher's virtual table.
    pub opps_khz: Vec<u32>,
    /// The frequency last set, in `opps_khz` terms (`policy->cur`).
    pub request_khz: u32,
    /// A requested frequency and when the transition completes.
    pub pending: Option<(f64, u32)>,
    pub next_sample_us: f64,
    pub last_sample_us: f64,
    pub ran: RanSince,
    /// Every CCI port's counts and the CCI cycle counter at the previous sample.
    pub ports_at_sample: Vec<(u64, u64)>,
    pub cci_cycles_at_sample: u64,
}

/// A hardware cluster: its clock, power state, temperature and CCI port.
pub(super) struct ClusterHw {
    pub online: bool,
    /// Online and not in cluster power-down.
    pub powered: bool,
    pub cur_khz: u32,
    /// Index of `cur_khz` in the cluster's OPP table.
    pub cur_opp: usize,
    pub power: ClusterPower,
    pub thermal: ThermalNode,
    pub thermal_cap_khz: u32,
    pub min_thermal_cap_khz: u32,
    /// Its CCI slave port; `None` on a platform without a CCI.
    pub port: Option<CciPort>,
    /// Time at each OPP while online, and the clock integrated over it.
    pub residency_us: Vec<f64>,
    pub khz_us: f64,
    /// Time not online (no residency counted), µs.
    pub offline_us: f64,
    pub transitions: u64,
    /// Cluster power-down/up cycles (cpuidle C1).
    pub power_downs: u64,
    /// Time spent powered down before the last power-up, and when the current power-down
    /// began, µs.
    pub off_us: f64,
    pub off_since_us: f64,
}
