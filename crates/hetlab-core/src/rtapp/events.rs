//! rt-app's events: each becomes phases of hetlab's workload model (src/rt-app_parse_config.c
//! and src/rt-app.c say what each does; docs/workloads.md has the table), with the marker
//! rt-app writes for it; a task's rt-app phases one after the other, each once (its `loop` is a
//! loop over its phases, `task.rs`).

use std::collections::BTreeMap;

use super::global::Global;
use super::json::{member, object, text, whole, Json};
use super::warnings::Warnings;
use crate::workload::file::PhaseFile;
use crate::workload::{
    Access, MemProfile, Order, Pattern, Phase, PhaseKind, RtappEvent, RtappStep, SyncOp, MAX_PHASE_US,
    MAX_WORKING_SET_BYTES,
};

/// rt-app's events, in the order its parser tries their prefixes.
const EVENTS: &[&str] = &[
    "sleep", "runtime", "run", "memrun", "mem", "iorun", "lock", "unlock", "signal", "broad", "wait", "sync",
    "barrier", "timer", "resume", "suspend", "yield", "fork", "sem_post", "sem_wait",
];

/// Most phases one task may have (its events, each one to four phases; loops are not unrolled).
pub(super) const MAX_PHASES: usize = 4096;

/// rt-app's byte loops (`memread`/`memwrite` in src/rt-app.c: one volatile byte access per
/// iteration) as gcc -O2 compiles them for ARMv7: ldrb or strb, add, cmp, bne. ASSUMPTION:
/// counted from the loop's C, not from a disassembly.
pub(super) const BYTE_LOOP_INSTRUCTIONS: f64 = 4.0;

/// Bytes `memset` writes per instruction (rt-app's `mem` event): glibc's ARMv7 memset stores
/// 8 bytes per `strd`/`stm` pair in its main loop, with about one loop instruction per store
/// (sysdeps/arm/memset.S). ASSUMPTION: read from the source, not measured.
const MEMSET_BYTES_PER_INSTRUCTION: f64 = 8.0;

/// Instructions of one `write()` to /dev/null (rt-app's `iorun`: the null device takes no
/// data, so a write costs its system call alone). ASSUMPTION: not measured on these cores; a
/// write of the default 4 MB buffer is one call, so it matters only for tiny counts.
pub(super) const NULL_WRITE_INSTRUCTIONS: f64 = 2000.0;

/// rt-app's number for each event type (`resource_t`, src/rt-app_types.h), which its
/// `rtapp_event` ftrace markers print.
fn type_number(event: &str) -> u32 {
    match event {
        "wait" => 2,
        "signal" => 3,
        "broad" => 4,
        "sleep" => 5,
        "run" => 6,
        "sync" => 7,
        "lock" => 8,
        "unlock" => 9,
        "timer" => 10,
        "timer_unique" => 11,
        "suspend" => 12,
        "resume" => 13,
        "mem" => 14,
        "memrun_write" => 15,
        "memrun_read" => 16,
        "memrun_chase" => 17,
        "iorun" => 18,
        "runtime" => 19,
        "yield" => 20,
        "barrier" => 21,
        "fork" => 22,
        "sem_wait" => 23,
        "sem_post" => 24,
        _ => 0,
    }
}

/// The event a task or phase key names, by its prefix (`run0` is `run`), as rt-app's parser tries them.
pub(super) fn event_of(key: &str) -> Option<&'static str> {
    // "run" and "sleep" are tried together first in rt-app, then "runtime" wins over "run"
    if key.starts_with("sleep") {
        return Some("sleep");
    }
    if key.starts_with("run") {
        return Some(if key.starts_with("runtime") { "runtime" } else { "run" });
    }
    EVENTS.iter().copied().find(|e| key.starts_with(e))
}

/// A task's phases as they are read, with where each comes from.
pub(super) struct Unrolled<'a> {
    at: &'a str,
    task: &'a str,
    instances: u32,
    /// The thread's start, from the run's: its delay.
    origin_us: u64,
    global: &'a Global,
    barrier_users: &'a mut BTreeMap<String, u32>,
    warnings: &'a mut Warnings,
    phases: Vec<Phase>,
    steps: Vec<RtappStep>,
}

/// The timer a task's `delay` sleeps on: a name no rt-app file can give (this reader refuses a
/// NUL in a string, `\u0000`, as rt-app's C strings cannot hold one).
pub(super) const DELAY_TIMER: &str = "\u{0}delay";

