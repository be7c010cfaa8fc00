//! CFS, the Completely Fair Scheduler of Linux before EEVDF (kernel/sched/fair.c, 3.x–6.5):
//! one run queue per CPU, its tasks served in order of their virtual runtime, which grows with
//! the time they run divided by their weight (`sched_prio_to_weight`, nice −20…19), so CPU time
//! is shared in proportion to weights.
//!
//! - A task's slice is its weight's share of the scheduling period (`sched_latency`, or
//!   `nr_running · min_granularity` when crowded); the tick preempts a task that ran its slice
//!   (`check_preempt_tick`).
//! - A waking task preempts the running one when its vruntime is behind by more than the
//!   wake-up granularity (`check_preempt_wakeup`, `wakeup_preempt_entity`), unless a policy rule
//!   decides first ([`policy_preempts`]): a SCHED_BATCH or SCHED_IDLE task never preempts at
//!   wake-up, a running SCHED_IDLE task always yields to any other. SCHED_BATCH is otherwise
//!   SCHED_OTHER at its nice weight (its `yield_task_fair` skips an `update_curr` that the
//!   `schedule()` right after does anyway).
//! - A waking task's vruntime is placed at most half a latency behind the queue's minimum
//!   (`place_entity`, GENTLE_FAIR_SLEEPERS); a new task one slice after it (START_DEBIT).
//! - The three tunables are scaled by 1 + log2(CPUs) (SCHED_TUNABLESCALING_LOG, at most 8 CPUs).
//!
//! Times are µs of wall time; vruntimes are µs of nice-0 time.

use crate::workload::SchedClass;

/// `sysctl_sched_latency` default, µs (kernel/sched/fair.c).
pub const SCHED_LATENCY_US: f64 = 6000.0;
/// `sysctl_sched_min_granularity` default, µs.
pub const SCHED_MIN_GRANULARITY_US: f64 = 750.0;
/// `sysctl_sched_wakeup_granularity` default, µs.
pub const SCHED_WAKEUP_GRANULARITY_US: f64 = 1000.0;
/// `sched_nr_latency`: latency / min_granularity.
const SCHED_NR_LATENCY: usize = 8;

/// `NICE_0_LOAD`.
pub const NICE_0_WEIGHT: u64 = 1024;

/// `sched_prio_to_weight` (kernel/sched/core.c): nice −20 … 19, each step about 1.25x.
const PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501,
    1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
];

/// The load weight of a task at `nice` (clamped to −20…19).
pub fn weight_of(nice: i32) -> u64 {
    PRIO_TO_WEIGHT[(nice.clamp(-20, 19) + 20) as usize]
}

/// `WEIGHT_IDLEPRIO` (kernel/sched/sched.h): a SCHED_IDLE task's weight, below nice 19's 15.
pub const WEIGHT_IDLEPRIO: u64 = 3;

/// `set_load_weight`: a CFS task's weight by its policy and nice value (SCHED_IDLE ignores nice).
pub fn weight_for(class: SchedClass, nice: i32) -> u64 {
    if class == SchedClass::Idle {
        WEIGHT_IDLEPRIO
    } else {
        weight_of(nice)
    }
}

/// `get_update_sysctl_factor()` with SCHED_TUNABLESCALING_LOG: 1 + log2(min(ncpus, 8)).
pub fn tunable_scaling(ncpus: usize) -> f64 {
    1.0 + (ncpus.min(8) as f64).log2().floor()
}

/// The CFS tunables of a machine with `ncpus` CPUs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tunables {
    pub latency_us: f64,
    pub min_granularity_us: f64,
    pub wakeup_granularity_us: f64,
}

impl Tunables {
    pub fn for_cpus(ncpus: usize) -> Tunables {
        let f = tunable_scaling(ncpus);
        Tunables {
            latency_us: SCHED_LATENCY_US * f,
            min_granularity_us: SCHED_MIN_GRANULARITY_US * f,
            wakeup_granularity_us: SCHED_WAKEUP_GRANULARITY_US * f,
        }
    }

