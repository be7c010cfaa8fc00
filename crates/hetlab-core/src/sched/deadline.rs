//! SCHED_DEADLINE (Linux 3.14+; the rules as kernel/sched/deadline.c and cpudeadline.c have them
//! in 5.10, the only kernel hetlab models that has the class: a 3.10 placement refuses it):
//!
//! - The class sits above RT and CFS: a runnable DL task runs before any of theirs and preempts
//!   them at once; among DL tasks the earliest absolute deadline runs (EDF per run queue,
//!   [`DlQueue`]), and an earlier one preempts a later one (`dl_entity_preempt`).
//! - Each task is a constant bandwidth server ([`DlEntity`]): it may run `runtime` of each
//!   `period` within `deadline` of its start. Its runtime is consumed while it runs, scaled by
//!   the CPU's current over maximum frequency and by its capacity (`update_curr_dl`,
//!   `cap_scale` twice; GRUB's reclaiming is for SCHED_FLAG_RECLAIM tasks only and is not
//!   modelled). At zero runtime it is throttled until its replenishment timer fires at the
//!   start of its next period (`start_dl_timer`), which adds runtime and moves the deadline a
//!   period on until the runtime is positive (`replenish_dl_entity`: an overrun is paid back).
//!   The runtime is checked where the kernel calls `update_curr_dl` (the tick, a preemption, a
//!   block): without HRTICK (off by default) a task can overrun by up to a tick.
//! - At wake-up the CBS rule (`update_dl_entity`): if the deadline has passed or the runtime left
//!   over the time left to it exceeds the task's bandwidth (`dl_entity_overflow`), a new deadline
//!   one relative deadline from now and a full runtime; otherwise it keeps both. A task whose
//!   deadline is shorter than its period takes the revised rule (runtime cut to its density).
//! - Admission ([`admit`], `sched_dl_overflow` at `sched_setattr`): the tasks' bandwidths may sum
//!   to at most `sched_rt_runtime_us / sched_rt_period_us` (95 %) of the root domain's capacity
//!   (5.10's `dl_bw_capacity`: the CPUs' capacities on asymmetric systems, else 1024 each). A
//!   DL task's affinity must span its root domain (`__sched_setscheduler`: EPERM otherwise).
//! - Global EDF placement: a waking task goes elsewhere only if a DL task runs on its CPU that
//!   it would not preempt ([`select_cpu`], `select_task_rq_dl`), to a CPU from `cpudl`
//!   ([`later_cpus`]): those without DL work (free), else the one whose earliest deadline is the
//!   latest, if the task's is earlier ([`find_later_cpu`]: its previous CPU first, then the
//!   waker's, then the first in its cluster). A task left waiting is pushed to such a CPU
//!   ([`push_target`]) and a CPU whose DL task leaves pulls the earliest waiting task of the
//!   others that would run first here and not there ([`pull_candidates`]). A task waking with
//!   the deadline of the one running has the CPU rescheduled when only the running one can move
//!   ([`equal_deadline_resched`], `check_preempt_equal_dl`): the running one keeps it (queued
//!   first), its runtime is accounted and what waits is pushed. With asymmetric
//!   capacities (5.10) a CPU fits a task when its capacity scales the task's deadline to its
//!   runtime or more (`dl_task_fits_capacity`).
//! - Utilisation: a run queue's `running_bw` is the bandwidth of its active tasks, kept after a
//!   task blocks until its 0-lag time (`task_non_contending`, the inactive timer); schedutil adds
//!   it to its request (`cpu_bw_dl`), and the DL running time's PELT signal (`avg_dl`) takes
//!   capacity from CFS (`scale_rt_capacity`).
//!
//! Not modelled: the order among waiting tasks of equal deadlines ([`DlQueue`] serves them by
//! thread index; the kernel's rb-tree by arrival), priority inheritance, GRUB.
//!
//! Times are ns, as the kernel's; bandwidths are fractions << [`BW_SHIFT`].

use super::cfs::RunQueue;
use super::{CpuMask, SchedView};
pub use crate::workload::DlParams;
use std::collections::BTreeSet;

