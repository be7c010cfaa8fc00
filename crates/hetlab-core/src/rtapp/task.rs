//! An rt-app task: its keys, its class, and its phases by rt-app's loop rules
//! (`parse_task_data`), each rt-app phase's events once with its `loop` as a loop over them, and
//! its scheduling attributes applied at each of its loops.

use std::collections::{BTreeMap, BTreeSet};

use super::events::{event_of, Unrolled};
use super::global::Global;
use super::json::{object, whole, Json};
use super::sched::{
    check_phase_clamps, check_taskgroup_policy, cpu_list, dl_class, nodes_membind, policies_in_effect, policy,
    priority, sched_class, taskgroup,
};
use super::warnings::Warnings;
use crate::sched::eevdf;
use crate::workload::{
    PhaseKind, PhaseLoop, RtappSteps, SchedAttr, Task, ThreadCount, UclampRequest, MAX_PHASE_US, MAX_THREADS,
};

/// What one task translates to, and its instance count (0: a template only `fork` starts).
pub(super) type Translated = (Task, u32);

/// What reading a task needs from the rest of the file: its `global`, the barriers' users so
/// far (over every task), the warnings.
pub(super) struct Reading<'r> {
    pub(super) global: &'r Global,
    pub(super) barrier_users: &'r mut BTreeMap<String, u32>,
    pub(super) warnings: &'r mut Warnings,
}

/// The keys rt-app reads in a task object (`parse_task_data`, `parse_sched_data` with the
/// legacy `runtime`/`period`/`deadline`), besides its events when it has no `phases`.
const TASK_KEYS: &str = "instance, loop, delay, phases, cpus, nodes_membind, policy, priority, dl-runtime, \
                         dl-period, dl-deadline, util_min, util_max, taskgroup, and events when it has no phases";

/// The keys rt-app reads in a phase object (`parse_task_phase_data`).
const PHASE_KEYS: &str = "loop, cpus, nodes_membind, policy, priority, dl-runtime, dl-period, dl-deadline, \
                          util_min, util_max, taskgroup, and events";

/// Task `name` of the file (`body`; `at` names it in messages), its taskgroups' names counted
/// in `taskgroups`.
pub(super) fn task(
    at: &str,
    name: &str,
    body: &Json,
    read: Reading,
    taskgroups: &mut BTreeSet<String>,
) -> Result<Translated, String> {
    let Reading { global, barrier_users, warnings } = read;
    let keys = TaskKeys::read(at, body, global, taskgroups, warnings)?;
    let deadline = keys.policy == "SCHED_DEADLINE";
    let (class, nice, slice_us) = if deadline {
        (dl_class(at, keys.dl, keys.priority)?, None, None)
    } else {
        let runtime_key = if keys.legacy_runtime { "runtime (rt-app's legacy dl-runtime key)" } else { "dl-runtime" };
        let slice_us = custom_slice(at, keys.policy, (runtime_key, keys.dl), Scope::Task, warnings);
        let (class, nice) = sched_class(at, keys.policy, keys.priority)?;
        (class, nice, slice_us)
    };
    let mut out = Unrolled::new(at, name, keys.instances, keys.delay_us, global, barrier_users, warnings);
    if keys.delay_us > 0 {
        out.add_delay(keys.delay_us);
    }
    let prologue_phases = out.phase_count();
    let mut loops = Vec::new();
    // rt-app's loop rules (parse_task_data): with phases, the thread loops `loop` times
    // (default forever) over phases that each loop their own `loop` (default 1); without, the
    // task is one phase that loops `loop` times within one thread loop (forever if no `loop`)
    let repeat = match keys.phases {
        Some(phases) => {
            add_phases(at, &keys, deadline, phases, taskgroups, &mut out, &mut loops)?;
            keys.task_loop.unwrap_or(-1.0)
        }
        None => {
            check_taskgroup_policy((at, keys.policy, keys.group.is_some()), std::iter::empty())?;
            out.add_loop(at, 0, None, &keys.events)?;
            match keys.task_loop {
                Some(n) => {
                    let count = if n < 0.0 { u32::MAX } else { n as u32 };
                    if count != 1 {
                        loops.push(PhaseLoop { start: prologue_phases, end: out.phase_count(), count });
                    }
                    1.0
                }
                None => -1.0,
            }
        }
    };
    if out.phase_count() == prologue_phases {
        return Err(format!("{at}: no events"));
    }
    let steps = out.finish();
    let phases = steps.0;
    let task = Task {
        threads: ThreadCount::Fixed(keys.instances),
        nice: nice.unwrap_or(0),
        affinity: keys.affinity,
        repeat: if repeat < 0.0 { u32::MAX } else { repeat as u32 },
        prologue_phases,
        loops,
        rtapp: Some(RtappSteps {
            steps: steps.1,
            ftrace: global.ftrace,
            cumulative_slack: global.cumulative_slack,
            ns_per_loop: global.ns_per_loop,
        }),
        uclamp: UclampRequest::new(at, keys.clamp.0, keys.clamp.1)?,
        class,
        taskgroup: keys.group.filter(|p| p != "/"),
        slice_us,
        ..Task::new(name, phases)
    };
    Ok((task, keys.instances))
}

