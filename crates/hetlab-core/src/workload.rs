//! Workloads: tasks made of threads that run phases. A phase is a fixed amount of work
//! (`instructions`), a sleep, a periodic run/sleep pattern (rt-app style), or one of rt-app's
//! `suspend`/`resume` events between threads; work phases carry the memory profile that drives
//! the cache/DRAM/snoop model.
//!
//! Sources: TOML files (format below, examples in data/workloads/) and generators given as
//! `name:key=value,...` specs: `ccbench`, `periodic`, `cpu-bound`.

use serde::Deserialize;
use std::collections::BTreeMap;

use crate::isa::Mix;

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
    /// barrier (every thread waits for the last one; `engine::parallel`).
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
    /// An operation on a named object shared between threads (`engine::sync`).
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
        Phase { kind, mem, rcu: RcuCalls::default(), mark: None }
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
    /// 0: one per CPU the task may use, resolved at the start of a run.
    pub threads: u32,
    pub nice: i32,
    /// Allowed CPUs; `None` = all.
    pub affinity: Option<Vec<usize>>,
    pub repeat: u32,
    pub phases: Vec<Phase>,
    /// Leading phases run once, before the repeats (rt-app's `delay`).
    pub prologue_phases: usize,
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
}

/// Where each phase of a task comes from in its rt-app file, for the markers rt-app writes to
/// ftrace (`rtapp_loop`, `rtapp_event`, `rtapp_stats`; made by `rtapp::from_rtapp_json`, written by
/// `engine::rtapp_markers`).
#[derive(Debug, Clone, PartialEq)]
pub struct RtappSteps {
    /// One per phase of the task, its delay included.
    pub steps: Vec<RtappStep>,
    /// The task's repeats are loops of its only rt-app phase (a task without `phases` that
    /// gives `loop`: rt-app runs that phase `loop` times within one thread loop).
    pub repeats_are_phase_loops: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RtappStep {
    /// The rt-app phase and which of its loops this is.
    pub phase: u32,
    pub phase_loop: u32,
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
}

// ---- TOML format -------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadFile {
    name: String,
    #[serde(default)]
    #[allow(dead_code)]
    description: String,
    /// `cpu.shares` per task group path (`[taskgroups."/background"] shares = 52`).
    #[serde(default)]
    taskgroups: BTreeMap<String, TaskGroupFile>,
    tasks: Vec<TaskFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskGroupFile {
    shares: Option<u64>,
    /// `cpu.uclamp.min = 20.5` (TOML's dotted keys): the cgroup's `cpu.uclamp.*` files.
    cpu: Option<TaskGroupCpuFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskGroupCpuFile {
    uclamp: TaskGroupUclampFile,
}

/// Percentages, 0..=100 with two decimals (`capacity_from_percent`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskGroupUclampFile {
    min: Option<f64>,
    max: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    name: String,
    #[serde(default = "one")]
    threads: u32,
    #[serde(default)]
    nice: i32,
    affinity: Option<Vec<usize>>,
    #[serde(default = "one")]
    repeat: u32,
    /// Utilisation clamps, 0..=1024 (`sched::uclamp`).
    util_min: Option<u32>,
    util_max: Option<u32>,
    /// `normal` (CFS, the default), `idle` (SCHED_IDLE), `fifo` or `rr` (real time, at
    /// `rt_priority` 1..=99), `deadline` (with the `dl_*_us` keys).
    policy: Option<String>,
    rt_priority: Option<i64>,
    /// SCHED_DEADLINE's `sched_attr` (with `policy = "deadline"`), µs.
    dl_runtime_us: Option<u64>,
    dl_deadline_us: Option<u64>,
    dl_period_us: Option<u64>,
    /// Its threads' task group (a cgroup path, e.g. `/background`).
    taskgroup: Option<String>,
    phases: Vec<PhaseFile>,
}

fn one() -> u32 {
    1
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct PhaseFile {
    pub(crate) instructions: Option<f64>,
    pub(crate) sleep_us: Option<u64>,
    pub(crate) run_us: Option<f64>,
    pub(crate) suspend: Option<String>,
    pub(crate) resume: Option<String>,
    pub(crate) mark: Option<String>,
    pub(crate) period_us: Option<u64>,
    pub(crate) duration_us: Option<u64>,
    pub(crate) count: Option<u64>,
    pub(crate) cpi: Option<f64>,
    pub(crate) refs_per_instr: Option<f64>,
    pub(crate) working_set_bytes: Option<u64>,
    pub(crate) pattern: Option<Pattern>,
    pub(crate) stride_bytes: Option<u64>,
    pub(crate) order: Option<Order>,
    pub(crate) dependent_loads: Option<bool>,
    pub(crate) write_fraction: Option<f64>,
    pub(crate) components: Option<Vec<AccessFile>>,
    /// Instruction class -> share (`crate::isa::CLASSES`).
    pub(crate) mix: Option<BTreeMap<String, f64>>,
    pub(crate) parallel_instructions: Option<f64>,
    pub(crate) allocation: Option<String>,
    pub(crate) chunk_instructions: Option<f64>,
    pub(crate) shared_rmw_fraction: Option<f64>,
    pub(crate) peer_written_fraction: Option<f64>,
    pub(crate) shared_working_set: Option<bool>,
    pub(crate) call_rcu_per_s: Option<f64>,
    pub(crate) rcu_callback_us: Option<f64>,
    pub(crate) rcu_lazy: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AccessFile {
    fraction: f64,
    working_set_bytes: u64,
    pattern: Option<Pattern>,
    stride_bytes: Option<u64>,
    order: Option<Order>,
}

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

impl PhaseFile {
    pub(crate) fn into_phase(self, at: &str) -> Result<Phase, String> {
        let single = self.working_set_bytes.is_some()
            || self.pattern.is_some()
            || self.stride_bytes.is_some()
            || self.order.is_some();
        let mut mem = MemProfile::single(
            self.cpi.unwrap_or(DEFAULT_CPI),
            self.refs_per_instr.unwrap_or(DEFAULT_REFS_PER_INSTR),
            access_from(at, self.working_set_bytes, self.pattern, self.stride_bytes, self.order)?,
            self.dependent_loads.unwrap_or(false),
            self.write_fraction.unwrap_or(0.0),
        );
        if let Some(components) = self.components {
            if single {
                return Err(format!(
                    "{at}: give either components or working_set_bytes/pattern/stride_bytes/order, not both"
                ));
            }
            if components.is_empty() || components.len() > MAX_ACCESSES {
                return Err(format!("{at}.components: give 1 to {MAX_ACCESSES} components, got {}", components.len()));
            }
            let mut accesses = Vec::new();
            for (i, c) in components.into_iter().enumerate() {
                let cat = format!("{at}.components[{i}]");
                if !(c.fraction > 0.0 && c.fraction <= 1.0) {
                    return Err(format!("{cat}.fraction must be within (0, 1], got {}", c.fraction));
                }
                let mut a = access_from(&cat, Some(c.working_set_bytes), c.pattern, c.stride_bytes, c.order)?;
                a.fraction = c.fraction;
                accesses.push(a);
            }
            let total: f64 = accesses.iter().map(|a| a.fraction).sum();
            if (total - 1.0).abs() > 1e-6 {
                return Err(format!("{at}.components: fractions must sum to 1, they sum to {total}"));
            }
            // Smallest working set first: the cache model gives each component what the smaller,
            // hotter ones leave (a stack-distance view).
            accesses.sort_by_key(|a| a.working_set_bytes);
            mem.n_accesses = accesses.len();
            for (slot, a) in mem.accesses.iter_mut().zip(&accesses) {
                *slot = *a;
            }
        }
        if let Some(mix) = &self.mix {
            if self.cpi.is_some() {
                return Err(format!("{at}: give either mix or cpi, not both (a mix sets the compute cycles)"));
            }
            let mix = Mix::from_pairs(&format!("{at}.mix"), mix.iter().map(|(k, v)| (k.as_str(), *v)))?;
            // A mix's loads and stores are its data references unless the phase says otherwise.
            mem.refs_per_instr = self.refs_per_instr.unwrap_or(mix.refs_per_instr());
            mem.mix = Some(mix);
        }
        for (key, value, field) in [
            ("shared_rmw_fraction", self.shared_rmw_fraction, &mut mem.shared_rmw_fraction),
            ("peer_written_fraction", self.peer_written_fraction, &mut mem.peer_written_fraction),
        ] {
            if let Some(f) = value {
                if !(0.0..=1.0).contains(&f) {
                    return Err(format!("{at}.{key} must be within 0..=1, got {f}"));
                }
                *field = f;
            }
        }
        if mem.shared_rmw_fraction + mem.peer_written_fraction > 1.0 {
            return Err(format!(
                "{at}: shared_rmw_fraction + peer_written_fraction must be at most 1 (they are shares of the same references)"
            ));
        }
        mem.shared_working_set = self.shared_working_set.unwrap_or(false);
        check_mem(at, &mem)?;
        let kinds = [
            self.parallel_instructions.is_some(),
            self.instructions.is_some(),
            self.sleep_us.is_some(),
            self.run_us.is_some(),
            self.suspend.is_some(),
            self.resume.is_some(),
        ];
        const ONE_OF: &str = "instructions, parallel_instructions, sleep_us, run_us, suspend or resume";
        match kinds.iter().filter(|&&k| k).count() {
            0 => return Err(format!("{at}: a phase needs one of {ONE_OF}")),
            1 => {}
            _ => return Err(format!("{at}: give only one of {ONE_OF}")),
        }
        let event = |name: Option<String>| -> Result<String, String> {
            match name {
                Some(n) if !n.is_empty() => Ok(n),
                _ => Err(format!("{at}: an event name must not be empty")),
            }
        };
        if self.parallel_instructions.is_none() && (self.allocation.is_some() || self.chunk_instructions.is_some()) {
            return Err(format!("{at}: allocation and chunk_instructions belong to parallel_instructions phases"));
        }
        let kind = match (self.instructions, self.sleep_us, self.run_us) {
            _ if self.parallel_instructions.is_some() => {
                let total = self.parallel_instructions.unwrap_or_default();
                within(&format!("{at}.parallel_instructions"), total, false, MAX_INSTRUCTIONS)?;
                let allocation = match (self.allocation.as_deref(), self.chunk_instructions) {
                    (None | Some("static"), None) => Allocation::Static,
                    (Some("static"), Some(_)) => {
                        return Err(format!("{at}: chunk_instructions belongs to allocation = \"dynamic\""))
                    }
                    // A chunk larger than the phase's work leaves the pool looking empty (below a
                    // millionth of a chunk is taken as rounding): the phase would do nothing.
                    (Some("dynamic"), Some(c)) if c.is_finite() && c > 0.0 && c <= total => {
                        Allocation::Dynamic { chunk_instructions: c }
                    }
                    (Some("dynamic"), Some(c)) if c.is_finite() && c > total => {
                        return Err(format!(
                            "{at}.chunk_instructions must be in (0, {total}] (at most the phase's \
                             parallel_instructions: a larger chunk would leave the phase with no work), got {c}"
                        ))
                    }
                    (Some("dynamic"), _) => {
                        return Err(format!("{at}: allocation = \"dynamic\" needs a positive chunk_instructions"))
                    }
                    (None, Some(_)) => return Err(format!("{at}: chunk_instructions needs allocation = \"dynamic\"")),
                    (Some(other), _) => {
                        return Err(format!("{at}.allocation must be \"static\" or \"dynamic\", got '{other}'"))
                    }
                };
                PhaseKind::Parallel { total_instructions: total, allocation }
            }
            _ if self.suspend.is_some() => PhaseKind::Suspend { event: event(self.suspend)? },
            _ if self.resume.is_some() => PhaseKind::Resume { event: event(self.resume)? },
            (Some(n), None, None) => {
                PhaseKind::Compute { instructions: within(&format!("{at}.instructions"), n, false, MAX_INSTRUCTIONS)? }
            }
            (None, Some(d), None) => {
                within(&format!("{at}.sleep_us"), d as f64, true, MAX_PHASE_US)?;
                PhaseKind::Sleep { duration_us: d }
            }
            (None, None, Some(run_us)) => {
                within(&format!("{at}.run_us"), run_us, false, MAX_PHASE_US)?;
                for (key, v) in [("period_us", self.period_us), ("duration_us", self.duration_us)] {
                    if let Some(v) = v {
                        within(&format!("{at}.{key}"), v as f64, true, MAX_PHASE_US)?;
                    }
                }
                let period_us = self.period_us.unwrap_or(0);
                let count = match (self.count, self.duration_us, period_us) {
                    (Some(0), None, _) => {
                        return Err(format!(
                            "{at}.count must be at least 1 (count = 0 would release no job: a phase that does \
                             nothing; give the number of jobs, or duration_us)"
                        ))
                    }
                    (Some(c), None, _) => c,
                    (None, Some(_), 0) => return Err(format!("{at}: duration_us needs period_us")),
                    (None, Some(d), p) => (d / p).max(1),
                    (None, None, 0) => 1,
                    (None, None, _) => return Err(format!("{at}: a periodic phase needs count or duration_us")),
                    (Some(_), Some(_), _) => return Err(format!("{at}: give count or duration_us, not both")),
                };
                PhaseKind::Periodic { run_us, period_us, count }
            }
            _ => unreachable!("exactly one kind, checked above"),
        };
        if !matches!(kind, PhaseKind::Periodic { .. })
            && (self.period_us.is_some() || self.count.is_some() || self.duration_us.is_some())
        {
            return Err(format!("{at}: period_us, count and duration_us belong to run_us phases"));
        }
        let rcu = match (self.call_rcu_per_s, self.rcu_callback_us) {
            (None, None) if self.rcu_lazy.is_none() => RcuCalls::default(),
            (Some(per_s), Some(callback_us)) => {
                if per_s.is_nan() || per_s < 0.0 {
                    return Err(format!("{at}.call_rcu_per_s must not be negative, got {per_s}"));
                }
                within(&format!("{at}.call_rcu_per_s"), per_s, true, MAX_CALL_RCU_PER_S)?;
                if callback_us.is_nan() || callback_us <= 0.0 {
                    return Err(format!("{at}.rcu_callback_us must be positive, got {callback_us}"));
                }
                within(&format!("{at}.rcu_callback_us"), callback_us, false, MAX_PHASE_US)?;
                if !matches!(kind, PhaseKind::Compute { .. } | PhaseKind::Periodic { .. }) {
                    return Err(format!("{at}: call_rcu_per_s belongs to work phases (instructions or run_us)"));
                }
                RcuCalls { per_s, callback_us, lazy: self.rcu_lazy.unwrap_or(false) }
            }
            _ => return Err(format!("{at}: give call_rcu_per_s and rcu_callback_us together (rcu_lazy is optional)")),
        };
        Ok(Phase { kind, mem, mark: self.mark, rcu })
    }
}

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

impl Workload {
    pub fn from_toml(origin: &str, text: &str) -> Result<Workload, String> {
        let file: WorkloadFile = crate::input::parse_toml(origin, text)?;
        if file.tasks.is_empty() {
            return Err(format!("{origin}: tasks: a workload needs at least one task"));
        }
        let mut tasks = Vec::new();
        for (ti, t) in file.tasks.into_iter().enumerate() {
            let at = format!("{origin}: tasks[{ti}] '{}'", t.name);
            if t.threads == 0 {
                return Err(format!("{at}.threads must be at least 1"));
            }
            if !(-20..=19).contains(&t.nice) {
                return Err(format!("{at}.nice must be within -20..=19, got {}", t.nice));
            }
            if t.phases.is_empty() {
                return Err(format!("{at}.phases: a task needs at least one phase"));
            }
            if t.repeat == 0 {
                return Err(format!(
                    "{at}.repeat must be in 1..={} (repeat = 0 would run the task's phases no times: a task \
                     that does nothing; leave repeat out to run them once)",
                    u32::MAX
                ));
            }
            let mut phases = Vec::new();
            for (pi, p) in t.phases.into_iter().enumerate() {
                phases.push(p.into_phase(&format!("{at}.phases[{pi}]"))?);
            }
            tasks.push(Task {
                name: t.name,
                threads: t.threads,
                nice: t.nice,
                affinity: t.affinity,
                repeat: t.repeat,
                phases,
                prologue_phases: 0,
                forked: false,
                rtapp: None,
                uclamp: UclampRequest::new(&at, t.util_min, t.util_max)?,
                class: match (&t.policy, t.rt_priority) {
                    (Some(policy), None) if SchedClass::names_deadline(policy) => {
                        let Some(runtime_us) = t.dl_runtime_us else {
                            return Err(format!("{at}: policy = \"deadline\" needs dl_runtime_us"));
                        };
                        SchedClass::Deadline(DlParams::from_us(&at, runtime_us, t.dl_deadline_us, t.dl_period_us)?)
                    }
                    _ if t.dl_runtime_us.is_some() || t.dl_deadline_us.is_some() || t.dl_period_us.is_some() => {
                        return Err(format!(
                            "{at}: dl_runtime_us, dl_deadline_us and dl_period_us belong to policy = \"deadline\" (without \
                             rt_priority)"
                        ))
                    }
                    (Some(policy), priority) => match SchedClass::parse(&format!("{at}.policy"), policy, priority)? {
                        // a CFS policy has no sched_priority: its weight is the task's nice
                        class if priority.is_some() && class.rt_priority().is_none() => {
                            return Err(format!(
                                "{at}.rt_priority: rt_priority applies only to policy = \"fifo\" or \"rr\" (real \
                                 time), not \"{policy}\"; remove it (a CFS task's priority is its nice)"
                            ))
                        }
                        class => class,
                    },
                    (None, None) => SchedClass::Normal,
                    (None, Some(_)) => {
                        return Err(format!("{at}.rt_priority: give policy = \"fifo\" or \"rr\" with it"))
                    }
                },
                taskgroup: match t.taskgroup {
                    Some(path) => Some(taskgroup_path(&format!("{at}.taskgroup"), &path)?).filter(|p| p != "/"),
                    None => None,
                },
            });
        }
        let mut taskgroups = Vec::new();
        for (path, group) in file.taskgroups {
            let at = format!("{origin}: taskgroups.\"{path}\"");
            let path = taskgroup_path(&at, &path)?;
            let shares = group.shares.unwrap_or(TASKGROUP_DEFAULT_SHARES);
            if path == "/" {
                return Err(format!(
                    "{at}: the root group has no cpu.shares or cpu.uclamp files to set (nothing above it to share \
                     or restrict); remove it"
                ));
            }
            if !(TASKGROUP_MIN_SHARES..=TASKGROUP_MAX_SHARES).contains(&shares) {
                return Err(format!(
                    "{at}.shares must be within {TASKGROUP_MIN_SHARES}..={TASKGROUP_MAX_SHARES} (the kernel's MIN_SHARES and \
                     MAX_SHARES), got {shares}"
                ));
            }
            if taskgroups.iter().any(|g: &TaskGroupSpec| g.path == path) {
                return Err(format!("{at}: the same group as another entry once normalised ({path}); give it once"));
            }
            let uclamp = match group.cpu.map(|c| c.uclamp) {
                Some(u) => UclampRequest {
                    min: u.min.map(|pct| capacity_from_percent(&format!("{at}.cpu.uclamp.min"), pct)).transpose()?,
                    max: u.max.map(|pct| capacity_from_percent(&format!("{at}.cpu.uclamp.max"), pct)).transpose()?,
                },
                None => UclampRequest::default(),
            };
            taskgroups.push(TaskGroupSpec { path, shares, uclamp });
        }
        let w = Workload { name: file.name, tasks, duration_us: None, reference_cpu: None, taskgroups };
        w.check_threads(origin)?;
        Ok(w)
    }

    /// A built-in TOML workload or a generator spec (`ccbench:size=...`).
    pub fn from_spec(spec: &str) -> Result<Workload, String> {
        let (name, args) = spec.split_once(':').unwrap_or((spec, ""));
        let mut kv = Vec::new();
        for item in args.split(',').filter(|s| !s.is_empty()) {
            let (k, v) =
                item.split_once('=').ok_or_else(|| format!("workload '{name}': expected key=value, got '{item}'"))?;
            kv.push((k.trim().to_string(), v.trim().to_string()));
        }
        let generated = match name {
            "ccbench" => ccbench(&kv),
            "periodic" => periodic(&kv),
            "cpu-bound" => cpu_bound(&kv),
            _ => return Self::from_builtin(name, &kv),
        }?;
        generated.check_threads(name)?;
        Ok(generated)
    }

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
        let n = self.tasks.iter().map(|t| (t.threads as u64).max(1)).sum::<u64>();
        if !(1..=MAX_THREADS).contains(&n) {
            return Err(format!("{origin}: threads must total 1..={MAX_THREADS}, got {n}"));
        }
        Ok(())
    }

    fn from_builtin(name: &str, kv: &[(String, String)]) -> Result<Workload, String> {
        let workload = match BUILTIN_WORKLOADS.iter().find(|(n, _)| *n == name) {
            Some((n, text)) => Workload::from_toml(&format!("{n}.toml (built-in)"), text)?.with_parallel(kv)?,
            None => {
                return Err(format!(
                    "unknown workload '{name}'; generators: ccbench, periodic, cpu-bound; built-in: {} (or give a path to a .toml file)",
                    BUILTIN_WORKLOADS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                ))
            }
        };
        workload.check_threads(name)?;
        Ok(workload)
    }

    /// A built-in workload's parameters (`name:threads=4,allocation=static`), for workloads
    /// with parallel phases: `threads` sets the thread count of every task that has one, `cpus`
    /// one thread per CPU the task may use when the run starts (a fork-join program that starts
    /// as many workers as it sees CPUs, as Sandra does), `allocation` switches their
    /// dynamic pools to a static split (`static`) or keeps them (`dynamic`).
    pub fn with_parallel(mut self, kv: &[(String, String)]) -> Result<Workload, String> {
        if kv.is_empty() {
            return Ok(self);
        }
        let name = self.name.clone();
        let parallel = |t: &Task| t.phases.iter().any(|p| matches!(p.kind, PhaseKind::Parallel { .. }));
        if !self.tasks.iter().any(parallel) {
            return Err(format!("workload '{name}' takes no parameters (it has no parallel phase)"));
        }
        let p = Params::new("parallel workload", &["threads", "allocation"], kv)?;
        if let Some(v) = p.raw("threads") {
            // cpus -> 0: one per CPU the task may use, resolved when a run starts (engine set-up).
            let parsed = if v == "cpus" { Some(0) } else { v.parse::<u32>().ok().filter(|n| *n > 0) };
            let threads = parsed.filter(|n| *n <= crate::platform::MAX_CPUS as u32).ok_or_else(|| {
                format!("workload '{name}': threads must be 1 to {} or cpus, got '{v}'", crate::platform::MAX_CPUS)
            })?;
            for t in self.tasks.iter_mut().filter(|t| parallel(t)) {
                t.threads = threads;
            }
        }
        match p.raw("allocation") {
            None | Some("dynamic") => {
                let static_only = self
                    .tasks
                    .iter()
                    .flat_map(|t| &t.phases)
                    .any(|ph| matches!(ph.kind, PhaseKind::Parallel { allocation: Allocation::Static, .. }));
                if p.raw("allocation").is_some() && static_only {
                    return Err(format!(
                        "workload '{name}': allocation=dynamic needs its parallel phases to give chunk_instructions"
                    ));
                }
            }
            Some("static") => {
                for ph in self.tasks.iter_mut().flat_map(|t| t.phases.iter_mut()) {
                    if let PhaseKind::Parallel { allocation, .. } = &mut ph.kind {
                        *allocation = Allocation::Static;
                    }
                }
            }
            Some(other) => {
                return Err(format!("workload '{name}': allocation must be static or dynamic, got '{other}'"))
            }
        }
        Ok(self)
    }

    pub fn nthreads(&self) -> usize {
        self.tasks.iter().map(|t| t.threads as usize).sum()
    }
}

/// Generator parameters: checks every key is known and parses values.
struct Params<'a> {
    generator: &'static str,
    known: &'static [&'static str],
    kv: &'a [(String, String)],
}