impl<'a> Unrolled<'a> {
    /// None yet of the phases of task `task` (`at` names it in errors), which has `instances`
    /// threads of its own and starts `origin_us` after the run (its delay); `barrier_users`
    /// counts the threads that name each barrier, over every task.
    pub(super) fn new(
        at: &'a str,
        task: &'a str,
        instances: u32,
        origin_us: u64,
        global: &'a Global,
        barrier_users: &'a mut BTreeMap<String, u32>,
        warnings: &'a mut Warnings,
    ) -> Self {
        Unrolled { at, task, instances, origin_us, global, barrier_users, warnings, phases: vec![], steps: vec![] }
    }

    /// Where warnings go.
    pub(super) fn warnings(&mut self) -> &mut Warnings {
        self.warnings
    }

    /// rt-app's `delay`: the thread sleeps once, before the first loop, until t_first = the
    /// run's start + delay (clock_nanosleep TIMER_ABSTIME: a thread forked later does not sleep
    /// at all): an absolute timer of its own, a prologue phase.
    pub(super) fn add_delay(&mut self, delay_us: u64) {
        self.phases.push(Phase::new(PhaseKind::Timer {
            timer: DELAY_TIMER.into(),
            period_us: delay_us,
            relative: false,
            per_thread: true,
            origin_us: 0,
        }));
        self.steps.push(RtappStep { phase: 0, loop_start: false, event: None });
    }

    /// The phases so far.
    pub(super) fn phase_count(&self) -> usize {
        self.phases.len()
    }

    /// The phases and where each comes from.
    pub(super) fn finish(self) -> (Vec<Phase>, Vec<RtappStep>) {
        (self.phases, self.steps)
    }
}