/// Where a `dl-runtime` was given: for the whole task, or for one of its phases.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Scope {
    Task,
    Phase,
}

/// `dl-runtime` (or the legacy `runtime`) without SCHED_DEADLINE: rt-app passes it in
/// `sched_attr.sched_runtime`, which Linux 6.12 and later take as a SCHED_OTHER or SCHED_BATCH
/// task's custom slice under EEVDF (clamped to 0.1-100 ms as `sched_setattr` does) and older
/// kernels ignore. A task's is its slice under the 6.12 placements (`Task::slice_us`); a
/// phase's would change the slice at each of its loops, which hetlab does not model (noted,
/// ignored). The other keys of a deadline reservation mean nothing outside SCHED_DEADLINE.
pub(super) fn custom_slice(
    at: &str,
    policy: &str,
    (runtime_key, dl): (&str, [Option<u64>; 3]),
    scope: Scope,
    warnings: &mut Warnings,
) -> Option<u32> {
    let runtime_us = dl[0].unwrap_or(0);
    if runtime_us > 0 && matches!(policy, "SCHED_OTHER" | "SCHED_BATCH") {
        let slice_us = eevdf::custom_slice_us(runtime_us as f64) as u32;
        warnings.note(if scope == Scope::Task {
            format!(
                "{at}: {runtime_key} {runtime_us} µs on a {policy} task is Linux 6.12's custom slice (EEVDF, \
                 sched_attr.sched_runtime, {slice_us} µs once clamped): the eevdf and eas-eevdf schedulers use it; \
                 Linux 3.10 and 5.10 (the other schedulers) ignore it"
            )
        } else {
            format!(
                "{at}: {runtime_key} {runtime_us} µs on a {policy} phase is Linux 6.12's custom slice for that \
                 phase; hetlab takes a custom slice for the whole task only and ignores this one"
            )
        });
        return (scope == Scope::Task).then_some(slice_us);
    }
    if dl.iter().any(|v| v.is_some_and(|us| us > 0)) {
        warnings.note(format!(
            "{at}: dl-runtime, dl-period and dl-deadline mean nothing to a {policy} task (SCHED_DEADLINE's \
             reservation; a SCHED_OTHER or SCHED_BATCH slice needs Linux 6.12): ignored, as the kernel ignores them"
        ));
    }
    None
}

/// A task's keys as given.
struct TaskKeys<'j> {
    instances: u32,
    /// Its taskgroup (normalised); `None`: none given, or `""`.
    group: Option<String>,
    /// `loop`: -1 (forever) or a count; `None`: not given.
    task_loop: Option<f64>,
    delay_us: u64,
    /// Its `policy`, else the global default.
    policy: &'j str,
    priority: Option<i64>,
    affinity: Option<Vec<usize>>,
    phases: Option<&'j [(String, Json)]>,
    /// Its events, in order, when it gives no phases.
    events: Vec<(&'j str, &'j Json)>,
    /// `util_min`, `util_max`.
    clamp: (Option<u32>, Option<u32>),
    /// `dl-runtime`, `dl-period`, `dl-deadline`, µs.
    dl: [Option<u64>; 3],
    /// The runtime is rt-app's legacy `runtime` key (a task's `runtime` event without phases).
    legacy_runtime: bool,
}