impl<'a> Params<'a> {
    fn new(
        generator: &'static str,
        known: &'static [&'static str],
        kv: &'a [(String, String)],
    ) -> Result<Self, String> {
        for (k, _) in kv {
            if !known.contains(&k.as_str()) {
                return Err(format!("unknown workload key '{k}' for {generator}; known keys: {}", known.join(", ")));
            }
        }
        Ok(Params { generator, known, kv })
    }
    fn raw(&self, key: &str) -> Option<&str> {
        debug_assert!(self.known.contains(&key));
        self.kv.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
    /// [`Params::num`] at most `max` (and above 0 unless `zero_ok`), as [`within`] says.
    fn bounded(&self, key: &str, default: f64, zero_ok: bool, max: f64) -> Result<f64, String> {
        within(&format!("{}: {key}", self.generator), self.num(key, default)?, zero_ok, max)
    }

    fn num(&self, key: &str, default: f64) -> Result<f64, String> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => v
                .replace('_', "")
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| format!("{}: {key} must be a non-negative number, got '{v}'", self.generator)),
        }
    }
}

/// ccbench `caches` (shared/reference/platforms.md §6): a single dependent-load pointer chase
/// over `size` 4-byte elements. `pattern`: 0/random = one word per 256 B block, randomised
/// within each 4 KB page, pages in order; 1/sequential = word by word; 16/stride-16 = one word
/// per 64 B line; any other k = stride of k words. `iterations` = number of dependent loads.
/// The most threads a workload may have: the engine's cost grows with threads, and no modelled
/// system comes near this.
pub const MAX_THREADS: u64 = 65_536;

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