impl Unrolled<'_> {
    /// One loop of rt-app phase `phase`: its scheduling attributes if it sets them, then its
    /// events in order.
    pub(super) fn add_loop(
        &mut self,
        at: &str,
        phase: u32,
        sched: Option<PhaseKind>,
        events: &[(&str, &Json)],
    ) -> Result<(), String> {
        let sets_sched = sched.is_some();
        if let Some(kind) = sched {
            self.phases.push(Phase::new(kind));
            self.steps.push(RtappStep { phase, loop_start: true, event: None });
        }
        for (id, &(key, value)) in events.iter().enumerate() {
            let at_event = format!("{at}.{key}");
            let (phases, mut event) = self.event(&at_event, key, value)?;
            event.id = id as u32;
            for (i, p) in phases.into_iter().enumerate() {
                self.phases.push(p);
                self.steps.push(RtappStep {
                    phase,
                    loop_start: id == 0 && i == 0 && !sets_sched,
                    event: (i == 0).then(|| event.clone()),
                });
            }
            if self.phases.len() > MAX_PHASES {
                return Err(format!(
                    "{}: its events make more than {MAX_PHASES} steps (loops are not unrolled: this counts each \
                     event once); split the task",
                    self.at
                ));
            }
        }
        Ok(())
    }

    /// The phases one event becomes, and its marker.
    fn event(&mut self, at: &str, key: &str, value: &Json) -> Result<(Vec<Phase>, RtappEvent), String> {
        let kind = event_of(key).expect("an event key");
        let mut marker = RtappEvent { id: 0, type_number: type_number(kind), desc: key.to_string(), run_us: 0 };
        let sync = |op: SyncOp, object: &str| Phase::new(PhaseKind::Sync { op, object: object.to_string() });
        // events on one named object: the value is its name, the marker says `event:name`
        let named = ["lock", "unlock", "signal", "broad", "resume", "barrier", "fork", "sem_post", "sem_wait"];
        let name = if named.contains(&kind) { text(at, value)? } else { "" };
        if !name.is_empty() {
            marker.desc = format!("{key}:{name}");
        }
        let phases = match kind {
            "run" | "runtime" => {
                let us = whole(at, value, 1.0, MAX_PHASE_US)? as u64;
                marker.run_us = us;
                if kind == "run" {
                    vec![PhaseFile { run_us: Some(us as f64), ..Default::default() }.into_phase(at)?]
                } else {
                    vec![Phase::new(PhaseKind::Runtime { duration_us: us })]
                }
            }
            "sleep" => vec![Phase::new(PhaseKind::Sleep { duration_us: whole(at, value, 0.0, MAX_PHASE_US)? as u64 })],
            "timer" => {
                let members = object(at, value)?;
                self.only_keys(at, members, &["ref", "period", "mode"]);
                let name =
                    member(members, "ref").map(|v| text(&format!("{at}.ref"), v)).transpose()?.unwrap_or("unknown");
                let period_us = match member(members, "period") {
                    Some(v) => whole(&format!("{at}.period"), v, 0.0, MAX_PHASE_US)? as u64,
                    None => 0,
                };
                // rt-app: a mode starting with "absolute" is absolute, anything else relative
                let relative = match member(members, "mode").map(|v| text(&format!("{at}.mode"), v)).transpose()? {
                    None | Some("relative") => true,
                    Some(mode) if mode.starts_with("absolute") => false,
                    Some(other) => {
                        self.warnings.note(format!(
                            "{at}.mode: '{other}' is neither relative nor absolute; rt-app takes it as relative"
                        ));
                        true
                    }
                };
                let per_thread = name.starts_with("unique");
                if per_thread {
                    marker.type_number = type_number("timer_unique");
                }
                marker.desc = format!("{key}:{name}");
                vec![Phase::new(PhaseKind::Timer {
                    timer: name.to_string(),
                    period_us,
                    relative,
                    per_thread,
                    origin_us: self.origin_us,
                })]
            }
            "memrun" => {
                let members = object(at, value)?;
                self.only_keys(at, members, &["type", "size", "count", "stride", "pattern", "ref"]);
                let (phase, type_name) = memrun(at, members, self.warnings)?;
                marker.type_number = type_number(type_name);
                vec![phase]
            }
            "mem" => {
                let bytes = whole(at, value, 1.0, 1e15)?;
                let buffer = (self.global.mem_buffer_bytes as f64).min(bytes) as u64;
                let access = Access::new(buffer, Pattern::Sequential, 8, Order::Cyclic);
                let mut phase = Phase::new(PhaseKind::Compute { instructions: bytes / MEMSET_BYTES_PER_INSTRUCTION });
                phase.mem = MemProfile::single(1.0, 1.0, access, false, 1.0);
                vec![phase]
            }
            "iorun" => {
                let bytes = whole(at, value, 1.0, 1e15)?;
                let calls = (bytes / self.global.mem_buffer_bytes as f64).ceil();
                vec![Phase::new(PhaseKind::Compute { instructions: calls * NULL_WRITE_INSTRUCTIONS })]
            }
            "lock" => vec![sync(SyncOp::Lock, name)],
            "unlock" => vec![sync(SyncOp::Unlock, name)],
            "signal" => vec![sync(SyncOp::Signal, name)],
            "broad" => vec![Phase::new(PhaseKind::Resume { event: name.to_string() })],
            "wait" | "sync" => {
                // pthread_cond_wait: release the mutex, wait, take the mutex again; `sync`
                // signals the condition first
                let members = object(at, value)?;
                self.only_keys(at, members, &["ref", "mutex"]);
                // rt-app names a missing condition or mutex "unknown"
                let field = |f: &str| -> Result<String, String> {
                    member(members, f).map_or(Ok("unknown".to_string()), |v| Ok(text(&format!("{at}.{f}"), v)?.into()))
                };
                let (condition, mutex) = (field("ref")?, field("mutex")?);
                marker.desc = format!("{key}:{condition}:{mutex}");
                let mut phases = Vec::new();
                if kind == "sync" {
                    phases.push(sync(SyncOp::Signal, &condition));
                }
                phases.push(sync(SyncOp::Unlock, &mutex));
                phases.push(Phase::new(PhaseKind::Suspend { event: condition }));
                phases.push(sync(SyncOp::Lock, &mutex));
                phases
            }
            "suspend" => {
                // the parameter is ignored: a task suspends on its own name (doc/tutorial.txt)
                marker.desc = format!("{key}:{0}:{0}", self.task);
                vec![Phase::new(PhaseKind::Suspend { event: self.task.to_string() })]
            }
            "resume" => {
                marker.desc = format!("{key}:{name}:{name}");
                vec![Phase::new(PhaseKind::Resume { event: name.to_string() })]
            }
            "barrier" => {
                // barriers count their users as rt-app's parser does: once per naming event
                *self.barrier_users.entry(name.to_string()).or_insert(0) += self.instances;
                vec![sync(SyncOp::Barrier { parties: 0 }, name)] // parties: once every task is read
            }
            "yield" => vec![Phase::new(PhaseKind::Yield)],
            "fork" => vec![Phase::new(PhaseKind::Fork { task: name.to_string() })],
            "sem_post" => vec![sync(SyncOp::SemPost, name)],
            "sem_wait" => vec![sync(SyncOp::SemWait, name)],
            other => unreachable!("event {other} is in EVENTS"),
        };
        Ok((phases, marker))
    }
}