/// `BW_SHIFT`: bandwidths are fixed point with 20 fractional bits.
pub const BW_SHIFT: u32 = 20;
/// `DL_SCALE`: `dl_entity_overflow` drops 10 bits of each time (µs resolution).
const DL_SCALE: u32 = 10;
/// `SCHED_CAPACITY_SHIFT`.
const CAPACITY_SHIFT: u32 = 10;

/// `to_ratio`: `runtime / period` << BW_SHIFT.
pub fn to_ratio(period_ns: u64, runtime_ns: u64) -> u64 {
    if period_ns == 0 {
        return 0;
    }
    (u128::from(runtime_ns) << BW_SHIFT).div_euclid(u128::from(period_ns)) as u64
}

/// `cap_scale`: `v · scale / 1024`.
fn cap_scale(v: u64, scale: u64) -> u64 {
    ((u128::from(v) * u128::from(scale)) >> CAPACITY_SHIFT) as u64
}

/// A DL task's server state (`struct sched_dl_entity`'s dynamic part).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DlEntity {
    /// Runtime left in this period, ns (negative after an overrun).
    pub runtime_ns: i64,
    /// The absolute deadline, ns.
    pub deadline_ns: u64,
    /// Out of runtime (or yielded), waiting for its replenishment timer (`dl_throttled`).
    pub throttled: bool,
    /// It yielded: its runtime goes to 0 and it waits for its next period (`dl_yielded`).
    pub yielded: bool,
    /// Blocked but its bandwidth still counts until its 0-lag time (`dl_non_contending`).
    pub non_contending: bool,
    /// Its bandwidth is in its run queue's `running_bw` (active: contending or not).
    pub active: bool,
    /// When its runtime was last accounted, ns (`se.exec_start`).
    pub exec_start_ns: u64,
}

impl DlEntity {
    /// `setup_new_dl_entity`: a new server (the task just became SCHED_DEADLINE at `now_ns`).
    pub fn setup_new(&mut self, p: &DlParams, now_ns: u64) {
        self.deadline_ns = now_ns + p.deadline_ns;
        self.runtime_ns = p.runtime_ns as i64;
    }

    /// `dl_entity_overflow`: the runtime left over the time left to the deadline exceeds the
    /// task's runtime over its relative deadline (compared on µs-truncated values, as the
    /// kernel does to stay within 64 bits).
    pub fn overflows(&self, p: &DlParams, now_ns: u64) -> bool {
        let left = u128::from(p.deadline_ns >> DL_SCALE) * u128::from((self.runtime_ns.max(0) as u64) >> DL_SCALE);
        let right =
            u128::from(self.deadline_ns.saturating_sub(now_ns) >> DL_SCALE) * u128::from(p.runtime_ns >> DL_SCALE);
        right < left
    }

    /// `update_dl_entity`: the CBS wake-up rule at `now_ns`.
    pub fn wake_up(&mut self, p: &DlParams, now_ns: u64) {
        let passed = self.deadline_ns < now_ns;
        if passed || self.overflows(p, now_ns) {
            if p.deadline_ns != p.period_ns && !passed {
                // revised CBS (`update_dl_revised_wakeup`): keep the deadline, cut the runtime to
                // the density over what is left
                let density = to_ratio(p.deadline_ns, p.runtime_ns);
                let laxity_ns = self.deadline_ns - now_ns;
                self.runtime_ns = ((u128::from(density) * u128::from(laxity_ns)) >> BW_SHIFT) as i64;
                return;
            }
            self.setup_new(p, now_ns);
        }
    }

    /// `dl_next_period`: when the current period ends and the replenishment timer fires.
    pub fn next_period_ns(&self, p: &DlParams) -> u64 {
        (self.deadline_ns + p.period_ns).saturating_sub(p.deadline_ns)
    }

    /// `replenish_dl_entity` at `now_ns`: a period's runtime and deadline at a time until the
    /// runtime is positive (a yielding task gives up what it had left); a deadline still behind
    /// now starts over from now.
    pub fn replenish(&mut self, p: &DlParams, now_ns: u64) {
        if self.yielded && self.runtime_ns > 0 {
            self.runtime_ns = 0;
        }
        while self.runtime_ns <= 0 {
            self.deadline_ns += p.period_ns;
            self.runtime_ns += p.runtime_ns as i64;
        }
        if self.deadline_ns < now_ns {
            self.setup_new(p, now_ns);
        }
        self.yielded = false;
        self.throttled = false;
    }