pub fn ccbench(kv: &[(String, String)]) -> Result<Workload, String> {
    let p = Params::new("ccbench", &["size", "pattern", "iterations", "threads"], kv)?;
    let size = p.num("size", 1048576.0)?;
    if !(4.0..=CCBENCH_MAX_ELEMENTS as f64).contains(&size) {
        return Err(format!("ccbench: size must be 4..={CCBENCH_MAX_ELEMENTS} elements (4-byte), got {size}"));
    }
    let size = size as u64;
    let iterations = p.bounded("iterations", 10_000_000.0, false, MAX_INSTRUCTIONS)?;
    if iterations < 1.0 {
        return Err("ccbench: iterations must be at least 1".into());
    }
    let pattern_arg = p.raw("pattern").unwrap_or("random");
    // Stride in 32-bit words; ccbench's random mode steps by CACHELINE_IN_BYTES_SZ = 256 B.
    let (pattern, stride_words, label) = match pattern_arg {
        "0" | "random" => (Pattern::Random, 64u64, "random".to_string()),
        "1" | "sequential" => (Pattern::Sequential, 1, "sequential".to_string()),
        other => {
            let k = other.strip_prefix("stride-").unwrap_or(other);
            // A stride beyond the array is what ccbench runs too: N rounds up to 2 x stride
            // (the seed paper's 4-element runs use all three patterns).
            let k: u64 = k.parse().ok().filter(|k| (1..=CCBENCH_MAX_ELEMENTS).contains(k)).ok_or_else(|| {
                format!(
                    "ccbench: pattern must be random|0, sequential|1, stride-K or K with 1 <= K <= \
                     {CCBENCH_MAX_ELEMENTS}, got '{other}'"
                )
            })?;
            (if k == 1 { Pattern::Sequential } else { Pattern::Strided }, k, format!("stride-{k}"))
        }
    };
    // ccbench rounds N up to a multiple of 2 x stride.
    let n = size.div_ceil(2 * stride_words) * 2 * stride_words;
    let threads = p.num("threads", 1.0)? as u32;
    // The loop's index arithmetic and branch issue in the shadow of the load: the load-to-use
    // latency of each level is the whole cost of an iteration (cpi 0, one reference each).
    let access = Access::new(n * 4, pattern, stride_words * 4, Order::Cyclic);
    // random mode randomises within each page and takes the pages in order
    let access = if pattern == Pattern::Random { access.in_page_runs() } else { access };
    let mem = MemProfile::single(0.0, 1.0, access, true, 0.0);
    Ok(Workload {
        duration_us: None,
        reference_cpu: None,
        taskgroups: Vec::new(),
        name: format!("ccbench-{n}-{label}"),
        tasks: vec![Task {
            name: "ccbench".into(),
            threads: threads.max(1),
            nice: 0,
            affinity: None,
            repeat: 1,
            prologue_phases: 0,
            forked: false,
            rtapp: None,
            uclamp: Default::default(),
            class: Default::default(),
            taskgroup: None,
            phases: vec![Phase {
                kind: PhaseKind::Compute { instructions: iterations },
                mem,
                mark: None,
                rcu: RcuCalls::default(),
            }],
        }],
    })
}