impl Unrolled<'_> {
    /// An event object's keys beyond `known`, which rt-app does not read: a warning each.
    fn only_keys(&mut self, at: &str, members: &[(String, Json)], known: &[&str]) {
        for (key, _) in members.iter().filter(|(k, _)| !known.contains(&k.as_str())) {
            self.warnings.ignored_key(&format!("{at}.{key}"), &known.join(", "));
        }
    }
}

/// A `memrun` event (`{"type": "read"|"write"|"chase", "size", "count", "stride", "pattern",
/// "ref"}`, src/rt-app_parse_config.c): `count` steps over a buffer of `size` bytes, and the
/// name of its rt-app type.
fn memrun(at: &str, members: &[(String, Json)], warnings: &mut Warnings) -> Result<(Phase, &'static str), String> {
    let get = |k: &str| member(members, k);
    // the buffer is the phase's working set (a chase's is the nodes within it): the same limit
    // as a workload file's working_set_bytes
    let size = get("size").ok_or_else(|| format!("{at}: no \"size\""))?;
    let size = whole(&format!("{at}.size"), size, 1.0, MAX_WORKING_SET_BYTES as f64)?;
    let count = whole(&format!("{at}.count"), get("count").ok_or_else(|| format!("{at}: no \"count\""))?, 1.0, 1e15)?;
    let kind = get("type").ok_or_else(|| format!("{at}: no \"type\" (read, write or chase)"))?;
    // a named buffer is one copy the threads share
    let shared = get("ref").map(|v| text(&format!("{at}.ref"), v)).transpose()?.is_some();
    let kind = text(&format!("{at}.type"), kind)?;
    if kind != "chase" {
        // rt-app reads them for a chase only
        for key in ["stride", "pattern"].into_iter().filter(|k| get(k).is_some()) {
            warnings.note(format!("{at}.{key}: rt-app reads {key} for a memrun of type chase only, and ignores it"));
        }
    }
    let (phase, name) = match kind {
        "chase" => {
            // a linked list of size/stride nodes, one dependent load per step, in bit-reversed
            // (random) or address order, as ccbench's chase
            let stride = match get("stride") {
                Some(v) => whole(&format!("{at}.stride"), v, 4.0, MAX_WORKING_SET_BYTES as f64)?,
                None => 64.0,
            };
            let nodes = (size / stride).floor();
            if nodes < 2.0 {
                return Err(format!("{at}: the chase buffer needs at least 2 x stride bytes (rt-app's check)"));
            }
            let pattern = match get("pattern").map(|v| text(&format!("{at}.pattern"), v)).transpose()? {
                None | Some("random") => Pattern::Random,
                Some("sequential") if stride == 4.0 => Pattern::Sequential,
                Some("sequential") => Pattern::Strided,
                // rt-app: anything but "sequential" is random
                Some(other) => {
                    warnings.note(format!(
                        "{at}.pattern: '{other}' is neither random nor sequential; rt-app takes it as random"
                    ));
                    Pattern::Random
                }
            };
            let access = Access::new((nodes * stride) as u64, pattern, stride as u64, Order::Cyclic);
            // the load-to-use latency is the whole cost of a step (as in ccbench: cpi 0)
            let mut phase = Phase::new(PhaseKind::Compute { instructions: count });
            phase.mem = MemProfile::single(0.0, 1.0, access, true, 0.0);
            (phase, "memrun_chase")
        }
        "read" | "write" => {
            let access = Access::new(size as u64, Pattern::Sequential, 1, Order::Cyclic);
            let write_fraction = if kind == "write" { 1.0 } else { 0.0 };
            let mut phase = Phase::new(PhaseKind::Compute { instructions: count * BYTE_LOOP_INSTRUCTIONS });
            phase.mem = MemProfile::single(1.0, 1.0 / BYTE_LOOP_INSTRUCTIONS, access, false, write_fraction);
            (phase, if kind == "read" { "memrun_read" } else { "memrun_write" })
        }
        other => return Err(format!("{at}.type must be read, write or chase, got \"{other}\"")),
    };
    let mut phase = phase;
    phase.mem.shared_working_set = shared;
    Ok((phase, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_named_by_prefix_in_rt_apps_order() {
        assert_eq!(event_of("run0"), Some("run"));
        assert_eq!(event_of("runtime1"), Some("runtime"));
        assert_eq!(event_of("sleep_long"), Some("sleep"));
        assert_eq!(event_of("memrun"), Some("memrun"));
        assert_eq!(event_of("mem2"), Some("mem"));
        assert_eq!(event_of("sem_wait0"), Some("sem_wait"));
        assert_eq!(event_of("instance"), None);
    }
}
