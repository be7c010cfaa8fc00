//! Workloads: tasks made of threads that run phases. A phase is a fixed amount of work
//! (`instructions`), a sleep, a periodic run/sleep pattern (rt-app style), or one of rt-app's
//! `suspend`/`resume` events between threads; work phases carry the memory profile that drives
//! the cache/DRAM/snoop model.
//!
//! This file holds the model (tasks, phases, memory profiles, scheduling attributes, task
//! groups) and its stated limits. Sources:
//! - `file.rs`: TOML files (format there, examples in data/workloads/), `Workload::from_toml`;
//! - `generators.rs`: specs `name:key=value,...` (`Workload::from_spec`): the generators
//!   `ccbench`, `periodic`, `cpu-bound`, and the built-in TOML workloads with their parameters;
//! - rt-app JSON files: the `rtapp` module.

pub(crate) mod file;
mod generators;
pub mod spread;

use serde::Deserialize;

use crate::isa::Mix;
pub use spread::Spread;

pub use crate::builtin::BUILTIN_WORKLOADS;

/// How a phase walks its working set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Random,
    Sequential,
    Strided,
}

/// The order in which lines are revisited: `uniform` random reuse (general code) or `cyclic`
/// laps over the whole set (a pointer chase such as ccbench).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    Uniform,
    Cyclic,
}

/// Most access components one phase may have (a step approximation of a miss-ratio curve).
pub const MAX_ACCESSES: usize = 4;

/// One component of a phase's data references: a share of them walking one working set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Access {
    /// Share of the phase's references, 0..=1; the components' shares sum to 1.
    pub fraction: f64,
    pub working_set_bytes: u64,
    pub pattern: Pattern,
    /// Distance between consecutive accesses, bytes (4 for sequential 32-bit words).
    pub stride_bytes: u64,
    pub order: Order,
    /// A random component that finishes each page before moving to the next (ccbench's random
    /// mode: random within a 4 KB page, pages in order): it changes page once per page's worth
    /// of references, not at every reference (what the TLB sees, `model::tlb`).
    pub page_runs: bool,
}

/// What a phase does to the memory hierarchy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemProfile {
    /// Cycles per instruction on the reference core with every access hitting L1.
    pub cpi: f64,
    /// Data memory references per instruction.
    pub refs_per_instr: f64,
    /// The references' components, smallest working set first; `n_accesses` are used.
    pub accesses: [Access; MAX_ACCESSES],
    pub n_accesses: usize,
    /// Each load depends on the previous one (pointer chase): no overlap of latencies.
    pub dependent_loads: bool,
    /// Share of refills that later cost a writeback (dirty lines).
    pub write_fraction: f64,
    /// The instruction mix (`crate::isa`, timed by `model::code_class`); `None`: `cpi` x the core's `cpi_factor`.
    pub mix: Option<Mix>,
    /// Share of the references that read-modify-write data shared by the task's threads: a
    /// line last written by another thread moves to this core (`model::coherence`).
    pub shared_rmw_fraction: f64,
    /// Share of the references that read a line another running thread of the task wrote
    /// last (data handed from producer to consumer): each brings that line from the writer's
    /// core; the reads are independent, so they overlap as misses do (`model::coherence`).
    pub peer_written_fraction: f64,
    /// The working set is one copy shared by the task's threads (read-only tables, a shared
    /// lattice): each cluster caches it once, not once per thread.
    pub shared_working_set: bool,
}

impl MemProfile {
    /// A profile with a single access component.
    pub fn single(cpi: f64, refs_per_instr: f64, access: Access, dependent_loads: bool, write_fraction: f64) -> Self {
        let mut accesses = [access; MAX_ACCESSES];
        accesses[0].fraction = 1.0;
        MemProfile {
            cpi,
            refs_per_instr,
            accesses,
            n_accesses: 1,
            dependent_loads,
            write_fraction,
            mix: None,
            shared_rmw_fraction: 0.0,
            peer_written_fraction: 0.0,
            shared_working_set: false,
        }
    }

    pub fn accesses(&self) -> &[Access] {
        &self.accesses[..self.n_accesses]
    }

    /// Total working set of all components, bytes.
    pub fn working_set_bytes(&self) -> u64 {
        self.accesses().iter().map(|a| a.working_set_bytes).sum()
    }
}

impl Access {
    pub fn new(working_set_bytes: u64, pattern: Pattern, stride_bytes: u64, order: Order) -> Self {
        Access { fraction: 1.0, working_set_bytes, pattern, stride_bytes, order, page_runs: false }
    }

