//! The markers rt-app writes to ftrace (src/rt-app.c, doc/tutorial.txt "Trace and Log"):
//! `rtapp_main`, `rtapp_task`, `rtapp_loop`, `rtapp_event` and `rtapp_stats`, as
//! `tracing_mark_write` lines of the thread that writes them (the kernel's `trace` text of a
//! trace_marker write), so that LISA's rt-app analysis reads a simulated run as it reads a real
//! one (LISA takes them from the `print` event: tests/lisa_rtapp_analysis.py shows how). Only
//! in a trace, only for rt-app tasks.
//!
//! A run has no rt-app main process: its `rtapp_main` start, clock reference and end are on
//! the first rt-app thread's line. rt-app writes a marker when its thread runs: a thread the
//! engine moves on while it is not running (woken by a timer, a signal, a resume; forked)
//! writes its markers, and takes its times (a loop's start, a timer's wake-up latency), when it
//! is next switched in.

use crate::engine::outputs::Outputs;
use crate::trace::TraceEvent;
use crate::workload::{RtappStep, Task};

/// The markers' state, when tracing.
pub struct RtappMarks {
    /// The thread that writes the main process's markers: the first of an rt-app task.
    main_thread: Option<usize>,
    /// Per thread.
    threads: Vec<ThreadMarks>,
}

impl RtappMarks {
    /// `thread_task[t]`: thread t's task.
    pub fn new(tasks: &[Task], thread_task: &[usize], trace: bool) -> RtappMarks {
        RtappMarks {
            main_thread: thread_task.iter().position(|&task| tasks[task].rtapp.is_some()),
            threads: if trace { vec![ThreadMarks::default(); thread_task.len()] } else { Vec::new() },
        }
    }
}

/// One thread's open loop and what `rtapp_stats` reports about it.
#[derive(Debug, Default, Clone)]
struct ThreadMarks {
    /// Phases entered while not running, with the loops done then: entered when it runs.
    pending: Vec<(usize, u32)>,
    started: bool,
    open: Option<OpenLoop>,
    /// A `run`/`runtime` under way: when it started.
    run_started_us: Option<f64>,
    /// A timer sleep under way: the expiry it waits for.
    timer_expiry_us: Option<f64>,
}

#[derive(Debug, Clone)]
struct OpenLoop {
    thread_loop: u32,
    phase: u32,
    phase_loop: u32,
    start_us: f64,
    /// rt-app's log fields: run (wall µs in run events), c_run (µs they ask), c_period (timer
    /// periods), wu_lat (timer wake-up latency) and slack (last timer's expiry minus now).
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
    fn marker(&mut self, text: String) {
        let (time_us, cpu, tid) = (self.now_us, self.cpu, self.tid);
        self.out.trace(TraceEvent::Marker { time_us, cpu, tid, text });
    }
}

fn step(task: &Task, phase: usize) -> Option<&RtappStep> {
    task.rtapp.as_ref().and_then(|r| r.steps.get(phase))
}

impl RtappMarks {
    /// Thread `t` of `task`, with `repeats_left`, enters phase `phase`: the markers of what ends
    /// and starts there, now if it is `running`, else when it is next switched in.
    pub fn enter(&mut self, pen: Pen, t: usize, task: &Task, phase: usize, repeats_left: u32, running: bool) {
        if !pen.out.tracing() || step(task, phase).is_none() {
            return;
        }
        let loops_done = task.repeat - repeats_left;
        if running {
            self.entered(pen, t, task, phase, loops_done);
        } else {
            self.threads[t].pending.push((phase, loops_done));
        }
    }

    /// `t` was switched in: what it entered meanwhile.
    pub fn switched_in(&mut self, pen: Pen, t: usize, task: &Task) {
        if !pen.out.tracing() || self.threads[t].pending.is_empty() {
            return;
        }
        for (phase, loops_done) in std::mem::take(&mut self.threads[t].pending) {
            self.entered(Pen { out: &mut *pen.out, ..pen }, t, task, phase, loops_done);
        }
    }