    /// `__sched_period`: the time in which every runnable task should run once.
    pub fn period_us(&self, nr_running: usize) -> f64 {
        if nr_running > SCHED_NR_LATENCY {
            nr_running as f64 * self.min_granularity_us
        } else {
            self.latency_us
        }
    }
}

/// `calc_delta_fair`: `delta` of wall time as vruntime for a task of `weight`.
pub fn delta_fair(delta_us: f64, weight: u64) -> f64 {
    if weight == NICE_0_WEIGHT {
        delta_us
    } else {
        delta_us * NICE_0_WEIGHT as f64 / weight as f64
    }
}

/// The entities waiting on a run queue in the order CFS serves them, by virtual runtime, ties to
/// the lower entity (the red-black tree `tasks_timeline`): the leftmost is found in logarithmic
/// time, whatever the number of entities. A waiting entity's vruntime does not change while it
/// waits, so it is its key. A CPU's run queue holds thread indices; a task group's
/// (`sched::group`) holds tasks and the entities of its child groups.
#[derive(Debug, Clone)]
pub struct Timeline<T = usize>(std::collections::BTreeSet<(u64, T)>);

impl<T> Default for Timeline<T> {
    fn default() -> Self {
        Timeline(Default::default())
    }
}

impl<T: Ord + Copy> Timeline<T> {
    /// `vruntime` as an unsigned key of the same order (IEEE-754 total order).
    fn key(vruntime: f64) -> u64 {
        let bits = vruntime.to_bits();
        if bits >> 63 == 1 {
            !bits
        } else {
            bits | 1 << 63
        }
    }
    pub fn insert(&mut self, entity: T, vruntime: f64) {
        self.0.insert((Self::key(vruntime), entity));
    }
    /// Removes `entity`, waiting with `vruntime`; false if it was not here.
    pub fn remove(&mut self, entity: T, vruntime: f64) -> bool {
        self.0.remove(&(Self::key(vruntime), entity))
    }
    /// `entity` waits here with `vruntime`.
    pub fn contains(&self, entity: T, vruntime: f64) -> bool {
        self.0.contains(&(Self::key(vruntime), entity))
    }
    /// The entity to run next (`__pick_first_entity`).
    pub fn first(&self) -> Option<T> {
        self.0.first().map(|&(_, e)| e)
    }
    /// The entities, leftmost first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = T> + Clone + '_ {
        self.0.iter().map(|&(_, e)| e)
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// One CPU's run queue: its CFS tasks, its real-time ones (`sched::rt`) above them and its
/// SCHED_DEADLINE ones (`sched::deadline`) above those.
#[derive(Debug, Clone)]
pub struct RunQueue {
    pub online: bool,
    /// The task running here, of either class (`rq->curr`).
    pub curr: Option<usize>,
    /// CFS tasks waiting here, by vruntime (the smallest runs next).
    pub queue: Timeline,
    /// The real-time tasks: which priority runs, and the ones waiting.
    pub rt: super::rt::RtQueue,
    /// Sum of the weights of the CFS tasks running or waiting here (`cfs_rq->load.weight`).
    pub load_weight: u64,
    /// Monotonic floor of the tasks' vruntimes (`min_vruntime`).
    pub min_vruntime: f64,
    /// When `curr` started running this turn, µs (`prev_sum_exec_runtime` reference).
    pub slice_start_us: f64,
    /// Up to when `curr`'s vruntime is accounted, µs (`exec_start`).
    pub exec_start_us: f64,
    /// The run queue's PELT signals (`cfs_rq->avg`; the 3.x `rq->avg` of big.LITTLE MP).
    pub avg: crate::sched::pelt::SchedAvg,
    /// The RT tasks' utilisation here (`rq->avg_rt`, 5.10: running while an RT task runs).
    pub avg_rt: crate::sched::pelt::SchedAvg,
    /// The SCHED_DEADLINE tasks (`sched::deadline`): which deadline runs, the ones waiting.
    pub dl: super::deadline::DlQueue,
    /// The DL tasks' utilisation here (`rq->avg_dl`: running while a DL task runs).
    pub avg_dl: crate::sched::pelt::SchedAvg,
    /// Its utilisation clamp buckets (`rq->uclamp`, `sched::uclamp`): the clamps of its
    /// runnable fair and RT tasks, and util_max kept while it is idle.
    pub uclamp: super::uclamp::RqClamps,
    /// The util_est of its queued CFS tasks, summed (`cfs_rq->avg.util_est`; 0 where no
    /// kernel of the run keeps it).
    pub util_est: u64,
}

impl RunQueue {
    pub fn new(online: bool) -> RunQueue {
        RunQueue {
            online,
            curr: None,
            queue: Timeline::default(),
            rt: Default::default(),
            load_weight: 0,
            min_vruntime: 0.0,
            slice_start_us: 0.0,
            exec_start_us: 0.0,
            avg: Default::default(),
            avg_rt: Default::default(),
            dl: Default::default(),
            avg_dl: Default::default(),
            uclamp: Default::default(),
            util_est: 0,
        }
    }

