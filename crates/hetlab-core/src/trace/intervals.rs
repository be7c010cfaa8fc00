//! Where each thread ran: its run intervals on each CPU, from the `sched_switch` events.

use super::TraceEvent;

/// A stretch of time a thread was the running task of a CPU (between two `sched_switch`es),
/// whatever it did there: its own work, and the interrupts and kernel work charged to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunInterval {
    pub tid: u32,
    pub cpu: usize,
    pub start_us: f64,
    pub end_us: f64,
}

/// The run intervals of every thread from the `sched_switch` events (in time order, stable, as
/// `write_ftrace` prints them), a thread still running at `end_us` closed there. Ordered by
/// start time, then CPU; empty stretches are left out; the idle task (tid 0) has none.
pub fn run_intervals(events: &[TraceEvent], end_us: f64) -> Vec<RunInterval> {
    let mut switches: Vec<(f64, usize, u32)> = events
        .iter()
        .filter_map(|e| match *e {
            TraceEvent::SchedSwitch { time_us, cpu, next_tid, .. } => Some((time_us, cpu, next_tid)),
            _ => None,
        })
        .collect();
    switches.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::new();
    let mut current: Vec<Option<(u32, f64)>> = Vec::new(); // per CPU: (tid, since)
    let close = |out: &mut Vec<RunInterval>, cpu: usize, running: Option<(u32, f64)>, at_us: f64| {
        if let Some((tid, start_us)) = running {
            if at_us > start_us {
                out.push(RunInterval { tid, cpu, start_us, end_us: at_us });
            }
        }
    };
    for (time_us, cpu, next_tid) in switches {
        if cpu >= current.len() {
            current.resize(cpu + 1, None);
        }
        close(&mut out, cpu, current[cpu].take(), time_us);
        current[cpu] = (next_tid != 0).then_some((next_tid, time_us));
    }
    for (cpu, running) in current.into_iter().enumerate() {
        close(&mut out, cpu, running, end_us);
    }
    out.sort_by(|a, b| a.start_us.total_cmp(&b.start_us).then(a.cpu.cmp(&b.cpu)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::PrevState;

    fn switch(time_us: f64, cpu: usize, prev_tid: u32, next_tid: u32) -> TraceEvent {
        TraceEvent::SchedSwitch { time_us, cpu, prev_tid, prev_state: PrevState::Runnable, next_tid }
    }

    #[test]
    fn run_intervals_follow_the_switches_of_each_cpu() {
        // out of time order on purpose, with a frequency event in between (ignored); thread 1
        // runs on CPU 0, is preempted by 2, comes back on CPU 1 and runs to the end; CPU 1
        // switches 2 in and out at the same time (an empty stretch: left out)
        let events = [
            switch(30.0, 0, 2, 0),
            switch(10.0, 0, 1, 2),
            TraceEvent::CpuFrequency { time_us: 15.0, cpu: 0, freq_khz: 200_000 },
            switch(0.0, 0, 0, 1),
            switch(20.0, 1, 0, 2),
            switch(20.0, 1, 2, 1),
        ];
        let got = run_intervals(&events, 50.0);
        let want = [
            RunInterval { tid: 1, cpu: 0, start_us: 0.0, end_us: 10.0 },
            RunInterval { tid: 2, cpu: 0, start_us: 10.0, end_us: 30.0 },
            RunInterval { tid: 1, cpu: 1, start_us: 20.0, end_us: 50.0 },
        ];
        assert_eq!(got, want);
        assert!(run_intervals(&[], 50.0).is_empty());
    }
}
