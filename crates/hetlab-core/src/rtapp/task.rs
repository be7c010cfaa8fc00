//! An rt-app task: its keys, its class, and its phases unrolled by rt-app's loop rules
//! (`parse_task_data`), each rt-app phase's scheduling attributes applied at each of its loops.

use std::collections::{BTreeMap, BTreeSet};

use super::events::{event_of, Unrolled, MAX_PHASES};
use super::global::Global;
use super::json::{object, whole, Json};
use super::sched::{
    check_phase_clamps, check_taskgroup_policy, cpu_list, dl_class, nodes_membind, policies_in_effect, policy,
    priority, sched_class, taskgroup,
};
use crate::workload::{PhaseKind, RtappSteps, SchedAttr, Task, ThreadCount, UclampRequest, MAX_PHASE_US, MAX_THREADS};

/// What one task translates to, and its instance count (0: a template only `fork` starts).
pub(super) type Translated = (Task, u32);

/// Task `name` of the file (`body`; `at` names it in errors): its phases' barriers counted in
/// `barrier_users`, its taskgroups' names in `taskgroups`.
pub(super) fn task(
    at: &str,
    name: &str,
    body: &Json,
    global: &Global,
    barrier_users: &mut BTreeMap<String, u32>,
    taskgroups: &mut BTreeSet<String>,
) -> Result<Translated, String> {
    let keys = TaskKeys::read(at, body, global, taskgroups)?;
    let deadline = keys.policy == "SCHED_DEADLINE";
    let (class, nice) = if deadline {
        (dl_class(at, keys.dl, keys.priority)?, None)
    } else if keys.dl.iter().any(Option::is_some) {
        return Err(format!(
            "{at}: dl-runtime, dl-period and dl-deadline belong to SCHED_DEADLINE (Linux 6.12's CFS slice is not \
             modelled)"
        ));
    } else {
        sched_class(at, keys.policy, keys.priority)?
    };
    let mut out = Unrolled::new(at, name, keys.instances, keys.delay_us, global, barrier_users);
    if keys.delay_us > 0 {
        out.add_delay(keys.delay_us);
    }
    let prologue_phases = out.phase_count();
    // rt-app's loop rules (parse_task_data): with phases, the thread loops `loop` times
    // (default forever) over phases that each loop their own `loop` (default 1); without, the
    // task is one phase that loops `loop` times within one thread loop (forever if no `loop`)
    let (repeat, repeats_are_phase_loops) = match keys.phases {
        Some(_) if !keys.events.is_empty() => {
            return Err(format!("{at}: give events either in phases or in the task, not both"));
        }
        Some(phases) => {
            add_phases(at, &keys, deadline, phases, taskgroups, &mut out)?;
            (keys.task_loop.unwrap_or(-1.0), false)
        }
        None => {
            check_taskgroup_policy((at, keys.policy, keys.group.is_some()), std::iter::empty())?;
            out.add_loop(at, 0, 0, None, &keys.events)?;
            (keys.task_loop.unwrap_or(-1.0), keys.task_loop.is_some())
        }
    };
    if out.phase_count() == prologue_phases {
        return Err(format!("{at}: no events"));
    }
    let (phases, steps) = out.finish();
    let task = Task {
        threads: ThreadCount::Fixed(keys.instances),
        nice: nice.unwrap_or(0),
        affinity: keys.affinity,
        repeat: if repeat < 0.0 { u32::MAX } else { repeat as u32 },
        prologue_phases,
        rtapp: Some(RtappSteps { steps, repeats_are_phase_loops }),
        uclamp: UclampRequest::new(at, keys.clamp.0, keys.clamp.1)?,
        class,
        taskgroup: keys.group.filter(|p| p != "/"),
        ..Task::new(name, phases)
    };
    Ok((task, keys.instances))
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
}

impl<'j> TaskKeys<'j> {
    fn read(
        at: &str,
        body: &'j Json,
        global: &'j Global,
        taskgroups: &mut BTreeSet<String>,
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
                k if event_of(k).is_some() => keys.events.push((key.as_str(), value)),
                _ => return Err(format!("{at_key}: unknown or unsupported task key")),
            }
        }
        Ok(keys)
    }
}

