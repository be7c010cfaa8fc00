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

use super::state::ThreadState;
use super::Engine;
use crate::trace::TraceEvent;
use crate::workload::{RtappStep, Task};

/// The markers' state, when tracing.
pub(super) struct RtappMarks {
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

impl Engine<'_> {
    fn marker(&mut self, t: usize, text: String) {
        let (time_us, cpu, tid) = (self.now_us, self.sched.entities[t].cpu, self.threads[t].tid);
        self.out.trace(TraceEvent::Marker { time_us, cpu, tid, text });
    }

    fn step(&self, t: usize, phase: usize) -> Option<&RtappStep> {
        let task = &self.tasks[self.threads[t].task];
        task.rtapp.as_ref().and_then(|r| r.steps.get(phase))
    }

    /// `t` enters phase `phase`: the markers of what ends and starts there, now if it runs,
    /// else when it is next switched in.
    pub(super) fn rtapp_enter(&mut self, t: usize, phase: usize) {
        if self.out.trace.is_none() || self.step(t, phase).is_none() {
            return;
        }
        let th = &self.threads[t];
        let loops_done = self.tasks[th.task].repeat - th.progress.repeats_left;
        if th.state == ThreadState::Running {
            self.rtapp_entered(t, phase, loops_done);
        } else {
            self.rtapp_marks.threads[t].pending.push((phase, loops_done));
        }
    }

    /// `t` was switched in: what it entered meanwhile.
    pub(super) fn rtapp_switched_in(&mut self, t: usize) {
        if self.out.trace.is_none() || self.rtapp_marks.threads[t].pending.is_empty() {
            return;
        }
        for (phase, loops_done) in std::mem::take(&mut self.rtapp_marks.threads[t].pending) {
            self.rtapp_entered(t, phase, loops_done);
        }
    }

    fn rtapp_entered(&mut self, t: usize, phase: usize, loops_done: u32) {
        let now = self.now_us;
        self.rtapp_event_ends(t);
        if !std::mem::replace(&mut self.rtapp_marks.threads[t].started, true) {
            if self.rtapp_marks.main_thread == Some(t) {
                self.marker(t, "rtapp_main: event=start".into());
                self.marker(t, format!("rtapp_main: event=clock_ref data={}", now.round() as u64));
            }
            self.marker(t, "rtapp_task: event=start".into());
        }
        let step = self.step(t, phase).expect("checked").clone();
        if step.loop_start {
            self.rtapp_close_loop(t);
            let task = &self.tasks[self.threads[t].task];
            let repeats_are_phase_loops = task.rtapp.as_ref().is_some_and(|r| r.repeats_are_phase_loops);
            let (thread_loop, phase_loop) =
                if repeats_are_phase_loops { (0, loops_done) } else { (loops_done, step.phase_loop) };
            self.marker(
                t,
                format!(
                    "rtapp_loop: event=start thread_loop={thread_loop} phase={} phase_loop={phase_loop}",
                    step.phase
                ),
            );
            self.rtapp_marks.threads[t].open = Some(OpenLoop {
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
            self.marker(t, format!("rtapp_event: id={} type={} desc={}", event.id, event.type_number, event.desc));
            if event.run_us > 0 {
                let marks = &mut self.rtapp_marks.threads[t];
                marks.run_started_us = Some(now);
                if let Some(open) = marks.open.as_mut() {
                    open.c_run_us += event.run_us;
                }
            }
        }
    }

    /// `t` reached a timer: it sleeps to `expiry_us` (or not, after an overrun).
    pub(super) fn rtapp_timer(&mut self, t: usize, expiry_us: f64, period_us: u64, sleeps: bool) {
        if self.out.trace.is_none() {
            return;
        }
        let now = self.now_us;
        let marks = &mut self.rtapp_marks.threads[t];
        if let Some(open) = marks.open.as_mut() {
            open.c_period_us += period_us;
            open.slack_us = expiry_us - now;
            if !sleeps {
                open.wu_lat_us = 0.0; // rt-app resets it after an overrun
            }
        }
        marks.timer_expiry_us = sleeps.then_some(expiry_us);
    }

    /// `t` exits (running, or as the engine moves it on): its loop's end and the task's.
    pub(super) fn rtapp_exit(&mut self, t: usize) {
        if self.out.trace.is_none() || self.tasks[self.threads[t].task].rtapp.is_none() {
            return;
        }
        self.rtapp_switched_in(t);
        self.rtapp_event_ends(t);
        self.rtapp_close_loop(t);
        self.marker(t, "rtapp_task: event=end".into());
        if self.live_user_threads == 0 {
            self.marker(t, "rtapp_main: event=end".into());
        }
    }

    /// The run or timer wait under way, if any, ends now.
    fn rtapp_event_ends(&mut self, t: usize) {
        let now = self.now_us;
        let marks = &mut self.rtapp_marks.threads[t];
        if let (Some(start), Some(open)) = (marks.run_started_us.take(), marks.open.as_mut()) {
            open.run_us += now - start;
        }
        if let (Some(expiry), Some(open)) = (marks.timer_expiry_us.take(), marks.open.as_mut()) {
            open.wu_lat_us += (now - expiry).max(0.0);
        }
    }

    fn rtapp_close_loop(&mut self, t: usize) {
        let Some(open) = self.rtapp_marks.threads[t].open.take() else { return };
        let OpenLoop { thread_loop, phase, phase_loop, .. } = open;
        self.marker(
            t,
            format!("rtapp_loop: event=end thread_loop={thread_loop} phase={phase} phase_loop={phase_loop}"),
        );
        let period = (self.now_us - open.start_us).round() as i64;
        self.marker(
            t,
            format!(
                "rtapp_stats: period={period} run={} wu_lat={} slack={} c_period={} c_run={}",
                open.run_us.round() as i64,
                open.wu_lat_us.round() as i64,
                open.slack_us.round() as i64,
                open.c_period_us,
                open.c_run_us
            ),
        );
    }
}