    /// The component finishes each page before the next (see `page_runs`).
    pub fn in_page_runs(self) -> Self {
        Access { page_runs: true, ..self }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum PhaseKind {
    /// A fixed number of instructions.
    Compute {
        instructions: f64,
    },
    Sleep {
        duration_us: u64,
    },
    /// `run_us` of reference work (the reference core at its top OPP) released every
    /// `period_us`, `count` times.
    Periodic {
        run_us: f64,
        period_us: u64,
        count: u64,
    },
    /// A display's frames: `frames` jobs of `instructions` each, each started at the next vsync
    /// (a multiple of `vsync_us` on the run's clock). A frame that ends after a vsync waits for
    /// the one after it: the compositor is woken for the next refresh, never for one already past
    /// (Android's SurfaceFlinger on its vsync events).
    Frames {
        instructions: f64,
        frames: u64,
        vsync_us: f64,
    },
    /// Sleep until another thread resumes `event` (rt-app's `suspend`: a condition wait).
    Suspend {
        event: String,
    },
    /// Wake every thread suspended on `event` and go on at once (rt-app's `resume`: a
    /// broadcast; with nobody suspended it is lost, as a condition signal is).
    Resume {
        event: String,
    },
    /// Fork-join: `total_instructions` of work shared by all the task's threads, then a
    /// barrier (every thread waits for the last one; `engine::work::parallel`).
    Parallel {
        total_instructions: f64,
        allocation: Allocation,
    },
    /// Busy for `duration_us` of wall-clock time whatever the core's speed (rt-app `runtime`,
    /// which checks the clock between bursts of calibrated work): time preempted counts too.
    Runtime {
        duration_us: u64,
    },
    /// Sleep to the timer's next expiry (rt-app `timer`). Each use moves the expiry `period_us`
    /// on, counted from `origin_us` (the thread's start: rt-app's t_first, the run's start plus
    /// the task's delay); after an overrun a `relative` timer restarts from now, an absolute one
    /// keeps its grid. `per_thread`: one timer per thread (a ref starting with "unique"), else
    /// one per name, shared by every thread that uses it, as in rt-app.
    Timer {
        timer: String,
        period_us: u64,
        relative: bool,
        per_thread: bool,
        origin_us: u64,
    },
    /// An operation on a named object shared between threads (`engine::work::sync`).
    Sync {
        op: SyncOp,
        object: String,
    },
    /// Give the CPU to the next waiting thread, if one waits (`sched_yield`).
    Yield,
    /// Set the thread's scheduling attributes, as rt-app does at each loop of a phase.
    SetSched(SchedAttr),
    /// Start the next not yet started thread of the task named `task` (rt-app `fork`; that
    /// task is `Task::forked`).
    Fork {
        task: String,
    },
}

/// The scheduling attributes a `PhaseKind::SetSched` phase sets: the allowed CPUs
/// (`sched_setaffinity`; `None`: every CPU; a running thread on a CPU no longer allowed moves
/// at once) and, each only if given, the class (`sched_setscheduler`), the nice value
/// (`setpriority`), the utilisation clamps (`sched_setattr`'s util_min/util_max) and the task
/// group (its normalised path; the thread writes its tid to the group's `tasks`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SchedAttr {
    pub cpus: Option<Vec<usize>>,
    pub class: Option<SchedClass>,
    pub nice: Option<i32>,
    pub util_min: Option<u32>,
    pub util_max: Option<u32>,
    pub taskgroup: Option<String>,
}

/// What a `PhaseKind::Sync` phase does to its object (rt-app's resources).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SyncOp {
    /// Take the mutex, or wait for it (`pthread_mutex_lock`).
    Lock,
    /// Release the mutex; the longest waiter gets it.
    Unlock,
    /// Wake the longest waiter on the condition, if any (`pthread_cond_signal`; a condition is
    /// the object `suspend` and `resume` use too).
    Signal,
    /// Count the semaphore up, or wake its longest waiter (`sem_post`).
    SemPost,
    /// Count the semaphore down, or wait until it is positive (`sem_wait`).
    SemWait,
    /// Wait until `parties` threads have arrived, then all go on.
    Barrier { parties: u32 },
}

/// How a parallel phase splits its work among the task's threads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Allocation {
    /// Each thread an equal share, fixed before the run: the slowest thread sets the time.
    Static,
    /// A shared pool of chunks; a thread that finishes one takes the next (an atomic
    /// update of the pool's counter, whose cache line moves to the grabbing core).
    Dynamic { chunk_instructions: f64 },
}

/// `call_rcu()` from a work phase (`kernel::rcu`): `per_s` callbacks per second of the phase's
/// work as the reference core does it at its top OPP, each costing `callback_us` of such work
/// when invoked; `lazy`: only frees memory (kfree_rcu), which RCU_FAST_NO_HZ may defer longer.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RcuCalls {
    pub per_s: f64,
    pub callback_us: f64,
    pub lazy: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    pub kind: PhaseKind,
    pub mem: MemProfile,
    /// RCU callbacks the phase queues (none by default).
    pub rcu: RcuCalls,
    /// A name recorded with the time each thread enters this phase (`RunResult::marks`), to
    /// measure latencies across threads (e.g. a render chain).
    pub mark: Option<String>,
    /// How its amount varies from one entry to the next (none by default).
    pub spread: Spread,
}

