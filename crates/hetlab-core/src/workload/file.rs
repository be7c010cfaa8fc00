//! The workload TOML format (examples in data/workloads/, the keys in docs/workloads.md): its
//! schema, and each table read into the model with every figure checked; an error names the
//! file, the task, the phase and the key.

use serde::Deserialize;
use std::collections::BTreeMap;

use super::spread::{Spread, MAX_INSTRUCTIONS_CV};
use super::{
    access_from, capacity_from_percent, check_mem, taskgroup_path, within, Allocation, DlParams, IrqArrivals,
    IrqStream, MemProfile, Order, Pattern, Phase, PhaseKind, RcuCalls, SchedClass, Task, TaskGroupSpec, ThreadCount,
    UclampRequest, Workload, DEFAULT_CPI, DEFAULT_REFS_PER_INSTR, MAX_ACCESSES, MAX_CALL_RCU_PER_S, MAX_INSTRUCTIONS,
    MAX_PHASE_US, TASKGROUP_DEFAULT_SHARES, TASKGROUP_MAX_SHARES, TASKGROUP_MIN_SHARES,
};
use crate::isa::Mix;

/// Most chunks a dynamic fork-join phase is cut into (each is an engine event).
const MAX_CHUNKS: f64 = 1e7;

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
    /// The device interrupts the workload drives (`[[irqs]]`).
    #[serde(default)]
    irqs: Vec<IrqFile>,
}

/// One `[[irqs]]` table: a device's interrupts, on its clock (`period_us`) or at random
/// (`mean_interval_us`), from `start_us`, `count` of them (or until the workload is done),
/// posting the semaphore `posts` every `every` of them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IrqFile {
    device: String,
    period_us: Option<f64>,
    mean_interval_us: Option<f64>,
    #[serde(default)]
    start_us: f64,
    count: Option<u64>,
    posts: Option<String>,
    every: Option<u64>,
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
    /// The run ends when this task's threads are done (the others are stopped then).
    #[serde(default)]
    ends_run: bool,
    /// A CFS task's own EEVDF slice, µs (`sched_attr.sched_runtime`, Linux 6.12; 100..=100000).
    slice_us: Option<u32>,
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
    /// Wait on a semaphore another thread or an interrupt posts (`sem_wait`).
    pub(crate) sem_wait: Option<String>,
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
    /// Coefficient of variation of an `instructions` phase's work, drawn at each entry
    /// (`workload::spread`).
    pub(crate) instructions_cv: Option<f64>,
    /// A `sleep_us` phase ends late by up to this long (uniform), drawn at each entry; on a
    /// `frames` phase, each vsync's wake-up.
    pub(crate) sleep_late_max_us: Option<f64>,
    /// An `instructions` phase done as this many frames, each at the next vsync (`vsync_us`).
    pub(crate) frames: Option<u64>,
    /// The display's refresh period, µs (with `frames`).
    pub(crate) vsync_us: Option<f64>,
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

impl PhaseFile {
    pub(crate) fn into_phase(self, at: &str) -> Result<Phase, String> {
        let mem = self.mem_profile(at)?;
        let kind = self.kind(at)?;
        if !matches!(kind, PhaseKind::Periodic { .. })
            && (self.period_us.is_some() || self.count.is_some() || self.duration_us.is_some())
        {
            return Err(format!("{at}: period_us, count and duration_us belong to run_us phases"));
        }
        if !matches!(kind, PhaseKind::Frames { .. }) && (self.frames.is_some() || self.vsync_us.is_some()) {
            return Err(format!("{at}: frames and vsync_us belong to instructions phases"));
        }
        let rcu = self.rcu_calls(at, &kind)?;
        let spread = self.spread(at, &kind)?;
        Ok(Phase { kind, mem, mark: self.mark, rcu, spread })
    }

