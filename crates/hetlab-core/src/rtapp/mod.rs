//! rt-app workloads (github.com/scheduler-tools/rt-app, `doc/tutorial.txt`) read into hetlab's
//! workload model.
//!
//! The dialect is rt-app's, not strict JSON: json-c accepts `//` and `/* */` comments, trailing
//! commas and repeated keys (kept in order: `doc/workgen` renames them to `run0`, `run1`, ...),
//! and an event is named by its prefix (`run0`, `sleep_long`), tried in the order of rt-app's
//! `parse_task_event_data` (so `runtime...` is `runtime`, not `run`).
//!
//! What is translated: `tasks` (`instance`, `loop`, `delay`, `cpus`, `priority`, `policy`
//! SCHED_OTHER/BATCH/IDLE/FIFO/RR/DEADLINE with `dl-runtime`/`dl-period`/`dl-deadline` (a phase's priority alone means what the policy in effect makes it),
//! `util_min`/`util_max`, `taskgroup` (the thread's cgroup under the cpu controller, see
//! `sched::taskgroup`), `phases` with their own `loop`, by rt-app's loop rules),
//! `global` (`duration`, `calibration`, `default_policy`, `mem_buffer_size`, `io_device`
//! /dev/null, `pi_enabled` where it changes nothing, and the logging keys, which change nothing
//! in a simulation) and every event, each
//! into phases (src/rt-app_parse_config.c and src/rt-app.c say what each does; docs/workloads.md
//! has the table). Every other key is a one-line error naming it, never skipped.
//!
//! `run` is rt-app's calibrated work: a number of loops that take that long on the calibration
//! CPU at its top OPP (rt-app's default CPU0; with ns per loop, the biggest core, where LISA
//! calibrates), so a `run` stretches on slower cores and OPPs as rt-app's does.
//!
//! Files: `json.rs` reads the dialect into values; `global.rs` the `global` object; `task.rs` a
//! task and its phases (by rt-app's loop rules) with the scheduling attributes `sched.rs` reads
//! and checks; `events.rs` each event into phases, with its marker; `fork.rs` the threads `fork`
//! starts. This file puts them together.

pub mod calibration;
mod events;
mod fork;
mod global;
mod json;
mod sched;
mod task;
#[cfg(test)]
mod tests;
mod warnings;

use std::collections::{BTreeMap, BTreeSet};

use crate::workload::{PhaseKind, SyncOp, Workload};
use fork::add_forked_tasks;
use global::Global;
use json::{object, parse};
use task::{task, Translated};
use warnings::Warnings;

/// An rt-app file as hetlab reads it.
#[derive(Debug, Clone)]
pub struct RtappFile {
    pub workload: Workload,
    /// What rt-app would read past (keys it does not read, settings for a newer kernel), one
    /// line each, in file order: for the caller to show on stderr.
    pub warnings: Vec<String>,
    /// The per-thread logs' file name prefix (`global.log_basename`), if rt-app writes logs.
    pub log_basename: Option<String>,
}

/// A workload from an rt-app JSON document; `origin` names it in errors and gives the name.
/// What rt-app ignores is dropped here without a word: [`read_rtapp_json`] says what.
pub fn from_rtapp_json(origin: &str, text_in: &str) -> Result<Workload, String> {
    read_rtapp_json(origin, text_in).map(|file| file.workload)
}

/// The keys rt-app reads at the top of a file (`get_opts_from_json_object`).
const ROOT_KEYS: &str = "tasks, global and resources";

/// An rt-app JSON document read as rt-app reads it, with its warnings.
pub fn read_rtapp_json(origin: &str, text_in: &str) -> Result<RtappFile, String> {
    let root = parse(origin, text_in)?;
    let members = object(origin, &root)?;
    let mut warnings = Warnings::default();
    let mut tasks_json = None;
    let mut global = Global::default();
    for (key, value) in members {
        let at = format!("{origin}: {key}");
        match key.as_str() {
            "tasks" => tasks_json = Some(object(&at, value)?),
            // json-c's `null` is no object: rt-app takes its defaults
            "global" if *value == json::Json::Null => {}
            "global" => global = Global::read(&at, object(&at, value)?, &mut warnings)?,
            // legacy: rt-app creates resources from the events that name them
            "resources" => {
                object(&at, value)?;
            }
            _ => warnings.ignored_key(&at, ROOT_KEYS),
        }
    }
    let tasks_json = tasks_json.ok_or_else(|| format!("{origin}: no \"tasks\" object"))?;
    if tasks_json.is_empty() {
        return Err(format!("{origin}: tasks: a workload needs at least one task"));
    }
    let mut barrier_users = BTreeMap::new();
    let mut taskgroups = BTreeSet::new();
    let mut translated = Vec::new();
    for (name, body) in tasks_json {
        let at = format!("{origin}: tasks.{name}");
        let read = task::Reading { global: &global, barrier_users: &mut barrier_users, warnings: &mut warnings };
        translated.push(task(&at, name, body, read, &mut taskgroups)?);
        let total = translated.iter().map(|(t, _)| t.phases.len()).sum();
        crate::workload::check_total_phases(origin, total)?;
    }
    // a barrier waits for every thread of every task that names it, once per naming event
    for phase in translated.iter_mut().flat_map(|(t, _)| t.phases.iter_mut()) {
        if let PhaseKind::Sync { op: SyncOp::Barrier { parties }, object } = &mut phase.kind {
            *parties = barrier_users[object.as_str()];
        }
    }
    if global.pi_enabled {
        refuse_priority_inheritance(origin, &translated)?;
    }
    let tasks = add_forked_tasks(origin, translated)?;
    let name = std::path::Path::new(origin).file_stem().and_then(|s| s.to_str()).unwrap_or("rt-app").to_string();
    let workload = Workload {
        name,
        tasks,
        duration_us: global.duration_us,
        reference_cpu: global.reference_cpu,
        taskgroups: Vec::new(),
        irqs: Vec::new(),
    };
    workload.check_threads(origin)?;
    Ok(RtappFile { workload, warnings: warnings.into_vec(), log_basename: global.log_basename })
}

/// `pi_enabled`'s mutexes boost a lock's owner to the priority of a real-time or deadline
/// waiter (rt_mutex; a CFS waiter boosts nothing). hetlab's mutexes do not inherit, so a file
/// where a real-time or deadline thread takes a lock would run differently: refused, naming it.
fn refuse_priority_inheritance(origin: &str, tasks: &[Translated]) -> Result<(), String> {
    for (task, _) in tasks {
        let classes = std::iter::once(task.class).chain(task.phases.iter().filter_map(|p| match &p.kind {
            PhaseKind::SetSched(attr) => attr.class,
            _ => None,
        }));
        let real_time = classes.clone().any(|c| !c.is_fair());
        let locks = task.phases.iter().any(|p| matches!(p.kind, PhaseKind::Sync { op: SyncOp::Lock, .. }));
        if real_time && locks {
            return Err(format!(
                "{origin}: global.pi_enabled: task {} is real-time and takes a lock, and priority inheritance is not \
                 modelled; set pi_enabled to false (rt-app's default)",
                task.name
            ));
        }
    }
    Ok(())
}
