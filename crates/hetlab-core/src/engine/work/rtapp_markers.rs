//! What rt-app writes about its threads' loops (src/rt-app.c, doc/tutorial.txt "Trace and
//! Log"): its ftrace markers — `rtapp_main`, `rtapp_task`, `rtapp_loop`, `rtapp_event` and
//! `rtapp_stats`, as `tracing_mark_write` lines of the thread that writes them (the kernel's
//! `trace` text of a trace_marker write), each category only where the file's `global.ftrace`
//! asks for it — and its per-thread log rows (`log_timing`: one per loop). So LISA's rt-app
//! analysis reads a simulated run as it reads a real one (tests/lisa_rtapp_analysis.py).
//! Markers only in a trace, rows only when asked, both only for rt-app tasks.
//!
//! A run has no rt-app main process: its `rtapp_main` start, clock reference and end are on
//! the first rt-app thread's line. rt-app writes a marker when its thread runs: a thread the
//! engine moves on while it is not running (woken by a timer, a signal, a resume; forked)
//! writes its markers, and takes its times (a loop's start, a timer's wake-up latency), when it
//! is next switched in.

use crate::engine::outputs::Outputs;
use crate::result::RtappLogRow;
use crate::trace::TraceEvent;
use crate::workload::{RtappFtrace, RtappStep, Task};

/// What rt-app's threads write in a run.
#[derive(Debug, Clone, Copy)]
pub struct RtappOutputs {
    /// The markers, into the trace.
    pub trace: bool,
    /// The log rows.
    pub logs: bool,
}

/// The markers' and rows' state.
pub struct RtappMarks {
    /// The thread that writes the main process's markers: the first of an rt-app task.
    main_thread: Option<usize>,
    outputs: RtappOutputs,
    /// rt-app's ns per loop when the file does not give it: the model's on the calibration CPU.
    model_ns_per_loop: u32,
    /// Per thread (none when there is nothing to write).
    threads: Vec<ThreadMarks>,
}

impl RtappMarks {
    /// `thread_task[t]`: thread t's task.
    pub fn new(tasks: &[Task], thread_task: &[usize], outputs: RtappOutputs, model_ns_per_loop: u32) -> RtappMarks {
        let active = outputs.trace || outputs.logs;
        RtappMarks {
            main_thread: thread_task.iter().position(|&task| tasks[task].rtapp.is_some()),
            outputs,
            model_ns_per_loop,
            threads: if active { vec![ThreadMarks::default(); thread_task.len()] } else { Vec::new() },
        }
    }

    /// Whether rt-app's threads write anything in this run.
    pub fn active(&self) -> bool {
        !self.threads.is_empty()
    }

    /// Thread `t`'s log rows, taken (empty unless logs were asked for).
    pub fn take_rows(&mut self, t: usize) -> Vec<RtappLogRow> {
        self.threads.get_mut(t).map(|m| std::mem::take(&mut m.rows)).unwrap_or_default()
    }
}

/// One thread's open loop and what its row reports about it.
#[derive(Debug, Default, Clone)]
struct ThreadMarks {
    /// Phases entered while not running, with the loop counts then: entered when it runs.
    pending: Vec<(usize, Loops)>,
    started: bool,
    open: Option<OpenLoop>,
    /// A `run`/`runtime` under way: when it started.
    run_started_us: Option<f64>,
    /// A timer sleep under way: the expiry it waits for.
    timer_expiry_us: Option<f64>,
    rows: Vec<RtappLogRow>,
}

/// Where a thread is in rt-app's loops: its thread loop and its phase's loop.
#[derive(Debug, Clone, Copy, Default)]
pub struct Loops {
    pub thread_loop: u32,
    pub phase_loop: u32,
}

#[derive(Debug, Clone)]
struct OpenLoop {
    thread_loop: u32,
    phase: u32,
    phase_loop: u32,
    start_us: f64,
    /// rt-app's log fields: perf (loops of calibrated work, in thousands, as `loadwait` counts
    /// them), run (wall µs in run events), c_run (µs they ask), c_period (timer periods),
    /// wu_lat (timer wake-up latency) and slack (the last timer's expiry minus now, or their sum).
    perf: u64,
    run_us: f64,
    c_run_us: u64,
    c_period_us: u64,
    wu_lat_us: f64,
    slack_us: f64,
}