/// An rt-app phase's keys as given.
struct PhaseKeys<'j> {
    /// Where it is, for errors.
    at: String,
    loops: u32,
    /// What it sets at each of its loops (the class and nice value once the policy in effect is
    /// known).
    attr: SchedAttr,
    policy: Option<&'j str>,
    priority: Option<i64>,
    events: Vec<(&'j str, &'j Json)>,
}

impl<'j> PhaseKeys<'j> {
    /// Phase `value` (`at` names it) of a task that is SCHED_DEADLINE if `deadline`.
    fn read(
        at: String,
        value: &'j Json,
        deadline: bool,
        taskgroups: &mut BTreeSet<String>,
    ) -> Result<PhaseKeys<'j>, String> {
        let mut keys =
            PhaseKeys { at, loops: 1, attr: SchedAttr::default(), policy: None, priority: None, events: Vec::new() };
        let at = keys.at.as_str();
        for (key, value) in object(at, value)? {
            let at_key = format!("{at}.{key}");
            match key.as_str() {
                "loop" => keys.loops = whole(&at_key, value, 1.0, MAX_PHASES as f64)? as u32,
                "cpus" => keys.attr.cpus = Some(cpu_list(&at_key, value)?),
                "priority" => keys.priority = Some(priority(&at_key, value)?),
                "util_min" => keys.attr.util_min = Some(whole(&at_key, value, 0.0, 1024.0)? as u32),
                "util_max" => keys.attr.util_max = Some(whole(&at_key, value, 0.0, 1024.0)? as u32),
                "policy" => keys.policy = Some(policy(&at_key, value)?),
                "nodes_membind" => nodes_membind(&at_key, value)?,
                "taskgroup" => keys.attr.taskgroup = taskgroup(&at_key, value, taskgroups)?,
                k if event_of(k).is_some() => keys.events.push((key.as_str(), value)),
                _ => return Err(format!("{at_key}: unknown or unsupported phase key")),
            }
        }
        // hetlab's SCHED_DEADLINE is a task's from its start to its end, on every CPU
        if keys.policy == Some("SCHED_DEADLINE") || (deadline && keys.policy.or(keys.priority.map(|_| "")).is_some()) {
            return Err(format!(
                "{at}: a phase that changes a SCHED_DEADLINE task's policy is not supported; give \
                 SCHED_DEADLINE to the task"
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

/// The task's rt-app phases, each loop of each unrolled into `out`. rt-app sets a phase's
/// affinity (its own, else the task's) at each of its loops, and its priority and clamps only
/// where it gives them: phases that set any become a SetSched step at each loop, and then every
/// phase does (to put the task's back).
fn add_phases(
    at: &str,
    task: &TaskKeys,
    deadline: bool,
    phases: &[(String, Json)],
    taskgroups: &mut BTreeSet<String>,
    out: &mut Unrolled,
) -> Result<(), String> {
    let mut parsed = Vec::new();
    for (phase_name, phase) in phases {
        parsed.push(PhaseKeys::read(format!("{at}.phases.{phase_name}"), phase, deadline, taskgroups)?);
    }
    set_classes(&mut parsed, task.policy)?;
    let task_clamps = UclampRequest::new(at, task.clamp.0, task.clamp.1)?;
    check_phase_clamps(at, task_clamps, parsed.iter().map(|p| (p.at.as_str(), &p.attr)))?;
    let named = parsed.iter().map(|p| (p.at.as_str(), p.policy, p.attr.taskgroup.is_some()));
    check_taskgroup_policy((at, task.policy, task.group.is_some()), named)?;
    let sets_sched = parsed.iter().any(|p| p.attr != SchedAttr::default());
    for (index, phase) in parsed.into_iter().enumerate() {
        let attr = SchedAttr { cpus: phase.attr.cpus.or_else(|| task.affinity.clone()), ..phase.attr };
        let sched = sets_sched.then_some(PhaseKind::SetSched(attr));
        for phase_loop in 0..phase.loops {
            out.add_loop(&phase.at, index as u32, phase_loop, sched.clone(), &phase.events)?;
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
