//! CFS run queues and time slices (kernel/sched/fair.c): one run queue per CPU with the task
//! running on it and the tasks waiting, served in turn; a task runs for a slice of the
//! scheduling period `sched_latency` shared among the runnable tasks, never less than
//! `min_granularity`, both scaled by 1 + log2(CPUs) (SCHED_TUNABLESCALING_LOG, at most 8 CPUs
//! counted).
//!
//! Waiting tasks are served round-robin; with equal weights and equal slices that is the order
//! CFS's vruntime gives. Nice weights, vruntime ordering and wake-up preemption come with the
//! placement work (issue 10).

use std::collections::VecDeque;

/// `sysctl_sched_latency` default, µs (kernel/sched/fair.c).
pub const SCHED_LATENCY_US: f64 = 6000.0;
/// `sysctl_sched_min_granularity` default, µs.
pub const SCHED_MIN_GRANULARITY_US: f64 = 750.0;

/// `get_update_sysctl_factor()` with SCHED_TUNABLESCALING_LOG: 1 + log2(min(ncpus, 8)).
pub fn tunable_scaling(ncpus: usize) -> f64 {
    1.0 + (ncpus.min(8) as f64).log2().floor()
}

/// One CPU's run queue.
#[derive(Debug, Clone)]
pub struct RunQueue {
    pub online: bool,
    /// The thread running here.
    pub curr: Option<usize>,
    /// Threads waiting, in the order they run.
    pub queue: VecDeque<usize>,
    /// When `curr`'s slice ends (only acted on while others wait), µs.
    pub slice_end_us: f64,
}

impl RunQueue {
    pub fn new(online: bool) -> RunQueue {
        RunQueue { online, curr: None, queue: VecDeque::new(), slice_end_us: f64::INFINITY }
    }

    /// Threads running or waiting here (`rq->nr_running`).
    pub fn nr_running(&self) -> usize {
        self.queue.len() + self.curr.is_some() as usize
    }

    pub fn is_idle(&self) -> bool {
        self.curr.is_none()
    }

    /// The slice of a thread starting to run here now: the period shared among the runnable
    /// threads (the one starting and those waiting), at least the minimum granularity.
    pub fn slice_us(&self, ncpus: usize) -> f64 {
        let nr = 1 + self.queue.len();
        let factor = tunable_scaling(ncpus);
        (SCHED_LATENCY_US * factor / nr as f64).max(SCHED_MIN_GRANULARITY_US * factor)
    }

    /// Removes a waiting thread; false if it was not waiting here.
    pub fn remove(&mut self, thread: usize) -> bool {
        match self.queue.iter().position(|&t| t == thread) {
            Some(pos) => {
                self.queue.remove(pos);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_share_the_scaled_latency() {
        // 8 CPUs: factor 1 + log2(8) = 4 -> latency 24 ms, granularity 3 ms
        let mut rq = RunQueue::new(true);
        assert_eq!(rq.slice_us(8), 24_000.0);
        rq.queue.extend([1, 2, 3]);
        assert_eq!(rq.slice_us(8), 6_000.0);
        rq.queue.extend(4..20);
        assert_eq!(rq.slice_us(8), 3_000.0);
        // 5 CPUs (TC2): 1 + floor(log2 5) = 3
        assert_eq!(tunable_scaling(5), 3.0);
        assert!(rq.remove(3) && !rq.remove(3));
        assert_eq!(rq.nr_running(), 18);
    }
}