    /// `update_curr_dl`'s charge: `delta_ns` of running at `freq_scale` and on a CPU of
    /// `cpu_scale` (both out of 1024, `dl_scaled_delta_exec`); true if the server is now out of
    /// runtime or yielded (`dl_runtime_exceeded`).
    pub fn charge(&mut self, delta_ns: u64, freq_scale: u64, cpu_scale: u64) -> bool {
        let scaled = cap_scale(cap_scale(delta_ns, freq_scale), cpu_scale);
        self.runtime_ns -= scaled as i64;
        self.runtime_ns <= 0 || self.yielded
    }

    /// `task_non_contending`'s 0-lag time: when the bandwidth of a task blocking now may leave its
    /// run queue (`deadline - runtime · period / runtime_max`); `None`: at once.
    pub fn zero_lag_ns(&self, p: &DlParams, now_ns: u64) -> Option<u64> {
        let lag_ns = i128::from(self.runtime_ns) * i128::from(p.period_ns) / i128::from(p.runtime_ns.max(1));
        let zero_lag_ns = i128::from(self.deadline_ns) - lag_ns;
        (zero_lag_ns > i128::from(now_ns)).then_some(zero_lag_ns as u64)
    }
}

/// A CPU's DL tasks: the one running (its deadline) and the ones waiting, by deadline.
#[derive(Debug, Clone, Default)]
pub struct DlQueue {
    /// Waiting (runnable, not throttled), earliest deadline first: (deadline, task).
    waiting: BTreeSet<(u64, usize)>,
    /// The deadline of the DL task running here, if one is.
    pub running: Option<u64>,
    /// The bandwidth of the DL tasks active here (`running_bw`), << BW_SHIFT.
    pub running_bw: u64,
}

