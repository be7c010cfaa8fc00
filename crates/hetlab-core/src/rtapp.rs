//! rt-app workloads (github.com/scheduler-tools/rt-app, `doc/tutorial.txt`) read into hetlab's
//! workload model.
//!
//! The dialect is rt-app's, not strict JSON: json-c accepts `//` and `/* */` comments, trailing
//! commas and repeated keys (kept in order: `doc/workgen` renames them to `run0`, `run1`, ...),
//! and an event is named by its prefix (`run0`, `sleep_long`), tried in the order of rt-app's
//! `parse_task_event_data` (so `runtime...` is `runtime`, not `run`).
//!
//! What is translated: `tasks` (`instance`, `loop`, `delay`, `cpus`, `priority`, `policy`
//! SCHED_OTHER, `phases` with their own `loop`), `global` (`duration` -1, `calibration` as ns per
//! loop, `default_policy`, and the logging keys, which change nothing in a simulation), and the
//! events `run`, `sleep`, `timer` (after one `run`: a periodic task), `suspend` and `resume`.
//! Every other event or key is a one-line error naming it, never skipped.
//!
//! `run` is rt-app's calibrated work: a number of loops that take that long on the calibration
//! CPU. hetlab's reference is the biggest core at its top OPP (what LISA calibrates on), so a
//! `run` stretches on slower cores and OPPs as rt-app's does.

use crate::workload::{PhaseFile, Task, Workload};

/// Most phases one task may unroll to (a phase's `loop` repeats its events).
const MAX_PHASES: usize = 4096;

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
        text.parse::<f64>().map(Json::Num).map_err(|_| self.error(&format!("'{text}' is not a number")))
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
                        Some(b'"') => b'"',
                        Some(b'\\') => b'\\',
                        Some(b'/') => b'/',
                        Some(b'n') => b'\n',
                        Some(b't') => b'\t',
                        _ => return Err(self.error("an escape other than \\\" \\\\ \\/ \\n \\t")),
                    };
                    out.push(escaped);
                    self.pos += 2;
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
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
    &["logdir", "log_basename", "log_size", "ftrace", "gnuplot", "lock_pages", "pi_enabled", "cumulative_slack"];

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
        return Err(format!("{at} must be a whole number in {min}..={max}, got {x}"));
    }
    Ok(x)
}

fn text<'v>(at: &str, value: &'v Json) -> Result<&'v str, String> {
    match value {
        Json::Str(s) => Ok(s),
        other => Err(format!("{at} must be a string, got {}", other.kind())),
    }
}

fn object<'v>(at: &str, value: &'v Json) -> Result<&'v [(String, Json)], String> {
    match value {
        Json::Obj(members) => Ok(members),
        other => Err(format!("{at} must be an object, got {}", other.kind())),
    }
}

fn sched_other(at: &str, value: &Json) -> Result<(), String> {
    match text(at, value)? {
        "SCHED_OTHER" => Ok(()),
        other => Err(format!("{at}: {other} is not supported yet (hetlab schedules SCHED_OTHER tasks only)")),
    }
}

/// A workload from an rt-app JSON document; `origin` names it in errors and gives the name.
pub fn from_rtapp_json(origin: &str, text_in: &str) -> Result<Workload, String> {
    let root = parse(origin, text_in)?;
    let members = object(origin, &root)?;
    let mut tasks_json = None;
    for (key, value) in members {
        let at = format!("{origin}: {key}");
        match key.as_str() {
            "tasks" => tasks_json = Some(object(&at, value)?),
            "global" => check_global(&at, value)?,
            "resources" if matches!(value, Json::Obj(m) if m.is_empty()) => {}
            "resources" => {
                return Err(format!(
                    "{at}: declared resources (mutexes, conditions, barriers, timers) are not supported yet; \
                     remove the section (timers and suspend/resume need none)"
                ))
            }
            _ => return Err(format!("{at}: unknown key; an rt-app file has tasks, global and resources")),
        }
    }
    let tasks_json = tasks_json.ok_or_else(|| format!("{origin}: no \"tasks\" object"))?;
    if tasks_json.is_empty() {
        return Err(format!("{origin}: tasks: a workload needs at least one task"));
    }
    let tasks = tasks_json
        .iter()
        .map(|(name, body)| task(&format!("{origin}: tasks.{name}"), name, body))
        .collect::<Result<Vec<_>, _>>()?;
    let name = std::path::Path::new(origin).file_stem().and_then(|s| s.to_str()).unwrap_or("rt-app").to_string();
    let workload = Workload { name, tasks };
    workload.check_threads(origin)?;
    Ok(workload)
}

