//! What a run records besides its state: event and sample counts, the per-sample time series
//! (kept or streamed), the trace, rt-app's marks, the stuck and deadlock notes, and the
//! counters of switches and throttles the result reports.

use crate::governor::{Decision, PolicyView};
use crate::result::{Deadlock, Mark, SampleRow};
use crate::trace::TraceEvent;

/// Where the per-sample time series goes.
enum Series<'a> {
    Off,
    /// Kept in the result.
    Keep(Vec<SampleRow>),
    /// Handed to a sink as each sample is taken (memory stays constant on long runs).
    Stream(Box<dyn FnMut(&SampleRow) + 'a>),
}

pub struct Outputs<'a> {
    events: u64,
    samples: u64,
    /// CPU time spent by governors reading PMCs, µs.
    governor_overhead_us: f64,
    series: Series<'a>,
    trace: Option<Vec<TraceEvent>>,
    /// The placement's over-utilisation state last traced.
    overutilized: Option<bool>,
    marks: Vec<Mark>,
    /// A thread went through more than `max_events_without_progress` work-less phases inside one
    /// event (a loop of `resume` phases): the run ends as making no progress.
    stuck: bool,
    /// Every live user thread blocked forever (`work::Work::deadlock`), from when.
    deadlock: Option<Deadlock>,
    /// Logical CPUs the switcher moved to their partner core.
    cpu_switches: u64,
    /// Priority changes, for a trace: events traced before, tid, new kernel priority.
    prio_changes: Vec<(usize, u32, i32)>,
    /// Times a CPU's RT queue was throttled (the kernel's "sched: RT throttling activated").
    rt_throttles: u64,
    /// Handed every governor sample's view and decision (the kernel module's conformance test
    /// replays them through its C core).
    governor_sink: Option<GovernorSink<'a>>,
}

/// Called with every governor sample's view and decision.
type GovernorSink<'a> = Box<dyn FnMut(&PolicyView, Decision) + 'a>;

/// What was recorded, handed to the result at the end.
pub struct Recorded {
    pub events: u64,
    pub samples: u64,
    pub governor_overhead_us: f64,
    pub series: Vec<SampleRow>,
    pub trace: Vec<TraceEvent>,
    pub marks: Vec<Mark>,
    pub deadlock: Option<Deadlock>,
    pub cpu_switches: u64,
    pub prio_changes: Vec<(usize, u32, i32)>,
    pub rt_throttles: u64,
}