    /// Tasks running or waiting here, of any class (`rq->nr_running`).
    pub fn nr_running(&self) -> usize {
        self.queue.len() + self.rt.len() + self.dl.len() + self.curr.is_some() as usize
    }

    /// The CFS task running here (`cfs_rq->curr`: none while an RT or DL task runs).
    pub fn cfs_curr(&self) -> Option<usize> {
        self.curr.filter(|_| self.rt.running.is_none() && self.dl.running.is_none())
    }

    /// CFS tasks running or waiting here (`cfs_rq->nr_running`).
    pub fn cfs_nr_running(&self) -> usize {
        self.queue.len() + self.cfs_curr().is_some() as usize
    }

    pub fn is_idle(&self) -> bool {
        self.curr.is_none()
    }

    /// Removes a waiting task (waiting with `vruntime`); false if it was not waiting here.
    pub fn remove(&mut self, task: usize, vruntime: f64) -> bool {
        self.queue.remove(task, vruntime)
    }

    /// `sched_slice` of a task of this run queue's own (no task group): the wall time `weight`
    /// may run this period.
    pub fn slice_us(&self, tunables: &Tunables, weight: u64) -> f64 {
        sched_slice(tunables, self.cfs_nr_running(), [(weight, self.load_weight)])
    }

    /// `update_min_vruntime` (see [`min_vruntime`]).
    pub fn update_min_vruntime(&mut self, curr_vruntime: Option<f64>, leftmost_vruntime: Option<f64>) {
        self.min_vruntime = min_vruntime(self.min_vruntime, curr_vruntime, leftmost_vruntime);
    }
}

/// `update_min_vruntime`: a run queue's floor `min` moves never backwards, towards the smaller
/// of the running and the leftmost waiting entity.
pub fn min_vruntime(min: f64, curr_vruntime: Option<f64>, leftmost_vruntime: Option<f64>) -> f64 {
    let candidate = match (curr_vruntime, leftmost_vruntime) {
        (Some(c), Some(l)) => c.min(l),
        (Some(v), None) | (None, Some(v)) => v,
        (None, None) => return min,
    };
    min.max(candidate)
}

/// `sched_slice`: the period for `nr_running` entities on the entity's own run queue, shared by
/// weight at each level from that run queue up to the CPU's (`levels`: the entity's weight and
/// its run queue's load, then its group's entity's and the parent run queue's, ...). A run
/// queue's load counts the entity even when it is not queued yet.
pub fn sched_slice(tunables: &Tunables, nr_running: usize, levels: impl IntoIterator<Item = (u64, u64)>) -> f64 {
    let mut slice_us = tunables.period_us(nr_running.max(1));
    for (weight, load) in levels {
        slice_us = slice_us * weight as f64 / load.max(weight) as f64;
    }
    slice_us
}

/// How an entity arrives on a run queue, for [`place_vruntime`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Placing {
    /// A new task, whose slice would be `slice_us` at `weight` (`sched_vslice`).
    New { slice_us: f64, weight: u64 },
    /// A task or a task group's entity waking up.
    Waking,
}