    /// How the phase's amount varies per entry: `instructions_cv` on an `instructions` phase,
    /// `sleep_late_max_us` on a `sleep_us` phase.
    fn spread(&self, at: &str, kind: &PhaseKind) -> Result<Spread, String> {
        let mut spread = Spread::NONE;
        if let Some(cv) = self.instructions_cv {
            if !matches!(kind, PhaseKind::Compute { .. } | PhaseKind::Frames { .. }) {
                return Err(format!("{at}: instructions_cv belongs to instructions phases"));
            }
            spread.instructions_cv = within(&format!("{at}.instructions_cv"), cv, true, MAX_INSTRUCTIONS_CV)?;
        }
        if let Some(late) = self.sleep_late_max_us {
            if !matches!(kind, PhaseKind::Sleep { .. } | PhaseKind::Frames { .. }) {
                return Err(format!("{at}: sleep_late_max_us belongs to sleep_us and frames phases"));
            }
            within(&format!("{at}.sleep_late_max_us"), late, true, MAX_PHASE_US)?;
            spread.sleep_late_max_us = late;
        }
        Ok(spread)
    }

    /// The phase's memory profile: one access component or several, the instruction mix, the
    /// shares of shared data.
    fn mem_profile(&self, at: &str) -> Result<MemProfile, String> {
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
        if let Some(components) = &self.components {
            if single {
                return Err(format!(
                    "{at}: give either components or working_set_bytes/pattern/stride_bytes/order, not both"
                ));
            }
            let accesses = components_of(at, components)?;
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
        Ok(mem)
    }

    /// What the phase does: exactly one of its kinds' keys given, and that kind's figures.
    fn kind(&self, at: &str) -> Result<PhaseKind, String> {
        let kinds = [
            self.parallel_instructions.is_some(),
            self.instructions.is_some(),
            self.sleep_us.is_some(),
            self.run_us.is_some(),
            self.suspend.is_some(),
            self.resume.is_some(),
            self.sem_wait.is_some(),
        ];
        const ONE_OF: &str = "instructions, parallel_instructions, sleep_us, run_us, suspend, resume or sem_wait";
        match kinds.iter().filter(|&&k| k).count() {
            0 => return Err(format!("{at}: a phase needs one of {ONE_OF}")),
            1 => {}
            _ => return Err(format!("{at}: give only one of {ONE_OF}")),
        }
        let event = |name: &Option<String>| -> Result<String, String> {
            match name {
                Some(n) if !n.is_empty() => Ok(n.clone()),
                _ => Err(format!("{at}: an event name must not be empty")),
            }
        };
        if self.parallel_instructions.is_none() && (self.allocation.is_some() || self.chunk_instructions.is_some()) {
            return Err(format!("{at}: allocation and chunk_instructions belong to parallel_instructions phases"));
        }
        Ok(match (self.instructions, self.sleep_us, self.run_us) {
            _ if self.parallel_instructions.is_some() => self.parallel_kind(at)?,
            _ if self.suspend.is_some() => PhaseKind::Suspend { event: event(&self.suspend)? },
            _ if self.resume.is_some() => PhaseKind::Resume { event: event(&self.resume)? },
            _ if self.sem_wait.is_some() => {
                PhaseKind::Sync { op: super::SyncOp::SemWait, object: event(&self.sem_wait)? }
            }
            (Some(n), None, None) => {
                let instructions = within(&format!("{at}.instructions"), n, false, MAX_INSTRUCTIONS)?;
                self.frames_kind(at, instructions)?.unwrap_or(PhaseKind::Compute { instructions })
            }
            (None, Some(d), None) => {
                within(&format!("{at}.sleep_us"), d as f64, true, MAX_PHASE_US)?;
                PhaseKind::Sleep { duration_us: d }
            }
            (None, None, Some(run_us)) => self.periodic_kind(at, run_us)?,
            _ => unreachable!("exactly one kind, checked above"),
        })
    }

    /// An `instructions` phase with `frames` and `vsync_us`: that many frames of `instructions`
    /// each, paced by the vsync (None: no `frames`, a plain work phase).
    fn frames_kind(&self, at: &str, instructions: f64) -> Result<Option<PhaseKind>, String> {
        match (self.frames, self.vsync_us) {
            (None, None) => Ok(None),
            (Some(0), _) => Err(format!("{at}.frames must be at least 1 (leave it out for one job of work)")),
            (Some(frames), Some(vsync_us)) => {
                let vsync_us = within(&format!("{at}.vsync_us"), vsync_us, false, MAX_PHASE_US)?;
                Ok(Some(PhaseKind::Frames { instructions, frames, vsync_us }))
            }
            _ => Err(format!("{at}: give frames and vsync_us together (the frames and the display's refresh period)")),
        }
    }

    /// A fork-join phase: its work and how the threads split it.
    fn parallel_kind(&self, at: &str) -> Result<PhaseKind, String> {
        let total = self.parallel_instructions.unwrap_or_default();
        within(&format!("{at}.parallel_instructions"), total, false, MAX_INSTRUCTIONS)?;
        let allocation = match (self.allocation.as_deref(), self.chunk_instructions) {
            (None | Some("static"), None) => Allocation::Static,
            (Some("static"), Some(_)) => {
                return Err(format!("{at}: chunk_instructions belongs to allocation = \"dynamic\""))
            }
            // A chunk larger than the phase's work leaves the pool looking empty (below a
            // millionth of a chunk is taken as rounding): the phase would do nothing.
            // Each chunk is an event of the engine: at least one instruction, and at most
            // MAX_CHUNKS of them per phase (1e-300 ran without end).
            (Some("dynamic"), Some(c)) if c.is_finite() && c < (total / MAX_CHUNKS).max(1.0) => {
                return Err(format!(
                    "{at}.chunk_instructions must be at least {} (one instruction, and at most {MAX_CHUNKS:e} chunks \
                     of the phase's parallel_instructions), got {c}",
                    (total / MAX_CHUNKS).max(1.0)
                ))
            }
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
        Ok(PhaseKind::Parallel { total_instructions: total, allocation })
    }

    /// A `run_us` phase: `run_us` of reference work released `count` times (or for
    /// `duration_us`) every `period_us`.
    fn periodic_kind(&self, at: &str, run_us: f64) -> Result<PhaseKind, String> {
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
        Ok(PhaseKind::Periodic { run_us, period_us, count })
    }

    /// The RCU callbacks a work phase queues (`call_rcu_per_s` with `rcu_callback_us`).
    fn rcu_calls(&self, at: &str, kind: &PhaseKind) -> Result<RcuCalls, String> {
        Ok(match (self.call_rcu_per_s, self.rcu_callback_us) {
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
                if !matches!(kind, PhaseKind::Compute { .. } | PhaseKind::Periodic { .. } | PhaseKind::Frames { .. }) {
                    return Err(format!("{at}: call_rcu_per_s belongs to work phases (instructions or run_us)"));
                }
                RcuCalls { per_s, callback_us, lazy: self.rcu_lazy.unwrap_or(false) }
            }
            _ => return Err(format!("{at}: give call_rcu_per_s and rcu_callback_us together (rcu_lazy is optional)")),
        })
    }
}

/// A phase's `components`: 1 to `MAX_ACCESSES` access components whose fractions sum to 1,
/// smallest working set first.
fn components_of(at: &str, components: &[AccessFile]) -> Result<Vec<super::Access>, String> {
    if components.is_empty() || components.len() > MAX_ACCESSES {
        return Err(format!("{at}.components: give 1 to {MAX_ACCESSES} components, got {}", components.len()));
    }
    let mut accesses = Vec::new();
    for (i, c) in components.iter().enumerate() {
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
    Ok(accesses)
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
            tasks.push(t.into_task(&at)?);
        }
        let taskgroups = taskgroups_of(origin, file.taskgroups)?;
        let irqs = irqs_of(origin, file.irqs)?;
        let w = Workload { name: file.name, tasks, duration_us: None, reference_cpu: None, taskgroups, irqs };
        w.check_threads(origin)?;
        Ok(w)
    }
}