/// Where a thread's markers go: the trace, at a time, on its CPU, under its tid.
pub struct Pen<'p, 'a> {
    pub out: &'p mut Outputs<'a>,
    pub now_us: f64,
    pub cpu: usize,
    pub tid: u32,
}

impl Pen<'_, '_> {
    fn marker(&mut self, on: bool, text: impl FnOnce() -> String) {
        if on && self.out.tracing() {
            let (time_us, cpu, tid) = (self.now_us, self.cpu, self.tid);
            self.out.trace(TraceEvent::Marker { time_us, cpu, tid, text: text() });
        }
    }
}

fn step(task: &Task, phase: usize) -> Option<&RtappStep> {
    task.rtapp.as_ref().and_then(|r| r.steps.get(phase))
}

fn categories(task: &Task) -> RtappFtrace {
    task.rtapp.as_ref().map(|r| r.ftrace).unwrap_or_default()
}

/// The thousands of loops `loadwait` counts for `us` of calibrated work at `ns_per_loop`
/// (rt-app's `perf = exec / p_load`, whole numbers); a `runtime` runs it in bursts of 32 µs.
fn perf(us: u64, ns_per_loop: u32, bursts_of_32_us: bool) -> u64 {
    let p = u64::from(ns_per_loop.max(1));
    if bursts_of_32_us {
        us.div_ceil(32) * (32 / p)
    } else {
        us / p
    }
}

impl RtappMarks {
    /// Thread `t` of `task`, at `loops`, enters phase `phase`: the markers of what ends and
    /// starts there, now if it is `running`, else when it is next switched in.
    pub fn enter(&mut self, pen: Pen, t: usize, task: &Task, phase: usize, loops: Loops, running: bool) {
        if !self.active() || step(task, phase).is_none() {
            return;
        }
        if running {
            self.entered(pen, t, task, phase, loops);
        } else {
            self.threads[t].pending.push((phase, loops));
        }
    }

    /// `t` was switched in: what it entered meanwhile.
    pub fn switched_in(&mut self, pen: Pen, t: usize, task: &Task) {
        if !self.active() || self.threads[t].pending.is_empty() {
            return;
        }
        for (phase, loops) in std::mem::take(&mut self.threads[t].pending) {
            self.entered(Pen { out: &mut *pen.out, ..pen }, t, task, phase, loops);
        }
    }