impl DlQueue {
    pub fn insert(&mut self, task: usize, deadline_ns: u64) {
        self.waiting.insert((deadline_ns, task));
    }
    /// Removes a waiting task; false if it was not waiting here.
    pub fn remove(&mut self, task: usize, deadline_ns: u64) -> bool {
        self.waiting.remove(&(deadline_ns, task))
    }
    pub fn contains(&self, task: usize, deadline_ns: u64) -> bool {
        self.waiting.contains(&(deadline_ns, task))
    }
    /// The task to run next (`pick_next_dl_entity`).
    pub fn first(&self) -> Option<usize> {
        self.waiting.first().map(|&(_, t)| t)
    }
    /// The earliest deadline waiting.
    pub fn first_deadline(&self) -> Option<u64> {
        self.waiting.first().map(|&(d, _)| d)
    }
    /// The waiting tasks, earliest deadline first.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.waiting.iter().map(|&(_, t)| t)
    }
    pub fn len(&self) -> usize {
        self.waiting.len()
    }
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
    /// DL tasks runnable here (`dl_nr_running`).
    pub fn nr_running(&self) -> usize {
        self.waiting.len() + self.running.is_some() as usize
    }
    /// The earliest deadline running or waiting here (`earliest_dl.curr`), if any.
    pub fn earliest(&self) -> Option<u64> {
        match (self.running, self.first_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// `cpu_util_dl`: the DL running time's utilisation of `rq` at `now_ns`, decayed since its last
/// update when no DL task runs there.
pub fn util_now(rq: &RunQueue, now_ns: u64) -> u64 {
    if rq.dl.running.is_some() {
        return rq.avg_dl.util_avg;
    }
    let mut avg = rq.avg_dl;
    avg.update(now_ns, super::pelt::State::IDLE);
    avg.util_avg
}

/// `cpu_bw_dl`: the active DL bandwidth of `rq` in capacity units.
pub fn bw_util(rq: &RunQueue) -> u64 {
    ((u128::from(rq.dl.running_bw) * 1024) >> BW_SHIFT) as u64
}

fn params(view: &SchedView, thread: usize) -> DlParams {
    view.tasks[thread].class.dl().expect("a SCHED_DEADLINE task")
}

/// `dl_task_fits_capacity` (5.9+, asymmetric capacities): `cpu` scales the task's relative
/// deadline to at least its runtime; always without `fitness`.
fn fits(view: &SchedView, thread: usize, cpu: usize, fitness: bool) -> bool {
    let p = params(view, thread);
    !fitness || cap_scale(p.deadline_ns, u64::from(view.capacity[cpu])) >= p.runtime_ns
}

/// `cpudl_find`: the CPUs `thread` would run first on. Allowed online CPUs without DL work
/// (with `fitness`, those that fit; if none fits, the biggest of them, its own CPU on ties);
/// else the CPU whose earliest deadline is the latest in the root domain (lowest number on
/// ties), if allowed and later than the task's.
pub fn later_cpus(view: &SchedView, thread: usize, fitness: bool) -> CpuMask {
    let task = &view.tasks[thread];
    let online = |c: usize| view.rqs[c].online;
    let mut free = task.allowed;
    free.retain(|c| online(c) && view.rqs[c].dl.nr_running() == 0);
    if !free.is_empty() {
        if !fitness {
            return free;
        }
        let mut fitting = free;
        fitting.retain(|c| fits(view, thread, c, true));
        if !fitting.is_empty() {
            return fitting;
        }
        let biggest =
            free.iter().max_by_key(|&c| (view.capacity[c], c == task.cpu, std::cmp::Reverse(c))).expect("not empty");
        return CpuMask::of([biggest]);
    }
    let latest = (0..view.ncpus())
        .filter(|&c| online(c))
        .filter_map(|c| view.rqs[c].dl.earliest().map(|d| (d, std::cmp::Reverse(c))))
        .max();
    match latest {
        Some((d, std::cmp::Reverse(c))) if task.allowed.contains(c) && view.tasks[thread].dl.deadline_ns < d => {
            CpuMask::of([c])
        }
        _ => CpuMask::EMPTY,
    }
}

/// `find_later_rq`: of [`later_cpus`], the task's own CPU, else the waker's (`view.this_cpu`)
/// or the first one within the task's cluster (its MC domain), then the waker's or the first
/// anywhere; `None` if there is none.
pub fn find_later_cpu(view: &SchedView, thread: usize, fitness: bool) -> Option<usize> {
    let task = &view.tasks[thread];
    if task.allowed.count() < 2 {
        return None;
    }
    let mask = later_cpus(view, thread, fitness);
    if mask.contains(task.cpu) {
        return Some(task.cpu);
    }
    let this = view.this_cpu;
    let cluster = view.cluster_of[task.cpu];
    if mask.contains(this) && view.cluster_of[this] == cluster {
        return Some(this);
    }
    if let Some(first) = mask.iter().find(|&c| view.cluster_of[c] == cluster) {
        return Some(first);
    }
    if mask.contains(this) {
        return Some(this);
    }
    mask.first()
}

/// `select_task_rq_dl` for a waking `thread`: it stays on its CPU unless a DL task runs there
/// that it would not preempt (or that cannot move), or (with `fitness`) the CPU does not fit it;
/// then a later CPU if its deadline is earlier than all there or it has no DL work.
pub fn select_cpu(view: &SchedView, thread: usize, fitness: bool) -> usize {
    let task = &view.tasks[thread];
    let cpu = task.cpu;
    let rq = &view.rqs[cpu];
    let curr_dl = rq.curr.filter(|&c| view.tasks[c].class.dl().is_some());
    let blocked = curr_dl
        .is_some_and(|c| view.tasks[c].allowed.count() < 2 || task.dl.deadline_ns >= view.tasks[c].dl.deadline_ns)
        && task.allowed.count() > 1;
    if !blocked && fits(view, thread, cpu, fitness) {
        return cpu;
    }
    match find_later_cpu(view, thread, fitness) {
        Some(target) if view.rqs[target].dl.earliest().is_none_or(|d| task.dl.deadline_ns < d) => target,
        _ => cpu,
    }
}

/// `check_preempt_equal_dl`: `thread`, waking on `cpu` with the same deadline as the DL task
/// running there, makes the kernel reschedule that CPU when the running task may move and has a
/// CPU to go to (`cpudl_find`) while the waking one may not move or has none. The running task
/// is picked again (it was queued first: equal deadlines go right in the rb-tree,
/// `__enqueue_dl_entity`), its runtime is accounted, and the pass of its `set_next_task_dl`
/// pushes what waits; otherwise the waking task alone may be pushed (`task_woken_dl`).
pub fn equal_deadline_resched(view: &SchedView, cpu: usize, thread: usize, fitness: bool) -> bool {
    let Some(curr) = view.rqs[cpu].curr else { return false };
    let movable = |t: usize| view.tasks[t].allowed.count() > 1;
    if !movable(curr) || later_cpus(view, curr, fitness).is_empty() {
        return false;
    }
    !movable(thread) || later_cpus(view, thread, fitness).is_empty()
}

/// `find_lock_later_rq` for waiting `thread`: a CPU where it would run first now, other than its
/// own.
pub fn push_target(view: &SchedView, thread: usize, fitness: bool) -> Option<usize> {
    let task = &view.tasks[thread];
    let target = find_later_cpu(view, thread, fitness)?;
    (target != task.cpu && view.rqs[target].dl.earliest().is_none_or(|d| task.dl.deadline_ns < d)).then_some(target)
}

/// `pull_dl_task` for `cpu`: from each other overloaded CPU in turn (two DL tasks or more), its
/// earliest waiting task that may run on `cpu`, if earlier than every one pulled so far and than
/// `cpu`'s own, and not earlier than the task running there (it would run there next). In the
/// order the kernel pulls them: the last one is the earliest.
pub fn pull_candidates(view: &SchedView, cpu: usize) -> Vec<usize> {
    let mut pulled = Vec::new();
    let mut dmin = view.rqs[cpu].dl.earliest().unwrap_or(u64::MAX);
    for (src, rq) in view.rqs.iter().enumerate() {
        if src == cpu || !rq.online || rq.dl.nr_running() < 2 {
            continue;
        }
        let Some(t) = rq.dl.iter().find(|&t| view.tasks[t].allowed.contains(cpu)) else { continue };
        let d = view.tasks[t].dl.deadline_ns;
        if d < dmin && rq.dl.running.is_some_and(|running| d >= running) {
            pulled.push(t);
            dmin = d;
        }
    }
    pulled
}

/// `sched_dl_overflow` at each DL thread's `sched_setattr`: the bandwidths `bws` (<< BW_SHIFT)
/// against `bw_max` (the RT sysctls' ratio; `None`: unlimited, `sched_rt_runtime_us` = -1) of a
/// root domain of capacity `capacity` (1024 per CPU on symmetric systems); the index of the
/// first refused, and the total it would have made.
pub fn admit(bws: &[u64], bw_max: Option<u64>, capacity: u64) -> Result<(), (usize, u64)> {
    let Some(bw_max) = bw_max else { return Ok(()) };
    let limit = cap_scale(bw_max, capacity);
    let mut total = 0u64;
    for (i, &bw) in bws.iter().enumerate() {
        if total + bw > limit {
            return Err((i, total + bw));
        }
        total += bw;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testutil::Fixture;
    use super::*;
    use crate::workload::SchedClass;

    const MS: u64 = 1_000_000;

    fn params(runtime_ms: u64, deadline_ms: u64, period_ms: u64) -> DlParams {
        DlParams { runtime_ns: runtime_ms * MS, deadline_ns: deadline_ms * MS, period_ns: period_ms * MS }
    }

    #[test]
    fn the_server_is_charged_scaled_throttled_and_replenished_a_period_at_a_time() {
        let p = params(3, 10, 10);
        let mut se = DlEntity::default();
        se.setup_new(&p, 0);
        assert_eq!((se.runtime_ns, se.deadline_ns), (3 * MS as i64, 10 * MS));
        // 2 ms at half the frequency on a 1024 CPU: 1 ms of runtime
        assert!(!se.charge(2 * MS, 512, 1024));
        assert_eq!(se.runtime_ns, 2 * MS as i64);
        // 5 ms at full speed (a 5 ms tick): 3 ms overrun
        assert!(se.charge(5 * MS, 1024, 1024));
        assert_eq!(se.runtime_ns, -3 * MS as i64);
        assert_eq!(se.next_period_ns(&p), 10 * MS);
        // the overrun is paid back: two periods on, 3 ms left
        se.replenish(&p, 10 * MS);
        assert_eq!((se.runtime_ns, se.deadline_ns), (3 * MS as i64, 30 * MS));
        // a constrained task (deadline 5 of period 10) replenishes at the period, not the deadline
        let c = params(2, 5, 10);
        se.setup_new(&c, 0);
        assert_eq!(se.next_period_ns(&c), 10 * MS);
        // yielding gives up the rest
        se.yielded = true;
        se.replenish(&c, 10 * MS);
        // (the next period starts at 10 ms: its deadline 5 ms later)
        assert_eq!((se.runtime_ns, se.deadline_ns, se.yielded), (2 * MS as i64, 15 * MS, false));
    }

    #[test]
    fn the_cbs_wakeup_rule_keeps_what_fits_the_bandwidth() {
        let p = params(3, 10, 10);
        let mut se = DlEntity::default();
        se.setup_new(&p, 0);
        // at 4 ms with 1 ms left to a deadline 6 ms away: 1/6 < 3/10, kept
        se.runtime_ns = MS as i64;
        se.wake_up(&p, 4 * MS);
        assert_eq!((se.runtime_ns, se.deadline_ns), (MS as i64, 10 * MS));
        // at 8 ms with 1 ms left to a deadline 2 ms away: 1/2 > 3/10, a new period from now
        se.wake_up(&p, 8 * MS);
        assert_eq!((se.runtime_ns, se.deadline_ns), (3 * MS as i64, 18 * MS));
        // a deadline passed: new period
        se.wake_up(&p, 20 * MS);
        assert_eq!(se.deadline_ns, 30 * MS);
        // constrained (2 of deadline 5, period 10): the revised rule cuts the runtime to the
        // density 2/5 of the 1 ms left
        let c = params(2, 5, 10);
        se.setup_new(&c, 0);
        se.wake_up(&c, 4 * MS);
        assert_eq!(se.deadline_ns, 5 * MS);
        assert!((se.runtime_ns - 400_000).abs() <= 1, "{}", se.runtime_ns);
        // the 0-lag time of a task blocking with 1 ms of 3 left, 6 ms before its deadline:
        // 10 - 1·10/3 = 6.67 ms; with nothing left, at once
        se.setup_new(&p, 0);
        se.runtime_ns = MS as i64;
        assert_eq!(se.zero_lag_ns(&p, 4 * MS), Some(10 * MS - 10 * MS / 3));
        se.runtime_ns = 0;
        assert_eq!(se.zero_lag_ns(&p, 10 * MS), None);
    }

    #[test]
    fn admission_sums_bandwidths_against_95_percent_of_the_capacity() {
        let bw = |runtime_ms, period_ms| to_ratio(period_ms * MS, runtime_ms * MS);
        let bw_max = Some(to_ratio(1_000_000_000, 950_000_000));
        // two CPUs: 1.9 of bandwidth; 0.6 + 0.6 + 0.6 fits, a fourth 0.2 does not
        let tasks = [bw(6, 10), bw(6, 10), bw(6, 10), bw(2, 10)];
        assert_eq!(admit(&tasks[..3], bw_max, 2048), Ok(()));
        assert_eq!(admit(&tasks, bw_max, 2048).unwrap_err().0, 3);
        // 5.10 on big.LITTLE counts capacities: 4 x 1024 + 4 x 377 holds 3.2... x 0.95
        assert!(admit(&[bw(10, 10); 5], bw_max, 4 * 1024 + 4 * 377).is_ok());
        assert!(admit(&[bw(10, 10); 6], bw_max, 4 * 1024 + 4 * 377).is_err());
        assert_eq!(admit(&[bw(10, 10); 9], None, 1024), Ok(()));
    }

    fn dl_fixture(ncpus: usize, deadlines_ms: &[u64]) -> Fixture {
        let all: Vec<usize> = (0..ncpus).collect();
        let allowed: Vec<&[usize]> = deadlines_ms.iter().map(|_| all.as_slice()).collect();
        let mut f = Fixture::new(ncpus, &allowed);
        for (t, &d) in deadlines_ms.iter().enumerate() {
            f.tasks[t].class = SchedClass::Deadline(params(1, 100, 100));
            f.tasks[t].dl.deadline_ns = d * MS;
        }
        f
    }

    #[test]
    fn global_edf_places_on_free_cpus_then_the_latest_deadline() {
        // 2 CPUs: CPU 0 runs deadline 30, CPU 1 runs deadline 50; tasks waking with 20 and 60
        let mut f = dl_fixture(2, &[30, 50, 20, 60]);
        f.rqs[0].curr = Some(0);
        f.rqs[0].dl.running = Some(30 * MS);
        f.rqs[1].curr = Some(1);
        f.rqs[1].dl.running = Some(50 * MS);
        f.tasks[1].cpu = 1;
        // deadline 20 on CPU 0 preempts there: stays
        assert_eq!(select_cpu(&f.view(), 2, false), 0);
        // deadline 60 cannot preempt either: stays (and waits)
        assert_eq!(select_cpu(&f.view(), 3, false), 0);
        // CPU 1 running 50 is the latest: a task of 40 waking on CPU 0 goes there
        f.tasks[2].dl.deadline_ns = 40 * MS;
        assert_eq!(select_cpu(&f.view(), 2, false), 1);
        assert_eq!(later_cpus(&f.view(), 2, false), CpuMask::of([1]));
        // a CPU without DL work is free, whatever else runs there
        f.rqs[1].dl.running = None;
        assert_eq!(later_cpus(&f.view(), 3, false), CpuMask::of([1]));
        assert_eq!(push_target(&f.view(), 3, false), Some(1));
        // pull: CPU 1 idle, CPU 0 runs 30 with 40 and 60 waiting: 40 is pulled
        f.rqs[0].dl.insert(3, 60 * MS);
        f.rqs[0].dl.insert(2, 40 * MS);
        assert_eq!(pull_candidates(&f.view(), 1), vec![2]);
        // not a task earlier than the one running there (it runs there next)
        f.rqs[0].dl.running = Some(45 * MS);
        assert_eq!(pull_candidates(&f.view(), 1), Vec::<usize>::new());
    }

    #[test]
    fn an_equal_deadline_reschedules_only_when_the_running_task_can_leave_and_the_waking_cannot() {
        // CPU 0 runs task 0 (deadline 30), CPU 1 task 1 (50); task 2 wakes on CPU 0 with 30
        let mut f = dl_fixture(2, &[30, 50, 30]);
        f.rqs[0].curr = Some(0);
        f.rqs[0].dl.running = Some(30 * MS);
        f.rqs[1].curr = Some(1);
        f.rqs[1].dl.running = Some(50 * MS);
        f.tasks[1].cpu = 1;
        f.rqs[0].dl.insert(2, 30 * MS);
        // both could go to CPU 1 (latest deadline 50): the waking one is left to be pushed
        assert!(!equal_deadline_resched(&f.view(), 0, 2, false));
        // pinned to CPU 0, it cannot: the running one, which can, is rescheduled
        f.tasks[2].allowed = CpuMask::of([0]);
        assert!(equal_deadline_resched(&f.view(), 0, 2, false));
        // the running one pinned: useless to reschedule
        f.tasks[0].allowed = CpuMask::of([0]);
        assert!(!equal_deadline_resched(&f.view(), 0, 2, false));
        // CPU 1 at 20: no CPU would run the running task first (30 is the latest): no resched
        f.tasks[0].allowed = CpuMask::of([0, 1]);
        f.rqs[1].dl.running = Some(20 * MS);
        assert!(!equal_deadline_resched(&f.view(), 0, 2, false));
    }

    #[test]
    fn with_asymmetric_capacities_a_free_cpu_must_fit() {
        // runtime 1 of deadline 100: fits anywhere; 60 of 100 needs capacity 615
        let mut f = dl_fixture(2, &[100]);
        f.capacity = vec![430, 1024];
        assert_eq!(later_cpus(&f.view(), 0, true), CpuMask::of([0, 1]));
        f.tasks[0].class = SchedClass::Deadline(params(60, 100, 100));
        assert_eq!(later_cpus(&f.view(), 0, true), CpuMask::of([1]));
        assert_eq!(select_cpu(&f.view(), 0, true), 1);
        assert_eq!(select_cpu(&f.view(), 0, false), 0);
        // none fits: the biggest free one
        f.capacity = vec![430, 500];
        assert_eq!(later_cpus(&f.view(), 0, true), CpuMask::of([1]));
    }
}