impl<'j> TaskKeys<'j> {
    fn read(
        at: &str,
        body: &'j Json,
        global: &'j Global,
        taskgroups: &mut BTreeSet<String>,
        warnings: &mut Warnings,
    ) -> Result<TaskKeys<'j>, String> {
        let mut keys = TaskKeys {
            instances: 1,
            group: None,
            task_loop: None,
            delay_us: 0,
            policy: global.default_policy.as_str(),
            priority: None,
            affinity: None,
            phases: None,
            events: Vec::new(),
            // rt-app's util_min/util_max default to -1: not set, sched_setattr leaves them alone
            clamp: (None, None),
            dl: [None; 3],
            legacy_runtime: false,
        };
        for (key, value) in object(at, body)? {
            let at_key = format!("{at}.{key}");
            match key.as_str() {
                "instance" => keys.instances = whole(&at_key, value, 0.0, MAX_THREADS as f64)? as u32,
                "loop" => match whole(&at_key, value, -1.0, u32::MAX as f64)? {
                    0.0 => return Err(format!("{at_key}: 0 loops would run nothing; give -1 (forever) or a count")),
                    n => keys.task_loop = Some(n),
                },
                "delay" => keys.delay_us = whole(&at_key, value, 0.0, MAX_PHASE_US)? as u64,
                "priority" => keys.priority = Some(priority(&at_key, value)?),
                "policy" => keys.policy = policy(&at_key, value)?,
                "cpus" => keys.affinity = Some(cpu_list(&at_key, value)?),
                "phases" => keys.phases = Some(object(&at_key, value)?),
                "util_min" => keys.clamp.0 = Some(whole(&at_key, value, 0.0, 1024.0)? as u32),
                "util_max" => keys.clamp.1 = Some(whole(&at_key, value, 0.0, 1024.0)? as u32),
                "nodes_membind" => nodes_membind(&at_key, value)?,
                "taskgroup" => keys.group = taskgroup(&at_key, value, taskgroups)?,
                "dl-runtime" => keys.dl[0] = Some(whole(&at_key, value, 0.0, MAX_PHASE_US)? as u64),
                "dl-period" => keys.dl[1] = Some(whole(&at_key, value, 0.0, MAX_PHASE_US)? as u64),
                "dl-deadline" => keys.dl[2] = Some(whole(&at_key, value, 0.0, MAX_PHASE_US)? as u64),
                // read below, with the events
                "period" | "deadline" => {}
                k if event_of(k).is_some() => keys.events.push((key.as_str(), value)),
                _ => warnings.ignored_key(&at_key, TASK_KEYS),
            }
        }
        keys.read_legacy_reservation(at, body)?;
        if keys.phases.is_some() {
            // rt-app reads a task's own events only when it has no phases
            for (key, _) in std::mem::take(&mut keys.events) {
                if key != "runtime" {
                    warnings.note(format!(
                        "{at}.{key}: an event beside `phases`; rt-app reads a task's events only when it has no \
                         phases, and ignores it"
                    ));
                }
            }
        }
        Ok(keys)
    }

    /// rt-app's legacy thread keys (`parse_sched_data` for a task): `runtime`, `period` and
    /// `deadline` (µs) fill in `dl-runtime`, `dl-period` and `dl-deadline` where those are not
    /// given or 0, the period defaulting to the runtime and the deadline to the period. So, as in
    /// rt-app, a task without phases whose event is `runtime` gives its duration as the
    /// reservation's runtime too.
    fn read_legacy_reservation(&mut self, at: &str, body: &Json) -> Result<(), String> {
        let members = object(at, body)?;
        let legacy = |key: &str, default: u64| -> Result<u64, String> {
            match members.iter().rev().find(|(k, _)| k == key) {
                Some((_, value)) => Ok(whole(&format!("{at}.{key}"), value, 0.0, MAX_PHASE_US)? as u64),
                None => Ok(default),
            }
        };
        let runtime = match self.dl[0].unwrap_or(0) {
            0 => {
                let us = legacy("runtime", 0)?;
                self.legacy_runtime = us > 0;
                us
            }
            us => us,
        };
        let period = match self.dl[1].unwrap_or(runtime) {
            0 => legacy("period", runtime)?,
            us => us,
        };
        let deadline = match self.dl[2].unwrap_or(period) {
            0 => legacy("deadline", period)?,
            us => us,
        };
        let given = |us: u64| (us > 0).then_some(us);
        self.dl = [given(runtime), given(period), given(deadline)];
        Ok(())
    }
}