    fn entered(&mut self, mut pen: Pen, t: usize, task: &Task, phase: usize, loops: Loops) {
        let (now, on) = (pen.now_us, categories(task));
        self.event_ends(t, now);
        if !std::mem::replace(&mut self.threads[t].started, true) {
            if self.main_thread == Some(t) {
                pen.marker(on.main, || "rtapp_main: event=start".into());
                // rt-app writes the clock reference under the `task` category
                pen.marker(on.task, || format!("rtapp_main: event=clock_ref data={}", now.round() as u64));
            }
            pen.marker(on.task, || "rtapp_task: event=start".into());
        }
        let step = step(task, phase).expect("checked");
        if step.loop_start {
            self.close_loop(&mut pen, t, task);
            let Loops { thread_loop, phase_loop } = loops;
            pen.marker(on.r#loop, || {
                format!(
                    "rtapp_loop: event=start thread_loop={thread_loop} phase={} phase_loop={phase_loop}",
                    step.phase
                )
            });
            self.threads[t].open = Some(OpenLoop {
                thread_loop,
                phase: step.phase,
                phase_loop,
                start_us: now,
                perf: 0,
                run_us: 0.0,
                c_run_us: 0,
                c_period_us: 0,
                wu_lat_us: 0.0,
                slack_us: 0.0,
            });
        }
        if let Some(event) = &step.event {
            pen.marker(on.event, || {
                format!("rtapp_event: id={} type={} desc={}", event.id, event.type_number, event.desc)
            });
            if event.run_us > 0 {
                let ns_per_loop = task.rtapp.as_ref().and_then(|r| r.ns_per_loop).unwrap_or(self.model_ns_per_loop);
                // rt-app's `runtime` type number (19): calibrated work in bursts of 32 µs
                let loops = perf(event.run_us, ns_per_loop, event.type_number == 19);
                let marks = &mut self.threads[t];
                marks.run_started_us = Some(now);
                if let Some(open) = marks.open.as_mut() {
                    open.c_run_us += event.run_us;
                    open.perf += loops;
                }
            }
        }
    }

    /// `t` of `task` reached a timer at `now_us`: it sleeps to `expiry_us` (or not, after an
    /// overrun).
    pub fn timer(&mut self, t: usize, task: &Task, now_us: f64, expiry_us: f64, period_us: u64, sleeps: bool) {
        if !self.active() {
            return;
        }
        let cumulative = task.rtapp.as_ref().is_some_and(|r| r.cumulative_slack);
        let marks = &mut self.threads[t];
        if let Some(open) = marks.open.as_mut() {
            open.c_period_us += period_us;
            let slack = expiry_us - now_us;
            open.slack_us = if cumulative { open.slack_us + slack } else { slack };
            if !sleeps {
                open.wu_lat_us = 0.0; // rt-app resets it after an overrun
            }
        }
        marks.timer_expiry_us = sleeps.then_some(expiry_us);
    }

    /// `t` of `task` exits (running, or as the engine moves it on): its loop's end and the
    /// task's; the main process's end after the last user thread (`live_user_threads` left).
    pub fn exit(&mut self, mut pen: Pen, t: usize, task: &Task, live_user_threads: usize) {
        if !self.active() || task.rtapp.is_none() {
            return;
        }
        self.switched_in(Pen { out: &mut *pen.out, ..pen }, t, task);
        self.event_ends(t, pen.now_us);
        self.close_loop(&mut pen, t, task);
        let on = categories(task);
        pen.marker(on.task, || "rtapp_task: event=end".into());
        if live_user_threads == 0 {
            pen.marker(on.main, || "rtapp_main: event=end".into());
        }
    }

    /// The run or timer wait under way, if any, ends at `now`.
    fn event_ends(&mut self, t: usize, now: f64) {
        let marks = &mut self.threads[t];
        if let (Some(start), Some(open)) = (marks.run_started_us.take(), marks.open.as_mut()) {
            open.run_us += now - start;
        }
        if let (Some(expiry), Some(open)) = (marks.timer_expiry_us.take(), marks.open.as_mut()) {
            open.wu_lat_us += (now - expiry).max(0.0);
        }
    }

    fn close_loop(&mut self, pen: &mut Pen, t: usize, task: &Task) {
        let Some(open) = self.threads[t].open.take() else { return };
        let on = categories(task);
        let OpenLoop { thread_loop, phase, phase_loop, .. } = open;
        pen.marker(on.r#loop, || {
            format!("rtapp_loop: event=end thread_loop={thread_loop} phase={phase} phase_loop={phase_loop}")
        });
        let period = (pen.now_us - open.start_us).round() as i64;
        let (run, wu_lat, slack) =
            (open.run_us.round() as i64, open.wu_lat_us.round() as i64, open.slack_us.round() as i64);
        pen.marker(on.stats, || {
            format!(
                "rtapp_stats: period={period} run={run} wu_lat={wu_lat} slack={slack} c_period={} c_run={}",
                open.c_period_us, open.c_run_us
            )
        });
        if self.outputs.logs {
            self.threads[t].rows.push(RtappLogRow {
                perf: open.perf,
                run_us: run.max(0) as u64,
                period_us: period.max(0) as u64,
                start_us: open.start_us.round() as u64,
                end_us: pen.now_us.round() as u64,
                slack_us: slack,
                c_run_us: open.c_run_us,
                c_period_us: open.c_period_us,
                wu_lat_us: wu_lat.max(0) as u64,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_counts_thousands_of_loops_as_loadwait_does() {
        assert_eq!(perf(10_000, 150, false), 66);
        // `runtime`: 32 µs bursts, each 32 / p_load whole thousands of loops
        assert_eq!(perf(100, 8, true), 4 * 4);
        assert_eq!(perf(100, 150, true), 0);
    }
}