/// `place_entity`: the vruntime an entity arriving on a queue whose floor is `min_vruntime`
/// gets. A new task starts one virtual slice after the minimum (START_DEBIT) so forking cannot
/// starve others; a waking entity keeps its own vruntime but at most half a latency behind the
/// minimum (GENTLE_FAIR_SLEEPERS), so sleepers get a bounded bonus.
pub fn place_vruntime(min_vruntime: f64, tunables: &Tunables, vruntime: f64, placing: Placing) -> f64 {
    match placing {
        Placing::New { slice_us, weight } => min_vruntime + delta_fair(slice_us, weight),
        Placing::Waking => vruntime.max(min_vruntime - tunables.latency_us / 2.0),
    }
}

/// `wakeup_preempt_entity`: whether a waking task with `waking_vruntime` preempts the running
/// one: it must be behind by more than the wake-up granularity in its own virtual time.
pub fn wakeup_preempts(tunables: &Tunables, curr_vruntime: f64, waking_vruntime: f64, waking_weight: u64) -> bool {
    curr_vruntime - waking_vruntime > delta_fair(tunables.wakeup_granularity_us, waking_weight)
}

/// `check_preempt_wakeup`'s policy rules (kernel/sched/fair.c, the same in 3.10 and 5.10), before
/// vruntimes are compared: a running SCHED_IDLE task is preempted by any waking task that is
/// not SCHED_IDLE, and a waking task of any policy but SCHED_NORMAL (SCHED_BATCH, SCHED_IDLE)
/// never preempts otherwise (`p->policy != SCHED_NORMAL`: its turn comes at a tick).
/// `None`: the vruntimes decide.
pub fn policy_preempts(curr: SchedClass, waking: SchedClass) -> Option<bool> {
    let idle = |c: SchedClass| c == SchedClass::Idle;
    if idle(curr) && !idle(waking) {
        Some(true)
    } else if waking != SchedClass::Normal {
        Some(false)
    } else {
        None
    }
}