    fn entered(&mut self, mut pen: Pen, t: usize, task: &Task, phase: usize, loops_done: u32) {
        let now = pen.now_us;
        self.event_ends(t, now);
        if !std::mem::replace(&mut self.threads[t].started, true) {
            if self.main_thread == Some(t) {
                pen.marker("rtapp_main: event=start".into());
                pen.marker(format!("rtapp_main: event=clock_ref data={}", now.round() as u64));
            }
            pen.marker("rtapp_task: event=start".into());
        }
        let step = step(task, phase).expect("checked");
        if step.loop_start {
            self.close_loop(&mut pen, t);
            let repeats_are_phase_loops = task.rtapp.as_ref().is_some_and(|r| r.repeats_are_phase_loops);
            let (thread_loop, phase_loop) =
                if repeats_are_phase_loops { (0, loops_done) } else { (loops_done, step.phase_loop) };
            pen.marker(format!(
                "rtapp_loop: event=start thread_loop={thread_loop} phase={} phase_loop={phase_loop}",
                step.phase
            ));
            self.threads[t].open = Some(OpenLoop {
                thread_loop,
                phase: step.phase,
                phase_loop,
                start_us: now,
                run_us: 0.0,
                c_run_us: 0,
                c_period_us: 0,
                wu_lat_us: 0.0,
                slack_us: 0.0,
            });
        }
        if let Some(event) = &step.event {
            pen.marker(format!("rtapp_event: id={} type={} desc={}", event.id, event.type_number, event.desc));
            if event.run_us > 0 {
                let marks = &mut self.threads[t];
                marks.run_started_us = Some(now);
                if let Some(open) = marks.open.as_mut() {
                    open.c_run_us += event.run_us;
                }
            }
        }
    }

    /// `t` reached a timer at `now_us`: it sleeps to `expiry_us` (or not, after an overrun).
    pub fn timer(&mut self, tracing: bool, t: usize, now_us: f64, expiry_us: f64, period_us: u64, sleeps: bool) {
        if !tracing {
            return;
        }
        let marks = &mut self.threads[t];
        if let Some(open) = marks.open.as_mut() {
            open.c_period_us += period_us;
            open.slack_us = expiry_us - now_us;
            if !sleeps {
                open.wu_lat_us = 0.0; // rt-app resets it after an overrun
            }
        }
        marks.timer_expiry_us = sleeps.then_some(expiry_us);
    }

    /// `t` of `task` exits (running, or as the engine moves it on): its loop's end and the
    /// task's; the main process's end after the last user thread (`live_user_threads` left).
    pub fn exit(&mut self, mut pen: Pen, t: usize, task: &Task, live_user_threads: usize) {
        if !pen.out.tracing() || task.rtapp.is_none() {
            return;
        }
        self.switched_in(Pen { out: &mut *pen.out, ..pen }, t, task);
        self.event_ends(t, pen.now_us);
        self.close_loop(&mut pen, t);
        pen.marker("rtapp_task: event=end".into());
        if live_user_threads == 0 {
            pen.marker("rtapp_main: event=end".into());
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

    fn close_loop(&mut self, pen: &mut Pen, t: usize) {
        let Some(open) = self.threads[t].open.take() else { return };
        let OpenLoop { thread_loop, phase, phase_loop, .. } = open;
        pen.marker(format!("rtapp_loop: event=end thread_loop={thread_loop} phase={phase} phase_loop={phase_loop}"));
        let period = (pen.now_us - open.start_us).round() as i64;
        pen.marker(format!(
            "rtapp_stats: period={period} run={} wu_lat={} slack={} c_period={} c_run={}",
            open.run_us.round() as i64,
            open.wu_lat_us.round() as i64,
            open.slack_us.round() as i64,
            open.c_period_us,
            open.c_run_us
        ));
    }
}