/// The memory profile of a phase that gives none: `cpi`, references per instruction and one
/// random working set of this many bytes (a small program's hot data).
const DEFAULT_CPI: f64 = 1.0;
const DEFAULT_REFS_PER_INSTR: f64 = 0.25;
const DEFAULT_WORKING_SET_BYTES: u64 = 16384;

impl Phase {
    /// A phase of `kind` with the default memory profile.
    pub fn new(kind: PhaseKind) -> Phase {
        let access = access_from("", None, None, None, None).expect("the defaults are valid");
        let mem = MemProfile::single(DEFAULT_CPI, DEFAULT_REFS_PER_INSTR, access, false, 0.0);
        Phase { kind, mem, rcu: RcuCalls::default(), mark: None, spread: Spread::NONE }
    }
}

/// A thread's scheduling class (`sched_setscheduler`'s policy): CFS (SCHED_OTHER, weighted by
/// its nice value; SCHED_BATCH, the same without wake-up preemption; SCHED_IDLE, at the lowest
/// weight), or real-time (`sched::rt`) with its `sched_priority`, 1..=99.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchedClass {
    #[default]
    Normal,
    /// SCHED_BATCH: a CFS task at its nice weight that never preempts the running task when it
    /// wakes (`check_preempt_wakeup`, `sched::cfs`): its turn comes at a tick.
    Batch,
    /// SCHED_IDLE: a CFS task of weight `WEIGHT_IDLEPRIO` whatever its nice value, which never
    /// preempts a normal task at wake-up and is preempted by any (`sched::cfs`).
    Idle,
    Fifo(u8),
    RoundRobin(u8),
    /// SCHED_DEADLINE (`sched::deadline`): a constant bandwidth server scheduled by earliest
    /// deadline first, above the real-time class.
    Deadline(DlParams),
}

/// A SCHED_DEADLINE task's `sched_attr`: it may run `runtime_ns` within `deadline_ns` of the
/// start of each `period_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DlParams {
    pub runtime_ns: u64,
    pub deadline_ns: u64,
    pub period_ns: u64,
}

/// `sysctl_sched_dl_period_min` and `_max` (kernel/sched/deadline.c, 5.10.y): 100 µs and 2^22 µs
/// (about 4.2 s).
pub const DL_PERIOD_MIN_US: u64 = 100;
pub const DL_PERIOD_MAX_US: u64 = 1 << 22;

impl DlParams {
    /// The attributes from µs (`deadline_us` defaults to the period, `period_us` to the
    /// deadline), checked as `__checkparam_dl` checks them; `at` names them in errors.
    pub fn from_us(
        at: &str,
        runtime_us: u64,
        deadline_us: Option<u64>,
        period_us: Option<u64>,
    ) -> Result<DlParams, String> {
        let Some(deadline_us) = deadline_us.or(period_us) else {
            return Err(format!("{at}: SCHED_DEADLINE needs its deadline or period (µs)"));
        };
        let period_us = period_us.unwrap_or(deadline_us);
        // `DL_SCALE`: the kernel truncates 10 bits of runtime, so it must be at least 1024 ns
        if runtime_us < 2 {
            return Err(format!("{at}: a SCHED_DEADLINE runtime of {runtime_us} µs is below the kernel's 1.024 µs"));
        }
        if !(runtime_us <= deadline_us && deadline_us <= period_us) {
            return Err(format!(
                "{at}: SCHED_DEADLINE needs runtime <= deadline <= period, got {runtime_us} / {deadline_us} / \
                 {period_us} µs"
            ));
        }
        if !(DL_PERIOD_MIN_US..=DL_PERIOD_MAX_US).contains(&period_us) {
            return Err(format!(
                "{at}: a SCHED_DEADLINE period of {period_us} µs is outside {DL_PERIOD_MIN_US}..={DL_PERIOD_MAX_US} µs \
                 (sched_dl_period_min_us/max_us)"
            ));
        }
        let ns = |us: u64| us * 1000;
        Ok(DlParams { runtime_ns: ns(runtime_us), deadline_ns: ns(deadline_us), period_ns: ns(period_us) })
    }
}

impl SchedClass {
    /// `MAX_RT_PRIO - 1`: the highest `sched_priority`.
    pub const MAX_RT_PRIORITY: u8 = 99;

