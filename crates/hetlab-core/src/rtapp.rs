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
//! [`taskgroup`]), `phases` with their own `loop`, by rt-app's loop rules),
//! `global` (`duration`, `calibration`, `default_policy`, `mem_buffer_size`, `io_device`
//! /dev/null, `pi_enabled` where it changes nothing, and the logging keys, which change nothing
//! in a simulation) and every event, each
//! into phases (src/rt-app_parse_config.c and src/rt-app.c say what each does; docs/workloads.md
//! has the table). Every other key is a one-line error naming it, never skipped.
//!
//! `run` is rt-app's calibrated work: a number of loops that take that long on the calibration
//! CPU at its top OPP (rt-app's default CPU0; with ns per loop, the biggest core, where LISA
//! calibrates), so a `run` stretches on slower cores and OPPs as rt-app's does.

use std::collections::{BTreeMap, BTreeSet};

use crate::workload::file::PhaseFile;
use crate::workload::{
    shown, taskgroup_path, Access, MemProfile, Order, Pattern, Phase, PhaseKind, RtappEvent, RtappStep, RtappSteps,
    SchedAttr, SchedClass, SyncOp, Task, ThreadCount, Workload, MAX_PHASE_US, MAX_WORKING_SET_BYTES,
};

/// Most phases one task may unroll to (a phase's `loop` repeats its events).
const MAX_PHASES: usize = 4096;
/// rt-app's `max_nbr_tgs` (src/rt-app_taskgroups.c): the most distinct taskgroup names a file
/// may give.
const MAX_TASKGROUPS: usize = 32;

/// A JSON value of rt-app's dialect; objects keep repeated keys, in order.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Num(_) => "a number",
            Json::Str(_) => "a string",
            Json::Arr(_) => "an array",
            Json::Obj(_) => "an object",
        }
    }
}

/// The lenient reader: comments, trailing commas and repeated keys allowed.
struct Reader<'a> {
    text: &'a [u8],
    pos: usize,
    origin: &'a str,
}