/// An rt-app phase's keys as given.
struct PhaseKeys<'j> {
    /// Where it is, for messages.
    at: String,
    /// Its `loop`: a count, or `u32::MAX` for -1 (forever).
    loops: u32,
    /// What it sets at each of its loops (the class and nice value once the policy in effect is
    /// known).
    attr: SchedAttr,
    policy: Option<&'j str>,
    priority: Option<i64>,
    /// `dl-runtime`, `dl-period`, `dl-deadline`, µs.
    dl: [Option<u64>; 3],
    events: Vec<(&'j str, &'j Json)>,
}

impl<'j> PhaseKeys<'j> {
    /// Phase `value` (`at` names it) of a task that is SCHED_DEADLINE if `deadline`.
    fn read(
        at: String,
        value: &'j Json,
        deadline: bool,
        taskgroups: &mut BTreeSet<String>,
        warnings: &mut Warnings,
    ) -> Result<PhaseKeys<'j>, String> {
        let mut keys = PhaseKeys {
            at,
            loops: 1,
            attr: SchedAttr::default(),
            policy: None,
            priority: None,
            dl: [None; 3],
            events: Vec::new(),
        };
        let at = keys.at.as_str();
        for (key, value) in object(at, value)? {
            let at_key = format!("{at}.{key}");
            match key.as_str() {
                "loop" => keys.loops = phase_loop(&at_key, value)?,
                "cpus" => keys.attr.cpus = Some(cpu_list(&at_key, value)?),
                "priority" => keys.priority = Some(priority(&at_key, value)?),
                "util_min" => keys.attr.util_min = Some(whole(&at_key, value, 0.0, 1024.0)? as u32),
                "util_max" => keys.attr.util_max = Some(whole(&at_key, value, 0.0, 1024.0)? as u32),
                "policy" => keys.policy = Some(policy(&at_key, value)?),
                "nodes_membind" => nodes_membind(&at_key, value)?,
                "taskgroup" => keys.attr.taskgroup = taskgroup(&at_key, value, taskgroups)?,
                "dl-runtime" => keys.dl[0] = Some(whole(&at_key, value, 0.0, MAX_PHASE_US)? as u64),
                "dl-period" => keys.dl[1] = Some(whole(&at_key, value, 0.0, MAX_PHASE_US)? as u64),
                "dl-deadline" => keys.dl[2] = Some(whole(&at_key, value, 0.0, MAX_PHASE_US)? as u64),
                k if event_of(k).is_some() => keys.events.push((key.as_str(), value)),
                _ => warnings.ignored_key(&at_key, PHASE_KEYS),
            }
        }
        let sets_reservation = keys.dl.iter().any(|v| v.is_some_and(|us| us > 0));
        // hetlab's SCHED_DEADLINE is a task's from its start to its end, on every CPU
        if keys.policy == Some("SCHED_DEADLINE")
            || (deadline && (keys.policy.or(keys.priority.map(|_| "")).is_some() || sets_reservation))
        {
            return Err(format!(
                "{at}: a phase that changes a SCHED_DEADLINE task's policy or reservation is not supported; give \
                 SCHED_DEADLINE and its dl-runtime, dl-period and dl-deadline to the task"
            ));
        }
        if deadline && keys.attr.cpus.is_some() {
            return Err(format!(
                "{at}: a SCHED_DEADLINE task's CPUs cannot change (sched_setaffinity fails with EBUSY \
                 unless they span the root domain); remove its cpus"
            ));
        }
        Ok(keys)
    }
}