/// `check_preempt_tick`: whether the tick ends the running entity's turn. `ideal_us` is its
/// slice (`sched_slice`), `ran_us` the wall time it has run this turn, `leftmost_vruntime` the
/// smallest vruntime waiting on its run queue.
pub fn tick_preempts(
    tunables: &Tunables,
    ideal_us: f64,
    curr_vruntime: f64,
    ran_us: f64,
    leftmost_vruntime: Option<f64>,
) -> bool {
    if ran_us > ideal_us {
        return true;
    }
    // never preempt before the minimum granularity
    if ran_us < tunables.min_granularity_us {
        return false;
    }
    leftmost_vruntime.is_some_and(|l| curr_vruntime - l > ideal_us)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_follow_the_kernel_table() {
        assert_eq!(
            (weight_of(0), weight_of(-20), weight_of(19), weight_of(5), weight_of(10)),
            (1024, 88761, 15, 335, 110)
        );
        assert_eq!(weight_of(40), 15);
        // SCHED_IDLE: 3 whatever the nice value; a nice-0 task gets 1024/1027 of a shared CPU;
        // SCHED_BATCH keeps its nice weight
        assert_eq!((weight_for(SchedClass::Idle, -20), weight_for(SchedClass::Normal, 19)), (3, 15));
        assert_eq!(weight_for(SchedClass::Batch, 5), 335);
        use SchedClass::{Batch, Idle, Normal};
        assert_eq!(
            (policy_preempts(Idle, Normal), policy_preempts(Normal, Idle), policy_preempts(Idle, Idle)),
            (Some(true), Some(false), Some(false))
        );
        // a waking batch task preempts a running SCHED_IDLE one, and nothing else
        assert_eq!(
            (policy_preempts(Idle, Batch), policy_preempts(Normal, Batch), policy_preempts(Batch, Batch)),
            (Some(true), Some(false), Some(false))
        );
        assert_eq!((policy_preempts(Normal, Normal), policy_preempts(Batch, Normal)), (None, None));
        // each nice step is about 10 % of CPU against a nice-0 task: 1024/(1024+820) = 0.555
        assert!((1024.0 / (1024.0 + weight_of(1) as f64) - 0.555).abs() < 0.001);
    }

    #[test]
    fn slices_share_the_scaled_period_by_weight() {
        // 8 CPUs: factor 1 + log2(8) = 4 -> latency 24 ms, granularity 3 ms, wake-up 4 ms
        let t = Tunables::for_cpus(8);
        assert_eq!((t.latency_us, t.min_granularity_us, t.wakeup_granularity_us), (24_000.0, 3_000.0, 4_000.0));
        let mut rq = RunQueue::new(true);
        rq.curr = Some(0);
        rq.queue.insert(1, 0.0);
        rq.load_weight = 1024 + 335;
        // nice 0 vs nice 5: 24 ms · 1024/1359 and · 335/1359
        assert!((rq.slice_us(&t, 1024) - 24_000.0 * 1024.0 / 1359.0).abs() < 1e-9);
        assert!((rq.slice_us(&t, 335) - 24_000.0 * 335.0 / 1359.0).abs() < 1e-9);
        // crowded: more than 8 runnable -> nr · min_granularity
        rq.queue.clear();
        for t in 1..12 {
            rq.queue.insert(t, t as f64);
        }
        rq.load_weight = 12 * 1024;
        assert_eq!(rq.slice_us(&t, 1024), 3_000.0);
        // 5 CPUs (TC2): 1 + floor(log2 5) = 3
        assert_eq!(tunable_scaling(5), 3.0);
        assert!(rq.remove(3, 3.0) && !rq.remove(3, 3.0));
        // served by vruntime, ties to the lower index, negative vruntimes first
        let mut q = Timeline::default();
        for (t, v) in [(4, 2.5), (2, -1.0), (9, 2.5), (1, 0.0), (3, -7.25)] {
            q.insert(t, v);
        }
        assert_eq!(q.iter().collect::<Vec<_>>(), [3, 2, 1, 4, 9]);
        assert_eq!((q.first(), q.len()), (Some(3), 5));
        assert_eq!(rq.nr_running(), 11);
    }

    #[test]
    fn placement_and_preemption_rules() {
        let t = Tunables::for_cpus(1);
        let mut rq = RunQueue::new(true);
        rq.min_vruntime = 100_000.0;
        rq.curr = Some(0);
        rq.load_weight = 1024;
        // a long sleeper comes back half a latency (3 ms) behind the minimum
        assert_eq!(place_vruntime(rq.min_vruntime, &t, 0.0, Placing::Waking), 97_000.0);
        assert_eq!(place_vruntime(rq.min_vruntime, &t, 120_000.0, Placing::Waking), 120_000.0);
        // a new task starts a virtual slice (6 ms shared by 2 -> 3 ms) after the minimum
        rq.load_weight = 2048;
        let slice_us = rq.slice_us(&t, 1024);
        assert_eq!(place_vruntime(rq.min_vruntime, &t, 0.0, Placing::New { slice_us, weight: 1024 }), 103_000.0);
        // wake-up preemption: behind by more than 1 ms (nice 0)
        assert!(wakeup_preempts(&t, 100_000.0, 98_900.0, 1024));
        assert!(!wakeup_preempts(&t, 100_000.0, 99_100.0, 1024));
        // the tick: a turn longer than the slice ends
        let ideal_us = rq.slice_us(&t, 1024);
        assert!(tick_preempts(&t, ideal_us, 100_000.0, 3_001.0, Some(100_000.0)));
        assert!(!tick_preempts(&t, ideal_us, 100_000.0, 700.0, Some(90_000.0)));
        assert!(tick_preempts(&t, ideal_us, 100_000.0, 800.0, Some(90_000.0)));
        // two levels: a task of a group with 3 more tasks, the group sharing the CPU with one
        // other entity of equal weight: 6 ms · 1024/4096 · 1024/2048
        assert_eq!(sched_slice(&t, 4, [(1024, 4096), (1024, 2048)]), 750.0);
        rq.update_min_vruntime(Some(99_000.0), Some(105_000.0));
        assert_eq!(rq.min_vruntime, 100_000.0);
        rq.update_min_vruntime(Some(101_000.0), None);
        assert_eq!(rq.min_vruntime, 101_000.0);
    }
}