impl<'a> Reader<'a> {
    fn error(&self, what: &str) -> String {
        let before = &self.text[..self.pos.min(self.text.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        format!("{}: line {line}, column {column}: {what}", self.origin)
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    /// Skips white space and comments.
    fn skip(&mut self) -> Result<(), String> {
        loop {
            match (self.peek(), self.text.get(self.pos + 1)) {
                (Some(b' ' | b'\t' | b'\n' | b'\r'), _) => self.pos += 1,
                (Some(b'/'), Some(b'/')) => {
                    while !matches!(self.peek(), None | Some(b'\n')) {
                        self.pos += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    let end = self.text[self.pos + 2..].windows(2).position(|w| w == b"*/");
                    match end {
                        Some(end) => self.pos += end + 4,
                        None => return Err(self.error("a /* comment is not closed")),
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > 64 {
            return Err(self.error("nested more than 64 levels deep"));
        }
        self.skip()?;
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(c) => Err(self.error(&format!("unexpected '{}'", c as char))),
            None => Err(self.error("the text ends where a value should be")),
        }
    }

    fn word(&mut self, word: &str, value: Json) -> Result<Json, String> {
        if self.text[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        while matches!(self.peek(), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("");
        match text.parse::<f64>() {
            // Rust reads 1e400 as infinity: beyond any double, not a number any field can hold
            Ok(x) if x.is_infinite() => {
                self.pos = start;
                Err(self.error(&format!("{text} is out of range: a number's magnitude must be below {:e}", f64::MAX)))
            }
            Ok(x) => Ok(Json::Num(x)),
            Err(_) => Err(self.error(&format!("'{text}' is not a number"))),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1; // the opening quote
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.error("a string is not closed")),
                Some(b'"') => {
                    self.pos += 1;
                    return String::from_utf8(out).map_err(|_| self.error("a string is not UTF-8"));
                }
                Some(b'\\') => {
                    let escaped = match self.text.get(self.pos + 1) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => self.unicode_escape()?,
                        _ => {
                            return Err(
                                self.error("an escape JSON does not have (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
                            )
                        }
                    };
                    out.extend_from_slice(escaped.encode_utf8(&mut [0; 4]).as_bytes());
                    self.pos += 2;
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// The character of a `\uXXXX` escape at `pos` (with the low surrogate's escape after it
    /// for one beyond the BMP, as JSON writes them), leaving `pos` 4 bytes into the last escape.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let hex = |at: usize| -> Option<u32> {
            let digits = self.text.get(at..at + 4).filter(|d| d.iter().all(u8::is_ascii_hexdigit))?;
            digits.iter().try_fold(0, |code, &d| Some(code * 16 + (d as char).to_digit(16)?))
        };
        let Some(unit) = hex(self.pos + 2) else {
            return Err(self.error("\\u needs four hexadecimal digits"));
        };
        let code = match unit {
            0xD800..=0xDBFF => match (self.text.get(self.pos + 6..self.pos + 8), hex(self.pos + 8)) {
                (Some(b"\\u"), Some(low @ 0xDC00..=0xDFFF)) => {
                    self.pos += 6;
                    0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                }
                _ => return Err(self.error("a \\u high surrogate without its low surrogate")),
            },
            0xDC00..=0xDFFF => return Err(self.error("a \\u low surrogate without its high surrogate")),
            // rt-app keeps names in C strings, which end at a NUL (and DELAY_TIMER starts with one)
            0 => return Err(self.error("\\u0000: rt-app's strings cannot hold a NUL")),
            _ => unit,
        };
        self.pos += 4;
        char::from_u32(code).ok_or_else(|| self.error("\\u names no character"))
    }

    fn object(&mut self, depth: usize) -> Result<Json, String> {
        self.pos += 1;
        let mut members = Vec::new();
        loop {
            self.skip()?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Obj(members));
                }
                Some(b'"') => {}
                _ => return Err(self.error("expected a \"key\" or '}'")),
            }
            let key = self.string()?;
            self.skip()?;
            if self.peek() != Some(b':') {
                return Err(self.error(&format!("expected ':' after \"{key}\"")));
            }
            self.pos += 1;
            let value = self.value(depth + 1)?;
            members.push((key, value));
            self.skip()?;
            match self.peek() {
                Some(b',') => self.pos += 1, // a trailing comma is fine: '}' is checked next
                Some(b'}') => {}
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, String> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip()?;
            if self.peek() == Some(b']') {
                self.pos += 1;
                return Ok(Json::Arr(items));
            }
            items.push(self.value(depth + 1)?);
            self.skip()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {}
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }
}

fn parse(origin: &str, text: &str) -> Result<Json, String> {
    // Refused, not skipped: JSON has no byte-order mark (RFC 8259 §8.1), and the file is meant
    // for rt-app on a board, whose parser (json-c) may not skip one: say so here rather than
    // simulate a file the board could refuse.
    if text.starts_with('\u{feff}') {
        return Err(format!(
            "{origin}: the file starts with a UTF-8 byte-order mark (EF BB BF), which is not JSON; save it as \
             UTF-8 without a BOM"
        ));
    }
    let mut reader = Reader { text: text.as_bytes(), pos: 0, origin };
    let value = reader.value(0)?;
    reader.skip()?;
    if reader.pos < reader.text.len() {
        return Err(reader.error("text after the end of the document"));
    }
    Ok(value)
}

// ---- the translation --------------------------------------------------------------------------

/// rt-app's events, in the order its parser tries their prefixes.
const EVENTS: &[&str] = &[
    "sleep", "runtime", "run", "memrun", "mem", "iorun", "lock", "unlock", "signal", "broad", "wait", "sync",
    "barrier", "timer", "resume", "suspend", "yield", "fork", "sem_post", "sem_wait",
];

/// `global` keys that only concern rt-app's logs and memory locking: nothing to simulate.
const LOGGING_KEYS: &[&str] =
    &["logdir", "log_basename", "log_size", "ftrace", "gnuplot", "lock_pages", "cumulative_slack"];

/// The timer a task's `delay` sleeps on: a name no rt-app file can give (this reader refuses a
/// NUL in a string, `\u0000`, as rt-app's C strings cannot hold one).
const DELAY_TIMER: &str = "\u{0}delay";

/// rt-app's `mem_buffer_size` default, bytes (src/rt-app_types.h DEFAULT_MEM_BUF_SIZE).
const DEFAULT_MEM_BUFFER_BYTES: u64 = 4 * 1024 * 1024;

/// rt-app's byte loops (`memread`/`memwrite` in src/rt-app.c: one volatile byte access per
/// iteration) as gcc -O2 compiles them for ARMv7: ldrb or strb, add, cmp, bne. ASSUMPTION:
/// counted from the loop's C, not from a disassembly.
const BYTE_LOOP_INSTRUCTIONS: f64 = 4.0;

/// Bytes `memset` writes per instruction (rt-app's `mem` event): glibc's ARMv7 memset stores
/// 8 bytes per `strd`/`stm` pair in its main loop, with about one loop instruction per store
/// (sysdeps/arm/memset.S). ASSUMPTION: read from the source, not measured.
const MEMSET_BYTES_PER_INSTRUCTION: f64 = 8.0;

/// Instructions of one `write()` to /dev/null (rt-app's `iorun`: the null device takes no
/// data, so a write costs its system call alone). ASSUMPTION: not measured on these cores; a
/// write of the default 4 MB buffer is one call, so it matters only for tiny counts.
const NULL_WRITE_INSTRUCTIONS: f64 = 2000.0;

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

fn event_of(key: &str) -> Option<&'static str> {
    // "run" and "sleep" are tried together first in rt-app, then "runtime" wins over "run"
    if key.starts_with("sleep") {
        return Some("sleep");
    }
    if key.starts_with("run") {
        return Some(if key.starts_with("runtime") { "runtime" } else { "run" });
    }
    EVENTS.iter().copied().find(|e| key.starts_with(e))
}

fn number(at: &str, value: &Json) -> Result<f64, String> {
    match value {
        Json::Num(x) if x.is_finite() => Ok(*x),
        other => Err(format!("{at} must be a number, got {}", other.kind())),
    }
}

fn whole(at: &str, value: &Json, min: f64, max: f64) -> Result<f64, String> {
    let x = number(at, value)?;
    if x.fract() != 0.0 || !(min..=max).contains(&x) {
        let (min, max, x) = (shown(min), shown(max), shown(x));
        return Err(format!("{at} must be a whole number in {min}..={max}, got {x}"));
    }
    Ok(x)
}

fn text<'v>(at: &str, value: &'v Json) -> Result<&'v str, String> {
    match value {
        Json::Str(s) if !s.is_empty() => Ok(s),
        Json::Str(_) => Err(format!("{at} must not be empty")),
        other => Err(format!("{at} must be a string, got {}", other.kind())),
    }
}

fn boolean(at: &str, value: &Json) -> Result<bool, String> {
    match value {
        Json::Bool(b) => Ok(*b),
        other => Err(format!("{at} must be true or false, got {}", other.kind())),
    }
}

fn object<'v>(at: &str, value: &'v Json) -> Result<&'v [(String, Json)], String> {
    match value {
        Json::Obj(members) => Ok(members),
        other => Err(format!("{at} must be an object, got {}", other.kind())),
    }
}

/// A member of an event's object, if given.
fn member<'v>(members: &'v [(String, Json)], key: &str) -> Option<&'v Json> {
    members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// Checks an event object has only `known` keys.
fn only_keys(at: &str, members: &[(String, Json)], known: &[&str]) -> Result<(), String> {
    match members.iter().find(|(k, _)| !known.contains(&k.as_str())) {
        Some((k, _)) => Err(format!("{at}.{k}: unknown key (known: {})", known.join(", "))),
        None => Ok(()),
    }
}

fn cpu_list(at: &str, value: &Json) -> Result<Vec<usize>, String> {
    let Json::Arr(cpus) = value else { return Err(format!("{at} must be an array of CPU numbers")) };
    cpus.iter().map(|c| whole(at, c, 0.0, 4095.0).map(|c| c as usize)).collect()
}

/// `nodes_membind`: the NUMA nodes a thread's memory comes from. hetlab's SoCs have one memory
/// node (node 0), so binding to it changes nothing; another node is rt-app's own error ("Invalid
/// node %u in numaset", beyond `numa_max_node()`).
fn nodes_membind(at: &str, value: &Json) -> Result<(), String> {
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
fn policy<'v>(at: &str, value: &'v Json) -> Result<&'v str, String> {
    match text(at, value)? {
        p @ ("SCHED_OTHER" | "SCHED_BATCH" | "SCHED_IDLE" | "SCHED_FIFO" | "SCHED_RR" | "SCHED_DEADLINE") => Ok(p),
        other => Err(format!(
            "{at}: unknown policy '{other}'; rt-app knows SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_RR, SCHED_FIFO and \
             SCHED_DEADLINE"
        )),
    }
}

/// rt-app's `priority` as given: a nice value or a real-time priority, by the policy (which
/// checks its range and says which one applies: [`sched_class`], [`SchedClass::parse`]).
fn priority(at: &str, value: &Json) -> Result<i64, String> {
    Ok(whole(at, value, f64::from(i32::MIN), f64::from(i32::MAX))? as i64)
}

/// The class and nice value of rt-app `policy` at `priority`: a nice value for SCHED_OTHER and
/// SCHED_BATCH (default 0), a `sched_priority` for the real-time policies (default 10): rt-app.h's
/// DEFAULT_THREAD_NICE and DEFAULT_THREAD_PRIORITY. SCHED_IDLE's priority is not applied
/// (rt-app sets the nice value of SCHED_OTHER and SCHED_BATCH only, `_set_thread_cfs`).
fn sched_class(at: &str, policy: &str, priority: Option<i64>) -> Result<(SchedClass, Option<i32>), String> {
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
fn dl_class(at: &str, dl: [Option<u64>; 3], priority: Option<i64>) -> Result<SchedClass, String> {
    if priority.is_some_and(|p| p != 0) {
        return Err(format!("{at}: a SCHED_DEADLINE task's priority must be 0 (sched_setattr refuses others)"));
    }
    let runtime_us = dl[0].unwrap_or(0);
    let period_us = dl[1].unwrap_or(runtime_us);
    let deadline_us = dl[2].unwrap_or(period_us);
    Ok(SchedClass::Deadline(crate::workload::DlParams::from_us(at, runtime_us, Some(deadline_us), Some(period_us))?))
}

/// rt-app's `taskgroup` (src/rt-app_parse_config.c `parse_taskgroup_data`,
/// src/rt-app_taskgroups.c): the cgroup under the cpu controller a thread moves itself to — a
/// task's at the thread's start, a phase's at the start of each of its loops; a phase without
/// one leaves the thread where it is (across thread loops too), and a thread that never names
/// one stays in the group rt-app runs in, taken as the root. `""` is none; a name must start
/// with `/`; rt-app creates every level of it and writes none of its files (cpu.shares and
/// cpu.uclamp.* keep the kernel's defaults: rt-app has no key for them; the TOML format has);
/// at most 32 distinct names. Returns the normalised path, or `None` for `""`.
fn taskgroup(at: &str, value: &Json, names: &mut BTreeSet<String>) -> Result<Option<String>, String> {
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
fn check_taskgroup_policy<'p>(
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
fn policies_in_effect<'p>(
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

/// What `global` sets.
struct Global {
    duration_us: Option<u64>,
    /// A task's policy unless it gives one.
    default_policy: String,
    reference_cpu: Option<usize>,
    mem_buffer_bytes: u64,
    /// `pi_enabled`: the resources' mutexes inherit priority (PTHREAD_PRIO_INHERIT).
    pi_enabled: bool,
}

/// A workload from an rt-app JSON document; `origin` names it in errors and gives the name.
pub fn from_rtapp_json(origin: &str, text_in: &str) -> Result<Workload, String> {
    let root = parse(origin, text_in)?;
    let members = object(origin, &root)?;
    let mut tasks_json = None;
    // rt-app calibrates on CPU0 unless told otherwise
    let mut global = Global {
        duration_us: None,
        default_policy: "SCHED_OTHER".into(),
        reference_cpu: Some(0),
        mem_buffer_bytes: DEFAULT_MEM_BUFFER_BYTES,
        pi_enabled: false,
    };
    for (key, value) in members {
        let at = format!("{origin}: {key}");
        match key.as_str() {
            "tasks" => tasks_json = Some(object(&at, value)?),
            "global" => global = parse_global(&at, value)?,
            // legacy: rt-app creates resources from the events that name them
            "resources" => {
                object(&at, value)?;
            }
            _ => return Err(format!("{at}: unknown key; an rt-app file has tasks, global and resources")),
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
        translated.push(task(&at, name, body, &global, &mut barrier_users, &mut taskgroups)?);
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
    };
    workload.check_threads(origin)?;
    Ok(workload)
}

fn parse_global(at: &str, value: &Json) -> Result<Global, String> {
    let mut global = Global {
        duration_us: None,
        default_policy: "SCHED_OTHER".into(),
        reference_cpu: Some(0),
        mem_buffer_bytes: DEFAULT_MEM_BUFFER_BYTES,
        pi_enabled: false,
    };
    for (key, value) in object(at, value)? {
        let at = format!("{at}.{key}");
        match key.as_str() {
            "duration" => {
                let s = whole(&at, value, -1.0, 1e9)?;
                global.duration_us = (s > 0.0).then_some(s as u64 * 1_000_000);
            }
            "calibration" => {
                global.reference_cpu = match value {
                    // ns per loop, measured by whoever wrote the file: LISA measures on the
                    // biggest CPU at its top OPP, hetlab's own reference
                    Json::Num(_) => {
                        whole(&at, value, 1.0, 1e9)?;
                        None
                    }
                    Json::Str(cpu) => Some(
                        cpu.strip_prefix("CPU")
                            .and_then(|n| n.parse::<usize>().ok())
                            .filter(|&n| n < crate::platform::MAX_CPUS)
                            .ok_or_else(|| format!("{at} must be \"CPU<n>\" or ns per loop, got \"{cpu}\""))?,
                    ),
                    other => return Err(format!("{at} must be \"CPU<n>\" or ns per loop, got {}", other.kind())),
                };
            }
            "default_policy" => global.default_policy = policy(&at, value)?.to_string(),
            "mem_buffer_size" => global.mem_buffer_bytes = whole(&at, value, 1.0, MAX_WORKING_SET_BYTES as f64)? as u64,
            "io_device" => {
                if text(&at, value)? != "/dev/null" {
                    return Err(format!(
                        "{at}: only /dev/null is supported (hetlab has no storage model); iorun then costs its \
                         system calls"
                    ));
                }
            }
            "pi_enabled" => global.pi_enabled = boolean(&at, value)?,
            k if LOGGING_KEYS.contains(&k) => {}
            _ => return Err(format!("{at}: unknown or unsupported global key")),
        }
    }
    Ok(global)
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

/// A clamp a phase sets stays until another phase sets it (rt-app calls sched_setattr only for
/// what a phase gives): every phase, on the first and the later thread loops, must leave
/// util_min <= util_max, or the kernel would refuse it.
fn check_phase_clamps<'a>(
    at: &str,
    task: crate::workload::UclampRequest,
    phases: impl Iterator<Item = (&'a str, &'a SchedAttr)> + Clone,
) -> Result<(), String> {
    let (mut min, mut max) = (task.min.unwrap_or(0), task.max.unwrap_or(crate::workload::UTIL_CLAMP_SCALE));
    for (at_phase, attr) in phases.clone().chain(phases) {
        (min, max) = (attr.util_min.unwrap_or(min), attr.util_max.unwrap_or(max));
        if min > max {
            return Err(format!("{at_phase}: util_min {min} above util_max {max} (set here or before: {at})"));
        }
    }
    Ok(())
}

/// What one task translates to, and its instance count (0: a template only `fork` starts).
type Translated = (Task, u32);

fn task(
    at: &str,
    name: &str,
    body: &Json,
    global: &Global,
    barrier_users: &mut BTreeMap<String, u32>,
    taskgroups: &mut BTreeSet<String>,
) -> Result<Translated, String> {
    let mut instances = 1u32;
    let mut task_group = None;
    let mut task_loop = None;
    let mut delay_us = 0u64;
    let (mut task_policy, mut task_priority) = (global.default_policy.as_str(), None);
    let mut affinity = None;
    let mut phases_json = None;
    let mut events = Vec::new();
    // rt-app's util_min/util_max default to -1: not set, sched_setattr leaves them alone
    let mut clamp = (None, None);
    let mut dl = [None; 3];
    for (key, value) in object(at, body)? {
        let at_key = format!("{at}.{key}");
        match key.as_str() {
            "instance" => instances = whole(&at_key, value, 0.0, crate::workload::MAX_THREADS as f64)? as u32,
            "loop" => match whole(&at_key, value, -1.0, u32::MAX as f64)? {
                0.0 => return Err(format!("{at_key}: 0 loops would run nothing; give -1 (forever) or a count")),
                n => task_loop = Some(n),
            },
            "delay" => delay_us = whole(&at_key, value, 0.0, MAX_PHASE_US)? as u64,
            "priority" => task_priority = Some(priority(&at_key, value)?),
            "policy" => task_policy = policy(&at_key, value)?,
            "cpus" => affinity = Some(cpu_list(&at_key, value)?),
            "phases" => phases_json = Some(object(&at_key, value)?),
            "util_min" => clamp.0 = Some(whole(&at_key, value, 0.0, 1024.0)? as u32),
            "util_max" => clamp.1 = Some(whole(&at_key, value, 0.0, 1024.0)? as u32),
            "nodes_membind" => nodes_membind(&at_key, value)?,
            "taskgroup" => task_group = taskgroup(&at_key, value, taskgroups)?,
            "dl-runtime" => dl[0] = Some(whole(&at_key, value, 0.0, MAX_PHASE_US)? as u64),
            "dl-period" => dl[1] = Some(whole(&at_key, value, 0.0, MAX_PHASE_US)? as u64),
            "dl-deadline" => dl[2] = Some(whole(&at_key, value, 0.0, MAX_PHASE_US)? as u64),
            k if event_of(k).is_some() => events.push((key.as_str(), value)),
            _ => return Err(format!("{at_key}: unknown or unsupported task key")),
        }
    }
    let deadline = task_policy == "SCHED_DEADLINE";
    let (class, nice) = if deadline {
        (dl_class(at, dl, task_priority)?, None)
    } else if dl.iter().any(Option::is_some) {
        return Err(format!(
            "{at}: dl-runtime, dl-period and dl-deadline belong to SCHED_DEADLINE (Linux 6.12's CFS slice is not \
             modelled)"
        ));
    } else {
        sched_class(at, task_policy, task_priority)?
    };
    let mut out = Unrolled {
        at,
        task: name,
        instances,
        origin_us: delay_us,
        global,
        barrier_users,
        phases: vec![],
        steps: vec![],
    };
    if delay_us > 0 {
        // rt-app sleeps once, before the first loop, until t_first = the run's start + delay
        // (clock_nanosleep TIMER_ABSTIME: a thread forked later does not sleep at all): an
        // absolute timer of its own, a prologue phase
        out.phases.push(Phase::new(PhaseKind::Timer {
            timer: DELAY_TIMER.into(),
            period_us: delay_us,
            relative: false,
            per_thread: true,
            origin_us: 0,
        }));
        out.steps.push(RtappStep { phase: 0, phase_loop: 0, loop_start: false, event: None });
    }
    let prologue_phases = out.phases.len();
    // rt-app's loop rules (parse_task_data): with phases, the thread loops `loop` times
    // (default forever) over phases that each loop their own `loop` (default 1); without, the
    // task is one phase that loops `loop` times within one thread loop (forever if no `loop`)
    let (repeat, repeats_are_phase_loops) = match phases_json {
        Some(_) if !events.is_empty() => {
            return Err(format!("{at}: give events either in phases or in the task, not both"));
        }
        Some(phases) => {
            // rt-app sets a phase's affinity (its own, else the task's) at each of its loops,
            // and its priority and clamps only where it gives them: phases that set any become
            // a SetSched step at each loop, and then every phase does (to put the task's back)
            let (mut parsed, mut policies) = (Vec::new(), Vec::new());
            for (phase_name, phase) in phases {
                let at_phase = format!("{at}.phases.{phase_name}");
                let (mut loops, mut attr) = (1u32, SchedAttr::default());
                let (mut phase_policy, mut phase_priority) = (None, None);
                let mut phase_events = Vec::new();
                for (key, value) in object(&at_phase, phase)? {
                    let at_key = format!("{at_phase}.{key}");
                    match key.as_str() {
                        "loop" => loops = whole(&at_key, value, 1.0, MAX_PHASES as f64)? as u32,
                        "cpus" => attr.cpus = Some(cpu_list(&at_key, value)?),
                        "priority" => phase_priority = Some(priority(&at_key, value)?),
                        "util_min" => attr.util_min = Some(whole(&at_key, value, 0.0, 1024.0)? as u32),
                        "util_max" => attr.util_max = Some(whole(&at_key, value, 0.0, 1024.0)? as u32),
                        "policy" => phase_policy = Some(policy(&at_key, value)?),
                        "nodes_membind" => nodes_membind(&at_key, value)?,
                        "taskgroup" => attr.taskgroup = taskgroup(&at_key, value, taskgroups)?,
                        k if event_of(k).is_some() => phase_events.push((key.as_str(), value)),
                        _ => return Err(format!("{at_key}: unknown or unsupported phase key")),
                    }
                }
                // hetlab's SCHED_DEADLINE is a task's from its start to its end, on every CPU
                if phase_policy == Some("SCHED_DEADLINE")
                    || (deadline && phase_policy.or(phase_priority.map(|_| "")).is_some())
                {
                    return Err(format!(
                        "{at_phase}: a phase that changes a SCHED_DEADLINE task's policy is not supported; give \
                         SCHED_DEADLINE to the task"
                    ));
                }
                if deadline && attr.cpus.is_some() {
                    return Err(format!(
                        "{at_phase}: a SCHED_DEADLINE task's CPUs cannot change (sched_setaffinity fails with EBUSY \
                         unless they span the root domain); remove its cpus"
                    ));
                }
                parsed.push((at_phase, loops, attr, phase_events));
                policies.push((phase_policy, phase_priority));
            }
            let at_phases: Vec<String> = parsed.iter().map(|(at, ..)| at.clone()).collect();
            let set: Vec<Option<&str>> = policies.iter().map(|&(p, _)| p).collect();
            let priority_only: Vec<bool> = policies.iter().map(|(p, n)| p.is_none() && n.is_some()).collect();
            let in_effect = policies_in_effect(&at_phases, &set, &priority_only, task_policy)?;
            for ((entry, (own, given)), current) in parsed.iter_mut().zip(&policies).zip(in_effect) {
                if own.is_some() || given.is_some() {
                    let (class, nice) = sched_class(&entry.0, own.unwrap_or(current), *given)?;
                    // a priority alone keeps the policy: CFS's is a nice value only
                    entry.2.class = (own.is_some() || class.rt_priority().is_some()).then_some(class);
                    entry.2.nice = nice;
                }
            }
            let task_clamps = crate::workload::UclampRequest::new(at, clamp.0, clamp.1)?;
            check_phase_clamps(at, task_clamps, parsed.iter().map(|(at, _, attr, _)| (at.as_str(), attr)))?;
            let named = parsed
                .iter()
                .zip(&policies)
                .map(|((at, _, attr, _), (own, _))| (at.as_str(), *own, attr.taskgroup.is_some()));
            check_taskgroup_policy((at, task_policy, task_group.is_some()), named)?;
            let sets_sched = parsed.iter().any(|(_, _, attr, _)| *attr != SchedAttr::default());
            for (index, (at_phase, loops, attr, phase_events)) in parsed.into_iter().enumerate() {
                let attr = SchedAttr { cpus: attr.cpus.or_else(|| affinity.clone()), ..attr };
                let sched = sets_sched.then_some(PhaseKind::SetSched(attr));
                for phase_loop in 0..loops {
                    out.add_loop(&at_phase, index as u32, phase_loop, sched.clone(), &phase_events)?;
                }
            }
            (task_loop.unwrap_or(-1.0), false)
        }
        None => {
            check_taskgroup_policy((at, task_policy, task_group.is_some()), std::iter::empty())?;
            out.add_loop(at, 0, 0, None, &events)?;
            (task_loop.unwrap_or(-1.0), task_loop.is_some())
        }
    };
    if out.phases.len() == prologue_phases {
        return Err(format!("{at}: no events"));
    }
    let task = Task {
        name: name.to_string(),
        threads: ThreadCount::Fixed(instances),
        nice: nice.unwrap_or(0),
        affinity,
        repeat: if repeat < 0.0 { u32::MAX } else { repeat as u32 },
        phases: out.phases,
        prologue_phases,
        forked: false,
        rtapp: Some(RtappSteps { steps: out.steps, repeats_are_phase_loops }),
        uclamp: crate::workload::UclampRequest::new(at, clamp.0, clamp.1)?,
        class,
        taskgroup: task_group.filter(|p| p != "/"),
    };
    Ok((task, instances))
}

/// A task's phases as they are unrolled, with where each comes from.
struct Unrolled<'a> {
    at: &'a str,
    task: &'a str,
    instances: u32,
    /// The thread's start, from the run's: its delay.
    origin_us: u64,
    global: &'a Global,
    barrier_users: &'a mut BTreeMap<String, u32>,
    phases: Vec<Phase>,
    steps: Vec<RtappStep>,
}

impl Unrolled<'_> {
    /// One loop of rt-app phase `phase`: its scheduling attributes if it sets them, then its
    /// events in order.
    fn add_loop(
        &mut self,
        at: &str,
        phase: u32,
        phase_loop: u32,
        sched: Option<PhaseKind>,
        events: &[(&str, &Json)],
    ) -> Result<(), String> {
        let sets_sched = sched.is_some();
        if let Some(kind) = sched {
            self.phases.push(Phase::new(kind));
            self.steps.push(RtappStep { phase, phase_loop, loop_start: true, event: None });
        }
        for (id, &(key, value)) in events.iter().enumerate() {
            let at_event = format!("{at}.{key}");
            // barriers count their users as rt-app's parser does: once per naming event
            let counts_users = phase_loop == 0;
            let (phases, mut event) = self.event(&at_event, key, value, counts_users)?;
            event.id = id as u32;
            for (i, p) in phases.into_iter().enumerate() {
                self.phases.push(p);
                self.steps.push(RtappStep {
                    phase,
                    phase_loop,
                    loop_start: id == 0 && i == 0 && !sets_sched,
                    event: (i == 0).then(|| event.clone()),
                });
            }
            if self.phases.len() > MAX_PHASES {
                return Err(format!("{}: its phase loops unroll to more than {MAX_PHASES} steps", self.at));
            }
        }
        Ok(())
    }

    /// The phases one event becomes, and its marker.
    fn event(
        &mut self,
        at: &str,
        key: &str,
        value: &Json,
        counts_users: bool,
    ) -> Result<(Vec<Phase>, RtappEvent), String> {
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
                only_keys(at, members, &["ref", "period", "mode"])?;
                let name =
                    member(members, "ref").map(|v| text(&format!("{at}.ref"), v)).transpose()?.unwrap_or("unknown");
                let period_us = match member(members, "period") {
                    Some(v) => whole(&format!("{at}.period"), v, 0.0, MAX_PHASE_US)? as u64,
                    None => 0,
                };
                let relative = match member(members, "mode").map(|v| text(&format!("{at}.mode"), v)).transpose()? {
                    None | Some("relative") => true,
                    Some("absolute") => false,
                    Some(other) => {
                        return Err(format!("{at}.mode must be \"relative\" or \"absolute\", got \"{other}\""))
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
                let (phase, type_name) = memrun(at, value)?;
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
                only_keys(at, members, &["ref", "mutex"])?;
                let field = |f: &str| -> Result<String, String> {
                    let v = member(members, f).ok_or_else(|| format!("{at}: no \"{f}\""))?;
                    Ok(text(&format!("{at}.{f}"), v)?.to_string())
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
                let users = self.barrier_users.entry(name.to_string()).or_insert(0);
                if counts_users {
                    *users += self.instances;
                }
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

/// A `memrun` event (`{"type": "read"|"write"|"chase", "size", "count", "stride", "pattern",
/// "ref"}`, src/rt-app_parse_config.c): `count` steps over a buffer of `size` bytes, and the
/// name of its rt-app type.
fn memrun(at: &str, value: &Json) -> Result<(Phase, &'static str), String> {
    let members = object(at, value)?;
    only_keys(at, members, &["type", "size", "count", "stride", "pattern", "ref"])?;
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
    if kind != "chase" && (get("stride").is_some() || get("pattern").is_some()) {
        return Err(format!("{at}: stride and pattern belong to type \"chase\""));
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
                Some(other) => {
                    return Err(format!("{at}.pattern must be \"random\" or \"sequential\", got \"{other}\""))
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

/// The threads `fork` starts: per forked task a copy with one thread per fork, marked
/// `forked`; a task of 0 instances only exists through its forks. A forked thread may fork in
/// turn: a task's forks are counted from all its threads, its own instances and its forked
/// ones (forks that come back to a task they started from would never end: an error).
fn add_forked_tasks(origin: &str, translated: Vec<Translated>) -> Result<Vec<Task>, String> {
    // forks[i]: (target index, forks per run of task i's phases)
    let mut forks: Vec<Vec<(usize, u64)>> = vec![Vec::new(); translated.len()];
    for (i, (task, _)) in translated.iter().enumerate() {
        for phase in &task.phases {
            let PhaseKind::Fork { task: target } = &phase.kind else { continue };
            let Some(j) = translated.iter().position(|(t, _)| &t.name == target) else {
                return Err(format!("{origin}: tasks.{}: fork names '{target}', which is not a task", task.name));
            };
            if task.repeat == u32::MAX {
                return Err(format!(
                    "{origin}: tasks.{}: a fork in a task that loops forever is not supported; give it a loop count",
                    task.name
                ));
            }
            forks[i].push((j, task.repeat as u64));
        }
    }
    // Threads forked per task, in an order where every forking task comes before its targets.
    let mut forked = vec![0u64; translated.len()];
    for i in fork_order(origin, &translated, &forks)? {
        let threads = translated[i].1 as u64 + forked[i];
        for &(j, per_thread) in &forks[i] {
            forked[j] = forked[j].saturating_add(threads.saturating_mul(per_thread));
        }
    }
    let mut tasks = Vec::new();
    for ((task, instances), n) in translated.into_iter().zip(forked) {
        if n > 0 {
            let threads = u32::try_from(n).ok().filter(|&n| n as u64 <= crate::workload::MAX_THREADS);
            let threads =
                threads.ok_or_else(|| format!("{origin}: tasks.{}: forked {n} times, too many", task.name))?;
            tasks.push(Task { threads: ThreadCount::Fixed(threads), forked: true, ..task.clone() });
        }
        if instances > 0 {
            tasks.push(task);
        }
    }
    if tasks.iter().all(|t| t.forked) {
        return Err(format!("{origin}: tasks: every task has 0 instances; give one at least 1"));
    }
    Ok(tasks)
}

/// The tasks in an order where a task comes after every task that forks it (Kahn's); a cycle
/// of forks is an error naming a task on it.
fn fork_order(origin: &str, translated: &[Translated], forks: &[Vec<(usize, u64)>]) -> Result<Vec<usize>, String> {
    let mut forked_by = vec![0usize; translated.len()];
    for &(j, _) in forks.iter().flatten() {
        forked_by[j] += 1;
    }
    let mut ready: Vec<usize> = (0..translated.len()).filter(|&i| forked_by[i] == 0).collect();
    let mut order = Vec::with_capacity(translated.len());
    while let Some(i) = ready.pop() {
        order.push(i);
        for &(j, _) in &forks[i] {
            forked_by[j] -= 1;
            if forked_by[j] == 0 {
                ready.push(j);
            }
        }
    }
    match (0..translated.len()).find(|&i| forked_by[i] > 0) {
        Some(i) => Err(format!(
            "{origin}: tasks.{}: its forks lead back to it, so forking would never end",
            translated[i].0.name
        )),
        None => Ok(order),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::PhaseKind;

    #[test]
    fn strings_take_every_json_escape_and_refuse_what_rt_app_cannot_hold() {
        let string = |text: &str| match parse("t.json", &format!("{{\"k\": \"{text}\"}}")) {
            Ok(Json::Obj(members)) => match &members[0].1 {
                Json::Str(s) => Ok(s.clone()),
                other => panic!("{other:?}"),
            },
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e),
        };
        assert_eq!(string(r#"caf\u00e9 \"q\" \\ \/ \b\f\n\r\t"#).unwrap(), "café \"q\" \\ / \u{8}\u{c}\n\r\t");
        assert_eq!(string(r"\uD83D\uDE00 \u20AC").unwrap(), "\u{1F600} €"); // a surrogate pair, then the BMP
        for (text, says) in [
            (r"\u00g9", "four hexadecimal digits"),
            (r"\u+0e9", "four hexadecimal digits"),
            (r"\u12", "four hexadecimal digits"),
            (r"\uD83D x", "high surrogate without its low surrogate"),
            (r"\uDE00", "low surrogate without its high surrogate"),
            (r"\u0000delay", "cannot hold a NUL"),
            (r"\x41", "an escape JSON does not have"),
        ] {
            let e = string(text).unwrap_err();
            assert!(e.starts_with("t.json: line 1, column ") && e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn the_dialect_has_comments_trailing_commas_and_repeated_keys_in_order() {
        let doc = r#"/* a header */ { "a": 1, // one
            "b": [1, 2,], "a": "x", }"#;
        let Json::Obj(members) = parse("t.json", doc).unwrap() else { panic!() };
        let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["a", "b", "a"]);
        assert_eq!(members[2].1, Json::Str("x".into()));
        let e = parse("t.json", "{\n \"a\": 1 \"b\": 2}").unwrap_err();
        assert!(e.starts_with("t.json: line 2, column 9: expected ',' or '}'"), "{e}");
        assert!(parse("t.json", "{} x").unwrap_err().contains("text after the end"));
        assert!(parse("t.json", "{ /* open").unwrap_err().contains("not closed"));
    }

    #[test]
    fn priority_inheritance_is_refused_only_where_it_would_change_the_run() {
        let doc = |policy: &str, pi: bool| {
            format!(
                r#"{{"global": {{"pi_enabled": {pi}}}, "tasks": {{"t": {{"policy": "{policy}", "lock": "m",
                    "run": 1, "unlock": "m"}}, "u": {{"policy": "SCHED_FIFO", "run": 1}}}}}}"#
            )
        };
        // CFS lockers: a CFS waiter boosts nothing; no PI: the mutexes are plain
        assert!(from_rtapp_json("t.json", &doc("SCHED_OTHER", true)).is_ok());
        assert!(from_rtapp_json("t.json", &doc("SCHED_FIFO", false)).is_ok());
        let e = from_rtapp_json("t.json", &doc("SCHED_RR", true)).unwrap_err();
        assert!(e.starts_with("t.json: global.pi_enabled: task t is real-time"), "{e}");
    }

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

    #[test]
    fn a_task_becomes_threads_phases_and_loops() {
        let doc = r#"{
            "global": { "calibration": 120, "default_policy": "SCHED_OTHER", "duration": -1, "logdir": "." },
            "tasks": {
                "periodic": { "instance": 2, "priority": -5, "cpus": [0, 1], "loop": 100, "util_min": 128,
                              "run": 2000, "timer": { "ref": "t", "period": 16000, "mode": "absolute" } },
                "burst": { "delay": 500, "loop": 2,
                           "phases": { "p0": { "loop": 3, "run0": 100, "sleep0": 50, "run1": 10 },
                                       "p1": { "suspend": "ignored" } } },
                "waker": { "sleep": 1000, "resume": "burst" },
            }
        }"#;
        let w = from_rtapp_json("dir/demo.json", doc).unwrap();
        assert_eq!((w.name.as_str(), w.reference_cpu, w.duration_us), ("demo", None, None));
        // without phases, `loop` loops the task's one phase: run, then the timer
        let t = &w.tasks[0];
        assert_eq!(
            (t.threads, t.nice, t.repeat, t.affinity.clone()),
            (ThreadCount::Fixed(2), -5, 100, Some(vec![0, 1]))
        );
        assert_eq!((t.uclamp.min, t.uclamp.max), (Some(128), None));
        assert_eq!(t.phases[0].kind, PhaseKind::Periodic { run_us: 2000.0, period_us: 0, count: 1 });
        let timer =
            PhaseKind::Timer { timer: "t".into(), period_us: 16000, relative: false, per_thread: false, origin_us: 0 };
        assert_eq!(t.phases[1].kind, timer);
        assert!(t.rtapp.as_ref().unwrap().repeats_are_phase_loops);
        // with phases: the delay once (a prologue), then 2 loops of (3 x run, sleep, run) and
        // the suspend, which waits on the task's own name
        let burst = &w.tasks[1];
        assert_eq!((burst.repeat, burst.prologue_phases, burst.phases.len()), (2, 1, 1 + 3 * 3 + 1));
        let delay = PhaseKind::Timer {
            timer: DELAY_TIMER.into(),
            period_us: 500,
            relative: false,
            per_thread: true,
            origin_us: 0,
        };
        assert_eq!(burst.phases[0].kind, delay);
        assert_eq!(burst.phases[2].kind, PhaseKind::Sleep { duration_us: 50 });
        assert_eq!(burst.phases[10].kind, PhaseKind::Suspend { event: "burst".into() });
        let steps = &burst.rtapp.as_ref().unwrap().steps;
        let starts: Vec<(u32, u32)> = steps.iter().filter(|s| s.loop_start).map(|s| (s.phase, s.phase_loop)).collect();
        assert_eq!(starts, [(0, 0), (0, 1), (0, 2), (1, 0)]);
        assert_eq!(steps[0].event, None); // the delay
        let run1 = steps[3].event.as_ref().unwrap();
        assert_eq!((run1.id, run1.type_number, run1.desc.as_str(), run1.run_us), (2, 6, "run1", 10));
        // no loop and no phases: rt-app loops forever (bounded by its duration)
        assert_eq!(w.tasks[2].repeat, u32::MAX);
        assert_eq!(w.tasks[2].phases[1].kind, PhaseKind::Resume { event: "burst".into() });
        let calibrated = from_rtapp_json(
            "c.json",
            r#"{"global": {"calibration": "CPU4", "duration": 3}, "tasks": {"t": {"run": 1}}}"#,
        );
        let calibrated = calibrated.unwrap();
        assert_eq!((calibrated.reference_cpu, calibrated.duration_us), (Some(4), Some(3_000_000)));
        let default = from_rtapp_json("d.json", r#"{"tasks": {"t": {"run": 1}}}"#).unwrap();
        assert_eq!(default.reference_cpu, Some(0)); // rt-app calibrates on CPU0
    }

    #[test]
    fn every_event_becomes_phases() {
        let doc = r#"{
            "global": { "mem_buffer_size": 1024, "io_device": "/dev/null" },
            "tasks": {
                "a": { "loop": 1, "lock": "m", "wait": { "ref": "c", "mutex": "m" }, "unlock": "m",
                       "sync": { "ref": "c", "mutex": "m" }, "signal": "c", "broad": "c",
                       "runtime": 300, "timer": { "ref": "unique", "period": 1000 },
                       "memrun": { "type": "chase", "size": 4194304, "count": 1000 },
                       "memrun1": { "type": "write", "size": 65536, "count": 131072, "ref": "buf" },
                       "mem": 4096, "iorun": 4096, "yield": "", "barrier": "b", "fork": "child",
                       "sem_post": "s", "sem_wait": "s" },
                "child": { "instance": 0, "loop": 1, "run": 10 },
                "b": { "instance": 2, "loop": 1, "barrier": "b" }
            }
        }"#;
        let w = from_rtapp_json("all.json", doc).unwrap();
        let sync = |op, object: &str| PhaseKind::Sync { op, object: object.into() };
        let kinds: Vec<PhaseKind> = w.tasks[0].phases.iter().map(|p| p.kind.clone()).collect();
        let expected_head = [
            sync(SyncOp::Lock, "m"),
            // wait: release, wait, take again
            sync(SyncOp::Unlock, "m"),
            PhaseKind::Suspend { event: "c".into() },
            sync(SyncOp::Lock, "m"),
            sync(SyncOp::Unlock, "m"),
            // sync: signal first
            sync(SyncOp::Signal, "c"),
            sync(SyncOp::Unlock, "m"),
            PhaseKind::Suspend { event: "c".into() },
            sync(SyncOp::Lock, "m"),
            sync(SyncOp::Signal, "c"),
            PhaseKind::Resume { event: "c".into() },
            PhaseKind::Runtime { duration_us: 300 },
            PhaseKind::Timer {
                timer: "unique".into(),
                period_us: 1000,
                relative: true,
                per_thread: true,
                origin_us: 0,
            },
        ];
        assert_eq!(kinds[..expected_head.len()], expected_head);
        let rest = &w.tasks[0].phases[expected_head.len()..];
        // the chase: one dependent load per step over size/stride 64-byte nodes
        assert_eq!(rest[0].kind, PhaseKind::Compute { instructions: 1000.0 });
        assert!(rest[0].mem.dependent_loads && rest[0].mem.working_set_bytes() == 4194304);
        // a buffer of 1 TiB is the largest (MAX_WORKING_SET_BYTES, as a workload file's working set)
        let tib = r#"{"tasks": {"t": {"memrun": {"type": "read", "size": 1099511627776, "count": 1}}}}"#;
        assert_eq!(from_rtapp_json("t.json", tib).unwrap().tasks[0].phases[0].mem.working_set_bytes(), 1 << 40);
        // a byte loop writing a shared buffer
        assert_eq!(rest[1].kind, PhaseKind::Compute { instructions: 131072.0 * BYTE_LOOP_INSTRUCTIONS });
        assert!(rest[1].mem.shared_working_set && rest[1].mem.write_fraction == 1.0);
        // memset over the thread's buffer; writes to /dev/null, one system call per buffer
        assert_eq!(rest[2].mem.working_set_bytes(), 1024);
        assert_eq!(rest[3].kind, PhaseKind::Compute { instructions: 4.0 * NULL_WRITE_INSTRUCTIONS });
        // the barrier waits for a's thread and b's two
        assert_eq!(
            rest[4..].iter().map(|p| p.kind.clone()).collect::<Vec<_>>(),
            [
                PhaseKind::Yield,
                sync(SyncOp::Barrier { parties: 3 }, "b"),
                PhaseKind::Fork { task: "child".into() },
                sync(SyncOp::SemPost, "s"),
                sync(SyncOp::SemWait, "s"),
            ]
        );
        // the child has no instance of its own: one forked thread per fork
        let child: Vec<&Task> = w.tasks.iter().filter(|t| t.name == "child").collect();
        assert_eq!(child.len(), 1);
        assert!(child[0].forked && child[0].threads == ThreadCount::Fixed(1));
        let markers: Vec<u32> = w.tasks[0]
            .rtapp
            .as_ref()
            .unwrap()
            .steps
            .iter()
            .filter_map(|s| s.event.as_ref())
            .map(|e| e.type_number)
            .collect();
        assert_eq!(markers, [8, 2, 9, 7, 3, 4, 19, 11, 17, 15, 14, 18, 20, 21, 22, 24, 23]);
    }

    #[test]
    fn a_phase_that_sets_its_cpus_or_priority_sets_them_at_each_loop() {
        let doc = r#"{"tasks": {"t": {"cpus": [0, 1], "loop": 1, "phases": {
            "a": {"loop": 2, "cpus": [4], "priority": 5, "run": 10},
            "b": {"run": 20} } } } }"#;
        let t = &from_rtapp_json("s.json", doc).unwrap().tasks[0];
        let kinds: Vec<&PhaseKind> = t.phases.iter().map(|p| &p.kind).collect();
        let here = PhaseKind::SetSched(SchedAttr { cpus: Some(vec![4]), nice: Some(5), ..Default::default() });
        // phase b has none of its own: the task's cpus come back, its priority stays
        let back = PhaseKind::SetSched(SchedAttr { cpus: Some(vec![0, 1]), ..Default::default() });
        assert_eq!([kinds[0], kinds[2], kinds[4]], [&here, &here, &back]);
        let steps = &t.rtapp.as_ref().unwrap().steps;
        assert!(steps[0].loop_start && !steps[1].loop_start && steps[1].event.is_some());
    }

    #[test]
    fn a_phase_that_gives_its_own_policy_needs_none_in_effect_before_it() {
        // on the first loop SCHED_OTHER is in effect before p, on later ones SCHED_RR (p's own):
        // p says which it runs under, so that is no ambiguity (it used to be refused as one)
        let doc = r#"{"tasks": {"t": {"phases": {"p": {"policy": "SCHED_RR", "priority": 50, "run": 10}}}}}"#;
        let t = &from_rtapp_json("s.json", doc).unwrap().tasks[0];
        let rr = PhaseKind::SetSched(SchedAttr { class: Some(SchedClass::RoundRobin(50)), ..Default::default() });
        assert_eq!(t.phases[0].kind, rr);
    }

    #[test]
    fn taskgroups_are_the_tasks_from_their_start_and_a_phases_from_each_of_its_loops() {
        // rt-app's tutorial example11: phase0 in /tg1/tg11, phase1 stays there, phase2 in the
        // root group; the task's own group holds from the thread's start; "" is none
        let doc = r#"{"tasks": {
            "thread0": {"taskgroup": "//tg0/", "loop": -1, "phases": {
                "phase0": {"run": 20000, "sleep": 80000, "taskgroup": "/tg1/tg11"},
                "phase1": {"run": 20000, "sleep": 80000},
                "phase2": {"run": 20000, "sleep": 80000, "taskgroup": "/"}}},
            "plain": {"taskgroup": "", "run": 1000}},
            "global": {"duration": 2}}"#;
        let w = from_rtapp_json("example11.json", doc).unwrap();
        let t = &w.tasks[0];
        assert_eq!(t.taskgroup.as_deref(), Some("/tg0"));
        assert_eq!(w.tasks[1].taskgroup, None);
        let groups: Vec<Option<&str>> = t
            .phases
            .iter()
            .filter_map(|p| match &p.kind {
                PhaseKind::SetSched(attr) => Some(attr.taskgroup.as_deref()),
                _ => None,
            })
            .collect();
        assert_eq!(groups, [Some("/tg1/tg11"), None, Some("/")]);
        let mut paths: Vec<&str> = w.taskgroup_paths().collect();
        paths.sort();
        assert_eq!(paths, ["/", "/tg0", "/tg1/tg11"]);
        // at most 32 distinct names (rt-app's max_nbr_tgs), "/a" and "/a/" counting as two
        let doc = |n: usize| {
            let slash = |i: usize| if i % 2 == 1 { "/" } else { "" };
            let tasks: Vec<String> =
                (0..n).map(|i| format!(r#""t{i}": {{"taskgroup": "/g{}{}", "run": 1}}"#, i / 2, slash(i))).collect();
            format!(r#"{{"tasks": {{{}}}}}"#, tasks.join(", "))
        };
        assert!(from_rtapp_json("many.json", &doc(32)).is_ok());
        let e = from_rtapp_json("many.json", &doc(33)).unwrap_err();
        assert!(e.contains("tasks.t32.taskgroup: more than 32 distinct taskgroups"), "{e}");
    }

    #[test]
    fn binding_memory_to_the_one_node_changes_nothing() {
        let doc = |task_bind: &str, phase_bind: &str| {
            format!(
                r#"{{"tasks": {{"t": {{ {task_bind} "loop": 1, "phases": {{"p": {{ {phase_bind} "loop": 2, "run": 100, "sleep": 100}}}}}}}}}}"#
            )
        };
        let phases = |doc: String| format!("{:?}", from_rtapp_json("t.json", &doc).unwrap().tasks[0].phases);
        assert_eq!(phases(doc("", "")), phases(doc(r#""nodes_membind": [0],"#, r#""nodes_membind": [0],"#)));
    }

    #[test]
    fn sched_idle_is_a_cfs_policy_rt_app_may_put_in_a_taskgroup() {
        let doc = r#"{"tasks": {"t": {"policy": "SCHED_IDLE", "priority": 5, "taskgroup": "/bg", "run": 100},
            "u": {"phases": {"a": {"run": 1}, "b": {"policy": "SCHED_IDLE", "taskgroup": "/bg", "run": 1}}}}}"#;
        let w = from_rtapp_json("t.json", doc).unwrap();
        // rt-app sets no nice value for SCHED_IDLE: the priority stays unapplied
        assert_eq!((w.tasks[0].class, w.tasks[0].nice), (SchedClass::Idle, 0));
        let PhaseKind::SetSched(attr) = &w.tasks[1].phases[2].kind else { panic!("{:?}", w.tasks[1].phases) };
        assert_eq!((attr.class, attr.nice), (Some(SchedClass::Idle), None));
    }

    #[test]
    fn sched_batch_takes_a_nice_value_and_may_be_in_a_taskgroup() {
        // rt-app (since 2026) sets SCHED_BATCH as SCHED_OTHER: its priority is the nice value
        let doc = r#"{"tasks": {"t": {"policy": "SCHED_BATCH", "priority": 5, "taskgroup": "/bg", "run": 100},
            "u": {"phases": {"a": {"run": 1}, "b": {"policy": "SCHED_BATCH", "priority": -3, "run": 1}}}}}"#;
        let w = from_rtapp_json("t.json", doc).unwrap();
        assert_eq!((w.tasks[0].class, w.tasks[0].nice), (SchedClass::Batch, 5));
        let PhaseKind::SetSched(attr) = &w.tasks[1].phases[2].kind else { panic!("{:?}", w.tasks[1].phases) };
        assert_eq!((attr.class, attr.nice), (Some(SchedClass::Batch), Some(-3)));
        let e = from_rtapp_json("t.json", &doc.replace("\"priority\": 5", "\"priority\": 20")).unwrap_err();
        assert_eq!(e, "t.json: tasks.t: a SCHED_BATCH priority is a nice value within -20..=19, got 20");
    }

    #[test]
    fn what_is_not_supported_is_a_one_line_error_naming_it() {
        let cases = [
            (r#"{"tasks": {"t": {"memrun": 10}}}"#, "tasks.t.memrun must be an object"),
            (r#"{"tasks": {"t": {"memrun": {"type": "chase", "size": 64, "count": 1}}}}"#, "at least 2 x stride"),
            // a buffer, as a working set, is at most 1 TiB (MAX_WORKING_SET_BYTES), a chase's stride too
            (
                r#"{"tasks": {"t": {"memrun": {"type": "read", "size": 1e15, "count": 1000}}}}"#,
                "tasks.t.memrun.size must be a whole number in 1..=1.099511627776e12, got 1e15",
            ),
            (r#"{"tasks": {"t": {"memrun": {"type": "chase", "size": 1e15, "count": 1}}}}"#, "memrun.size must be"),
            (
                r#"{"tasks": {"t": {"memrun": {"type": "chase", "size": 2199023255552, "stride": 1099511627776, "count": 1}}}}"#,
                "tasks.t.memrun.size must be a whole number in 1..=1.099511627776e12, got 2.199023255552e12",
            ),
            (
                r#"{"tasks": {"t": {"memrun": {"type": "chase", "size": 1099511627776, "stride": 2199023255552, "count": 1}}}}"#,
                "tasks.t.memrun.stride must be a whole number in 4..=1.099511627776e12, got 2.199023255552e12",
            ),
            (r#"{"tasks": {"t": {"loop": 1, "fork": "x"}}}"#, "fork names 'x', which is not a task"),
            (r#"{"tasks": {"t": {"fork": "u"}, "u": {"instance": 0, "run": 1}}}"#, "loops forever is not supported"),
            (r#"{"tasks": {"t": {"dl-runtime": 5, "run": 1}}}"#, "tasks.t: dl-runtime, dl-period and dl-deadline belong to"),
            (r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "run": 1}}}"#, "runtime of 0 µs is below the kernel's"),
            (
                r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 300, "dl-period": 200, "run": 1}}}"#,
                "runtime <= deadline <= period, got 300 / 200 / 200 µs",
            ),
            (
                r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 30, "dl-period": 50, "run": 1}}}"#,
                "period of 50 µs is outside 100..=4194304 µs",
            ),
            (
                r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "priority": 3, "dl-runtime": 300, "run": 1}}}"#,
                "tasks.t: a SCHED_DEADLINE task's priority must be 0",
            ),
            (
                r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 300, "phases": {"p": {"priority": 5, "run": 1}}}}}"#,
                "tasks.t.phases.p: a phase that changes a SCHED_DEADLINE task's policy",
            ),
            (
                r#"{"tasks": {"t": {"phases": {"p": {"policy": "SCHED_DEADLINE", "run": 1}}}}}"#,
                "tasks.t.phases.p: a phase that changes a SCHED_DEADLINE task's policy",
            ),
            (
                r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 300, "phases": {"p": {"cpus": [1], "run": 1}}}}}"#,
                "tasks.t.phases.p: a SCHED_DEADLINE task's CPUs cannot change",
            ),
            (r#"{"tasks": {"t": {"taskgroup": "a", "run": 1}}}"#, "tasks.t.taskgroup: taskgroup 'a' must start with /"),
            (r#"{"tasks": {"t": {"taskgroup": "/a/../b", "run": 1}}}"#, "has the component '..'"),
            (r#"{"tasks": {"t": {"taskgroup": 3, "run": 1}}}"#, "tasks.t.taskgroup must be a string"),
            (
                r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "taskgroup": "/", "run": 1}}}"#,
                "tasks.t: rt-app has no taskgroup support for SCHED_FIFO",
            ),
            (
                r#"{"tasks": {"t": {"policy": "SCHED_RR", "phases": {"a": {"run": 1}, "b": {"taskgroup": "/g", "run": 1}}}}}"#,
                "tasks.t.phases.b: rt-app has no taskgroup support for SCHED_RR",
            ),
            (r#"{"tasks": {"t": {"nodes_membind": [0, 1], "run": 1}}}"#, "node 1 does not exist"),
            (r#"{"tasks": {"t": {"nodes_membind": 0, "run": 1}}}"#, "must be an array of NUMA node numbers"),
            (
                r#"{"tasks": {"t": {"util_max": 500, "phases": {"a": {"util_min": 100, "run": 1}, "b": {"util_min": 600, "run": 1}}}}}"#,
                "tasks.t.phases.b: util_min 600 above util_max 500",
            ),
            (r#"{"tasks": {"t": {"util_min": 600, "util_max": 500, "run": 1}}}"#, "min <= max"),
            (r#"{"tasks": {"t": {"policy": "SCHED_NORMAL", "run": 1}}}"#, "unknown policy 'SCHED_NORMAL'"),
            (r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "priority": 0, "run": 1}}}"#, "within 1..=99, got 0"),
            (r#"{"tasks": {"t": {"priority": 50, "run": 1}}}"#, "nice value within -20..=19, got 50"),
            // a phase that gives its policy needs none in effect before it; its priority is checked
            (
                r#"{"tasks": {"t": {"phases": {"p": {"policy": "SCHED_RR", "priority": 200, "run": 1}}}}}"#,
                "tasks.t.phases.p: a real-time priority is within 1..=99, got 200",
            ),
            (r#"{"tasks": {"t": {"policy": "SCHED_RR", "priority": 100, "run": 1}}}"#, "within 1..=99, got 100"),
            (
                r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "phases": {"a": {"priority": 5, "run": 1}, "b": {"policy": "SCHED_OTHER", "run": 1}}}}}"#,
                "tasks.t.phases.a: give its policy with its priority: SCHED_FIFO on the first loop, SCHED_OTHER on later ones",
            ),
            (r#"{"global": {"io_device": "/tmp/x"}, "tasks": {"t": {"run": 1}}}"#, "only /dev/null"),
            (r#"{"global": {"pi_enabled": 1}, "tasks": {"t": {"run": 1}}}"#, "pi_enabled must be true or false"),
            (
                r#"{"global": {"pi_enabled": true}, "tasks": {"t": {"policy": "SCHED_FIFO", "lock": "m", "run": 1,
                   "unlock": "m"}}}"#,
                "task t is real-time and takes a lock, and priority inheritance is not modelled",
            ),
            (
                r#"{"global": {"pi_enabled": true}, "tasks": {"t": {"phases": {"p": {"policy": "SCHED_RR",
                   "lock": "m", "run": 1, "unlock": "m"}}}}}"#,
                "task t is real-time",
            ),
            (r#"{"global": {"calibration": "big"}, "tasks": {"t": {"run": 1}}}"#, "\"CPU<n>\" or ns per loop"),
            (r#"{"tasks": {"t": {"timer": {"period": 5, "mode": "late"}}}}"#, "mode must be"),
            (r#"{"tasks": {"t": {"wait": {"ref": "c"}}}}"#, "tasks.t.wait: no \"mutex\""),
            (r#"{"tasks": {"t": {"lock": ""}}}"#, "tasks.t.lock must not be empty"),
            (r#"{"tasks": {}}"#, "at least one task"),
            (r#"{"tasks": {"t": {"instance": 0, "run": 1}}}"#, "every task has 0 instances"),
            (r#"{"tasks": {"t": {"run": 1e400}}}"#, "1e400 is out of range"),
            ("\u{feff}{\"tasks\": {\"t\": {\"run\": 1}}}", "byte-order mark"),
        ];
        for (doc, says) in cases {
            let e = from_rtapp_json("x.json", doc).unwrap_err();
            assert!(e.contains(says) && e.starts_with("x.json") && !e.contains('\n'), "{doc}: {e}");
        }
    }
}
