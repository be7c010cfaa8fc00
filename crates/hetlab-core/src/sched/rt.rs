//! The real-time class, SCHED_FIFO and SCHED_RR (kernel/sched/rt.c and cpupri.c; the rules
//! are the same in the 3.10 and 5.10 kernels hetlab models but where a rule names its kernel):
//!
//! - It sits above CFS: an RT task runs before any CFS task and preempts one at once
//!   (`check_preempt_curr`); among RT tasks the higher `sched_priority` (1..99) preempts at
//!   once (`check_preempt_curr_rt`), and equal priorities do not preempt each other.
//! - Each CPU queues its RT tasks by priority, first come first served within one (the
//!   `rt_prio_array` lists): a woken or moved task joins the tail of its priority's list, a
//!   preempted one keeps its place at the head ([`RtQueue`]).
//! - SCHED_RR: after `sched_rr_timeslice` (100 ms, counted in ticks) the running task goes to
//!   the tail of its list if another of its priority waits there (`task_tick_rt`); SCHED_FIFO
//!   runs until it blocks or yields.
//! - Placement ([`select_cpu`], `select_task_rq_rt`): a waking RT task stays on its CPU unless
//!   an RT task of higher or equal priority runs there; then it goes to a CPU whose highest RT
//!   priority is the lowest (`cpupri`: CPUs with no RT task first, idle or running CFS alike)
//!   if it would run first there, preferring its own CPU, then the waker's, then the first of
//!   its cluster (`find_lowest_rq`'s walk up the domains).
//! - Push and pull keep the highest-priority tasks running: a task left waiting is pushed to
//!   such a CPU ([`push_target`]), and a CPU whose RT task blocks pulls the best waiting RT task
//!   that may run on it from the others ([`pull_candidate`]).
//! - 5.10 on an asymmetric system (`sched_asym_cpucapacity`): a CPU fits an RT task when its
//!   capacity reaches the task's effective `util_min` (`sched::uclamp`), which is 1024 for an
//!   RT task without one of its own (`sysctl_sched_uclamp_util_min_rt_default`, Linux 5.9+;
//!   in 5.10 a task group's util_min replaces it, `uclamp_tg_restrict`): RT tasks go to the biggest
//!   CPUs while those have room (`rt_task_fits_capacity`, `cpupri_find_fitness`).
//! - Throttling ([`Bandwidth`]): a CPU's RT tasks may run `sched_rt_runtime_us` (950 ms) of each
//!   `sched_rt_period_us` (1 s); past that, checked at its ticks, the CPU's RT queue stops
//!   (CFS runs) until the period timer gives the runtime back. With RT_RUNTIME_SHARE (on in
//!   3.10, off since 5.10) a CPU first borrows spare runtime from the others
//!   ([`borrow_runtime`]), so a lone RT hog is never throttled there.
//! - Utilisation (5.10): a run queue tracks its RT time with PELT (`avg_rt`, [`util_now`]);
//!   schedutil adds it to CFS's, and CFS may use only the rest of the CPU ([`capacity_of`],
//!   `scale_rt_capacity`), which EAS's fit and energy estimates read.
//!
//! The class's sysctls (`/proc/sys/kernel/sched_rt_period_us`, `sched_rt_runtime_us`,
//! `sched_rr_timeslice_ms`) are tunables of every placement policy ([`tunables`]).
//!
//! SCHED_DEADLINE (`sched::deadline`) runs above: an RT task never preempts a DL one, and cpupri
//! does not see DL tasks (as in the kernel, a CPU running one is at the level of its RT work).
//! A DL task's run time counts against its CPU's RT runtime too (`update_curr_dl`, while
//! `sched_rt_bandwidth_account` allows: [`RtQueue::accounts_dl_time`]), so RT and DL together
//! stay within `sched_rt_runtime_us` a period; the period timer stops once a period leaves a
//! CPU neither RT time nor RT tasks (`do_sched_rt_period_timer`'s `idle`, [`RtQueue::pay_back`]).
//! Not modelled: group scheduling, IRQ time's share of the capacity.