fn check_global(at: &str, value: &Json) -> Result<(), String> {
    for (key, value) in object(at, value)? {
        let at = format!("{at}.{key}");
        match key.as_str() {
            "duration" => {
                if number(&at, value)? > 0.0 {
                    return Err(format!(
                        "{at}: a run length is not supported yet; give loop counts, or stop the run with \
                         hetlab simulate --time-limit"
                    ));
                }
            }
            "calibration" => {
                if !matches!(value, Json::Num(_)) {
                    return Err(format!(
                        "{at}: calibrating on a named CPU is not supported yet; give the ns per loop (as LISA \
                         writes it): run durations are then work of the biggest core at its top OPP"
                    ));
                }
            }
            "default_policy" => sched_other(&at, value)?,
            k if LOGGING_KEYS.contains(&k) => {}
            _ => return Err(format!("{at}: unknown or unsupported global key")),
        }
    }
    Ok(())
}

fn task(at: &str, name: &str, body: &Json) -> Result<Task, String> {
    let mut threads = 1u32;
    let mut repeat = 1u32;
    let mut forever = false;
    let mut delay_us = 0.0;
    let mut nice = 0;
    let mut affinity = None;
    let mut phases_json = None;
    let mut events = Vec::new();
    for (key, value) in object(at, body)? {
        let at_key = format!("{at}.{key}");
        match key.as_str() {
            "instance" => threads = whole(&at_key, value, 1.0, crate::workload::MAX_THREADS as f64)? as u32,
            "loop" => match whole(&at_key, value, -1.0, u32::MAX as f64)? {
                -1.0 => forever = true,
                0.0 => return Err(format!("{at_key}: 0 loops would run nothing; give -1 (forever) or a count")),
                n => repeat = n as u32,
            },
            "delay" => delay_us = whole(&at_key, value, 0.0, 1e12)?,
            "priority" => nice = whole(&at_key, value, -20.0, 19.0)? as i32,
            "policy" => sched_other(&at_key, value)?,
            "cpus" => {
                let Json::Arr(cpus) = value else { return Err(format!("{at_key} must be an array of CPU numbers")) };
                let cpus: Result<Vec<usize>, String> =
                    cpus.iter().map(|c| whole(&at_key, c, 0.0, 4095.0).map(|c| c as usize)).collect();
                affinity = Some(cpus?);
            }
            "phases" => phases_json = Some(object(&at_key, value)?),
            k if event_of(k).is_some() => events.push((key.as_str(), value)),
            _ => return Err(format!("{at_key}: unknown or unsupported task key")),
        }
    }
    let mut body_phases = Vec::new();
    match phases_json {
        Some(_) if !events.is_empty() => {
            return Err(format!("{at}: give events either in phases or in the task, not both"));
        }
        Some(phases) => {
            for (phase_name, phase) in phases {
                let at_phase = format!("{at}.phases.{phase_name}");
                let mut loops = 1usize;
                let mut phase_events = Vec::new();
                for (key, value) in object(&at_phase, phase)? {
                    match key.as_str() {
                        "loop" => loops = whole(&format!("{at_phase}.loop"), value, 1.0, MAX_PHASES as f64)? as usize,
                        k if event_of(k).is_some() => phase_events.push((key.as_str(), value)),
                        _ => return Err(format!("{at_phase}.{key}: unknown or unsupported phase key")),
                    }
                }
                body_phases.extend(events_to_phases(&at_phase, &phase_events, loops)?);
            }
        }
        None if is_periodic(&events) => {
            // the task's loops are the timer's periods: one periodic phase keeps the schedule
            let loops = if forever { u32::MAX as usize } else { repeat as usize };
            body_phases = events_to_phases(at, &events, loops)?;
            (repeat, forever) = (1, false);
        }
        None => body_phases = events_to_phases(at, &events, 1)?,
    }
    if body_phases.is_empty() {
        return Err(format!("{at}: no events"));
    }
    let mut phases = Vec::new();
    if delay_us > 0.0 {
        // rt-app sleeps `delay` once, before the first loop: the loops are unrolled behind it
        if forever {
            return Err(format!("{at}: delay with loop -1 is not supported yet; give a loop count"));
        }
        phases.push(PhaseFile { sleep_us: Some(delay_us as u64), ..Default::default() }.into_phase(at)?);
        for _ in 0..repeat {
            phases.extend(body_phases.iter().cloned());
        }
        if phases.len() > MAX_PHASES {
            return Err(format!("{at}: delay with {repeat} loops unrolls to more than {MAX_PHASES} phases"));
        }
        repeat = 1;
    } else {
        phases = body_phases;
    }
    Ok(Task {
        name: name.to_string(),
        threads,
        nice,
        affinity,
        repeat: if forever { u32::MAX } else { repeat },
        phases,
    })
}

