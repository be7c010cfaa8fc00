//! Trace events recorded by the engine ([`TraceEvent`], the threads they name:
//! [`TraceThreads`]), and what is made of them:
//!
//! - [`ftrace`]: the events as ftrace text, in the kernel's `trace` file layout or trace-cmd's
//!   (how each field prints: `fields`);
//! - [`perfetto`]: the events as a native Perfetto trace (protobuf), with named counter tracks
//!   and their units;
//! - [`lisa`]: the companion LISA needs for its analyses, the platform's `PlatformInfo`;
//! - [`intervals`]: where each thread ran, from the `sched_switch` events.

mod fields;
pub mod ftrace;
pub mod intervals;
pub mod lisa;
pub mod perfetto;
#[cfg(test)]
mod round_trip;

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

/// PELT signals as `struct sched_avg` holds them when the tracepoint fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeltSignals {
    /// `load_avg` (weighted by the entity's load weight).
    pub load: u64,
    /// `runnable_avg`: share of time runnable, 0..=1024.
    pub runnable: u64,
    /// `util_avg`, 0..=1024.
    pub util: u64,
    /// `last_update_time`, ns.
    pub update_time_ns: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TraceEvent {
    /// A CPU switches from `prev` to `next`; tid 0 is the idle task `swapper/N`.
    SchedSwitch { time_us: f64, cpu: usize, prev_tid: u32, prev_state: PrevState, next_tid: u32 },
    /// `try_to_wake_up` starts waking `tid`, emitted on `waker_cpu`; `target_cpu` is the CPU the
    /// task last ran on (`task_cpu(p)` before `select_task_rq`, as the kernel prints it).
    SchedWaking { time_us: f64, waker_cpu: usize, tid: u32, target_cpu: usize },
    /// `tid` is runnable on `target_cpu` (`sched_wakeup`; `sched_wakeup_new` for a new task,
    /// which has no `sched_waking`), emitted on `cpu`.
    SchedWakeup { time_us: f64, cpu: usize, tid: u32, target_cpu: usize, new_task: bool },
    /// `set_task_cpu` moves `tid` from `orig_cpu` to `dest_cpu`, emitted on `cpu`.
    SchedMigrateTask { time_us: f64, cpu: usize, tid: u32, orig_cpu: usize, dest_cpu: usize },
    /// A task's PELT signals (`sched_pelt_se`, path `(null)`), on the CPU of its run queue.
    SchedPeltSe { time_us: f64, cpu: usize, tid: u32, signals: PeltSignals },
    /// A CPU's root CFS run queue's PELT signals (`sched_pelt_cfs`, path `/`).
    SchedPeltCfs { time_us: f64, cpu: usize, signals: PeltSignals },
    /// A task group's run queue's signals on `cpu` (`sched_pelt_cfs`, path the group's: `group`
    /// indexes `TraceThreads::groups`).
    SchedPeltGroupCfs { time_us: f64, cpu: usize, group: u32, signals: PeltSignals },
    /// A task group's entity's signals on `cpu` (`sched_pelt_se`, path the group's, comm
    /// `(null)`, pid -1).
    SchedPeltGroupSe { time_us: f64, cpu: usize, group: u32, signals: PeltSignals },
    /// A CPU's capacities, 0..=1024 (`sched_cpu_capacity`): `capacity_orig` at its top OPP,
    /// `capacity` what CFS may use of it, `capacity_curr` at the current frequency.
    SchedCpuCapacity { time_us: f64, cpu: usize, capacity: u32, capacity_orig: u32, capacity_curr: u32 },
    /// The root domain `span` (a CPU bit mask) becomes over-utilised or not (EAS's tipping
    /// point, `sched_overutilized`), emitted on `cpu`.
    SchedOverutilized { time_us: f64, cpu: usize, overutilized: bool, span: u64 },
    /// Frequency change of one CPU (one line per CPU of the cluster), kHz.
    CpuFrequency { time_us: f64, cpu: usize, freq_khz: u32 },
    /// Idle-state entry (`state` = index) or exit (`CPU_IDLE_EXIT`).
    CpuIdle { time_us: f64, cpu: usize, state: u32 },
    /// An atrace counter (`tracing_mark_write: C|pid|name|value`), e.g. cluster power in mW.
    Counter { time_us: f64, cpu: usize, name: String, value: f64 },
    /// A user-space marker `tid` writes to `trace_marker` on `cpu` (`tracing_mark_write:
    /// <text>`), e.g. rt-app's `rtapp_loop: event=start ...`.
    Marker { time_us: f64, cpu: usize, tid: u32, text: String },
}

impl TraceEvent {
    pub fn time_us(&self) -> f64 {
        match self {
            TraceEvent::SchedSwitch { time_us, .. }
            | TraceEvent::SchedWaking { time_us, .. }
            | TraceEvent::SchedWakeup { time_us, .. }
            | TraceEvent::SchedMigrateTask { time_us, .. }
            | TraceEvent::SchedPeltSe { time_us, .. }
            | TraceEvent::SchedPeltCfs { time_us, .. }
            | TraceEvent::SchedPeltGroupCfs { time_us, .. }
            | TraceEvent::SchedPeltGroupSe { time_us, .. }
            | TraceEvent::SchedCpuCapacity { time_us, .. }
            | TraceEvent::SchedOverutilized { time_us, .. }
            | TraceEvent::CpuFrequency { time_us, .. }
            | TraceEvent::CpuIdle { time_us, .. }
            | TraceEvent::Counter { time_us, .. }
            | TraceEvent::Marker { time_us, .. } => *time_us,
        }
    }
}

/// Names of the threads, for the comm fields: `names[tid]`; tid 0 is unused (idle).
#[derive(Debug, Clone, Default)]
pub struct TraceThreads {
    pub names: Vec<String>,
    /// Kernel priority per tid at the start (120 + nice; 99 - sched_priority for real time).
    pub prios: Vec<i32>,
    /// Priority changes (`sched_setscheduler`, `setpriority`) in the order they happened: the
    /// number of events traced before it, the tid and its new priority.
    pub prio_changes: Vec<(usize, u32, i32)>,
    /// Task group paths by index (`sched::group`; 0 is the root, `/`).
    pub groups: Vec<String>,
}