use super::{SchedEntity, SchedView};
use crate::governor::tunables::{TunableDefault, TunableInfo};
pub use crate::workload::SchedClass;
use std::collections::BTreeSet;

/// `sched_rr_timeslice`: RR_TIMESLICE = 100 ms in jiffies (include/linux/sched/rt.h).
const RR_TIMESLICE_MS: f64 = 100.0;
/// `sysctl_sched_rt_period` and `sysctl_sched_rt_runtime` (kernel/sched/core.c): 1 s, 950 ms.
const RT_PERIOD_US: f64 = 1_000_000.0;
const RT_RUNTIME_US: f64 = 950_000.0;

/// The RT class's sysctls, which every placement policy accepts as tunables.
pub fn tunables() -> Vec<TunableInfo> {
    let sysctl = |name, default, unit, help, min| TunableInfo {
        name,
        default: TunableDefault::Value(default),
        unit,
        help,
        min,
        max: f64::from(i32::MAX),
    };
    vec![
        sysctl("sched_rt_period_us", RT_PERIOD_US, "µs", "RT throttling's period (Linux: 1 s)", 1.0),
        sysctl(
            "sched_rt_runtime_us",
            RT_RUNTIME_US,
            "µs",
            "RT time each CPU may use per period (Linux: 950 ms); the period or more never throttles (the \
             kernel's -1)",
            0.0,
        ),
        sysctl(
            "sched_rr_timeslice_ms",
            RR_TIMESLICE_MS,
            "ms",
            "a SCHED_RR task's turn, in whole ticks (Linux: 100 ms)",
            1.0,
        ),
    ]
}

/// The value of sysctl `name` among `given` (checked against [`tunables`]), else its default.
fn sysctl(given: &[(String, f64)], name: &str, default: f64) -> f64 {
    given.iter().find(|(n, _)| n == name).map_or(default, |&(_, v)| v)
}

/// A SCHED_RR turn in ticks at `hz` (`msecs_to_jiffies(sched_rr_timeslice_ms)`, at least one).
pub fn rr_slice_ticks(hz: u32, given: &[(String, f64)]) -> u64 {
    let ms = sysctl(given, "sched_rr_timeslice_ms", RR_TIMESLICE_MS);
    ((ms * f64::from(hz) / 1000.0).ceil() as u64).max(1)
}

/// RT throttling's bandwidth (`def_rt_bandwidth`, per CPU).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bandwidth {
    /// `sysctl_sched_rt_period`: 1 s (kernel/sched/core.c).
    pub period_us: f64,
    /// `sysctl_sched_rt_runtime`: 950 ms (kernel/sched/core.c).
    pub runtime_us: f64,
    /// RT_RUNTIME_SHARE (kernel/sched/features.h): true in 3.10; false since "sched/rt: Disable
    /// RT_RUNTIME_SHARE by default" (Linux 5.10).
    pub share: bool,
}

impl Bandwidth {
    /// `rt_bandwidth_enabled()` with a finite runtime: throttling is enforced. A runtime of the
    /// whole period stands for the kernel's -1 (RUNTIME_INF), which turns it off.
    pub fn enforced(&self) -> bool {
        self.runtime_us < self.period_us
    }

    /// The bandwidth the sysctls among `given` set (else Linux's defaults); RT_RUNTIME_SHARE as
    /// `share`. The runtime may not exceed the period (`sched_rt_global_validate`).
    pub fn from_sysctls(given: &[(String, f64)], share: bool) -> Result<Bandwidth, String> {
        let period_us = sysctl(given, "sched_rt_period_us", RT_PERIOD_US);
        let runtime_us = sysctl(given, "sched_rt_runtime_us", RT_RUNTIME_US);
        if runtime_us > period_us && given.iter().any(|(n, _)| n == "sched_rt_runtime_us") {
            // above the period means "never throttle": the kernel writes it as -1
            return Ok(Bandwidth { period_us, runtime_us: period_us, share });
        }
        if runtime_us > period_us {
            return Err(format!(
                "sched_rt_runtime_us {runtime_us} exceeds sched_rt_period_us {period_us}; give a runtime up to the \
                 period (the period itself never throttles)"
            ));
        }
        Ok(Bandwidth { period_us, runtime_us, share })
    }
}

