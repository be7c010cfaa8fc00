//! A thread as its work sees it: where it is in its task's phases, what the kernel took from it,
//! and what it has done (its counters, its CPU time).

use crate::engine::pmu::Pmu;

/// Where a thread is in its task's phases.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub phase: usize,
    pub repeats_left: u32,
    /// Loops done of the task's phase loop `phase` is in (0 outside one).
    pub phase_loop: u32,
    /// Instructions left in the current job.
    pub work_left: f64,
    /// Time the kernel took from this thread (OS jitter, idle exit) not yet paid back, µs.
    pub stolen_us: f64,
    /// Periodic phases: jobs left and the next release time.
    pub jobs_left: u64,
    pub next_release_us: f64,
    /// A `runtime` phase: when its wall-clock time is up, µs.
    pub runtime_end_us: Option<f64>,
}

pub(super) struct Thread {
    pub(super) tid: u32,
    /// Index into the run's tasks (the workload's, then kernel threads').
    pub(super) task: usize,
    pub(super) kernel: bool,
    pub(super) progress: Progress,
    pub(super) pmu: Pmu,
    /// Lines taken from other cores' caches.
    pub(super) peer_lines: f64,
    pub(super) cpu_time_us: f64,
    /// Its CPU time on each logical CPU, µs.
    pub(super) cpu_time_on_us: Vec<f64>,
    pub(super) finish_us: f64,
    /// Sequence number of its armed timer (see `timers`), and the CPU it is armed on.
    pub(super) timer_seq: u32,
    pub(super) timer_cpu: usize,
}

impl Thread {
    pub(super) fn new(tid: u32, task: usize, kernel: bool, repeat: u32, ncpus: usize) -> Thread {
        Thread {
            tid,
            task,
            kernel,
            progress: Progress {
                phase: 0,
                repeats_left: repeat,
                phase_loop: 0,
                work_left: 0.0,
                stolen_us: 0.0,
                jobs_left: 0,
                next_release_us: 0.0,
                runtime_end_us: None,
            },
            pmu: Pmu::default(),
            peer_lines: 0.0,
            cpu_time_us: 0.0,
            cpu_time_on_us: vec![0.0; ncpus],
            finish_us: 0.0,
            timer_seq: 0,
            timer_cpu: 0,
        }
    }
}