/// A loop of exactly `run`, then `timer`: a periodic task.
fn is_periodic(events: &[(&str, &Json)]) -> bool {
    let kinds: Vec<&str> = events.iter().map(|(k, _)| event_of(k).unwrap_or("")).collect();
    kinds == ["run", "timer"]
}

/// One loop's events as phases, `loops` times; `run` then `timer` is one periodic phase.
fn events_to_phases(at: &str, events: &[(&str, &Json)], loops: usize) -> Result<Vec<crate::workload::Phase>, String> {
    let kinds: Vec<&str> = events.iter().map(|(k, _)| event_of(k).unwrap_or("")).collect();
    if kinds.contains(&"timer") {
        let ["run", "timer"] = kinds[..] else {
            return Err(format!(
                "{at}: a timer is supported after exactly one run event (a periodic task: run, then timer); \
                 other timer placements are not supported yet"
            ));
        };
        let run_us = number(&format!("{at}.{}", events[0].0), events[0].1)?;
        let timer_at = format!("{at}.{}", events[1].0);
        let mut period_us = None;
        for (key, value) in object(&timer_at, events[1].1)? {
            match key.as_str() {
                "period" => period_us = Some(whole(&format!("{timer_at}.period"), value, 1.0, 1e12)?),
                // absolute and relative timers differ only after an overrun, which keeps the
                // absolute schedule here (the engine's periodic release)
                "ref" | "mode" => {
                    text(&format!("{timer_at}.{key}"), value)?;
                }
                _ => return Err(format!("{timer_at}.{key}: unknown timer key")),
            }
        }
        let period_us = period_us.ok_or_else(|| format!("{timer_at}: no period"))?;
        let phase = PhaseFile {
            run_us: Some(run_us),
            period_us: Some(period_us as u64),
            count: Some(loops as u64),
            ..Default::default()
        };
        return Ok(vec![phase.into_phase(at)?]);
    }
    let mut one_loop = Vec::new();
    for (key, value) in events {
        let at_event = format!("{at}.{key}");
        let phase = match event_of(key).unwrap_or("") {
            "run" => PhaseFile { run_us: Some(number(&at_event, value)?), ..Default::default() },
            "sleep" => PhaseFile { sleep_us: Some(whole(&at_event, value, 0.0, 1e12)? as u64), ..Default::default() },
            "suspend" => PhaseFile { suspend: Some(text(&at_event, value)?.to_string()), ..Default::default() },
            "resume" => PhaseFile { resume: Some(text(&at_event, value)?.to_string()), ..Default::default() },
            event => {
                return Err(format!(
                    "{at_event}: rt-app's '{event}' event is not supported yet (supported: run, sleep, timer, \
                     suspend, resume)"
                ))
            }
        };
        one_loop.push(phase.into_phase(&at_event)?);
    }
    if one_loop.len() * loops > MAX_PHASES {
        return Err(format!(
            "{at}: {loops} loops of {} events unroll to more than {MAX_PHASES} phases",
            one_loop.len()
        ));
    }
    Ok((0..loops).flat_map(|_| one_loop.iter().cloned()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::PhaseKind;

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
                "periodic": { "instance": 2, "priority": -5, "cpus": [0, 1], "loop": 100,
                              "run": 2000, "timer": { "ref": "t", "period": 16000, "mode": "absolute" } },
                "burst": { "delay": 500, "loop": 2,
                           "phases": { "p0": { "loop": 3, "run0": 100, "sleep0": 50, "run1": 10 },
                                       "p1": { "suspend": "go" } } },
                "waker": { "sleep": 1000, "resume": "go" },
            }
        }"#;
        let w = from_rtapp_json("dir/demo.json", doc).unwrap();
        assert_eq!(w.name, "demo");
        let t = &w.tasks[0];
        // the task's 100 loops are the timer's 100 periods, in one periodic phase
        assert_eq!((t.threads, t.nice, t.repeat, t.affinity.clone()), (2, -5, 1, Some(vec![0, 1])));
        assert_eq!(t.phases[0].kind, PhaseKind::Periodic { run_us: 2000.0, period_us: 16000, count: 100 });
        let burst = &w.tasks[1];
        // the delay once, then 2 loops of (3 x run, sleep, run) and the suspend
        assert_eq!(burst.repeat, 1);
        assert_eq!(burst.phases.len(), 1 + 2 * (3 * 3 + 1));
        assert_eq!(burst.phases[0].kind, PhaseKind::Sleep { duration_us: 500 });
        assert_eq!(burst.phases[1].kind, PhaseKind::Periodic { run_us: 100.0, period_us: 0, count: 1 });
        assert_eq!(burst.phases[2].kind, PhaseKind::Sleep { duration_us: 50 });
        assert_eq!(burst.phases[10].kind, PhaseKind::Suspend { event: "go".into() });
        assert_eq!(w.tasks[2].phases[1].kind, PhaseKind::Resume { event: "go".into() });
        let forever = from_rtapp_json("f.json", r#"{"tasks": {"t": {"loop": -1, "run": 10, "sleep": 10}}}"#).unwrap();
        assert_eq!(forever.tasks[0].repeat, u32::MAX);
    }

    #[test]
    fn what_is_not_supported_is_a_one_line_error_naming_it() {
        let cases = [
            (
                r#"{"tasks": {"t": {"lock": "m", "run": 10}}}"#,
                "tasks.t.lock: rt-app's 'lock' event is not supported yet",
            ),
            (r#"{"tasks": {"t": {"runtime": 10}}}"#, "rt-app's 'runtime' event is not supported yet"),
            (r#"{"tasks": {"t": {"barrier": "b"}}}"#, "rt-app's 'barrier' event"),
            (r#"{"tasks": {"t": {"memrun": 10}}}"#, "rt-app's 'memrun' event"),
            (r#"{"tasks": {"t": {"fork": "x"}}}"#, "rt-app's 'fork' event"),
            (r#"{"tasks": {"t": {"util_min": 100, "run": 1}}}"#, "tasks.t.util_min: unknown or unsupported task key"),
            (r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "run": 1}}}"#, "SCHED_FIFO is not supported yet"),
            (r#"{"global": {"duration": 5}, "tasks": {"t": {"run": 1}}}"#, "global.duration: a run length"),
            (r#"{"global": {"calibration": "CPU0"}, "tasks": {"t": {"run": 1}}}"#, "calibrating on a named CPU"),
            (r#"{"resources": {"m": {"type": "mutex"}}, "tasks": {"t": {"run": 1}}}"#, "resources"),
            (r#"{"tasks": {"t": {"sleep": 1, "timer": {"period": 5}, "run": 1}}}"#, "a timer is supported after"),
            (r#"{"tasks": {}}"#, "at least one task"),
            (r#"{"tasks": {"t": {"instance": 0, "run": 1}}}"#, "instance must be a whole number in 1"),
        ];
        for (doc, says) in cases {
            let e = from_rtapp_json("x.json", doc).unwrap_err();
            assert!(e.contains(says) && e.starts_with("x.json") && !e.contains('\n'), "{doc}: {e}");
        }
    }
}