/// A CPU's RT tasks: the one running and the ones waiting, and its RT bandwidth.
#[derive(Debug, Clone, Default)]
pub struct RtQueue {
    /// Waiting, highest priority first, then by arrival: (`99 - sched_priority`, arrival, task).
    waiting: BTreeSet<(u8, u64, usize)>,
    /// The priority of the RT task running here, if one is.
    pub running: Option<u8>,
    /// Its tasks may not run until the period timer gives runtime back (`rt_throttled`).
    pub throttled: bool,
    /// RT run time in this period, µs, accounted up to `accounted_us` (`rt_time`).
    pub time_us: f64,
    pub accounted_us: f64,
    /// The runtime it may use per period, µs, borrowed runtime included (`rt_runtime`).
    pub runtime_us: f64,
}

impl RtQueue {
    fn key(priority: u8, arrival: u64, task: usize) -> (u8, u64, usize) {
        (SchedClass::MAX_RT_PRIORITY - priority, arrival, task)
    }
    /// `task`, of `priority`, waits here; `arrival` orders it within its priority (a new number
    /// puts it at the tail, its old one keeps its place).
    pub fn insert(&mut self, task: usize, priority: u8, arrival: u64) {
        self.waiting.insert(Self::key(priority, arrival, task));
    }
    /// Removes a waiting task; false if it was not waiting here.
    pub fn remove(&mut self, task: usize, priority: u8, arrival: u64) -> bool {
        self.waiting.remove(&Self::key(priority, arrival, task))
    }
    /// `task`, of `priority`, waits here with `arrival`.
    pub fn contains(&self, task: usize, priority: u8, arrival: u64) -> bool {
        self.waiting.contains(&Self::key(priority, arrival, task))
    }
    /// The task to run next (`pick_next_rt_entity`).
    pub fn first(&self) -> Option<usize> {
        self.waiting.first().map(|&(_, _, t)| t)
    }
    /// The highest priority waiting.
    pub fn highest_waiting(&self) -> Option<u8> {
        self.waiting.first().map(|&(p, _, _)| SchedClass::MAX_RT_PRIORITY - p)
    }
    /// The waiting tasks, in the order they would run.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.waiting.iter().map(|&(_, _, t)| t)
    }
    pub fn len(&self) -> usize {
        self.waiting.len()
    }
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
    /// Some RT task may run here now (`rt_rq_is_runnable`: not while throttled).
    pub fn is_runnable(&self) -> bool {
        !self.throttled && (self.running.is_some() || !self.waiting.is_empty())
    }
    /// The CPU's `cpupri` level: the highest RT priority running or waiting here, 0 with none.
    pub fn level(&self) -> u8 {
        self.running.unwrap_or(0).max(self.highest_waiting().unwrap_or(0))
    }

    /// `sched_rt_bandwidth_account`: whether run time of a class above RT (SCHED_DEADLINE's,
    /// `update_curr_dl`) counts against this queue's runtime now: while the period timer runs
    /// (it will pay it back), else only up to the runtime (beyond it the RT tasks would be
    /// throttled at once for time nobody pays back).
    pub fn accounts_dl_time(&self, period_timer_active: bool) -> bool {
        period_timer_active || self.time_us < self.runtime_us
    }

    /// The period timer's work on this queue at its expiry (`do_sched_rt_period_timer`, one
    /// period elapsed): the RT time is paid back by the runtime; true if the timer must go on
    /// (RT time left or RT tasks here).
    pub fn pay_back(&mut self) -> bool {
        self.time_us -= self.time_us.min(self.runtime_us);
        self.time_us > 0.0 || self.running.is_some() || !self.is_empty()
    }
}