    /// The class of policy `name` (`normal`/`other`, `batch`, `idle`, `fifo`, `rr`, any case, an optional
    /// `SCHED_` prefix) at `priority` (its `sched_priority`; a CFS class has none, so callers
    /// refuse one given with it: `Workload::from_toml`); `at` names it in errors.
    pub fn parse(at: &str, name: &str, priority: Option<i64>) -> Result<SchedClass, String> {
        let upper = name.to_ascii_uppercase();
        let rt = |make: fn(u8) -> SchedClass| match priority {
            Some(p @ 1..=99) => Ok(make(p as u8)),
            Some(p) => Err(format!("{at}: a real-time priority is within 1..=99, got {p}")),
            None => Err(format!("{at}: a real-time policy needs its priority (1..=99)")),
        };
        match upper.strip_prefix("SCHED_").unwrap_or(&upper) {
            "OTHER" | "NORMAL" => Ok(SchedClass::Normal),
            "BATCH" => Ok(SchedClass::Batch),
            "IDLE" => Ok(SchedClass::Idle),
            "FIFO" => rt(SchedClass::Fifo),
            "RR" => rt(SchedClass::RoundRobin),
            "DEADLINE" => Err(format!("{at}: SCHED_DEADLINE takes its runtime, deadline and period, not a priority")),
            _ => Err(format!(
                "{at}: unknown policy '{name}'; give SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR or \
                 SCHED_DEADLINE"
            )),
        }
    }

    /// Whether policy `name` (as [`parse`](Self::parse) reads it) is SCHED_DEADLINE.
    pub fn names_deadline(name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        upper.strip_prefix("SCHED_").unwrap_or(&upper) == "DEADLINE"
    }

    /// A SCHED_DEADLINE task's attributes.
    pub fn dl(self) -> Option<DlParams> {
        match self {
            SchedClass::Deadline(p) => Some(p),
            _ => None,
        }
    }

    /// The `sched_priority` of a real-time class.
    pub fn rt_priority(self) -> Option<u8> {
        match self {
            SchedClass::Normal | SchedClass::Batch | SchedClass::Idle | SchedClass::Deadline(_) => None,
            SchedClass::Fifo(p) | SchedClass::RoundRobin(p) => Some(p),
        }
    }

    /// A CFS policy (`fair_policy`: SCHED_OTHER, SCHED_BATCH or SCHED_IDLE).
    pub fn is_fair(self) -> bool {
        matches!(self, SchedClass::Normal | SchedClass::Batch | SchedClass::Idle)
    }

    /// The kernel's `prio` as the scheduler's tracepoints print it: 120 + nice for CFS (SCHED_BATCH
    /// and SCHED_IDLE too: the nice value stays the static priority), `MAX_RT_PRIO - 1 - sched_priority` for
    /// real time, -1 for SCHED_DEADLINE (`MAX_DL_PRIO - 1`).
    pub fn kernel_prio(self, nice: i32) -> i32 {
        match (self, self.rt_priority()) {
            (SchedClass::Deadline(_), _) => -1,
            (_, Some(p)) => i32::from(Self::MAX_RT_PRIORITY - p),
            (_, None) => 120 + nice,
        }
    }
}

/// `MIN_SHARES` (kernel/sched/sched.h): the least `cpu.shares` a task group may have.
pub const TASKGROUP_MIN_SHARES: u64 = 2;
/// `MAX_SHARES` (kernel/sched/sched.h): 1 << 18.
pub const TASKGROUP_MAX_SHARES: u64 = 1 << 18;
/// A new task group's `cpu.shares`: NICE_0_LOAD (`alloc_fair_sched_group`).
pub const TASKGROUP_DEFAULT_SHARES: u64 = 1024;
/// Most levels below the root a task group's path may have (hetlab's bound: a task's events walk
/// its groups).
pub const MAX_TASKGROUP_DEPTH: usize = 32;

/// A task group's path under the cgroup cpu controller, normalised as the path resolution of
/// `mkdir` and of the group's `tasks` file makes it (`//a/b/` is `/a/b`; `/` the root group).
/// `at` names the field in the error.
pub fn taskgroup_path(at: &str, path: &str) -> Result<String, String> {
    if !path.starts_with('/') {
        return Err(format!("{at}: taskgroup '{path}' must start with / (a cgroup path, e.g. /background)"));
    }
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    if let Some(bad) = parts.iter().find(|p| matches!(**p, "." | "..") || p.len() > 255 || p.contains(char::is_control))
    {
        return Err(format!(
            "{at}: taskgroup '{path}' has the component '{}'; give each group a plain name (not . or .., no control \
             characters, at most 255 bytes)",
            bad.escape_debug()
        ));
    }
    if parts.len() > MAX_TASKGROUP_DEPTH {
        return Err(format!("{at}: taskgroup '{path}' is {} levels deep; at most {MAX_TASKGROUP_DEPTH}", parts.len()));
    }
    Ok(format!("/{}", parts.join("/")))
}

/// A task group a workload declares, with its `cpu.shares` and its `cpu.uclamp.min` /
/// `cpu.uclamp.max` (a group only named by a task has the defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskGroupSpec {
    /// Normalised ([`taskgroup_path`]).
    pub path: String,
    pub shares: u64,
    /// `cpu.uclamp.min` / `cpu.uclamp.max` as capacities, 0..=1024 ([`capacity_from_percent`]);
    /// `None` where not written (the group's request stays `uclamp_none`).
    pub uclamp: UclampRequest,
}

