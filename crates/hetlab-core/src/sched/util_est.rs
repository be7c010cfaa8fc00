//! util_est, the utilisation a CFS task is expected to have when it wakes (Linux 6.12,
//! kernel/sched/fair.c: `util_est_update`, `_task_util_est`, `task_util_est`,
//! `util_est_enqueue` / `util_est_dequeue`, and `cpu_util`'s `UTIL_EST` branch). PELT's
//! `util_avg` decays while a task sleeps, so a periodic task wakes with less utilisation than it
//! will use; util_est remembers what it had when it last went to sleep.
//!
//! - At each sleep the task's estimate (`ewma`) takes the `util_avg` it sleeps with: at once if
//!   that is higher (no averaging on the way up), else as an EWMA of weight 1/4, and not at all
//!   within `MARGIN` of it, when the task ran at the CPU's full capacity (no idle time to prove
//!   it smaller) or when it waited more than it ran (`runnable_avg` above `util_avg`: it did not
//!   get the time it wanted).
//! - A run queue sums the estimates of its queued CFS tasks; the CPU's utilisation is the larger
//!   of that sum and its `util_avg` (schedutil's and EAS's `cpu_util`).
//!
//! Linux 6.6+ kernels (EEVDF) run it; the engine keeps it for the EEVDF placements only (the 3.x
//! and 5.10 policies keep their published behaviour, `util_est` zero everywhere).

/// `UTIL_EST_MARGIN`: SCHED_CAPACITY_SCALE / 100.
pub const MARGIN: u64 = 1024 / 100;
/// `UTIL_EST_WEIGHT_SHIFT`: the new sample's weight is 1/4.
pub const WEIGHT_SHIFT: u32 = 2;

/// A task's estimate (`p->se.avg.util_est`: the EWMA and the `UTIL_AVG_UNCHANGED` flag).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskEstimate {
    pub ewma: u64,
    /// Set at each update; cleared when PELT next moves `util_avg` (`cfs_se_util_change`): a
    /// task that sleeps again before that keeps its estimate.
    pub unchanged: bool,
}

impl TaskEstimate {
    /// `util_est_update(..., task_sleep = true)` for a task sleeping with `util_avg` and
    /// `runnable_avg` on a CPU of `capacity`.
    pub fn at_sleep(&mut self, util_avg: u64, runnable_avg: u64, capacity: u64) {
        if self.unchanged {
            return;
        }
        let mut ewma = self.ewma;
        if ewma <= util_avg {
            ewma = util_avg;
        } else {
            let last_ewma_diff = ewma - util_avg;
            if last_ewma_diff >= MARGIN {
                if util_avg > capacity {
                    return; // no idle time: the estimate is kept, flag and all
                }
                if util_avg + MARGIN >= runnable_avg {
                    ewma = ((ewma << WEIGHT_SHIFT) - last_ewma_diff) >> WEIGHT_SHIFT;
                }
            }
        }
        *self = TaskEstimate { ewma, unchanged: true };
    }

    /// PELT moved the task's `util_avg` (`cfs_se_util_change`).
    pub fn util_changed(&mut self) {
        self.unchanged = false;
    }
}

/// `task_util_est`: what a waking task is expected to use.
pub fn task_util_est(util_avg: u64, estimate: TaskEstimate) -> u64 {
    util_avg.max(estimate.ewma)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rise_is_taken_at_once_a_fall_at_a_quarter() {
        let mut e = TaskEstimate::default();
        e.at_sleep(400, 400, 1024);
        assert_eq!(e, TaskEstimate { ewma: 400, unchanged: true });
        // a second sleep before PELT moved util_avg keeps it
        e.at_sleep(100, 100, 1024);
        assert_eq!(e.ewma, 400);
        e.util_changed();
        // 400 -> 200: (400·4 - 200) / 4 = 350
        e.at_sleep(200, 200, 1024);
        assert_eq!(e.ewma, 350);
        e.util_changed();
        e.at_sleep(500, 500, 1024);
        assert_eq!(e.ewma, 500);
    }

    #[test]
    fn the_margin_full_capacity_and_waiting_keep_the_estimate() {
        let mut e = TaskEstimate { ewma: 300, unchanged: false };
        e.at_sleep(295, 295, 1024); // within 10
        assert_eq!(e, TaskEstimate { ewma: 300, unchanged: true });
        let mut e = TaskEstimate { ewma: 900, unchanged: false };
        e.at_sleep(500, 500, 446); // ran beyond a LITTLE's capacity: no idle time seen
        assert_eq!(e, TaskEstimate { ewma: 900, unchanged: false });
        let mut e = TaskEstimate { ewma: 600, unchanged: false };
        e.at_sleep(300, 400, 1024); // waited 100 more than it ran
        assert_eq!(e, TaskEstimate { ewma: 600, unchanged: true });
        assert_eq!(task_util_est(250, e), 600);
        assert_eq!(task_util_est(700, e), 700);
    }
}