/// `cpu_util_rt`: the RT utilisation of `rq` at `now_ns`, decayed since its last update when no
/// RT task runs there.
pub fn util_now(rq: &super::cfs::RunQueue, now_ns: u64) -> u64 {
    if rq.rt.running.is_some() {
        return rq.avg_rt.util_avg;
    }
    let mut avg = rq.avg_rt;
    avg.update(now_ns, super::pelt::State::IDLE);
    avg.util_avg
}

/// `capacity_of` (`scale_rt_capacity`, 5.10): what CFS may use of `cpu`, its capacity less its
/// RT and DL utilisation, at least 1; on Linux 6.12 runs the capacity less its pressure first
/// (`SchedView::pressure`, zero elsewhere).
pub fn capacity_of(view: &SchedView, cpu: usize) -> u64 {
    let rq = &view.rqs[cpu];
    let used = util_now(rq, view.now_ns()) + super::deadline::util_now(rq, view.now_ns());
    // 6.12's scale_rt_capacity starts from get_actual_cpu_capacity (capacity less pressure)
    u64::from(view.capacity[cpu] - view.pressure[cpu]).saturating_sub(used).max(1)
}

/// `cpufreq_update_pressure` (drivers/cpufreq/cpufreq.c, 6.10+): the capacity a CPU of
/// `capacity` loses while its policy's clock is capped at `capped_khz` of `max_khz`
/// (`capacity - mult_frac(capacity, capped, max)`; none at or above the top).
pub fn cpufreq_pressure(capacity: u32, capped_khz: u32, max_khz: u32) -> u32 {
    if capped_khz >= max_khz {
        return 0;
    }
    let capacity = u64::from(capacity);
    (capacity - capacity * u64::from(capped_khz) / u64::from(max_khz.max(1))) as u32
}

/// `task`'s RT priority; it must be an RT task.
fn priority(task: &SchedEntity) -> u8 {
    task.class.rt_priority().expect("an RT task")
}

/// `rt_task_fits_capacity`: `cpu` is big enough for `task` (always, without `fitness`): its
/// capacity reaches the task's effective util_min, capped by its util_max (`uclamp_eff_value`;
/// the util_min is `sched::uclamp::UTIL_MIN_RT_DEFAULT` for an RT task that asked none).
fn fits(view: &SchedView, task: &SchedEntity, cpu: usize, fitness: bool) -> bool {
    !fitness || view.capacity[cpu] >= task.uclamp.min.min(task.uclamp.max)
}

/// `find_lowest_rq`: a CPU `thread` may run on whose `cpupri` level is the lowest and below the
/// thread's priority (fitting ones first, with `fitness`), preferring the thread's own CPU,
/// then `view.this_cpu` within the thread's cluster, the first of that cluster, then
/// `view.this_cpu` anywhere, then the first anywhere; `None` if every allowed CPU runs RT work
/// of its priority or higher.
pub fn find_lowest_cpu(view: &SchedView, thread: usize, fitness: bool) -> Option<usize> {
    let task = &view.tasks[thread];
    let prio = priority(task);
    let candidates = |fit_only: bool| {
        let mut best: Option<(u8, super::CpuMask)> = None;
        for cpu in task.allowed.iter().filter(|&c| view.rqs[c].online) {
            if fit_only && !fits(view, task, cpu, fitness) {
                continue;
            }
            let level = view.rqs[cpu].rt.level();
            if level >= prio {
                continue;
            }
            best = match best {
                Some((l, mask)) if l == level => Some((l, mask.with(cpu))),
                Some((l, _)) if l < level => best,
                _ => Some((level, super::CpuMask::EMPTY.with(cpu))),
            };
        }
        best.map(|(_, mask)| mask)
    };
    // cpupri_find_fitness: without a fitting CPU, any of the lowest level
    let lowest = candidates(true).or_else(|| if fitness { candidates(false) } else { None })?;
    if lowest.contains(task.cpu) {
        return Some(task.cpu);
    }
    let this = view.this_cpu;
    let cluster = view.cluster_of[task.cpu];
    let in_cluster = lowest.iter().filter(|&c| view.cluster_of[c] == cluster);
    if lowest.contains(this) && view.cluster_of[this] == cluster {
        return Some(this);
    }
    if let Some(first) = in_cluster.into_iter().next() {
        return Some(first);
    }
    if lowest.contains(this) {
        return Some(this);
    }
    lowest.first()
}