/// A periodic run/sleep task (rt-app style): `run_us` of reference work every `period_us`.
pub fn periodic(kv: &[(String, String)]) -> Result<Workload, String> {
    let p =
        Params::new("periodic", &["run_us", "period_us", "duration_us", "threads", "working_set_bytes", "nice"], kv)?;
    let run_us = p.bounded("run_us", 2000.0, false, MAX_PHASE_US)?;
    let period_us = p.bounded("period_us", 16000.0, false, MAX_PHASE_US)? as u64;
    let duration_us = p.bounded("duration_us", 2_000_000.0, true, MAX_PHASE_US)? as u64;
    if period_us == 0 {
        return Err("periodic: period_us must be at least 1".into());
    }
    let ws = p.bounded("working_set_bytes", 131072.0, false, MAX_WORKING_SET_BYTES as f64)? as u64;
    let mem = MemProfile::single(1.2, 0.3, Access::new(ws, Pattern::Random, 64, Order::Uniform), false, 0.1);
    check_mem("periodic", &mem)?;
    Ok(Workload {
        duration_us: None,
        reference_cpu: None,
        taskgroups: Vec::new(),
        name: format!("periodic-{run_us}us-{period_us}us"),
        tasks: vec![Task {
            name: "periodic".into(),
            threads: (p.num("threads", 1.0)? as u32).max(1),
            nice: p.num("nice", 0.0)? as i32,
            affinity: None,
            repeat: 1,
            prologue_phases: 0,
            forked: false,
            rtapp: None,
            uclamp: Default::default(),
            class: Default::default(),
            taskgroup: None,
            phases: vec![Phase {
                kind: PhaseKind::Periodic { run_us, period_us, count: (duration_us / period_us).max(1) },
                mem,
                mark: None,
                rcu: RcuCalls::default(),
            }],
        }],
    })
}

