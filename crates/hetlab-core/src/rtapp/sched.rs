//! The scheduling attributes an rt-app task or phase gives (`cpus`, `nodes_membind`, `policy`,
//! `priority`, SCHED_DEADLINE's `dl-*`, `taskgroup`, `util_min`/`util_max`), read and checked as
//! rt-app and the kernel check them.

use std::collections::BTreeSet;

use super::json::{text, whole, Json};
use crate::workload::{taskgroup_path, DlParams, SchedAttr, SchedClass, UclampRequest, UTIL_CLAMP_SCALE};

/// rt-app's `max_nbr_tgs` (src/rt-app_taskgroups.c): the most distinct taskgroup names a file
/// may give.
const MAX_TASKGROUPS: usize = 32;

/// rt-app's `cpus`: the CPUs a thread may run on.
pub(super) fn cpu_list(at: &str, value: &Json) -> Result<Vec<usize>, String> {
    let Json::Arr(cpus) = value else { return Err(format!("{at} must be an array of CPU numbers")) };
    cpus.iter().map(|c| whole(at, c, 0.0, 4095.0).map(|c| c as usize)).collect()
}

/// `nodes_membind`: the NUMA nodes a thread's memory comes from. hetlab's SoCs have one memory
/// node (node 0), so binding to it changes nothing; another node is rt-app's own error ("Invalid
/// node %u in numaset", beyond `numa_max_node()`).
pub(super) fn nodes_membind(at: &str, value: &Json) -> Result<(), String> {
    let Json::Arr(nodes) = value else { return Err(format!("{at} must be an array of NUMA node numbers")) };
    for node in nodes {
        let n = whole(at, node, 0.0, 4095.0)?;
        if n != 0.0 {
            return Err(format!("{at}: node {n} does not exist (the platform has one memory node, node 0)"));
        }
    }
    Ok(())
}

/// rt-app's `policy` (`string_to_policy`, src/rt-app_utils.c; SCHED_BATCH since rt-app's
/// "Add SCHED_BATCH scheduling policy support", 2026): one hetlab schedules, or an error naming
/// what it does not.
pub(super) fn policy<'v>(at: &str, value: &'v Json) -> Result<&'v str, String> {
    match text(at, value)? {
        p @ ("SCHED_OTHER" | "SCHED_BATCH" | "SCHED_IDLE" | "SCHED_FIFO" | "SCHED_RR" | "SCHED_DEADLINE") => Ok(p),
        other => Err(format!(
            "{at}: unknown policy '{other}'; rt-app knows SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_RR, SCHED_FIFO and \
             SCHED_DEADLINE"
        )),
    }
}

/// rt-app's `priority` as given: a nice value or a real-time priority, by the policy (which
/// checks its range and says which one applies: [`sched_class`], `SchedClass::parse`).
pub(super) fn priority(at: &str, value: &Json) -> Result<i64, String> {
    Ok(whole(at, value, f64::from(i32::MIN), f64::from(i32::MAX))? as i64)
}

/// The class and nice value of rt-app `policy` at `priority`: a nice value for SCHED_OTHER and
/// SCHED_BATCH (default 0), a `sched_priority` for the real-time policies (default 10): rt-app.h's
/// DEFAULT_THREAD_NICE and DEFAULT_THREAD_PRIORITY. SCHED_IDLE's priority is not applied
/// (rt-app sets the nice value of SCHED_OTHER and SCHED_BATCH only, `_set_thread_cfs`).
pub(super) fn sched_class(at: &str, policy: &str, priority: Option<i64>) -> Result<(SchedClass, Option<i32>), String> {
    if policy == "SCHED_IDLE" {
        return Ok((SchedClass::Idle, None));
    }
    let class = match policy {
        "SCHED_OTHER" => SchedClass::Normal,
        "SCHED_BATCH" => SchedClass::Batch,
        _ => return Ok((SchedClass::parse(at, policy, Some(priority.unwrap_or(10)))?, None)),
    };
    match priority.unwrap_or(0) {
        nice @ -20..=19 => Ok((class, Some(nice as i32))),
        nice => Err(format!("{at}: a {policy} priority is a nice value within -20..=19, got {nice}")),
    }
}

/// A SCHED_DEADLINE task's attributes from rt-app's `dl-runtime`, `dl-period` and `dl-deadline`
/// (µs; `parse_sched_data`: the period defaults to the runtime, the deadline to the period), as
/// `sched_setattr` checks them; its `priority` must be 0 (`__sched_setscheduler` refuses a
/// `sched_priority` for a non-RT policy).
pub(super) fn dl_class(at: &str, dl: [Option<u64>; 3], priority: Option<i64>) -> Result<SchedClass, String> {
    if priority.is_some_and(|p| p != 0) {
        return Err(format!("{at}: a SCHED_DEADLINE task's priority must be 0 (sched_setattr refuses others)"));
    }
    let runtime_us = dl[0].unwrap_or(0);
    let period_us = dl[1].unwrap_or(runtime_us);
    let deadline_us = dl[2].unwrap_or(period_us);
    Ok(SchedClass::Deadline(DlParams::from_us(at, runtime_us, Some(deadline_us), Some(period_us))?))
}