/// `UCLAMP_PERCENT_SHIFT` (kernel/sched/core.c): `cpu.uclamp.*` keep two decimals.
const UCLAMP_PERCENT_SCALE: u64 = 100 * 100;

/// `capacity_from_percent` (kernel/sched/core.c, 5.10): a `cpu.uclamp.*` percentage, 0..=100
/// with at most two decimals, as a capacity rounded to the closest (`DIV_ROUND_CLOSEST_ULL`):
/// 20.5 % is 210, 30 % is 307. The kernel rounds a third decimal away; a TOML float cannot say
/// which decimal string was meant, so more than two is refused. `at` names the key.
pub fn capacity_from_percent(at: &str, percent: f64) -> Result<u32, String> {
    let hundredths = (percent * 100.0).round();
    if !(0.0..=100.0).contains(&percent) || (percent * 100.0 - hundredths).abs() > 1e-6 {
        return Err(format!(
            "{at} must be a percentage within 0..=100 with at most two decimals, got {}",
            shown(percent)
        ));
    }
    let capacity = (hundredths as u64 * u64::from(UTIL_CLAMP_SCALE) + UCLAMP_PERCENT_SCALE / 2) / UCLAMP_PERCENT_SCALE;
    Ok(capacity as u32)
}

/// The kernel's SCHED_CAPACITY_SCALE: the top of a utilisation clamp.
pub const UTIL_CLAMP_SCALE: u32 = 1024;

/// Utilisation clamps in effect, 0..=1024: a task's (`p->uclamp[]`), a task group's
/// (`tg->uclamp[]`) or a run queue's (`rq->uclamp[].value`); the scheduler and schedutil apply
/// them (`sched::uclamp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtilClamp {
    pub min: u32,
    pub max: u32,
}

impl Default for UtilClamp {
    /// No clamping (`uclamp_none`).
    fn default() -> Self {
        UtilClamp { min: 0, max: UTIL_CLAMP_SCALE }
    }
}

/// Utilisation clamps as asked (`p->uclamp_req[]`, `tg->uclamp_req[]`: rt-app's and the TOML's
/// `util_min`/`util_max`, `cpu.uclamp.*`), 0..=1024: `None` where nothing was asked (the
/// kernel's `user_defined` is false and the default of the task's class applies), so an
/// explicit 0 is told apart from none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UclampRequest {
    pub min: Option<u32>,
    pub max: Option<u32>,
}

impl UclampRequest {
    /// Checks the bounds as `uclamp_validate` does (the one not given at its default: 0, 1024);
    /// `at` names the task in the error.
    pub fn new(at: &str, min: Option<u32>, max: Option<u32>) -> Result<UclampRequest, String> {
        let (lo, hi) = (min.unwrap_or(0), max.unwrap_or(UTIL_CLAMP_SCALE));
        if lo > UTIL_CLAMP_SCALE || hi > UTIL_CLAMP_SCALE || lo > hi {
            return Err(format!("{at}: util_min {lo} and util_max {hi} must be within 0..=1024, min <= max"));
        }
        Ok(UclampRequest { min, max })
    }

    /// Something was asked (`sched_setattr` with SCHED_FLAG_UTIL_CLAMP, a `cpu.uclamp.*` write).
    pub fn is_set(self) -> bool {
        self.min.is_some() || self.max.is_some()
    }

    /// This request after another asks `min` and `max` (each kept where not given).
    pub fn then(self, min: Option<u32>, max: Option<u32>) -> UclampRequest {
        UclampRequest { min: min.or(self.min), max: max.or(self.max) }
    }
}

impl UtilClamp {
    pub fn is_default(self) -> bool {
        self == UtilClamp::default()
    }

    /// Two sets of clamps on one run queue: the larger of each (max-aggregation).
    pub fn max_aggregate(self, other: UtilClamp) -> UtilClamp {
        UtilClamp { min: self.min.max(other.min), max: self.max.max(other.max) }
    }