/// The `[[irqs]]` tables, each checked; `origin` names the file in errors.
fn irqs_of(origin: &str, files: Vec<IrqFile>) -> Result<Vec<IrqStream>, String> {
    let mut irqs = Vec::new();
    for (i, f) in files.into_iter().enumerate() {
        let at = format!("{origin}: irqs[{i}] '{}'", f.device);
        if f.device.is_empty() {
            return Err(format!("{at}.device: name one of the platform's [kernel] devices"));
        }
        let arrivals = match (f.period_us, f.mean_interval_us) {
            (Some(p), None) => {
                IrqArrivals::Periodic { period_us: within(&format!("{at}.period_us"), p, false, MAX_PHASE_US)? }
            }
            (None, Some(m)) => IrqArrivals::Poisson {
                mean_interval_us: within(&format!("{at}.mean_interval_us"), m, false, MAX_PHASE_US)?,
            },
            _ => {
                return Err(format!(
                    "{at}: give period_us (the device's clock) or mean_interval_us (random), one of them"
                ))
            }
        };
        within(&format!("{at}.start_us"), f.start_us, true, MAX_PHASE_US)?;
        if f.count == Some(0) {
            return Err(format!("{at}.count must be at least 1 (leave it out to run until the workload is done)"));
        }
        let every = f.every.unwrap_or(1);
        if every == 0 || (f.posts.is_none() && f.every.is_some()) {
            return Err(format!("{at}.every must be at least 1 and goes with posts"));
        }
        if f.posts.as_deref() == Some("") {
            return Err(format!("{at}.posts: a semaphore name must not be empty"));
        }
        irqs.push(IrqStream {
            device: f.device,
            arrivals,
            start_us: f.start_us,
            count: f.count,
            posts: f.posts,
            every,
        });
    }
    Ok(irqs)
}

