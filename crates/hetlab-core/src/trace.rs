//! Trace events recorded by the engine, and their export as ftrace text.
//!
//! The text layout is the one Perfetto UI and LISA both open (shared/reference/ecosystem.md §4
//! and §7): a `# tracer: nop` header, then trace-cmd-report-style lines *without* the
//! irq-flags column, timestamps in seconds with 6 decimals.

/// Linux's PWR_EVENT_EXIT, printed as u32 by the cpu_idle tracepoint.
pub const CPU_IDLE_EXIT: u32 = 4294967295;

/// Task state letters of sched_switch's prev_state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevState {
    /// Preempted while runnable (`R+`).
    Runnable,
    /// Went to sleep (`S`).
    Sleeping,
    /// Exited (`X`).
    Dead,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TraceEvent {
    /// A CPU switches from `prev` to `next`; tid 0 is the idle task `swapper/N`.
    SchedSwitch { time_us: f64, cpu: usize, prev_tid: u32, prev_state: PrevState, next_tid: u32 },
    /// `tid` is woken and will run on `target_cpu`; emitted on `waker_cpu`.
    SchedWaking { time_us: f64, waker_cpu: usize, tid: u32, target_cpu: usize },
    /// Frequency change of one CPU (one line per CPU of the cluster), kHz.
    CpuFrequency { time_us: f64, cpu: usize, freq_khz: u32 },
    /// Idle-state entry (`state` = index) or exit (`CPU_IDLE_EXIT`).
    CpuIdle { time_us: f64, cpu: usize, state: u32 },
    /// An atrace counter (`tracing_mark_write: C|pid|name|value`), e.g. cluster power in mW.
    Counter { time_us: f64, cpu: usize, name: String, value: f64 },
}

impl TraceEvent {
    pub fn time_us(&self) -> f64 {
        match self {
            TraceEvent::SchedSwitch { time_us, .. }
            | TraceEvent::SchedWaking { time_us, .. }
            | TraceEvent::CpuFrequency { time_us, .. }
            | TraceEvent::CpuIdle { time_us, .. }
            | TraceEvent::Counter { time_us, .. } => *time_us,
        }
    }
}

/// Names of the threads, for the comm fields: `names[tid]`; tid 0 is unused (idle).
#[derive(Debug, Clone, Default)]
pub struct TraceThreads {
    pub names: Vec<String>,
    /// Kernel priority (120 + nice) per tid.
    pub prios: Vec<i32>,
}