    /// `uclamp_task_util`: the task's own utilisation within its clamps.
    pub fn task_util(self, util: u64) -> u64 {
        util.clamp(u64::from(self.min), u64::from(self.max))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub name: String,
    pub threads: ThreadCount,
    pub nice: i32,
    /// Allowed CPUs; `None` = all.
    pub affinity: Option<Vec<usize>>,
    pub repeat: u32,
    pub phases: Vec<Phase>,
    /// Leading phases run once, before the repeats (rt-app's `delay`).
    pub prologue_phases: usize,
    /// Runs of phases repeated in place within each repeat (rt-app's phase `loop`), in order,
    /// not overlapping, none in the prologue.
    pub loops: Vec<PhaseLoop>,
    /// Its threads start at another task's `fork` phase, one per fork, not at the start.
    pub forked: bool,
    /// Where each phase comes from in an rt-app file (for its ftrace markers), if it does.
    pub rtapp: Option<RtappSteps>,
    /// Its threads' utilisation clamps as asked (`sched::uclamp`; rt-app's `util_min`/`util_max`).
    pub uclamp: UclampRequest,
    /// Its threads' class: CFS, or real-time with a priority.
    pub class: SchedClass,
    /// Its threads' task group from their start (normalised path); `None`: the root group.
    pub taskgroup: Option<String>,
    /// The run ends when this task's threads are done: the other threads are stopped there (a
    /// harness that stops the rest when the benchmark is done, as workload-automation
    /// force-stops a background music player).
    pub ends_run: bool,
    /// A CFS task's own slice, µs (`sched_attr.sched_runtime` on SCHED_OTHER/BATCH/IDLE: its
    /// EEVDF request, Linux 6.12+; `sched::eevdf`); `None`: the base slice.
    pub slice_us: Option<u32>,
}

impl Task {
    /// A task named `name` running `phases` once, with the defaults: one thread, nice 0, every
    /// CPU, SCHED_OTHER without clamps, in the root group, started with the run.
    pub fn new(name: impl Into<String>, phases: Vec<Phase>) -> Task {
        Task {
            name: name.into(),
            threads: ThreadCount::Fixed(1),
            nice: 0,
            affinity: None,
            repeat: 1,
            phases,
            prologue_phases: 0,
            loops: Vec::new(),
            forked: false,
            rtapp: None,
            uclamp: UclampRequest::default(),
            class: SchedClass::default(),
            taskgroup: None,
            ends_run: false,
            slice_us: None,
        }
    }
}

/// How many threads a task starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadCount {
    /// This many.
    Fixed(u32),
    /// One per CPU the task may use, known when a run starts (`threads=cpus`: a fork-join
    /// program that starts as many workers as it sees CPUs, `Workload::with_parallel`).
    PerAllowedCpu,
}

impl ThreadCount {
    /// The threads started by a task that may use `allowed_cpus` CPUs.
    pub fn for_allowed_cpus(self, allowed_cpus: usize) -> u32 {
        match self {
            ThreadCount::Fixed(n) => n,
            ThreadCount::PerAllowedCpu => allowed_cpus as u32,
        }
    }
}

/// Phases `start..end` of a task run `count` times in a row before the task goes on
/// (`u32::MAX`: for as long as the run lasts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseLoop {
    pub start: usize,
    pub end: usize,
    pub count: u32,
}

/// Where each phase of a task comes from in an rt-app file, for the markers rt-app writes to
/// ftrace (`rtapp_loop`, `rtapp_event`, `rtapp_stats`; made by `rtapp::from_rtapp_json`, written by
/// `engine::work::rtapp_markers`) and the log rows of its loops.
#[derive(Debug, Clone, PartialEq)]
pub struct RtappSteps {
    /// One per phase of the task, its delay included.
    pub steps: Vec<RtappStep>,
    /// The marker categories the file's `global.ftrace` asks for.
    pub ftrace: RtappFtrace,
    /// `global.cumulative_slack`: a loop's slack is the sum over its timers, not the last one's.
    pub cumulative_slack: bool,
    /// rt-app's ns per loop of its calibrated work, if the file gives it (`global.calibration`
    /// as a number); else the model's on the calibration CPU.
    pub ns_per_loop: Option<u32>,
}

/// rt-app's ftrace categories (`ftrace_setup`, src/rt-app_utils.c): which markers a thread writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RtappFtrace {
    /// `rtapp_main`.
    pub main: bool,
    /// `rtapp_task` (and the main process's clock reference).
    pub task: bool,
    /// `rtapp_loop`.
    pub r#loop: bool,
    /// `rtapp_event`.
    pub event: bool,
    /// `rtapp_stats`.
    pub stats: bool,
}

impl RtappFtrace {
    /// Every category (rt-app's deprecated `"ftrace": true`).
    pub const ALL: RtappFtrace = RtappFtrace { main: true, task: true, r#loop: true, event: true, stats: true };
}

#[derive(Debug, Clone, PartialEq)]
pub struct RtappStep {
    /// The rt-app phase (which of its loops is the thread's place in the task's `loops`).
    pub phase: u32,
    /// The first phase of a loop of the rt-app phase (`rtapp_loop: event=start`).
    pub loop_start: bool,
    /// The first phase of an rt-app event (`wait` becomes unlock, wait, lock); none for the
    /// delay.
    pub event: Option<RtappEvent>,
}

/// One rt-app event as its `rtapp_event` marker names it.
#[derive(Debug, Clone, PartialEq)]
pub struct RtappEvent {
    /// Its index in its rt-app phase.
    pub id: u32,
    pub type_number: u32,
    pub desc: String,
    /// The µs a `run` or `runtime` asks (`rtapp_stats`' c_run); 0 for other events.
    pub run_us: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub name: String,
    pub tasks: Vec<Task>,
    /// Every thread stops then, finished or not (rt-app's global `duration`), µs.
    pub duration_us: Option<u64>,
    /// The CPU whose top OPP defines a `run_us` of reference work (rt-app's `calibration`
    /// CPU); `None`: the biggest core.
    pub reference_cpu: Option<usize>,
    /// Task groups declared with their `cpu.shares`; groups only named by tasks or phases have
    /// the default shares.
    pub taskgroups: Vec<TaskGroupSpec>,
    /// The device interrupts the workload drives (`[[irqs]]`, `kernel::irq`).
    pub irqs: Vec<IrqStream>,
}

/// When a device interrupts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IrqArrivals {
    /// On the device's own clock, every `period_us` from the stream's start (an audio codec's
    /// FIFO, a display's vsync).
    Periodic { period_us: f64 },
    /// At random, `mean_interval_us` apart on average (a Poisson process: packets, requests).
    Poisson { mean_interval_us: f64 },
}

