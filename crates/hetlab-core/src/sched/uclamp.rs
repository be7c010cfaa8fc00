//! Utilisation clamping (uclamp, Linux 5.3+; kernel/sched/core.c, `uclamp_rq_util_with` in
//! kernel/sched/sched.h, 5.10): a task's `util_min`/`util_max` (rt-app's keys,
//! `sched_setattr`'s `sched_util_min`/`max`) bound the utilisation the frequency and placement
//! decisions see. A run queue's clamps are the largest of its runnable tasks' (max-aggregation:
//! the most demanding task wins both); with none runnable it has no clamp.
//!
//! Read by schedutil (`schedutil_cpu_util`'s FREQUENCY_UTIL, through the engine's view) and by
//! EAS (`find_energy_efficient_cpu`'s fit test, `compute_energy`'s max util, the misfit test).
//! An idle run queue keeps the util_max of the last task that left it (5.10's
//! `uclamp_idle_value`, UCLAMP_FLAG_IDLE; its util_min drops to 0), so the blocked utilisation
//! of a capped task does not raise the frequency once it sleeps; the next task to arrive resets
//! it. Not modelled: the clamp buckets' resolution (5 buckets by default, a bucket keeping the
//! largest value of the tasks that entered it until it empties), the system-wide and cgroup
//! limits.

use super::cfs::RunQueue;
use super::SchedEntity;
pub use crate::workload::{UtilClamp as Clamp, UTIL_CLAMP_SCALE as SCALE};

/// The run queue's clamps: the largest min and the largest max of its runnable tasks (running
/// and waiting, of any class); with none runnable, util_max as the last task to leave had it
/// (and no min); `None` when no task has left yet.
pub fn rq_clamp(rq: &RunQueue, tasks: &[SchedEntity]) -> Option<Clamp> {
    let runnable = rq.curr.into_iter().chain(rq.queue.iter()).chain(rq.rt.iter()).chain(rq.dl.iter());
    let clamp = runnable.map(|t| tasks[t].uclamp).reduce(Clamp::max_aggregate);
    clamp.or(rq.last_util_max.map(|max| Clamp { min: 0, max }))
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

    #[test]
    fn an_idle_run_queue_keeps_the_util_max_of_the_last_task_to_leave() {
        let mut rq = RunQueue::new(true);
        // never used: no clamp at all
        assert_eq!(util_with(900, rq_clamp(&rq, &[]), None), 900);
        // a task capped at 300 left: its blocked utilisation stays capped, with no min
        rq.last_util_max = Some(300);
        assert_eq!(rq_clamp(&rq, &[]), Some(Clamp { min: 0, max: 300 }));
        assert_eq!(util_with(900, rq_clamp(&rq, &[]), None), 300);
        // a waking task's own clamps aggregate with it, as uclamp_rq_util_with does
        assert_eq!(util_with(900, rq_clamp(&rq, &[]), Some(Clamp { min: 0, max: 1024 })), 900);
    }
}