impl TaskFile {
    /// The task, its figures checked; `at` names it in errors.
    fn into_task(self, at: &str) -> Result<Task, String> {
        if self.threads == 0 {
            return Err(format!("{at}.threads must be at least 1"));
        }
        if !(-20..=19).contains(&self.nice) {
            return Err(format!("{at}.nice must be within -20..=19, got {}", self.nice));
        }
        if self.phases.is_empty() {
            return Err(format!("{at}.phases: a task needs at least one phase"));
        }
        if self.repeat == 0 {
            return Err(format!(
                "{at}.repeat must be in 1..={} (repeat = 0 would run the task's phases no times: a task \
                 that does nothing; leave repeat out to run them once)",
                u32::MAX
            ));
        }
        let mut phases = Vec::new();
        for (pi, p) in self.phases.into_iter().enumerate() {
            phases.push(p.into_phase(&format!("{at}.phases[{pi}]"))?);
        }
        let uclamp = UclampRequest::new(at, self.util_min, self.util_max)?;
        let class = class_of(
            at,
            self.policy.as_deref(),
            self.rt_priority,
            [self.dl_runtime_us, self.dl_deadline_us, self.dl_period_us],
        )?;
        let taskgroup = match self.taskgroup {
            Some(path) => Some(taskgroup_path(&format!("{at}.taskgroup"), &path)?).filter(|p| p != "/"),
            None => None,
        };
        let slice_us = match self.slice_us {
            Some(_) if !class.is_fair() => {
                return Err(format!("{at}.slice_us: a slice is a CFS task's (policy normal, batch or idle); remove it"))
            }
            Some(us) if !(100..=100_000).contains(&us) => {
                return Err(format!(
                "{at}.slice_us must be in 100..=100000 µs (sched_setattr clamps sched_runtime to 0.1-100 ms), got {us}"
            ))
            }
            s => s,
        };
        Ok(Task {
            threads: ThreadCount::Fixed(self.threads),
            nice: self.nice,
            affinity: self.affinity,
            repeat: self.repeat,
            uclamp,
            class,
            taskgroup,
            ends_run: self.ends_run,
            slice_us,
            ..Task::new(self.name, phases)
        })
    }
}