impl<'a> Outputs<'a> {
    pub fn new(series: bool, trace: bool) -> Outputs<'a> {
        Outputs {
            events: 0,
            samples: 0,
            governor_overhead_us: 0.0,
            series: if series { Series::Keep(Vec::new()) } else { Series::Off },
            trace: trace.then(Vec::new),
            overutilized: None,
            marks: Vec::new(),
            stuck: false,
            deadlock: None,
            cpu_switches: 0,
            prio_changes: Vec::new(),
            rt_throttles: 0,
            governor_sink: None,
        }
    }

    /// Hands every governor sample's view and decision to `sink`.
    pub fn watch_governor(&mut self, sink: impl FnMut(&PolicyView, Decision) + 'a) {
        self.governor_sink = Some(Box::new(sink));
    }

    /// Whether someone watches the governors' views (they then read every field).
    #[inline]
    pub fn watches_governor(&self) -> bool {
        self.governor_sink.is_some()
    }

    /// A governor sampled `view` and decided `decision`.
    #[inline]
    pub fn governor_sampled(&mut self, view: &PolicyView, decision: Decision) {
        if let Some(sink) = &mut self.governor_sink {
            sink(view, decision);
        }
    }

    /// Hands each time-series row to `sink` as the sample is taken.
    pub fn stream_series(&mut self, sink: impl FnMut(&SampleRow) + 'a) {
        self.series = Series::Stream(Box::new(sink));
    }

    #[inline]
    pub fn records_series(&self) -> bool {
        !matches!(self.series, Series::Off)
    }

    #[inline]
    pub fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    #[inline]
    pub fn trace(&mut self, event: TraceEvent) {
        if let Some(t) = &mut self.trace {
            t.push(event);
        }
    }

    /// Thread `tid` has kernel priority `prio` from now on (only a trace prints priorities).
    pub fn note_prio(&mut self, tid: u32, prio: i32) {
        if let Some(t) = &self.trace {
            self.prio_changes.push((t.len(), tid, prio));
        }
    }

    /// Removes the events `traced_ahead` matches among the latest few thousand: events traced
    /// in advance (a kernel burst's idle entry) that did not happen after all.
    pub fn drop_recent(&mut self, traced_ahead: impl Fn(&TraceEvent) -> bool) {
        if let Some(t) = &mut self.trace {
            let from = t.len().saturating_sub(4096);
            let mut i = t.len();
            while i > from {
                i -= 1;
                if traced_ahead(&t[i]) {
                    t.remove(i);
                }
            }
        }
    }

    /// One more event processed; the count so far.
    pub fn count_event(&mut self) -> u64 {
        self.events += 1;
        self.events
    }

    /// A governor sample was taken.
    pub fn count_sample(&mut self) {
        self.samples += 1;
    }

    /// The time-series row of a sample (given only when [`records_series`](Self::records_series)).
    pub fn record_row(&mut self, row: SampleRow) {
        match &mut self.series {
            Series::Keep(rows) => rows.push(row),
            Series::Stream(sink) => sink(&row),
            Series::Off => {}
        }
    }

    pub fn add_governor_overhead(&mut self, us: f64) {
        self.governor_overhead_us += us;
    }

    pub fn mark(&mut self, mark: Mark) {
        self.marks.push(mark);
    }

    pub fn set_stuck(&mut self) {
        self.stuck = true;
    }

    pub fn stuck(&self) -> bool {
        self.stuck
    }

    pub fn deadlock(&self) -> Option<&Deadlock> {
        self.deadlock.as_ref()
    }

    pub fn note_deadlock(&mut self, deadlock: Deadlock) {
        self.deadlock = Some(deadlock);
    }

    pub fn count_cpu_switch(&mut self) {
        self.cpu_switches += 1;
    }

    pub fn count_rt_throttle(&mut self) {
        self.rt_throttles += 1;
    }

    /// The placement's over-utilisation state is `now`: true if it changed since last traced.
    pub fn overutilized_changed(&mut self, now: Option<bool>) -> bool {
        if now == self.overutilized {
            return false;
        }
        self.overutilized = now;
        true
    }

    pub fn into_recorded(self) -> Recorded {
        Recorded {
            events: self.events,
            samples: self.samples,
            governor_overhead_us: self.governor_overhead_us,
            series: match self.series {
                Series::Keep(rows) => rows,
                _ => Vec::new(),
            },
            trace: self.trace.unwrap_or_default(),
            marks: self.marks,
            deadlock: self.deadlock,
            cpu_switches: self.cpu_switches,
            prio_changes: self.prio_changes,
            rt_throttles: self.rt_throttles,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_without_trace_or_series_records_neither() {
        let mut out = Outputs::new(false, false);
        out.trace(TraceEvent::CpuIdle { time_us: 0.0, cpu: 0, state: 0 });
        out.note_prio(1, 120);
        out.count_sample();
        assert!(!out.records_series());
        let r = out.into_recorded();
        assert!(r.trace.is_empty() && r.series.is_empty() && r.prio_changes.is_empty());
        assert_eq!(r.samples, 1);
    }

    #[test]
    fn events_traced_ahead_are_dropped() {
        let mut out = Outputs::new(false, true);
        for cpu in 0..3 {
            out.trace(TraceEvent::CpuIdle { time_us: 1.0, cpu, state: 0 });
        }
        out.drop_recent(|e| matches!(e, TraceEvent::CpuIdle { cpu: 1, .. }));
        let cpus: Vec<usize> = out
            .into_recorded()
            .trace
            .iter()
            .map(|e| match e {
                TraceEvent::CpuIdle { cpu, .. } => *cpu,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(cpus, [0, 2]);
    }

    #[test]
    fn overutilisation_is_reported_once_per_change() {
        let mut out = Outputs::new(false, true);
        assert!(!out.overutilized_changed(None));
        assert!(out.overutilized_changed(Some(false)));
        assert!(!out.overutilized_changed(Some(false)));
        assert!(out.overutilized_changed(Some(true)));
    }
}