/// rt-app's `taskgroup` (src/rt-app_parse_config.c `parse_taskgroup_data`,
/// src/rt-app_taskgroups.c): the cgroup under the cpu controller a thread moves itself to — a
/// task's at the thread's start, a phase's at the start of each of its loops; a phase without
/// one leaves the thread where it is (across thread loops too), and a thread that never names
/// one stays in the group rt-app runs in, taken as the root. `""` is none; a name must start
/// with `/`; rt-app creates every level of it and writes none of its files (cpu.shares and
/// cpu.uclamp.* keep the kernel's defaults: rt-app has no key for them; the TOML format has);
/// at most 32 distinct names. Returns the normalised path, or `None` for `""`.
pub(super) fn taskgroup(at: &str, value: &Json, names: &mut BTreeSet<String>) -> Result<Option<String>, String> {
    if matches!(value, Json::Str(s) if s.is_empty()) {
        return Ok(None);
    }
    let name = text(at, value)?;
    let path = taskgroup_path(at, name)?;
    names.insert(name.to_string());
    if names.len() > MAX_TASKGROUPS {
        return Err(format!("{at}: more than {MAX_TASKGROUPS} distinct taskgroups (rt-app's max_nbr_tgs); use fewer"));
    }
    Ok(Some(path))
}

/// rt-app's `check_taskgroup_policy_dep`: walking the phases in order (the first thread loop),
/// a thread in a taskgroup must be SCHED_OTHER, SCHED_BATCH or SCHED_IDLE whenever it is in one (rt-app exits
/// otherwise).
/// `phases`: where each is, the policy it sets and the group it names.
pub(super) fn check_taskgroup_policy<'p>(
    task: (&str, &'p str, bool),
    phases: impl Iterator<Item = (&'p str, Option<&'p str>, bool)>,
) -> Result<(), String> {
    let (at_task, mut policy, mut grouped) = task;
    let refuse = |at: &str, policy: &str| {
        Err(format!(
            "{at}: rt-app has no taskgroup support for {policy} (only SCHED_OTHER, SCHED_BATCH and SCHED_IDLE tasks may \
             be in a taskgroup)"
        ))
    };
    let fair = |policy: &str| matches!(policy, "SCHED_OTHER" | "SCHED_BATCH" | "SCHED_IDLE");
    if grouped && !fair(policy) {
        return refuse(at_task, policy);
    }
    for (at, own_policy, names_group) in phases {
        policy = own_policy.unwrap_or(policy);
        grouped |= names_group;
        if grouped && !fair(policy) {
            return refuse(at, policy);
        }
    }
    Ok(())
}

/// The policy in effect when each phase starts: the last one a phase before it set, else
/// the task's on the first thread loop and the last phase's setting on the later ones (rt-app
/// changes the policy only where a phase gives one). A phase that gives a priority but no
/// policy (`priority_only`) needs one policy in effect on every loop, to know what its priority
/// means; one that gives its policy does not.
pub(super) fn policies_in_effect<'p>(
    at_phases: &[String],
    set: &[Option<&'p str>],
    priority_only: &[bool],
    task_policy: &'p str,
) -> Result<Vec<&'p str>, String> {
    let last_set = set.iter().rev().flatten().next().copied();
    let mut in_effect = Vec::new();
    let mut current = None;
    for ((at_phase, own), &ambiguous_matters) in at_phases.iter().zip(set).zip(priority_only) {
        let policy = match current {
            Some(p) => p,
            None if last_set.is_none_or(|l| l == task_policy) => task_policy,
            // its own policy decides: what was in effect before it is not read
            None if !ambiguous_matters => task_policy,
            None => {
                return Err(format!(
                    "{at_phase}: give its policy with its priority: {task_policy} on the first loop, {} on later ones",
                    last_set.unwrap_or(task_policy)
                ))
            }
        };
        in_effect.push(policy);
        current = own.or(current);
    }
    Ok(in_effect)
}

/// A clamp a phase sets stays until another phase sets it (rt-app calls sched_setattr only for
/// what a phase gives): every phase, on the first and the later thread loops, must leave
/// util_min <= util_max, or the kernel would refuse it.
pub(super) fn check_phase_clamps<'a>(
    at: &str,
    task: UclampRequest,
    phases: impl Iterator<Item = (&'a str, &'a SchedAttr)> + Clone,
) -> Result<(), String> {
    let (mut min, mut max) = (task.min.unwrap_or(0), task.max.unwrap_or(UTIL_CLAMP_SCALE));
    for (at_phase, attr) in phases.clone().chain(phases) {
        (min, max) = (attr.util_min.unwrap_or(min), attr.util_max.unwrap_or(max));
        if min > max {
            return Err(format!("{at_phase}: util_min {min} above util_max {max} (set here or before: {at})"));
        }
    }
    Ok(())
}