/// A stream of a device's interrupts (`[[irqs]]`): the device is the platform's (`[kernel]
/// devices`, its handler's cost there); the stream says when it interrupts and what its
/// handler wakes.
#[derive(Debug, Clone, PartialEq)]
pub struct IrqStream {
    pub device: String,
    pub arrivals: IrqArrivals,
    /// The first interrupt, µs after the start.
    pub start_us: f64,
    /// How many; `None`: until the workload's threads are done.
    pub count: Option<u64>,
    /// A semaphore the handler posts every `every` interrupts (a driver's completion that
    /// wakes its waiter: ALSA's `snd_pcm_period_elapsed`); a phase waits with `sem_wait`.
    pub posts: Option<String>,
    pub every: u64,
}

impl Workload {
    /// Every task group path the workload declares or names (normalised, unordered, repeats).
    pub fn taskgroup_paths(&self) -> impl Iterator<Item = &str> {
        let declared = self.taskgroups.iter().map(|g| g.path.as_str());
        let of_tasks = self.tasks.iter().filter_map(|t| t.taskgroup.as_deref());
        let of_phases = self.tasks.iter().flat_map(|t| &t.phases).filter_map(|p| match &p.kind {
            PhaseKind::SetSched(attr) => attr.taskgroup.as_deref(),
            _ => None,
        });
        declared.chain(of_tasks).chain(of_phases)
    }

    /// Checks the thread count: at least one, at most [`MAX_THREADS`] (a task with one thread
    /// per CPU, `threads=cpus`, counts as one here; the CPUs bound it).
    pub(crate) fn check_threads(&self, origin: &str) -> Result<(), String> {
        let n = self
            .tasks
            .iter()
            .map(|t| match t.threads {
                ThreadCount::Fixed(n) => u64::from(n).max(1),
                ThreadCount::PerAllowedCpu => 1,
            })
            .sum::<u64>();
        if !(1..=MAX_THREADS).contains(&n) {
            return Err(format!("{origin}: threads must total 1..={MAX_THREADS}, got {n}"));
        }
        check_total_phases(origin, self.tasks.iter().map(|t| t.phases.len()).sum())
    }

    /// The threads the tasks start, a task with one per allowed CPU counting none (its count is
    /// known only when a run starts).
    pub fn nthreads(&self) -> usize {
        self.tasks.iter().map(|t| t.threads.for_allowed_cpus(0) as usize).sum()
    }
}

/// One access component from a file's fields, each defaulted where not given (a random walk
/// of `DEFAULT_WORKING_SET_BYTES` by 64 B lines, uniform reuse; 4 B words in sequence) and
/// checked against its limits; `at` names the phase in errors.
fn access_from(
    at: &str,
    ws: Option<u64>,
    pattern: Option<Pattern>,
    stride: Option<u64>,
    order: Option<Order>,
) -> Result<Access, String> {
    let pattern = pattern.unwrap_or(Pattern::Random);
    let stride_bytes = match (pattern, stride) {
        (Pattern::Strided, Some(s)) if s > 0 => s,
        (Pattern::Strided, _) => {
            return Err(format!("{at}.stride_bytes: a strided pattern needs a positive stride_bytes"))
        }
        (Pattern::Sequential, None) => 4,
        (Pattern::Random, None) => 64,
        (_, Some(s)) if s > 0 => s,
        (_, Some(_)) => return Err(format!("{at}.stride_bytes must be positive")),
    };
    let order = order.unwrap_or(match pattern {
        Pattern::Random => Order::Uniform,
        _ => Order::Cyclic,
    });
    let working_set_bytes = ws.unwrap_or(DEFAULT_WORKING_SET_BYTES);
    within(&format!("{at}.working_set_bytes"), working_set_bytes as f64, false, MAX_WORKING_SET_BYTES as f64)?;
    within(&format!("{at}.stride_bytes"), stride_bytes as f64, false, MAX_WORKING_SET_BYTES as f64)?;
    Ok(Access::new(working_set_bytes, pattern, stride_bytes, order))
}

