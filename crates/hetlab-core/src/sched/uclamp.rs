//! Utilisation clamping (uclamp, Linux 5.3+; kernel/sched/core.c, `uclamp_rq_util_with` in
//! kernel/sched/sched.h, 5.10): a task's `util_min`/`util_max` (rt-app's keys,
//! `sched_setattr`'s `sched_util_min`/`max`) bound the utilisation the frequency and placement
//! decisions see. A run queue's clamps are the largest of its runnable tasks' (max-aggregation:
//! the most demanding task wins both); with none runnable it has no clamp.
//!
//! Read by schedutil (`schedutil_cpu_util`'s FREQUENCY_UTIL, through the engine's view) and by
//! EAS (`find_energy_efficient_cpu`'s fit test, `compute_energy`'s max util, the misfit test).
//! Not modelled: the clamp buckets' resolution (20 buckets of ~51), the idle run queue's
//! retained `util_max` (UCLAMP_FLAG_IDLE), the system-wide and cgroup limits.

use super::cfs::RunQueue;
use super::SchedEntity;
pub use crate::workload::{UtilClamp as Clamp, UTIL_CLAMP_SCALE as SCALE};

/// The run queue's clamps: the largest min and the largest max of its runnable tasks (running
/// and waiting, of either class); `None` with none runnable.
pub fn rq_clamp(rq: &RunQueue, tasks: &[SchedEntity]) -> Option<Clamp> {
    rq.curr.into_iter().chain(rq.queue.iter()).chain(rq.rt.iter()).map(|t| tasks[t].uclamp).reduce(Clamp::max_aggregate)
}

/// `uclamp_rq_util_with`: `util` within the run queue's clamps, with `task`'s added as if it
/// were runnable there; when the min reaches the max, the min wins.
pub fn util_with(util: u64, rq: Option<Clamp>, task: Option<Clamp>) -> u64 {
    let Some(c) = [rq, task].into_iter().flatten().reduce(Clamp::max_aggregate) else { return util };
    if c.min >= c.max {
        return u64::from(c.min);
    }
    util.clamp(u64::from(c.min), u64::from(c.max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_demanding_task_sets_both_clamps() {
        let boosted = Some(Clamp { min: 512, max: 1024 });
        let capped = Some(Clamp { min: 0, max: 300 });
        assert_eq!(util_with(100, boosted, None), 512);
        assert_eq!(util_with(800, capped, None), 300);
        // together: min 512, max 1024 (max-aggregation), so the cap does not hold
        assert_eq!(util_with(100, capped, boosted), 512);
        assert_eq!(util_with(100, None, None), 100);
        // min above max: the min wins (uclamp_rq_util_with)
        assert_eq!(util_with(100, Some(Clamp { min: 700, max: 700 }), None), 700);
        assert!(Clamp::new("t", 600, 500).is_err() && Clamp::new("t", 0, 1025).is_err());
        assert_eq!(Clamp { min: 100, max: 200 }.task_util(50), 100);
    }
}