/// A multi-threaded CPU-bound task: `instructions` per thread, small working set.
pub fn cpu_bound(kv: &[(String, String)]) -> Result<Workload, String> {
    let p = Params::new("cpu-bound", &["threads", "instructions", "cpi", "working_set_bytes"], kv)?;
    let ws = p.bounded("working_set_bytes", 16384.0, false, MAX_WORKING_SET_BYTES as f64)? as u64;
    let mem = MemProfile::single(
        p.num("cpi", 0.9)?,
        0.25,
        Access::new(ws, Pattern::Sequential, 4, Order::Cyclic),
        false,
        0.1,
    );
    check_mem("cpu-bound", &mem)?;
    let instructions = p.bounded("instructions", 2e9, false, MAX_INSTRUCTIONS)?;
    Ok(Workload {
        duration_us: None,
        reference_cpu: None,
        taskgroups: Vec::new(),
        name: "cpu-bound".into(),
        tasks: vec![Task {
            name: "cpu-bound".into(),
            threads: (p.num("threads", 4.0)? as u32).max(1),
            nice: 0,
            affinity: None,
            repeat: 1,
            prologue_phases: 0,
            forked: false,
            rtapp: None,
            uclamp: Default::default(),
            class: Default::default(),
            taskgroup: None,
            phases: vec![Phase {
                kind: PhaseKind::Compute { instructions },
                mem,
                mark: None,
                rcu: RcuCalls::default(),
            }],
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ccbench_semantics() {
        let w = Workload::from_spec("ccbench:size=1048576,pattern=random,iterations=1000").unwrap();
        let ph = &w.tasks[0].phases[0];
        assert_eq!(ph.mem.working_set_bytes(), 4 * 1048576);
        assert_eq!(ph.mem.accesses()[0].stride_bytes, 256);
        assert!(ph.mem.dependent_loads);
        assert_eq!(ph.kind, PhaseKind::Compute { instructions: 1000.0 });
        // size rounds up to a multiple of 2 x stride (stride 16 words -> 32)
        let w = Workload::from_spec("ccbench:size=1000,pattern=16").unwrap();
        assert_eq!(w.tasks[0].phases[0].mem.working_set_bytes(), 4 * 1024);
        assert_eq!(w.tasks[0].phases[0].mem.accesses()[0].stride_bytes, 64);
        let w = Workload::from_spec("ccbench:size=8192,pattern=1").unwrap();
        assert_eq!(w.tasks[0].phases[0].mem.accesses()[0].pattern, Pattern::Sequential);
    }

    #[test]
    fn unknown_keys_and_names_are_errors() {
        let e = Workload::from_spec("ccbench:sise=10").unwrap_err();
        assert!(e.contains("unknown workload key 'sise'") && e.contains("size"), "{e}");
        let e = Workload::from_spec("ccbench:pattern=zigzag").unwrap_err();
        assert!(e.contains("pattern"), "{e}");
        let e = Workload::from_spec("nosuch").unwrap_err();
        assert!(e.contains("unknown workload 'nosuch'"), "{e}");
    }

    #[test]
    fn parallel_phases_and_their_errors() {
        let ok = "name='x'\n[[tasks]]\nname='t'\nthreads=8\n[[tasks.phases]]\nparallel_instructions=8e9\nallocation='dynamic'\nchunk_instructions=1e7\nshared_rmw_fraction=0.1\n";
        let w = Workload::from_toml("p.toml", ok).unwrap();
        let ph = &w.tasks[0].phases[0];
        let dynamic = Allocation::Dynamic { chunk_instructions: 1e7 };
        assert_eq!(ph.kind, PhaseKind::Parallel { total_instructions: 8e9, allocation: dynamic });
        assert_eq!(ph.mem.shared_rmw_fraction, 0.1);
        let stat = ok.replace("allocation='dynamic'\nchunk_instructions=1e7\n", "");
        let kind = &Workload::from_toml("p.toml", &stat).unwrap().tasks[0].phases[0].kind;
        assert_eq!(*kind, PhaseKind::Parallel { total_instructions: 8e9, allocation: Allocation::Static });
        for (bad, says) in [
            (ok.replace("chunk_instructions=1e7\n", ""), "needs a positive chunk_instructions"),
            (ok.replace("'dynamic'", "'guided'"), "must be \"static\" or \"dynamic\""),
            (ok.replace("'dynamic'", "'static'"), "chunk_instructions belongs to"),
            (ok.replace("0.1", "1.5"), "shared_rmw_fraction must be within"),
            (ok.replace("parallel_instructions=8e9", "instructions=8e9"), "belong to parallel_instructions"),
            (ok.replace("8e9", "-1"), "parallel_instructions must be above 0 and at most 9.007199254740992e15, got -1"),
            (ok.replace("chunk_instructions=1e7", "chunk_instructions=1e12"), "chunk_instructions must be in (0, "),
            (ok.replace("threads=8\n", "threads=8\nrepeat=0\n"), "repeat must be in 1..="),
        ] {
            let e = Workload::from_toml("p.toml", &bad).unwrap_err();
            assert!(e.contains(says) && e.starts_with("p.toml: tasks[0]"), "{e}");
        }
    }

    #[test]
    fn rt_priority_needs_a_real_time_policy() {
        let task = |keys: &str| format!("name='x'\n[[tasks]]\nname='t'\n{keys}\n[[tasks.phases]]\ninstructions=10\n");
        let class = |keys: &str| Workload::from_toml("w.toml", &task(keys)).map(|w| w.tasks[0].class);
        assert_eq!(class("policy='rr'\nrt_priority=50"), Ok(SchedClass::RoundRobin(50)));
        assert_eq!(class("policy='SCHED_FIFO'\nrt_priority=1"), Ok(SchedClass::Fifo(1)));
        assert_eq!(class("policy='batch'"), Ok(SchedClass::Batch));
        for (keys, says) in [
            ("rt_priority=50", "w.toml: tasks[0] 't'.rt_priority: give policy = \"fifo\" or \"rr\" with it"),
            (
                "policy='batch'\nrt_priority=50",
                "w.toml: tasks[0] 't'.rt_priority: rt_priority applies only to policy = \"fifo\" or \"rr\" (real \
                 time), not \"batch\"; remove it (a CFS task's priority is its nice)",
            ),
            ("policy='batch'\nrt_priority=-5000", "rt_priority applies only to policy = \"fifo\" or \"rr\""),
            ("policy='idle'\nrt_priority=50", "not \"idle\""),
            ("policy='normal'\nrt_priority=50", "not \"normal\""),
            ("policy='SCHED_OTHER'\nrt_priority=1", "not \"SCHED_OTHER\""),
            // the policy is checked first
            ("policy='fair'\nrt_priority=50", "tasks[0] 't'.policy: unknown policy 'fair'"),
        ] {
            let e = class(keys).unwrap_err();
            assert!(e.contains(says) && !e.contains('\n'), "{keys}: {e}");
        }
    }

    #[test]
    fn a_periodic_phase_releases_at_least_one_job() {
        let phase = |keys: &str| format!("name='x'\n[[tasks]]\nname='t'\n[[tasks.phases]]\nrun_us=100\n{keys}\n");
        let kind = |keys: &str| Workload::from_toml("w.toml", &phase(keys)).map(|w| w.tasks[0].phases[0].kind.clone());
        assert_eq!(
            kind("period_us=1000\ncount=1"),
            Ok(PhaseKind::Periodic { run_us: 100.0, period_us: 1000, count: 1 })
        );
        for keys in ["period_us=1000\ncount=0", "count=0"] {
            let e = kind(keys).unwrap_err();
            assert_eq!(
                e,
                "w.toml: tasks[0] 't'.phases[0].count must be at least 1 (count = 0 would release no job: a phase \
                 that does nothing; give the number of jobs, or duration_us)",
                "{keys}"
            );
        }
    }

    #[test]
    fn rcu_rates_and_costs_have_stated_limits() {
        let phase = |keys: &str| {
            format!("name='x'\n[[tasks]]\nname='t'\n[[tasks.phases]]\ninstructions=1e6\nrcu_lazy=true\n{keys}\n")
        };
        let rcu = |keys: &str| Workload::from_toml("w.toml", &phase(keys)).map(|w| w.tasks[0].phases[0].rcu);
        let at_limits = rcu("call_rcu_per_s=1e9\nrcu_callback_us=1e12").unwrap();
        assert_eq!(at_limits, RcuCalls { per_s: MAX_CALL_RCU_PER_S, callback_us: MAX_PHASE_US, lazy: true });
        assert_eq!(rcu("call_rcu_per_s=0.0\nrcu_callback_us=2.0").unwrap().per_s, 0.0);
        for (keys, says) in [
            ("call_rcu_per_s=1e300\nrcu_callback_us=2.0", "call_rcu_per_s must be within 0..=1000000000, got 1e300"),
            (
                "call_rcu_per_s=1.5e9\nrcu_callback_us=2.0",
                "call_rcu_per_s must be within 0..=1000000000, got 1500000000",
            ),
            ("call_rcu_per_s=inf\nrcu_callback_us=2.0", "call_rcu_per_s must be within 0..=1000000000, got inf"),
            ("call_rcu_per_s=-5.0\nrcu_callback_us=2.0", "call_rcu_per_s must not be negative, got -5"),
            ("call_rcu_per_s=nan\nrcu_callback_us=2.0", "call_rcu_per_s must not be negative, got NaN"),
            (
                "call_rcu_per_s=50.0\nrcu_callback_us=1e300",
                "rcu_callback_us must be above 0 and at most 1e12, got 1e300",
            ),
            ("call_rcu_per_s=50.0\nrcu_callback_us=inf", "rcu_callback_us must be above 0 and at most 1e12, got inf"),
            ("call_rcu_per_s=50.0\nrcu_callback_us=0.0", "rcu_callback_us must be positive, got 0"),
        ] {
            let e = rcu(keys).unwrap_err();
            assert!(e.starts_with("w.toml: tasks[0] 't'.phases[0].") && e.ends_with(says), "{keys}: {e}");
        }
    }

    #[test]
    fn toml_format_and_its_errors() {
        let w = Workload::from_spec("mixed8").unwrap();
        assert_eq!(w.nthreads(), 8);
        assert_eq!(w.tasks[0].phases[0].kind, PhaseKind::Periodic { run_us: 2000.0, period_us: 16000, count: 625 });
        let bad = "name='x'\n[[tasks]]\nname='t'\n[[tasks.phases]]\ninstructions=10\nsleep_us=5\n";
        let e = Workload::from_toml("w.toml", bad).unwrap_err();
        assert!(e.contains("only one of"), "{e}");
        let comp = "name='x'\n[[tasks]]\nname='t'\n[[tasks.phases]]\ninstructions=10\ncomponents=[{fraction=0.25, working_set_bytes=8388608}, {fraction=0.75, working_set_bytes=16384, pattern='sequential'}]\n";
        let w = Workload::from_toml("c.toml", comp).unwrap();
        let m = w.tasks[0].phases[0].mem;
        assert_eq!(m.accesses().len(), 2);
        assert_eq!((m.accesses()[0].working_set_bytes, m.accesses()[0].fraction), (16384, 0.75));
        assert_eq!(m.working_set_bytes(), 16384 + 8388608);
        let e = Workload::from_toml("c.toml", &comp.replace("0.25", "0.3")).unwrap_err();
        assert!(e.contains("sum to 1"), "{e}");
        let bad = "name='x'\n[[tasks]]\nname='t'\nfrobnicate=1\n[[tasks.phases]]\ninstructions=10\n";
        let e = Workload::from_toml("w.toml", bad).unwrap_err();
        assert!(e.starts_with("w.toml:") && e.contains("frobnicate"), "{e}");
    }

    #[test]
    fn tasks_go_in_task_groups_with_their_shares() {
        // Android's cgroups: a background group at 52 shares (init.rc's bg_non_interactive)
        // beside the top app's group at the default
        let text = |group: &str, shares: &str| {
            format!(
                "name='android'\n[[tasks]]\nname='ui'\ntaskgroup='/top-app'\nphases=[{{instructions=1e9}}]\n\
                 [[tasks]]\nname='sync'\ntaskgroup='{group}'\nphases=[{{instructions=1e9}}]\n\
                 [taskgroups.'/background']\n{shares}\n"
            )
        };
        let w = Workload::from_toml("a.toml", &text("/background//", "shares = 52")).unwrap();
        assert_eq!(w.tasks[0].taskgroup.as_deref(), Some("/top-app"));
        assert_eq!(w.tasks[1].taskgroup.as_deref(), Some("/background"));
        let no_clamps = UclampRequest::default();
        assert_eq!(w.taskgroups, [TaskGroupSpec { path: "/background".into(), shares: 52, uclamp: no_clamps }]);
        // the root group is no group
        assert_eq!(Workload::from_toml("a.toml", &text("/", "")).unwrap().tasks[1].taskgroup, None);
        for (group, shares, says) in [
            ("background", "", "a.toml: tasks[1] 'sync'.taskgroup: taskgroup 'background' must start with /"),
            ("/a/./b", "", "has the component '.'"),
            ("/bg", "shares = 1", "taskgroups.\"/background\".shares must be within 2..=262144"),
            ("/bg", "cpu_shares = 5", "unknown field `cpu_shares`"),
        ] {
            let e = Workload::from_toml("a.toml", &text(group, shares)).unwrap_err();
            assert!(e.contains(says) && !e.contains('\n'), "{e}");
        }
        // cpu.uclamp.* as percentages, rounded to the closest capacity (capacity_from_percent)
        let w = Workload::from_toml("a.toml", &text("/bg", "cpu.uclamp.min = 20.5\ncpu.uclamp.max = 30")).unwrap();
        assert_eq!(w.taskgroups[0].uclamp, UclampRequest { min: Some(210), max: Some(307) });
        let w = Workload::from_toml("a.toml", &text("/bg", "cpu.uclamp.max = 100")).unwrap();
        assert_eq!(w.taskgroups[0].uclamp, UclampRequest { min: None, max: Some(1024) });
        assert_eq!((capacity_from_percent("k", 0.0), capacity_from_percent("k", 0.05)), (Ok(0), Ok(1)));
        for (keys, says) in [
            ("cpu.uclamp.max = 100.5", "taskgroups.\"/background\".cpu.uclamp.max must be a percentage within 0..=100"),
            (
                "cpu.uclamp.min = -1",
                "cpu.uclamp.min must be a percentage within 0..=100 with at most two decimals, got -1",
            ),
            ("cpu.uclamp.min = 20.125", "with at most two decimals, got 20.125"),
            ("cpu.uclamp.mid = 20", "unknown field `mid`"),
            ("cpu.shares = 20", "unknown field `shares`"),
        ] {
            let e = Workload::from_toml("a.toml", &text("/bg", keys)).unwrap_err();
            assert!(e.contains(says) && !e.contains('\n'), "{e}");
        }
        let root =
            "name='r'\n[[tasks]]\nname='t'\nphases=[{instructions=1e9}]\n[taskgroups.'/']\ncpu.uclamp.max = 30\n";
        let e = Workload::from_toml("a.toml", root).unwrap_err();
        assert!(e.contains("the root group has no cpu.shares or cpu.uclamp files"), "{e}");
        let deep = format!("/{}", vec!["g"; MAX_TASKGROUP_DEPTH + 1].join("/"));
        assert!(taskgroup_path("at", &deep).unwrap_err().contains("33 levels deep; at most 32"));
        assert_eq!(taskgroup_path("at", "//a//b/").unwrap(), "/a/b");
    }
}