/// `select_task_rq_rt`: the CPU for RT `thread`, woken or forked from `view.this_cpu`.
pub fn select_cpu(view: &SchedView, thread: usize, fitness: bool) -> usize {
    let task = &view.tasks[thread];
    let cpu = task.cpu;
    let rq = &view.rqs[cpu];
    // an RT task runs there that it cannot preempt (or that cannot move), or a DL task
    // (`rt_task(curr)` holds for it and its prio is the lowest number)
    let blocked = rq.curr.is_some_and(|c| {
        view.tasks[c].is_dl()
            || view.tasks[c]
                .class
                .rt_priority()
                .is_some_and(|p| p >= priority(task) || view.tasks[c].allowed.count() < 2)
    });
    let fits_here = fits(view, task, cpu, fitness);
    if !blocked && fits_here {
        return cpu;
    }
    let Some(target) = find_lowest_cpu(view, thread, fitness) else { return cpu };
    if !blocked && !fits(view, task, target, fitness) {
        return cpu;
    }
    if priority(task) > view.rqs[target].rt.level() {
        target
    } else {
        cpu
    }
}

/// `push_rt_task`: where waiting RT `thread` should go to run now (a CPU where it would run
/// first), if anywhere; a task pinned to one CPU stays.
pub fn push_target(view: &SchedView, thread: usize, fitness: bool) -> Option<usize> {
    let task = &view.tasks[thread];
    if task.allowed.count() < 2 {
        return None;
    }
    let target = find_lowest_cpu(view, thread, fitness)?;
    (target != task.cpu && priority(task) > view.rqs[target].rt.level()).then_some(target)
}

/// `pull_rt_task`: the waiting RT task on another CPU that `cpu` should take: the highest
/// priority that may run on `cpu` and is above `cpu`'s own RT level, and that would not run
/// first where it waits anyway; ties to the lower CPU.
pub fn pull_candidate(view: &SchedView, cpu: usize) -> Option<usize> {
    let level = view.rqs[cpu].rt.level();
    let mut best: Option<(u8, usize)> = None;
    for (src, rq) in view.rqs.iter().enumerate() {
        if src == cpu || !rq.online {
            continue;
        }
        let running = rq.rt.running.unwrap_or(0);
        let Some(t) = rq.rt.iter().find(|&t| view.tasks[t].allowed.contains(cpu)) else { continue };
        let p = priority(&view.tasks[t]);
        // not while a DL task runs there
        let runs_there_next = !rq.rt.throttled && p > running && rq.dl.running.is_none();
        if p > level && !runs_there_next && best.is_none_or(|(b, _)| p > b) {
            best = Some((p, t));
        }
    }
    best.map(|(_, t)| t)
}

/// `do_balance_runtime`: `cpu`'s RT queue, over its runtime, takes from each other online CPU a
/// 1/n share (n: the online CPUs) of that CPU's spare runtime, up to a whole period; true if it
/// got any. The runtime stays borrowed (3.10 gives it back only at hotplug).
pub fn borrow_runtime(rqs: &mut [super::cfs::RunQueue], cpu: usize, period_us: f64) -> bool {
    let n = rqs.iter().filter(|rq| rq.online).count() as f64;
    let mut more = false;
    for other in 0..rqs.len() {
        if other == cpu || !rqs[other].online {
            continue;
        }
        let spare = rqs[other].rt.runtime_us - rqs[other].rt.time_us;
        if spare <= 0.0 {
            continue;
        }
        let take = (spare / n).min(period_us - rqs[cpu].rt.runtime_us);
        rqs[other].rt.runtime_us -= take;
        rqs[cpu].rt.runtime_us += take;
        more = true;
        if rqs[cpu].rt.runtime_us >= period_us {
            break;
        }
    }
    more
}