/// A phase's `loop`: a count, or -1 for as long as the run lasts (rt-app's phase_loop never
/// reaches -1). 0 is refused: rt-app would run the phase until its int counter wraps.
fn phase_loop(at: &str, value: &Json) -> Result<u32, String> {
    match whole(at, value, -1.0, f64::from(i32::MAX))? {
        -1.0 => Ok(u32::MAX),
        0.0 => Err(format!(
            "{at}: 0 makes rt-app run the phase until its loop counter wraps (2^32 loops); give -1 (forever) or a \
             count"
        )),
        n => Ok(n as u32),
    }
}

/// The task's rt-app phases into `out`, each one's events once, a phase looping more than
/// once as one of `loops`. rt-app sets a phase's affinity (its own, else the task's) at each of
/// its loops, and its priority and clamps only where it gives them: phases that set any start
/// each loop with a SetSched step, and then every phase does (to put the task's back).
fn add_phases(
    at: &str,
    task: &TaskKeys,
    deadline: bool,
    phases: &[(String, Json)],
    taskgroups: &mut BTreeSet<String>,
    out: &mut Unrolled,
    loops: &mut Vec<PhaseLoop>,
) -> Result<(), String> {
    let mut parsed = Vec::new();
    for (phase_name, phase) in phases {
        let at_phase = format!("{at}.phases.{phase_name}");
        parsed.push(PhaseKeys::read(at_phase, phase, deadline, taskgroups, out.warnings())?);
    }
    set_classes(&mut parsed, task.policy)?;
    for phase in &parsed {
        let policy = phase.policy.unwrap_or(task.policy);
        if !deadline && phase.policy != Some("SCHED_DEADLINE") {
            custom_slice(&phase.at, policy, ("dl-runtime", phase.dl), Scope::Phase, out.warnings());
        }
    }
    let task_clamps = UclampRequest::new(at, task.clamp.0, task.clamp.1)?;
    check_phase_clamps(at, task_clamps, parsed.iter().map(|p| (p.at.as_str(), &p.attr)))?;
    let named = parsed.iter().map(|p| (p.at.as_str(), p.policy, p.attr.taskgroup.is_some()));
    check_taskgroup_policy((at, task.policy, task.group.is_some()), named)?;
    let sets_sched = parsed.iter().any(|p| p.attr != SchedAttr::default());
    for (index, phase) in parsed.into_iter().enumerate() {
        if phase.events.is_empty() {
            // parse_task_phase_data: "No events found. Task must have events or it's useless"
            return Err(format!("{}: no events (rt-app refuses a phase without events)", phase.at));
        }
        let attr = SchedAttr { cpus: phase.attr.cpus.or_else(|| task.affinity.clone()), ..phase.attr };
        let sched = sets_sched.then_some(PhaseKind::SetSched(attr));
        let start = out.phase_count();
        out.add_loop(&phase.at, index as u32, sched, &phase.events)?;
        if phase.loops != 1 {
            loops.push(PhaseLoop { start, end: out.phase_count(), count: phase.loops });
        }
    }
    Ok(())
}

/// The class and nice value each phase that gives a policy or a priority sets, by the policy in
/// effect when it starts (`task_policy` the task's own).
fn set_classes(parsed: &mut [PhaseKeys], task_policy: &str) -> Result<(), String> {
    let at_phases: Vec<String> = parsed.iter().map(|p| p.at.clone()).collect();
    let set: Vec<Option<&str>> = parsed.iter().map(|p| p.policy).collect();
    let priority_only: Vec<bool> = parsed.iter().map(|p| p.policy.is_none() && p.priority.is_some()).collect();
    let in_effect = policies_in_effect(&at_phases, &set, &priority_only, task_policy)?;
    for (phase, current) in parsed.iter_mut().zip(in_effect) {
        if phase.policy.is_some() || phase.priority.is_some() {
            let (class, nice) = sched_class(&phase.at, phase.policy.unwrap_or(current), phase.priority)?;
            // a priority alone keeps the policy: CFS's is a nice value only
            phase.attr.class = (phase.policy.is_some() || class.rt_priority().is_some()).then_some(class);
            phase.attr.nice = nice;
        }
    }
    Ok(())
}