/// A task's class from its `policy`, `rt_priority` and SCHED_DEADLINE's `dl_runtime_us`,
/// `dl_deadline_us`, `dl_period_us` (`dl`, in that order); `at` names the task in errors.
fn class_of(at: &str, policy: Option<&str>, priority: Option<i64>, dl: [Option<u64>; 3]) -> Result<SchedClass, String> {
    let [dl_runtime_us, dl_deadline_us, dl_period_us] = dl;
    Ok(match (policy, priority) {
        (Some(policy), None) if SchedClass::names_deadline(policy) => {
            let Some(runtime_us) = dl_runtime_us else {
                return Err(format!("{at}: policy = \"deadline\" needs dl_runtime_us"));
            };
            SchedClass::Deadline(DlParams::from_us(at, runtime_us, dl_deadline_us, dl_period_us)?)
        }
        _ if dl.iter().any(Option::is_some) => {
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
        (None, Some(_)) => return Err(format!("{at}.rt_priority: give policy = \"fifo\" or \"rr\" with it")),
    })
}

/// The task groups the file declares (`[taskgroups."/path"]`), their `cpu.shares` and
/// `cpu.uclamp.*` checked; `origin` names the file in errors.
fn taskgroups_of(origin: &str, declared: BTreeMap<String, TaskGroupFile>) -> Result<Vec<TaskGroupSpec>, String> {
    let mut taskgroups = Vec::new();
    for (path, group) in declared {
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
    Ok(taskgroups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{UclampRequest, MAX_TASKGROUP_DEPTH};

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
            // issue 34: 1e-300 cut the phase into ~1e310 chunks and ran without end
            (
                ok.replace("chunk_instructions=1e7", "chunk_instructions=1e-300"),
                "chunk_instructions must be at least 800",
            ),
            (ok.replace("chunk_instructions=1e7", "chunk_instructions=0.5"), "chunk_instructions must be at least 800"),
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
    fn a_phases_spread_is_read_from_the_file_and_checked() {
        let file = |phase: &str| format!("name='x'\n[[tasks]]\nname='t'\n[[tasks.phases]]\n{phase}\n");
        let spread = |phase: &str| Workload::from_toml("w.toml", &file(phase)).map(|w| w.tasks[0].phases[0].spread);
        assert_eq!(spread("instructions=1e6\ninstructions_cv=0.25").unwrap().instructions_cv, 0.25);
        assert_eq!(spread("sleep_us=10\nsleep_late_max_us=2000.0").unwrap().sleep_late_max_us, 2000.0);
        assert_eq!(spread("instructions=1e6").unwrap(), Spread::NONE);
        for (phase, says) in [
            ("instructions=1e6\ninstructions_cv=1.5", "instructions_cv must be within 0..=1, got 1.5"),
            ("instructions=1e6\ninstructions_cv=nan", "instructions_cv must be within 0..=1, got NaN"),
            ("sleep_us=10\ninstructions_cv=0.1", "instructions_cv belongs to instructions phases"),
            ("instructions=1e6\nsleep_late_max_us=5.0", "sleep_late_max_us belongs to sleep_us and frames phases"),
            ("sleep_us=10\nsleep_late_max_us=-1.0", "sleep_late_max_us must be within"),
        ] {
            let e = spread(phase).unwrap_err();
            assert!(e.contains(says), "{phase}: {e}");
        }
    }

    #[test]
    fn a_frames_phase_is_read_from_the_file_and_checked() {
        let file = |phase: &str| format!("name='x'\n[[tasks]]\nname='t'\n[[tasks.phases]]\n{phase}\n");
        let phase = |keys: &str| Workload::from_toml("w.toml", &file(keys)).map(|w| w.tasks[0].phases[0].clone());
        let p =
            phase("instructions=1.2e7\nframes=30\nvsync_us=16666.667\ninstructions_cv=0.05\nsleep_late_max_us=50.0")
                .unwrap();
        assert_eq!(p.kind, PhaseKind::Frames { instructions: 1.2e7, frames: 30, vsync_us: 16666.667 });
        assert_eq!((p.spread.instructions_cv, p.spread.sleep_late_max_us), (0.05, 50.0));
        for (keys, says) in [
            ("instructions=1e6\nframes=0\nvsync_us=16666.7", "frames must be at least 1"),
            ("instructions=1e6\nframes=3", "give frames and vsync_us together"),
            ("instructions=1e6\nvsync_us=16666.7", "give frames and vsync_us together"),
            ("instructions=1e6\nframes=3\nvsync_us=0.0", "vsync_us must be above 0"),
            ("sleep_us=10\nframes=3\nvsync_us=16666.7", "frames and vsync_us belong to instructions phases"),
        ] {
            let e = phase(keys).unwrap_err();
            assert!(e.contains(says), "{keys}: {e}");
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