/// Checks a memory profile's figures (a phase's, or a generator's); `at` names it in errors.
fn check_mem(at: &str, m: &MemProfile) -> Result<(), String> {
    if !(m.cpi.is_finite() && m.cpi >= 0.0) {
        return Err(format!("{at}.cpi must not be negative, got {}", m.cpi));
    }
    if !(m.refs_per_instr.is_finite() && m.refs_per_instr >= 0.0) {
        return Err(format!("{at}.refs_per_instr must not be negative, got {}", m.refs_per_instr));
    }
    // With no compute cycles only a dependent chain's L1 latency takes time; independent
    // loads that hit the L1 would retire in no time at all.
    if m.cpi == 0.0 && m.mix.is_none() && !(m.dependent_loads && m.refs_per_instr > 0.0) {
        return Err(format!(
            "{at}: cpi 0 is for a dependent pointer chase (dependent_loads = true, refs_per_instr > 0); give a positive cpi"
        ));
    }
    if !(0.0..=1.0).contains(&m.write_fraction) {
        return Err(format!("{at}.write_fraction must be within 0..=1, got {}", m.write_fraction));
    }
    Ok(())
}

/// The most threads a workload may have: the engine's cost grows with threads, and no modelled
/// system comes near this.
pub const MAX_THREADS: u64 = 65_536;

/// Most phases all tasks of a workload have together: each task may have
/// `rtapp::events::MAX_PHASES`, but 2,000 tasks of 4,096 took 8.7 GB (about 1 KB per phase with
/// its thread state); at this total a workload of 32 rt-app tasks of 4,000 events (128,000
/// phases) peaked at 256 MB RSS in `hetlab simulate --time-limit 0.001` (40 MB for ccbench).
pub const MAX_TOTAL_PHASES: usize = 1 << 17;

/// `total` phases across a workload's tasks, at most [`MAX_TOTAL_PHASES`]: readers call it as
/// they add tasks, so a hostile file stops before it is read whole.
pub(crate) fn check_total_phases(origin: &str, total: usize) -> Result<(), String> {
    if total > MAX_TOTAL_PHASES {
        return Err(format!(
            "{origin}: the tasks have more than {MAX_TOTAL_PHASES} phases together (steps of their events; \
             got {total} so far); split the workload or shorten its tasks"
        ));
    }
    Ok(())
}

/// The most instructions one phase may name (`instructions`, `parallel_instructions`,
/// cpu-bound's `instructions`, ccbench's `iterations`): 2^53, the largest count a double (the
/// engine counts a phase's work in one) holds to the instruction. A 2 GHz core retiring one
/// instruction per cycle needs 52 days for it, far beyond the longest run (`MAX_TIME_LIMIT_S`,
/// 10 days): a larger count could only run into the time limit.
pub const MAX_INSTRUCTIONS: f64 = 9_007_199_254_740_992.0;

/// The longest time one phase may name, µs (`run_us`, `sleep_us`, `period_us`, `duration_us`
/// and rt-app's `run`, `sleep`, `timer` periods, `delay`): 1e12 µs, 11.6 days, beyond the longest
/// run (`MAX_TIME_LIMIT_S`, 10 days).
pub const MAX_PHASE_US: f64 = 1e12;

/// The most `call_rcu()`s a phase may queue per second of its reference work
/// (`call_rcu_per_s`): 1e9, one per nanosecond. `call_rcu()` itself runs for tens of
/// nanoseconds on these cores, so no code queues faster; the repository's highest rate is
/// 20,000/s (`hetlab reproduce rcu-amp`'s 4 x 5,000/s).
pub const MAX_CALL_RCU_PER_S: f64 = 1e9;

/// The largest working set or stride, bytes: 1 TiB, more memory than any modelled board
/// addresses (ccbench's largest array, `CCBENCH_MAX_ELEMENTS`, is 64 GiB).
pub const MAX_WORKING_SET_BYTES: u64 = 1 << 40;

/// `v` in an error message: a huge value as 1e30, not its 31 digits.
pub fn shown(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e12 {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// Checks a count or duration against its stated limit: positive (or, `zero_ok`, not
/// negative), finite, at most `max`; `what` names it.
pub(crate) fn within(what: &str, v: f64, zero_ok: bool, max: f64) -> Result<f64, String> {
    let low_ok = if zero_ok { v >= 0.0 } else { v > 0.0 };
    if v.is_finite() && low_ok && v <= max {
        Ok(v)
    } else if zero_ok {
        Err(format!("{what} must be within 0..={}, got {}", shown(max), shown(v)))
    } else {
        Err(format!("{what} must be above 0 and at most {}, got {}", shown(max), shown(v)))
    }
}

/// The largest ccbench array: 2^34 4-byte elements (a 64 GiB working set), so that rounding to
/// the stride and the byte count stay far from u64 overflow.
pub const CCBENCH_MAX_ELEMENTS: u64 = 1 << 34;