/// SCHED_RR's turn: whether the tick numbered `ticks_run` (1 = the first) since the task
/// started running with `slice_left_ticks` of its slice ends a slice (`task_tick_rt`
/// decrements at each tick and refills to `slice_ticks` when it reaches 0).
pub fn rr_slice_ends(ticks_run: u64, slice_left_ticks: u64, slice_ticks: u64) -> bool {
    ticks_run >= slice_left_ticks && (ticks_run - slice_left_ticks).is_multiple_of(slice_ticks)
}

/// What is left of an RR slice of `slice_left_ticks` after `ticks_run` ticks (refilled to
/// `slice_ticks` each time it ran out).
pub fn rr_slice_left(ticks_run: u64, slice_left_ticks: u64, slice_ticks: u64) -> u64 {
    if ticks_run < slice_left_ticks {
        slice_left_ticks - ticks_run
    } else {
        slice_ticks - (ticks_run - slice_left_ticks) % slice_ticks
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::Fixture;
    use super::*;

    #[test]
    fn a_capped_clock_takes_its_share_of_the_capacity() {
        // 377 - 377·200000/1400000 = 377 - 53 = 324; 1024 - 1024·600000/2000000 = 1024 - 307
        assert_eq!(cpufreq_pressure(377, 200_000, 1_400_000), 324);
        assert_eq!(cpufreq_pressure(1024, 600_000, 2_000_000), 717);
        // at or above the top (a boost frequency): none
        assert_eq!(cpufreq_pressure(1024, 2_000_000, 2_000_000), 0);
        assert_eq!(cpufreq_pressure(1024, 2_200_000, 2_000_000), 0);
    }

    fn rt(f: &mut Fixture, t: usize, class: SchedClass) {
        f.tasks[t].class = class;
        let req = f.tasks[t].uclamp_req;
        f.tasks[t].uclamp = crate::sched::uclamp::effective(req, true, None, &Default::default());
    }

    #[test]
    fn the_queue_serves_priority_then_arrival() {
        let mut q = RtQueue::default();
        q.insert(4, 10, 7);
        q.insert(2, 50, 9);
        q.insert(3, 10, 1);
        q.insert(1, 50, 12);
        assert_eq!(q.iter().collect::<Vec<_>>(), [2, 1, 3, 4]);
        assert_eq!((q.first(), q.highest_waiting(), q.level()), (Some(2), Some(50), 50));
        q.running = Some(60);
        assert_eq!(q.level(), 60);
        assert!(q.remove(2, 50, 9) && !q.remove(2, 50, 9));
        assert_eq!(q.first(), Some(1));
    }

    #[test]
    fn a_woken_rt_task_avoids_a_cpu_running_higher_rt_work() {
        // 4 CPUs, two clusters of 2; task 0 (FIFO 20) waking on CPU 0, where FIFO 50 runs
        let mut f = Fixture::new(4, &[&[0, 1, 2, 3], &[0, 1]]);
        f.cluster_of = vec![0, 0, 1, 1];
        rt(&mut f, 0, SchedClass::Fifo(20));
        rt(&mut f, 1, SchedClass::Fifo(50));
        f.put(1, 0);
        f.rqs[0].rt.running = Some(50);
        // CPU 1 runs CFS, CPUs 2 and 3 idle: all at level 0; its own cluster's first wins
        f.busy(1, 1);
        f.this_cpu = 3;
        assert_eq!(select_cpu(&f.view(), 0, false), 1);
        // the waker's CPU when it is in the task's cluster and at the lowest level
        f.this_cpu = 1;
        assert_eq!(select_cpu(&f.view(), 0, false), 1);
        // a CPU with a waiting FIFO 30 is above the task's level: not a target
        f.rqs[1].rt.insert(9, 30, 1);
        f.this_cpu = 3;
        assert_eq!(select_cpu(&f.view(), 0, false), 3);
        // a lower RT priority running there does not keep it away, unless it cannot move
        f.rqs[0].rt.running = Some(10);
        f.tasks[1].class = SchedClass::Fifo(10);
        assert_eq!(select_cpu(&f.view(), 0, false), 0);
        f.tasks[1].allowed = crate::sched::CpuMask::of([0]);
        assert_eq!(select_cpu(&f.view(), 0, false), 3);
        f.tasks[1].allowed = crate::sched::CpuMask::of([0, 1]);
        // 5.10 fitness: capacity 1024 only on cluster 1; the task leaves a fitting-less CPU
        f.capacity = vec![430, 430, 1024, 1024];
        assert_eq!(select_cpu(&f.view(), 0, true), 3);
        // with its own util_min of 400 the LITTLE CPU fits
        f.tasks[0].uclamp_req.min = Some(400);
        rt(&mut f, 0, SchedClass::Fifo(20));
        assert_eq!(select_cpu(&f.view(), 0, true), 0);
    }

    #[test]
    fn push_and_pull_move_only_tasks_that_run_first_there() {
        let mut f = Fixture::new(2, &[&[0, 1], &[0, 1], &[0]]);
        for (t, p) in [(0, 50), (1, 40), (2, 30)] {
            rt(&mut f, t, SchedClass::Fifo(p));
        }
        // CPU 0 runs FIFO 50 with FIFO 40 waiting; CPU 1 runs FIFO 30 (pinned to CPU 0 it is not)
        f.rqs[0].rt.running = Some(50);
        f.rqs[0].rt.insert(1, 40, 1);
        f.tasks[1].cpu = 0;
        f.rqs[1].rt.running = Some(30);
        assert_eq!(push_target(&f.view(), 1, false), Some(1));
        assert_eq!(pull_candidate(&f.view(), 1), Some(1));
        // CPU 1 at 45: neither pushes nor pulls the 40
        f.rqs[1].rt.running = Some(45);
        assert_eq!((push_target(&f.view(), 1, false), pull_candidate(&f.view(), 1)), (None, None));
        // a task that would preempt where it waits is not pulled (it runs there next)
        f.rqs[0].rt.running = Some(35);
        f.rqs[1].rt.running = None;
        assert_eq!(pull_candidate(&f.view(), 1), None);
    }

    #[test]
    fn an_over_budget_cpu_borrows_a_share_of_each_others_spare_runtime() {
        let mut rqs: Vec<_> = (0..4).map(|_| super::super::cfs::RunQueue::new(true)).collect();
        for (rq, time_us) in rqs.iter_mut().zip([960.0, 950.0, 550.0, 0.0]) {
            (rq.rt.runtime_us, rq.rt.time_us) = (950.0, time_us);
        }
        // CPU 1 has no spare; CPU 2 gives 400/4, CPU 3 950/4 (capped at the 1000 µs period)
        assert!(borrow_runtime(&mut rqs, 0, 1000.0));
        let runtimes: Vec<f64> = rqs.iter().map(|rq| rq.rt.runtime_us).collect();
        assert_eq!(runtimes, [1000.0, 950.0, 900.0, 950.0]);
        // at a whole period it takes no more
        assert!(!borrow_runtime(&mut rqs, 0, 1000.0) || rqs[0].rt.runtime_us == 1000.0);
        rqs[0].rt.runtime_us = 900.0;
        rqs[3].rt.runtime_us = 0.0;
        rqs[2].rt.runtime_us = 550.0;
        assert!(!borrow_runtime(&mut rqs, 0, 1000.0));
    }

    #[test]
    fn rr_slices_count_ticks_and_refill() {
        // 100 ticks per slice, 30 left when it started running
        assert!(!rr_slice_ends(29, 30, 100) && rr_slice_ends(30, 30, 100) && rr_slice_ends(130, 30, 100));
        assert_eq!((rr_slice_left(10, 30, 100), rr_slice_left(30, 30, 100), rr_slice_left(31, 30, 100)), (20, 100, 99));
    }
}
